/* h_review: the review queue over HTTP (service/review.c): the space's
 * policy (GET and PUT /api/review/policy), the queue (GET /api/review), a
 * proposal (GET /api/review/{id}) and its decision (POST
 * /api/review/{id}/decide). */
#include "api/handlers.h"
#include "service/ctx.h"
#include "service/review.h"

void h_review_policy_get(struct request *req, struct response *res)
{
    http_call(req, res, svc_review_policy_get);
}

void h_review_policy_set(struct request *req, struct response *res)
{
    http_call_body(req, res, svc_review_policy_set);
}

void h_review_list(struct request *req, struct response *res)
{
    struct json_object *data = NULL;
    long limit, offset;
    struct svc_ctx c;
    struct error err;
    if (http_query_long_or_400(req, res, "limit", 20, 1, REVIEW_PAGE_MAX, &limit) ||
        http_query_long_or_400(req, res, "offset", 0, 0, 1000000000L, &offset))
        return;
    http_svc_ctx(req, &c);
    error_init(&err);
    int rc = svc_review_list(&c, http_query(req, "state"), limit, offset, &data, &err);
    reply_result(res, rc, data, &err);
}

void h_review_get(struct request *req, struct response *res)
{
    http_call_id(req, res, svc_review_get);
}

void h_review_decide(struct request *req, struct response *res)
{
    http_call_id_body(req, res, svc_review_decide);
}
