/* h_context: what an agent loads before it works, over HTTP
 * (service/context.c): the always-apply rules with their block, and the
 * rules block plus the knowledge relevant to a question. */
#include "api/handlers.h"
#include "service/context.h"

void h_context_rules(struct request *req, struct response *res)
{
    http_call(req, res, svc_context_rules);
}

void h_context_question(struct request *req, struct response *res)
{
    http_call_body(req, res, svc_context_question);
}
