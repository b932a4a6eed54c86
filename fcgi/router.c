/* router: the route table and dispatch (404, 405 + Allow, 401, 403). */
#include "router.h"
#include "auth.h"
#include "cache.h"
#include "config.h"
#include "store.h"
#include "handlers.h"
#include "metrics.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

static const struct route routes[] = {
    {"GET", "/api/health", ROLE_NONE, h_health, 0},
    {"GET", "/api/auth/me", ROLE_READER, h_auth_me, 0},
    {"POST", "/api/auth/login", ROLE_NONE, h_auth_login, 0},
    {"POST", "/api/auth/logout", ROLE_READER, h_auth_logout, 0},
    {"GET", "/api/knowledge", ROLE_READER, h_knowledge_list, 1},
    {"POST", "/api/knowledge", ROLE_AGENT, h_knowledge_create, 0},
    {"POST", "/api/knowledge/batch_update", ROLE_AGENT, h_knowledge_batch_update, 0},
    {"POST", "/api/knowledge/limits", ROLE_READER, h_files_limits, 0},
    {"POST", "/api/knowledge/list", ROLE_READER, h_files_list, 0},
    {"POST", "/api/knowledge/read", ROLE_READER, h_files_read, 0},
    {"POST", "/api/knowledge/write", ROLE_AGENT, h_files_write, 0},
    {"POST", "/api/knowledge/rename", ROLE_AGENT, h_files_rename, 0},
    {"POST", "/api/knowledge/delete", ROLE_AGENT, h_files_delete, 0},
    {"POST", "/api/knowledge/trash", ROLE_READER, h_files_trash, 0},
    {"POST", "/api/knowledge/preview", ROLE_READER, h_files_preview, 0},
    {"GET", "/api/knowledge/rules", ROLE_READER, h_context_rules, 1},
    {"GET", "/api/knowledge/export", ROLE_READER, h_knowledge_export, 0},
    {"POST", "/api/knowledge/context", ROLE_READER, h_context_question, 1},
    {"POST", "/api/knowledge/search", ROLE_READER, h_search_files, 1},
    {"POST", "/api/knowledge/distill-experience", ROLE_AGENT, h_distill_experience, 0},
    {"POST", "/api/knowledge/slim", ROLE_AGENT, h_knowledge_slim, 0},
    {"GET", "/api/knowledge/search", ROLE_READER, h_search_entries, 1},
    {"GET", "/api/knowledge/{id}", ROLE_READER, h_knowledge_get, 1},
    {"PUT", "/api/knowledge/{id}", ROLE_AGENT, h_knowledge_update, 0},
    {"DELETE", "/api/knowledge/{id}", ROLE_AGENT, h_knowledge_delete, 0},
    {"GET", "/api/knowledge/{id}/revisions", ROLE_READER, h_knowledge_revisions, 0},
    {"GET", "/api/knowledge/{id}/cases", ROLE_READER, h_knowledge_cases, 0},
    {"POST", "/api/knowledge/{id}/revert", ROLE_AGENT, h_knowledge_revert, 0},
    {"POST", "/api/traces", ROLE_AGENT, h_traces_create, 0},
    {"GET", "/api/traces", ROLE_READER, h_traces_list, 0},
    {"GET", "/api/traces/{trace_id}", ROLE_READER, h_traces_get, 0},
    {"GET", "/api/traces/{trace_id}/knowledge_log", ROLE_READER, h_traces_log, 0},
    {"POST", "/api/traces/{trace_id}/knowledge_log", ROLE_AGENT, h_traces_inject, 0},
    {"GET", "/api/traces/{trace_id}/knowledge_log/pending", ROLE_READER, h_traces_pending, 0},
    {"GET", "/api/traces/{trace_id}/eval_prompt", ROLE_READER, h_traces_eval_prompt, 0},
    {"POST", "/api/traces/{trace_id}/evaluations", ROLE_AGENT, h_traces_evaluate, 0},
    {"GET", "/api/sessions", ROLE_READER, h_sessions_list, 0},
    {"POST", "/api/sessions", ROLE_AGENT, h_sessions_put, 0},
    {"GET", "/api/sessions/{id}", ROLE_READER, h_sessions_get, 0},
    {"DELETE", "/api/sessions/{id}", ROLE_AGENT, h_sessions_delete, 0},
    {"DELETE", "/api/sessions/{id}/tables/{table_id}", ROLE_AGENT, h_sessions_delete_table, 0},
    {"GET", "/api/jobs", ROLE_READER, h_jobs_list, 0},
    {"GET", "/api/jobs/{id}", ROLE_READER, h_jobs_get, 0},
    {"GET", "/api/llm/usage", ROLE_READER, h_llm_usage, 0},
    {"GET", "/api/tools", ROLE_READER, h_tools, 0},
    {"POST", "/mcp", ROLE_READER, h_mcp, 0},
    /* Loopback, or an admin token: the handler decides (docs/operations.md). */
    {"GET", "/metrics", ROLE_NONE, h_metrics, 0},
};
#define ROUTE_COUNT (sizeof routes / sizeof routes[0])

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
        route->handler(req, res);
        return;
    }
    if (req->body_len > CACHE_MAX_REQUEST_BODY) {
        buf_adds(&res->headers, "X-Cache: miss\r\n");
        route->handler(req, res);
        return;
    }
    cache_key_of(&key, parts, lens, sizeof parts / sizeof parts[0]);
    gen = store_generation(req->store);
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
        route->handler(req, res);
        static const char success[] = "{\"status\":\"success\"";
        if (res->status == 200 && !res->streamed &&
            strncmp(res->body.data, success, sizeof success - 1) == 0)
            cache_put(req->cache, &key, gen, res->body.data, res->body.len);
    }
}

