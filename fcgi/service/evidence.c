/* evidence: a space's half-life of verdicts and the aged counts of the
 * entry search's stage 2 (service/evidence.h). */
#include "service/evidence.h"
#include "service/timing.h"
#include "base/jfield.h"
#include "base/util.h"
#include "domain/ageing.h"
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

#define WHAT "Evidence policy"

int evidence_half_life(const struct svc_ctx *c, long *days)
{
    return store_evidence_policy_get(c->st, c->space, days);
}

int svc_evidence_policy_get(const struct svc_ctx *c, struct json_object **data, struct error *err)
{
    long days = 0;
    int rc = evidence_half_life(c, &days);
    *data = NULL;
    if (rc) {
        store_status_error(rc, WHAT, err);
        return -1;
    }
    *data = json_object_new_object();
    json_object_object_add(*data, "half_life_days", json_object_new_int64(days));
    return 0;
}

int svc_evidence_policy_set(const struct svc_ctx *c, struct json_object *body,
                            struct json_object **data, struct error *err)
{
    long days = -1;
    int rc;
    *data = NULL;
    if (jf_long(err, body, "half_life_days", 0, AGEING_HALF_LIFE_MAX, -1, &days))
        return -1;
    if (days < 0) {
        error_set(err, E_INVALID_REQUEST, "half_life_days_required",
                  "Give 'half_life_days': 0 (off) to %d", AGEING_HALF_LIFE_MAX);
        error_str(err, "field", "half_life_days");
        return -1;
    }
    if ((rc = store_evidence_policy_set(c->st, c->space, days, c->actor))) {
        store_status_error(rc, WHAT, err);
        return -1;
    }
    return svc_evidence_policy_get(c, data, err);
}

const char *evidence_exempt(const struct knowledge *k)
{
    return strcmp(k->category, "rules") == 0 ? "rule" : NULL;
}

struct ageing_read {
    const struct knowledge *const *ks;
    size_t n;
    struct evidence_aged *out;
    long *dated_helpful, *dated_harmful; /* verdicts with a time, per entry */
    long half_life;
    int64_t now;
};

/* One row of the verdicts read: n verdicts of kind counted in hour. */
static void verdict_hour(const char *id, const char *kind, const char *hour, long n, void *ctx)
{
    struct ageing_read *a = ctx;
    int64_t at;
    double w = 1.0;
    int helpful = strcmp(kind, "helpful") == 0;
    size_t i;
    for (i = 0; i < a->n && strcmp(a->ks[i]->id, id) != 0; i++)
        ;
    if (i == a->n)
        return;
    /* the middle of the hour: at most 30 minutes off */
    if (ageing_utc_seconds(hour, &at) == 0)
        w = ageing_weight(a->now - (at + 1800), a->half_life);
    if (helpful) {
        a->out[i].helpful += w * (double)n;
        a->dated_helpful[i] += n;
    } else {
        a->out[i].harmful += w * (double)n;
        a->dated_harmful[i] += n;
    }
}

int evidence_age(const struct svc_ctx *c, long half_life, const struct knowledge *const *ks,
                 size_t n, struct evidence_aged *out)
{
    struct json_object *ids = json_object_new_array();
    struct ageing_read a = {ks,
                            n,
                            out,
                            xcalloc(n + 1, sizeof(long)),
                            xcalloc(n + 1, sizeof(long)),
                            half_life,
                            (int64_t)time_now()};
    int rc = STORE_OK;
    for (size_t i = 0; rc == STORE_OK && i < n; i++) {
        int pinned = 0;
        out[i].helpful = out[i].harmful = 0;
        out[i].exempt = evidence_exempt(ks[i]);
        if (!out[i].exempt && (rc = timing_pinned(c->st, c->space, ks[i]->id, &pinned)) == 0 &&
            pinned)
            out[i].exempt = "pinned";
        if (!out[i].exempt)
            json_object_array_add(ids, json_object_new_string(ks[i]->id));
    }
    if (rc == STORE_OK && json_object_array_length(ids))
        rc = store_evidence_verdicts(c->st, c->space, json_object_to_json_string(ids), verdict_hour,
                                     &a);
    for (size_t i = 0; rc == STORE_OK && i < n; i++) {
        const struct knowledge *k = ks[i];
        int64_t created;
        double w = 1.0;
        if (out[i].exempt) {
            out[i].helpful = (double)k->helpful;
            out[i].harmful = (double)k->harmful;
            continue;
        }
        /* the undated part of a counter: as old as it can be */
        if (ageing_utc_seconds(k->created_at, &created) == 0)
            w = ageing_weight(a.now - created, half_life);
        if (k->helpful > a.dated_helpful[i])
            out[i].helpful += w * (double)(k->helpful - a.dated_helpful[i]);
        if (k->harmful > a.dated_harmful[i])
            out[i].harmful += w * (double)(k->harmful - a.dated_harmful[i]);
    }
    free(a.dated_helpful);
    free(a.dated_harmful);
    json_object_put(ids);
    return rc;
}
