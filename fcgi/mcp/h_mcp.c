/* h_mcp: the Model Context Protocol over streamable HTTP (POST /mcp):
 * JSON-RPC 2.0 with initialize (protocol-version negotiation, a session id),
 * ping, tools/list and tools/call, resources/subscribe and unsubscribe,
 * notifications answered 202, batches, and the spec's error objects; plain
 * JSON responses; resources, completion and prompts run from the table of
 * rpc_methods. The server's messages (resource notifications) go on the
 * session's stream, GET /mcp (app/live.c writes it); DELETE /mcp ends the
 * session. Also GET /api/tools: the same tools as OpenAI function schemas. */
#include "base/buf.h"
#include "base/config.h"
#include "http/http.h"
#include "base/jfield.h"
#include "mcp/complete.h"
#include "mcp/mcp.h"
#include "mcp/prompts.h"
#include "mcp/resources.h"
#include "base/util.h"
#include "service/ctx.h"
#include "service/review.h"
#include "service/streams.h"

#include <string.h>

#define KNOWHUB_VERSION "0.1.0"

static const char *const versions[] = {"2025-06-18", "2025-03-26", "2024-11-05"};

#define RPC_PARSE_ERROR -32700
#define RPC_INVALID_REQUEST -32600
#define RPC_METHOD_NOT_FOUND -32601
/* KnowHub's own (the server range -32000..-32099): a batch or call past its budget. */
#define RPC_BUDGET_EXCEEDED -32001

/* Messages of a batch that run; past them each request gets an error, and
 * a batch of more than MCP_MAX_BATCH is refused whole. What one POST /mcp
 * may cost besides (config: the bytes of its answer, and the time after
 * which a batch starts no further message) is in struct budget. */
#define MCP_MAX_MESSAGES 100
#define MCP_MAX_BATCH 1000
/* Room kept in the budget for each message's error, which is smaller. */
#define MCP_ERROR_ROOM 512

struct budget {
    size_t bytes, bytes_left;
    long ms, deadline_ms;
    int started;     /* messages run so far */
    int exhausted;   /* an answer did not fit: later messages are not run */
    int initialized; /* an initialize ran: the answer hands out a session id */
};

/* JSON-RPC 2.0 ids are strings, numbers without a fraction, or null: an
 * invalid one (object, array, float, boolean) is never echoed, the error
 * says null. */
static int id_valid(struct json_object *id)
{
    return !id || json_object_is_type(id, json_type_string) ||
           json_object_is_type(id, json_type_int);
}

/* Every error carries the request id (data.request_id), as REST errors do. */
static struct json_object *rpc_error(const struct request *req, struct json_object *id, int code,
                                     const char *message)
{
    struct json_object *r = json_object_new_object(), *e = json_object_new_object();
    struct json_object *data = json_object_new_object();
    json_object_object_add(e, "code", json_object_new_int(code));
    json_object_object_add(e, "message", json_object_new_string(message));
    json_object_object_add(data, "request_id",
                           json_object_new_string(req->request_id ? req->request_id : ""));
    json_object_object_add(e, "data", data);
    json_object_object_add(r, "jsonrpc", json_object_new_string("2.0"));
    json_object_object_add(r, "id", id_valid(id) ? json_object_get(id) : NULL);
    json_object_object_add(r, "error", e);
    return r;
}

/* A message past the budget: not run (or its answer dropped), said so. */
static struct json_object *budget_error(const struct request *req, struct json_object *id,
                                        const struct budget *b, int time)
{
    struct json_object *r;
    struct buf text;
    buf_init(&text, 512);
    if (time)
        buf_addf(&text, "Budget exceeded: time (%ld ms for a batch); send the rest again", b->ms);
    else
        buf_addf(&text,
                 "Budget exceeded: response size (%zu bytes for an answer); ask for less, or "
                 "send the rest again",
                 b->bytes);
    r = rpc_error(req, id, RPC_BUDGET_EXCEEDED, text.data);
    buf_release(&text);
    return r;
}

