/* conflicts (service): the conflict check of a write (docs/conflicts.md
 * "The check on every write"): the live entries that could plausibly
 * replace the one just written — the same category, found by the entry
 * view's lexical search with its own words — each judged against it by the
 * local detector (domain/conflict.h). Nothing is retired: the write's answer
 * lists them, and a contradiction becomes a contradicts link. */
#ifndef KNOWHUB_SVC_CONFLICTS_H
#define KNOWHUB_SVC_CONFLICTS_H

#include <json-c/json.h>

struct svc_ctx;
struct knowledge;

/* The entries a check judges at most, the best the search found. */
#define CONFLICTS_CANDIDATES 5

/* The check of k, just written (k->id set): a new array (the caller's) of
 * {id, title, path, category, verdict, reason, similarity, link?} for each
 * candidate the detector finds a duplicate, a contradiction or a
 * refinement of (unrelated ones are left out), most relevant first. A
 * contradiction is linked: k contradicts it (actor "conflict-check", the
 * reason the detector's; link: "contradicts"), so searches show both sides.
 * Best effort: the write is done whatever happens here, so a failed search
 * answers an empty array. */
struct json_object *conflicts_check(const struct svc_ctx *c, const struct knowledge *k);

/* One pair: other judged against k by the detector, as an item of
 * conflicts_check (a new object, the caller's), or NULL when unrelated; a
 * contradiction is linked (k contradicts other) in the caller's
 * transaction, if any. Slim splits such members off its groups. */
struct json_object *conflicts_pair(const struct svc_ctx *c, const struct knowledge *k,
                                   const struct knowledge *other);

#endif
