/* bm25: BM25F, the relevance of a search over every field of an entry
 * (docs/search.md "Relevance"), pure: no I/O.
 *
 * The index keeps a terms record per active entry: its field lengths (in
 * search terms, tokenize_terms) and each distinct term's frequency in each
 * field. With a space's statistics (how many entries, the mean length of
 * each field, in how many entries each term occurs) a query's terms score a
 * record by BM25F (Robertson and Zaragoza's "simple BM25F"):
 *
 *   tf~(t) = sum over fields f of  w_f * tf_f(t) / (1 - b_f + b_f * len_f / avglen_f)
 *   idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5)),  N at least BM25_MIN_DOCS
 *   coverage = sum_t idf(t) * tf~(t) / (k1 + tf~(t))  /  sum_t idf(t)
 *
 * over the query terms some entry of the space holds (a term none holds
 * weighs 0: it tells no entry from another). coverage lies in [0, 1): 0
 * when no query term is in the entry, near 1 when every term the space
 * knows is, often or in its title. */
#ifndef KNOWHUB_BM25_H
#define KNOWHUB_BM25_H

#include <stddef.h>

#include "base/buf.h"

enum bm25_field { BM25_TITLE, BM25_TAGS, BM25_STEM, BM25_SCENARIO, BM25_BODY, BM25_FIELDS };

/* The weights and length normalisation of each field, and k1. */
extern const double bm25_weight[BM25_FIELDS];
extern const double bm25_b[BM25_FIELDS];
#define BM25_K1 1.2

/* IDF counts a space as holding at least this many entries: in a space of
 * a handful, every word it holds would weigh next to nothing beside a word
 * it lacks (docs/search.md "Relevance"). */
#define BM25_MIN_DOCS 100.0

/* Most query terms a score weighs (a query's first distinct terms). */
#define BM25_MAX_TERMS 64

/* The terms record of an entry's fields (text[f] of len[f] bytes, UTF-8)
 * into out, a text:
 *   "<len title> <len tags> <len stem> <len scenario> <len body>\n"
 * then one line per distinct term, sorted bytewise:
 *   "<term>\t<tf title> <tf tags> <tf stem> <tf scenario> <tf body>\n". */
void bm25_record(const char *const text[BM25_FIELDS], const size_t len[BM25_FIELDS],
                 struct buf *out);

/* The field lengths of a record into lens; -1 when rec is not one. */
int bm25_record_lengths(const char *rec, long lens[BM25_FIELDS]);

/* The frequencies of term (n bytes) in the record rec (rec_len bytes) into
 * tf: 1 when the term is there, 0 when not (tf all 0). */
int bm25_record_tf(const char *rec, size_t rec_len, const char *term, size_t n,
                   long tf[BM25_FIELDS]);

/* Call each(term, n, tf, ctx) for every term of a record with its
 * frequency in each field, in its order; stops at a non-zero return, which
 * it returns. A torn line ends the walk. */
int bm25_record_each(const char *rec,
                     int (*each)(const char *term, size_t n, const long tf[BM25_FIELDS], void *ctx),
                     void *ctx);

/* Call each(term, n, ctx) for every term of a record, in its order; stops
 * at a non-zero return, which it returns. */
int bm25_record_terms(const char *rec, int (*each)(const char *term, size_t n, void *ctx),
                      void *ctx);

/* A space's statistics: entries, and each field's total length. */
struct bm25_stats {
    double docs;
    double total_len[BM25_FIELDS];
};

/* A query's terms weighed in a space. */
struct bm25_query {
    size_t n;
    const char *const *terms; /* borrowed */
    double idf[BM25_MAX_TERMS];
    double idf_sum;
};

/* Weigh terms[0..n) (at most BM25_MAX_TERMS are used) whose document
 * frequencies in the space are df[0..n). */
void bm25_query_init(struct bm25_query *q, const char *const *terms, size_t n, const long long *df,
                     const struct bm25_stats *stats);

/* The coverage of record rec (rec_len bytes, NULL: an entry without one
 * scores 0) for query q in a space of statistics s. */
double bm25_coverage(const struct bm25_query *q, const struct bm25_stats *s, const char *rec,
                     size_t rec_len);

/* The same in parts, for an index that keeps the frequencies itself: an
 * entry's length normalisation per field, and term i's part of the sum;
 * coverage = (the parts of the terms it holds, in term order) / idf_sum. */
void bm25_norms(const struct bm25_stats *s, const long lens[BM25_FIELDS], double norm[BM25_FIELDS]);
double bm25_term_part(const struct bm25_query *q, size_t i, const double norm[BM25_FIELDS],
                      const long tf[BM25_FIELDS]);

/* The most coverage an entry can reach holding only the terms of q whose
 * bit is set in mask (bit i: term i; terms past 63 always count). */
double bm25_coverage_bound(const struct bm25_query *q, unsigned long long mask);

#endif
