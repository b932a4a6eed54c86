/* test_util: UTF-8 validation, length and prefix, parse_long, the UTC time
 * texts and the x-allocation helpers. */
#include "harness.h"
#include "base/util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LONG_MAX_ LONG_MAX
#define LONG_MIN_ LONG_MIN

#define VALID(lit) utf8_valid((lit), sizeof(lit) - 1)

static void test_utf8_valid(void)
{
    /* accepted */
    CHECK(VALID(""));
    CHECK(VALID("plain ascii ~\x7f"));
    CHECK(VALID("caf\xc3\xa9"));              /* é, 2 bytes */
    CHECK(VALID("\xc2\x80"));                 /* U+0080, smallest 2-byte */
    CHECK(VALID("\xdf\xbf"));                 /* U+07FF */
    CHECK(VALID("\xe0\xa0\x80"));             /* U+0800, smallest 3-byte */
    CHECK(VALID("\xe4\xb8\xad\xe6\x96\x87")); /* 中文 */
    CHECK(VALID("\xed\x9f\xbf"));             /* U+D7FF, just below surrogates */
    CHECK(VALID("\xee\x80\x80"));             /* U+E000, just above */
    CHECK(VALID("\xef\xbf\xbd"));             /* U+FFFD */
    CHECK(VALID("\xf0\x9f\x98\x80"));         /* 😀 U+1F600 */
    CHECK(VALID("\xf0\x90\x80\x80"));         /* U+10000 */
    CHECK(VALID("\xf4\x8f\xbf\xbf"));         /* U+10FFFF, the last */
    CHECK(VALID("a\xe4\xb8\xad"
                "b\xf0\x9f\x98\x80"
                "c")); /* mixed */

    /* overlong forms */
    CHECK(!VALID("\xc0\x80")); /* NUL as 2 bytes */
    CHECK(!VALID("\xc0\xaf")); /* '/' as 2 bytes */
    CHECK(!VALID("\xc1\xbf"));
    CHECK(!VALID("\xe0\x80\xaf"));     /* '/' as 3 bytes */
    CHECK(!VALID("\xe0\x9f\xbf"));     /* U+07FF as 3 bytes */
    CHECK(!VALID("\xf0\x80\x80\xaf")); /* '/' as 4 bytes */
    CHECK(!VALID("\xf0\x8f\xbf\xbf")); /* U+FFFF as 4 bytes */
    /* surrogates U+D800..U+DFFF */
    CHECK(!VALID("\xed\xa0\x80"));             /* U+D800 */
    CHECK(!VALID("\xed\xaf\xbf"));             /* U+DBFF */
    CHECK(!VALID("\xed\xb0\x80"));             /* U+DC00 */
    CHECK(!VALID("\xed\xbf\xbf"));             /* U+DFFF */
    CHECK(!VALID("\xed\xa0\xbd\xed\xb8\x80")); /* CESU-8 pair for U+1F600 */
    /* above U+10FFFF */
    CHECK(!VALID("\xf4\x90\x80\x80")); /* U+110000 */
    CHECK(!VALID("\xf5\x80\x80\x80"));
    CHECK(!VALID("\xf7\xbf\xbf\xbf"));
    CHECK(!VALID("\xf8\x88\x80\x80\x80")); /* 5-byte form */
    CHECK(!VALID("\xfc\x84\x80\x80\x80\x80"));
    CHECK(!VALID("\xfe"));
    CHECK(!VALID("\xff"));
    /* truncated sequences, at the end and in the middle */
    CHECK(!VALID("\xc3"));
    CHECK(!VALID("\xe4\xb8"));
    CHECK(!VALID("\xf0\x9f\x98"));
    CHECK(!VALID("\xf0\x9f"));
    CHECK(!VALID("a\xe4\xb8"
                 "b"));
    CHECK(!VALID("\xf0\x9f\x98"
                 "a"));
    /* lone continuation bytes */
    CHECK(!VALID("\x80"));
    CHECK(!VALID("a\xbf"
                 "b"));
    CHECK(!VALID("\xc3\xa9\xa9"));
    /* a continuation byte replaced by ASCII */
    CHECK(!VALID("\xe4"
                 "ab"));
    /* NUL byte rejected, even in the middle */
    CHECK(!VALID("\0"));
    CHECK(!VALID("a\0b"));
    CHECK(!VALID("abc\0"));
    /* n bounds the check: a valid prefix of invalid text is valid */
    CHECK(utf8_valid("ab\xff", 2));
    CHECK(!utf8_valid("ab\xff", 3));
    /* the length is honoured even when a multi-byte character is cut by n */
    CHECK(!utf8_valid("\xe4\xb8\xad", 2));
    CHECK(utf8_valid("\xe4\xb8\xad", 0));
}

