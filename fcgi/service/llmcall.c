/* llmcall: LLM calls with their ledger row (llmcall.h). */
#include "service/llmcall.h"
#include "store/store.h"

struct llm_request svc_llm_request(const struct svc_ctx *c, const char *purpose,
                                   struct json_object *messages)
{
    struct llm_request lr = {0};
    lr.purpose = purpose;
    lr.messages = messages;
    lr.actor = c->actor;
    lr.session_id = c->request_id;
    return lr;
}

int svc_llm_chat(const struct svc_ctx *c, const struct llm_request *lr, struct llm_reply *r)
{
    int rc = llm_chat(c->llm, c->cfg, lr, r);
    /* The ledger is a record, not the answer: a failed write loses the row, never the reply. */
    if (c->st && r->model)
        store_ignore(store_llm_call_add(c->st, c->space, lr->purpose, r->model, r->prompt_tokens,
                                        r->completion_tokens, r->latency_ms,
                                        r->err.code ? r->err.code : "ok"));
    return rc;
}

int svc_llm_embed(const struct svc_ctx *c, const char *purpose, const char *const *texts, size_t n,
                  int expect_dim, long timeout_ms, struct embed_reply *r)
{
    int rc = llm_embed(c->llm, c->cfg, texts, n, expect_dim, timeout_ms, r);
    if (c->st && r->model) /* as for chat: the ledger never costs the answer */
        store_ignore(store_llm_call_add(c->st, c->space, purpose, r->model, r->prompt_tokens, 0,
                                        r->latency_ms, r->err.code ? r->err.code : "ok"));
    return rc;
}
