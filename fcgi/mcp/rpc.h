/* rpc: what a JSON-RPC method of POST /mcp other than the tools
 * (resources, completion, prompts) hands back to h_mcp.c: 0 with its
 * result, or -1 with a failure whose JSON-RPC code and message the answer
 * carries (and the REST error code as error.data.code). */
#ifndef KNOWHUB_RPC_H
#define KNOWHUB_RPC_H

#include <json-c/json.h>

#include "base/error.h"

struct request;

#define RPC_INVALID_PARAMS -32602
#define RPC_INTERNAL_ERROR -32603
/* The MCP specification's code for a resource that does not exist. */
#define RPC_RESOURCE_NOT_FOUND -32002

/* How a method failed: code is a JSON-RPC code; err has the message and
 * the REST error code it corresponds to. */
struct rpc_fail {
    int code;
    struct error err;
};

/* A method: params is the request's params object (may be NULL); 0 with
 * *result (the caller's), or -1 with f set. */
typedef int (*rpc_method)(struct request *req, struct json_object *params,
                          struct json_object **result, struct rpc_fail *f);

void rpc_fail_init(struct rpc_fail *f);
void rpc_fail_release(struct rpc_fail *f);

/* f from a service's error e: INVALID_REQUEST, FORBIDDEN and
 * LIMIT_EXCEEDED are -32602, NOT_FOUND (and the file view's
 * TABLE_NOT_FOUND) not_found_code, any other -32603. Always -1. */
int rpc_fail_from(struct rpc_fail *f, const struct error *e, int not_found_code);

/* f as JSON-RPC code rpc_code with a REST error code (E_*) and a message
 * (a printf format and its values); the expression is -1. */
#define rpc_fail_set(f, rpc_code, rest_code, ...)                                                  \
    (error_set(&(f)->err, (rest_code), NULL, __VA_ARGS__), rpc_fail_code((f), (rpc_code)))
/* Set f's JSON-RPC code; always -1. */
int rpc_fail_code(struct rpc_fail *f, int code);

/* The string member key of params: NULL when absent or null; -1 with f
 * (-32602) when it is another type or over max_bytes. */
int rpc_param_str(struct json_object *params, const char *key, size_t max_bytes, const char **out,
                  struct rpc_fail *f);

#endif
