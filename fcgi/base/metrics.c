/* metrics: per-thread counters, folded into the Prometheus text exposition
 * (format 0.0.4) at scrape time. */
#include "base/metrics.h"
#include "base/util.h"

#include <dirent.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KNOWHUB_VERSION "0.1.0"

/* One writer per counter (its thread): a relaxed load and store is enough and
 * costs what a plain increment does; the scrape reads them relaxed too. */
typedef _Atomic unsigned long long counter;

#define MAX_ROUTES METRICS_MAX_ROUTES
#define MAX_BUCKETS 16

static const int statuses[] = {200, 201, 202, 204, 304, 400, 401, 403, 404, 405,
                               408, 413, 414, 415, 429, 500, 502, 503, 504};
#define N_STATUS (sizeof statuses / sizeof statuses[0] + 1) /* the last: "other" */

static const double request_buckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                         0.1,    0.25,  0.5,    1,     2.5,  5,     10};
/* Round trips to PostgreSQL per request (counts, not seconds: observe()
 * keeps the sum in millionths, histogram_samples divides it back). */
static const double round_trip_buckets[] = {0, 1, 2, 3, 4, 6, 8, 16, 32};
static const double llm_buckets[] = {0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120};
static const double job_buckets[] = {0.1, 1, 5, 15, 60, 300, 900, 3600};

static const char *const purposes[] = {"route", "evolve",      "distill",  "slim",
                                       "embed", "embed_query", "conflict", "other"};
#define N_PURPOSE (sizeof purposes / sizeof purposes[0])
/* The LLM_* codes of llm.c; anything else counts as "other". */
static const char *const outcomes[] = {"ok",
                                       "LLM_NOT_CONFIGURED",
                                       "LLM_AUTH_FAILED",
                                       "LLM_RATE_LIMIT",
                                       "LLM_CONTEXT_TOO_LONG",
                                       "LLM_MODEL_NOT_FOUND",
                                       "LLM_CONTENT_FILTERED",
                                       "LLM_TIMEOUT",
                                       "LLM_SERVICE_ERROR",
                                       "LLM_UNKNOWN_ERROR",
                                       "other"};
#define N_OUTCOME (sizeof outcomes / sizeof outcomes[0])
static const char *const job_kinds[] = {"slim", "embed", "other"};
#define N_KIND (sizeof job_kinds / sizeof job_kinds[0])
static const char *const store_events[METRICS_STORE_EVENTS] = {"writer_wait", "writer_timeout",
                                                               "sqlite_retry", "sqlite_timeout"};

/* Observations per bucket (not cumulative; the scrape sums them), those over
 * the last bound are only in count; sum in microseconds. */
struct histogram {
    counter bucket[MAX_BUCKETS];
    counter count;
    counter sum_us;
};

struct metrics {
    const struct metrics_set *set;
    counter requests[MAX_ROUTES + 1][N_STATUS]; /* [MAX_ROUTES]: no route matched */
    struct histogram latency[MAX_ROUTES + 1];
    struct histogram round_trips[MAX_ROUTES + 1]; /* PostgreSQL's, per request */
    counter cache_hits, cache_misses, cache_bytes;
    counter streams_open, streams_opened; /* the stream thread's slot only */
    counter store[METRICS_STORE_EVENTS];
    counter llm_calls[N_PURPOSE][N_OUTCOME];
    counter llm_prompt_tokens[N_PURPOSE], llm_completion_tokens[N_PURPOSE];
    struct histogram llm_latency[N_PURPOSE];
    struct histogram job_duration[N_KIND];
    counter responses_undelivered, log_lines_lost;
};

struct metrics_set {
    size_t threads;
    double start_time;
    size_t n_routes; /* one past the highest route labelled */
    const char *method[MAX_ROUTES], *pattern[MAX_ROUTES];
    struct metrics **of; /* one allocation each: threads never share a cache line */
};

struct metrics_set *metrics_set_new(size_t threads, double start_time)
{
    struct metrics_set *set = xcalloc(1, sizeof *set);
    set->threads = threads;
    set->start_time = start_time;
    set->of = xcalloc(threads ? threads : 1, sizeof *set->of);
    for (size_t i = 0; i < threads; i++) {
        set->of[i] = xcalloc(1, sizeof *set->of[i]);
        set->of[i]->set = set;
    }
    return set;
}

