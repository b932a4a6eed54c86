/* h_jobs: starting slim (POST /api/knowledge/slim: dry_run answers the plan
 * at once; otherwise a job), following jobs (GET /api/jobs, /api/jobs/{id})
 * and the LLM usage ledger, over HTTP (service/jobops.c). */
#include "api/handlers.h"
#include "service/jobops.h"

/* Reply with data (rc 0, taken) or with err (rc -1), and release err. */
static void reply_result(struct response *res, int rc, struct json_object *data, struct error *err)
{
    if (rc)
        reply_error_of(res, err);
    else
        reply_data(res, data);
    error_release(err);
}

void h_knowledge_slim(struct request *req, struct response *res)
{
    struct json_object *body = http_body_json_or_400(req, res), *data;
    struct svc_ctx c;
    struct error err;
    int rc;
    if (!body)
        return;
    http_svc_ctx(req, &c);
    error_init(&err);
    rc = svc_slim(&c, body, &data, &err);
    reply_result(res, rc, data, &err);
    json_object_put(body);
}

void h_jobs_get(struct request *req, struct response *res)
{
    struct json_object *data;
    struct svc_ctx c;
    struct error err;
    int rc;
    http_svc_ctx(req, &c);
    error_init(&err);
    rc = svc_job_get(&c, req->params[0], &data, &err);
    reply_result(res, rc, data, &err);
}

void h_jobs_list(struct request *req, struct response *res)
{
    struct json_object *data;
    struct svc_ctx c;
    struct error err;
    long limit;
    int rc;
    if (http_query_long_or_400(req, res, "limit", 20, 1, 100, &limit))
        return;
    http_svc_ctx(req, &c);
    error_init(&err);
    rc = svc_job_list(&c, limit, &data, &err);
    reply_result(res, rc, data, &err);
}

void h_llm_usage(struct request *req, struct response *res)
{
    struct json_object *data;
    struct svc_ctx c;
    struct error err;
    int rc;
    http_svc_ctx(req, &c);
    error_init(&err);
    rc = svc_llm_usage(&c, http_query(req, "since"), &data, &err);
    reply_result(res, rc, data, &err);
}
