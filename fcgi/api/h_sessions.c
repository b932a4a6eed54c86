/* h_sessions: analysis sessions for the save-experience flow, over HTTP
 * (service/sessions.c). */
#include "api/handlers.h"
#include "service/sessions.h"

/* Reply with data (rc 0, taken) or with err (rc -1), and release err. */
static void reply_result(struct response *res, int rc, struct json_object *data, struct error *err)
{
    if (rc)
        reply_error_of(res, err);
    else
        reply_data(res, data);
    error_release(err);
}

void h_sessions_list(struct request *req, struct response *res)
{
    struct json_object *data;
    struct svc_ctx c;
    struct error err;
    int rc;
    http_svc_ctx(req, &c);
    error_init(&err);
    rc = svc_session_list(&c, &data, &err);
    reply_result(res, rc, data, &err);
}

void h_sessions_get(struct request *req, struct response *res)
{
    struct json_object *data;
    struct svc_ctx c;
    struct error err;
    int rc;
    http_svc_ctx(req, &c);
    error_init(&err);
    rc = svc_session_get(&c, req->params[0], &data, &err);
    reply_result(res, rc, data, &err);
}

void h_sessions_put(struct request *req, struct response *res)
{
    struct json_object *body = http_body_json_or_400(req, res), *data;
    struct svc_ctx c;
    struct error err;
    int rc;
    if (!body)
        return;
    http_svc_ctx(req, &c);
    error_init(&err);
    rc = svc_session_put(&c, body, &data, &err);
    reply_result(res, rc, data, &err);
    json_object_put(body);
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
    struct json_object *data;
    struct svc_ctx c;
    struct error err;
    int rc;
    http_svc_ctx(req, &c);
    error_init(&err);
    rc = svc_session_delete_table(&c, req->params[0], req->params[1], &data, &err);
    reply_result(res, rc, data, &err);
}
