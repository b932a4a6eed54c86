/* context: what an agent loads before it works: the always-apply rules with
 * their formatted block (for a system prompt), and that block plus the
 * knowledge relevant to a question. Each gives its answer's data (a new
 * object, the caller's) and 0, or -1 with err set.
 *
 * With a token budget (docs/agents.md "Token budgets") the answer also says
 * tokens_used (domain/tokcount.h's estimate of the blocks), budget_tokens,
 * over_budget and omitted [{id, reason}]; without one it is as it always was. */
#ifndef KNOWHUB_CONTEXT_H
#define KNOWHUB_CONTEXT_H

#include <json-c/json.h>

#include "base/error.h"
#include "service/ctx.h"

/* The bounds of budget_tokens, inclusive. */
#define CONTEXT_BUDGET_MIN 100
#define CONTEXT_BUDGET_MAX 200000

/* {rules: [{title, body}], block}: the space's always-apply rules. With
 * budget_tokens (CONTEXT_BUDGET_MIN..MAX; 0: none) also {tokens_used,
 * budget_tokens, over_budget, omitted: []}: the rules are never cut, so
 * over_budget is true when they alone pass the budget. */
int svc_context_rules(const struct svc_ctx *c, long budget_tokens, struct json_object **data,
                      struct error *err);
/* body {question, table_names?, max_results? (1..50, default 5; 50 with a
 * budget), budget_tokens?}: {rules_block, rules, knowledge: [{category,
 * title, path, snippet}], knowledge_block}; the first five table names
 * boost entries tagged so. With budget_tokens the knowledge is filled in
 * the search's order (whole, then as a summary with its knowhub:// URI,
 * then omitted), each item also with {id, form, uri}. */
int svc_context_question(const struct svc_ctx *c, struct json_object *body,
                         struct json_object **data, struct error *err);

#endif