void metrics_set_free(struct metrics_set *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->threads; i++)
        free(set->of[i]);
    free(set->of);
    free(set);
}

struct metrics *metrics_of(struct metrics_set *set, size_t i)
{
    return set && i < set->threads ? set->of[i] : NULL;
}

void metrics_set_route(struct metrics_set *set, size_t i, const char *method, const char *pattern)
{
    if (!set)
        return;
    if (i >= MAX_ROUTES)
        abort(); /* a programming error: raise METRICS_MAX_ROUTES */
    set->method[i] = method;
    set->pattern[i] = pattern;
    if (i + 1 > set->n_routes)
        set->n_routes = i + 1;
}

void metrics_gauges_init(struct metrics_gauges *g, const char *sqlite_version)
{
    memset(g, 0, sizeof *g);
    g->sqlite_version = sqlite_version;
}

void metrics_gauges_release(struct metrics_gauges *g)
{
    for (size_t i = 0; i < g->n_spaces; i++)
        free(g->spaces[i].space);
    for (size_t i = 0; i < g->n_jobs; i++) {
        free(g->jobs[i].kind);
        free(g->jobs[i].status);
    }
    free(g->spaces);
    free(g->jobs);
    metrics_gauges_init(g, NULL);
}

void metrics_gauges_space(const char *space, long entries, long traces, void *gauges)
{
    struct metrics_gauges *g = gauges;
    if (g->n_spaces == g->cap_spaces) {
        g->cap_spaces = g->cap_spaces ? g->cap_spaces * 2 : 64;
        g->spaces = xrealloc(g->spaces, g->cap_spaces * sizeof *g->spaces);
    }
    g->spaces[g->n_spaces++] = (struct metrics_space_count){xstrdup(space), entries, traces};
}

void metrics_gauges_job(const char *kind, const char *status, long count, void *gauges)
{
    struct metrics_gauges *g = gauges;
    if (g->n_jobs == g->cap_jobs) {
        g->cap_jobs = g->cap_jobs ? g->cap_jobs * 2 : 16;
        g->jobs = xrealloc(g->jobs, g->cap_jobs * sizeof *g->jobs);
    }
    g->jobs[g->n_jobs++] = (struct metrics_job_count){xstrdup(kind), xstrdup(status), count};
}

/* ---- the writer's side ---- */

