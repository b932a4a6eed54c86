/* context: what an agent loads before it works: the always-apply rules with
 * their formatted block (for a system prompt), and that block plus the
 * knowledge relevant to a question. Each gives its answer's data (a new
 * object, the caller's) and 0, or -1 with err set. */
#ifndef KNOWHUB_CONTEXT_H
#define KNOWHUB_CONTEXT_H

#include <json-c/json.h>

#include "base/error.h"
#include "service/ctx.h"

/* {rules: [{title, body}], block}: the space's always-apply rules. */
int svc_context_rules(const struct svc_ctx *c, struct json_object **data, struct error *err);
/* body {question, table_names?, max_results? (1..50, default 5)}:
 * {rules_block, rules, knowledge: [{category, title, path, snippet}],
 * knowledge_block}; the first five table names boost entries tagged so. */
int svc_context_question(const struct svc_ctx *c, struct json_object *body,
                         struct json_object **data, struct error *err);

#endif
