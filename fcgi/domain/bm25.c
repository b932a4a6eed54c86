/* bm25: terms records and the BM25F coverage of a query (bm25.h). */
#define _GNU_SOURCE /* memrchr */
#include "domain/bm25.h"
#include "base/util.h"
#include "domain/tokenize.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Title words say most and tags next; the scenario says when an entry
 * applies; the stem of an agent's path is often a random id. Short fields
 * are barely normalised by length (a title is short by nature); a long
 * body is, so an entry does not win by being long (docs/search.md). */
const double bm25_weight[BM25_FIELDS] = {3.0, 2.0, 1.0, 1.5, 1.0};
const double bm25_b[BM25_FIELDS] = {0.3, 0.3, 0.3, 0.5, 0.75};

/* ---- records ---- */

struct occurrence {
    const char *term; /* into the gathering buffer: offsets until sorted */
    size_t off, n;
    int field;
};

struct gather {
    struct buf text; /* the terms, one after another */
    struct occurrence *occ;
    size_t n, cap;
    int field;
    long len[BM25_FIELDS];
};

static int gather_term(void *ctx, const char *token, size_t n, size_t start, size_t end)
{
    struct gather *g = ctx;
    (void)start;
    (void)end;
    /* tokens are letters, digits and _: never the record's '\t' or '\n' */
    if (g->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 256;
        g->occ = xrealloc(g->occ, g->cap * sizeof *g->occ);
    }
    g->occ[g->n].off = g->text.len;
    g->occ[g->n].n = n;
    g->occ[g->n].field = g->field;
    g->n++;
    g->len[g->field]++;
    buf_add(&g->text, token, n);
    return 0;
}

static int term_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    return c ? c : (an > bn) - (an < bn);
}

static int occurrence_cmp(const void *pa, const void *pb)
{
    const struct occurrence *a = pa, *b = pb;
    return term_cmp(a->term, a->n, b->term, b->n);
}

void bm25_record(const char *const text[BM25_FIELDS], const size_t len[BM25_FIELDS],
                 struct buf *out)
{
    struct gather g;
    memset(&g, 0, sizeof g);
    buf_init(&g.text, (size_t)1 << 26);
    for (int f = 0; f < BM25_FIELDS; f++) {
        g.field = f;
        if (text[f])
            tokenize_terms(text[f], len[f], gather_term, &g);
    }
    for (size_t i = 0; i < g.n; i++)
        g.occ[i].term = g.text.data + g.occ[i].off;
    if (g.n)
        qsort(g.occ, g.n, sizeof *g.occ, occurrence_cmp);
    buf_reset(out);
    buf_addf(out, "%ld %ld %ld %ld %ld\n", g.len[0], g.len[1], g.len[2], g.len[3], g.len[4]);
    for (size_t i = 0; i < g.n;) {
        long tf[BM25_FIELDS] = {0};
        size_t j = i;
        while (j < g.n && term_cmp(g.occ[j].term, g.occ[j].n, g.occ[i].term, g.occ[i].n) == 0)
            tf[g.occ[j++].field]++;
        buf_add(out, g.occ[i].term, g.occ[i].n);
        buf_addf(out, "\t%ld %ld %ld %ld %ld\n", tf[0], tf[1], tf[2], tf[3], tf[4]);
        i = j;
    }
    free(g.occ);
    buf_release(&g.text);
}

/* Read BM25_FIELDS numbers separated by single spaces from p; the end, or NULL. */
static const char *read_numbers(const char *p, const char *end, long v[BM25_FIELDS])
{
    for (int f = 0; f < BM25_FIELDS; f++) {
        long x = 0;
        if (p >= end || *p < '0' || *p > '9')
            return NULL;
        while (p < end && *p >= '0' && *p <= '9' && x < 100000000)
            x = 10 * x + (*p++ - '0');
        v[f] = x;
        if (f + 1 < BM25_FIELDS && (p >= end || *p++ != ' '))
            return NULL;
    }
    return p;
}

int bm25_record_lengths(const char *rec, long lens[BM25_FIELDS])
{
    const char *nl = rec ? strchr(rec, '\n') : NULL;
    if (!nl || read_numbers(rec, nl, lens) != nl) {
        memset(lens, 0, BM25_FIELDS * sizeof *lens);
        return -1;
    }
    return 0;
}

