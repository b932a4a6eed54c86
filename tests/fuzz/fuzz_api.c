/* fuzz_api: JSON bodies and query strings through the router and every
 * route of the table knowhub serves (router_table after routes_install),
 * with the configuration knowhub serve reads (config_from_env; no LLM or
 * embeddings server: none runs beside the target), a thread's cache and
 * counters, against an in-memory store with an admin token. The first byte
 * picks the route by its index in app/routes.c's table; the rest is the
 * query (GET) or the body. A route's {name} segments are objects made in
 * setup (an entry, a trace, a session and its table, a job, a token, a
 * proposal, a second entry linked to the first). Every answer
 * is a JSON envelope, or the metrics' text, or a stream of JSON lines
 * (export); a 500 is a bug. */
#include "service/auth.h"
#include "base/cache.h"
#include "base/config.h"
#include "base/metrics.h"
#include "http/http.h"
#include "llm/llm.h"
#include "app/routes.h"
#include "http/router.h"
#include "store/store.h"
#include "base/util.h"

#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct store *st;
static struct llm *llm;
static struct cache *cache;
static struct metrics_set *metrics_set;
static struct metrics *metrics;
static struct buf auth_header;
static struct config cfg;
static const struct route *routes;
static size_t n_routes;
static char **route_paths; /* each route's pattern with its {name} segments filled */
static char entry_id[64], other_id[64], job_id[64], token_id[64], proposal_id[64];
static struct buf streamed; /* a streamed answer, head and body, as knowhub serve sends it */

static int sink(void *ctx, const char *data, size_t n)
{
    buf_add(ctx, data, n);
    return 0;
}

/* One request as knowhub serve fills it from nginx's (loopback, JSON). */
static void request_fill(struct request *req, const char *method, const char *path)
{
    req->method = method;
    req->path = path;
    req->query = "";
    req->body = "";
    req->authorization = auth_header.data;
    req->content_type = "application/json";
    req->remote_addr = "127.0.0.1";
    req->store = st;
    req->llm = llm;
    req->cache = cache;
    req->metrics = metrics;
    req->cfg = &cfg;
}

/* POST body to path in setup; the reply's data.<key> goes to id (when given). */
static void seed_as(const char *path, const char *body, const char *key, char *id, size_t id_size)
{
    struct request req;
    struct response res;
    struct json_object *reply, *data, *value;
    request_init(&req);
    response_init(&res, "seed");
    request_fill(&req, "POST", path);
    req.body = body;
    req.body_len = strlen(body);
    router_dispatch(&req, &res);
    reply = json_tokener_parse(res.body.data);
    if (!reply || !json_object_object_get_ex(reply, "data", &data)) {
        fprintf(stderr, "fuzz_api: seeding %s failed: %s\n", path, res.body.data);
        abort();
    }
    if (id) {
        if (!json_object_object_get_ex(data, key, &value))
            abort();
        snprintf(id, id_size, "%s", json_object_get_string(value));
    }
    json_object_put(reply);
    request_release(&req);
    response_release(&res);
}

/* seed_as with data.id. */
static void seed(const char *path, const char *body, char *id, size_t id_size)
{
    seed_as(path, body, "id", id, id_size);
}

/* The value of the {name} segment after /api/resource/ (a seeded object). */
static const char *segment_value(const char *pattern, const char *name, size_t n)
{
    if (n == 8 && memcmp(name, "trace_id", n) == 0)
        return "fuzz";
    if (n == 8 && memcmp(name, "table_id", n) == 0)
        return "t1";
    if (n == 2 && memcmp(name, "to", n) == 0)
        return other_id; /* a link's other entry (docs/conflicts.md) */
    if (n == 4 && memcmp(name, "type", n) == 0)
        return "related";
    if (n == 2 && memcmp(name, "id", n) == 0) {
        if (strncmp(pattern, "/api/knowledge/", 15) == 0)
            return entry_id;
        if (strncmp(pattern, "/api/sessions/", 14) == 0)
            return "fuzz";
        if (strncmp(pattern, "/api/jobs/", 10) == 0)
            return job_id;
        if (strncmp(pattern, "/api/tokens/", 12) == 0)
            return token_id;
        if (strncmp(pattern, "/api/review/", 12) == 0)
            return proposal_id;
    }
    fprintf(stderr, "fuzz_api: no seeded object for {%.*s} of %s: make one in setup()\n", (int)n,
            name, pattern);
    abort();
}

static char *route_path(const char *pattern)
{
    struct buf path;
    char *out;
    buf_init(&path, 1024);
    for (const char *p = pattern; *p;) {
        const char *close = *p == '{' ? strchr(p, '}') : NULL;
        if (close) {
            buf_adds(&path, segment_value(pattern, p + 1, (size_t)(close - p - 1)));
            p = close + 1;
        } else {
            buf_add(&path, p++, 1);
        }
    }
    out = xstrdup(path.data);
    buf_release(&path);
    return out;
}

