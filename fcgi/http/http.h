/* http: struct request and struct response as handlers see them (never
 * FastCGI), the query string, the JSON body and the response envelopes
 * (docs/api.md): success {"status":"success","data":...}; application errors are
 * HTTP 200 {"status":"error","error":{code,message,retry,request_id}}, plus
 * for the errors a person can meet a stable key and its params, which the
 * panel shows in the UI's language (i18n errors.<key>). */
#ifndef KNOWHUB_HTTP_H
#define KNOWHUB_HTTP_H

#include <stddef.h>
#include <json-c/json.h>

#include "base/buf.h"
#include "service/ctx.h"
#include "base/error.h"
#include "base/jfield.h"

#define HTTP_MAX_PARAMS 4
#define HTTP_MAX_BODY (1024 * 1024) /* nginx's client_max_body_size too */
#define HTTP_MAX_RESPONSE (64 * 1024 * 1024)

struct query_param {
    char *name;  /* decoded, owned */
    char *value; /* decoded, owned */
};

struct request {
    const char *method;
    const char *path; /* as received, without the query string */
    const char *query;
    const char *body;
    size_t body_len;
    const char *request_id;
    const char *authorization;
    const char *cookie;          /* Cookie header (browser logins) */
    const char *csrf;            /* X-CSRF-Token header */
    const char *idempotency_key; /* Idempotency-Key header (creates) */
    const char *content_type;    /* Content-Type header */
    const char *origin;          /* Origin header (browsers) */
    const char *host;            /* Host header */
    const char *sec_fetch_site;  /* Sec-Fetch-Site header (browsers) */
    int https;               /* over TLS: nginx's HTTPS, or X-Forwarded-Proto: https from a proxy */
    const char *mcp_version; /* MCP-Protocol-Version header */
    const char *mcp_session; /* Mcp-Session-Id header */
    const char *accept;      /* Accept header */
    const char *accept_language;
    const char *remote_addr;   /* REMOTE_ADDR: the client as nginx saw it */
    const char *forwarded_for; /* X-Forwarded-For header: came through another proxy */
    const char *forwarded;     /* Forwarded header, likewise */
    /* The KNOWHUB_PROXY_KEY parameter matched this process's proxy key: the
     * request came through knowhub's own nginx, not from another process on
     * the socket (the key itself never reaches the request). */
    int proxy_key_ok;
    int route;                     /* index in the route table once dispatched, else -1 */
    char *params[HTTP_MAX_PARAMS]; /* decoded {name} segments of the route, owned */
    size_t n_params;
    struct query_param *qp; /* owned, parsed once */
    size_t n_qp;
    struct identity who;
    struct store *store;      /* this thread's connection */
    struct llm *llm;          /* this thread's LLM client (may be NULL) */
    struct cache *cache;      /* this thread's answer cache (may be NULL) */
    struct metrics *metrics;  /* this thread's counters (may be NULL) */
    const struct config *cfg; /* read-only, shared by every thread */
};

struct response {
    int status;
    struct buf headers; /* extra header lines, each ending in \r\n */
    struct buf body;
    const char *request_id;
    int done;                 /* a reply was written */
    int streamed;             /* head and body already went to the sink */
    int head_only;            /* HEAD: the head as for GET, never a body */
    const char *content_type; /* NULL: JSON */
    /* The answer was over body.max and was replaced by a LIMIT_EXCEEDED
     * error; a caller may lower body.max after response_init. */
    int too_large;
    /* Where a streamed body goes (main.c: the FastCGI stream); without a
     * sink, streamed output collects in body (tests). */
    int (*sink)(void *ctx, const char *data, size_t n); /* -1: the client is gone */
    void *sink_ctx;
    /* A streamed answer failed after its head went out (reply_stream_fail):
     * its connection closes without the FastCGI end, so the client sees an
     * incomplete answer. */
    int cut_off;
    /* The params of the next reply_error_key (error_param_*), owned. */
    struct json_object *error_params;
    /* A success not to keep in the answer cache: a degraded answer (a search
     * that fell back to words when the embeddings server failed). */
    int no_store;
    const char *node; /* this process's name, sent as X-KnowHub-Node to an authenticated
                         caller (NULL: not sent) */
    /* A live stream asked for (RESPONSE_LIVE_*): after its head the
     * connection is handed to the stream thread (app/live.c), which writes
     * the events of the caller's space until either side ends it. */
    int live;
    char live_session[33]; /* the MCP session of a LIVE_MCP stream ("" none) */
};

