/* evolve: knowledge evolution (evolve_feedback, docs/feedback.md): the LLM rewrites an entry's
 * content so it answers a piece of feedback; the new text replaces the body
 * of the entry's document as a new, revertable revision. */
#ifndef KNOWHUB_EVOLVE_H
#define KNOWHUB_EVOLVE_H

#include "base/buf.h"

struct svc_ctx;
struct knowledge;
struct llm_reply;

/* Ask the LLM for the entry's new content. 0 with it in out; -1 with
 * r->err.code set: an LLM_* code, or LIMIT_EXCEEDED when even a second,
 * condensing attempt stays over the category's body limit. */
int evolve_rewrite(const struct svc_ctx *c, const struct knowledge *k, const char *feedback,
                   struct buf *out, struct llm_reply *r);

/* Store content as the entry's new body (front matter kept) with revision
 * reason "evolve". k must hold the document (store_knowledge_get). A store
 * status; when the space's review policy holds LLM writes (reviewgate.h)
 * the rewrite is a proposal instead: STORE_OK with its id in *held (the
 * caller frees), else *held is NULL. */
int evolve_apply(const struct svc_ctx *c, const struct knowledge *k, const char *content,
                 char **held);

#endif