static void setup(void)
{
    struct buf t;
    store_global_init();
    routes_install();
    llm_global_init();
    if (sodium_init() < 0)
        abort();
    unsetenv("KNOWHUB_LLM_BASE_URL");
    unsetenv("KNOWHUB_EMBED_URL");
    config_from_env(&cfg);
    if (store_open(":memory:", &st))
        abort();
    llm = llm_new();
    cache = cache_new((size_t)cfg.cache_slots, cfg.cache_bytes / (size_t)cfg.threads);
    routes = router_table(&n_routes);
    metrics_set = metrics_set_new(1, 0);
    for (size_t r = 0; r < n_routes; r++)
        metrics_set_route(metrics_set, r, routes[r].method, routes[r].pattern);
    metrics = metrics_of(metrics_set, 0);
    store_set_metrics(st, metrics);
    llm_set_metrics(llm, metrics);
    buf_init(&t, 256);
    if (auth_token_create(st, "fuzz", ROLE_ADMIN, "fuzz", "operator", &t))
        abort();
    buf_init(&auth_header, 256);
    buf_addf(&auth_header, "Bearer %s", t.data);
    buf_release(&t);
    /* The objects the routes' {name} segments name. */
    seed("/api/knowledge", "{\"scenario\":\"fuzz seed\",\"content\":\"seed body\"}", entry_id,
         sizeof entry_id);
    seed("/api/knowledge", "{\"scenario\":\"fuzz other\",\"content\":\"other body\"}", other_id,
         sizeof other_id);
    {
        /* a link between the two entries (docs/conflicts.md) */
        char path[160], body[160];
        snprintf(path, sizeof path, "/api/knowledge/%s/links", entry_id);
        snprintf(body, sizeof body, "{\"to\":\"%s\",\"type\":\"related\"}", other_id);
        seed(path, body, NULL, 0);
    }
    seed("/api/traces", "{\"trace_id\":\"fuzz\",\"task\":\"fuzz\"}", NULL, 0);
    seed("/api/sessions", "{\"id\":\"fuzz\",\"tables\":[{\"id\":\"t1\"}]}", NULL, 0);
    seed("/api/knowledge/slim", "{}", job_id, sizeof job_id);
    seed("/api/tokens", "{\"role\":\"reader\",\"label\":\"fuzz\"}", token_id, sizeof token_id);
    /* a proposal of the review queue (docs/review.md), the policy back to off */
    if (store_review_policy_set(st, "fuzz", "all", "operator"))
        abort();
    seed_as("/api/knowledge", "{\"scenario\":\"fuzz held\",\"content\":\"held body\"}",
            "proposal_id", proposal_id, sizeof proposal_id);
    if (store_review_policy_set(st, "fuzz", "off", "operator"))
        abort();
    buf_init(&streamed, HTTP_MAX_RESPONSE);
    route_paths = xcalloc(n_routes, sizeof *route_paths);
    for (size_t r = 0; r < n_routes; r++)
        route_paths[r] = route_path(routes[r].pattern);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct request req;
    struct response res;
    char *text;
    size_t which;
    if (!st)
        setup();
    if (size == 0)
        return 0;
    which = data[0] % n_routes;
    text = xstrndup((const char *)data + 1, size - 1);
    request_init(&req);
    response_init(&res, "fuzz");
    res.node = cfg.node;
    res.sink = sink;
    res.sink_ctx = &streamed;
    buf_reset(&streamed);
    request_fill(&req, routes[which].method, route_paths[which]);
    if (strcmp(req.method, "GET") == 0) {
        req.query = text;
    } else {
        req.body = text;
        req.body_len = size - 1;
    }
    router_dispatch(&req, &res);
    metrics_request(metrics, req.route, res.status, 0.0);
    if (!res.done || res.status == 500)
        __builtin_trap();
    if (res.streamed) {
        const char *line = strstr(streamed.data, "\r\n\r\n");
        if (buf_failed(&streamed) || !line)
            __builtin_trap();
        for (line += 4; *line; line = strchr(line, '\n') + 1) {
            char *one = xstrndup(line, strcspn(line, "\n"));
            struct json_object *o = json_tokener_parse(one);
            if (!o || !json_object_is_type(o, json_type_object) || !strchr(line, '\n'))
                __builtin_trap();
            json_object_put(o);
            free(one);
        }
    } else if (!res.content_type && !(res.status == 202 && res.body.len == 0)) {
        /* 202 with no body: /mcp's answer to notifications alone. */
        struct json_object *reply = json_tokener_parse(res.body.data);
        if (!reply)
            __builtin_trap();
        json_object_put(reply);
    }
    request_release(&req);
    response_release(&res);
    free(text);
    return 0;
}