int bm25_record_tf(const char *rec, size_t rec_len, const char *term, size_t n,
                   long tf[BM25_FIELDS])
{
    const char *end = rec + rec_len, *first = rec ? memchr(rec, '\n', rec_len) : NULL;
    const char *lo, *hi;
    memset(tf, 0, BM25_FIELDS * sizeof *tf);
    if (!first)
        return 0;
    /* Binary search over the lines [lo, hi): lo and hi are line starts. */
    lo = first + 1;
    hi = end;
    while (lo < hi) {
        const char *mid = lo + (hi - lo) / 2, *line, *tab, *nl;
        int c;
        line = mid > lo ? memrchr(lo, '\n', (size_t)(mid - lo)) : NULL;
        line = line ? line + 1 : lo;
        nl = memchr(line, '\n', (size_t)(end - line));
        if (!nl)
            return 0; /* a torn record */
        tab = memchr(line, '\t', (size_t)(nl - line));
        if (!tab)
            return 0;
        c = term_cmp(term, n, line, (size_t)(tab - line));
        if (c == 0) {
            if (read_numbers(tab + 1, nl, tf) == nl)
                return 1;
            memset(tf, 0, BM25_FIELDS * sizeof *tf);
            return 0;
        }
        if (c < 0)
            hi = line;
        else
            lo = nl + 1;
    }
    return 0;
}

int bm25_record_each(const char *rec,
                     int (*each)(const char *term, size_t n, const long tf[BM25_FIELDS], void *ctx),
                     void *ctx)
{
    const char *p = rec ? strchr(rec, '\n') : NULL;
    int rc;
    if (!p)
        return 0;
    for (p++; *p;) {
        const char *tab = strchr(p, '\t'), *nl;
        long tf[BM25_FIELDS];
        if (!tab || !(nl = strchr(tab, '\n')) || read_numbers(tab + 1, nl, tf) != nl)
            return 0;
        if ((rc = each(p, (size_t)(tab - p), tf, ctx)))
            return rc;
        p = nl + 1;
    }
    return 0;
}

struct term_only {
    int (*each)(const char *term, size_t n, void *ctx);
    void *ctx;
};

static int term_only(const char *term, size_t n, const long tf[BM25_FIELDS], void *ctx)
{
    const struct term_only *t = ctx;
    (void)tf;
    return t->each(term, n, t->ctx);
}

int bm25_record_terms(const char *rec, int (*each)(const char *term, size_t n, void *ctx),
                      void *ctx)
{
    struct term_only t = {each, ctx};
    return bm25_record_each(rec, term_only, &t);
}

/* ---- scoring ---- */

void bm25_query_init(struct bm25_query *q, const char *const *terms, size_t n, const long long *df,
                     const struct bm25_stats *stats)
{
    double docs = stats->docs > BM25_MIN_DOCS ? stats->docs : BM25_MIN_DOCS;
    memset(q, 0, sizeof *q);
    q->terms = terms;
    q->n = n < BM25_MAX_TERMS ? n : BM25_MAX_TERMS;
    for (size_t i = 0; i < q->n; i++) {
        double d = (double)df[i];
        if (df[i] <= 0)
            continue; /* a term no entry holds tells no entry from another: weight 0 */
        if (d > docs)
            d = docs; /* never a negative weight */
        q->idf[i] = log(1.0 + (docs - d + 0.5) / (d + 0.5));
        q->idf_sum += q->idf[i];
    }
}

void bm25_norms(const struct bm25_stats *s, const long lens[BM25_FIELDS], double norm[BM25_FIELDS])
{
    for (int f = 0; f < BM25_FIELDS; f++) {
        double avg = s->docs > 0 ? s->total_len[f] / s->docs : 0;
        norm[f] = avg > 0 ? 1 - bm25_b[f] + bm25_b[f] * (double)lens[f] / avg : 1;
    }
}

double bm25_term_part(const struct bm25_query *q, size_t i, const double norm[BM25_FIELDS],
                      const long tf[BM25_FIELDS])
{
    double t = 0;
    for (int f = 0; f < BM25_FIELDS; f++)
        t += bm25_weight[f] * (double)tf[f] / norm[f];
    return q->idf[i] * t / (BM25_K1 + t);
}

double bm25_coverage(const struct bm25_query *q, const struct bm25_stats *s, const char *rec,
                     size_t rec_len)
{
    long lens[BM25_FIELDS];
    double norm[BM25_FIELDS], sum = 0;
    if (!rec || q->idf_sum <= 0 || bm25_record_lengths(rec, lens))
        return 0;
    bm25_norms(s, lens, norm);
    for (size_t i = 0; i < q->n; i++) {
        long tf[BM25_FIELDS];
        if (bm25_record_tf(rec, rec_len, q->terms[i], strlen(q->terms[i]), tf))
            sum += bm25_term_part(q, i, norm, tf);
    }
    return sum / q->idf_sum;
}

double bm25_coverage_bound(const struct bm25_query *q, unsigned long long mask)
{
    double sum = 0;
    if (q->idf_sum <= 0)
        return 0;
    for (size_t i = 0; i < q->n; i++)
        if (i >= 64 || (mask >> i & 1))
            sum += q->idf[i];
    return sum / q->idf_sum;
}
