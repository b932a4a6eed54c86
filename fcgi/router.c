/* router: the route table and dispatch (404, 405 + Allow, 401, 403). */
#include "router.h"
#include "auth.h"
#include "handlers.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

static const struct route routes[] = {
    {"GET", "/api/health", ROLE_NONE, h_health},
    {"GET", "/api/auth/me", ROLE_READER, h_auth_me},
    {"POST", "/api/auth/login", ROLE_NONE, h_auth_login},
    {"POST", "/api/auth/logout", ROLE_READER, h_auth_logout},
    {"GET", "/api/knowledge", ROLE_READER, h_knowledge_list},
    {"POST", "/api/knowledge", ROLE_AGENT, h_knowledge_create},
    {"POST", "/api/knowledge/batch_update", ROLE_AGENT, h_knowledge_batch_update},
    {"POST", "/api/knowledge/limits", ROLE_READER, h_files_limits},
    {"POST", "/api/knowledge/list", ROLE_READER, h_files_list},
    {"POST", "/api/knowledge/read", ROLE_READER, h_files_read},
    {"POST", "/api/knowledge/write", ROLE_AGENT, h_files_write},
    {"POST", "/api/knowledge/rename", ROLE_AGENT, h_files_rename},
    {"POST", "/api/knowledge/delete", ROLE_AGENT, h_files_delete},
    {"POST", "/api/knowledge/trash", ROLE_READER, h_files_trash},
    {"POST", "/api/knowledge/preview", ROLE_READER, h_files_preview},
    {"GET", "/api/knowledge/rules", ROLE_READER, h_context_rules},
    {"GET", "/api/knowledge/export", ROLE_READER, h_knowledge_export},
    {"POST", "/api/knowledge/context", ROLE_READER, h_context_question},
    {"POST", "/api/knowledge/search", ROLE_READER, h_search_files},
    {"POST", "/api/knowledge/distill-experience", ROLE_AGENT, h_distill_experience},
    {"POST", "/api/knowledge/slim", ROLE_AGENT, h_knowledge_slim},
    {"GET", "/api/knowledge/search", ROLE_READER, h_search_entries},
    {"GET", "/api/knowledge/{id}", ROLE_READER, h_knowledge_get},
    {"PUT", "/api/knowledge/{id}", ROLE_AGENT, h_knowledge_update},
    {"DELETE", "/api/knowledge/{id}", ROLE_AGENT, h_knowledge_delete},
    {"GET", "/api/knowledge/{id}/revisions", ROLE_READER, h_knowledge_revisions},
    {"GET", "/api/knowledge/{id}/cases", ROLE_READER, h_knowledge_cases},
    {"POST", "/api/knowledge/{id}/revert", ROLE_AGENT, h_knowledge_revert},
    {"POST", "/api/traces", ROLE_AGENT, h_traces_create},
    {"GET", "/api/traces", ROLE_READER, h_traces_list},
    {"GET", "/api/traces/{trace_id}", ROLE_READER, h_traces_get},
    {"GET", "/api/traces/{trace_id}/knowledge_log", ROLE_READER, h_traces_log},
    {"POST", "/api/traces/{trace_id}/knowledge_log", ROLE_AGENT, h_traces_inject},
    {"GET", "/api/traces/{trace_id}/knowledge_log/pending", ROLE_READER, h_traces_pending},
    {"GET", "/api/traces/{trace_id}/eval_prompt", ROLE_READER, h_traces_eval_prompt},
    {"POST", "/api/traces/{trace_id}/evaluations", ROLE_AGENT, h_traces_evaluate},
    {"GET", "/api/sessions", ROLE_READER, h_sessions_list},
    {"POST", "/api/sessions", ROLE_AGENT, h_sessions_put},
    {"GET", "/api/sessions/{id}", ROLE_READER, h_sessions_get},
    {"DELETE", "/api/sessions/{id}", ROLE_AGENT, h_sessions_delete},
    {"DELETE", "/api/sessions/{id}/tables/{table_id}", ROLE_AGENT, h_sessions_delete_table},
    {"GET", "/api/jobs", ROLE_READER, h_jobs_list},
    {"GET", "/api/jobs/{id}", ROLE_READER, h_jobs_get},
    {"GET", "/api/llm/usage", ROLE_READER, h_llm_usage},
    {"GET", "/api/tools", ROLE_READER, h_tools},
    {"POST", "/mcp", ROLE_READER, h_mcp},
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
    reply_error(res, 401, E_UNAUTHORIZED, "A valid token is required (Authorization: Bearer ...)");
}

void router_dispatch(struct request *req, struct response *res)
{
    const struct route *chosen = NULL;
    int best = -1;
    struct buf allow;

    for (size_t i = 0; i < ROUTE_COUNT; i++) {
        int m = match(routes[i].pattern, req->path, NULL);
        if (m > best)
            best = m;
    }
    if (best < 0) {
        reply_error(res, 404, E_NOT_FOUND, "No such endpoint");
        return;
    }
    buf_init(&allow, 256);
    for (size_t i = 0; i < ROUTE_COUNT; i++) {
        if (match(routes[i].pattern, req->path, NULL) != best)
            continue;
        if (strcmp(routes[i].method, req->method) == 0 && !chosen)
            chosen = &routes[i];
        if (!strstr(allow.data, routes[i].method))
            buf_addf(&allow, "%s%s", allow.len ? ", " : "", routes[i].method);
    }
    if (!chosen) {
        buf_addf(&res->headers, "Allow: %s\r\n", allow.data);
        reply_error(res, 405, E_METHOD_NOT_ALLOWED, "Method %s is not allowed here (allowed: %s)",
                    req->method, allow.data);
        buf_release(&allow);
        return;
    }
    buf_release(&allow);
    /* -1 when a {name} segment is a bad %-escape or not UTF-8: then the
     * handler must not run with its params missing (answered below). */
    int params_bad = match(chosen->pattern, req->path, req) < 0;

    if (chosen->role != ROLE_NONE) {
        /* A Bearer token, or else the browser's login cookie; a cookie alone
         * never changes anything without the matching CSRF header. */
        int cookie = !req->authorization && req->cookie;
        int rc = cookie ? auth_check_cookie(req->store, req->cookie, &req->who, &req->who.csrf)
                        : auth_check(req->store, req->authorization, &req->who);
        if (rc == -2) {
            reply_error(res, 503, E_SERVICE_UNAVAILABLE, "The database is busy; try again");
            return;
        }
        if (rc != 0) {
            reply_unauthorized(res);
            return;
        }
        if (cookie && strcmp(req->method, "GET") != 0 && strcmp(req->method, "HEAD") != 0 &&
            !auth_csrf_ok(req->who.csrf, req->csrf)) {
            reply_error(res, 403, E_FORBIDDEN, "Missing or wrong X-CSRF-Token header");
            return;
        }
        if (req->who.role < chosen->role) {
            reply_error(res, 403, E_FORBIDDEN, "The %s role may not do this",
                        role_name(req->who.role));
            return;
        }
    }
    if (params_bad) {
        reply_error(res, 200, E_INVALID_REQUEST,
                    "Malformed path (bad %%-escape, invalid UTF-8 or NUL)");
        return;
    }
    if (http_parse_query(req)) {
        reply_error(res, 200, E_INVALID_REQUEST,
                    "Malformed query string (bad %%-escape or invalid UTF-8)");
        return;
    }
    chosen->handler(req, res);
    if (!res->done)
        reply_error(res, 500, E_INTERNAL, "An unexpected error occurred");
}
