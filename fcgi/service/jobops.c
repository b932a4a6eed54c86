/* jobops: slim, jobs and the LLM usage ledger as operations. */
#include "service/jobops.h"
#include "base/config.h"
#include "base/jfield.h"
#include "llm/llm.h"
#include "service/jobs.h"
#include "service/reviewgate.h"
#include "service/slim.h"
#include "store/store.h"

#include <string.h>

static void keep_job(const struct job_info *j, void *ctx)
{
    *(struct json_object **)ctx = jobs_to_json(j);
}

static void add_job(const struct job_info *j, void *ctx)
{
    json_object_array_add(ctx, jobs_to_json(j));
}

/* The slim request's threshold and model, or INVALID_REQUEST. */
static int slim_args(const struct svc_ctx *c, struct json_object *body, double *threshold,
                     const char **model, struct error *err)
{
    struct json_object *v;
    *threshold = SLIM_DEFAULT_THRESHOLD;
    *model = NULL;
    if (json_object_object_get_ex(body, "threshold", &v) && v) {
        *threshold = json_object_get_double(v);
        if (!(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)) ||
            *threshold < 0.3 || *threshold > 1.0) {
            error_set(err, E_INVALID_REQUEST, NULL, "'threshold' must be a number from 0.3 to 1");
            return -1;
        }
    }
    if (json_object_object_get_ex(body, "model", &v) && llm_model_from_json(c->cfg, v, model)) {
        error_set(err, E_INVALID_REQUEST, NULL, "'model' is not one of the allowed models");
        return -1;
    }
    return 0;
}

int svc_slim(const struct svc_ctx *c, struct json_object *body, struct json_object **data,
             struct error *err)
{
    struct json_object *params;
    const char *model;
    double threshold;
    int dry_run, existing, rc, holds;
    char id[40];
    *data = NULL;
    if (jf_bool(err, body, "dry_run", 0, &dry_run) || slim_args(c, body, &threshold, &model, err))
        return -1;
    if (dry_run) {
        rc = slim_plan(c->st, c->space, threshold, c->role >= ROLE_ADMIN,
                       config_llm_configured(c->cfg), data);
        if (rc) {
            json_object_put(*data);
            *data = NULL;
            store_status_error(rc, "Knowledge", err);
            return -1;
        }
        json_object_object_add(*data, "dry_run", json_object_new_boolean(1));
        return 0;
    }
    /* Under a policy that holds the caller's LLM writes, each merge is held
     * as a proposal (service/slim.c): decided now, run later. */
    if (review_holds(c, 1, &holds, err))
        return -1;
    params = json_object_new_object();
    if (holds)
        json_object_object_add(params, "hold", json_object_new_boolean(1));
    json_object_object_add(params, "threshold", json_object_new_double(threshold));
    /* Rules are merged only when an admin asks. */
    json_object_object_add(params, "with_rules", json_object_new_boolean(c->role >= ROLE_ADMIN));
    if (model)
        json_object_object_add(params, "model", json_object_new_string(model));
    rc = jobs_start(c->st, c->space, "slim", params, c->actor, id, &existing);
    json_object_put(params);
    if (rc) {
        store_status_error(rc, "Job", err);
        return -1;
    }
    /* Just written: should the read fail, the data is null, as it always was. */
    store_ignore(store_job_get(c->st, c->space, id, keep_job, data));
    if (*data)
        json_object_object_add(*data, "existing", json_object_new_boolean(existing));
    return 0;
}

int svc_job_get(const struct svc_ctx *c, const char *id, struct json_object **data,
                struct error *err)
{
    int rc;
    *data = NULL;
    rc = store_job_get(c->st, c->space, id, keep_job, data);
    if (rc) {
        json_object_put(*data);
        *data = NULL;
        store_status_error(rc, "Job", err);
        return -1;
    }
    return 0;
}

int svc_job_list(const struct svc_ctx *c, long limit, struct json_object **data, struct error *err)
{
    struct json_object *items = json_object_new_array();
    int rc = store_job_list(c->st, c->space, limit, add_job, items);
    *data = NULL;
    if (rc) {
        json_object_put(items);
        store_status_error(rc, "Job", err);
        return -1;
    }
    *data = json_object_new_object();
    json_object_object_add(*data, "items", items);
    return 0;
}

static void add_usage(const struct llm_usage *u, void *ctx)
{
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "purpose", json_object_new_string(u->purpose));
    json_object_object_add(o, "model", json_object_new_string(u->model));
    json_object_object_add(o, "calls", json_object_new_int64(u->calls));
    json_object_object_add(o, "errors", json_object_new_int64(u->errors));
    json_object_object_add(o, "prompt_tokens", json_object_new_int64(u->prompt_tokens));
    json_object_object_add(o, "completion_tokens", json_object_new_int64(u->completion_tokens));
    json_object_object_add(o, "latency_ms_total", json_object_new_int64(u->latency_ms));
    json_object_object_add(o, "latency_ms_avg",
                           json_object_new_int64(u->calls ? u->latency_ms / u->calls : 0));
    json_object_array_add(ctx, o);
}

int svc_llm_usage(const struct svc_ctx *c, const char *since, struct json_object **data,
                  struct error *err)
{
    struct json_object *items;
    int rc;
    *data = NULL;
    if (since && *since &&
        (strlen(since) < 10 || strspn(since, "0123456789-:T. ") != strlen(since))) {
        error_set(err, E_INVALID_REQUEST, NULL,
                  "'since' must be a UTC date or time "
                  "(YYYY-MM-DD[THH:MM:SS])");
        return -1;
    }
    items = json_object_new_array();
    rc = store_llm_usage(c->st, c->space, since ? since : "", add_usage, items);
    if (rc) {
        json_object_put(items);
        store_status_error(rc, "Usage", err);
        return -1;
    }
    *data = json_object_new_object();
    json_object_object_add(*data, "since", json_object_new_string(since ? since : ""));
    json_object_object_add(*data, "configured",
                           json_object_new_boolean(config_llm_configured(c->cfg)));
    json_object_object_add(*data, "items", items);
    return 0;
}

int svc_embed_backfill(const struct svc_ctx *c, struct json_object *body, struct json_object **data,
                       struct error *err)
{
    struct json_object *params = json_object_new_object();
    char id[40];
    int force = 0, existing, rc;
    if (jf_bool(err, body, "force", 0, &force)) {
        json_object_put(params);
        return -1;
    }
    if (!config_embed_configured(c->cfg)) {
        json_object_put(params);
        error_set(err, E_LLM_NOT_CONFIGURED, NULL,
                  "No embeddings server is configured (KNOWHUB_EMBED_URL is not set)");
        return -1;
    }
    json_object_object_add(params, "force", json_object_new_boolean(force));
    rc = jobs_start(c->st, c->space, "embed", params, c->actor, id, &existing);
    /* A forced backfill while a plain one waits: that one is forced (both
     * paid once). Once it runs, it answers as it is. */
    if (rc == STORE_OK && existing && force)
        store_ignore(store_job_merge(
            c->st, id, json_object_to_json_string_ext(params, JSON_C_TO_STRING_PLAIN)));
    json_object_put(params);
    if (rc != STORE_OK) {
        store_status_error(rc, "Job", err);
        return -1;
    }
    if (svc_job_get(c, id, data, err))
        return -1;
    json_object_object_add(*data, "existing", json_object_new_boolean(existing));
    return 0;
}
