/* harness: the tiny unit-test harness. CHECK, CHECK_STR and CHECK_INT count a
 * pass or print file:line and the values on failure; test_summary() prints
 * "N passed, N failed" and gives the exit status (non-zero on any failure).
 * One test program is one translation unit, so the counters are static. */
#ifndef KNOWHUB_TEST_HARNESS_H
#define KNOWHUB_TEST_HARNESS_H

#include <stdio.h>
#include <string.h>

static int harness_passed;
static int harness_failed;

/* Count one result; on failure print where and why. Returns ok. */
static inline int harness_result(int ok, const char *file, int line)
{
    if (ok)
        harness_passed++;
    else
        harness_failed++;
    if (!ok)
        fprintf(stderr, "%s:%d: FAIL: ", file, line);
    return ok;
}

static inline int harness_check(int ok, const char *expr, const char *file, int line)
{
    if (!harness_result(ok, file, line))
        fprintf(stderr, "%s\n", expr);
    return ok;
}

static inline int harness_check_str(const char *a, const char *b, const char *ea, const char *eb,
                                    const char *file, int line)
{
    int ok = (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
    if (!harness_result(ok, file, line))
        fprintf(stderr, "%s == %s\n    got:      %s%s%s\n    expected: %s%s%s\n", ea, eb,
                a ? "\"" : "", a ? a : "(null)", a ? "\"" : "", b ? "\"" : "", b ? b : "(null)",
                b ? "\"" : "");
    return ok;
}

static inline int harness_check_int(long long a, long long b, const char *ea, const char *eb,
                                    const char *file, int line)
{
    int ok = a == b;
    if (!harness_result(ok, file, line))
        fprintf(stderr, "%s == %s\n    got:      %lld\n    expected: %lld\n", ea, eb, a, b);
    return ok;
}

/* Print the summary line; the program's exit status. */
static inline int test_summary(void)
{
    printf("%d passed, %d failed\n", harness_passed, harness_failed);
    fflush(stdout);
    return harness_failed ? 1 : 0;
}

#define CHECK(cond) harness_check((cond) ? 1 : 0, #cond, __FILE__, __LINE__)
#define CHECK_STR(a, b) harness_check_str((a), (b), #a, #b, __FILE__, __LINE__)
#define CHECK_INT(a, b)                                                                            \
    harness_check_int((long long)(a), (long long)(b), #a, #b, __FILE__, __LINE__)

#endif
