/* h_time: the stale view (docs/conflicts.md "Time: expiry, review-by dates
 * and pins"): the entries expired or due for review, a page at a time. */
#include "api/handlers.h"
#include "service/ctx.h"
#include "service/timing.h"

void h_knowledge_stale(struct request *req, struct response *res)
{
    struct json_object *data = NULL;
    struct svc_ctx c;
    struct error err;
    long limit, offset;
    if (http_query_long_or_400(req, res, "limit", 50, 1, 200, &limit) ||
        http_query_long_or_400(req, res, "offset", 0, 0, 1000000000L, &offset))
        return;
    http_svc_ctx(req, &c);
    error_init(&err);
    int rc = svc_knowledge_stale(&c, limit, offset, &data, &err);
    reply_result(res, rc, data, &err);
}