static void test_utf8_length(void)
{
    CHECK_INT(utf8_length("", 0), 0);
    CHECK_INT(utf8_length("abc", 3), 3);
    CHECK_INT(utf8_length("caf\xc3\xa9", 5), 4);
    CHECK_INT(utf8_length("\xe4\xb8\xad\xe6\x96\x87", 6), 2);
    CHECK_INT(utf8_length("\xf0\x9f\x98\x80", 4), 1);
    CHECK_INT(utf8_length("a\xe4\xb8\xad"
                          "b\xf0\x9f\x98\x80"
                          "c",
                          10),
              5);
}

static void test_utf8_prefix(void)
{
    const char *s = "a\xe4\xb8\xad"
                    "b\xf0\x9f\x98\x80"
                    "c"; /* a 中 b 😀 c : 10 bytes */
    size_t n = strlen(s);
    CHECK_INT(utf8_prefix(s, n, 0), 0);
    CHECK_INT(utf8_prefix(s, n, 1), 1);
    CHECK_INT(utf8_prefix(s, n, 2), 4); /* never 2 or 3: inside 中 */
    CHECK_INT(utf8_prefix(s, n, 3), 5);
    CHECK_INT(utf8_prefix(s, n, 4), 9); /* whole emoji */
    CHECK_INT(utf8_prefix(s, n, 5), 10);
    CHECK_INT(utf8_prefix(s, n, 6), 10);
    CHECK_INT(utf8_prefix(s, n, (size_t)-1), 10);
    CHECK_INT(utf8_prefix("", 0, 3), 0);
    /* every prefix is itself valid UTF-8 with the asked number of characters */
    for (size_t k = 0; k <= 6; k++) {
        size_t p = utf8_prefix(s, n, k);
        CHECK(utf8_valid(s, p));
        CHECK_INT(utf8_length(s, p), k < 5 ? k : 5);
    }
    /* four-byte characters only */
    {
        const char *e = "\xf0\x9f\x98\x80\xf0\x9f\x98\x81\xf0\x9f\x98\x82";
        CHECK_INT(utf8_prefix(e, 12, 1), 4);
        CHECK_INT(utf8_prefix(e, 12, 2), 8);
    }
}

/* Both count eight bytes at a time: over a long mixed text, from every
 * start and for every length and character count, they agree with counting
 * the lead bytes one by one. */
static void test_utf8_long(void)
{
    static const char *const pieces[] = {"a", "\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x98\x80", " "};
    char s[160];
    size_t n = 0, bad = 0;
    unsigned seed = 3;
    while (n + 4 < sizeof s) {
        const char *p;
        seed = seed * 1103515245u + 12345u;
        p = pieces[(seed >> 16) % 5];
        memcpy(s + n, p, strlen(p));
        n += strlen(p);
    }
    for (size_t from = 0; from < 9; from++)
        for (size_t len = 0; from + len <= n; len++) {
            size_t leads = 0, k;
            for (size_t i = from; i < from + len; i++)
                leads += ((unsigned char)s[i] & 0xC0) != 0x80;
            bad += utf8_length(s + from, len) != leads;
            for (k = 0; k <= leads + 1; k++) {
                size_t want = 0, c = 0;
                while (want < len && !(((unsigned char)s[from + want] & 0xC0) != 0x80 && c++ == k))
                    want++;
                bad += utf8_prefix(s + from, len, k) != want;
            }
        }
    CHECK_INT(bad, 0);
}

/* utf8_fit: a byte budget never ends inside a character, for every budget. */
static void test_utf8_fit(void)
{
    const char *s = "a\xe4\xb8\xad"
                    "b\xf0\x9f\x98\x80"
                    "c"; /* a 中 b 😀 c : 10 bytes */
    static const size_t want[] = {0, 1, 1, 1, 4, 5, 5, 5, 5, 9, 10, 10};
    size_t n = strlen(s);
    for (size_t max = 0; max <= 11; max++) {
        size_t k = utf8_fit(s, n, max);
        CHECK_INT(k, want[max]);
        CHECK(utf8_valid(s, k));
    }
}

/* utf8_repair: a cut character at the end is dropped, other bad bytes become
 * '?', valid text is left as it is. */
