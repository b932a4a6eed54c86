/* llmcall: every service's way to the LLM. A call runs through the client
 * (llm/llm.c) for the caller of the context and is then written to the
 * usage ledger (llm_calls) of the caller's space, success or failure. */
#ifndef KNOWHUB_LLMCALL_H
#define KNOWHUB_LLMCALL_H

#include <json-c/json.h>

#include "llm/llm.h"
#include "service/ctx.h"

/* A request on behalf of c's caller: purpose and messages (borrowed), the
 * caller's actor, the request id as the reasoning log's session; the
 * server's model and timeout unless the caller changes them. */
struct llm_request svc_llm_request(const struct svc_ctx *c, const char *purpose,
                                   struct json_object *messages);

/* Run lr with c's client and configuration and write the ledger row (in c's
 * space). 0 with r->text filled, else -1 with r->err set (llm_chat). */
int svc_llm_chat(const struct svc_ctx *c, const struct llm_request *lr, struct llm_reply *r);

/* Embed texts with c's client (llm_embed) and write the ledger row under
 * purpose ("embed" for entries, "embed_query" for a search's query). */
int svc_llm_embed(const struct svc_ctx *c, const char *purpose, const char *const *texts, size_t n,
                  int expect_dim, long timeout_ms, struct embed_reply *r);

#endif
