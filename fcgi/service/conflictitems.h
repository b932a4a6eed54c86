/* conflictitems (service): the conflict items of the review queue
 * (docs/conflicts.md "Conflict items and their resolution"): a
 * contradiction between two entries, linked by contradicts, waits for an
 * editor as a proposal of kind conflict: knowledge_id one side, the other
 * its one proposal_members row, each at the version judged. At most one
 * pending item per unordered pair. service/conflictdecide.h decides them. */
#ifndef KNOWHUB_SVC_CONFLICTITEMS_H
#define KNOWHUB_SVC_CONFLICTITEMS_H

struct svc_ctx;

/* The reason code an item's reasons carry first when one side is an
 * always-apply rule and the other an experience. */
#define CONFLICT_AGAINST_RULE "against_rule"

/* A contradiction to queue. Strings borrowed. */
struct conflict_pair {
    const char *a, *b;  /* the sides: a the entry written (or the link's from) */
    const char *reason; /* the judge's reason, or the link's */
    const char *judge;  /* "local", "llm" (the write check) or "link" (a person or agent) */
    const char *via;    /* the write path: "check" or "link" */
    int keep_dismissed; /* not again while a dismissed item of the pair is still at its versions */
};

/* Queue the item of pair unless a pending one of the same unordered pair
 * exists (or, with keep_dismissed, a dismissed one at the sides' versions
 * now). An item whose one side is an always-apply rule and the other an
 * experience carries CONFLICT_AGAINST_RULE first in its reasons. 1 with *id (caller frees) of the
 * new item, 0 with *id the pending one that stands (NULL when none was made: a side is not active),
 * 2 with *id the dismissed one that stands, or a negative store status. Both sides are read in the
 * transaction that inserts it. */
int conflict_item_queue(const struct svc_ctx *c, const struct conflict_pair *pair, char **id);

#endif
