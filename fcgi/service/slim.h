/* slim: knowledge-base slimming: near-duplicate active entries of
 * a category are grouped by lexical similarity (Jaccard over their token
 * sets when an LLM merges the texts; without one, over their word
 * 3-shingles, so only near-identical text in the same order groups), with
 * candidates from MinHash banding (never all pairs), and each group is
 * merged into its best-quality entry: counters and histories summed, text
 * merged by the LLM when configured (else the survivor's text kept), a
 * "merge" revision on the survivor, the others left as revertable
 * tombstones (status merged, merged_into) listed in the file view's trash. */
#ifndef KNOWHUB_SLIM_H
#define KNOWHUB_SLIM_H

#include <stddef.h>
#include <json-c/json.h>

#include "service/ctx.h"

struct store;
struct llm;
struct config;

#define SLIM_DEFAULT_THRESHOLD 0.8
/* Without an LLM nothing rewrites the survivor, so only entries whose word
 * 3-shingles agree this much are merged, whatever the threshold asked. */
#define SLIM_LOCAL_MIN_SIMILARITY 0.9

/* The plan over experiences (and rules too with with_rules — admins only),
 * for merging by an LLM (by_llm) or without one:
 * {"threshold", "similarity": "token-set" | "word-3-shingles",
 * "min_similarity", "groups": [{"survivor": {id, title, path, quality},
 * "members": [{id, title, path, quality, similarity}]}], "entries"}.
 * O(n log n) in the entries. Returns a store status; *plan is the caller's. */
int slim_plan(struct store *st, const char *space, double threshold, int with_rules, int by_llm,
              struct json_object **plan);

/* Who runs a merge, for the ledger, the audit trail and the reasoning log:
 * the service context (its request_id is the reasoning log's session, the
 * job's id) and the model to merge with. */
struct slim_ctx {
    struct svc_ctx svc;
    const char *model; /* NULL: the configured model */
    int hold;          /* the job was started under a review policy that holds it */
};

/* Merge one planned group (an element of plan.groups): 0 when merged; with
 * c->hold, 1 when held for review instead (the merge stored as a proposal
 * of kind slim_merge, *held {proposal_id, state, ...} the caller's); else
 * -1 with a message in error (the group is then left untouched). A group
 * with an entry already in a held slim merge is not merged again (-1,
 * CONFLICT). */
int slim_merge_group(const struct slim_ctx *c, struct json_object *group, struct json_object **held,
                     struct json_object **error);

#endif
