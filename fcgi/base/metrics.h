/* metrics: the counters behind GET /metrics (Prometheus text format 0.0.4).
 * Every thread (each worker, the job thread) owns one struct metrics and is
 * its only writer: plain loads and stores of relaxed atomics, no lock and no
 * read-modify-write on the request path. A scrape folds every thread's
 * struct, adds the gauges its caller read from the store at that moment
 * (entries and traces per space, jobs by kind and status) and the process
 * figures. This module knows neither the router nor the store: the route
 * labels and the store's gauges are handed to it. Every label set
 * is bounded: route patterns, a fixed list of statuses, purposes, outcomes. */
#ifndef KNOWHUB_METRICS_H
#define KNOWHUB_METRICS_H

#include <stddef.h>

#include "base/buf.h"

struct metrics;     /* one thread's counters */
struct metrics_set; /* every thread's, made by main before threads start */

/* At most this many spaces get a label of their own; the rest (the smallest)
 * are summed into space="_other". */
#define METRICS_MAX_SPACES 100

/* Where the store waited for or retried a busy database. */
enum metrics_store_event {
    METRICS_WRITER_WAIT,    /* another thread held the write transaction: waited */
    METRICS_WRITER_TIMEOUT, /* ... past the busy timeout: STORE_BUSY */
    METRICS_SQLITE_RETRY,   /* SQLite's busy handler slept and retried (another process) */
    METRICS_SQLITE_TIMEOUT, /* ... and gave up: STORE_BUSY */
    METRICS_STORE_EVENTS
};

/* Counters for `threads` threads (index 0 .. threads-1); never freed before
 * the threads stop. start_time is the process start (Unix seconds). */
struct metrics_set *metrics_set_new(size_t threads, double start_time);
void metrics_set_free(struct metrics_set *set);
/* Thread i's counters (i < threads). */
struct metrics *metrics_of(struct metrics_set *set, size_t i);
/* Label route i of the installed route table (the index metrics_request
 * gets) with its method and pattern; called for every route before the
 * threads start. The strings are borrowed: they must outlive the set (the
 * route table is static). i must stay below METRICS_MAX_ROUTES (a larger
 * table is a programming error: abort). Routes never labelled are not
 * rendered. */
void metrics_set_route(struct metrics_set *set, size_t i, const char *method, const char *pattern);

/* The route table's length must stay below this. */
#define METRICS_MAX_ROUTES 80

/* What the store counts at the moment of a scrape, read by the caller on its
 * own connection and handed to metrics_render. Owns copies of every string;
 * metrics_gauges_release frees them. */
struct metrics_space_count {
    char *space;
    long entries, traces;
};
struct metrics_job_count {
    char *kind, *status;
    long count;
};
struct metrics_gauges {
    const char *sqlite_version;         /* borrowed (a static string) */
    const char *node, *store;           /* borrowed: KNOWHUB_NODE and store_backend() */
    struct metrics_space_count *spaces; /* the most entries first */
    size_t n_spaces, cap_spaces;
    struct metrics_job_count *jobs;
    size_t n_jobs, cap_jobs;
    size_t index_vectors, index_bytes;    /* the in-memory vector index (service/vindex.c) */
    size_t index_budget, index_space_cap; /* its budget, all and per space (0: none) */
    size_t index_spaces_over;             /* spaces over their cap (not held) */
    unsigned long long index_evictions;   /* spaces evicted since the start */
    size_t search_spaces, search_entries, search_bytes, search_budget; /* service/lindex.c */
    long review_pending, review_quarantined; /* proposals of every space (docs/review.md) */
};
void metrics_gauges_init(struct metrics_gauges *g, const char *sqlite_version);
void metrics_gauges_release(struct metrics_gauges *g);
/* Add one space's counts / one (kind, status) job count; gauges is a
 * struct metrics_gauges *. Shaped as the store's per-row callbacks. */
void metrics_gauges_space(const char *space, long entries, long traces, void *gauges);
void metrics_gauges_job(const char *kind, const char *status, long count, void *gauges);

/* Every function below accepts m == NULL (unit tests, CLI) and does nothing. */

/* One answered request: route is the route table's index (metrics_set_route), or
 * -1 when no route matched (404, 405); its HTTP status; its duration. */
void metrics_request(struct metrics *m, int route, int status, double seconds);
/* One answer-cache lookup (hit or miss), and the bytes the thread's cache now holds. */
/* A request of route (the index metrics_request gets) made n round trips to
 * PostgreSQL (store_round_trips); never called on SQLite. */
void metrics_round_trips(struct metrics *m, int route, unsigned long long n);
void metrics_cache_lookup(struct metrics *m, int hit);
void metrics_cache_bytes(struct metrics *m, size_t bytes);
/* The stream thread: the live streams it holds now, and those it took
 * since it last said. */
void metrics_streams(struct metrics *m, long open, long opened);
void metrics_store_event(struct metrics *m, enum metrics_store_event e);
/* One LLM call (retries included): purpose (route, evolve, distill, slim),
 * outcome ("ok" or its LLM_* code), tokens and latency. */
void metrics_llm_call(struct metrics *m, const char *purpose, const char *outcome,
                      long prompt_tokens, long completion_tokens, long latency_ms);
/* One job run to its end by the job thread. */
void metrics_job(struct metrics *m, const char *kind, double seconds);
/* One answer the client did not receive in full: the FastCGI connection
 * (nginx, or a client on the socket) closed while knowhub wrote it, or
 * knowhub cut a streamed answer off when it failed after its head. */
void metrics_response_undelivered(struct metrics *m);
/* One line of the access or audit log that could not be written (a full
 * disk, an I/O error): lost, but counted. */
void metrics_log_line_lost(struct metrics *m);

/* The whole exposition into out: every thread's counters of m's set, the
 * store's gauges g (NULL: none), the process. Returns 0, or -1 when out's
 * maximum was reached. */
int metrics_render(const struct metrics *m, const struct metrics_gauges *g, struct buf *out);

/* The address half of who may scrape: 1 when nginx's REMOTE_ADDR is
 * 127.0.0.0/8 or ::1 and the request did not pass through another proxy (no
 * X-Forwarded-For or Forwarded header), else 0. REMOTE_ADDR is whatever the
 * FastCGI peer says, so a caller also requires the proxy key (h_metrics:
 * request.proxy_key_ok); without both, KNOWHUB_METRICS_TOKEN is required. */
int metrics_loopback_request(const char *remote_addr, const char *forwarded_for,
                             const char *forwarded);

#endif
