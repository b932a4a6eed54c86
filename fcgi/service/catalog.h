/* catalog: the space's documents as an MCP client browses them (resources,
 * completion, the review prompt): a page of documents in a stable order
 * after a key, the values of a field that begin with a prefix (paths,
 * entry ids, tags, trace ids), and the documents agents wrote, newest
 * first. Read-only; every call is scoped to the caller's space. Each gives
 * its data (new objects, the caller's) and 0, or -1 with err set. */
#ifndef KNOWHUB_CATALOG_H
#define KNOWHUB_CATALOG_H

#include <json-c/json.h>

#include "base/error.h"
#include "service/ctx.h"

/* The largest page and the most completion values. */
#define CATALOG_PAGE_MAX 100
#define CATALOG_VALUES_MAX 100
/* Trace ids are completed from this many of the newest traces. */
#define CATALOG_TRACES_SCANNED 1000

/* One page of the active documents, rules first then experiences, each by
 * path in byte order: those after (after_category, after_path) (both NULL:
 * from the start), at most limit (1..CATALOG_PAGE_MAX), as [{id, category,
 * path, title, description, updated_at}] in *items; *more is 1 when
 * documents follow the page. */
int svc_catalog_page(const struct svc_ctx *c, const char *after_category, const char *after_path,
                     long limit, struct json_object **items, int *more, struct error *err);

enum catalog_field {
    CATALOG_PATHS,  /* the paths of category's documents (NULL: both categories) */
    CATALOG_IDS,    /* the ids of the active entries */
    CATALOG_TAGS,   /* the tags of the active entries (of category when not NULL) */
    CATALOG_TRACES, /* the ids of the newest CATALOG_TRACES_SCANNED traces */
};

/* The distinct values of field that begin with prefix (NULL or "": all),
 * sorted in byte order, the first max (at most CATALOG_VALUES_MAX) in
 * *values (an array of strings), how many there are in *total. */
int svc_catalog_values(const struct svc_ctx *c, enum catalog_field field, const char *category,
                       const char *prefix, size_t max, struct json_object **values, long *total,
                       struct error *err);

/* The active documents an agent wrote (source agent, distill or
 * distill-local) of category (NULL: both) that carry tag (NULL: any),
 * newest first (by created_at, then id): the first limit (1..
 * CATALOG_PAGE_MAX) as [{id, category, path, title, scenario, source,
 * score, helpful, harmful, created_at, updated_at}] in *items, how many
 * there are in *total. */
int svc_catalog_agent_written(const struct svc_ctx *c, const char *category, const char *tag,
                              long limit, struct json_object **items, long *total,
                              struct error *err);

#endif
