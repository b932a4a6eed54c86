/* search: the file view's weighted search over the space's documents. */
#include "search.h"
#include "buf.h"
#include "paths.h"
#include "store.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

static const char *const stop_words[] = {
    "a", "an", "the", "is", "are", "was", "were", "be", "been", "being", "have", "has", "had",
    "do", "does", "did", "will", "would", "shall", "should", "may", "might", "must", "can",
    "could", "i", "me", "my", "we", "our", "you", "your", "he", "him", "his", "she", "her", "it",
    "its", "they", "them", "their", "what", "which", "who", "whom", "this", "that", "these",
    "those", "am", "if", "or", "but", "not", "no", "nor", "so", "too", "very", "and", "as", "at",
    "by", "for", "from", "in", "into", "of", "on", "to", "up", "with", "about", "after",
    "before", "between", "down", "during", "each", "few", "more", "most", "other", "some",
    "such", "than", "then", "how", "when", "where", "why", "all", "any", "both", "every",
    "here", "there", "just", "only", "also", "over", "own", "same", "out", "show", "find",
    "get", "use", "make", "help", "let", "want", "need", "please", "like", "using", "used",
};

static int is_stop_word(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof stop_words / sizeof *stop_words; i++)
        if (strlen(stop_words[i]) == n && memcmp(stop_words[i], s, n) == 0)
            return 1;
    return 0;
}

/* Lower-case ASCII letters in place (Unicode letters are left as they are). */
static void ascii_lower(char *s)
{
    for (; *s; s++)
        if (*s >= 'A' && *s <= 'Z')
            *s = (char)(*s - 'A' + 'a');
}

static void add_token(struct search_query *q, const char *s, size_t n)
{
    q->tokens = xrealloc(q->tokens, (q->n + 1) * sizeof *q->tokens);
    q->tokens[q->n++] = xstrndup(s, n);
}

/* Decode one UTF-8 code point at s (valid UTF-8 assumed); returns its length. */
static size_t utf8_decode(const unsigned char *s, unsigned *cp)
{
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if (s[0] < 0xE0) {
        *cp = ((s[0] & 0x1Fu) << 6) | (s[1] & 0x3Fu);
        return 2;
    }
    if (s[0] < 0xF0) {
        *cp = ((s[0] & 0x0Fu) << 12) | ((s[1] & 0x3Fu) << 6) | (s[2] & 0x3Fu);
        return 3;
    }
    *cp = ((s[0] & 0x07u) << 18) | ((s[1] & 0x3Fu) << 12) | ((s[2] & 0x3Fu) << 6) |
          (s[3] & 0x3Fu);
    return 4;
}

static int is_cjk(unsigned cp)
{
    return (cp >= 0x2E80 && cp <= 0x9FFF) || (cp >= 0xF900 && cp <= 0xFAFF) ||
           (cp >= 0x20000 && cp <= 0x2FA1F);
}

static int is_word_ascii(unsigned cp)
{
    return (cp >= 'a' && cp <= 'z') || (cp >= '0' && cp <= '9') || cp == '_';
}

/* Split a mixed token into CJK runs and [a-z0-9_]+ runs; drop the rest. */
static void split_mixed(struct search_query *q, const char *t, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned cp;
        size_t k = utf8_decode((const unsigned char *)t + i, &cp), start = i;
        int cjk = is_cjk(cp);
        if (!cjk && !is_word_ascii(cp)) {
            i += k;
            continue;
        }
        while (i < n) {
            k = utf8_decode((const unsigned char *)t + i, &cp);
            if (cjk ? !is_cjk(cp) : !is_word_ascii(cp))
                break;
            i += k;
        }
        if (is_stop_word(t + start, i - start) || (!cjk && i - start <= 2))
            continue;
        add_token(q, t + start, i - start);
    }
}

void search_query_init(struct search_query *q, const char *query)
{
    char *lower = xstrdup(query ? query : "");
    const char *p = lower;
    size_t start, end;
    memset(q, 0, sizeof *q);
    ascii_lower(lower);
    start = strspn(lower, " \t\r\n\f\v");
    end = strlen(lower);
    while (end > start && strchr(" \t\r\n\f\v", lower[end - 1]))
        end--;
    q->whole = xstrndup(lower + start, end - start);
    while (*p) {
        size_t n, has_non_ascii = 0, has_alnum = 0;
        p += strspn(p, " \t\r\n\f\v");
        n = strcspn(p, " \t\r\n\f\v");
        if (!n)
            break;
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)p[i];
            has_non_ascii |= c >= 0x80;
            has_alnum |= (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        }
        if (!is_stop_word(p, n)) {
            if (has_non_ascii && has_alnum)
                split_mixed(q, p, n);
            else if (has_non_ascii || n > 2)
                add_token(q, p, n);
        }
        p += n;
    }
    free(lower);
}

void search_query_release(struct search_query *q)
{
    for (size_t i = 0; i < q->n; i++)
        free(q->tokens[i]);
    free(q->tokens);
    free(q->whole);
    memset(q, 0, sizeof *q);
}

/* Case-insensitive (ASCII) containment of needle in hay. */
static int contains(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    if (n == 0)
        return 1;
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i]) {
            char a = hay[i], b = needle[i];
            if (a >= 'A' && a <= 'Z')
                a = (char)(a - 'A' + 'a');
            if (a != b)
                break;
            i++;
        }
        if (i == n)
            return 1;
    }
    return 0;
}

