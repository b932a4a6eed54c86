/* h_files: the file view's REST handlers — rules and experiences as
 * Markdown documents addressed by (category, path): limits, list, read,
 * write, rename, delete, the trash of deleted documents and the preview.
 * Each parses the JSON body and calls its service (service/files.h). */
#include "api/handlers.h"
#include "service/ctx.h"
#include "service/files.h"

void h_files_limits(struct request *req, struct response *res)
{
    http_call(req, res, svc_files_limits);
}

void h_files_list(struct request *req, struct response *res)
{
    http_call_body(req, res, svc_files_list);
}

void h_files_read(struct request *req, struct response *res)
{
    http_call_body(req, res, svc_files_read);
}

void h_files_write(struct request *req, struct response *res)
{
    http_call_body(req, res, svc_files_write);
}

void h_files_rename(struct request *req, struct response *res)
{
    http_call_body(req, res, svc_files_rename);
}

void h_files_delete(struct request *req, struct response *res)
{
    http_call_body(req, res, svc_files_delete);
}

void h_files_trash(struct request *req, struct response *res)
{
    http_call_body(req, res, svc_files_trash);
}

/* The safe HTML of a document's body as the editor types it (nothing stored). */
void h_files_preview(struct request *req, struct response *res)
{
    http_call_body(req, res, svc_files_preview);
}
