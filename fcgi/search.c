/* search: FTS5 candidates, exact scoring, deterministic order. */
#include "search.h"
#include "buf.h"
#include "paths.h"
#include "store.h"
#include "tokenize.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

#define PASS_LIMIT 300 /* candidates taken per pass; the passes stop at this many */

/* ---- queries ---- */

static int collect_token(void *ctx, const char *token, size_t n, size_t start, size_t end)
{
    struct search_query *q = ctx;
    (void)start;
    (void)end;
    for (size_t i = 0; i < q->n; i++)
        if (strlen(q->tokens[i]) == n && memcmp(q->tokens[i], token, n) == 0)
            return 0; /* each token counts once */
    if (q->n == 64)
        return 1; /* enough for any real query */
    q->tokens = xrealloc(q->tokens, (q->n + 1) * sizeof *q->tokens);
    q->tokens[q->n++] = xstrndup(token, n);
    return 0;
}

void search_query_init(struct search_query *q, const char *query)
{
    struct buf folded;
    size_t len = query ? strlen(query) : 0, start = 0, end = len;
    memset(q, 0, sizeof *q);
    while (start < len && strchr(" \t\r\n\f\v", query[start]))
        start++;
    while (end > start && strchr(" \t\r\n\f\v", query[end - 1]))
        end--;
    buf_init(&folded, 4 * len + 16);
    tokenize_fold(query ? query + start : "", end - start, &folded);
    q->whole = buf_detach(&folded, NULL);
    tokenize(q->whole, strlen(q->whole), collect_token, q);
}

void search_query_release(struct search_query *q)
{
    for (size_t i = 0; i < q->n; i++)
        free(q->tokens[i]);
    free(q->tokens);
    free(q->whole);
    memset(q, 0, sizeof *q);
}

/* ---- scoring ---- */

/* Fold s (at most max_chars characters of it) into out. */
static void fold_prefix(const char *s, size_t max_chars, struct buf *out)
{
    size_t n = strlen(s);
    tokenize_fold(s, utf8_prefix(s, n, max_chars), out);
}

static int in_any_tag(struct json_object *tags, const char *needle, struct buf *tmp)
{
    for (size_t i = 0; tags && i < json_object_array_length(tags); i++) {
        const char *t = json_object_get_string(json_object_array_get_idx(tags, i));
        if (!t)
            continue;
        tokenize_fold(t, strlen(t), tmp);
        if (strstr(tmp->data, needle))
            return 1;
    }
    return 0;
}

double search_match_score(const struct search_query *q, const char *title, struct json_object *tags,
                          const char *stem, const char *body, const char *source,
                          struct json_object *table_names)
{
    struct buf t, s, b, tmp;
    double score = 0, n = (double)q->n;
    buf_init(&t, 1 << 20);
    buf_init(&s, 1 << 20);
    buf_init(&b, 1 << 20);
    buf_init(&tmp, 1 << 20);
    fold_prefix(title, 100000, &t);
    fold_prefix(stem, 100000, &s);
    fold_prefix(body, 200, &b);
    for (size_t i = 0; i < q->n; i++) {
        const char *tok = q->tokens[i];
        if (strstr(t.data, tok))
            score += 100 / n;
        if (in_any_tag(tags, tok, &tmp))
            score += 50 / n;
        if (strstr(s.data, tok))
            score += 30 / n;
        if (strstr(b.data, tok))
            score += 10 / n;
    }
    if (*q->whole && strstr(t.data, q->whole))
        score += 50;
    if (*q->whole && in_any_tag(tags, q->whole, &tmp))
        score += 50;
    for (size_t i = 0; table_names && i < json_object_array_length(table_names); i++) {
        const char *tn = json_object_get_string(json_object_array_get_idx(table_names, i));
        struct buf ftn;
        if (!tn || !*tn)
            continue;
        buf_init(&ftn, 4096);
        tokenize_fold(tn, strlen(tn), &ftn);
        if (in_any_tag(tags, ftn.data, &tmp))
            score += 30;
        buf_release(&ftn);
    }
    if (score > 0 && strcmp(source ? source : "manual", "manual") != 0)
        score *= 0.9;
    buf_release(&t);
    buf_release(&s);
    buf_release(&b);
    buf_release(&tmp);
    return score;
}

