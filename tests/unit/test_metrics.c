/* test_metrics: who may scrape (the loopback decision), the exposition of
 * counters folded over threads (histogram buckets cumulative, +Inf equal to
 * the count, label values escaped, the space labels capped), the audit hook
 * (rows only once committed), and the JSON lines of the access log with
 * their size rotation. */
#include "app/routes.h"
#include "http/accesslog.h"
#include "harness.h"
#include "base/metrics.h"
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_loopback(void)
{
    CHECK(metrics_loopback_request("127.0.0.1", NULL, NULL));
    CHECK(metrics_loopback_request("127.1.2.3", "", ""));
    CHECK(metrics_loopback_request("::1", NULL, NULL));
    CHECK(metrics_loopback_request("::ffff:127.0.0.1", NULL, NULL));
    /* through another proxy: not loopback, whatever the address */
    CHECK(!metrics_loopback_request("127.0.0.1", "203.0.113.9", NULL));
    CHECK(!metrics_loopback_request("127.0.0.1", NULL, "for=203.0.113.9"));
    CHECK(!metrics_loopback_request(NULL, NULL, NULL));
    CHECK(!metrics_loopback_request("", NULL, NULL));
    CHECK(!metrics_loopback_request("10.0.0.1", NULL, NULL));
    CHECK(!metrics_loopback_request("128.0.0.1", NULL, NULL));
    CHECK(!metrics_loopback_request("127.0.0.1.evil", NULL, NULL));
    CHECK(!metrics_loopback_request("127.0.0.256", NULL, NULL));
    CHECK(!metrics_loopback_request("127.0.0", NULL, NULL));
    CHECK(!metrics_loopback_request("::2", NULL, NULL));
    CHECK(!metrics_loopback_request("::ffff:10.0.0.1", NULL, NULL));
}

static const char *line_of(const char *text, const char *prefix, char *out, size_t n)
{
    const char *p = strstr(text, prefix);
    size_t len;
    if (!p)
        return NULL;
    len = strcspn(p, "\n");
    snprintf(out, n, "%.*s", (int)len, p);
    return out;
}

/* A set labelled with the installed route table, as main makes it. */
static struct metrics_set *new_set(size_t threads, double start)
{
    struct metrics_set *set = metrics_set_new(threads, start);
    size_t n;
    const struct route *routes = router_table(&n);
    for (size_t r = 0; r < n; r++)
        metrics_set_route(set, r, routes[r].method, routes[r].pattern);
    return set;
}

/* Render with the store's gauges read through st, as GET /metrics does. */
static int render(struct metrics_set *set, struct store *st, struct buf *out)
{
    struct metrics_gauges g;
    int rc;
    metrics_gauges_init(&g, store_sqlite_version());
    CHECK_INT(store_space_counts(st, metrics_gauges_space, &g), STORE_OK);
    CHECK_INT(store_job_counts(st, metrics_gauges_job, &g), STORE_OK);
    rc = metrics_render(metrics_of(set, 0), &g, out);
    metrics_gauges_release(&g);
    return rc;
}

