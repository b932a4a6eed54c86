/* mcp: the tools KnowHub offers agents — over MCP (POST /mcp) and as
 * OpenAI-style function schemas (GET /api/tools). A tool is a row of one
 * table: its name, a description written for a model, its JSON Schema, its
 * least role and the service it calls (mcp/tools_*.c turn the arguments into
 * the service's parameters). REST's handlers call the same services, so
 * there is one implementation per operation and both answer the same data. */
#ifndef KNOWHUB_MCP_H
#define KNOWHUB_MCP_H

#include <json-c/json.h>
#include <stddef.h>

struct request;

/* The tools as MCP tool descriptors [{name, description, inputSchema}]. */
struct json_object *mcp_tools_list(void);
/* The tools as OpenAI function schemas [{type: "function", function: {...}}]. */
struct json_object *mcp_tools_openai(void);

/* Run tool name with arguments (an object) for the caller of req. Returns
 * the MCP tool result {content: [{type: "text", text}], structuredContent,
 * isError?}, at most max_bytes as JSON text. NULL when no tool has that
 * name, or (with *too_large set) when the result would be larger. */
struct json_object *mcp_tools_call(struct request *req, const char *name,
                                   struct json_object *arguments, size_t max_bytes, int *too_large);

/* h_mcp.c: POST /mcp (JSON-RPC), GET and DELETE /mcp, GET /api/tools. */
struct response;
void h_mcp(struct request *req, struct response *res);
/* GET /mcp: the session's event stream (Accept: text/event-stream, else
 * 405); DELETE /mcp: the session ends (its subscriptions go). */
void h_mcp_stream(struct request *req, struct response *res);
void h_mcp_end(struct request *req, struct response *res);
void h_tools(struct request *req, struct response *res);

#endif
