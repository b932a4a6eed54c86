/* feedback (service): POST /api/knowledge/batch_update and the MCP tool
 * knowledge_batch_update. */
#ifndef KNOWHUB_SVC_FEEDBACK_H
#define KNOWHUB_SVC_FEEDBACK_H

#include <json-c/json.h>

struct svc_ctx;
struct error;

/* Apply body's feedback_list [{knowledge_id, is_effective, feedback?,
 * case_id?}], each item in its own transaction: {results, succeeded,
 * failed} in *data (caller puts it) and 0, or -1 with err when the list
 * itself is refused. */
int svc_knowledge_batch_update(const struct svc_ctx *c, struct json_object *body,
                               struct json_object **data, struct error *err);

#endif