static void test_render(void)
{
    struct metrics_set *set = new_set(2, 1700000000.0);
    struct store *st = NULL;
    struct buf out;
    char line[512];
    CHECK_INT(store_open(":memory:", &st), STORE_OK);
    buf_init(&out, 4 * 1024 * 1024);
    /* route 0 is GET /api/health: 3 requests on thread 0, 2 on thread 1 */
    metrics_request(metrics_of(set, 0), 0, 200, 0.0004);
    metrics_request(metrics_of(set, 0), 0, 200, 0.003);
    metrics_request(metrics_of(set, 1), 0, 200, 20.0); /* over the last bucket */
    metrics_request(metrics_of(set, 1), 0, 503, 0.003);
    metrics_request(metrics_of(set, 0), 0, 299, 0.003); /* a status off the list */
    metrics_request(metrics_of(set, 1), -1, 404, 0.001);
    metrics_cache_lookup(metrics_of(set, 0), 1);
    metrics_cache_lookup(metrics_of(set, 1), 1);
    metrics_cache_lookup(metrics_of(set, 1), 0);
    metrics_cache_bytes(metrics_of(set, 0), 1000);
    metrics_cache_bytes(metrics_of(set, 1), 24);
    metrics_llm_call(metrics_of(set, 1), "evolve", "LLM_TIMEOUT", 10, 0, 60000);
    metrics_llm_call(metrics_of(set, 1), "evolve", "ok", 100, 20, 500);
    metrics_llm_call(metrics_of(set, 1), "embedding?", "WEIRD", 1, 1, 1);
    metrics_store_event(metrics_of(set, 0), METRICS_WRITER_WAIT);
    metrics_request(NULL, 0, 200, 1); /* no counters: nothing happens */
    CHECK_INT(render(set, st, &out), 0);
    CHECK(strstr(out.data, "# TYPE knowhub_http_requests_total counter\n"));
    CHECK(strstr(out.data, "knowhub_http_requests_total{method=\"GET\",route=\"/api/health\","
                           "status=\"200\"} 3\n"));
    CHECK(strstr(out.data, "knowhub_http_requests_total{method=\"GET\",route=\"/api/health\","
                           "status=\"503\"} 1\n"));
    CHECK(strstr(out.data, "knowhub_http_requests_total{method=\"GET\",route=\"/api/health\","
                           "status=\"other\"} 1\n"));
    CHECK(strstr(out.data, "knowhub_http_requests_total{method=\"other\",route=\"unmatched\","
                           "status=\"404\"} 1\n"));
    CHECK(strstr(out.data, "knowhub_http_request_duration_seconds_bucket{method=\"GET\","
                           "route=\"/api/health\",le=\"0.0005\"} 1\n"));
    CHECK(strstr(out.data, "knowhub_http_request_duration_seconds_bucket{method=\"GET\","
                           "route=\"/api/health\",le=\"0.005\"} 4\n"));
    CHECK(strstr(out.data, "knowhub_http_request_duration_seconds_bucket{method=\"GET\","
                           "route=\"/api/health\",le=\"10\"} 4\n"));
    CHECK(strstr(out.data, "knowhub_http_request_duration_seconds_bucket{method=\"GET\","
                           "route=\"/api/health\",le=\"+Inf\"} 5\n"));
    CHECK(strstr(out.data, "knowhub_http_request_duration_seconds_count{method=\"GET\","
                           "route=\"/api/health\"} 5\n"));
    CHECK(line_of(out.data,
                  "knowhub_http_request_duration_seconds_sum{method=\"GET\","
                  "route=\"/api/health\"} 20.0094",
                  line, sizeof line));
    CHECK(strstr(out.data, "knowhub_cache_hits_total 2\n"));
    CHECK(strstr(out.data, "knowhub_cache_misses_total 1\n"));
    CHECK(strstr(out.data, "knowhub_cache_bytes 1024\n"));
    CHECK(strstr(out.data, "knowhub_llm_calls_total{purpose=\"evolve\",outcome=\"ok\"} 1\n"));
    CHECK(strstr(out.data,
                 "knowhub_llm_calls_total{purpose=\"evolve\",outcome=\"LLM_TIMEOUT\"} 1\n"));
    /* unknown purposes and outcomes fold into "other": the label set stays fixed */
    CHECK(strstr(out.data, "knowhub_llm_calls_total{purpose=\"other\",outcome=\"other\"} 1\n"));
    CHECK(strstr(out.data, "knowhub_llm_prompt_tokens_total{purpose=\"evolve\"} 110\n"));
    CHECK(strstr(out.data, "knowhub_llm_completion_tokens_total{purpose=\"evolve\"} 20\n"));
    CHECK(strstr(out.data, "knowhub_llm_call_duration_seconds_bucket{purpose=\"evolve\","
                           "le=\"60\"} 2\n"));
    CHECK(strstr(out.data, "knowhub_store_busy_events_total{event=\"writer_wait\"} 1\n"));
    CHECK(strstr(out.data, "knowhub_build_info{version=\"0.1.0\",sqlite=\"3."));
    CHECK(strstr(out.data, "process_start_time_seconds 1700000000.000\n"));
    CHECK(strstr(out.data, "process_open_fds "));
    buf_release(&out);
    store_close(st);
    metrics_set_free(set);
}

