/* linkmatter (service): the link keys of a written document's front matter
 * (docs/conflicts.md "Links in front matter"): for each of supersedes,
 * contradicts, refines and related that is present, the entry's outgoing
 * links of that type become exactly the listed ones; an absent key leaves
 * them as they are. service/linkdoc.h shows them on reads. */
#ifndef KNOWHUB_SVC_LINKMATTER_H
#define KNOWHUB_SVC_LINKMATTER_H

#include <json-c/json.h>

struct svc_ctx;
struct knowledge;

/* What an apply did. */
struct linkmatter_result {
    long added, removed;
    struct json_object *warnings; /* [{type, path, code, message}], the caller's to put */
};

/* Make the outgoing links of entry from_id (of category from_category)
 * follow the link keys of meta (a front matter object): for each key
 * present, its list (or one string) of paths, "rules/x.md",
 * "experiences/f/x.md" or a path of from's own category, names the targets.
 * An unknown path, a link the caller may not make (roles, a review policy,
 * a retired target) is a warning, never an error: the write stands. in_tx:
 * in the caller's transaction (import), else each change in its own. The
 * result's warnings array is always set. Returns the number of warnings. */
long linkmatter_apply(const struct svc_ctx *c, const char *from_id, const char *from_category,
                      struct json_object *meta, int in_tx, struct linkmatter_result *res);

/* A write's (or a revert's) link keys: when k's front matter (k->meta, k->id,
 * k->category) has any, apply them (each change in its own transaction)
 * and add links {added, removed, warnings} to data. */
void linkmatter_answer(const struct svc_ctx *c, const struct knowledge *k,
                       struct json_object *data);

#endif
