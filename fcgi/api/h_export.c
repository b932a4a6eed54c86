/* h_export: GET /api/knowledge/export — every active entry of the space as
 * JSON Lines (the entry JSON plus its full document), streamed. */
#include "api/handlers.h"
#include "store/store.h"

#include <string.h>

static int export_line(const struct knowledge *k, void *ctx)
{
    struct request *req = ((void **)ctx)[0];
    struct response *res = ((void **)ctx)[1];
    struct json_object *o = knowledge_to_json(k, req->store);
    const char *line;
    json_object_object_add(o, "document", json_object_new_string(k->document));
    line = json_text(o);
    reply_stream_write(res, line, strlen(line));
    reply_stream_write(res, "\n", 1);
    json_object_put(o);
    return 0;
}

void h_knowledge_export(struct request *req, struct response *res)
{
    void *ctx[2] = {req, res};
    reply_stream_begin(res, "application/x-ndjson; charset=utf-8");
    /* A failure after the head has gone out can only end the stream early;
     * the missing final newline tells a reader the export is incomplete. */
    store_ignore(
        store_knowledge_scan(req->store, req->who.space, SCAN_ACTIVE, NULL, 1, export_line, ctx));
}
