/* promote (service): promotion on evidence (docs/review.md). A trace that
 * opts in (a search with include_pending) is served the pending proposals
 * its query matches, marked as such, and logged as injected like entries;
 * the traces' verdicts then decide them: a harmful verdict rejects, the
 * space's promote_after helpful verdicts of distinct traces (none harmful)
 * approve, with the actor "evidence" and the reason recorded. */
#ifndef KNOWHUB_SVC_PROMOTE_H
#define KNOWHUB_SVC_PROMOTE_H

#include <stddef.h>
#include <json-c/json.h>

#include "domain/knowledge.h"
#include "service/search.h"

struct svc_ctx;
struct error;

/* The newest pending proposals a search looks through. */
#define PROMOTE_SCAN_MAX 500
/* The verdicts of one proposal read to decide it. */
#define PROMOTE_VERDICTS_MAX 1000

/* A pending proposal a query matched: its document as an entry (k.id the
 * proposal id), the entry a change would change (NULL for a create), its
 * relevance. */
struct pending_hit {
    struct knowledge k;
    char *knowledge_id;
    struct ranked_id r;
};

/* The at most max pending creates and changes of the caller's space that
 * query matches and accept takes, best first, scored as the entry view
 * scores entries: *out (promote_hits_free) and *n. A store status. */
int promote_pending_hits(const struct svc_ctx *c, const char *query,
                         int (*accept)(const struct knowledge *, void *), void *actx,
                         const struct search_opts *opts, size_t max, struct pending_hit **out,
                         size_t *n);
void promote_hits_free(struct pending_hit *h, size_t n);

/* Log h as injected into the trace (in the caller's transaction, if any).
 * STORE_NOT_FOUND when it was decided meanwhile. */
int promote_log(const struct svc_ctx *c, const char *trace_id, const char *goal_id, long sequence,
                const struct pending_hit *h);

/* Whether the verdict status just recorded for the proposal id is the
 * trace's first of its kind there (the at-most-once rule of entries' votes),
 * into *counted. A store status. */
int promote_counted(const struct svc_ctx *c, const char *trace_id, const char *id,
                    const char *status, int *counted);

/* Decide the proposal id on its verdicts, if they decide it: *outcome (a
 * new object) {state, helpful_traces, harmful_traces, promote_after,
 * decided (true when this call decided it), reason?, error?}. 0, or -1 with
 * err when the proposal cannot be read. */
int promote_decide(const struct svc_ctx *c, const char *id, struct json_object **outcome,
                   struct error *err);

/* Whether id names a proposal (its prefix). */
int promote_is_proposal(const char *id);

#endif