/* ---- candidates ---- */

struct cand {
    struct knowledge k;
    double score;
};

struct collector {
    const struct search_query *q;
    struct json_object *table_names;
    unsigned categories; /* SEARCH_* */
    int skip_always_rules;
    struct cand *c;
    size_t n, cap;
    struct buf stem;
};

static int seen(const struct collector *col, const char *id)
{
    for (size_t i = 0; i < col->n; i++)
        if (strcmp(col->c[i].k.id, id) == 0)
            return 1;
    return 0;
}

static char *dup_or_empty(const char *s)
{
    return xstrdup(s ? s : "");
}

static int take(const struct knowledge *k, void *arg)
{
    struct collector *col = arg;
    unsigned bit = strcmp(k->category, "rules") == 0 ? SEARCH_RULES : SEARCH_EXPERIENCES;
    struct json_object *tags;
    double score;
    if (!(col->categories & bit) || (col->skip_always_rules && bit == SEARCH_RULES && k->always_apply) ||
        seen(col, k->id))
        return 0;
    path_stem(k->path, &col->stem);
    tags = json_tokener_parse(k->tags ? k->tags : "[]");
    score = search_match_score(col->q, k->title, tags, col->stem.data, k->content, k->source,
                               col->table_names);
    json_object_put(tags);
    if (score <= 0)
        return 0;
    if (col->n == col->cap) {
        col->cap = col->cap ? col->cap * 2 : 64;
        col->c = xrealloc(col->c, col->cap * sizeof *col->c);
    }
    /* The row is released after this call: keep a copy of what results show. */
    struct cand *c = &col->c[col->n++];
    struct knowledge *d = &c->k;
    knowledge_init(d);
    d->id = dup_or_empty(k->id);
    d->space = dup_or_empty(k->space);
    d->category = dup_or_empty(k->category);
    d->path = dup_or_empty(k->path);
    d->title = dup_or_empty(k->title);
    d->description = dup_or_empty(k->description);
    d->tags = dup_or_empty(k->tags);
    d->types = k->types;
    d->scenario = dup_or_empty(k->scenario);
    d->content = dup_or_empty(k->content);
    d->always_apply = k->always_apply;
    d->source = dup_or_empty(k->source);
    d->urls = dup_or_empty(k->urls);
    d->agent_id = dup_or_empty(k->agent_id);
    d->message_id = dup_or_empty(k->message_id);
    d->source_ts = dup_or_empty(k->source_ts);
    d->score = k->score;
    d->helpful = k->helpful;
    d->harmful = k->harmful;
    d->irrelevant = k->irrelevant;
    d->unused = k->unused;
    d->neutral = k->neutral;
    d->status = dup_or_empty(k->status);
    d->version = k->version;
    d->created_at = dup_or_empty(k->created_at);
    d->updated_at = dup_or_empty(k->updated_at);
    c->score = score;
    return 0;
}

/* An FTS5 expression of quoted prefix terms joined by op, optionally limited
 * to columns. Quotes inside a token are doubled, so client text never
 * becomes FTS5 syntax. */
