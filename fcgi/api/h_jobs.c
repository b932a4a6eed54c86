/* h_jobs: starting slim (POST /api/knowledge/slim: dry_run answers the plan at
 * once; otherwise a job) and following jobs (GET /api/jobs, /api/jobs/{id}). */
#include "base/config.h"
#include "api/handlers.h"
#include "base/jfield.h"
#include "service/jobs.h"
#include "llm/llm.h"
#include "service/slim.h"
#include "store/store.h"
#include "base/util.h"

#include <string.h>

static void keep_job(const struct job_info *j, void *ctx)
{
    *(struct json_object **)ctx = jobs_to_json(j);
}

static void add_job(const struct job_info *j, void *ctx)
{
    json_object_array_add(ctx, jobs_to_json(j));
}

void h_knowledge_slim(struct request *req, struct response *res)
{
    struct json_object *body = http_body_json_or_400(req, res), *v, *params;
    const char *model = NULL;
    double threshold = SLIM_DEFAULT_THRESHOLD;
    int dry_run, rc;
    char id[40];
    if (!body)
        return;
    if (jf_bool_or_400(res, body, "dry_run", 0, &dry_run))
        goto out;
    if (json_object_object_get_ex(body, "threshold", &v) && v) {
        threshold = json_object_get_double(v);
        if (!(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)) ||
            threshold < 0.3 || threshold > 1.0) {
            reply_error(res, 200, E_INVALID_REQUEST, "'threshold' must be a number from 0.3 to 1");
            goto out;
        }
    }
    if (json_object_object_get_ex(body, "model", &v) && llm_model_from_json(req->cfg, v, &model)) {
        reply_error(res, 200, E_INVALID_REQUEST, "'model' is not one of the allowed models");
        goto out;
    }
    if (dry_run) {
        struct json_object *plan = NULL;
        rc = slim_plan(req->store, req->who.space, threshold, req->who.role >= ROLE_ADMIN,
                       config_llm_configured(req->cfg), &plan);
        if (rc) {
            reply_store_error(res, rc, "Knowledge");
        } else {
            json_object_object_add(plan, "dry_run", json_object_new_boolean(1));
            reply_data(res, plan);
        }
        goto out;
    }
    params = json_object_new_object();
    json_object_object_add(params, "threshold", json_object_new_double(threshold));
    /* Rules are merged only when an admin asks. */
    json_object_object_add(params, "with_rules",
                           json_object_new_boolean(req->who.role >= ROLE_ADMIN));
    if (model)
        json_object_object_add(params, "model", json_object_new_string(model));
    rc = jobs_start(req->store, req->who.space, "slim", params, req->who.actor, id);
    json_object_put(params);
    if (rc) {
        reply_store_error(res, rc, "Job");
    } else {
        struct json_object *job = NULL;
        /* Just written: should the read fail, the reply is data null, as it always was. */
        store_ignore(store_job_get(req->store, req->who.space, id, keep_job, &job));
        reply_data(res, job);
    }
out:
    json_object_put(body);
}

void h_jobs_get(struct request *req, struct response *res)
{
    struct json_object *job = NULL;
    int rc = store_job_get(req->store, req->who.space, req->params[0], keep_job, &job);
    if (rc)
        reply_store_error(res, rc, "Job");
    else
        reply_data(res, job);
}

void h_jobs_list(struct request *req, struct response *res)
{
    struct json_object *items = json_object_new_array();
    long limit;
    int rc;
    if (http_query_long_or_400(req, res, "limit", 20, 1, 100, &limit)) {
        json_object_put(items);
        return;
    }
    rc = store_job_list(req->store, req->who.space, limit, add_job, items);
    reply_items(res, rc, items, "Job");
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

void h_llm_usage(struct request *req, struct response *res)
{
    const char *since = http_query(req, "since");
    struct json_object *items;
    int rc;
    if (since && *since &&
        (strlen(since) < 10 || strspn(since, "0123456789-:T. ") != strlen(since))) {
        reply_error(res, 200, E_INVALID_REQUEST,
                    "'since' must be a UTC date or time "
                    "(YYYY-MM-DD[THH:MM:SS])");
        return;
    }
    items = json_object_new_array();
    rc = store_llm_usage(req->store, req->who.space, since ? since : "", add_usage, items);
    if (rc) {
        json_object_put(items);
        reply_store_error(res, rc, "Usage");
        return;
    }
    struct json_object *data = json_object_new_object();
    json_object_object_add(data, "since", json_object_new_string(since ? since : ""));
    json_object_object_add(data, "configured",
                           json_object_new_boolean(config_llm_configured(req->cfg)));
    json_object_object_add(data, "items", items);
    reply_data(res, data);
}
