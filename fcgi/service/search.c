/* search: full-text candidates in passes, exact scoring (the reference
 * score fused with BM25F), deterministic order. */
#include "service/search.h"
#include "service/lindex.h"
#include "domain/bm25.h"
#include "domain/passage.h"
#include "domain/score.h"
#include "base/buf.h"
#include "base/config.h"
#include "base/jfield.h"
#include "domain/paths.h"
#include "store/store.h"
#include "domain/tokenize.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PASS_LIMIT 100 /* rows taken per candidate pass */
#define RARE_LIMIT 400 /* rows of the one pass over rare terms, at most */

/* ---- candidates ---- */

/* A candidate kept for the answer: what orders it (copies: the row is gone
 * after the callback) and its score; the entry is loaded at the end. */
struct cand {
    char *id, *category, *path, *updated_at;
    double score, match; /* relevance, reference match score */
};

/* The ids already scored, so a row met again in a later pass is skipped. */
struct seen {
    char **slot;
    size_t cap, n;
};

static size_t id_hash(const char *s)
{
    return (size_t)hash_fnv1a(s, strlen(s));
}

/* 1 when id is new (and now remembered), 0 when it was seen before. */
static int seen_add(struct seen *s, const char *id)
{
    size_t i;
    if (2 * (s->n + 1) > s->cap) {
        struct seen g = {xcalloc(s->cap ? 2 * s->cap : 1024, sizeof(char *)),
                         s->cap ? 2 * s->cap : 1024, s->n};
        for (size_t j = 0; j < s->cap; j++)
            if (s->slot[j]) {
                for (i = id_hash(s->slot[j]) & (g.cap - 1); g.slot[i]; i = (i + 1) & (g.cap - 1))
                    ;
                g.slot[i] = s->slot[j];
            }
        free(s->slot);
        *s = g;
    }
    for (i = id_hash(id) & (s->cap - 1); s->slot[i]; i = (i + 1) & (s->cap - 1))
        if (strcmp(s->slot[i], id) == 0)
            return 0;
    s->slot[i] = xstrdup(id);
    s->n++;
    return 1;
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void seen_release(struct seen *s)
{
    for (size_t i = 0; i < s->cap; i++)
        free(s->slot[i]);
    free(s->slot);
    memset(s, 0, sizeof *s);
}

struct collector {
    const struct search_query *q;
    enum search_ranking ranking;
    struct bm25_stats stats;      /* the space's */
    long long df[BM25_MAX_TERMS]; /* of q->terms */
    struct bm25_query bq;         /* q->terms weighed */
    struct strlist tables;        /* folded, non-empty table names */
    unsigned categories;          /* SEARCH_* */
    int skip_always_rules;        /* the file view; else the entry view */
    struct buf entry_text;        /* the entry view's scenario + body */
    size_t want;                  /* how many hits the caller wants */
    struct cand *best;            /* the best `want` so far, best first */
    size_t nbest;
    size_t positive; /* distinct rows scoring > 0 */
    size_t rows;     /* rows the current pass returned */
    struct seen seen;
    const struct knowledge_filter *filter; /* the caller's, may be NULL */
    const char *const *expired; /* the space's expired ids, sorted (store_time_expired_view) */
    size_t n_expired;
    struct fields f;
    struct buf stem;
};

/* Deterministic order: score, then updated_at (newest first), category, path. */
static int order(double sa, const char *ua, const char *ca, const char *pa, const struct cand *b)
{
    int c;
    if (sa != b->score)
        return sa < b->score ? 1 : -1;
    if ((c = strcmp(b->updated_at, ua)))
        return c;
    if ((c = strcmp(ca, b->category)))
        return c;
    return strcmp(pa, b->path);
}

static void cand_release(struct cand *c)
{
    free(c->id);
    free(c->category);
    free(c->path);
    free(c->updated_at);
}

/* Keep the row when it is among the best `want` so far (best stays sorted). */
static void keep(struct collector *col, double score, double match, const struct match_row *r)
{
    size_t at = col->nbest;
    struct cand *c;
    if (col->want == 0)
        return;
    if (col->nbest == col->want) {
        if (order(score, r->updated_at, r->category, r->path, &col->best[col->want - 1]) >= 0)
            return;
        cand_release(&col->best[col->want - 1]);
        at = --col->nbest;
    }
    while (at > 0 && order(score, r->updated_at, r->category, r->path, &col->best[at - 1]) < 0)
        at--;
    memmove(&col->best[at + 1], &col->best[at], (col->nbest - at) * sizeof *col->best);
    c = &col->best[at];
    c->id = xstrdup(r->id);
    c->category = xstrdup(r->category);
    c->path = xstrdup(r->path);
    c->updated_at = xstrdup(r->updated_at);
    c->score = score;
    c->match = match;
    col->nbest++;
}

/* A candidate's relevance from its reference score and BM25F coverage. */
static double relevance(enum search_ranking ranking, double ref, double coverage)
{
    switch (ranking) {
    case RANKING_REFERENCE:
        return ref;
    case RANKING_BM25F:
        return 100 * coverage;
    case RANKING_FUSED:
        break;
    }
    return SEARCH_REF_WEIGHT * ref + 100 * coverage;
}

/* 1 when an entry of this category, always-apply flag and id may be a hit
 * of the collector's search: its categories, the file view's rules applied
 * always left out, expired entries left out. */
static int admitted(const struct collector *col, const char *category, int always_apply,
                    const char *id)
{
    unsigned bit = strcmp(category, "rules") == 0 ? SEARCH_RULES : SEARCH_EXPERIENCES;
    return (col->categories & bit) &&
           !(col->skip_always_rules && bit == SEARCH_RULES && always_apply) &&
           !(col->n_expired &&
             bsearch(&id, col->expired, col->n_expired, sizeof *col->expired, by_text));
}

/* Keep a scored candidate when its relevance is positive (counted) and
 * among the best. */
static void consider(struct collector *col, double match, double coverage,
                     const struct match_row *r)
{
    double score = relevance(col->ranking, match, coverage);
    if (score <= 0)
        return;
    col->positive++;
    keep(col, score, match, r);
}

static int take(const struct match_row *r, void *arg)
{
    struct collector *col = arg;
    struct fields *f = &col->f;
    double match, coverage = 0;
    int manual;
    col->rows++;
    if (!admitted(col, r->category, r->always_apply, r->id) || !seen_add(&col->seen, r->id))
        return 0;
    path_stem(r->path, &col->stem);
    fold_field(&f->title, r->title, 0, &f->tmp);
    fold_field(&f->stem, col->stem.data, 0, &f->tmp);
    strlist_set_tags(&f->tags, r->tags, &f->tmp);
    manual = score_source_manual(r->source);
    if (col->ranking != RANKING_REFERENCE && r->terms)
        coverage = bm25_coverage(&col->bq, &col->stats, r->terms, strlen(r->terms));
    if (col->want > 0 && col->nbest == col->want) {
        /* The body's first 200 characters add at most 10 to the match score
         * (plus a margin for the order of the sum): a row that cannot pass
         * the last of the best even so is left without folding them (most
         * rows of a large space). */
        buf_reset(&f->body);
        match = score_folded(col->q, f, manual, &col->tables);
        if (relevance(col->ranking, match + 10 + 1e-6, coverage) < col->best[col->want - 1].score)
            return 0;
    }
    if (col->skip_always_rules) {
        fold_field(&f->body, r->body, 200, &f->tmp);
    } else {
        fold_entry_body(&f->body, r->scenario, r->body, &col->entry_text, &f->tmp);
    }
    match = score_folded(col->q, f, manual, &col->tables);
    consider(col, match, coverage, r);
    return 0;
}

/* The words of one pass: tokens[0..n) joined by op, whole or as prefixes,
 * anywhere (fields 0) or in each of the fields (MATCH_TITLE | MATCH_TAGS:
 * in the title and in the tags). */
static struct store_match_query terms(char *const *tokens, size_t n, enum match_op op, int prefix,
                                      unsigned fields)
{
    struct store_match_query mq = {.terms = (const char *const *)tokens,
                                   .n_terms = n,
                                   .op = op,
                                   .prefix = prefix,
                                   .fields = fields};
    return mq;
}

static int table_token(void *ctx, const char *token, size_t n, size_t start, size_t end)
{
    struct search_query *tq = ctx;
    (void)start;
    (void)end;
    if (tq->n < 64) {
        tq->tokens = xrealloc(tq->tokens, (tq->n + 1) * sizeof *tq->tokens);
        tq->tokens[tq->n++] = xstrndup(token, n);
    }
    return 0;
}

enum { IN_HEAD = MATCH_HEAD, IN_ALL = MATCH_ALL };

/* The query's tokens with a Han run's bigrams thinned to every other one (and
 * its last): 库存周转分析 gives 库存 周转 分析, dropping 存周 and 转分, which
 * span word boundaries and rarely occur. n is 0 when nothing is dropped. */
struct thinned {
    char *tok[64];
    size_t n, all;
    size_t prev_start, prev_end;
    size_t idx[64];
    int overlap_next[64];
};

static int thin_token(void *ctx, const char *token, size_t len, size_t start, size_t end)
{
    struct thinned *t = ctx;
    size_t i = t->all;
    (void)token;
    (void)len;
    if (i == 64)
        return 1;
    t->idx[i] = i > 0 && start > t->prev_start && start < t->prev_end ? t->idx[i - 1] + 1 : 0;
    if (i > 0)
        t->overlap_next[i - 1] = t->idx[i] > 0;
    t->overlap_next[i] = 0;
    t->prev_start = start;
    t->prev_end = end;
    t->tok[i] = xstrndup(token, len);
    t->all++;
    return 0;
}

static void thin(const struct search_query *q, struct thinned *t)
{
    size_t keep = 0;
    memset(t, 0, sizeof *t);
    tokenize_terms(q->whole, strlen(q->whole), thin_token, t);
    for (size_t i = 0; i < t->all; i++) {
        int drop = t->idx[i] % 2 == 1 && t->overlap_next[i];
        for (size_t j = 0; !drop && j < keep; j++)
            drop = strcmp(t->tok[j], t->tok[i]) == 0;
        if (drop)
            free(t->tok[i]);
        else
            t->tok[keep++] = t->tok[i];
    }
    t->n = keep;
}

static void thinned_release(struct thinned *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->tok[i]);
}

