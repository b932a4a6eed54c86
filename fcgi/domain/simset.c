/* simset: texts as sets of hashed tokens and their Jaccard index. */
#include "domain/simset.h"
#include "base/util.h"
#include "domain/tokenize.h"

#include <stdlib.h>
#include <string.h>

uint64_t simset_mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

static void add_hash(struct simset *s, const char *token, size_t n)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->h = xrealloc(s->h, s->cap * sizeof *s->h);
    }
    s->h[s->n++] = hash_fnv1a(token, n);
}

static int add_token(void *ctx, const char *token, size_t n, size_t start, size_t end)
{
    (void)start;
    (void)end;
    add_hash(ctx, token, n);
    return 0;
}

void simset_add_tokens(struct simset *s, const char *text)
{
    tokenize(text, strlen(text), add_token, s);
}

void simset_add_words(struct simset *s, const char *text)
{
    const unsigned char *p = (const unsigned char *)text;
    char word[64];
    size_t n = 0;
    for (;; p++) {
        int alnum =
            (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9');
        if (alnum && n < sizeof word) {
            word[n++] = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
            continue;
        }
        if (n)
            add_hash(s, word, n);
        n = 0;
        if (!*p)
            break;
        if (*p >= 0x80) { /* one character of a non-ASCII script */
            size_t len = 1;
            while (len < 4 && (p[len] & 0xC0) == 0x80)
                len++;
            add_hash(s, (const char *)p, len);
            p += len - 1;
        } else if (alnum) {
            word[n++] = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p); /* a long word goes on */
        }
    }
}

void simset_shingle(struct simset *s, size_t k)
{
    size_t n;
    if (!s->n || k < 2)
        return;
    n = s->n >= k ? s->n - k + 1 : 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t h = simset_mix(s->h[i]);
        for (size_t j = 1; j < k && i + j < s->n; j++)
            h = simset_mix(h ^ s->h[i + j]);
        s->h[i] = h; /* s->h[i] is not read again: later shingles start after it */
    }
    s->n = n;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

size_t hashes_sort_unique(uint64_t *h, size_t n)
{
    size_t u = 0;
    if (n > 1)
        qsort(h, n, sizeof *h, cmp_u64);
    for (size_t i = 0; i < n; i++)
        if (u == 0 || h[u - 1] != h[i])
            h[u++] = h[i];
    return u;
}

size_t hashes_shared(const uint64_t *a, size_t na, const uint64_t *b, size_t nb)
{
    size_t i = 0, j = 0, both = 0;
    while (i < na && j < nb) {
        if (a[i] == b[j]) {
            both++;
            i++;
            j++;
        } else if (a[i] < b[j]) {
            i++;
        } else {
            j++;
        }
    }
    return both;
}

int hashes_has(const uint64_t *h, size_t n, uint64_t v)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && h[lo] == v;
}

void simset_finish(struct simset *s)
{
    s->n = hashes_sort_unique(s->h, s->n);
}

double simset_jaccard(const struct simset *a, const struct simset *b)
{
    size_t both;
    if (!a->n || !b->n)
        return 0;
    both = hashes_shared(a->h, a->n, b->h, b->n);
    return (double)both / (double)(a->n + b->n - both);
}

void simset_release(struct simset *s)
{
    free(s->h);
    memset(s, 0, sizeof *s);
}
