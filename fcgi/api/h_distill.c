/* h_distill: POST /api/knowledge/distill-experience, the save-experience
 * flow's end, over HTTP (service/experience.c). */
#include "api/handlers.h"
#include "service/experience.h"

void h_distill_experience(struct request *req, struct response *res)
{
    struct json_object *body = http_body_json_or_400(req, res), *data;
    struct svc_ctx c;
    struct error err;
    if (!body)
        return;
    http_svc_ctx(req, &c);
    error_init(&err);
    if (svc_distill_experience(&c, body, &data, &err))
        reply_error_of(res, &err);
    else
        reply_data(res, data);
    error_release(&err);
    json_object_put(body);
}
