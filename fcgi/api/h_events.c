/* h_events: GET /api/events, the panel's live view of its space: a
 * Server-Sent Events stream ("changed" events) that app/live.c writes after
 * this handler asked for it, so a second browser sees an edit without
 * reloading. */
#include "api/handlers.h"
#include "http/http.h"

#include <string.h>

void h_events(struct request *req, struct response *res)
{
    if (!req->accept || !strstr(req->accept, "text/event-stream")) {
        reply_error(res, 200, E_INVALID_REQUEST,
                    "GET /api/events is a Server-Sent Events stream: send Accept: "
                    "text/event-stream");
        return;
    }
    res->status = 200;
    res->done = 1;
    res->live = RESPONSE_LIVE_EVENTS;
}
