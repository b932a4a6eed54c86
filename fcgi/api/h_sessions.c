/* h_sessions: analysis sessions for the save-experience flow, over HTTP
 * (service/sessions.c). */
#include "api/handlers.h"
#include "service/sessions.h"

void h_sessions_list(struct request *req, struct response *res)
{
    http_call(req, res, svc_session_list);
}

void h_sessions_get(struct request *req, struct response *res)
{
    http_call_id(req, res, svc_session_get);
}

void h_sessions_put(struct request *req, struct response *res)
{
    http_call_body(req, res, svc_session_put);
}

void h_sessions_delete(struct request *req, struct response *res)
{
    struct svc_ctx c;
    struct error err;
    int rc;
    http_svc_ctx(req, &c);
    error_init(&err);
    rc = svc_session_delete(&c, req->params[0], &err);
    reply_result(res, rc, NULL, &err);
}

/* DELETE /api/sessions/{id}/tables/{table_id} */
void h_sessions_delete_table(struct request *req, struct response *res)
{
    struct json_object *data = NULL;
    struct svc_ctx c;
    struct error err;
    int rc;
    http_svc_ctx(req, &c);
    error_init(&err);
    rc = svc_session_delete_table(&c, req->params[0], req->params[1], &data, &err);
    reply_result(res, rc, data, &err);
}
