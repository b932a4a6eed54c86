/* h_context: what an agent loads before it works, over HTTP
 * (service/context.c): the always-apply rules with their block, and the
 * rules block plus the knowledge relevant to a question; both take an
 * optional budget_tokens (GET: the query string, POST: the body). */
#include "api/handlers.h"
#include "service/context.h"

void h_context_rules(struct request *req, struct response *res)
{
    struct json_object *data = NULL;
    struct svc_ctx c;
    struct error err;
    long budget;
    int rc;
    if (http_query_long_or_400(req, res, "budget_tokens", 0, CONTEXT_BUDGET_MIN, CONTEXT_BUDGET_MAX,
                               &budget))
        return;
    http_svc_ctx(req, &c);
    error_init(&err);
    rc = svc_context_rules(&c, budget, &data, &err);
    reply_result(res, rc, data, &err);
}

void h_context_question(struct request *req, struct response *res)
{
    http_call_body(req, res, svc_context_question);
}
