/* evidence: evidence that ages (docs/conflicts.md#evidence-that-ages). A
 * space's half-life (GET and PUT /api/evidence/policy, off by default), and
 * the aged helpful and harmful counts stage 2 of the entry search ranks by,
 * computed at query time from the times of the verdicts (knowledge_cases)
 * and never written back. */
#ifndef KNOWHUB_EVIDENCE_H
#define KNOWHUB_EVIDENCE_H

#include <stddef.h>
#include <json-c/json.h>

#include "base/error.h"
#include "domain/knowledge.h"
#include "service/ctx.h"

/* {half_life_days} of the caller's space (0: off). */
int svc_evidence_policy_get(const struct svc_ctx *c, struct json_object **data, struct error *err);
/* body {half_life_days: 0..3650}: set it (the route needs an admin); the
 * policy as svc_evidence_policy_get answers it. */
int svc_evidence_policy_set(const struct svc_ctx *c, struct json_object *body,
                            struct json_object **data, struct error *err);

/* The space's half-life in days, 0 when off; a store status. */
int evidence_half_life(const struct svc_ctx *c, long *days);

/* "rule" when k's evidence is never aged for its category (rules), else
 * NULL; a pinned entry is exempt too, which takes a read (evidence_age). */
const char *evidence_exempt(const struct knowledge *k);

/* An entry's helpful and harmful counts weighted by their age. */
struct evidence_aged {
    double helpful, harmful;
    const char *exempt; /* "rule", "pinned" or NULL: why it was not aged */
};

/* out[i] (n of them, the caller's) the aged counts of ks[i] at half_life
 * days as of now (time_now()): each dated verdict weighs 2^(-age / half
 * life) from the middle of the hour it was counted in; the part of a
 * counter no verdict row dates (imports, merges of cases already held)
 * ages as of the entry's created_at. An exempt entry (a rule, or pinned:
 * service/timing.h) keeps its counts. One read for the verdicts of all n,
 * and one indexed read per entry that is not a rule (is it pinned?). A
 * store status. */
int evidence_age(const struct svc_ctx *c, long half_life, const struct knowledge *const *ks,
                 size_t n, struct evidence_aged *out);

#endif