static void test_utf8_repair(void)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"", ""},
        {"plain", "plain"},
        {"caf\xc3\xa9", "caf\xc3\xa9"},
        {"\xe4\xb8\xad\xe6\x96\x87", "\xe4\xb8\xad\xe6\x96\x87"},
        {"ab\xe4\xb8", "ab"},     /* 中 cut after two bytes */
        {"ab\xe4", "ab"},         /* ... after one */
        {"ab\xf0\x9f\x98", "ab"}, /* an emoji cut */
        {"a\xe4\xb8'b", "a?"
                        "?'b"}, /* cut inside, then more text */
        {"a\xff"
         "b",
         "a?b"}, /* never valid */
        {"a\x80\x80", "a?"
                      "?"}, /* continuation bytes alone */
        {"\xc0\xaf/", "?"
                      "?/"}, /* overlong */
        {"\xed\xa0\x80x", "?"
                          "?"
                          "?x"},                /* a surrogate */
        {"x\xe4\xb8\xad\xe6", "x\xe4\xb8\xad"}, /* the last character only */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char buf[32];
        snprintf(buf, sizeof buf, "%s", cases[i].in);
        CHECK_STR(utf8_repair(buf), cases[i].out);
        CHECK(utf8_valid(buf, strlen(buf)));
    }
    /* utf8_copy into a buffer too small: a whole character or none */
    {
        char small[6];
        utf8_copy(small, sizeof small, "ab\xe4\xb8\xad\xe6\x96\x87"); /* ab中文: 8 bytes */
        CHECK_STR(small, "ab\xe4\xb8\xad");
        utf8_copy(small, sizeof small,
                  "a\xff"
                  "b");
        CHECK_STR(small, "a?b");
        utf8_copy(small, 1, "abc");
        CHECK_STR(small, "");
    }
}

static void test_parse_long(void)
{
    long v = 12345;
    char big[64];

    CHECK_INT(parse_long("0", 0, 10, &v), 0);
    CHECK_INT(v, 0);
    CHECK_INT(parse_long("42", 0, 100, &v), 0);
    CHECK_INT(v, 42);
    CHECK_INT(parse_long("-7", -10, 10, &v), 0);
    CHECK_INT(v, -7);
    CHECK_INT(parse_long("007", 0, 10, &v), 0);
    CHECK_INT(v, 7);

    v = 12345;
    CHECK_INT(parse_long("", 0, 10, &v), -1);
    CHECK_INT(parse_long(NULL, 0, 10, &v), -1);
    CHECK_INT(parse_long("+1", 0, 10, &v), -1);
    CHECK_INT(parse_long(" 1", 0, 10, &v), -1);
    CHECK_INT(parse_long("1 ", 0, 10, &v), -1);
    CHECK_INT(parse_long("1x", 0, 10, &v), -1);
    CHECK_INT(parse_long("x1", 0, 10, &v), -1);
    CHECK_INT(parse_long("-", -10, 10, &v), -1);
    CHECK_INT(parse_long("--1", -10, 10, &v), -1);
    CHECK_INT(parse_long("- 1", -10, 10, &v), -1);
    CHECK_INT(parse_long("1.5", 0, 10, &v), -1);
    CHECK_INT(parse_long("0x10", 0, 100, &v), -1);
    CHECK_INT(parse_long("1e3", 0, 10000, &v), -1);
    CHECK_INT(parse_long("\t1", 0, 10, &v), -1);
    CHECK_INT(v, 12345); /* untouched on failure */

    /* overflow */
    CHECK_INT(parse_long("99999999999999999999999", LONG_MIN_, LONG_MAX_, &v), -1);
    CHECK_INT(parse_long("-99999999999999999999999", LONG_MIN_, LONG_MAX_, &v), -1);
    CHECK_INT(v, 12345);
    snprintf(big, sizeof big, "%ld", LONG_MAX_);
    CHECK_INT(parse_long(big, LONG_MIN_, LONG_MAX_, &v), 0);
    CHECK(v == LONG_MAX_);
    snprintf(big, sizeof big, "%ld", LONG_MIN_);
    CHECK_INT(parse_long(big, LONG_MIN_, LONG_MAX_, &v), 0);
    CHECK(v == LONG_MIN_);

    /* bounds are inclusive */
    CHECK_INT(parse_long("1", 1, 100, &v), 0);
    CHECK_INT(v, 1);
    CHECK_INT(parse_long("100", 1, 100, &v), 0);
    CHECK_INT(v, 100);
    v = 12345;
    CHECK_INT(parse_long("0", 1, 100, &v), -1);
    CHECK_INT(parse_long("101", 1, 100, &v), -1);
    CHECK_INT(parse_long("-1", 0, 100, &v), -1);
    CHECK_INT(v, 12345);
}

