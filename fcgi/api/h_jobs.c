/* h_jobs: starting slim (POST /api/knowledge/slim: dry_run answers the plan
 * at once; otherwise a job), following jobs (GET /api/jobs, /api/jobs/{id})
 * and the LLM usage ledger, over HTTP (service/jobops.c). */
#include "api/handlers.h"
#include "service/jobops.h"

void h_knowledge_slim(struct request *req, struct response *res)
{
    http_call_body(req, res, svc_slim);
}

void h_jobs_get(struct request *req, struct response *res)
{
    http_call_id(req, res, svc_job_get);
}

void h_jobs_list(struct request *req, struct response *res)
{
    struct json_object *data = NULL;
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
    struct json_object *data = NULL;
    struct svc_ctx c;
    struct error err;
    int rc;
    http_svc_ctx(req, &c);
    error_init(&err);
    rc = svc_llm_usage(&c, http_query(req, "since"), &data, &err);
    reply_result(res, rc, data, &err);
}
