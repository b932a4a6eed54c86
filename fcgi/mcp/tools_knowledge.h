/* tools_knowledge: the MCP tools of the entry and file views that call
 * their services directly (knowledge_save, knowledge_update,
 * knowledge_batch_update, knowledge_list, knowledge_read, and the review
 * queue's knowledge_review_list and knowledge_review_decide, and
 * knowledge_link). Each is a
 * tool_fn of mcp.c: the arguments (already checked against the tool's
 * schema) in, the REST answer's data out (caller puts it) and 0, or -1
 * with err. */
#ifndef KNOWHUB_TOOLS_KNOWLEDGE_H
#define KNOWHUB_TOOLS_KNOWLEDGE_H

#include <json-c/json.h>

struct svc_ctx;
struct error;

/* POST /api/knowledge with the arguments as its body. */
int tool_knowledge_save(const struct svc_ctx *c, struct json_object *args,
                        struct json_object **data, struct error *err);
/* PUT /api/knowledge/{knowledge_id}, the other arguments as its body. */
int tool_knowledge_update(const struct svc_ctx *c, struct json_object *args,
                          struct json_object **data, struct error *err);
/* POST /api/knowledge/batch_update with the arguments as its body. */
int tool_knowledge_batch_update(const struct svc_ctx *c, struct json_object *args,
                                struct json_object **data, struct error *err);
/* GET /api/knowledge: limit, offset, tags_type (a list) and category,
 * checked as the query parameters are. */
int tool_knowledge_list(const struct svc_ctx *c, struct json_object *args,
                        struct json_object **data, struct error *err);
/* POST /api/knowledge/read with the arguments as its body. */
int tool_knowledge_read(const struct svc_ctx *c, struct json_object *args,
                        struct json_object **data, struct error *err);

/* GET /api/review: state (pending when absent), limit, offset. */
int tool_knowledge_review_list(const struct svc_ctx *c, struct json_object *args,
                               struct json_object **data, struct error *err);
/* POST /api/review/{proposal_id}/decide, the other arguments as its body. */
int tool_knowledge_review_decide(const struct svc_ctx *c, struct json_object *args,
                                 struct json_object **data, struct error *err);

/* knowledge_link: action list (GET /api/knowledge/{id}/links), add (POST,
 * to, type, reason) or remove (DELETE .../links/{to}/{type}); add and
 * remove need an agent (supersedes an editor), service/links.h. */
int tool_knowledge_link(const struct svc_ctx *c, struct json_object *args,
                        struct json_object **data, struct error *err);

#endif