static void add(counter *c, unsigned long long n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

static unsigned long long get(const counter *c)
{
    return atomic_load_explicit((counter *)c, memory_order_relaxed);
}

static void observe(struct histogram *h, const double *bounds, size_t n, double seconds)
{
    if (seconds < 0)
        seconds = 0;
    for (size_t i = 0; i < n; i++)
        if (seconds <= bounds[i]) {
            add(&h->bucket[i], 1);
            break;
        }
    add(&h->count, 1);
    add(&h->sum_us, (unsigned long long)(seconds * 1e6 + 0.5));
}

static size_t index_of(const char *const names[], size_t n, const char *name)
{
    for (size_t i = 0; name && i + 1 < n; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return n - 1; /* "other" */
}

void metrics_request(struct metrics *m, int route, int status, double seconds)
{
    size_t r = route >= 0 && route < MAX_ROUTES ? (size_t)route : MAX_ROUTES, s = N_STATUS - 1;
    if (!m)
        return;
    for (size_t i = 0; i + 1 < N_STATUS; i++)
        if (statuses[i] == status) {
            s = i;
            break;
        }
    add(&m->requests[r][s], 1);
    observe(&m->latency[r], request_buckets, sizeof request_buckets / sizeof request_buckets[0],
            seconds);
}

void metrics_round_trips(struct metrics *m, int route, unsigned long long n)
{
    size_t r = route >= 0 && route < MAX_ROUTES ? (size_t)route : MAX_ROUTES;
    if (m)
        observe(&m->round_trips[r], round_trip_buckets,
                sizeof round_trip_buckets / sizeof round_trip_buckets[0], (double)n);
}

void metrics_cache_lookup(struct metrics *m, int hit)
{
    if (m)
        add(hit ? &m->cache_hits : &m->cache_misses, 1);
}

void metrics_cache_bytes(struct metrics *m, size_t bytes)
{
    if (m)
        atomic_store_explicit(&m->cache_bytes, bytes, memory_order_relaxed);
}

void metrics_streams(struct metrics *m, long open, long opened)
{
    if (!m)
        return;
    atomic_store_explicit(&m->streams_open, (unsigned long long)open, memory_order_relaxed);
    add(&m->streams_opened, (unsigned long long)opened);
}

void metrics_store_event(struct metrics *m, enum metrics_store_event e)
{
    if (m && e < METRICS_STORE_EVENTS)
        add(&m->store[e], 1);
}

void metrics_llm_call(struct metrics *m, const char *purpose, const char *outcome,
                      long prompt_tokens, long completion_tokens, long latency_ms)
{
    size_t p = index_of(purposes, N_PURPOSE, purpose);
    if (!m)
        return;
    add(&m->llm_calls[p][index_of(outcomes, N_OUTCOME, outcome)], 1);
    add(&m->llm_prompt_tokens[p], prompt_tokens > 0 ? (unsigned long long)prompt_tokens : 0);
    add(&m->llm_completion_tokens[p],
        completion_tokens > 0 ? (unsigned long long)completion_tokens : 0);
    observe(&m->llm_latency[p], llm_buckets, sizeof llm_buckets / sizeof llm_buckets[0],
            (double)latency_ms / 1000.0);
}

void metrics_job(struct metrics *m, const char *kind, double seconds)
{
    if (m)
        observe(&m->job_duration[index_of(job_kinds, N_KIND, kind)], job_buckets,
                sizeof job_buckets / sizeof job_buckets[0], seconds);
}

void metrics_response_undelivered(struct metrics *m)
{
    if (m)
        add(&m->responses_undelivered, 1);
}

void metrics_log_line_lost(struct metrics *m)
{
    if (m)
        add(&m->log_lines_lost, 1);
}

/* ---- the scrape ---- */

/* A label value with \, " and newline escaped as the format requires. */
static void add_label_value(struct buf *out, const char *v)
{
    for (; *v; v++) {
        if (*v == '\\')
            buf_adds(out, "\\\\");
        else if (*v == '"')
            buf_adds(out, "\\\"");
        else if (*v == '\n')
            buf_adds(out, "\\n");
        else
            buf_addch(out, *v);
    }
}

static void head(struct buf *out, const char *name, const char *type, const char *help)
{
    buf_addf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Sum of one counter over every thread: field is its offset in struct metrics. */
static unsigned long long fold(const struct metrics_set *set, size_t offset)
{
    unsigned long long n = 0;
    for (size_t i = 0; i < set->threads; i++)
        n += get((const counter *)((const char *)set->of[i] + offset));
    return n;
}
#define FOLD(set, field) fold(set, offsetof(struct metrics, field))

/* The samples of one histogram (summed over threads) under labels (`a="b"`,
 * never empty: every histogram here has at least one label). */
static void histogram_samples(struct buf *out, const struct metrics_set *set, const char *name,
                              const char *labels, size_t offset, const double *bounds, size_t n)
{
    unsigned long long cumulative = 0, count, sum_us;
    for (size_t b = 0; b < n; b++) {
        cumulative += fold(set, offset + offsetof(struct histogram, bucket) + b * sizeof(counter));
        buf_addf(out, "%s_bucket{%s,le=\"%g\"} %llu\n", name, labels, bounds[b], cumulative);
    }
    count = fold(set, offset + offsetof(struct histogram, count));
    sum_us = fold(set, offset + offsetof(struct histogram, sum_us));
    /* A scrape racing a writer may see a bucket ahead of the count. */
    if (count < cumulative)
        count = cumulative;
    buf_addf(out, "%s_bucket{%s,le=\"+Inf\"} %llu\n", name, labels, count);
    buf_addf(out, "%s_sum{%s} %.6f\n", name, labels, (double)sum_us / 1e6);
    buf_addf(out, "%s_count{%s} %llu\n", name, labels, count);
}

/* The samples of a per-route histogram array (offset: its first element in
 * struct metrics) for every route that has any, labelled method and route;
 * labels is scratch. */
static void route_histograms(struct buf *out, const struct metrics_set *set, struct buf *labels,
                             const char *name, size_t offset, const double *bounds, size_t n)
{
    for (size_t r = 0; r <= set->n_routes; r++) {
        size_t slot = r < set->n_routes ? r : MAX_ROUTES;
        size_t at = offset + slot * sizeof(struct histogram);
        if (!fold(set, at + offsetof(struct histogram, count)))
            continue;
        buf_reset(labels);
        buf_addf(labels, "method=\"%s\",route=\"",
                 r < set->n_routes && set->method[r] ? set->method[r] : "other");
        add_label_value(labels,
                        r < set->n_routes && set->pattern[r] ? set->pattern[r] : "unmatched");
        buf_addch(labels, '"');
        histogram_samples(out, set, name, labels->data, at, bounds, n);
    }
}

static void render_requests(struct buf *out, const struct metrics_set *set)
{
    size_t n_routes = set->n_routes;
    struct buf labels;
    buf_init(&labels, 4096);
    head(out, "knowhub_http_requests_total", "counter",
         "Requests answered, by route pattern (\"unmatched\": no route) and HTTP status.");
    for (size_t r = 0; r <= n_routes; r++) {
        size_t slot = r < n_routes ? r : MAX_ROUTES;
        for (size_t s = 0; s < N_STATUS; s++) {
            unsigned long long v = FOLD(set, requests[slot][s]);
            if (!v)
                continue;
            buf_addf(out, "knowhub_http_requests_total{method=\"%s\",route=\"",
                     r < n_routes && set->method[r] ? set->method[r] : "other");
            add_label_value(out, r < n_routes && set->pattern[r] ? set->pattern[r] : "unmatched");
            if (s + 1 < N_STATUS)
                buf_addf(out, "\",status=\"%d\"} %llu\n", statuses[s], v);
            else
                buf_addf(out, "\",status=\"other\"} %llu\n", v);
        }
    }
    head(out, "knowhub_http_request_duration_seconds", "histogram",
         "Time from the request's arrival in knowhub to its answer, by route pattern.");
    route_histograms(out, set, &labels, "knowhub_http_request_duration_seconds",
                     offsetof(struct metrics, latency), request_buckets,
                     sizeof request_buckets / sizeof request_buckets[0]);
    head(out, "knowhub_store_round_trips", "histogram",
         "Round trips to PostgreSQL (statements, prepares, BEGIN and COMMIT) per request, by "
         "route pattern; none on SQLite.");
    route_histograms(out, set, &labels, "knowhub_store_round_trips",
                     offsetof(struct metrics, round_trips), round_trip_buckets,
                     sizeof round_trip_buckets / sizeof round_trip_buckets[0]);
    buf_release(&labels);
}

static void render_llm(struct buf *out, const struct metrics_set *set)
{
    struct buf labels;
    buf_init(&labels, 256);
    head(out, "knowhub_llm_calls_total", "counter",
         "LLM chat completions and embedding requests (a retry included), by purpose and outcome "
         "(ok or the LLM_* code).");
    for (size_t p = 0; p < N_PURPOSE; p++)
        for (size_t o = 0; o < N_OUTCOME; o++) {
            unsigned long long v = FOLD(set, llm_calls[p][o]);
            if (v)
                buf_addf(out, "knowhub_llm_calls_total{purpose=\"%s\",outcome=\"%s\"} %llu\n",
                         purposes[p], outcomes[o], v);
        }
    head(out, "knowhub_llm_prompt_tokens_total", "counter",
         "Prompt tokens the LLM reported, by purpose.");
    for (size_t p = 0; p < N_PURPOSE; p++)
        if (FOLD(set, llm_latency[p].count))
            buf_addf(out, "knowhub_llm_prompt_tokens_total{purpose=\"%s\"} %llu\n", purposes[p],
                     FOLD(set, llm_prompt_tokens[p]));
    head(out, "knowhub_llm_completion_tokens_total", "counter",
         "Completion tokens the LLM reported, by purpose.");
    for (size_t p = 0; p < N_PURPOSE; p++)
        if (FOLD(set, llm_latency[p].count))
            buf_addf(out, "knowhub_llm_completion_tokens_total{purpose=\"%s\"} %llu\n", purposes[p],
                     FOLD(set, llm_completion_tokens[p]));
    head(out, "knowhub_llm_call_duration_seconds", "histogram",
         "LLM call latency (a retry included), by purpose.");
    for (size_t p = 0; p < N_PURPOSE; p++) {
        if (!FOLD(set, llm_latency[p].count))
            continue;
        buf_reset(&labels);
        buf_addf(&labels, "purpose=\"%s\"", purposes[p]);
        histogram_samples(out, set, "knowhub_llm_call_duration_seconds", labels.data,
                          offsetof(struct metrics, llm_latency) + p * sizeof(struct histogram),
                          llm_buckets, sizeof llm_buckets / sizeof llm_buckets[0]);
    }
    buf_release(&labels);
}

struct space_fold {
    struct buf *out;
    const char *series; /* the metric name */
    int column;         /* 0: entries, 1: traces */
    size_t seen;
    long other;
    int any_other;
};

static void space_row(const char *space, long entries, long traces, void *arg)
{
    struct space_fold *f = arg;
    long v = f->column ? traces : entries;
    if (f->seen++ >= METRICS_MAX_SPACES || strcmp(space, "_other") == 0) {
        f->other += v;
        f->any_other = 1;
        return;
    }
    buf_addf(f->out, "%s{space=\"", f->series);
    add_label_value(f->out, space);
    buf_addf(f->out, "\"} %ld\n", v);
}

static void job_row(struct buf *out, const char *kind, const char *status, long count)
{
    buf_adds(out, "knowhub_jobs{kind=\"");
    add_label_value(out, kind);
    buf_adds(out, "\",status=\"");
    add_label_value(out, status);
    buf_addf(out, "\"} %ld\n", count);
}

/* The vector index's budget (service/vindex.c, docs/operations.md "Quotas"). */
static void render_vector_budget(struct buf *out, const struct metrics_gauges *g)
{
    head(out, "knowhub_vector_index_budget_bytes", "gauge",
         "The most that index may hold, every space together (KNOWHUB_VECTOR_BYTES; 0: no "
         "limit).");
    buf_addf(out, "knowhub_vector_index_budget_bytes %zu\n", g ? g->index_budget : 0);
    head(out, "knowhub_vector_index_space_cap_bytes", "gauge",
         "The most it may hold for one space (KNOWHUB_VECTOR_SPACE_BYTES; 0: no limit).");
    buf_addf(out, "knowhub_vector_index_space_cap_bytes %zu\n", g ? g->index_space_cap : 0);
    head(out, "knowhub_vector_index_spaces_over_cap", "gauge",
         "Spaces whose vectors are not held for being over the cap (searched by words only).");
    buf_addf(out, "knowhub_vector_index_spaces_over_cap %zu\n", g ? g->index_spaces_over : 0);
    head(out, "knowhub_vector_index_evictions_total", "counter",
         "Spaces evicted from that index to keep it within its budget (each reloads on its next "
         "search).");
    buf_addf(out, "knowhub_vector_index_evictions_total %llu\n", g ? g->index_evictions : 0);
}

static void render_store(struct buf *out, const struct metrics_set *set,
                         const struct metrics_gauges *g)
{
    static const char *const names[] = {"knowhub_space_entries", "knowhub_space_traces"};
    static const char *const helps[] = {
        "Active entries per space (the largest 100 spaces; the rest summed as space=\"_other\").",
        "Traces per space (the largest 100 spaces by entries; the rest summed as "
        "space=\"_other\")."};
    head(out, "knowhub_store_busy_events_total", "counter",
         "Where the store waited for or retried a busy database, and where it gave up "
         "(*_timeout: the request got 503).");
    for (size_t e = 0; e < METRICS_STORE_EVENTS; e++)
        buf_addf(out, "knowhub_store_busy_events_total{event=\"%s\"} %llu\n", store_events[e],
                 FOLD(set, store[e]));
    for (int c = 0; c < 2; c++) {
        struct space_fold f = {out, names[c], c, 0, 0, 0};
        head(out, names[c], "gauge", helps[c]);
        for (size_t i = 0; g && i < g->n_spaces; i++)
            space_row(g->spaces[i].space, g->spaces[i].entries, g->spaces[i].traces, &f);
        if (f.any_other)
            buf_addf(out, "%s{space=\"_other\"} %ld\n", names[c], f.other);
    }
    head(out, "knowhub_vector_index_vectors", "gauge",
         "Vectors in this process's in-memory index for search by meaning (every space).");
    buf_addf(out, "knowhub_vector_index_vectors %zu\n", g ? g->index_vectors : 0);
    head(out, "knowhub_vector_index_bytes", "gauge", "Bytes that index holds.");
    buf_addf(out, "knowhub_vector_index_bytes %zu\n", g ? g->index_bytes : 0);
    render_vector_budget(out, g);
    head(out, "knowhub_search_index_spaces", "gauge",
         "Spaces whose lexical index this process holds in memory (docs/search.md).");
    buf_addf(out, "knowhub_search_index_spaces %zu\n", g ? g->search_spaces : 0);
    head(out, "knowhub_search_index_entries", "gauge", "Entries those indexes hold.");
    buf_addf(out, "knowhub_search_index_entries %zu\n", g ? g->search_entries : 0);
    head(out, "knowhub_search_index_bytes", "gauge", "Bytes those indexes hold.");
    buf_addf(out, "knowhub_search_index_bytes %zu\n", g ? g->search_bytes : 0);
    head(out, "knowhub_search_index_budget_bytes", "gauge",
         "KNOWHUB_SEARCH_INDEX_BYTES: the most they may hold (0: none held).");
    buf_addf(out, "knowhub_search_index_budget_bytes %zu\n", g ? g->search_budget : 0);
    head(out, "knowhub_review_pending", "gauge",
         "Proposals waiting in the review queues, every space together (docs/review.md).");
    buf_addf(out, "knowhub_review_pending %ld\n", g ? g->review_pending : 0);
    head(out, "knowhub_review_quarantined", "gauge",
         "Proposals quarantined by the poisoning screen, every space together.");
    buf_addf(out, "knowhub_review_quarantined %ld\n", g ? g->review_quarantined : 0);
    head(out, "knowhub_jobs", "gauge", "Jobs in the jobs table, by kind and status.");
    for (size_t i = 0; g && i < g->n_jobs; i++)
        job_row(out, g->jobs[i].kind, g->jobs[i].status, g->jobs[i].count);
    head(out, "knowhub_job_duration_seconds", "histogram",
         "Run time of the jobs the job thread finished, by kind.");
    for (size_t k = 0; k < N_KIND; k++) {
        char labels[64];
        if (!FOLD(set, job_duration[k].count))
            continue;
        snprintf(labels, sizeof labels, "kind=\"%s\"", job_kinds[k]);
        histogram_samples(out, set, "knowhub_job_duration_seconds", labels,
                          offsetof(struct metrics, job_duration) + k * sizeof(struct histogram),
                          job_buckets, sizeof job_buckets / sizeof job_buckets[0]);
    }
}

/* Resident set size from /proc/self/statm (pages), -1 when unreadable. */
static long long resident_bytes(void)
{
    long long size = 0, resident = -1;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return -1;
    if (fscanf(f, "%lld %lld", &size, &resident) != 2)
        resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE);
}

/* Open file descriptors (entries of /proc/self/fd but the one reading it). */
static long open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    long n = 0;
    if (!d)
        return -1;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1;
}

/* Which node answers and on which backend: a scrape of one node's own
 * address (docs/operations.md) says whose figures these are. */
static void render_node(struct buf *out, const struct metrics_gauges *g)
{
    if (!g || !g->node)
        return;
    head(out, "knowhub_node_info", "gauge",
         "Always 1: this node's name (KNOWHUB_NODE) and its database (sqlite, postgresql).");
    buf_adds(out, "knowhub_node_info{node=\"");
    add_label_value(out, g->node);
    buf_adds(out, "\",store=\"");
    add_label_value(out, g->store ? g->store : "");
    buf_adds(out, "\"} 1\n");
}

static void render_process(struct buf *out, const struct metrics_set *set,
                           const char *sqlite_version)
{
    long long rss = resident_bytes();
    long fds = open_fds();
    head(out, "knowhub_build_info", "gauge", "Always 1: knowhub's version and SQLite's.");
    buf_adds(out, "knowhub_build_info{version=\"" KNOWHUB_VERSION "\",sqlite=\"");
    add_label_value(out, sqlite_version ? sqlite_version : "");
    buf_adds(out, "\"} 1\n");
    head(out, "process_start_time_seconds", "gauge", "Start time of the process (Unix seconds).");
    buf_addf(out, "process_start_time_seconds %.3f\n", set->start_time);
    if (rss >= 0) {
        head(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
        buf_addf(out, "process_resident_memory_bytes %lld\n", rss);
    }
    if (fds >= 0) {
        head(out, "process_open_fds", "gauge", "Open file descriptors.");
        buf_addf(out, "process_open_fds %ld\n", fds);
    }
    head(out, "knowhub_worker_threads", "gauge",
         "Threads with counters (workers and the job thread).");
    buf_addf(out, "knowhub_worker_threads %zu\n", set->threads);
    head(out, "knowhub_responses_undelivered_total", "counter",
         "Answers the client did not receive in full: the FastCGI connection closed while "
         "knowhub wrote, or knowhub cut off a streamed answer that failed midway (the access "
         "line says \"delivered\":false).");
    buf_addf(out, "knowhub_responses_undelivered_total %llu\n", FOLD(set, responses_undelivered));
    head(out, "knowhub_log_lines_lost_total", "counter",
         "Lines of access.jsonl and audit.jsonl that could not be written (a full disk, an I/O "
         "error).");
    buf_addf(out, "knowhub_log_lines_lost_total %llu\n", FOLD(set, log_lines_lost));
}

int metrics_render(const struct metrics *m, const struct metrics_gauges *g, struct buf *out)
{
    const struct metrics_set *set;
    if (!m)
        return -1;
    set = m->set;
    render_process(out, set, g ? g->sqlite_version : NULL);
    render_node(out, g);
    render_requests(out, set);
    head(out, "knowhub_cache_hits_total", "counter",
         "Answers served from a thread's answer cache.");
    buf_addf(out, "knowhub_cache_hits_total %llu\n", FOLD(set, cache_hits));
    head(out, "knowhub_cache_misses_total", "counter",
         "Cacheable reads the cache could not answer (the handler ran).");
    buf_addf(out, "knowhub_cache_misses_total %llu\n", FOLD(set, cache_misses));
    head(out, "knowhub_cache_bytes", "gauge", "Bytes the answer caches of all threads hold.");
    buf_addf(out, "knowhub_cache_bytes %llu\n", FOLD(set, cache_bytes));
    head(out, "knowhub_streams_open", "gauge",
         "Live streams open now (GET /mcp, GET /api/events), all held by one thread.");
    buf_addf(out, "knowhub_streams_open %llu\n", FOLD(set, streams_open));
    head(out, "knowhub_streams_opened_total", "counter", "Live streams opened since the start.");
    buf_addf(out, "knowhub_streams_opened_total %llu\n", FOLD(set, streams_opened));
    render_llm(out, set);
    render_store(out, set, g);
    return buf_failed(out) || out->len + 1 >= out->max ? -1 : 0;
}

int metrics_loopback_request(const char *remote_addr, const char *forwarded_for,
                             const char *forwarded)
{
    static const char v4[] = "127.", mapped[] = "::ffff:127.";
    if ((forwarded_for && *forwarded_for) || (forwarded && *forwarded) || !remote_addr)
        return 0;
    if (strcmp(remote_addr, "::1") == 0)
        return 1;
    if (strncmp(remote_addr, mapped, sizeof mapped - 1) == 0)
        remote_addr += sizeof mapped - 1 - (sizeof v4 - 1);
    if (strncmp(remote_addr, v4, sizeof v4 - 1) != 0)
        return 0;
    /* The rest: three dot-separated numbers 0-255, nothing else. */
    remote_addr += sizeof v4 - 1;
    for (int part = 0; part < 3; part++) {
        int digits = 0, value = 0;
        while (*remote_addr >= '0' && *remote_addr <= '9' && digits < 3) {
            value = value * 10 + (*remote_addr++ - '0');
            digits++;
        }
        if (!digits || value > 255)
            return 0;
        if (part < 2 && *remote_addr++ != '.')
            return 0;
    }
    return *remote_addr == '\0';
}