void router_dispatch(struct request *req, struct response *res)
{
    const struct route *chosen = NULL;
    int best = -1, head, cookie = 0;
    struct buf allow;

    for (size_t i = 0; i < ROUTE_COUNT; i++) {
        int m = match(routes[i].pattern, req->path, NULL);
        if (m > best)
            best = m;
    }
    if (best < 0) {
        reply_error_key(res, 404, E_NOT_FOUND, "no_endpoint", "No such endpoint");
        return;
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
        buf_release(&allow);
        return;
    }
    buf_release(&allow);
    req->route = (int)(chosen - routes);
    /* -1 when a {name} segment is a bad %-escape or not UTF-8: then the
     * handler must not run with its params missing (answered below). */
    int params_bad = match(chosen->pattern, req->path, req) < 0;

    if (chosen->role != ROLE_NONE) {
        /* A Bearer token, or else the browser's login cookie. A browser
         * cannot forge a Bearer header cross-site; a cookie request must come
         * from this origin, send JSON bodies as application/json, and never
         * writes without the matching CSRF header. */
        cookie = !req->authorization && req->cookie;
        int rc = cookie ? auth_check_cookie(req->store, req->cookie, auth_cookie_name(req->https),
                                            &req->who, &req->who.csrf)
                        : auth_check(req->store, req->authorization, &req->who);
        if (rc == -2) {
            reply_error_key(res, 503, E_SERVICE_UNAVAILABLE, "db_busy",
                            "The database is busy; try again");
            return;
        }
        if (rc != 0) {
            reply_unauthorized(res);
            return;
        }
        if (cookie && http_browser_request_or_error(req, res, 0))
            return;
        if (cookie && strcmp(chosen->method, "GET") != 0 &&
            !auth_csrf_ok(req->who.csrf, req->csrf)) {
            reply_error_key(res, 403, E_FORBIDDEN, "csrf", "Missing or wrong X-CSRF-Token header");
            return;
        }
        if (req->who.role < chosen->role) {
            error_param_str(res, "role", role_name(req->who.role));
            reply_error_key(res, 403, E_FORBIDDEN, "role_forbidden", "The %s role may not do this",
                            role_name(req->who.role));
            return;
        }
    }
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
        chosen->handler(req, res);
    if (!res->done)
        reply_error_key(res, 500, E_INTERNAL, "internal_error", "An unexpected error occurred");
}