/* One pass: at most `limit` rows of one index, newest first, below the seq
 * `below` (0: all). *full is set when the pass returned every match (fewer
 * rows than the limit), *last to the seq where it stopped. */
static int pass_of(struct store *st, const char *space, struct collector *col,
                   const struct knowledge_filter *filter, int index, struct store_match_query mq,
                   long limit, long long below, int *full, long long *last)
{
    int rc;
    col->rows = 0;
    mq.index = (enum match_index)index;
    mq.f = filter;
    mq.limit = limit;
    mq.below = below;
    rc = store_knowledge_match(st, space, &mq, last, take, col);
    if (full)
        *full = col->rows < (size_t)limit;
    return rc;
}

/* A pass of at most PASS_LIMIT rows. */
static int pass(struct store *st, const char *space, struct collector *col,
                const struct knowledge_filter *filter, int index, struct store_match_query mq,
                long long below, int *full, long long *last)
{
    return pass_of(st, space, col, filter, index, mq, PASS_LIMIT, below, full, last);
}

/* When every query term is in few entries (at most PASS_LIMIT each, at
 * most RARE_LIMIT in all), one pass of all of them, any field, meets every
 * entry holding any query term: nothing the passes by field and by term
 * would meet is left. 1 when that pass ran and was complete. */
