/* search: finding knowledge (docs/search.md). Candidates come from the FTS5
 * index (tokenize.c on both sides), never from a scan; they are then scored
 * exactly by the match score (domain/score.h):
 *   - file view: always-apply rules skipped; ties by updated time (newest
 *     first), then category and path;
 *   - entry view stage 1 uses the same score as relevance. */
#ifndef KNOWHUB_SEARCH_H
#define KNOWHUB_SEARCH_H

#include <stddef.h>
#include <json-c/json.h>

#include "base/buf.h"
#include "domain/knowledge.h"
#include "domain/score.h"

struct store;
struct knowledge_filter;

struct search_hit {
    const struct knowledge *k; /* the whole entry */
    double score;
};

#define SEARCH_RULES 1u
#define SEARCH_EXPERIENCES 2u

/* File-view search: categories is a bitmask of SEARCH_* (0 = both); at most
 * max_results hits, best first, passed to each(hit, ctx). A blank query finds
 * nothing. Returns a store status. */
int search_files(struct store *st, const char *space, const char *query, unsigned categories,
                 size_t max_results, struct json_object *table_names,
                 void (*each)(const struct search_hit *, void *), void *ctx);

/* An entry id with its match score, for a caller that loads the entries
 * itself (the fusion with vector hits, service/hybrid.c). */
struct ranked_id {
    char *id; /* owned */
    double score;
};
void ranked_ids_free(struct ranked_id *r, size_t n);

/* search_files as ids and scores, best first, into *out (caller frees). */
int search_files_ids(struct store *st, const char *space, const char *query, unsigned categories,
                     size_t max_results, struct json_object *table_names, struct ranked_id **out,
                     size_t *n);

/* Entry-view stage 1 (lexical): the n most relevant active entries matching
 * the filter's types and category, best first. */
int search_entries(struct store *st, const char *space, const char *query,
                   const struct knowledge_filter *f, size_t n,
                   void (*each)(const struct search_hit *, void *), void *ctx);
/* search_entries as ids and scores into *out
 * (caller frees). */
int search_entries_ids(struct store *st, const char *space, const char *query,
                       const struct knowledge_filter *f, size_t n, struct ranked_id **out,
                       size_t *nout);

#endif
