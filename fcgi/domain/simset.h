/* simset: a text as a set of hashed tokens, and how alike two are (the
 * Jaccard index of their sets). Slim groups near-duplicates with it; the
 * context's budget collapses them. Two ways to read a text: the search
 * tokenizer's tokens (order and stop words dropped), or every word in order
 * made into shingles (order and "not" count: "enable A, disable B" and
 * "disable A, enable B" share almost nothing). */
#ifndef KNOWHUB_SIMSET_H
#define KNOWHUB_SIMSET_H

#include <stddef.h>
#include <stdint.h>

struct simset {
    uint64_t *h; /* after simset_finish: sorted, distinct */
    size_t n, cap;
};

/* Add text's tokens (domain/tokenize.h's tokenize()). */
void simset_add_tokens(struct simset *s, const char *text);
/* Add every word of text, in order: runs of ASCII letters and digits
 * (lower-cased) and each other character on its own; nothing dropped. */
void simset_add_words(struct simset *s, const char *text);
/* Turn the words added so far into shingles of k consecutive words (a text
 * shorter than k is one shingle of all its words). Before simset_finish. */
void simset_shingle(struct simset *s, size_t k);
/* Sort and drop repeats: the set is ready. */
void simset_finish(struct simset *s);
/* The Jaccard index of two finished sets, 0 when either is empty. */
double simset_jaccard(const struct simset *a, const struct simset *b);
/* The primitives under a set, for callers that keep their own arrays (the
 * conflict detector's fixed allocation): sort h[0..n) and drop repeats,
 * returning the count left; the count of values two such sorted, distinct
 * arrays share; whether one holds v (binary search). */
size_t hashes_sort_unique(uint64_t *h, size_t n);
size_t hashes_shared(const uint64_t *a, size_t na, const uint64_t *b, size_t nb);
int hashes_has(const uint64_t *h, size_t n, uint64_t v);
/* A well-mixed 64-bit hash of x (MinHash seeds, shingles). */
uint64_t simset_mix(uint64_t x);
void simset_release(struct simset *s);

#endif
