/* jobs: queued long work, run by the job thread. */
#include "service/jobs.h"
#include "base/config.h"
#include "base/jfield.h"
#include "base/metrics.h"
#include "service/embed.h"
#include "service/slim.h"
#include "store/store.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void open_id(const struct job_info *j, void *ctx)
{
    snprintf(ctx, 40, "%s", j->id);
}

int jobs_start(struct store *st, const char *space, const char *kind, struct json_object *params,
               const char *actor, char *id_out, int *existing)
{
    const char *text = json_object_to_json_string_ext(params, JSON_C_TO_STRING_PLAIN);
    int rc = STORE_CONFLICT;
    *existing = 0;
    /* The open job may end between the refused insert and the read: then
     * the insert is tried again (a few times: each round one job ended). */
    for (int tries = 0; tries < 4 && rc == STORE_CONFLICT; tries++) {
        id_random(id_out, "job-");
        rc = store_job_create(st, id_out, space, kind, text, actor);
        if (rc != STORE_CONFLICT)
            break;
        rc = store_job_open(st, space, kind, open_id, id_out);
        if (rc == STORE_OK)
            *existing = 1;
        else if (rc == STORE_NOT_FOUND)
            rc = STORE_CONFLICT;
    }
    return rc;
}

/* End a job "failed" with an error of the one shape (error_json). Should
 * that fail, the job is queued again at the next start. */
static void job_failed(struct store *st, const char *id, const char *code, const char *message)
{
    struct json_object *o = error_json_text(code, message);
    store_ignore(store_job_finish(st, id, "failed", NULL, json_text(o)));
    json_object_put(o);
}

struct json_object *jobs_to_json(const struct job_info *j)
{
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "id", json_object_new_string(j->id));
    json_object_object_add(o, "kind", json_object_new_string(j->kind));
    json_object_object_add(o, "status", json_object_new_string(j->status));
    json_object_object_add(o, "progress", json_object_new_int64(j->progress));
    json_object_object_add(o, "total", json_object_new_int64(j->total));
    json_object_object_add(o, "params", json_parse_stored(j->params));
    json_object_object_add(o, "result", j->result ? json_parse_stored(j->result) : NULL);
    json_object_object_add(o, "error", j->error ? json_parse_stored(j->error) : NULL);
    json_object_object_add(o, "actor", json_object_new_string(j->actor));
    json_object_object_add(o, "created_at", json_object_new_string(j->created_at));
    json_object_object_add(o, "updated_at", json_object_new_string(j->updated_at));
    return o;
}

struct claimed {
    char *id, *space, *kind, *params, *actor;
};

static void keep(const struct job_info *j, void *ctx)
{
    struct claimed *c = ctx;
    c->id = xstrdup(j->id);
    c->space = xstrdup(j->space);
    c->kind = xstrdup(j->kind);
    c->params = xstrdup(j->params);
    c->actor = xstrdup(j->actor);
}

/* Slim: plan, then merge group by group, reporting progress. A group whose
 * merge fails is left as it was and reported; the job goes on. */
static void run_slim(struct store *st, struct llm *llm, const struct config *cfg,
                     const struct claimed *job, struct json_object *params)
{
    struct json_object *plan = NULL, *groups, *v, *done = json_object_new_array();
    struct json_object *failed = json_object_new_array(), *result = json_object_new_object();
    struct json_object *held = json_object_new_array(), *conflicts = json_object_new_array();
    double threshold = SLIM_DEFAULT_THRESHOLD;
    struct slim_ctx c = {.svc = {.space = job->space,
                                 .actor = job->actor,
                                 .role = ROLE_NONE,
                                 .request_id = job->id,
                                 .st = st,
                                 .llm = llm,
                                 .cfg = cfg},
                         .model = NULL,
                         .hold = 0};
    size_t n;
    if (json_object_object_get_ex(params, "threshold", &v))
        threshold = json_object_get_double(v);
    c.model = jf_member_str(params, "model");
    /* started under a review policy that holds slim's merges: each group
     * becomes a proposal (docs/review.md) */
    c.hold = json_object_object_get_ex(params, "hold", &v) && json_object_get_boolean(v);
    v = NULL;
    json_object_object_get_ex(params, "with_rules", &v);
    if (slim_plan(st, job->space, threshold, v && json_object_get_boolean(v),
                  config_llm_configured(cfg), &plan)) {
        job_failed(st, job->id, E_SERVICE_UNAVAILABLE, "The plan could not be made");
        goto out;
    }
    json_object_object_get_ex(plan, "groups", &groups);
    n = json_object_array_length(groups);
    store_ignore(store_job_progress(st, job->id, 0, (long)n)); /* best effort */
    for (size_t i = 0; i < n; i++) {
        struct json_object *g = json_object_array_get_idx(groups, i), *err = NULL, *h = NULL;
        int rc = slim_merge_group(&c, g, &h, &err);
        /* members split off for contradicting the others (docs/conflicts.md) */
        if (json_object_object_get_ex(g, "conflicts", &v))
            for (size_t j = 0; j < json_object_array_length(v); j++)
                json_object_array_add(conflicts, json_object_get(json_object_array_get_idx(v, j)));
        if (rc == 0) {
            json_object_array_add(done, json_object_get(g));
        } else if (rc == 1) {
            json_object_object_add(h, "group", json_object_get(g));
            json_object_array_add(held, h);
        } else {
            struct json_object *f = json_object_new_object();
            json_object_object_add(f, "group", json_object_get(g));
            json_object_object_add(f, "error", err);
            json_object_array_add(failed, f);
        }
        if (store_job_progress(st, job->id, (long)i + 1, (long)n) == STORE_NOT_FOUND)
            goto out; /* no longer this node's: its lease ran out and another took it over */
    }
    json_object_object_add(result, "threshold", json_object_new_double(threshold));
    json_object_object_add(result, "merged_groups", done);
    json_object_object_add(result, "failed_groups", failed);
    json_object_object_add(result, "held_groups", held);
    json_object_object_add(result, "conflicts", conflicts);
    json_object_object_add(result, "llm", json_object_new_boolean(config_llm_configured(cfg)));
    done = failed = held = conflicts = NULL;
    store_ignore(store_job_finish(st, job->id, "done", json_text(result),
                                  NULL)); /* else requeued at start */
out:
    json_object_put(done);
    json_object_put(failed);
    json_object_put(held);
    json_object_put(conflicts);
    json_object_put(result);
    json_object_put(plan);
}

int jobs_run_next(struct store *st, struct llm *llm, const struct config *cfg, struct metrics *m)
{
    struct claimed job = {0};
    struct json_object *params;
    struct timespec t0, t1;
    int rc = store_job_claim(st, keep, &job);
    if (rc == STORE_NOT_FOUND)
        return 0;
    if (rc)
        return -1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    params = json_parse_stored(job.params);
    if (strcmp(job.kind, "slim") == 0)
        run_slim(st, llm, cfg, &job, params);
    else if (strcmp(job.kind, "embed") == 0)
        embed_run_job(st, llm, cfg, job.id, job.space, job.actor, params);
    else
        job_failed(st, job.id, E_INVALID_REQUEST, "Unknown job kind");
    json_object_put(params);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    metrics_job(m, job.kind,
                (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    free(job.id);
    free(job.space);
    free(job.kind);
    free(job.params);
    free(job.actor);
    return 1;
}
