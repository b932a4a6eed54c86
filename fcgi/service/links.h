/* links (service): typed links between entries of a space (docs/conflicts.md
 * "Typed links and supersede"): supersedes, contradicts, refines and
 * related, for REST and MCP alike. A supersedes link retires its target in
 * the same transaction (a tombstone into its source, revertable); removing
 * it brings the target back. Each operation gives its answer's data (the
 * caller puts it) and 0, or sets err and returns -1. */
#ifndef KNOWHUB_SVC_LINKS_H
#define KNOWHUB_SVC_LINKS_H

#include <json-c/json.h>

struct svc_ctx;
struct error;

/* The longest reason a link keeps, in characters. */
#define LINK_REASON_MAX 2000

/* The links of entry id (any status), both ways, oldest first: {items:
 * [{from, to, type, direction, actor, reason, created_at, other: {id,
 * title, path, category, status}}]}. */
int svc_links_list(const struct svc_ctx *c, const char *id, struct json_object **data,
                   struct error *err);

/* body {to, type, reason?}: link id to `to` (both active entries of the
 * caller's space); a link that exists is answered as it is. supersedes
 * needs an editor and retires `to`; a rule on either side needs an admin.
 * Data: {from, to, type, actor, reason, created_at, added}. */
int svc_links_add(const struct svc_ctx *c, const char *id, struct json_object *body,
                  struct json_object **data, struct error *err);

/* Remove the link id -type-> to (same roles as adding it): {removed}; the
 * removal of the supersedes link of an entry it retired restores that entry. */
int svc_links_remove(const struct svc_ctx *c, const char *id, const char *to, const char *type,
                     struct json_object **data, struct error *err);

struct link_key;

/* 1 when type is one of the four link types. */
int links_type_valid(const char *type);

/* Add (add 1) or remove the link key in the caller's transaction, with the
 * roles and rules of svc_links_add / svc_links_remove (a supersedes retires
 * or restores its target): *done 1 when it changed something. 0, or -1
 * with err (the caller decides whether to roll back). */
int links_change_in_tx(const struct svc_ctx *c, const struct link_key *key, const char *reason,
                       int add, int *done, struct error *err);

/* In the caller's write transaction, a reviewer's decision (docs/conflicts.md
 * "Conflict items and their resolution"): keep supersedes other, retiring
 * it, with the checks of svc_links_add (both active, an editor, a rule an
 * admin's) but for the review policy: the decision is the review. 0 (a
 * link that exists is left as it is), or -1 with err. */
int links_supersede_reviewed(const struct svc_ctx *c, const char *keep, const char *other,
                             const char *reason, struct error *err);

/* Remove the contradicts links between a and b, both ways, in the caller's
 * transaction: a store status. */
int links_contradicts_clear(const struct svc_ctx *c, const char *a, const char *b);

/* Add conflicts_with [ids] to each result (an object with "id") of a
 * search: the active entries linked to it by contradicts, either way. One
 * read when the space has no such link, one more per result when it has.
 * Returns a store status. */
int links_conflicts_annotate(const struct svc_ctx *c, struct json_object *results);

#endif
