/* embed: entries' vectors and the query's (docs/search.md "By meaning").
 * An entry is embedded from its scenario, title and the head of its
 * content, by the job thread, never on a request: creates and updates
 * queue it (store triggers), the job thread takes the queue in batches
 * (embed_idle), a backfill job re-queues a space and reports progress, and
 * a change of model re-queues everything at start. A query is embedded on
 * its search, through a bounded cache keyed by a digest of model and text.
 * While the embeddings server fails, a breaker holds calls back (backoff
 * from 2 s to 60 s) and searches answer lexically with a warning. */
#ifndef KNOWHUB_EMBED_H
#define KNOWHUB_EMBED_H

#include <json-c/json.h>

#include "base/error.h"
#include "service/ctx.h"

struct store;
struct llm;
struct config;
struct metrics;

/* Characters of an entry's content that go into its vector. */
#define EMBED_CONTENT_HEAD 1000

/* At start: queue what the configured model has no vector for (a changed
 * model re-embeds everything). Nothing when embeddings are off. */
void embed_start(struct store *st, const struct config *cfg);

/* One batch of the queue, when embeddings are on and the breaker allows:
 * 1 when it did some work, 0 when nothing waited (or it may not call yet). */
int embed_idle(struct store *st, struct llm *llm, const struct config *cfg);

/* The backfill job (kind "embed", params {force}): queue space's entries,
 * then embed them batch by batch with progress, until none wait. On
 * PostgreSQL it takes the embedding turn for each batch (a lease of
 * KNOWHUB_EMBED_TIMEOUT + 15 s); while another node holds it, entries of
 * the space that node embeds count as progress, and after two leases with
 * none the job fails SERVICE_UNAVAILABLE, retry: true, naming the holder. */
void embed_run_job(struct store *st, struct llm *llm, const struct config *cfg, const char *job_id,
                   const char *space, const char *actor, struct json_object *params);

/* Ask a running backfill job to stop at its next batch (shutdown): it stays
 * "running" and runs again at the next start. */
void embed_request_stop(void);

/* q's unit vector for c's search (from the cache, else one call with a
 * short timeout): 0 with *vec (caller frees) and *dim, or -1 with err
 * (LLM_* code; LLM_NOT_CONFIGURED when off, SERVICE_UNAVAILABLE while the
 * breaker is open). */
int embed_query(const struct svc_ctx *c, const char *q, float **vec, int *dim, struct error *err);

/* Put q's vector (dim floats, normalised here) in space's query cache, as
 * if the server had answered it: a warm-up, and the benchmark's way to
 * search in-process without a server. */
void embed_query_remember(const struct config *cfg, const char *space, const char *q,
                          const float *vec, int dim);

/* GET /api/embeddings: {configured, model, dimension, entries, embedded,
 * failed, queued, last_error, index: {vectors, bytes}}. */
int svc_embed_status(const struct svc_ctx *c, struct json_object **data, struct error *err);
/* POST /api/embeddings/backfill {force?}: the new job. */
int svc_embed_backfill(const struct svc_ctx *c, struct json_object *body, struct json_object **data,
                       struct error *err);

#endif
