/* h_overview: the home screen's overview of the caller's space (GET
 * /api/overview), over HTTP (service/overview.c). */
#include "api/handlers.h"
#include "service/overview.h"

void h_overview(struct request *req, struct response *res)
{
    http_call(req, res, svc_overview);
}
