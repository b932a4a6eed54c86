/* params: query-string helpers the REST handlers share (the entry view's
 * filters) and the bridge from a service's path check to a reply. */
#ifndef KNOWHUB_PARAMS_H
#define KNOWHUB_PARAMS_H

#include "http/http.h"

struct knowledge_filter;

/* The tags_type query parameters (comma-separated and/or repeated) as a
 * bitmask, or INVALID_REQUEST written to res and -1 for an unknown type. */
int knowledge_types_from_query_or_400(const struct request *req, struct response *res,
                                      unsigned *out);

/* The tags_type and category query parameters into f (types, category: a
 * pointer into the query), or INVALID_REQUEST written to res and -1. */
int knowledge_filter_from_query_or_400(const struct request *req, struct response *res,
                                       struct knowledge_filter *f);

#endif
