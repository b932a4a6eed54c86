/* complete: MCP completion/complete for the arguments of the resource
 * templates (path: the space's paths of that category; id: entry ids or
 * trace ids) and of the prompts (trace_id, category, tag, language): the
 * values that begin with what the client typed, at most
 * CATALOG_VALUES_MAX, with total and hasMore. An rpc_method (mcp/rpc.h). */
#ifndef KNOWHUB_COMPLETE_H
#define KNOWHUB_COMPLETE_H

#include "mcp/rpc.h"

/* The longest value completed, in bytes. */
#define MCP_COMPLETE_VALUE_MAX_BYTES 1024

/* completion/complete {ref: {type: "ref/resource", uri} | {type:
 * "ref/prompt", name}, argument: {name, value}, context?: {arguments}}:
 * {completion: {values, total, hasMore}}; -32602 for an unknown ref or
 * argument, or a prompt above the caller's role. */
int mcp_complete(struct request *req, struct json_object *params, struct json_object **result,
                 struct rpc_fail *f);

#endif
