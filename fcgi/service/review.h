/* review (service): the review queue of issue 24. A space's review policy
 * (off, agent_writes, llm_writes, all) decides whether a write of the
 * knowledge is done at once or held as a proposal (service/reviewgate.h,
 * the one place every write path asks); editors and admins list the proposals and
 * decide them: approve, reject, edit-then-approve, merge into an entry.
 * An approval is a real write with the reviewer as actor. Proposals live in
 * a table of their own, so no read of the knowledge can see them. */
#ifndef KNOWHUB_SVC_REVIEW_H
#define KNOWHUB_SVC_REVIEW_H

#include <json-c/json.h>

#include "service/reviewgate.h"

struct svc_ctx;
struct knowledge;
struct error;

/* The most proposals one page of the queue answers. */
#define REVIEW_PAGE_MAX 100

/* {policy, policies}: the caller's space's review policy. */
int svc_review_policy_get(const struct svc_ctx *c, struct json_object **data, struct error *err);
/* body {policy}: set the space's policy (admins); {policy}. */
int svc_review_policy_set(const struct svc_ctx *c, struct json_object *body,
                          struct json_object **data, struct error *err);
/* A page of the queue: {items, total, limit, offset}, oldest first; state
 * NULL for every state. Editors and admins. */
int svc_review_list(const struct svc_ctx *c, const char *state, long limit, long offset,
                    struct json_object **data, struct error *err);
/* The proposal id, documents included. */
int svc_review_get(const struct svc_ctx *c, const char *id, struct json_object **data,
                   struct error *err);
/* body {decision: approve|reject|edit|merge, reason?, document?, into?}:
 * decide the proposal id: the proposal as decided. CONFLICT (key
 * already_decided) when another decision came first, (key base_moved) when
 * the entry changed since the proposal was made. */
int svc_review_decide(const struct svc_ctx *c, const char *id, struct json_object *body,
                      struct json_object **data, struct error *err);
/* The entry k of a proposal's document: the fields read from it, for
 * category and path (path "" left NULL, for knowledge_create to name). */
void review_entry_of(const struct svc_ctx *c, const char *category, const char *path,
                     const char *document, struct knowledge *k);
/* Who decides on evidence (service/promote.c): the decided_by and the
 * revision's actor of an approval the traces' verdicts made. */
#define REVIEW_EVIDENCE_ACTOR "evidence"
/* Approve (approve 1) or reject the pending proposal id on the traces'
 * evidence, reason said: as svc_review_decide, with the actor "evidence"
 * and an editor's rights (a rule or a quarantined proposal stays). */
int review_decide_on_evidence(const struct svc_ctx *c, const char *id, int approve,
                              const char *reason, struct json_object **data, struct error *err);
/* {pending, quarantined}: the caller's space's counts. */
int svc_review_counts(const struct svc_ctx *c, struct json_object **data, struct error *err);

#endif
