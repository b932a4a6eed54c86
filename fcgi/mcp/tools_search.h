/* tools_search: the MCP tools that run the search, context, slim and trace
 * services directly. Each takes the tool's arguments (already checked
 * against its JSON schema, aliases resolved), and gives the data REST would
 * answer with (*data, the caller's) and 0, or -1 with err set to the error
 * REST would answer with (same code and message). */
#ifndef KNOWHUB_TOOLS_SEARCH_H
#define KNOWHUB_TOOLS_SEARCH_H

#include <json-c/json.h>

#include "base/error.h"
#include "service/ctx.h"

/* knowledge_search {query, top_k?, min_score?, tags_type?, category?,
 * trace_id?, goal_id?, sequence?, task?}: GET /api/knowledge/search, its
 * integers checked as REST checks its query string. */
int tool_knowledge_search(const struct svc_ctx *c, struct json_object *args,
                          struct json_object **data, struct error *err);
/* knowledge_slim {dry_run?, threshold?, model?}: POST /api/knowledge/slim. */
int tool_knowledge_slim(const struct svc_ctx *c, struct json_object *args,
                        struct json_object **data, struct error *err);
/* knowledge_rules {budget_tokens?}: GET /api/knowledge/rules. */
int tool_knowledge_rules(const struct svc_ctx *c, struct json_object *args,
                         struct json_object **data, struct error *err);
/* knowledge_context {question, table_names?, max_results?, budget_tokens?}:
 * POST /api/knowledge/context. */
int tool_knowledge_context(const struct svc_ctx *c, struct json_object *args,
                           struct json_object **data, struct error *err);
/* trace_eval_prompt {trace_id, goal?}: GET /api/traces/{trace_id}/eval_prompt. */
int tool_trace_eval_prompt(const struct svc_ctx *c, struct json_object *args,
                           struct json_object **data, struct error *err);
/* trace_submit_evaluation {trace_id, trigger, output? | evaluations?}:
 * POST /api/traces/{trace_id}/evaluations. */
int tool_trace_submit_evaluation(const struct svc_ctx *c, struct json_object *args,
                                 struct json_object **data, struct error *err);

#endif
