/* timing (service): an entry's expiry, review-by date and pin (docs/
 * conflicts.md "Time: expiry, review-by dates and pins"). An entry expired
 * at time_now() leaves the searches, the context and the rules, and is
 * listed in the stale view; one past its review_after stays live and is put
 * in the review queue (service/review.c, kind review_due). */
#ifndef KNOWHUB_SVC_TIMING_H
#define KNOWHUB_SVC_TIMING_H

#include "domain/when.h"

#include <stddef.h>
#include <json-c/json.h>

struct svc_ctx;
struct error;
struct store;
struct buf;
struct config;
struct knowledge_time;

/* Now, as the moments are written: "YYYY-MM-DDTHH:MM:SSZ" (time_now()). */
void timing_now(char out[static WHEN_TEXT]);

/* The time fields a write gives: each either absent, null (cleared) or set. */
struct timing_change {
    int has_expires, has_review, has_pinned;
    char expires_at[WHEN_TEXT], review_after[WHEN_TEXT]; /* "" when cleared */
    int pinned;
};

/* Read expires_at, review_after (a date or a UTC time, or null) and pinned
 * (a boolean, or null: false) from a request body or MCP arguments into ch:
 * 0, or -1 with err INVALID_REQUEST, key invalid_time, param field. */
int timing_change_of(struct json_object *body, struct timing_change *ch, struct error *err);
/* The same from a document's front matter, which is the whole entry: a
 * field it does not name is cleared. */
int timing_change_of_document(const char *document, struct timing_change *ch, struct error *err);
/* Put what ch sets into the front matter of the document in doc (an entry
 * view's create held for review: its approval reads it there). */
void timing_change_document(struct buf *doc, const struct timing_change *ch);
/* Set on entry id the time the document written into it says (an approved
 * proposal's): the keys its front matter names, the others left as they
 * are. A store status; a time it cannot read changes nothing. */
int timing_apply_document(struct store *st, const char *space, const char *id,
                          const char *document);
/* 1 when ch sets or clears anything. */
int timing_change_any(const struct timing_change *ch);
/* Apply ch to entry id (its other fields kept), in the caller's transaction
 * or its own. A store status. */
int timing_apply(struct store *st, const char *space, const char *id,
                 const struct timing_change *ch);
/* Add expires_at, review_after (null when unset) and pinned of entry id to
 * o. A store status. */
int timing_json_add(struct store *st, const char *space, const char *id, struct json_object *o);
/* The same fields from a time already read. */
void timing_json_of(const struct knowledge_time *t, struct json_object *o);
/* The document of entry id (document, its stored text) with its time in
 * the front matter, into out (the file view's read, the exports). */
int timing_document(struct store *st, const char *space, const char *id, const char *document,
                    struct buf *out);
/* *pinned 1 when entry id is pinned (the evidence's ageing exempts it). */
int timing_pinned(struct store *st, const char *space, const char *id, int *pinned);

/* The space's entries expired now, as a set (sorted ids). */
struct timing_expired {
    char **ids;
    size_t n, cap;
};
/* Load the set (one indexed read; empty in a space that expires nothing). */
int timing_expired_load(struct store *st, const char *space, struct timing_expired *set);
int timing_expired_has(const struct timing_expired *set, const char *id);
void timing_expired_release(struct timing_expired *set);

/* GET /api/knowledge/stale: {items: [{id, title, category, path,
 * expires_at, review_after, pinned, why}], total, limit, offset}, the
 * expired first. */
int svc_knowledge_stale(const struct svc_ctx *c, long limit, long offset, struct json_object **data,
                        struct error *err);

/* The actor (and write path and source) of what the clock does. */
#define TIMING_CLOCK_ACTOR "clock"

/* Put each active, unexpired entry of the space past its review_after with
 * no pending review_due proposal in the review queue (at most a batch a
 * call; actor "clock"). Best effort: a store status, nothing undone. */
int timing_review_sweep(const struct svc_ctx *c);

/* The job thread's sweep: timing_review_sweep in each space with an entry
 * past review_after (at most 50 a call), as the clock. A store status. */
int timing_review_tick(struct store *st, const struct config *cfg);

/* A review_due proposal of entry id decided (in the decision's
 * transaction): approve confirms the entry (its review_after cleared), edit
 * takes the time of the reviewer's document (a review_after not after now
 * is cleared), reject expires it now (the caller checks who may change
 * the entry). A store status. */
int timing_review_decided(const struct svc_ctx *c, const char *id, const char *decision,
                          const char *document);

#endif
