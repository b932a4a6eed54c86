/* h_files: the file view's REST handlers — rules and experiences as
 * Markdown documents addressed by (category, path): limits, list, read,
 * write, rename, delete, the trash of deleted documents and the preview.
 * Each parses the JSON body and calls its service (service/files.h). */
#include "api/handlers.h"
#include "service/ctx.h"
#include "service/files.h"

/* A file-view operation on the request's JSON body. */
typedef int (*files_op)(const struct svc_ctx *c, struct json_object *body,
                        struct json_object **data, struct error *err);

/* Parse the body, run op as the caller of req, reply with its data or error. */
static void run(struct request *req, struct response *res, files_op op)
{
    struct json_object *body = http_body_json_or_400(req, res), *data = NULL;
    struct svc_ctx c;
    struct error err;
    if (!body)
        return;
    http_svc_ctx(req, &c);
    error_init(&err);
    if (op(&c, body, &data, &err))
        reply_error_of(res, &err);
    else
        reply_data(res, data);
    error_release(&err);
    json_object_put(body);
}

void h_files_limits(struct request *req, struct response *res)
{
    struct json_object *data = NULL;
    struct svc_ctx c;
    struct error err;
    http_svc_ctx(req, &c);
    error_init(&err);
    if (svc_files_limits(&c, &data, &err))
        reply_error_of(res, &err);
    else
        reply_data(res, data);
    error_release(&err);
}

void h_files_list(struct request *req, struct response *res)
{
    run(req, res, svc_files_list);
}

void h_files_read(struct request *req, struct response *res)
{
    run(req, res, svc_files_read);
}

void h_files_write(struct request *req, struct response *res)
{
    run(req, res, svc_files_write);
}

void h_files_rename(struct request *req, struct response *res)
{
    run(req, res, svc_files_rename);
}

void h_files_delete(struct request *req, struct response *res)
{
    run(req, res, svc_files_delete);
}

void h_files_trash(struct request *req, struct response *res)
{
    run(req, res, svc_files_trash);
}

/* The safe HTML of a document's body as the editor types it (nothing stored). */
void h_files_preview(struct request *req, struct response *res)
{
    run(req, res, svc_files_preview);
}
