/* h_context: what an agent loads before it works, over HTTP
 * (service/context.c): the always-apply rules with their block, and the
 * rules block plus the knowledge relevant to a question. */
#include "api/handlers.h"
#include "service/context.h"

void h_context_rules(struct request *req, struct response *res)
{
    struct json_object *data;
    struct svc_ctx c;
    struct error err;
    http_svc_ctx(req, &c);
    error_init(&err);
    if (svc_context_rules(&c, &data, &err))
        reply_error_of(res, &err);
    else
        reply_data(res, data);
    error_release(&err);
}

void h_context_question(struct request *req, struct response *res)
{
    struct json_object *body = http_body_json_or_400(req, res), *data;
    struct svc_ctx c;
    struct error err;
    if (!body)
        return;
    http_svc_ctx(req, &c);
    error_init(&err);
    if (svc_context_question(&c, body, &data, &err))
        reply_error_of(res, &err);
    else
        reply_data(res, data);
    error_release(&err);
    json_object_put(body);
}
