/* http: request/response plumbing, query parsing, JSON bodies, envelopes. */
#include "http/http.h"
#include "base/jfield.h"
#include "service/auth.h"
#include "store/store.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void http_svc_ctx(const struct request *req, struct svc_ctx *c)
{
    c->space = req->who.space;
    c->actor = req->who.actor;
    c->token_id = req->who.token_id;
    c->role = req->who.role;
    c->request_id = req->request_id;
    c->accept_language = req->accept_language;
    c->st = req->store;
    c->llm = req->llm;
    c->metrics = req->metrics;
    c->cfg = req->cfg;
    c->idempotency_key = req->idempotency_key;
}

void request_init(struct request *req)
{
    memset(req, 0, sizeof *req);
    req->who.role = ROLE_NONE;
    req->route = -1;
    req->query = "";
    req->body = "";
}

void request_release(struct request *req)
{
    for (size_t i = 0; i < req->n_params; i++)
        free(req->params[i]);
    for (size_t i = 0; i < req->n_qp; i++) {
        free(req->qp[i].name);
        free(req->qp[i].value);
    }
    free(req->qp);
    free(req->who.space);
    free(req->who.token_id);
    free(req->who.actor);
    free(req->who.csrf);
    request_init(req);
}

void response_init(struct response *res, const char *request_id)
{
    memset(res, 0, sizeof *res);
    res->status = 200;
    buf_init(&res->headers, 8192);
    buf_init(&res->body, HTTP_MAX_RESPONSE);
    res->request_id = request_id;
}

static const char *status_text(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 202:
        return "Accepted";
    case 204:
        return "No Content";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 413:
        return "Payload Too Large";
    case 429:
        return "Too Many Requests";
    case 503:
        return "Service Unavailable";
    default:
        return "Internal Server Error";
    }
}

void response_head(const struct response *res, const char *content_type, long content_length,
                   struct buf *out)
{
    buf_addf(out, "Status: %d %s\r\nContent-Type: %s\r\n", res->status, status_text(res->status),
             content_type);
    if (content_length >= 0)
        buf_addf(out, "Content-Length: %ld\r\n", content_length);
    if (res->node)
        buf_addf(out, "X-KnowHub-Node: %s\r\n", res->node);
    buf_addf(out, "X-Request-Id: %s\r\nCache-Control: no-store\r\n%s\r\n",
             res->request_id ? res->request_id : "", res->headers.data);
}

void reply_stream_begin(struct response *res, const char *content_type)
{
    res->status = 200;
    res->done = 1;
    buf_reset(&res->body);
    if (res->sink) {
        struct buf head;
        buf_init(&head, 16384);
        response_head(res, content_type, -1, &head);
        (void)res->sink(res->sink_ctx, head.data,
                        head.len); /* a gone client: the next write says */
        buf_release(&head);
        res->streamed = 1;
    }
}

int reply_stream_write(struct response *res, const char *data, size_t n)
{
    if (res->head_only)
        return 0;
    if (res->streamed)
        return res->sink(res->sink_ctx, data, n);
    buf_add(&res->body, data, n);
    return 0;
}

void reply_stream_fail(struct response *res)
{
    res->status = 500;
    res->cut_off = 1;
}

void response_release(struct response *res)
{
    buf_release(&res->headers);
    buf_release(&res->body);
    json_object_put(res->error_params);
    res->error_params = NULL;
}

static void param_add(struct json_object **params, const char *name, struct json_object *v)
{
    if (!*params)
        *params = json_object_new_object();
    json_object_object_add(*params, name, v);
}

void error_param_str(struct response *res, const char *name, const char *value)
{
    param_add(&res->error_params, name, json_object_new_string(value ? value : ""));
}

void error_param_int(struct response *res, const char *name, long long value)
{
    param_add(&res->error_params, name, json_object_new_int64(value));
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int url_decode(const char *s, size_t n, int plus_space, struct buf *out)
{
    buf_reset(out);
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '%') {
            int hi, lo;
            if (i + 2 >= n)
                return -1;
            hi = hexval(s[i + 1]);
            lo = hexval(s[i + 2]);
            if (hi < 0 || lo < 0)
                return -1;
            c = (char)(hi * 16 + lo);
            i += 2;
        } else if (c == '+' && plus_space) {
            c = ' ';
        }
        if (buf_addch(out, c))
            return -1;
    }
    return utf8_valid(out->data, out->len) ? 0 : -1;
}

