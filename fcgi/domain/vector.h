/* vector: the arithmetic of search by meaning. Vectors are float32, unit
 * length (normalised once, when stored), so cosine similarity is a dot
 * product. For large sets a scan may first run over int8 codes of the
 * vectors (a quarter of the bytes), then rescore its best exactly. */
#ifndef KNOWHUB_VECTOR_H
#define KNOWHUB_VECTOR_H

#include <stddef.h>
#include <stdint.h>

/* Scale v to unit length; returns its length before (0: left as it was). */
float vec_normalise(float *v, int dim);

/* a . b over dim floats. */
float vec_dot(const float *a, const float *b, int dim);

/* The int8 code of a unit vector: code[i] = round(v[i] * 127 / max|v|);
 * returns the scale that maps a code back (max|v| / 127). */
float vec_quantise(const float *v, int dim, int8_t *code);

/* a . b over dim int8 codes (AVX2 where the CPU has it). */
int32_t vec_dot_i8(const int8_t *a, const int8_t *b, int dim);

/* The k best (slot, score) offered, kept as a min-heap. */
struct vec_hit {
    size_t slot;
    float score;
};
struct vec_top {
    struct vec_hit *h;
    size_t n, k;
};
void vec_top_init(struct vec_top *t, size_t k);
void vec_top_release(struct vec_top *t);
/* Offer a candidate: kept when among the k best so far. */
void vec_top_offer(struct vec_top *t, size_t slot, float score);
/* Sort the kept hits best first (ties: lower slot first); the heap is spent. */
void vec_top_sort(struct vec_top *t);

#endif
