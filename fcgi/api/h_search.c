/* h_search: the two searches over HTTP (service/entries.c). POST
 * /api/knowledge/search is the file view's weighted search; GET
 * /api/knowledge/search is the entry view's two-stage search. */
#include "api/handlers.h"
#include "base/util.h"
#include "service/entries.h"

#include <stdlib.h>
#include <string.h>

/* ---- POST /api/knowledge/search ---- */

void h_search_files(struct request *req, struct response *res)
{
    http_call_body(req, res, svc_search_files);
}

/* ---- GET /api/knowledge/search ---- */

void h_search_entries(struct request *req, struct response *res)
{
    struct entry_query eq = {0};
    const char **types;
    struct json_object *data = NULL;
    struct svc_ctx c;
    struct error err;
    int uncacheable = 0;

    if (http_query_long_or_400(req, res, "top_k", 5, 1, 50, &eq.top_k) ||
        http_query_long_or_400(req, res, "min_score", 3, 1, 5, &eq.min_score) ||
        http_query_long_or_400(req, res, "sequence", 0, 0, 1L << 50, &eq.sequence) ||
        http_query_bool_or_400(req, res, "include_weak", &eq.include_weak) ||
        http_query_bool_or_400(req, res, "include_pending", &eq.include_pending) ||
        http_query_bool_or_400(req, res, "explain", &eq.explain))
        return;
    eq.q = http_query(req, "q");
    eq.trace_id = http_query(req, "trace_id");
    eq.goal_id = http_query(req, "goal_id");
    eq.task = http_query(req, "task");
    eq.category = http_query(req, "category");
    eq.mode = http_query(req, "mode");
    /* tags_type: comma-separated and/or repeated. */
    types = xcalloc(req->n_qp + 1, sizeof *types);
    for (size_t i = 0; i < req->n_qp; i++)
        if (strcmp(req->qp[i].name, "tags_type") == 0)
            types[eq.n_types++] = req->qp[i].value;
    eq.types = types;
    eq.uncacheable = &uncacheable;
    http_svc_ctx(req, &c);
    error_init(&err);
    if (svc_search_entries(&c, &eq, &data, &err))
        reply_error_of(res, &err);
    else
        reply_data(res, data);
    /* aged evidence moves with the clock, not with the generation */
    if (uncacheable)
        res->no_store = 1;
    error_release(&err);
    free(types);
}
