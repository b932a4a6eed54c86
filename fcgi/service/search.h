/* search: finding knowledge (docs/search.md). Candidates come from the FTS5
 * index (tokenize.c on both sides), never from a scan; they are then scored
 * exactly:
 *   - file view: per query token +100/N in
 *     the title, +50/N in a tag, +30/N in the file stem, +10/N in the first
 *     200 body characters; +50 when the whole query is in the title, +50 in a
 *     tag; +30 per table name found in a tag; x0.9 when the source is not
 *     manual; always-apply rules skipped; ties by updated time (newest
 *     first), then category and path;
 *   - entry view stage 1 uses the same score as relevance.
 * Matching is substring matching of folded text. */
#ifndef KNOWHUB_SEARCH_H
#define KNOWHUB_SEARCH_H

#include <stddef.h>
#include <json-c/json.h>

#include "base/buf.h"
#include "domain/knowledge.h"

struct store;
struct knowledge_filter;

struct search_query {
    char **tokens; /* distinct folded tokens (tokenize.c), owned */
    size_t n;
    char *whole; /* the folded query without surrounding blanks, owned */
};

/* Tokenize a query; release with search_query_release. */
void search_query_init(struct search_query *q, const char *query);
void search_query_release(struct search_query *q);

/* The match score above over folded fields. tags and table_names are
 * JSON arrays of strings (either may be NULL). */
double search_match_score(const struct search_query *q, const char *title, struct json_object *tags,
                          const char *stem, const char *body, const char *source,
                          struct json_object *table_names);

struct search_hit {
    const struct knowledge *k; /* the whole entry */
    double score;
};

/* A hit's snippet: the first 500 characters of
 * the body without surrounding whitespace, into out. */
void search_snippet(const char *body, struct buf *out);

#define SEARCH_RULES 1u
#define SEARCH_EXPERIENCES 2u

/* File-view search: categories is a bitmask of SEARCH_* (0 = both); at most
 * max_results hits, best first, passed to each(hit, ctx). A blank query finds
 * nothing. Returns a store status. */
int search_files(struct store *st, const char *space, const char *query, unsigned categories,
                 size_t max_results, struct json_object *table_names,
                 void (*each)(const struct search_hit *, void *), void *ctx);

/* Entry-view stage 1 (lexical): the n most relevant active entries matching
 * the filter's types and category, best first. */
int search_entries(struct store *st, const char *space, const char *query,
                   const struct knowledge_filter *f, size_t n,
                   void (*each)(const struct search_hit *, void *), void *ctx);

#endif