static struct json_object *rpc_result(struct json_object *id, struct json_object *result)
{
    struct json_object *r = json_object_new_object();
    json_object_object_add(r, "jsonrpc", json_object_new_string("2.0"));
    json_object_object_add(r, "id", json_object_get(id));
    json_object_object_add(r, "result", result);
    return r;
}

/* resources/subscribe and resources/unsubscribe: params.uri for the
 * caller's session (the Mcp-Session-Id initialize handed out). */
static struct json_object *subscription(struct request *req, struct json_object *id,
                                        struct json_object *params, int on)
{
    struct json_object *uri = NULL;
    struct svc_ctx c;
    struct error err;
    struct json_object *answer;
    if (!params || !json_object_object_get_ex(params, "uri", &uri) ||
        !json_object_is_type(uri, json_type_string))
        return rpc_error(req, id, RPC_INVALID_PARAMS, "uri (a string) is required");
    http_svc_ctx(req, &c);
    error_init(&err);
    if ((on ? svc_subscribe : svc_unsubscribe)(&c, req->mcp_session, json_object_get_string(uri),
                                               &err))
        answer = rpc_error(req, id, RPC_INVALID_PARAMS, err.message.data);
    else
        answer = rpc_result(id, json_object_new_object());
    error_release(&err);
    return answer;
}

/* ---- resources, completion and prompts (mcp/resources.c, complete.c, prompts.c) ---- */

static const struct {
    const char *name;
    rpc_method run;
} rpc_methods[] = {
    {"resources/list", mcp_resources_list},
    {"resources/read", mcp_resources_read},
    {"resources/templates/list", mcp_resources_templates},
    {"completion/complete", mcp_complete},
    {"prompts/list", mcp_prompts_list},
    {"prompts/get", mcp_prompts_get},
};

/* The capabilities of these methods: subscriptions and list changes are
 * told on the session's stream (GET /mcp, app/live.c). */
static void mcp_capabilities_add(struct json_object *caps)
{
    struct json_object *resources = json_object_new_object(), *prompts = json_object_new_object();
    json_object_object_add(resources, "subscribe", json_object_new_boolean(1));
    json_object_object_add(resources, "listChanged", json_object_new_boolean(1));
    json_object_object_add(prompts, "listChanged", json_object_new_boolean(0));
    json_object_object_add(caps, "resources", resources);
    json_object_object_add(caps, "prompts", prompts);
    json_object_object_add(caps, "completions", json_object_new_object());
}

/* Run a method of the table, NULL when method is none of them. Its
 * failure is a JSON-RPC error with the REST code as error.data.code. */
static struct json_object *run_method(struct request *req, struct json_object *id,
                                      const char *method, struct json_object *params)
{
    struct json_object *result = NULL, *answer = NULL, *error, *data;
    struct rpc_fail f;
    for (size_t i = 0; !answer && i < sizeof rpc_methods / sizeof *rpc_methods; i++) {
        if (strcmp(method, rpc_methods[i].name) != 0)
            continue;
        rpc_fail_init(&f);
        if (rpc_methods[i].run(req, params, &result, &f) == 0) {
            answer = rpc_result(id, result);
        } else {
            answer = rpc_error(req, id, f.code, f.err.message.data);
            if (f.err.code && json_object_object_get_ex(answer, "error", &error) &&
                json_object_object_get_ex(error, "data", &data))
                json_object_object_add(data, "code", json_object_new_string(f.err.code));
        }
        rpc_fail_release(&f);
    }
    return answer;
}

/* The server's instructions, into out; for an editor or admin with the
 * count of proposals waiting in the review queue (docs/review.md). */
static void instructions(struct request *req, struct buf *out)
{
    struct json_object *counts = NULL;
    struct svc_ctx c;
    struct error err;
    buf_adds(out, "KnowHub is a shared knowledge base. Before a goal, call "
                  "knowledge_rules and knowledge_search (with your trace_id); "
                  "save what you learn with knowledge_save; when a goal ends, "
                  "call trace_eval_prompt and trace_submit_evaluation.");
    http_svc_ctx(req, &c);
    if (c.role < ROLE_EDITOR)
        return;
    error_init(&err);
    if (svc_review_counts(&c, &counts, &err) == 0) {
        long pending = json_object_get_int64(json_object_object_get(counts, "pending"));
        long quarantined = json_object_get_int64(json_object_object_get(counts, "quarantined"));
        if (pending || quarantined)
            buf_addf(out,
                     " The review queue holds %ld pending and %ld quarantined proposals: "
                     "knowledge_review_list, then knowledge_review_decide.",
                     pending, quarantined);
    }
    json_object_put(counts);
    error_release(&err);
}

