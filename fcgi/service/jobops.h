/* jobops: the job operations callers ask for: start slimming (or answer its
 * plan at once) or an embeddings backfill, follow jobs, and read the LLM
 * usage ledger. Each gives its answer's data (a new JSON value, the
 * caller's) and 0, or -1 with err set. */
#ifndef KNOWHUB_JOBOPS_H
#define KNOWHUB_JOBOPS_H

#include <json-c/json.h>

#include "base/error.h"
#include "service/ctx.h"

/* body {dry_run?, threshold? (0.3..1), model?}: with dry_run the plan plus
 * "dry_run": true, else the new slim job (rules merged only for admins). */
int svc_slim(const struct svc_ctx *c, struct json_object *body, struct json_object **data,
             struct error *err);
/* POST /api/embeddings/backfill {force?}: a job (kind "embed") that queues
 * the space's entries without a current vector (every entry with force)
 * and embeds them with progress (service/embed.c). */
int svc_embed_backfill(const struct svc_ctx *c, struct json_object *body, struct json_object **data,
                       struct error *err);
/* One job of the caller's space. */
int svc_job_get(const struct svc_ctx *c, const char *id, struct json_object **data,
                struct error *err);
/* {items: the latest limit jobs}. */
int svc_job_list(const struct svc_ctx *c, long limit, struct json_object **data, struct error *err);
/* The LLM usage ledger since a UTC date or time (NULL or "" for all):
 * {since, configured, items: [{purpose, model, calls, errors, tokens,
 * latency}]}. */
int svc_llm_usage(const struct svc_ctx *c, const char *since, struct json_object **data,
                  struct error *err);

#endif
