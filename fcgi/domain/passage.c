/* passage: the densest window of a query's terms in a text (passage.h). */
#include "domain/passage.h"
#include "base/util.h"
#include "domain/tokenize.h"

#include <stdlib.h>
#include <string.h>

/* A word of the text that is one of the query's terms. */
struct match {
    size_t start, end; /* bytes */
    size_t cstart;     /* characters before start */
    size_t clen;       /* its length in characters */
    size_t term;       /* which query term */
};

struct finder {
    const char *text;
    char *const *terms;
    size_t *lens; /* of the terms */
    size_t n_terms;
    size_t *slot; /* the terms by hash (open addressing): index + 1, 0 empty */
    size_t mask;  /* slots - 1 */
    struct token_filter filter;
    struct match *m;
    size_t n, cap;
    size_t scanned, chars; /* characters before byte `scanned` */
};

/* The slot of term[0..tn) in f->slot: the one holding it, else the empty
 * one where it would go. */
static size_t *slot_of(const struct finder *f, const char *term, size_t tn)
{
    size_t h = hash_fnv1a(term, tn) & f->mask, i;
    for (; (i = f->slot[h]); h = (h + 1) & f->mask)
        if (f->lens[i - 1] == tn && memcmp(f->terms[i - 1], term, tn) == 0)
            break;
    return &f->slot[h];
}

/* Which query term term[0..tn) is, or n_terms. */
static size_t term_index(const struct finder *f, const char *term, size_t tn)
{
    size_t i = *slot_of(f, term, tn);
    return i ? i - 1 : f->n_terms;
}

static int on_term(void *ctx, const char *token, size_t n, size_t start, size_t end)
{
    struct finder *f = ctx;
    const char *term;
    size_t t, tn;
    /* the filter let through the tokens that may be terms: stem those only */
    if (!tokenize_term(token, n, &term, &tn) || (t = term_index(f, term, tn)) == f->n_terms)
        return 0;
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 64;
        f->m = xrealloc(f->m, f->cap * sizeof *f->m);
    }
    /* tokens come in order: count characters from where the last one was */
    f->chars += utf8_length(f->text + f->scanned, start - f->scanned);
    f->scanned = start;
    f->m[f->n] = (struct match){start, end, f->chars, utf8_length(f->text + start, end - start), t};
    f->n++;
    return 0;
}

static int is_space(char c)
{
    return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

/* The best window: the most distinct terms, then the most matches, the
 * earliest on a tie; matches [*first, *last]. */
static void best_window(const struct finder *f, size_t width, size_t *first, size_t *last,
                        size_t *distinct)
{
    size_t *count = xcalloc(f->n_terms + 1, sizeof *count), d = 0, j = 0;
    size_t best_d = 0, best_n = 0;
    *first = *last = 0;
    for (size_t i = 0; i < f->n; i++) {
        /* extend j while match j ends within width characters of match i */
        while (j < f->n && f->m[j].cstart + f->m[j].clen - f->m[i].cstart <= width) {
            if (count[f->m[j].term]++ == 0)
                d++;
            j++;
        }
        if (d > best_d || (d == best_d && j - i > best_n)) {
            best_d = d;
            best_n = j - i;
            *first = i;
            *last = j - 1;
        }
        if (--count[f->m[i].term] == 0)
            d--;
    }
    *distinct = best_d;
    free(count);
}

void passage_find(const char *text, size_t len, char *const *terms, size_t n, size_t width,
                  struct passage *out)
{
    struct finder f = {.text = text, .terms = terms, .n_terms = n};
    size_t total, cs, ce, first = 0, last = 0;
    memset(out, 0, sizeof *out);
    f.lens = xcalloc(n + 1, sizeof *f.lens);
    for (f.mask = 15; f.mask < 2 * n; f.mask = 2 * f.mask + 1)
        ;
    f.slot = xcalloc(f.mask + 1, sizeof *f.slot);
    for (size_t t = 0; t < n; t++) {
        size_t *slot;
        f.lens[t] = strlen(terms[t]);
        token_filter_add(&f.filter, terms[t], f.lens[t]);
        if (!*(slot = slot_of(&f, terms[t], f.lens[t])))
            *slot = t + 1; /* a term given twice keeps its first place */
    }
    if (n)
        tokenize_only(text, len, &f.filter, on_term, &f);
    total = utf8_length(text, len);
    if (f.n) {
        size_t from, span, slack;
        best_window(&f, width, &first, &last, &out->terms);
        from = f.m[first].cstart;
        span = f.m[last].cstart + f.m[last].clen - from;
        slack = span < width ? (width - span) / 3 : 0; /* a little before, more after */
        cs = from > slack ? from - slack : 0;
    } else {
        cs = 0;
    }
    ce = cs + width < total ? cs + width : total;
    if (ce == total && total > width)
        cs = total - width < cs ? total - width : cs;
    out->start = utf8_prefix(text, len, cs); /* where character cs starts */
    out->end = utf8_prefix(text, len, ce);
    /* cut at spaces (within 30 bytes) rather than inside words */
    if (out->start > 0 && !is_space(text[out->start - 1])) {
        size_t k = out->start;
        while (k < out->end && k - out->start < 30 && !is_space(text[k]))
            k++;
        if (k < out->end && is_space(text[k]) && (!f.n || k <= f.m[first].start))
            out->start = k;
    }
    if (out->end < len && !is_space(text[out->end])) {
        size_t k = out->end;
        while (k > out->start && out->end - k < 30 && !is_space(text[k - 1]))
            k--;
        if (k > out->start && (!f.n || k >= f.m[last].end))
            out->end = k;
    }
    while (out->start < out->end && is_space(text[out->start]))
        out->start++;
    while (out->end > out->start && is_space(text[out->end - 1]))
        out->end--;
    out->offset = utf8_length(text, out->start);
    for (size_t i = 0; i < f.n; i++) {
        struct passage_hit h = {f.m[i].cstart - out->offset, f.m[i].clen};
        struct passage_hit *prev = out->n ? &out->hits[out->n - 1] : NULL;
        if (f.m[i].start < out->start || f.m[i].end > out->end)
            continue;
        if (prev && h.start <= prev->start + prev->length) {
            /* overlapping Han bigrams: one marked run */
            if (h.start + h.length > prev->start + prev->length)
                prev->length = h.start + h.length - prev->start;
        } else if (out->n < PASSAGE_MAX_HITS) {
            out->hits[out->n++] = h;
        }
    }
    free(f.m);
    free(f.lens);
    free(f.slot);
}
