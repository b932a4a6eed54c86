/* h_mcp: the Model Context Protocol over streamable HTTP (POST /mcp):
 * JSON-RPC 2.0 with initialize (protocol-version negotiation), ping,
 * tools/list and tools/call, notifications answered 202, batches, and the
 * spec's error objects; plain JSON responses (no server push). Also
 * GET /api/tools: the same tools as OpenAI function schemas. */
#include "handlers.h"
#include "jfield.h"
#include "mcp.h"

#include <string.h>

#define KNOWHUB_VERSION "0.1.0"

static const char *const versions[] = {"2025-06-18", "2025-03-26", "2024-11-05"};

#define RPC_PARSE_ERROR -32700
#define RPC_INVALID_REQUEST -32600
#define RPC_METHOD_NOT_FOUND -32601
#define RPC_INVALID_PARAMS -32602

static struct json_object *rpc_error(struct json_object *id, int code, const char *message)
{
    struct json_object *r = json_object_new_object(), *e = json_object_new_object();
    json_object_object_add(e, "code", json_object_new_int(code));
    json_object_object_add(e, "message", json_object_new_string(message));
    json_object_object_add(r, "jsonrpc", json_object_new_string("2.0"));
    json_object_object_add(r, "id", json_object_get(id));
    json_object_object_add(r, "error", e);
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

static struct json_object *initialize(struct json_object *params)
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
    json_object_object_add(info, "name", json_object_new_string("knowhub"));
    json_object_object_add(info, "version", json_object_new_string(KNOWHUB_VERSION));
    json_object_object_add(r, "protocolVersion", json_object_new_string(chosen));
    json_object_object_add(r, "capabilities", caps);
    json_object_object_add(r, "serverInfo", info);
    json_object_object_add(
        r, "instructions",
        json_object_new_string("KnowHub is a shared knowledge base. Before a goal, call "
                               "knowledge_rules and knowledge_search (with your trace_id); "
                               "save what you learn with knowledge_save; when a goal ends, "
                               "call trace_eval_prompt and trace_submit_evaluation."));
    return r;
}

/* Answer one JSON-RPC message; NULL for a notification (no answer). */
static struct json_object *handle_one(struct request *req, struct json_object *msg)
{
    struct json_object *id = NULL, *v, *params = NULL;
    const char *method;
    int has_id;
    if (!json_object_is_type(msg, json_type_object))
        return rpc_error(NULL, RPC_INVALID_REQUEST, "Invalid Request");
    has_id = json_object_object_get_ex(msg, "id", &id);
    if (!json_object_object_get_ex(msg, "jsonrpc", &v) ||
        !json_object_is_type(v, json_type_string) ||
        strcmp(json_object_get_string(v), "2.0") != 0 ||
        (has_id && id && !json_object_is_type(id, json_type_string) &&
         !json_object_is_type(id, json_type_int)))
        return rpc_error(has_id ? id : NULL, RPC_INVALID_REQUEST, "Invalid Request");
    if (!json_object_object_get_ex(msg, "method", &v) ||
        !json_object_is_type(v, json_type_string)) {
        /* A response from the client (to a request we never send): nothing to say. */
        if (has_id && (json_object_object_get_ex(msg, "result", NULL) ||
                       json_object_object_get_ex(msg, "error", NULL)))
            return NULL;
        return rpc_error(has_id ? id : NULL, RPC_INVALID_REQUEST, "Invalid Request");
    }
    method = json_object_get_string(v);
    json_object_object_get_ex(msg, "params", &params);
    if (params && !json_object_is_type(params, json_type_object))
        return has_id ? rpc_error(id, RPC_INVALID_PARAMS, "params must be an object") : NULL;
    if (!has_id)
        return NULL; /* notifications (initialized, cancelled, ...) are accepted */
    if (strcmp(method, "initialize") == 0)
        return rpc_result(id, initialize(params));
    if (strcmp(method, "ping") == 0)
        return rpc_result(id, json_object_new_object());
    if (strcmp(method, "tools/list") == 0) {
        struct json_object *r = json_object_new_object();
        json_object_object_add(r, "tools", mcp_tools_list());
        return rpc_result(id, r);
    }
    if (strcmp(method, "tools/call") == 0) {
        struct json_object *name = NULL, *args = NULL, *result;
        if (!params || !json_object_object_get_ex(params, "name", &name) ||
            !json_object_is_type(name, json_type_string))
            return rpc_error(id, RPC_INVALID_PARAMS, "tools/call needs a tool name");
        json_object_object_get_ex(params, "arguments", &args);
        result = mcp_tools_call(req, json_object_get_string(name), args);
        if (!result)
            return rpc_error(id, RPC_INVALID_PARAMS, "Unknown tool");
        return rpc_result(id, result);
    }
    return rpc_error(id, RPC_METHOD_NOT_FOUND, "Method not found");
}

void h_mcp(struct request *req, struct response *res)
{
    struct json_object *msg, *answer;
    const char *why;
    if (req->mcp_version) {
        /* After initialize a client names its version; one we do not speak is a 400. */
        int known = 0;
        for (size_t i = 0; i < sizeof versions / sizeof *versions; i++)
            known |= strcmp(req->mcp_version, versions[i]) == 0;
        if (!known) {
            reply_raw(res, 400,
                      rpc_error(NULL, RPC_INVALID_REQUEST, "Unsupported MCP-Protocol-Version"));
            return;
        }
    }
    if (json_parse_whole(req->body, req->body_len, &msg, &why)) {
        reply_raw(res, 200, rpc_error(NULL, RPC_PARSE_ERROR, "Parse error"));
        return;
    }
    if (!msg) { /* valid JSON (null), but not a request: -32600 as for 42 or "x" */
        reply_raw(res, 200, rpc_error(NULL, RPC_INVALID_REQUEST, "Invalid Request"));
        return;
    }
    if (json_object_is_type(msg, json_type_array)) {
        size_t n = json_object_array_length(msg);
        if (n == 0) {
            reply_raw(res, 200, rpc_error(NULL, RPC_INVALID_REQUEST, "Invalid Request"));
        } else {
            answer = json_object_new_array();
            for (size_t i = 0; i < n; i++) {
                struct json_object *item = json_object_array_get_idx(msg, i), *one = NULL, *bid;
                if (i < 100)
                    one = handle_one(req, item);
                else if (json_object_object_get_ex(item, "method", NULL) &&
                         json_object_object_get_ex(item, "id", &bid))
                    /* Past the limit a request is not run, but still answered. */
                    one = rpc_error(bid, RPC_INVALID_REQUEST,
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
        answer = handle_one(req, msg);
        if (answer)
            reply_raw(res, 200, answer);
        else
            reply_raw(res, 202, NULL);
    }
    json_object_put(msg);
}

void h_tools(struct request *req, struct response *res)
{
    struct json_object *data = json_object_new_object();
    (void)req;
    json_object_object_add(data, "tools", mcp_tools_openai());
    reply_data(res, data);
}