int http_parse_query(struct request *req)
{
    const char *q = req->query ? req->query : "";
    struct buf name, value;
    size_t cap = 0;
    int rc = 0;
    buf_init(&name, 4096);
    buf_init(&value, 64 * 1024);
    while (*q) {
        const char *amp = strchr(q, '&');
        size_t len = amp ? (size_t)(amp - q) : strlen(q);
        const char *eq = memchr(q, '=', len);
        size_t nlen = eq ? (size_t)(eq - q) : len;
        if (len && nlen) {
            if (url_decode(q, nlen, 1, &name) ||
                url_decode(eq ? eq + 1 : q + len, eq ? len - nlen - 1 : 0, 1, &value)) {
                rc = -1;
                break;
            }
            if (req->n_qp == 256) {
                rc = -1;
                break;
            }
            if (req->n_qp == cap) {
                cap = cap ? cap * 2 : 8;
                req->qp = xrealloc(req->qp, cap * sizeof *req->qp);
            }
            req->qp[req->n_qp].name = xstrndup(name.data, name.len);
            req->qp[req->n_qp].value = xstrndup(value.data, value.len);
            req->n_qp++;
        }
        q += len + (amp ? 1 : 0);
    }
    buf_release(&name);
    buf_release(&value);
    return rc;
}

const char *http_query(const struct request *req, const char *name)
{
    for (size_t i = 0; i < req->n_qp; i++)
        if (strcmp(req->qp[i].name, name) == 0)
            return req->qp[i].value;
    return NULL;
}

int http_query_long_or_400(const struct request *req, struct response *res, const char *name,
                           long dflt, long min, long max, long *out)
{
    const char *v = http_query(req, name);
    if (!v || !*v) {
        *out = dflt;
        return 0;
    }
    if (parse_long(v, min, max, out)) {
        error_param_str(res, "field", name);
        error_param_int(res, "min", min);
        error_param_int(res, "max", max);
        reply_error_key(res, 200, E_INVALID_REQUEST, "field_not_integer",
                        "'%s' must be an integer between %ld and %ld", name, min, max);
        return -1;
    }
    return 0;
}

int http_query_bool_or_400(const struct request *req, struct response *res, const char *name,
                           int *out)
{
    const char *v = http_query(req, name);
    if (!v || !*v || strcmp(v, "false") == 0 || strcmp(v, "0") == 0) {
        *out = 0;
        return 0;
    }
    if (strcmp(v, "true") == 0 || strcmp(v, "1") == 0) {
        *out = 1;
        return 0;
    }
    error_param_str(res, "field", name);
    reply_error_key(res, 200, E_INVALID_REQUEST, "field_not_boolean", "'%s' must be true or false",
                    name);
    return -1;
}

struct json_object *http_body_json_or_400(const struct request *req, struct response *res)
{
    struct json_object *obj;
    struct buf dup;
    const char *why;
    size_t i = 0;

    /* strchr() also finds the terminator, so a NUL byte must not count as blank. */
    while (i < req->body_len && req->body[i] && strchr(" \t\r\n", req->body[i]))
        i++;
    if (i == req->body_len)
        return json_object_new_object();
    if (!utf8_valid(req->body, req->body_len)) {
        reply_error_key(res, 200, E_INVALID_REQUEST, "body_not_utf8",
                        "Request body is not valid UTF-8");
        return NULL;
    }
    buf_init(&dup, 4096);
    if (json_parse_whole_ex(req->body, req->body_len, &obj, &why, &dup)) {
        if (dup.len || strcmp(why, "duplicate key") == 0) {
            error_param_str(res, "field", dup.data);
            reply_error_key(res, 200, E_INVALID_REQUEST, "body_duplicate_key",
                            "Duplicate key '%s' in the JSON body", dup.data);
        } else {
            error_param_str(res, "reason", why);
            reply_error_key(res, 200, E_INVALID_REQUEST, "body_malformed",
                            "Malformed JSON body: %s", why);
        }
        buf_release(&dup);
        return NULL;
    }
    buf_release(&dup);
    if (!json_object_is_type(obj, json_type_object)) {
        json_object_put(obj);
        reply_error_key(res, 200, E_INVALID_REQUEST, "body_not_object",
                        "Request body must be a JSON object");
        return NULL;
    }
    return obj;
}