static void match_expr(char *const *tokens, size_t n, const char *op, const char *columns,
                       struct buf *out)
{
    buf_reset(out);
    if (columns)
        buf_addf(out, "{%s} : (", columns);
    for (size_t i = 0; i < n; i++) {
        if (i)
            buf_addf(out, " %s ", op);
        buf_addch(out, '"');
        for (const char *p = tokens[i]; *p; p++) {
            if (*p == '"')
                buf_addch(out, '"');
            buf_addch(out, *p);
        }
        buf_adds(out, "\"*");
    }
    if (columns)
        buf_addch(out, ')');
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

static int cand_order(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    int c;
    if (x->score != y->score)
        return x->score < y->score ? 1 : -1;
    if ((c = strcmp(y->k.updated_at, x->k.updated_at)))
        return c;
    if ((c = strcmp(x->k.category, y->k.category)))
        return c;
    return strcmp(x->k.path, y->k.path);
}

/* Gather and score candidates in passes from the most to the least
 * selective, stopping once enough are in hand; then sort. */
static int collect(struct store *st, const char *space, struct collector *col,
                   const struct knowledge_filter *filter)
{
    const struct search_query *q = col->q;
    struct buf expr;
    int rc = STORE_OK;
    buf_init(&expr, 1 << 16);
    /* Entries tagged with a table name score without any query match. */
    if (col->table_names && json_object_array_length(col->table_names) > 0) {
        struct search_query tq = {0};
        for (size_t i = 0; i < json_object_array_length(col->table_names); i++) {
            const char *tn = json_object_get_string(json_object_array_get_idx(col->table_names, i));
            if (tn)
                tokenize(tn, strlen(tn), table_token, &tq);
        }
        if (tq.n) {
            match_expr(tq.tokens, tq.n, "OR", "tags", &expr);
            rc = store_knowledge_match(st, space, expr.data, filter, PASS_LIMIT, take, col);
        }
        search_query_release(&tq);
    }
    if (q->n) {
        const struct {
            const char *op, *columns;
        } passes[] = {
            {"AND", "title tags stem"},
            {"AND", NULL},
            {"OR", "title tags stem"},
            {"OR", NULL},
        };
        size_t npasses = q->n > 1 ? 4 : 2;
        for (size_t p = 0; p < npasses && rc == STORE_OK && col->n < PASS_LIMIT; p++) {
            match_expr(q->tokens, q->n, passes[p].op, passes[p].columns, &expr);
            rc = store_knowledge_match(st, space, expr.data, filter, PASS_LIMIT, take, col);
        }
    }
    buf_release(&expr);
    if (rc == STORE_OK && col->n > 1)
        qsort(col->c, col->n, sizeof *col->c, cand_order);
    return rc;
}

static void collector_release(struct collector *col)
{
    for (size_t i = 0; i < col->n; i++)
        knowledge_release(&col->c[i].k);
    free(col->c);
    buf_release(&col->stem);
}

static int run(struct store *st, const char *space, const char *query, unsigned categories,
               int skip_always_rules, const struct knowledge_filter *filter, size_t max,
               struct json_object *table_names, void (*each)(const struct search_hit *, void *),
               void *ctx)
{
    struct search_query q;
    struct collector col = {0};
    int rc;
    if (!query || !query[strspn(query, " \t\r\n\f\v")])
        return STORE_OK; /* a blank query finds nothing, as in the reference */
    search_query_init(&q, query);
    col.q = &q;
    col.table_names = table_names;
    col.categories = categories ? categories : SEARCH_RULES | SEARCH_EXPERIENCES;
    col.skip_always_rules = skip_always_rules;
    buf_init(&col.stem, 4096);
    rc = collect(st, space, &col, filter);
    for (size_t i = 0; rc == STORE_OK && i < col.n && i < max; i++) {
        struct search_hit h = {&col.c[i].k, col.c[i].score};
        each(&h, ctx);
    }
    collector_release(&col);
    search_query_release(&q);
    return rc;
}

int search_files(struct store *st, const char *space, const char *query, unsigned categories,
                 size_t max_results, struct json_object *table_names,
                 void (*each)(const struct search_hit *, void *), void *ctx)
{
    struct knowledge_filter f = {0};
    if (categories == SEARCH_RULES)
        f.category = "rules";
    else if (categories == SEARCH_EXPERIENCES)
        f.category = "experiences";
    return run(st, space, query, categories, 1, &f, max_results, table_names, each, ctx);
}

int search_entries(struct store *st, const char *space, const char *query,
                   const struct knowledge_filter *f, size_t n,
                   void (*each)(const struct search_hit *, void *), void *ctx)
{
    return run(st, space, query, 0, 0, f, n, NULL, each, ctx);
}