static void test_spaces_capped(void)
{
    struct metrics_set *set = new_set(1, 0);
    struct store *st = NULL;
    struct buf out, name;
    size_t labels = 0;
    CHECK_INT(store_open(":memory:", &st), STORE_OK);
    buf_init(&out, 4 * 1024 * 1024);
    buf_init(&name, 256);
    for (int i = 0; i < 130; i++) {
        buf_reset(&name);
        buf_addf(&name, "space-%03d", i);
        CHECK_INT(store_space_ensure(st, name.data), STORE_OK);
    }
    CHECK_INT(store_space_ensure(st, "quote\"back\\slash"), STORE_OK);
    CHECK_INT(render(set, st, &out), 0);
    for (const char *p = out.data; (p = strstr(p, "\nknowhub_space_entries{")); p++)
        labels++;
    CHECK_INT(labels, METRICS_MAX_SPACES + 1);
    CHECK(strstr(out.data, "knowhub_space_entries{space=\"_other\"} 0\n"));
    /* "quote..." sorts first among equal counts; its label value is escaped */
    CHECK(strstr(out.data, "knowhub_space_entries{space=\"quote\\\"back\\\\slash\"} 0\n"));
    buf_release(&out);
    buf_release(&name);
    store_close(st);
    metrics_set_free(set);
}

struct audit_seen {
    int rows;
    char last[256];
};

static void on_audit(void *arg, const char *ts, const char *space, const char *actor,
                     const char *action, const char *target)
{
    struct audit_seen *a = arg;
    (void)ts;
    a->rows++;
    snprintf(a->last, sizeof a->last, "%s %s %s %s", space, actor, action, target);
}

static void test_audit_hook(void)
{
    struct store *st = NULL;
    struct audit_seen seen = {0, ""};
    CHECK_INT(store_open(":memory:", &st), STORE_OK);
    CHECK_INT(store_space_ensure(st, "s"), STORE_OK);
    store_set_audit_hook(st, on_audit, &seen);
    CHECK_INT(store_audit(st, "s", "token:a", "thing.do", "x1"), STORE_OK);
    CHECK_INT(seen.rows, 1); /* outside a transaction: at once */
    CHECK_STR(seen.last, "s token:a thing.do x1");
    CHECK_INT(store_begin(st), STORE_OK);
    CHECK_INT(store_audit(st, "s", "token:a", "thing.do", "x2"), STORE_OK);
    CHECK_INT(seen.rows, 1); /* not yet committed */
    CHECK_INT(store_begin(st), STORE_OK);
    CHECK_INT(store_audit(st, "s", "token:a", "thing.do", "x3"), STORE_OK);
    store_rollback(st); /* the savepoint's row is gone */
    CHECK_INT(store_commit(st), STORE_OK);
    CHECK_INT(seen.rows, 2);
    CHECK_STR(seen.last, "s token:a thing.do x2");
    CHECK_INT(store_begin(st), STORE_OK);
    CHECK_INT(store_audit(st, "s", "token:a", "thing.do", "x4"), STORE_OK);
    store_rollback(st);
    CHECK_INT(seen.rows, 2); /* rolled back: never logged */
    store_close(st);
}