enum { RESPONSE_LIVE_NONE, RESPONSE_LIVE_MCP, RESPONSE_LIVE_EVENTS };

/* The service context of a request's caller (identity, store, LLM, metrics,
 * configuration); its strings point into req. */
void http_svc_ctx(const struct request *req, struct svc_ctx *c);

/* Zero a request; the caller then points its fields at the incoming data. */
void request_init(struct request *req);
/* Free what the request owns (params, query, identity). */
void request_release(struct request *req);

void response_init(struct response *res, const char *request_id);
void response_release(struct response *res);

/* Parse req->query into req->qp; -1 on bad percent-encoding, invalid UTF-8 or NUL. */
int http_parse_query(struct request *req);
/* The first value of query parameter name, or NULL. */
const char *http_query(const struct request *req, const char *name);

/* Optional integer query parameter in [min, max] (dflt when absent), or
 * INVALID_REQUEST written to res and -1. */
int http_query_long_or_400(const struct request *req, struct response *res, const char *name,
                           long dflt, long min, long max, long *out);
/* The boolean query parameter name ("true"/"1", "false"/"0"; absent or
 * empty: false) into *out, or a 200 INVALID_REQUEST answer and -1. */
int http_query_bool_or_400(const struct request *req, struct response *res, const char *name,
                           int *out);

/* The request body as a JSON object (caller puts it), or NULL after writing
 * INVALID_REQUEST (malformed JSON, invalid UTF-8, not an object). An empty
 * body gives an empty object. */
struct json_object *http_body_json_or_400(const struct request *req, struct response *res);

/* The getters of base/jfield.h (same arguments, after res) for handlers:
 * 0 with the value, or -1 after replying with the field's error
 * (http/fields.c). */
int jf_string_or_400(struct response *res, struct json_object *obj, const char *key, int required,
                     size_t max_chars, const char **out);
int jf_long_or_400(struct response *res, struct json_object *obj, const char *key, long min,
                   long max, long dflt, long *out);
int jf_bool_or_400(struct response *res, struct json_object *obj, const char *key, int dflt,
                   int *out);
int jf_object_or_400(struct response *res, struct json_object *obj, const char *key,
                     struct json_object **out);
int jf_string_list_or_400(struct response *res, struct json_object *obj, const char *key,
                          size_t max_items, size_t max_chars, int scalar_ok,
                          struct json_object **out);

/* 1 when the request's media type is application/json (parameters such as
 * charset allowed, case-insensitive). */
int http_content_is_json(const struct request *req);
/* 1 when a browser sent the request from another site or another origin:
 * Sec-Fetch-Site "cross-site" or "same-site" (another port of the same host
 * is same-site); without Sec-Fetch-Site, an Origin ("null" included) whose
 * host[:port] is not the Host header. Non-browser clients send neither: 0. */
int http_cross_site(const struct request *req);
/* The guard of requests a browser could forge (the login, and every request
 * authenticated by the login cookie): 403 FORBIDDEN when cross-site, else
 * 415 UNSUPPORTED_MEDIA_TYPE when a body (or, with body_required, any
 * request) is not application/json; -1 after writing the error, else 0. */
int http_browser_request_or_error(const struct request *req, struct response *res,
                                  int body_required);

/* A JSON body without the envelope (JSON-RPC); takes ownership; NULL sends
 * an empty body (e.g. 202 for a notification). */
void reply_raw(struct response *res, int http_status, struct json_object *body);

/* Success envelope around data (takes ownership; NULL gives "data":null).
 * Data holding "warnings" sets no_store. */
void reply_data(struct response *res, struct json_object *data);