int http_content_is_json(const struct request *req)
{
    static const char json[] = "application/json";
    const char *t = req->content_type;
    size_t n;
    if (!t)
        return 0;
    t += strspn(t, " \t");
    n = strcspn(t, ";");
    while (n > 0 && (t[n - 1] == ' ' || t[n - 1] == '\t'))
        n--;
    return n == sizeof json - 1 && strncasecmp(t, json, n) == 0;
}

int http_cross_site(const struct request *req)
{
    const char *o = req->origin, *sep;
    size_t n;
    if (req->sec_fetch_site && *req->sec_fetch_site)
        /* The browser's own verdict; "same-origin" and "none" (typed URL,
         * bookmark) are the panel's requests. */
        return strcasecmp(req->sec_fetch_site, "same-origin") != 0 &&
               strcasecmp(req->sec_fetch_site, "none") != 0;
    if (!o || !*o)
        return 0;
    /* "scheme://host[:port]" against Host; the scheme is not compared, as
     * a TLS proxy in front may not say it terminated TLS. */
    if (!(sep = strstr(o, "://")) || !req->host)
        return 1;
    o = sep + 3;
    n = strlen(o);
    return n == 0 || n != strlen(req->host) || strncasecmp(o, req->host, n) != 0;
}

int http_browser_request_or_error(const struct request *req, struct response *res,
                                  int body_required)
{
    if (http_cross_site(req)) {
        reply_error_key(res, 403, E_FORBIDDEN, "cross_site",
                        "Cross-site request refused (Origin or Sec-Fetch-Site is not this site)");
        return -1;
    }
    if ((body_required || req->body_len > 0) && !http_content_is_json(req)) {
        reply_error_key(res, 415, E_UNSUPPORTED_MEDIA_TYPE, "body_not_json",
                        "The body must be sent as Content-Type: application/json");
        return -1;
    }
    return 0;
}

void reply_too_large(struct response *res)
{
    /* Asked for more than an answer may hold: the caller's to narrow, not a
     * server fault; the error envelope itself is small. */
    buf_reset(&res->body);
    if (res->too_large) {
        /* Even the error is over a tiny maximum: the error goes out anyway. */
        res->body.max = HTTP_MAX_RESPONSE;
        buf_adds(&res->body, "{\"status\":\"error\",\"error\":{\"code\":\"" E_LIMIT_EXCEEDED
                             "\",\"message\":\"Response too large\",\"retry\":false,"
                             "\"request_id\":\"");
        buf_adds(&res->body, res->request_id ? res->request_id : "");
        buf_adds(&res->body, "\"}}");
        res->done = 1;
        return;
    }
    res->too_large = 1;
    error_param_int(res, "max", (long long)res->body.max);
    reply_error_key(res, 200, E_LIMIT_EXCEEDED, "response_too_large",
                    "The answer would be over %zu bytes: ask for less (a smaller limit)",
                    res->body.max);
}

static void reply_json(struct response *res, struct json_object *envelope)
{
    buf_reset(&res->body);
    if (buf_adds(&res->body, json_text(envelope))) {
        json_object_put(envelope);
        reply_too_large(res);
        return;
    }
    json_object_put(envelope);
    res->done = 1;
}

void reply_raw(struct response *res, int http_status, struct json_object *body)
{
    res->status = http_status;
    if (body) {
        reply_json(res, body);
    } else {
        buf_reset(&res->body);
        res->done = 1;
    }
}

void reply_data(struct response *res, struct json_object *data)
{
    struct json_object *env = json_object_new_object();
    /* Data with "warnings" is a degraded answer (a search that fell back to
     * words): answered, never kept in the answer cache. */
    if (json_object_is_type(data, json_type_object) &&
        json_object_object_get_ex(data, "warnings", NULL))
        res->no_store = 1;
    json_object_object_add(env, "status", json_object_new_string("success"));
    json_object_object_add(env, "data", data);
    res->status = 200;
    reply_json(res, env);
}