static void test_access_lines(void)
{
    struct buf line;
    struct access_entry e = {
        "req-12345678", "space\"q", "token:abc:label\nx", "abc", "GET", "/api/knowledge/{id}", 200,
        1.25,           42};
    buf_init(&line, 64 * 1024);
    accesslog_access_line(&line, &e);
    CHECK(strstr(line.data, "\"type\":\"access\",\"request_id\":\"req-12345678\",\"space\":"
                            "\"space\\\"q\",\"actor\":\"token:abc:label\\u000ax\""));
    CHECK(strstr(line.data, "\"route\":\"/api/knowledge/{id}\",\"status\":200,"
                            "\"duration_ms\":1.250,\"bytes\":42}\n"));
    e.space = NULL;
    e.method = "G\xff";
    accesslog_access_line(&line, &e);
    CHECK(strstr(line.data, "\"space\":null"));
    CHECK(strstr(line.data, "\"method\":\"G\\ufffd\""));
    accesslog_audit_line(&line, NULL, "2026-01-01 00:00:00", "s", "token:a", "knowledge.create",
                         "knowledge-1");
    CHECK(strstr(line.data, "\"type\":\"audit\",\"request_id\":null,\"ts\":\"2026-01-01 "
                            "00:00:00\",\"space\":\"s\",\"actor\":\"token:a\",\"action\":"
                            "\"knowledge.create\",\"target\":\"knowledge-1\"}\n"));
    buf_release(&line);
}

static long long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
}

static void test_rotation(void)
{
    char dir[] = "/tmp/knowhub-test-log-XXXXXX", path[256], old[280];
    struct accesslog *log;
    const char line[] = "{\"x\":\"0123456789012345678901234567890123456789\"}\n"; /* 49 bytes */
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/access.jsonl", dir);
    log = accesslog_open(path, 1000, 2);
    CHECK(log != NULL);
    for (int i = 0; i < 100; i++) /* 4900 bytes: a rotation every 21 lines */
        accesslog_write(log, line, sizeof line - 1);
    CHECK(file_size(path) < 1000);
    CHECK_INT(file_size(path), (100 % 21) * 49);
    snprintf(old, sizeof old, "%s.1", path);
    CHECK_INT(file_size(old), 21 * 49); /* the first line over the limit ends a file */
    snprintf(old, sizeof old, "%s.2", path);
    CHECK_INT(file_size(old), 21 * 49);
    snprintf(old, sizeof old, "%s.3", path);
    CHECK_INT(file_size(old), -1); /* keep = 2 */
    accesslog_close(log);
    /* reopening appends to what is there */
    log = accesslog_open(path, 0, 2);
    accesslog_write(log, line, sizeof line - 1);
    CHECK_INT(file_size(path), (100 % 21 + 1) * 49);
    accesslog_close(log);
    for (int i = 0; i <= 3; i++) {
        snprintf(old, sizeof old, i ? "%s.%d" : "%s", path, i);
        unlink(old);
    }
    rmdir(dir);
}

/* knowhub_node_info names the node and its backend (label values escaped),
 * and is left out when the caller gives no node (the CLI, older callers). */
static void test_node_info(void)
{
    struct metrics_set *set = new_set(1, 1700000000.0);
    struct metrics_gauges g;
    struct buf out;
    buf_init(&out, 1024 * 1024);
    metrics_gauges_init(&g, NULL);
    CHECK_INT(metrics_render(metrics_of(set, 0), &g, &out), 0);
    CHECK(!strstr(out.data, "knowhub_node_info"));
    buf_reset(&out);
    g.node = "node-\"b\\";
    g.store = "postgresql";
    CHECK_INT(metrics_render(metrics_of(set, 0), &g, &out), 0);
    CHECK(strstr(out.data, "# TYPE knowhub_node_info gauge\n"));
    CHECK(strstr(out.data, "knowhub_node_info{node=\"node-\\\"b\\\\\",store=\"postgresql\"} 1\n"));
    metrics_gauges_release(&g);
    buf_release(&out);
    metrics_set_free(set);
}

int main(void)
{
    routes_install();
    test_loopback();
    test_render();
    test_node_info();
    test_spaces_capped();
    test_audit_hook();
    test_access_lines();
    test_rotation();
    return test_summary();
}