/* Success envelope of one page: {items, total, limit, offset} (takes items). */
void reply_page(struct response *res, struct json_object *items, long total, long limit,
                long offset);

/* The answer of a service call: the success envelope of data (taken) when
 * rc is 0, else the error envelope of err; err is released either way. */
void reply_result(struct response *res, int rc, struct json_object *data, struct error *err);

/* A service operation that reads the request's JSON body (the shape MCP's
 * tools share): 0 with *data (the caller's), else -1 with err set. */
typedef int (*svc_body_fn)(const struct svc_ctx *c, struct json_object *body,
                           struct json_object **data, struct error *err);
/* The whole of a handler that only reads its body: parse it (400 as
 * http_body_json_or_400), run op for the request's caller, reply_result. */
void http_call_body(struct request *req, struct response *res, svc_body_fn op);
/* A service operation with no parameters but its caller. */
typedef int (*svc_fn)(const struct svc_ctx *c, struct json_object **data, struct error *err);
/* The whole of a handler of such an operation: run op, reply_result. */
void http_call(struct request *req, struct response *res, svc_fn op);
/* A service operation on the route's first {name} (an entry, a job, a trace ...). */
typedef int (*svc_id_fn)(const struct svc_ctx *c, const char *id, struct json_object **data,
                         struct error *err);
/* The whole of a handler of such an operation: run op on req->params[0], reply_result. */
void http_call_id(struct request *req, struct response *res, svc_id_fn op);
/* A service operation on the route's first {name} and the JSON body. */
typedef int (*svc_id_body_fn)(const struct svc_ctx *c, const char *id, struct json_object *body,
                              struct json_object **data, struct error *err);
/* The whole of such a handler: parse the body (400), run op on
 * req->params[0] and the body, reply_result. */
void http_call_id_body(struct request *req, struct response *res, svc_id_body_fn op);

/* Error envelope; http_status is 200 for application errors. */
void reply_error(struct response *res, int http_status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Error envelope with a stable key (docs/api.md lists them) and the
 * parameters added by error_param_* since the last error reply. */
void reply_error_key(struct response *res, int http_status, const char *code, const char *key,
                     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* A parameter of the next reply_error_key. */
void error_param_str(struct response *res, const char *name, const char *value);
void error_param_int(struct response *res, const char *name, long long value);
/* Error envelope of e: its code, message, key and params (taken), with the
 * HTTP status of its code (error_http_status). */
void reply_error_of(struct response *res, struct error *e);
/* The error envelope for a store status (NOT_FOUND, CONFLICT, 503, 500). */
void reply_store_error(struct response *res, int store_status, const char *what);
/* The answer would be over body.max (or its body failed, buf_failed): reply
 * LIMIT_EXCEEDED (key response_too_large, param max) instead; when even that
 * is over the maximum, a minimal LIMIT_EXCEEDED envelope with the request id. */
void reply_too_large(struct response *res);

/* The CGI response head (Status, Content-Type, Content-Length when >= 0,
 * X-Request-Id, Cache-Control, the extra headers, blank line) into out. */
void response_head(const struct response *res, const char *content_type, long content_length,
                   struct buf *out);

/* Start a streamed 200 response of the given type: the head goes out now and
 * every reply_stream_write after it goes straight to the client. */
void reply_stream_begin(struct response *res, const char *content_type);
/* Send n more bytes of a streamed response: 0, or -1 when the client is
 * gone (nothing more will reach it: stop making the rest). */
int reply_stream_write(struct response *res, const char *data, size_t n);
/* A streamed response failed midway (a store error after the head went
 * out): its 200 can no longer be taken back, so the answer is cut off
 * (cut_off; main.c closes the connection without the FastCGI end, and the
 * client sees an incomplete answer, never a short one that ends normally).
 * The status becomes 500 for the logs and the metrics. */
void reply_stream_fail(struct response *res);

/* Percent-decode s[0..n) into out ('+' is a space when plus_space);
 * -1 on a bad escape, invalid UTF-8 or a NUL byte. */
int url_decode(const char *s, size_t n, int plus_space, struct buf *out);

#endif