static struct json_object *initialize(struct request *req, struct json_object *params)
{
    struct json_object *r = json_object_new_object(), *caps = json_object_new_object(), *v;
    struct json_object *tools = json_object_new_object(), *info = json_object_new_object();
    const char *asked = NULL, *chosen = versions[0];
    if (params && json_object_object_get_ex(params, "protocolVersion", &v))
        asked = json_object_get_string(v);
    for (size_t i = 0; asked && i < sizeof versions / sizeof *versions; i++)
        if (strcmp(asked, versions[i]) == 0)
            chosen = versions[i]; /* the client's, when we speak it; else our latest */
    json_object_object_add(tools, "listChanged", json_object_new_boolean(0));
    json_object_object_add(caps, "tools", tools);
    mcp_capabilities_add(caps);
    json_object_object_add(info, "name", json_object_new_string("knowhub"));
    json_object_object_add(info, "version", json_object_new_string(KNOWHUB_VERSION));
    json_object_object_add(r, "protocolVersion", json_object_new_string(chosen));
    json_object_object_add(r, "capabilities", caps);
    json_object_object_add(r, "serverInfo", info);
    {
        struct buf text;
        buf_init(&text, 4096);
        instructions(req, &text);
        json_object_object_add(r, "instructions", json_object_new_string(text.data));
        buf_release(&text);
    }
    return r;
}

/* Answer one JSON-RPC message within what is left of the budget; NULL for
 * a notification (no answer). */
static struct json_object *handle_one(struct request *req, struct json_object *msg,
                                      struct budget *b)
{
    struct json_object *id = NULL, *v, *params = NULL;
    const char *method;
    int has_id;
    if (!json_object_is_type(msg, json_type_object))
        return rpc_error(req, NULL, RPC_INVALID_REQUEST, "Invalid Request");
    has_id = json_object_object_get_ex(msg, "id", &id);
    if (!json_object_object_get_ex(msg, "jsonrpc", &v) ||
        !json_object_is_type(v, json_type_string) ||
        strcmp(json_object_get_string(v), "2.0") != 0 || !id_valid(id))
        return rpc_error(req, id, RPC_INVALID_REQUEST, "Invalid Request");
    if (!json_object_object_get_ex(msg, "method", &v) ||
        !json_object_is_type(v, json_type_string)) {
        /* A response from the client (to a request we never send): nothing to say. */
        if (has_id && (json_object_object_get_ex(msg, "result", NULL) ||
                       json_object_object_get_ex(msg, "error", NULL)))
            return NULL;
        return rpc_error(req, id, RPC_INVALID_REQUEST, "Invalid Request");
    }
    method = json_object_get_string(v);
    json_object_object_get_ex(msg, "params", &params);
    if (params && !json_object_is_type(params, json_type_object))
        return has_id ? rpc_error(req, id, RPC_INVALID_PARAMS, "params must be an object") : NULL;
    if (!has_id)
        return NULL; /* notifications (initialized, cancelled, ...) are accepted */
    /* The first message always runs; later ones only within the budget. */
    if (b->exhausted)
        return budget_error(req, id, b, 0);
    if (b->started++ > 0 && monotonic_ms() > b->deadline_ms)
        return budget_error(req, id, b, 1);
    if (strcmp(method, "initialize") == 0) {
        b->initialized = 1;
        return rpc_result(id, initialize(req, params));
    }
    if (strcmp(method, "resources/subscribe") == 0)
        return subscription(req, id, params, 1);
    if (strcmp(method, "resources/unsubscribe") == 0)
        return subscription(req, id, params, 0);
    if (strcmp(method, "ping") == 0)
        return rpc_result(id, json_object_new_object());
    if (strcmp(method, "tools/list") == 0) {
        struct json_object *r = json_object_new_object();
        json_object_object_add(r, "tools", mcp_tools_list());
        return rpc_result(id, r);
    }
    if (strcmp(method, "tools/call") == 0) {
        struct json_object *name = NULL, *args = NULL, *result;
        int too_large;
        if (!params || !json_object_object_get_ex(params, "name", &name) ||
            !json_object_is_type(name, json_type_string))
            return rpc_error(req, id, RPC_INVALID_PARAMS, "tools/call needs a tool name");
        json_object_object_get_ex(params, "arguments", &args);
        result = mcp_tools_call(req, json_object_get_string(name), args, b->bytes_left, &too_large);
        if (too_large) {
            b->exhausted = 1;
            return budget_error(req, id, b, 0);
        }
        if (!result)
            return rpc_error(req, id, RPC_INVALID_PARAMS, "Unknown tool");
        return rpc_result(id, result);
    }
    if ((v = run_method(req, id, method, params)))
        return v;
    return rpc_error(req, id, RPC_METHOD_NOT_FOUND, "Method not found");
}

