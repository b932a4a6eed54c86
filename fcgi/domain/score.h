/* score: the match score of the searches (docs/search.md), pure: no I/O.
 * Per query token (N of them) +100/N in the title, +50/N in a tag, +30/N in
 * the file stem, +10/N in the first 200 body characters; +50 when the whole
 * query is in the title, +50 in a tag; +30 per table name found in a tag;
 * x0.9 when the source is not manual. Matching is substring matching of
 * folded text (tokenize.c folds). */
#ifndef KNOWHUB_SCORE_H
#define KNOWHUB_SCORE_H

#include <stddef.h>
#include <json-c/json.h>

#include "base/buf.h"

#define FIELD_MAX (1 << 24) /* bound of one folded field */

struct search_query {
    char **tokens; /* distinct folded tokens (tokenize()), owned: the reference score's */
    size_t n;
    char *whole;  /* the folded query without surrounding blanks, owned */
    char **terms; /* distinct search terms (tokenize_terms(): stemmed), owned */
    size_t n_terms;
};

/* Tokenize a query; release with search_query_release. */
void search_query_init(struct search_query *q, const char *query);
void search_query_release(struct search_query *q);

/* The match score over the fields as given (folded here). tags and
 * table_names are JSON arrays of strings (either may be NULL). */
double search_match_score(const struct search_query *q, const char *title, struct json_object *tags,
                          const char *stem, const char *body, const char *source,
                          struct json_object *table_names);

/* A hit's snippet: the first 500 characters of the body without
 * surrounding whitespace, into out. */
void search_snippet(const char *body, struct buf *out);

/* Folded strings kept one after another (each NUL-terminated) in one buffer;
 * init, empty, release. */
struct strlist {
    struct buf text;
    size_t *off;
    size_t n, cap;
};
void strlist_init(struct strlist *l);
void strlist_reset(struct strlist *l);
void strlist_release(struct strlist *l);
/* Add the folded s[0..len); tmp is scratch space. */
void strlist_add(struct strlist *l, const char *s, size_t len, struct buf *tmp);
/* Add the strings of a JSON array (json_object_get_string of each non-null;
 * empty ones skipped with skip_empty). */
void strlist_add_json(struct strlist *l, struct json_object *arr, int skip_empty, struct buf *tmp);
/* Replace the list with the tags of a stored entry (JSON array text). */
void strlist_set_tags(struct strlist *l, const char *json, struct buf *tmp);

/* out = the folded first max_chars characters of s (0: all of it); s is
 * valid UTF-8 or NULL (empty). */
void fold_field(struct buf *out, const char *s, size_t max_chars, struct buf *tmp);

/* The entry view's scored body into out: an agent's scenario says when the
 * knowledge applies, so it leads: the first 200 characters of scenario, a
 * newline and body, folded (joined and tmp: scratch space). */
void fold_entry_body(struct buf *out, const char *scenario, const char *body, struct buf *joined,
                     struct buf *tmp);

/* One candidate's folded fields, reused from candidate to candidate. */
struct fields {
    struct buf title, stem, body, tmp;
    struct strlist tags;
};
void fields_init(struct fields *f);
void fields_release(struct fields *f);

/* The match score over folded fields; manual: the source is manual;
 * tables: folded table names (may be NULL). */
double score_folded(const struct search_query *q, const struct fields *f, int manual,
                    const struct strlist *tables);
/* 1 when an entry of this source (NULL: manual) is not scaled down. */
int score_source_manual(const char *source);

#endif
