/* resources: MCP resources of POST /mcp over the context, file, entry and
 * trace services, with the caller's role and space as REST applies them:
 *   knowhub://rules                  the always-apply rules block (text/markdown)
 *   knowhub://rules/{path}           a rule document (Markdown with front matter)
 *   knowhub://experiences/{path}     an experience document
 *   knowhub://entries/{id}           the document of an entry, by id
 *   knowhub://traces/{id}/pending    a trace's pending injections (JSON)
 * A path is percent-encoded in a URI (a '/' may stay or be %2F). Each
 * function is an rpc_method (mcp/rpc.h). */
#ifndef KNOWHUB_RESOURCES_H
#define KNOWHUB_RESOURCES_H

#include "mcp/rpc.h"

/* Documents per resources/list page (knowhub://rules comes first, on the
 * first page, besides them). */
#define MCP_RESOURCES_PAGE 50
/* The longest URI and cursor read. */
#define MCP_URI_MAX_BYTES 4096
/* A trace's pending injections a read shows (total says how many there are). */
#define MCP_PENDING_SHOWN 100

/* Append the URI of the document (category, path) to out:
 * knowhub://<category>/<path percent-encoded>. */
struct buf;
void mcp_resource_uri(struct buf *out, const char *category, const char *path);

/* resources/list {cursor?}: {resources: [{uri, name, title, description,
 * mimeType}], nextCursor?}. */
int mcp_resources_list(struct request *req, struct json_object *params, struct json_object **result,
                       struct rpc_fail *f);
/* resources/read {uri}: {contents: [{uri, mimeType, text}]}; a URI of no
 * form above is -32602, a missing document, entry or trace -32002. */
int mcp_resources_read(struct request *req, struct json_object *params, struct json_object **result,
                       struct rpc_fail *f);
/* resources/templates/list: {resourceTemplates: [{uriTemplate, name,
 * title, description, mimeType}]}. */
int mcp_resources_templates(struct request *req, struct json_object *params,
                            struct json_object **result, struct rpc_fail *f);

#endif
