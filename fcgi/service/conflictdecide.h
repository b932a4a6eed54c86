/* conflictdecide (service): the decisions and the view of a conflict item
 * of the review queue (service/conflictitems.h; docs/conflicts.md
 * "Conflict items and their resolution"): supersede (one side retires the
 * other), narrow (the reviewer rewrites one side or both so both hold) or
 * dismiss (the two do not conflict). The review queue (service/review.c)
 * calls them for proposals of kind conflict. */
#ifndef KNOWHUB_SVC_CONFLICTDECIDE_H
#define KNOWHUB_SVC_CONFLICTDECIDE_H

#include <json-c/json.h>

struct svc_ctx;
struct error;
struct proposal;

/* Whether decision is one of a conflict item's: supersede, narrow, dismiss. */
int conflict_decision_valid(const char *decision);

/* Decide the conflict item id: body {decision, keep? (supersede: the
 * side that stays), documents? (narrow: {<side id>: <document>}), reason?
 * (dismiss: required)}. 0 once decided (the caller answers the item), or
 * -1 with err: INVALID_REQUEST (invalid_decision for another kind,
 * keep_invalid, documents_required, reason_required), CONFLICT
 * already_decided, side_gone (a side was deleted or superseded since:
 * dismiss the item), base_moved (narrow: the side changed since). */
int conflict_item_decide(const struct svc_ctx *c, const char *id, const char *decision,
                         struct json_object *body, struct error *err);

/* {reason, judge, against_rule} of the conflict item p, from its row. */
struct json_object *conflict_item_summary(const struct proposal *p);

/* Add sides: [{id, base_version, version, status, title, path, category,
 * always_apply, document}] (the item's two entries as they are now; status
 * "gone" and nulls when one no longer exists) to data: a store status. */
int conflict_item_sides(const struct svc_ctx *c, const struct proposal *p,
                        struct json_object *data);

#endif
