/* h_knowledge: the entry view's REST handlers — list, create, get, update
 * (helpful/harmful cases, score, evolve feedback), delete, batch feedback,
 * cases, revisions and revert. Each parses its request and calls its
 * service (service/knowledge.h, service/revisions.h). */
#include "api/handlers.h"
#include "api/params.h"
#include "service/ctx.h"
#include "service/feedback.h"
#include "service/knowledge.h"
#include "service/revisions.h"
#include "store/store.h"

#include <string.h>

void h_knowledge_list(struct request *req, struct response *res)
{
    struct knowledge_filter f = {0};
    struct json_object *data = NULL;
    struct svc_ctx c;
    struct error err;
    if (http_query_long_or_400(req, res, "limit", 10, 1, 100, &f.limit) ||
        http_query_long_or_400(req, res, "offset", 0, 0, 1000000000L, &f.offset) ||
        knowledge_filter_from_query_or_400(req, res, &f))
        return;
    http_svc_ctx(req, &c);
    error_init(&err);
    int rc = svc_knowledge_list(&c, &f, &data, &err);
    reply_result(res, rc, data, &err);
}

void h_knowledge_create(struct request *req, struct response *res)
{
    http_call_body(req, res, svc_knowledge_create);
}

void h_knowledge_get(struct request *req, struct response *res)
{
    http_call_id(req, res, svc_knowledge_get);
}

void h_knowledge_update(struct request *req, struct response *res)
{
    http_call_id_body(req, res, svc_knowledge_update);
}

void h_knowledge_delete(struct request *req, struct response *res)
{
    http_call_id(req, res, svc_knowledge_delete);
}

void h_knowledge_batch_update(struct request *req, struct response *res)
{
    http_call_body(req, res, svc_knowledge_batch_update);
}

void h_knowledge_cases(struct request *req, struct response *res)
{
    const char *kind = http_query(req, "kind");
    struct json_object *items = NULL;
    long limit = 100, offset = 0, total = 0;
    struct svc_ctx c;
    struct error err;
    /* An unknown kind is named before any paging parameter (the service does). */
    int kind_known = kind && (strcmp(kind, "helpful") == 0 || strcmp(kind, "harmful") == 0);
    if (kind_known && (http_query_long_or_400(req, res, "limit", 100, 1, 1000, &limit) ||
                       http_query_long_or_400(req, res, "offset", 0, 0, 1000000000L, &offset)))
        return;
    http_svc_ctx(req, &c);
    error_init(&err);
    if (svc_knowledge_cases(&c, req->params[0], kind, limit, offset, &items, &total, &err))
        reply_error_of(res, &err);
    else
        reply_page(res, items, total, limit, offset);
    error_release(&err);
}

/* An entry edited without end would otherwise make an answer without end:
 * a page, the newest 100 by default. */
void h_knowledge_revisions(struct request *req, struct response *res)
{
    struct json_object *data = NULL;
    long limit, offset;
    struct svc_ctx c;
    struct error err;
    if (http_query_long_or_400(req, res, "limit", 100, 1, 1000, &limit) ||
        http_query_long_or_400(req, res, "offset", 0, 0, 1000000000L, &offset))
        return;
    http_svc_ctx(req, &c);
    error_init(&err);
    int rc = svc_knowledge_revisions(&c, req->params[0], limit, offset, &data, &err);
    reply_result(res, rc, data, &err);
}

void h_knowledge_revert(struct request *req, struct response *res)
{
    http_call_id_body(req, res, svc_knowledge_revert);
}