void reply_page(struct response *res, struct json_object *items, long total, long limit,
                long offset)
{
    struct json_object *data = json_object_new_object();
    json_object_object_add(data, "items", items);
    json_object_object_add(data, "total", json_object_new_int64(total));
    json_object_object_add(data, "limit", json_object_new_int64(limit));
    json_object_object_add(data, "offset", json_object_new_int64(offset));
    reply_data(res, data);
}

/* The error envelope of e (error_json and the request id). */
static void reply_error_envelope(struct response *res, int http_status, const struct error *e)
{
    struct json_object *env = json_object_new_object(), *err = error_json(e);
    json_object_object_add(err, "request_id",
                           json_object_new_string(res->request_id ? res->request_id : ""));
    json_object_object_add(env, "status", json_object_new_string("error"));
    json_object_object_add(env, "error", err);
    res->status = http_status;
    reply_json(res, env);
}

static void reply_error_va(struct response *res, int http_status, const char *code, const char *key,
                           const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

static void reply_error_va(struct response *res, int http_status, const char *code, const char *key,
                           const char *fmt, va_list ap)
{
    struct error e;
    struct buf msg;
    buf_init(&msg, 4096);
    if (buf_vaddf(&msg, fmt, ap)) {
        buf_reset(&msg);
        buf_adds(&msg, code);
    }
    error_init(&e);
    error_text(&e, code, key, msg.data);
    e.params = res->error_params;
    res->error_params = NULL;
    reply_error_envelope(res, http_status, &e);
    error_release(&e);
    buf_release(&msg);
}

void reply_error(struct response *res, int http_status, const char *code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    reply_error_va(res, http_status, code, NULL, fmt, ap);
    va_end(ap);
}

void reply_error_key(struct response *res, int http_status, const char *code, const char *key,
                     const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    reply_error_va(res, http_status, code, key, fmt, ap);
    va_end(ap);
}

void reply_error_of(struct response *res, struct error *e)
{
    struct json_object *wait;
    json_object_put(res->error_params);
    res->error_params = NULL;
    if (e->code && strcmp(e->code, E_RATE_LIMITED) == 0 &&
        json_object_object_get_ex(e->params, "retry_after", &wait))
        buf_addf(&res->headers, "Retry-After: %d\r\n", json_object_get_int(wait));
    reply_error_envelope(res, error_http_status(e->code ? e->code : E_INTERNAL), e);
}

void reply_result(struct response *res, int rc, struct json_object *data, struct error *err)
{
    if (rc) {
        json_object_put(data);
        reply_error_of(res, err);
    } else {
        reply_data(res, data);
    }
    error_release(err);
}

/* The body handlers of both shapes: op_id when the operation takes {id}. */
static void call_body(struct request *req, struct response *res, svc_body_fn op,
                      svc_id_body_fn op_id)
{
    struct json_object *body = http_body_json_or_400(req, res), *data = NULL;
    struct svc_ctx c;
    struct error err;
    int rc;
    if (!body)
        return;
    http_svc_ctx(req, &c);
    error_init(&err);
    rc = op_id ? op_id(&c, req->params[0], body, &data, &err) : op(&c, body, &data, &err);
    reply_result(res, rc, data, &err);
    json_object_put(body);
}

void http_call_body(struct request *req, struct response *res, svc_body_fn op)
{
    call_body(req, res, op, NULL);
}

void http_call_id_body(struct request *req, struct response *res, svc_id_body_fn op)
{
    call_body(req, res, NULL, op);
}

void http_call(struct request *req, struct response *res, svc_fn op)
{
    struct json_object *data = NULL;
    struct svc_ctx c;
    struct error err;
    int rc;
    http_svc_ctx(req, &c);
    error_init(&err);
    rc = op(&c, &data, &err);
    reply_result(res, rc, data, &err);
}

void http_call_id(struct request *req, struct response *res, svc_id_fn op)
{
    struct json_object *data = NULL;
    struct svc_ctx c;
    struct error err;
    int rc;
    http_svc_ctx(req, &c);
    error_init(&err);
    rc = op(&c, req->params[0], &data, &err);
    reply_result(res, rc, data, &err);
}

void reply_store_error(struct response *res, int store_status, const char *what)
{
    struct error e;
    error_init(&e);
    store_status_error(store_status, what, &e);
    reply_error_of(res, &e);
    error_release(&e);
}
