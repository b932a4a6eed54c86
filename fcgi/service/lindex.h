/* lindex: each space's lexical index in memory, shared by every thread of
 * the process (one copy), as vindex.h holds its vectors: for each entry its
 * search row's head fields folded (what the reference score reads), its
 * field lengths and attributes, and per term the entries holding it with
 * the term's frequency in each field. A search then reads no row to rank:
 * every entry holding a query term is a candidate, its BM25F coverage is
 * summed from the postings, and the exact reference score is computed only
 * while an upper bound says the entry could still enter the wanted hits
 * (docs/search.md "The index in memory").
 *
 * Kept in step with the store by the search log (store_search_docs): a
 * search first compares the store's generation with the one the space was
 * refreshed at (no statement when the same), then the space's stamp, and
 * applies only the entries logged since. Memory is bounded
 * (lindex_configure): a space that would take the process past its budget
 * is not held, and its searches take the full-text passes instead. */
#ifndef KNOWHUB_LINDEX_H
#define KNOWHUB_LINDEX_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "domain/bm25.h"
#include "domain/score.h"

struct store;
struct lindex_space;

/* The budget of every space's index together, in bytes (0: no index in
 * memory, every search takes the passes). Called by main before threads. */
void lindex_configure(size_t total_bytes);

/* Hold space's index for a search, brought up to date with the store at
 * generation gen (store_generation, read by the caller in its snapshot),
 * into *l: NULL when the space is not held (over the budget, or the index
 * is off). Call lindex_close(*l) when not NULL. Returns a store status. */
int lindex_open(struct store *st, const char *space, uint64_t gen, struct lindex_space **l);
void lindex_close(struct lindex_space *l);

/* The space's statistics and the document frequency of each of
 * terms[0..n), as store_search_stats gives them. */
void lindex_stats(const struct lindex_space *l, const char *const *terms, size_t n,
                  struct bm25_stats *stats, long long *df);

/* One candidate as the ranking sees it: its search row's attributes and
 * its head fields folded (views into the index: valid until lindex_close). */
struct lindex_doc {
    const char *id, *category, *path, *updated_at;
    unsigned types;
    int always_apply, manual;
    const struct fields *f; /* folded title, stem, tags, body: the view's */
};

/* What a ranking asks of the candidates (service/search.c). */
struct lindex_rank {
    const struct search_query *q;
    const struct bm25_query *bq; /* q's terms weighed in the space */
    const struct bm25_stats *stats;
    const struct strlist *tables; /* folded table names (may be empty) */
    int entry_view;               /* the body field is scenario + body, else body */
    /* 1 when the entry may be a hit at all (category, types, expiry) */
    int (*admit)(const struct lindex_doc *d, void *ctx);
    /* the relevance of an entry of reference score ref and coverage cov */
    double (*relevance)(double ref, double cov, void *ctx);
    /* the score an entry must pass to enter the hits now (-inf: any) */
    double (*threshold)(void *ctx);
    /* score the entry exactly and keep it when it is among the best */
    void (*score)(const struct lindex_doc *d, double coverage, void *ctx);
    /* how many candidates scored above 0 so far */
    size_t (*positive)(void *ctx);
    size_t want;
    void *ctx;
};

/* Rank an open space's candidates: every entry holding a query term, the
 * likeliest first, until none left can pass the threshold; then, when fewer
 * than `want` scored, the entries holding a word that a query term begins
 * (and, with table names, a tag word a table name's word begins). */
void lindex_rank(struct lindex_space *l, const struct lindex_rank *r);

/* Spaces held, their entries and bytes, and the budget, for /metrics. */
void lindex_usage(size_t *spaces, size_t *entries, size_t *bytes);
size_t lindex_budget(void);

#endif