/* Answer one message and charge its answer to the budget: an answer that
 * does not fit (a tool list, an error) becomes a budget error, which is
 * small and always fits the room kept for it. */
static struct json_object *answer_within(struct request *req, struct json_object *msg,
                                         struct budget *b)
{
    struct json_object *one = handle_one(req, msg, b), *id = NULL;
    size_t len;
    if (!one)
        return NULL;
    len = strlen(json_text(one)) + 1; /* and the comma */
    if (len > b->bytes_left) {
        json_object_object_get_ex(one, "id", &id);
        id = json_object_get(id);
        json_object_put(one);
        one = budget_error(req, id, b, 0);
        b->exhausted = 1;
        json_object_put(id);
        len = strlen(json_text(one)) + 1;
    }
    b->bytes_left = len < b->bytes_left ? b->bytes_left - len : 0;
    return one;
}

void h_mcp(struct request *req, struct response *res)
{
    struct json_object *msg, *answer;
    struct budget b = {0};
    struct buf dup;
    const char *why;
    if (req->mcp_version) {
        /* After initialize a client names its version; one we do not speak is a 400. */
        int known = 0;
        for (size_t i = 0; i < sizeof versions / sizeof *versions; i++)
            known |= strcmp(req->mcp_version, versions[i]) == 0;
        if (!known) {
            reply_raw(
                res, 400,
                rpc_error(req, NULL, RPC_INVALID_REQUEST, "Unsupported MCP-Protocol-Version"));
            return;
        }
    }
    buf_init(&dup, 4096);
    if (json_parse_whole_ex(req->body, req->body_len, &msg, &why, &dup)) {
        if (dup.len || strcmp(why, "duplicate key") == 0) {
            /* Well-formed, but which of the values was meant is unknown. */
            struct buf text;
            buf_init(&text, 8192);
            buf_addf(&text, "Invalid Request: duplicate key '%s'", dup.data);
            reply_raw(res, 200, rpc_error(req, NULL, RPC_INVALID_REQUEST, text.data));
            buf_release(&text);
        } else {
            reply_raw(res, 200, rpc_error(req, NULL, RPC_PARSE_ERROR, "Parse error"));
        }
        buf_release(&dup);
        return;
    }
    buf_release(&dup);
    if (!msg) { /* valid JSON (null), but not a request: -32600 as for 42 or "x" */
        reply_raw(res, 200, rpc_error(req, NULL, RPC_INVALID_REQUEST, "Invalid Request"));
        return;
    }
    /* Room is kept for the errors of the messages past the budget (each
     * under 512 bytes), so the answer stays within the budget. */
    b.ms = req->cfg ? req->cfg->mcp_budget_ms : 10000;
    b.bytes = req->cfg ? req->cfg->mcp_budget_bytes : 4 * 1024 * 1024;
    b.deadline_ms = monotonic_ms() + b.ms;
    b.bytes_left = b.bytes;
    if (json_object_is_type(msg, json_type_array)) {
        size_t n = json_object_array_length(msg);
        if (n == 0) {
            reply_raw(res, 200, rpc_error(req, NULL, RPC_INVALID_REQUEST, "Invalid Request"));
        } else if (n > MCP_MAX_BATCH) {
            reply_raw(res, 200,
                      rpc_error(req, NULL, RPC_INVALID_REQUEST,
                                "Batch too large (at most 1000 messages, of which 100 run)"));
        } else {
            b.bytes_left -= MCP_ERROR_ROOM * (n < MCP_MAX_MESSAGES ? n : MCP_MAX_MESSAGES);
            answer = json_object_new_array();
            for (size_t i = 0; i < n; i++) {
                struct json_object *item = json_object_array_get_idx(msg, i), *one = NULL, *bid;
                if (i < MCP_MAX_MESSAGES)
                    b.bytes_left += MCP_ERROR_ROOM; /* this one's room is its own now */
                if (i < MCP_MAX_MESSAGES)
                    one = answer_within(req, item, &b);
                else if (json_object_is_type(item, json_type_object) &&
                         json_object_object_get_ex(item, "method", NULL) &&
                         json_object_object_get_ex(item, "id", &bid))
                    /* Past the limit a request is not run, but still answered. */
                    one = rpc_error(req, bid, RPC_INVALID_REQUEST,
                                    "Batch too large (at most 100 messages)");
                if (one)
                    json_object_array_add(answer, one);
            }
            if (json_object_array_length(answer) == 0) {
                json_object_put(answer);
                reply_raw(res, 202, NULL);
            } else {
                reply_raw(res, 200, answer);
            }
        }
    } else {
        answer = answer_within(req, msg, &b);
        if (answer)
            reply_raw(res, 200, answer);
        else
            reply_raw(res, 202, NULL);
    }
    json_object_put(msg);
    if (b.initialized) {
        /* A new session: its subscriptions and its stream go by this id. */
        char session[STREAMS_SESSION_LEN + 1];
        streams_new_session(session);
        buf_addf(&res->headers, "Mcp-Session-Id: %s\r\n", session);
    }
}