static int rare_pass(struct store *st, const char *space, struct collector *col,
                     const struct knowledge_filter *filter, int *rc)
{
    char *tok[BM25_MAX_TERMS];
    size_t n = 0;
    long long sum = 0;
    int full = 0;
    if (col->ranking == RANKING_REFERENCE || col->bq.n != col->q->n_terms)
        return 0; /* no document frequencies, or not of every term */
    for (size_t i = 0; i < col->bq.n; i++) {
        if (col->df[i] > PASS_LIMIT)
            return 0;
        if (col->df[i] > 0) {
            tok[n++] = col->q->terms[i];
            sum += col->df[i];
        }
    }
    if (n == 0 || sum > RARE_LIMIT)
        return 0;
    *rc = pass_of(st, space, col, filter, IN_ALL, terms(tok, n, MATCH_OR, 0, 0), (long)sum + 1, 0,
                  &full, NULL);
    return *rc == STORE_OK && full;
}

/* 1 when the wanted hits are in hand and the last of them scores above ub,
 * the most any entry not visited yet can score. */
static int settled(const struct collector *col, double ub)
{
    return col->want > 0 && col->nbest == col->want && col->best[col->want - 1].score > ub;
}

/* The most an entry can score whose reference score is at most ref and
 * which holds only the query terms of mask (bit i: term i). */
static double bound(const struct collector *col, double ref, unsigned long long mask)
{
    if (col->ranking == RANKING_REFERENCE)
        return ref;
    return relevance(col->ranking, ref, bm25_coverage_bound(&col->bq, mask));
}

/* Candidates from the whole text, first-class: every query term in any
 * field, then each term alone, the rarest first (the most telling, and the
 * smallest passes), each pass holding all the term's entries. An entry not
 * met yet lacks the terms passed, so once the wanted hits score above what
 * the remaining terms could give (bound), no more passes are needed. A
 * term held by more entries than a pass takes is common (a low IDF) and
 * never passed alone: entries with only common terms come through the
 * passes above (all terms, the head's). */
