/* router: dispatch over the route table main installs (404, 405 + Allow, 401, 403). */
#include "http/router.h"
#include "service/auth.h"
#include "base/cache.h"
#include "base/config.h"
#include "store/store.h"
#include "base/metrics.h"
#include "base/util.h"

#include <stdio.h>
#include <string.h>

/* The table main installs (app/routes.c): router_use. */
static const struct route *routes;
static size_t ROUTE_COUNT;

void router_use(const struct route *table, size_t n)
{
    routes = table;
    ROUTE_COUNT = n;
}

const struct route *router_table(size_t *n)
{
    *n = ROUTE_COUNT;
    return routes;
}

/* Match path against pattern: -1 when it does not, else the number of literal
 * segments (the specificity); with req, the {name} segments are stored. */
static int match(const char *pattern, const char *path, struct request *req)
{
    int literals = 0;
    struct buf seg;
    buf_init(&seg, 4096);
    while (*pattern == '/' && *path == '/') {
        const char *pe = strchr(pattern + 1, '/'), *se = strchr(path + 1, '/');
        size_t pn = pe ? (size_t)(pe - pattern - 1) : strlen(pattern + 1);
        size_t sn = se ? (size_t)(se - path - 1) : strlen(path + 1);
        if (pn && pattern[1] == '{') {
            if (sn == 0)
                goto nomatch;
            if (req) {
                if (url_decode(path + 1, sn, 0, &seg) || req->n_params == HTTP_MAX_PARAMS)
                    goto nomatch;
                req->params[req->n_params++] = xstrndup(seg.data, seg.len);
            }
        } else {
            if (pn != sn || memcmp(pattern + 1, path + 1, pn) != 0)
                goto nomatch;
            literals++;
        }
        pattern += pn + 1;
        path += sn + 1;
    }
    buf_release(&seg);
    return *pattern == '\0' && *path == '\0' ? literals : -1;
nomatch:
    buf_release(&seg);
    return -1;
}

static void reply_unauthorized(struct response *res)
{
    buf_adds(&res->headers, "WWW-Authenticate: Bearer realm=\"knowhub\"\r\n");
    reply_error_key(res, 401, E_UNAUTHORIZED, "token_required",
                    "A valid token is required (Authorization: Bearer ...)");
}

/* 1 when a GET (or HEAD) may write after all: it logs injections (trace_id,
 * on any route), or it is a cached read while an LLM is configured (the
 * search may be routed by the LLM, which writes the usage ledger). Such a
 * read is never cached, and under a login cookie it needs the CSRF header
 * like any other write. */
static int read_writes(const struct route *route, const struct request *req)
{
    const char *trace = http_query(req, "trace_id");
    return (trace && *trace) || (route->cached && config_llm_configured(req->cfg));
}

/* Run the handler; a body it built directly (text, raw files) whose append
 * was refused (buf_failed) is answered as over the maximum, never cut short. */
static void run_handler(const struct route *route, struct request *req, struct response *res)
{
    route->handler(req, res);
    if (!res->streamed && buf_failed(&res->body)) {
        res->content_type = NULL;
        reply_too_large(res);
    }
}

/* Answer a pure read from the thread's cache when the database has not
 * changed since it was stored; else run the handler and keep a success.
 * Searches that log injections (trace_id) or ask the LLM are never cached,
 * nor requests with a large body: agents repeat small searches, and hashing
 * a padded megabyte for a slot only wastes the slot. */
static void cached_dispatch(const struct route *route, struct request *req, struct response *res)
{
    const char *query = req->query ? req->query : "";
    /* HEAD shares GET's answers (the route's method, not the request's). */
    const char *parts[] = {req->who.space, route->method, req->path, query, req->body};
    size_t lens[] = {strlen(req->who.space), strlen(route->method), strlen(req->path),
                     strlen(query), req->body_len};
    struct cache_key key;
    const char *hit;
    size_t len;
    uint64_t gen;
    if (read_writes(route, req)) {
        run_handler(route, req, res);
        return;
    }
    if (req->body_len > CACHE_MAX_REQUEST_BODY) {
        buf_adds(&res->headers, "X-Cache: miss\r\n");
        run_handler(route, req, res);
        return;
    }
    if (store_answer_generation(req->store, &gen) != STORE_OK) {
        /* no generation to tag an answer with: neither served nor kept */
        buf_adds(&res->headers, "X-Cache: miss\r\n");
        metrics_cache_lookup(req->metrics, 0);
        run_handler(route, req, res);
        return;
    }
    cache_key_of(&key, parts, lens, sizeof parts / sizeof parts[0]);
    if ((hit = cache_get(req->cache, &key, gen, &len))) {
        buf_reset(&res->body);
        buf_add(&res->body, hit, len);
        buf_adds(&res->headers, "X-Cache: hit\r\n");
        metrics_cache_lookup(req->metrics, 1);
        res->status = 200;
        res->done = 1;
    } else {
        buf_adds(&res->headers, "X-Cache: miss\r\n");
        metrics_cache_lookup(req->metrics, 0);
        run_handler(route, req, res);
        static const char success[] = "{\"status\":\"success\"";
        if (res->status == 200 && !res->streamed && !res->no_store &&
            strncmp(res->body.data, success, sizeof success - 1) == 0)
            cache_put(req->cache, &key, gen, res->body.data, res->body.len);
    }
}

