/* search: the file view's weighted search (seed 004, REFERENCE.md section 2):
 * per query token +100/N in the title, +50/N in a tag, +30/N in the file
 * stem, +10/N in the first 200 body characters; +50 when the whole query is
 * in the title, +50 in a tag; +30 per table name found in a tag; x0.9 when
 * the source is not manual. alwaysApply rules are skipped; ties are broken
 * by updated time (newest first), then path. */
#ifndef KNOWHUB_SEARCH_H
#define KNOWHUB_SEARCH_H

#include <stddef.h>
#include <json-c/json.h>

struct store;

struct search_query {
    char **tokens; /* lower-cased keywords, owned */
    size_t n;
    char *whole;   /* the stripped, lower-cased query, owned */
};

/* Tokenize a query the way the reference does (whitespace split, stop words,
 * ASCII tokens of 2 characters or fewer dropped, mixed CJK/ASCII split). */
void search_query_init(struct search_query *q, const char *query);
void search_query_release(struct search_query *q);

/* The reference's _match_score. tags and table_names are JSON arrays of
 * strings (either may be NULL); body_prefix is the start of the body. */
double search_match_score(const struct search_query *q, const char *title, struct json_object *tags,
                          const char *stem, const char *body, const char *source,
                          struct json_object *table_names);

struct search_hit {
    const char *id;
    const char *category;
    const char *title;
    const char *path;
    const char *tags;    /* JSON array text */
    const char *source;
    const char *content; /* the body */
    const char *updated_at;
    double score;
};

/* Search the space's documents: categories is a bitmask (1 rules, 2
 * experiences; 0 = both), at most max_results hits, best first, passed to
 * each(hit, ctx). Returns a store status. */
int search_files(struct store *st, const char *space, const char *query, unsigned categories,
                 size_t max_results, struct json_object *table_names,
                 void (*each)(const struct search_hit *, void *), void *ctx);

#define SEARCH_RULES 1u
#define SEARCH_EXPERIENCES 2u

#endif
