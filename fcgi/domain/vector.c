/* vector: dot products, int8 codes and a top-k heap (vector.h). */
#include "domain/vector.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1
#endif

float vec_normalise(float *v, int dim)
{
    double s = 0;
    for (int i = 0; i < dim; i++)
        s += (double)v[i] * v[i];
    s = sqrt(s);
    if (s > 0 && isfinite(s))
        for (int i = 0; i < dim; i++)
            v[i] = (float)(v[i] / s);
    return (float)s;
}

/* Eight partial sums, so the compiler keeps eight lanes busy and the loop
 * runs at memory speed; the tail is added one by one. */
float vec_dot(const float *a, const float *b, int dim)
{
    float s[8] = {0};
    int i = 0;
    for (; i + 8 <= dim; i += 8)
        for (int j = 0; j < 8; j++)
            s[j] += a[i + j] * b[i + j];
    for (; i < dim; i++)
        s[0] += a[i] * b[i];
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

float vec_quantise(const float *v, int dim, int8_t *code)
{
    float max = 0;
    for (int i = 0; i < dim; i++)
        if (fabsf(v[i]) > max)
            max = fabsf(v[i]);
    for (int i = 0; i < dim; i++)
        code[i] = max > 0 ? (int8_t)lrintf(v[i] * 127.0f / max) : 0;
    return max / 127.0f;
}

static int32_t dot_i8_portable(const int8_t *a, const int8_t *b, int dim)
{
    int32_t s = 0;
    for (int i = 0; i < dim; i++)
        s += (int32_t)a[i] * b[i];
    return s;
}

#ifdef HAVE_AVX2_PATH
/* 16 codes at a time: widen to int16, multiply and add pairs to int32. */
__attribute__((target("avx2"))) static int32_t dot_i8_avx2(const int8_t *a, const int8_t *b,
                                                           int dim)
{
    __m256i acc = _mm256_setzero_si256();
    int i = 0;
    for (; i + 16 <= dim; i += 16) {
        __m256i x = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(a + i)));
        __m256i y = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b + i)));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(x, y));
    }
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return _mm_cvtsi128_si32(s) + dot_i8_portable(a + i, b + i, dim - i);
}
#endif

int32_t vec_dot_i8(const int8_t *a, const int8_t *b, int dim)
{
#ifdef HAVE_AVX2_PATH
    static int avx2 = -1; /* the same answer from every thread: a benign race */
    if (avx2 < 0)
        avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
    if (avx2)
        return dot_i8_avx2(a, b, dim);
#endif
    return dot_i8_portable(a, b, dim);
}

/* ---- top k ---- */

void vec_top_init(struct vec_top *t, size_t k)
{
    t->h = xcalloc(k + 1, sizeof *t->h);
    t->n = 0;
    t->k = k;
}

void vec_top_release(struct vec_top *t)
{
    free(t->h);
    t->h = NULL;
    t->n = t->k = 0;
}

/* a is worse than b: a lower score, or the same score and a later slot. */
static int worse(const struct vec_hit *a, const struct vec_hit *b)
{
    return a->score < b->score || (a->score == b->score && a->slot > b->slot);
}

static void sift_down(struct vec_hit *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && worse(&h[l], &h[m]))
            m = l;
        if (r < n && worse(&h[r], &h[m]))
            m = r;
        if (m == i)
            return;
        struct vec_hit x = h[i];
        h[i] = h[m];
        h[m] = x;
        i = m;
    }
}

void vec_top_offer(struct vec_top *t, size_t slot, float score)
{
    struct vec_hit c = {slot, score};
    if (t->k == 0)
        return;
    if (t->n < t->k) {
        size_t i = t->n++;
        t->h[i] = c;
        while (i > 0 && worse(&t->h[i], &t->h[(i - 1) / 2])) {
            struct vec_hit x = t->h[i];
            t->h[i] = t->h[(i - 1) / 2];
            t->h[(i - 1) / 2] = x;
            i = (i - 1) / 2;
        }
        return;
    }
    if (!worse(&t->h[0], &c))
        return;
    t->h[0] = c;
    sift_down(t->h, t->n, 0);
}

void vec_top_sort(struct vec_top *t)
{
    /* Heap sort with the worst at the root: popping it to the end leaves the
     * array best first. */
    for (size_t n = t->n; n > 1; n--) {
        struct vec_hit x = t->h[0];
        t->h[0] = t->h[n - 1];
        t->h[n - 1] = x;
        sift_down(t->h, n - 1, 0);
    }
}