static int in_any_tag(struct json_object *tags, const char *needle)
{
    for (size_t i = 0; tags && i < json_object_array_length(tags); i++) {
        const char *t = json_object_get_string(json_object_array_get_idx(tags, i));
        if (t && contains(t, needle))
            return 1;
    }
    return 0;
}

double search_match_score(const struct search_query *q, const char *title, struct json_object *tags,
                          const char *stem, const char *body, const char *source,
                          struct json_object *table_names)
{
    double score = 0, n = (double)q->n;
    size_t body_len = strlen(body);
    char *prefix = xstrndup(body, utf8_prefix(body, body_len, 200));
    for (size_t i = 0; i < q->n; i++) {
        const char *t = q->tokens[i];
        if (contains(title, t))
            score += 100 / n;
        if (in_any_tag(tags, t))
            score += 50 / n;
        if (contains(stem, t))
            score += 30 / n;
        if (contains(prefix, t))
            score += 10 / n;
    }
    free(prefix);
    if (*q->whole && contains(title, q->whole))
        score += 50;
    if (*q->whole && in_any_tag(tags, q->whole))
        score += 50;
    for (size_t i = 0; table_names && i < json_object_array_length(table_names); i++) {
        char *tn = xstrdup(json_object_get_string(json_object_array_get_idx(table_names, i)));
        ascii_lower(tn);
        if (in_any_tag(tags, tn))
            score += 30;
        free(tn);
    }
    if (score > 0 && strcmp(source ? source : "manual", "manual") != 0)
        score *= 0.9;
    return score;
}

/* ---- searching the store ---- */

struct hit {
    struct knowledge k;
    double score;
};

struct scan_ctx {
    const struct search_query *q;
    struct json_object *table_names;
    unsigned categories;
    struct hit *hits;
    size_t n, cap;
    struct buf stem;
};

static int hit_order(const void *a, const void *b)
{
    const struct hit *x = a, *y = b;
    int c;
    if (x->score != y->score)
        return x->score < y->score ? 1 : -1;
    if ((c = strcmp(y->k.updated_at, x->k.updated_at)))
        return c;
    if ((c = strcmp(x->k.category, y->k.category)))
        return c;
    return strcmp(x->k.path, y->k.path);
}

static int scan_one(const struct knowledge *k, void *arg)
{
    struct scan_ctx *c = arg;
    unsigned bit = strcmp(k->category, "rules") == 0 ? SEARCH_RULES : SEARCH_EXPERIENCES;
    struct json_object *tags;
    double score;
    if (!(c->categories & bit) || (bit == SEARCH_RULES && k->always_apply))
        return 0;
    path_stem(k->path, &c->stem);
    tags = json_tokener_parse(k->tags ? k->tags : "[]");
    score = search_match_score(c->q, k->title, tags, c->stem.data, k->content, k->source,
                               c->table_names);
    json_object_put(tags);
    if (score <= 0)
        return 0;
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 32;
        c->hits = xrealloc(c->hits, c->cap * sizeof *c->hits);
    }
    /* Keep a copy: the scan releases its row after this call. */
    struct hit *h = &c->hits[c->n++];
    knowledge_init(&h->k);
    h->k.id = xstrdup(k->id);
    h->k.category = xstrdup(k->category);
    h->k.title = xstrdup(k->title);
    h->k.path = xstrdup(k->path);
    h->k.tags = xstrdup(k->tags ? k->tags : "[]");
    h->k.source = xstrdup(k->source);
    h->k.content = xstrdup(k->content);
    h->k.updated_at = xstrdup(k->updated_at);
    h->score = score;
    return 0;
}

int search_files(struct store *st, const char *space, const char *query, unsigned categories,
                 size_t max_results, struct json_object *table_names,
                 void (*each)(const struct search_hit *, void *), void *ctx)
{
    struct search_query q;
    struct scan_ctx c = {0};
    int rc;
    if (!query || !query[strspn(query, " \t\r\n\f\v")])
        return STORE_OK; /* a blank query finds nothing, as in the reference */
    search_query_init(&q, query);
    c.q = &q;
    c.table_names = table_names;
    c.categories = categories ? categories : SEARCH_RULES | SEARCH_EXPERIENCES;
    buf_init(&c.stem, 1024);
    rc = store_knowledge_scan(st, space, SCAN_ACTIVE, NULL, 0, scan_one, &c);
    if (rc == STORE_OK) {
        qsort(c.hits, c.n, sizeof *c.hits, hit_order);
        for (size_t i = 0; i < c.n && i < max_results; i++) {
            struct search_hit h = {c.hits[i].k.id,     c.hits[i].k.category, c.hits[i].k.title,
                                   c.hits[i].k.path,   c.hits[i].k.tags,     c.hits[i].k.source,
                                   c.hits[i].k.content, c.hits[i].k.updated_at, c.hits[i].score};
            each(&h, ctx);
        }
    }
    for (size_t i = 0; i < c.n; i++)
        knowledge_release(&c.hits[i].k);
    free(c.hits);
    buf_release(&c.stem);
    search_query_release(&q);
    return rc;
}
