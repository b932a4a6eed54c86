/* bench_slim: in-process time of the slim dry run (slim_plan) at N entries.
 *
 * For each N (default 10000 40000) it writes N experiences of 20..60 words
 * drawn from a fixed vocabulary into a temporary SQLite file (in transactions
 * of 1000), one in twenty a copy of an earlier entry with one word changed
 * (a near-duplicate slim should find), then runs the dry run a few rounds,
 * as without an LLM (word 3-shingles) and as with one (token sets), and
 * prints the median wall-clock and CPU time and the groups found. The
 * generator is seeded, so every run builds the same corpus.
 *
 *   bench_slim [--rounds R] [N ...] */
#include "base/buf.h"
#include "domain/knowledge.h"
#include "service/knowledge.h"
#include "service/slim.h"
#include "store/store.h"
#include "base/util.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_rng.h"

#define SPACE "default"

static const char *const words[] = {
    "sales",     "revenue",  "customer", "data",     "report",   "analysis",  "monthly",
    "quarterly", "region",   "forecast", "stock",    "turnover", "retention", "churn",
    "pricing",   "margin",   "profit",   "cost",     "growth",   "trend",     "cohort",
    "funnel",    "campaign", "channel",  "order",    "product",  "segment",   "chart",
    "metric",    "budget",   "expense",  "invoice",  "payment",  "refund",    "discount",
    "warehouse", "supplier", "shipment", "delivery", "demand",   "supply",    "average",
    "median",    "variance", "outlier",  "missing",  "values",   "cleaning",  "duplicate",
    "normalize", "join",     "merge",    "group",    "pivot",    "resample",  "window",
    "rolling",   "rank",     "filter",   "sort",     "index",    "column",    "row",
    "table",     "query",    "pandas",   "numpy",    "sql",      "csv",       "excel",
    "encoding",  "chunks",   "memory",   "speed",    "cache",    "compress",  "enable",
    "disable",   "always",   "never",    "before",   "after",    "check",     "count",
};
#define NWORDS (sizeof words / sizeof *words)

static double now_s(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* N entries, one in twenty a near-copy of an earlier one. */
static int build(struct store *st, long n)
{
    struct buf *texts = xcalloc((size_t)n, sizeof *texts);
    int rc = 0;
    for (long i = 0; i < n && rc == 0; i++) {
        struct knowledge k;
        buf_init(&texts[i], 1 << 16);
        if (i > 20 && rng() % 20 == 0) {
            /* A near-duplicate: an earlier text with its last word replaced. */
            const struct buf *src = &texts[rng() % (unsigned long long)i];
            const char *last = strrchr(src->data, ' ');
            buf_add(&texts[i], src->data, last ? (size_t)(last - src->data) : src->len);
            buf_addf(&texts[i], " %s", words[rng() % NWORDS]);
        } else {
            int len = 20 + (int)(rng() % 40);
            for (int w = 0; w < len; w++)
                buf_addf(&texts[i], "%s%s", w ? " " : "", words[rng() % NWORDS]);
        }
        if (i % 1000 == 0 && (rc = store_begin(st)))
            break;
        knowledge_init(&k);
        k.space = xstrdup(SPACE);
        k.category = xstrdup("experiences");
        k.scenario = xstrndup(texts[i].data, 60);
        k.content = xstrdup(texts[i].data);
        k.title = xstrndup(texts[i].data, 40);
        k.agent_id = xstrdup("bench");
        k.score = 3;
        rc = knowledge_create(st, &k, "bench");
        knowledge_release(&k);
        if (rc == 0 && (i % 1000 == 999 || i == n - 1))
            rc = store_commit(st);
    }
    for (long i = 0; i < n; i++)
        buf_release(&texts[i]);
    free(texts);
    return rc;
}

int main(int argc, char **argv)
{
    long sizes[8] = {10000, 40000};
    int nsizes = 2, rounds = 3, given = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
            rounds = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 3;
        } else if (given < 8) {
            sizes[given++] = strtol(argv[i], NULL, 10);
            nsizes = given;
        }
    }
    if (sodium_init() < 0)
        return 1;
    store_global_init();
    printf("%8s %10s %10s %12s %12s %8s\n", "entries", "similarity", "build_s", "dry_run_ms",
           "cpu_ms", "groups");
    for (int s = 0; s < nsizes; s++) {
        char path[] = "/tmp/bench_slim_XXXXXX";
        int fd = mkstemp(path);
        struct store *st;
        double wall[16], cpu[16], t0;
        size_t groups = 0;
        if (fd < 0)
            return 1;
        close(fd);
        unlink(path);
        if (store_open(path, &st))
            return 1;
        t0 = now_s(CLOCK_MONOTONIC);
        if (build(st, sizes[s]))
            return 1;
        double built = now_s(CLOCK_MONOTONIC) - t0;
        if (rounds > 16)
            rounds = 16;
        for (int by_llm = 0; by_llm < 2; by_llm++) {
            for (int r = 0; r < rounds; r++) {
                struct json_object *plan = NULL, *g;
                double w0 = now_s(CLOCK_MONOTONIC), c0 = now_s(CLOCK_THREAD_CPUTIME_ID);
                if (slim_plan(st, SPACE, SLIM_DEFAULT_THRESHOLD, 0, by_llm, &plan))
                    return 1;
                wall[r] = (now_s(CLOCK_MONOTONIC) - w0) * 1000;
                cpu[r] = (now_s(CLOCK_THREAD_CPUTIME_ID) - c0) * 1000;
                if (json_object_object_get_ex(plan, "groups", &g))
                    groups = json_object_array_length(g);
                json_object_put(plan);
            }
            qsort(wall, (size_t)rounds, sizeof *wall, cmp_double);
            qsort(cpu, (size_t)rounds, sizeof *cpu, cmp_double);
            printf("%8ld %10s %10.1f %12.1f %12.1f %8zu\n", sizes[s],
                   by_llm ? "token-set" : "shingles", built, wall[rounds / 2], cpu[rounds / 2],
                   groups);
            fflush(stdout);
        }
        store_close(st);
        unlink(path);
        {
            struct buf side;
            buf_init(&side, 4096);
            buf_addf(&side, "%s-wal", path);
            unlink(side.data);
            buf_reset(&side);
            buf_addf(&side, "%s-shm", path);
            unlink(side.data);
            buf_release(&side);
        }
    }
    return 0;
}
