/* h_traces: the feedback loop over HTTP (service/traces.c): traces, their
 * knowledge log, the evaluation prompt and the evaluator's verdicts. */
#include "api/handlers.h"
#include "service/traces.h"

/* ---- POST /api/traces, GET /api/traces, GET /api/traces/{trace_id} ---- */

void h_traces_create(struct request *req, struct response *res)
{
    http_call_body(req, res, svc_trace_create);
}

void h_traces_list(struct request *req, struct response *res)
{
    struct json_object *items;
    struct svc_ctx c;
    struct error err;
    long limit, offset, total;
    if (http_query_long_or_400(req, res, "limit", 20, 1, 100, &limit) ||
        http_query_long_or_400(req, res, "offset", 0, 0, 1000000000L, &offset))
        return;
    http_svc_ctx(req, &c);
    error_init(&err);
    if (svc_trace_list(&c, limit, offset, &items, &total, &err))
        reply_error_of(res, &err);
    else
        reply_page(res, items, total, limit, offset);
    error_release(&err);
}

void h_traces_get(struct request *req, struct response *res)
{
    http_call_id(req, res, svc_trace_get);
}

/* ---- the knowledge log ---- */

/* The knowledge log, a page at a time: ?limit (1..1000, default 100) and
 * ?offset; total counts them all, so a small log is one whole page. */
static void reply_log(struct request *req, struct response *res, int pending_only)
{
    struct json_object *data = NULL;
    struct svc_ctx c;
    struct error err;
    long limit, offset;
    int rc;
    error_init(&err);
    if (svc_trace_id_check(req->params[0], &err)) {
        reply_result(res, -1, NULL, &err);
        return;
    }
    if (http_query_long_or_400(req, res, "limit", TRACE_LOG_PAGE_DEFAULT, 1, TRACE_LOG_PAGE_MAX,
                               &limit) ||
        http_query_long_or_400(req, res, "offset", 0, 0, 1000000000L, &offset))
        return;
    http_svc_ctx(req, &c);
    rc = svc_trace_log(&c, req->params[0], pending_only, limit, offset, &data, &err);
    reply_result(res, rc, data, &err);
}

void h_traces_log(struct request *req, struct response *res)
{
    reply_log(req, res, 0);
}

void h_traces_pending(struct request *req, struct response *res)
{
    reply_log(req, res, 1);
}

void h_traces_inject(struct request *req, struct response *res)
{
    struct json_object *body = http_body_json_or_400(req, res);
    struct svc_ctx c;
    struct error err;
    if (!body)
        return;
    http_svc_ctx(req, &c);
    error_init(&err);
    if (svc_trace_inject(&c, req->params[0], body, &err))
        reply_result(res, -1, NULL, &err);
    else
        reply_log(req, res, 0);
    error_release(&err);
    json_object_put(body);
}

/* ---- GET /api/traces/{trace_id}/eval_prompt ---- */

void h_traces_eval_prompt(struct request *req, struct response *res)
{
    struct json_object *data = NULL;
    struct svc_ctx c;
    struct error err;
    int rc;
    http_svc_ctx(req, &c);
    error_init(&err);
    rc = svc_trace_eval_prompt(&c, req->params[0], http_query(req, "goal"), &data, &err);
    reply_result(res, rc, data, &err);
}

/* ---- POST /api/traces/{trace_id}/evaluations ---- */

void h_traces_evaluate(struct request *req, struct response *res)
{
    http_call_id_body(req, res, svc_trace_evaluate);
}
