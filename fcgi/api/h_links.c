/* h_links: an entry's typed links (service/links.h): list, add, remove. */
#include "api/handlers.h"
#include "service/ctx.h"
#include "service/links.h"

void h_links_list(struct request *req, struct response *res)
{
    http_call_id(req, res, svc_links_list);
}

void h_links_add(struct request *req, struct response *res)
{
    http_call_id_body(req, res, svc_links_add);
}

void h_links_remove(struct request *req, struct response *res)
{
    struct json_object *data = NULL;
    struct svc_ctx c;
    struct error err;
    http_svc_ctx(req, &c);
    error_init(&err);
    int rc = svc_links_remove(&c, req->params[0], req->params[1], req->params[2], &data, &err);
    reply_result(res, rc, data, &err);
}