/* Whether the client takes Server-Sent Events (its Accept names them). */
static int accepts_events(const struct request *req)
{
    return req->accept && strstr(req->accept, "text/event-stream") != NULL;
}

void h_mcp_stream(struct request *req, struct response *res)
{
    if (!accepts_events(req)) {
        /* The spec's answer to a GET that wants no stream. */
        buf_adds(&res->headers, "Allow: POST, GET, HEAD, DELETE\r\n");
        reply_error(res, 405, E_METHOD_NOT_ALLOWED,
                    "GET /mcp is the session's event stream: send Accept: text/event-stream");
        return;
    }
    if (req->mcp_session && !streams_session_valid(req->mcp_session)) {
        reply_raw(res, 404, rpc_error(req, NULL, RPC_INVALID_REQUEST, "Session not found"));
        return;
    }
    res->status = 200;
    res->done = 1;
    res->live = RESPONSE_LIVE_MCP;
    if (req->mcp_session)
        memcpy(res->live_session, req->mcp_session, STREAMS_SESSION_LEN + 1);
}

void h_mcp_end(struct request *req, struct response *res)
{
    struct svc_ctx c;
    struct error err;
    if (!req->mcp_session || !streams_session_valid(req->mcp_session)) {
        reply_raw(res, 404, rpc_error(req, NULL, RPC_INVALID_REQUEST, "Session not found"));
        return;
    }
    http_svc_ctx(req, &c);
    error_init(&err);
    if (svc_session_end(&c, req->mcp_session, &err))
        reply_error_of(res, &err);
    else
        reply_raw(res, 204, NULL);
    error_release(&err);
}

void h_tools(struct request *req, struct response *res)
{
    struct json_object *data = json_object_new_object();
    (void)req;
    json_object_object_add(data, "tools", mcp_tools_openai());
    reply_data(res, data);
}
