/* conflicts (service): the conflict check of a write (docs/conflicts.md
 * "The check on every write"): the live entries that could plausibly
 * replace the one just written — the same category, found by the entry
 * view's lexical search with its own words — each judged against it by the
 * local detector (domain/conflict.h). Nothing is retired: the write's answer
 * lists them, and a contradiction becomes a contradicts link. */
#ifndef KNOWHUB_SVC_CONFLICTS_H
#define KNOWHUB_SVC_CONFLICTS_H

#include <json-c/json.h>
#include <stddef.h>

struct svc_ctx;
struct knowledge;

/* The entries a check judges at most, the best the search found. */
#define CONFLICTS_CANDIDATES 5
/* The always-apply rules an experience is judged against too, at most. */
#define CONFLICTS_RULE_CANDIDATES 3
/* With an LLM configured: at most KNOWHUB_CONFLICT_LLM_CALLS (5) calls a
 * write (the rest are judged locally), each bounded by this timeout, and
 * the ledger's purpose. */
#define CONFLICTS_LLM_TIMEOUT_MS 8000
/* ... and no call starts once the first began this long ago (the rest are
 * judged locally): a write waits for the LLM about 18 s at the very worst. */
#define CONFLICTS_LLM_BUDGET_MS 10000
#define CONFLICTS_LLM_PURPOSE "conflict"

/* The check of k, just written (k->id set): a new array (the caller's) of
 * {id, title, path, category, verdict, reason, similarity, judge,
 * against_rule, link?, review_id?, dismissed?} for each candidate judged a
 * duplicate, a contradiction or a refinement of (unrelated ones are left
 * out), most relevant first, then an experience's always-apply rules
 * (against_rule). judge says who judged: "llm" (when one is configured
 * and answered one of the four verdicts) or "local" (the detector, also
 * the LLM's fallback). A contradiction is linked: k contradicts it (actor
 * "conflict-check"; link: "contradicts"), so searches show both sides, and
 * queued as a conflict item (review_id; service/conflictitems.h) unless
 * an editor dismissed the pair at these versions (dismissed: its id).
 * Best effort: the write is done whatever happens here, so a failed search
 * answers an empty array. */
struct json_object *conflicts_check(const struct svc_ctx *c, const struct knowledge *k);

/* One pair: other judged against k as conflicts_check judges a candidate
 * (the LLM, the detector its fallback), as an item of conflicts_check (a
 * new object, the caller's), or NULL when unrelated; a contradiction is
 * linked (k contradicts other) and queued in the caller's transaction, if
 * any. Slim splits such members off its groups. */
struct json_object *conflicts_pair(const struct svc_ctx *c, const struct knowledge *k,
                                   const struct knowledge *other);

/* Candidates by meaning: neighbours this close at least (cosine, or
 * KNOWHUB_EMBED_MIN_SIMILARITY when higher) are judged. */
#define CONFLICTS_MEANING_FLOOR 0.5

/* The check by meaning, run by the embedding job once it stored the
 * vectors vecs[i * dim ..] of the entries ids[0..n) of c->space (their
 * text new or changed): each entry's nearest neighbours of its category
 * (at most CONFLICTS_CANDIDATES, live, above the floor) judged against it
 * as conflicts_check judges; a contradiction is linked and queued. With an
 * LLM configured only its verdicts count (at most KNOWHUB_CONFLICT_LLM_CALLS
 * calls for the whole batch; pairs it did not judge are left), else the
 * local detector's. Best effort; returns the contradictions found. */
int conflicts_by_meaning(const struct svc_ctx *c, const char *const *ids, const float *vecs,
                         size_t n, int dim);

#endif
