/* prompts: MCP prompts of POST /mcp, in English or Chinese (the argument
 * language, else the request's Accept-Language as REST reads it):
 *   start_task {goal, language?}                the rules block and the
 *       knowledge for the goal (the /context service), with knowhub:// links
 *   evaluate_trace {trace_id, goal?, language?} the evaluation prompt of
 *       GET /api/traces/{trace_id}/eval_prompt
 *   distill_experience {trace_id? | text?, language?} the distiller's
 *       instructions over a trace or an account, for the client's own model
 *   review_pending {category?, tag?, language?} editors and admins only: the
 *       newest documents agents wrote, to review
 * Each function is an rpc_method (mcp/rpc.h). */
#ifndef KNOWHUB_PROMPTS_H
#define KNOWHUB_PROMPTS_H

#include "mcp/rpc.h"
#include "service/ctx.h"

/* The longest argument value, in bytes; goal and text have their own
 * limits in characters (docs/agents.md). */
#define MCP_PROMPT_ARG_MAX_BYTES 65536
/* Entries review_pending lists. */
#define MCP_REVIEW_SHOWN 20

/* prompts/list: {prompts: [{name, title, description, arguments}]}, those
 * the caller's role may get. */
int mcp_prompts_list(struct request *req, struct json_object *params, struct json_object **result,
                     struct rpc_fail *f);
/* prompts/get {name, arguments?}: {description, messages: [{role: "user",
 * content: {type: "text", text}}]}; -32602 for an unknown prompt or
 * argument, a bad value, or a prompt above the caller's role. */
int mcp_prompts_get(struct request *req, struct json_object *params, struct json_object **result,
                    struct rpc_fail *f);

/* 1 when the prompt exists and role may get it, 0 when role may not, -1
 * when there is no such prompt; *has_arg (may be NULL) is set to whether
 * it takes argument arg (may be NULL). */
int mcp_prompt_allowed(const char *name, enum role role, const char *arg, int *has_arg);

#endif
