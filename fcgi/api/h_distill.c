/* h_distill: POST /api/knowledge/distill-experience, the save-experience
 * flow's end, over HTTP (service/experience.c). */
#include "api/handlers.h"
#include "service/experience.h"

void h_distill_experience(struct request *req, struct response *res)
{
    http_call_body(req, res, svc_distill_experience);
}
