/* params: the entry view's query filters and the path check's reply. */
#include "api/params.h"
#include "base/error.h"
#include "domain/knowledge.h"
#include "domain/paths.h"
#include "service/ctx.h"
#include "service/knowledge.h"
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

/* tags_type from the query: comma-separated and/or repeated. */
int knowledge_types_from_query_or_400(const struct request *req, struct response *res,
                                      unsigned *out)
{
    struct error err;
    *out = 0;
    error_init(&err);
    for (size_t i = 0; i < req->n_qp; i++) {
        if (strcmp(req->qp[i].name, "tags_type") == 0 &&
            knowledge_types_add_list(req->qp[i].value, out, &err)) {
            reply_error_of(res, &err);
            error_release(&err);
            return -1;
        }
    }
    error_release(&err);
    return 0;
}

int knowledge_filter_from_query_or_400(const struct request *req, struct response *res,
                                       struct knowledge_filter *f)
{
    if (knowledge_types_from_query_or_400(req, res, &f->types))
        return -1;
    f->category = http_query(req, "category");
    if (f->category && !*f->category)
        f->category = NULL;
    if (f->category && !category_valid(f->category)) {
        error_param_str(res, "category", f->category);
        reply_error_key(res, 200, E_INVALID_REQUEST, "invalid_category", "Invalid category: %s",
                        f->category);
        return -1;
    }
    return 0;
}