/* The route for the request's method and path (the most specific pattern;
 * HEAD runs GET's), or NULL with 404 or 405 + Allow written to res. */
static const struct route *route_choose(const struct request *req, struct response *res)
{
    const struct route *chosen = NULL;
    int best = -1, head;
    struct buf allow;

    for (size_t i = 0; i < ROUTE_COUNT; i++) {
        int m = match(routes[i].pattern, req->path, NULL);
        if (m > best)
            best = m;
    }
    if (best < 0) {
        reply_error_key(res, 404, E_NOT_FOUND, "no_endpoint", "No such endpoint");
        return NULL;
    }
    /* HEAD is GET without the body (main.c leaves the body out). */
    head = strcmp(req->method, "HEAD") == 0;
    buf_init(&allow, 256);
    for (size_t i = 0; i < ROUTE_COUNT; i++) {
        if (match(routes[i].pattern, req->path, NULL) != best)
            continue;
        if (strcmp(routes[i].method, head ? "GET" : req->method) == 0 && !chosen)
            chosen = &routes[i];
        if (!strstr(allow.data, routes[i].method))
            buf_addf(&allow, "%s%s%s", allow.len ? ", " : "", routes[i].method,
                     strcmp(routes[i].method, "GET") == 0 ? ", HEAD" : "");
    }
    if (!chosen) {
        buf_addf(&res->headers, "Allow: %s\r\n", allow.data);
        error_param_str(res, "method", req->method);
        error_param_str(res, "allowed", allow.data);
        reply_error_key(res, 405, E_METHOD_NOT_ALLOWED, "method_not_allowed",
                        "Method %s is not allowed here (allowed: %s)", req->method, allow.data);
    }
    buf_release(&allow);
    return chosen;
}

/* The caller of a route that needs a role: req->who from a Bearer token,
 * or else the browser's login cookie (*cookie set), then the browser, CSRF
 * and role checks; -1 with 503, 401 or 403 written to res. A browser cannot
 * forge a Bearer header cross-site; a cookie request must come from this
 * origin, send JSON bodies as application/json, and never writes without
 * the matching CSRF header. */
static int caller_check(const struct route *chosen, struct request *req, struct response *res,
                        int *cookie)
{
    int rc;
    *cookie = !req->authorization && req->cookie;
    rc = *cookie ? auth_check_cookie(req->store, req->cookie, auth_cookie_name(req->https),
                                     &req->who, &req->who.csrf)
                 : auth_check(req->store, req->authorization, &req->who);
    if (rc == AUTH_UNAVAILABLE) {
        reply_error_key(res, 503, E_SERVICE_UNAVAILABLE, "db_busy",
                        "The database is busy; try again");
        return -1;
    }
    if (rc != AUTH_OK) {
        reply_unauthorized(res);
        return -1;
    }
    res->node = req->cfg->node; /* X-KnowHub-Node: never to anonymous callers */
    if (*cookie && http_browser_request_or_error(req, res, 0))
        return -1;
    if (*cookie && strcmp(chosen->method, "GET") != 0 && !auth_csrf_ok(req->who.csrf, req->csrf)) {
        reply_error_key(res, 403, E_FORBIDDEN, "csrf", "Missing or wrong X-CSRF-Token header");
        return -1;
    }
    if (req->who.role < chosen->role) {
        error_param_str(res, "role", role_name(req->who.role));
        reply_error_key(res, 403, E_FORBIDDEN, "role_forbidden", "The %s role may not do this",
                        role_name(req->who.role));
        return -1;
    }
    return 0;
}

void router_dispatch(struct request *req, struct response *res)
{
    const struct route *chosen = route_choose(req, res);
    int params_bad, cookie = 0;

    if (!chosen)
        return;
    req->route = (int)(chosen - routes);
    /* -1 when a {name} segment is a bad %-escape or not UTF-8: then the
     * handler must not run with its params missing (answered below). */
    params_bad = match(chosen->pattern, req->path, req) < 0;
    if (chosen->role != ROLE_NONE && caller_check(chosen, req, res, &cookie))
        return;
    if (params_bad) {
        reply_error_key(res, 200, E_INVALID_REQUEST, "malformed_url",
                        "Malformed path (bad %%-escape, invalid UTF-8 or NUL)");
        return;
    }
    if (http_parse_query(req)) {
        reply_error_key(res, 200, E_INVALID_REQUEST, "malformed_url",
                        "Malformed query string (bad %%-escape or invalid UTF-8)");
        return;
    }
    if (cookie && strcmp(chosen->method, "GET") == 0 && read_writes(chosen, req) &&
        !auth_csrf_ok(req->who.csrf, req->csrf)) {
        reply_error_key(res, 403, E_FORBIDDEN, "csrf",
                        "This read writes (trace_id, LLM routing): X-CSRF-Token header required");
        return;
    }
    if (chosen->cached && req->cache)
        cached_dispatch(chosen, req, res);
    else
        run_handler(chosen, req, res);
    if (!res->done)
        reply_error_key(res, 500, E_INTERNAL, "internal_error", "An unexpected error occurred");
}