static int all_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

/* "YYYYMMDD" names the day of "YYYY-MM-DD HH:MM:SS". */
static int same_day(const char *compact, const char *text)
{
    return memcmp(compact, text, 4) == 0 && memcmp(compact + 4, text + 5, 2) == 0 &&
           memcmp(compact + 6, text + 8, 2) == 0;
}

static void test_time_text(void)
{
    char now[20], later[20], date[9];
    time_utc_text(now);
    CHECK_INT(strlen(now), 19);
    CHECK(now[4] == '-' && now[7] == '-' && now[10] == ' ' && now[13] == ':' && now[16] == ':');
    CHECK(all_digits(now, 4) && all_digits(now + 5, 2) && all_digits(now + 8, 2));
    time_utc_text_offset(later, 3600);
    CHECK_INT(strlen(later), 19);
    CHECK(strcmp(later, now) > 0); /* the text sorts like the time */
    time_utc_text_offset(later, -3600);
    CHECK(strcmp(later, now) < 0);
    time_utc_compact_date(date);
    time_utc_text(later);
    CHECK_INT(strlen(date), 8);
    CHECK(all_digits(date, 8));
    /* the same day as the full text (taken before or after, for midnight) */
    CHECK(same_day(date, now) || same_day(date, later));
}

static void test_alloc(void)
{
    char *p = xstrndup("abcdef", 3);
    CHECK_STR(p, "abc");
    free(p);
    p = xstrdup("");
    CHECK_STR(p, "");
    free(p);
    p = xstrndup("a\0b", 3); /* copies n bytes and terminates */
    CHECK(p[0] == 'a' && p[1] == '\0' && p[2] == 'b' && p[3] == '\0');
    free(p);
    int *z = xcalloc(4, sizeof *z);
    CHECK(z[0] == 0 && z[3] == 0);
    z = xrealloc(z, 100 * sizeof *z);
    CHECK(z[0] == 0);
    free(z);
}

/* Client-chosen ids (sessions, tables, traces): never "." or "..", which a
 * browser resolves away in a URL. */
static void test_id_text_valid(void)
{
    CHECK(id_text_valid("trace-1", 128));
    CHECK(id_text_valid("a.b", 128));
    CHECK(id_text_valid("...", 128));
    CHECK(id_text_valid(".x", 128));
    CHECK(id_text_valid("run:1_2-3", 128));
    CHECK(!id_text_valid(".", 128));
    CHECK(!id_text_valid("..", 128));
    CHECK(!id_text_valid("", 128));
    CHECK(!id_text_valid(NULL, 128));
    CHECK(!id_text_valid("a/b", 128));
    CHECK(!id_text_valid("abc", 2));
}

/* body of fence_unwrap as a string, or "-" when text is not one fenced block. */
static const char *unfenced(const char *text, char *out, size_t cap)
{
    const char *body;
    size_t n;
    if (!fence_unwrap(text, strlen(text), &body, &n))
        return "-";
    snprintf(out, cap, "%.*s", (int)n, body);
    return out;
}

static void test_fence(void)
{
    char out[128];
    const char *t = "say ```json x``` now";
    CHECK(fence_find(t, strlen(t)) == t + 4);
    CHECK(fence_find(t, 6) == NULL);
    CHECK_STR(unfenced("```json\n{\"a\":1}\n```", out, sizeof out), "{\"a\":1}\n");
    CHECK_STR(unfenced("  \n```\nbody\n```\n\n", out, sizeof out), "body\n");
    CHECK_STR(unfenced("```\n```", out, sizeof out), "");
    CHECK_STR(unfenced("```json {} ```", out, sizeof out), "-"); /* no line for a body */
    CHECK_STR(unfenced("text ```\nx\n```", out, sizeof out), "-");
    CHECK_STR(unfenced("```\nx\n``` text", out, sizeof out), "-");
    CHECK_STR(unfenced("`````", out, sizeof out), "-");
}

int main(void)
{
    test_utf8_valid();
    test_utf8_length();
    test_utf8_prefix();
    test_utf8_long();
    test_utf8_fit();
    test_utf8_repair();
    test_parse_long();
    test_time_text();
    test_alloc();
    test_id_text_valid();
    test_fence();
    return test_summary();
}