static int body_passes(struct store *st, const char *space, struct collector *col,
                       const struct knowledge_filter *filter)
{
    char *const *tok = col->q->terms;
    size_t n = col->bq.n, order[BM25_MAX_TERMS];
    unsigned long long unseen = n >= 64 ? ~0ULL : (1ULL << n) - 1;
    /* an entry without a query word in its head: 10 at most from the body's
     * first 200 characters, and the table names */
    double ref = 10 + 30.0 * (double)col->tables.n;
    int rc, full = 0;
    if (n > 1 &&
        (rc = pass(st, space, col, filter, IN_ALL, terms(tok, n, MATCH_AND, 0, 0), 0, NULL, NULL)))
        return rc;
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        for (; j > 0 && col->df[order[j - 1]] > col->df[i]; j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    for (size_t k = 0; k < n; k++) {
        size_t i = order[k];
        if (col->df[i] == 0) {
            unseen &= ~(1ULL << i); /* no entry holds it */
            continue;
        }
        /* the rarest first: once a common term is met, so are the rest */
        if (col->df[i] > PASS_LIMIT || settled(col, bound(col, ref, unseen)))
            break;
        if ((rc = pass(st, space, col, filter, IN_ALL, terms(&tok[i], 1, MATCH_AND, 0, 0), 0, &full,
                       NULL)))
            return rc;
        if (full)
            unseen &= ~(1ULL << i);
    }
    return STORE_OK;
}

/* Gather and score candidates in passes, the cheap and likely ones first:
 *   1. entries whose tags hold a table name (file view); then, when every
 *      query word is rare, one pass of every entry holding any of them
 *      (rare_pass) stands for 2-4 and the body passes, and only the prefix
 *      passes of 5 may follow;
 *   2. all query words in the head (title, tags, stem) of the small head
 *      index, exact words; when there are more than a pass takes, the
 *      tiers below the rows taken, from the best down (one word: title and
 *      tags, title and stem, title; more: title), so the best are not left
 *      out for being older;
 *   3. for Chinese, the words of the query without the bigrams that span
 *      them (库存周转分析: 库存 周转 分析);
 *   4. any query word in the head;
 *   5. word prefixes in the head ("qua" -> quarterly), then the same over
 *      every column (scenario and body too), while fewer than the wanted
 *      hits are in hand.
 * A pass is skipped when the wanted hits are in hand and no entry it could
 * add can score above the last of them. Every candidate is scored exactly;
 * the best `want` are kept in order. */
static int collect(struct store *st, const char *space, struct collector *col,
                   const struct knowledge_filter *filter)
{
    const struct search_query *q = col->q;
    char *const *tok = q->terms;
    double n = (double)q->n, tables = 30.0 * (double)col->tables.n;
    unsigned long long all = ~0ULL;
    /* An entry without some word in its head: at most 190/N for each other
     * word, 10/N for that one, and no whole-query bonus. */
    double partial = ((n - 1) * 190 + 10) / (n > 0 ? n : 1) + tables;
    long long last = 0;
    int rc = STORE_OK, full = 1, complete = 0;
    if (col->tables.n) {
        struct search_query tq = {0};
        for (size_t i = 0; i < col->tables.n; i++) {
            const char *tn = col->tables.text.data + col->tables.off[i];
            tokenize_terms(tn, strlen(tn), table_token, &tq);
        }
        if (tq.n)
            rc = pass(st, space, col, filter, IN_HEAD,
                      terms(tq.tokens, tq.n, MATCH_OR, 1, MATCH_TAGS), 0, NULL, NULL);
        search_query_release(&tq);
    }
    if (rc || !q->n_terms)
        goto out;
    if ((complete = rare_pass(st, space, col, filter, &rc)) || rc)
        goto rest;
    if ((rc = pass(st, space, col, filter, IN_HEAD, terms(tok, q->n_terms, MATCH_AND, 0, 0), 0,
                   &full, &last)))
        goto out;
    if (!full) {
        /* More head matches than a pass takes: their tiers, from the best
         * down, each below the rows already taken (tiers are subsets of the
         * head matches). `outside`: the most an entry left out of the tiers
         * visited so far can score, for one word. More words: the title. */
        static const struct {
            unsigned fields;
            double outside;
        } tiers[] = {
            {MATCH_TITLE | MATCH_TAGS, 190}, {MATCH_TITLE | MATCH_STEM, 160}, {MATCH_TITLE, 140}};
        for (size_t t = q->n_terms == 1 ? 0 : 2; t < sizeof tiers / sizeof *tiers; t++) {
            if ((rc = pass(st, space, col, filter, IN_HEAD,
                           terms(tok, q->n_terms, MATCH_AND, 0, tiers[t].fields), last, &full,
                           NULL)))
                goto out;
            /* A truncated tier holds more than the wanted, better than below. */
            if (!full || settled(col, bound(col, tiers[t].outside + tables, all)))
                break;
        }
    }
    if (q->n_terms > 2 && !settled(col, bound(col, partial, all))) {
        struct thinned t;
        thin(q, &t);
        if (t.n > 1 && t.n < q->n_terms)
            rc = pass(st, space, col, filter, IN_HEAD, terms(t.tok, t.n, MATCH_AND, 0, 0), 0, NULL,
                      NULL);
        thinned_release(&t);
        if (rc)
            goto out;
    }
    if (q->n_terms > 1 && !settled(col, bound(col, partial, all))) {
        if ((rc = pass(st, space, col, filter, IN_HEAD, terms(tok, q->n_terms, MATCH_OR, 0, 0), 0,
                       NULL, NULL)))
            goto out;
    }
    if (col->ranking != RANKING_REFERENCE && (rc = body_passes(st, space, col, filter)))
        goto out;
rest:
    if (rc)
        goto out;
    {
        int extensible = 0; /* a term that longer words begin with */
        for (size_t i = 0; i < q->n_terms && !extensible; i++)
            extensible = !tokenize_han_bigram(tok[i], strlen(tok[i]));
        static const struct {
            int index, prefix;
            enum match_op op;
        } rest[] = {
            {IN_HEAD, 1, MATCH_AND}, {IN_HEAD, 1, MATCH_OR}, {IN_ALL, 0, MATCH_AND},
            {IN_ALL, 0, MATCH_OR},   {IN_ALL, 1, MATCH_AND}, {IN_ALL, 1, MATCH_OR},
        };
        for (size_t p = 0; p < sizeof rest / sizeof *rest && col->positive < col->want; p++) {
            if ((q->n_terms == 1 && rest[p].op == MATCH_OR) || (complete && !rest[p].prefix) ||
                (rest[p].prefix && !extensible))
                continue; /* the same as AND; met by the rare terms' pass; the same as whole */
            if ((rc = pass(st, space, col, filter, rest[p].index,
                           terms(tok, q->n_terms, rest[p].op, rest[p].prefix, 0), 0, NULL, NULL)))
                goto out;
        }
    }
out:
    return rc;
}

static void collector_release(struct collector *col)
{
    for (size_t i = 0; i < col->nbest; i++)
        cand_release(&col->best[i]);
    free(col->best);
    seen_release(&col->seen);
    strlist_release(&col->tables);
    fields_release(&col->f);
    buf_release(&col->stem);
    buf_release(&col->entry_text);
}

/* Open col for query's best `max` candidates, the space's statistics read
 * in the open read snapshot: 0, or 1 when the query is blank (col holds
 * nothing to release but q); a store status in *rc. */
static int collector_open(struct store *st, const char *space, struct search_query *q,
                          const char *query, unsigned categories, int skip_always_rules, size_t max,
                          struct json_object *table_names, enum search_ranking ranking,
                          const struct lindex_space *mem, struct collector *col, int *rc)
{
    memset(col, 0, sizeof *col);
    fields_init(&col->f);
    strlist_init(&col->tables);
    buf_init(&col->stem, 4096);
    buf_init(&col->entry_text, 4096);
    *rc = STORE_OK;
    if (!query || !query[strspn(query, " \t\r\n\f\v")] || max == 0) {
        search_query_init(q, "");
        return 1; /* a blank query finds nothing */
    }
    search_query_init(q, query);
    col->q = q;
    col->categories = categories ? categories : SEARCH_RULES | SEARCH_EXPERIENCES;
    col->skip_always_rules = skip_always_rules;
    col->want = max;
    col->best = xcalloc(max + 1, sizeof *col->best);
    col->ranking = ranking;
    strlist_add_json(&col->tables, table_names, 1, &col->f.tmp);
    if (mem || ranking != RANKING_REFERENCE) {
        /* the index in memory names its candidates by the weighed terms:
         * weighed under every ranking */
        size_t n = q->n_terms < BM25_MAX_TERMS ? q->n_terms : BM25_MAX_TERMS;
        if (mem)
            lindex_stats(mem, (const char *const *)q->terms, n, &col->stats, col->df);
        else
            *rc = store_search_stats(st, space, (const char *const *)q->terms, n, &col->stats,
                                     col->df);
        bm25_query_init(&col->bq, (const char *const *)q->terms, n, col->df, &col->stats);
    }
    return 0;
}

/* ---- the index in memory (lindex.h) ---- */

/* admitted, and the caller's filter (which the passes' SQL applies). */
static int mem_admit(const struct lindex_doc *d, void *ctx)
{
    const struct collector *col = ctx;
    const struct knowledge_filter *f = col->filter;
    return !(f && f->types && !(d->types & f->types)) &&
           !(f && f->category && strcmp(f->category, d->category) != 0) &&
           admitted(col, d->category, d->always_apply, d->id);
}

static double mem_relevance(double ref, double cov, void *ctx)
{
    const struct collector *col = ctx;
    return relevance(col->ranking, ref, cov);
}

static double mem_threshold(void *ctx)
{
    const struct collector *col = ctx;
    return col->nbest == col->want ? col->best[col->want - 1].score : -INFINITY;
}

static void mem_score(const struct lindex_doc *d, double coverage, void *ctx)
{
    struct collector *col = ctx;
    struct match_row r = {
        .id = d->id, .category = d->category, .path = d->path, .updated_at = d->updated_at};
    consider(col, score_folded(col->q, d->f, d->manual, &col->tables), coverage, &r);
}

static size_t mem_positive(void *ctx)
{
    const struct collector *col = ctx;
    return col->positive;
}

/* The most postings of the query's terms a search ranks in memory: past
 * them (common words of a large space) each candidate is a read at random in
 * the index, and the passes, which take at most a few hundred rows, are
 * faster (docs/performance.md "The index in memory"). */
#define MEMORY_POSTINGS 8192

static int memory_worth(const struct collector *col)
{
    long long sum = 0;
    for (size_t i = 0; i < col->bq.n; i++)
        sum += col->df[i];
    return sum <= MEMORY_POSTINGS;
}

static void collect_in_memory(struct lindex_space *mem, struct collector *col)
{
    struct lindex_rank r = {col->q,
                            &col->bq,
                            &col->stats,
                            &col->tables,
                            !col->skip_always_rules,
                            mem_admit,
                            mem_relevance,
                            mem_threshold,
                            mem_score,
                            mem_positive,
                            col->want,
                            col};
    lindex_rank(mem, &r);
}

/* Collect query's best `max` candidates into col (the caller releases it
 * with collector_release). */
static int rank(struct store *st, const char *space, struct search_query *q, const char *query,
                unsigned categories, int skip_always_rules, const struct knowledge_filter *filter,
                size_t max, struct json_object *table_names, enum search_ranking ranking,
                struct collector *col, int *snapshot)
{
    struct lindex_space *mem = NULL;
    uint64_t gen = 0;
    int rc = store_generation(st, &gen);
    /* the index in memory holds what is committed: a search inside a write
     * transaction (a write's conflict check) takes the passes, which see
     * its changes */
    if (rc == STORE_OK && !store_in_transaction(st))
        rc = lindex_open(st, space, gen, &mem);
    if (rc != STORE_OK) {
        memset(col, 0, sizeof *col);
        search_query_init(q, "");
        return rc;
    }
    /* Without it, one snapshot (one read transaction) for the statistics,
     * every pass and the caller's read of the hits: the caller ends it. With
     * it, no statement but the hits' read: no transaction (on PostgreSQL its
     * BEGIN and COMMIT would be two of the search's round trips). */
    *snapshot = !mem;
    if (!mem)
        store_read_begin(st);
    if (!collector_open(st, space, q, query, categories, skip_always_rules, max, table_names,
                        ranking, mem, col, &rc) &&
        rc == STORE_OK) {
        /* Expired entries leave every search (docs/conflicts.md "Time"):
         * their ids, read once for the connection until the data or the
         * next expiry moves; none in a space that expires nothing. */
        char now[21];
        if (mem && !memory_worth(col)) {
            /* the passes, with the statistics the index gave (the store's) */
            lindex_close(mem);
            mem = NULL;
            *snapshot = 1;
            store_read_begin(st);
        }
        time_utc_iso_z(now);
        rc = store_time_expired_view(st, space, now, gen, &col->expired, &col->n_expired);
        col->filter = filter;
        if (rc == STORE_OK && mem)
            collect_in_memory(mem, col);
        else if (rc == STORE_OK)
            rc = collect(st, space, col, filter);
    }
    if (mem)
        lindex_close(mem);
    return rc;
}

static const struct search_opts default_opts = {RANKING_FUSED, 0};

struct search_opts search_opts_of(const struct config *cfg, int include_weak)
{
    struct search_opts o = {RANKING_FUSED, include_weak};
    if (cfg && cfg->ranking == CONFIG_RANKING_REFERENCE)
        o.ranking = RANKING_REFERENCE;
    else if (cfg && cfg->ranking == CONFIG_RANKING_BM25F)
        o.ranking = RANKING_BM25F;
    return o;
}

/* 1 when a hit of this score is weak under these options. */
static int weak(const struct search_opts *o, double score)
{
    return o->ranking != RANKING_REFERENCE && score < SEARCH_WEAK_FLOOR;
}

/* Hand one loaded hit (best[i]'s entry) to the caller's each. */
struct emit {
    const struct cand *best;
    const struct search_opts *opts;
    void (*each)(const struct search_hit *, void *);
    void *ctx;
};

static int emit_one(struct knowledge *k, size_t i, void *ctx)
{
    const struct emit *e = ctx;
    const struct cand *b = &e->best[i];
    struct search_hit h = {k, b->score, b->match, weak(e->opts, b->score)};
    e->each(&h, e->ctx);
    return 0;
}

static int run(struct store *st, const char *space, const char *query, unsigned categories,
               int skip_always_rules, const struct knowledge_filter *filter, size_t max,
               struct json_object *table_names, const struct search_opts *opts,
               void (*each)(const struct search_hit *, void *), void *ctx)
{
    struct search_query q;
    struct collector col;
    size_t n = 0;
    int rc, snapshot = 0;
    if (!opts)
        opts = &default_opts;
    /* the ranking and the hits in one snapshot when the ranking reads rows */
    rc = rank(st, space, &q, query, categories, skip_always_rules, filter, max, table_names,
              opts->ranking, &col, &snapshot);
    /* The hits down to the first weak one (the rest score lower still)
     * unless weak ones are wanted, loaded whole in one statement (one not
     * found is left out: without a snapshot, an entry deleted meanwhile). */
    while (rc == STORE_OK && n < col.nbest &&
           (opts->include_weak || !weak(opts, col.best[n].score)))
        n++;
    if (rc == STORE_OK && n > 0) {
        struct emit e = {col.best, opts, each, ctx};
        const char **ids = xcalloc(n, sizeof *ids);
        for (size_t i = 0; i < n; i++)
            ids[i] = col.best[i].id;
        rc = store_knowledge_get_many(st, space, ids, n, emit_one, &e);
        free(ids);
    }
    if (snapshot)
        store_read_end(st);
    collector_release(&col);
    search_query_release(&q);
    return rc;
}

/* rank, handing the ids and scores over instead of loading the entries. */
static int run_ids(struct store *st, const char *space, const char *query, unsigned categories,
                   int skip_always_rules, const struct knowledge_filter *filter, size_t max,
                   struct json_object *table_names, const struct search_opts *opts,
                   struct ranked_id **out, size_t *n)
{
    struct search_query q;
    struct collector col;
    int rc, snapshot = 0;
    if (!opts)
        opts = &default_opts;
    rc = rank(st, space, &q, query, categories, skip_always_rules, filter, max, table_names,
              opts->ranking, &col, &snapshot);
    if (snapshot)
        store_read_end(st);
    *out = xcalloc(col.nbest + 1, sizeof **out);
    *n = 0;
    for (size_t i = 0; rc == STORE_OK && i < col.nbest; i++) {
        int is_weak = weak(opts, col.best[i].score);
        if (is_weak && !opts->include_weak)
            break; /* the rest score lower still */
        (*out)[i].id = col.best[i].id;
        (*out)[i].score = col.best[i].score;
        (*out)[i].match = col.best[i].match;
        (*out)[i].weak = is_weak;
        col.best[i].id = NULL;
        *n = i + 1;
    }
    collector_release(&col);
    search_query_release(&q);
    return rc;
}

void ranked_ids_free(struct ranked_id *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(r[i].id);
    free(r);
}

static void files_filter(unsigned categories, struct knowledge_filter *f)
{
    memset(f, 0, sizeof *f);
    if (categories == SEARCH_RULES)
        f->category = "rules";
    else if (categories == SEARCH_EXPERIENCES)
        f->category = "experiences";
}

int search_files(struct store *st, const char *space, const char *query, unsigned categories,
                 size_t max_results, struct json_object *table_names,
                 const struct search_opts *opts, void (*each)(const struct search_hit *, void *),
                 void *ctx)
{
    struct knowledge_filter f;
    files_filter(categories, &f);
    return run(st, space, query, categories, 1, &f, max_results, table_names, opts, each, ctx);
}

int search_files_ids(struct store *st, const char *space, const char *query, unsigned categories,
                     size_t max_results, struct json_object *table_names,
                     const struct search_opts *opts, struct ranked_id **out, size_t *n)
{
    struct knowledge_filter f;
    files_filter(categories, &f);
    return run_ids(st, space, query, categories, 1, &f, max_results, table_names, opts, out, n);
}

int search_entries(struct store *st, const char *space, const char *query,
                   const struct knowledge_filter *f, size_t n, const struct search_opts *opts,
                   void (*each)(const struct search_hit *, void *), void *ctx)
{
    return run(st, space, query, 0, 0, f, n, NULL, opts, each, ctx);
}

int search_entries_ids(struct store *st, const char *space, const char *query,
                       const struct knowledge_filter *f, size_t n, const struct search_opts *opts,
                       struct ranked_id **out, size_t *nout)
{
    return run_ids(st, space, query, 0, 0, f, n, NULL, opts, out, nout);
}

int search_score_entries(struct store *st, const char *space, const char *query,
                         const struct knowledge *ks, size_t n, const struct search_opts *opts,
                         struct ranked_id *out)
{
    struct search_query q;
    struct collector col;
    struct buf rec;
    int rc;
    if (!opts)
        opts = &default_opts;
    for (size_t i = 0; i < n; i++)
        out[i] = (struct ranked_id){0};
    buf_init(&rec, 1 << 16);
    store_read_begin(st);
    if (!collector_open(st, space, &q, query, 0, 0, n, NULL, opts->ranking, NULL, &col, &rc) &&
        rc == STORE_OK) {
        /* each as the index would hold it: its row and its terms record */
        for (size_t i = 0; i < n; i++) {
            const struct knowledge *k = &ks[i];
            const char *text[BM25_FIELDS];
            size_t len[BM25_FIELDS];
            path_stem(k->path ? k->path : "", &col.stem);
            text[BM25_TITLE] = k->title ? k->title : "";
            text[BM25_TAGS] = k->tags ? k->tags : "[]";
            text[BM25_STEM] = col.stem.data;
            text[BM25_SCENARIO] = k->scenario ? k->scenario : "";
            text[BM25_BODY] = k->content ? k->content : "";
            for (int f = 0; f < BM25_FIELDS; f++)
                len[f] = strlen(text[f]);
            bm25_record(text, len, &rec);
            struct match_row r = {.id = k->id,
                                  .category = k->category,
                                  .path = k->path ? k->path : "",
                                  .title = text[BM25_TITLE],
                                  .tags = text[BM25_TAGS],
                                  .body = text[BM25_BODY],
                                  .scenario = text[BM25_SCENARIO],
                                  .source = k->source ? k->source : "",
                                  .updated_at = k->updated_at ? k->updated_at : "",
                                  .terms = rec.data};
            take(&r, &col);
        }
    }
    store_read_end(st);
    for (size_t b = 0; rc == STORE_OK && b < col.nbest; b++) {
        int is_weak = weak(opts, col.best[b].score);
        if (is_weak && !opts->include_weak)
            break; /* the rest score lower still */
        for (size_t i = 0; i < n; i++)
            if (!out[i].id && strcmp(ks[i].id, col.best[b].id) == 0) {
                out[i] = (struct ranked_id){.id = col.best[b].id,
                                            .score = col.best[b].score,
                                            .match = col.best[b].match,
                                            .weak = is_weak};
                col.best[b].id = NULL;
                break;
            }
    }
    buf_release(&rec);
    collector_release(&col);
    search_query_release(&q);
    return rc;
}

struct json_object *search_passage(const struct search_query *q, const char *text)
{
    struct passage p;
    struct json_object *o = json_object_new_object(), *marks = json_object_new_array();
    text = text ? text : "";
    passage_find(text, strlen(text), q->terms, q->n_terms, PASSAGE_CHARS, &p);
    json_object_object_add(o, "text",
                           json_object_new_string_len(text + p.start, (int)(p.end - p.start)));
    json_object_object_add(o, "offset", json_object_new_int64((int64_t)p.offset));
    for (size_t i = 0; i < p.n; i++) {
        struct json_object *m = json_object_new_array();
        json_object_array_add(m, json_object_new_int64((int64_t)p.hits[i].start));
        json_object_array_add(m, json_object_new_int64((int64_t)p.hits[i].length));
        json_object_array_add(marks, m);
    }
    json_object_object_add(o, "highlights", marks);
    return o;
}
