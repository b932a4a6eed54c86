/* h_export: GET /api/knowledge/export — every active entry of the space as
 * JSON Lines (the entry JSON plus its full document), streamed. */
#include "api/handlers.h"
#include "service/ctx.h"
#include "service/knowledge.h"

#include <string.h>

static int export_line(struct json_object *o, void *ctx)
{
    struct response *res = ctx;
    const char *line = json_text(o);
    /* the client gone: the scan stops rather than read the rest for no one */
    if (reply_stream_write(res, line, strlen(line)) || reply_stream_write(res, "\n", 1))
        return -1;
    return 0;
}

void h_knowledge_export(struct request *req, struct response *res)
{
    struct svc_ctx c;
    http_svc_ctx(req, &c);
    reply_stream_begin(res, "application/x-ndjson; charset=utf-8");
    /* The head (200) has gone out: a failure can no longer be answered, and
     * an export that just stopped would look whole (every line sent is
     * complete). It is cut off instead: the client sees an incomplete answer. */
    if (svc_knowledge_export(&c, export_line, res))
        reply_stream_fail(res);
}
