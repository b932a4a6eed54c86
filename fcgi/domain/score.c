/* score: the match score of a search, pure (no I/O): a query's folded
 * tokens, the folded fields of a candidate, the score over them, and a
 * hit's snippet (docs/search.md). */
#include "domain/score.h"
#include "base/jfield.h"
#include "base/util.h"
#include "domain/tokenize.h"

#include <stdlib.h>
#include <string.h>

/* ---- queries ---- */

/* Add token to list[0..*n) unless it is there; stop at 64 (enough for any
 * real query). */
static int collect_distinct(char ***list, size_t *n, const char *token, size_t len)
{
    for (size_t i = 0; i < *n; i++)
        if (strlen((*list)[i]) == len && memcmp((*list)[i], token, len) == 0)
            return 0; /* each token counts once */
    if (*n == 64)
        return 1;
    *list = xrealloc(*list, (*n + 1) * sizeof **list);
    (*list)[(*n)++] = xstrndup(token, len);
    return 0;
}

static int collect_token(void *ctx, const char *token, size_t n, size_t start, size_t end)
{
    struct search_query *q = ctx;
    (void)start;
    (void)end;
    return collect_distinct(&q->tokens, &q->n, token, n);
}

static int collect_term(void *ctx, const char *token, size_t n, size_t start, size_t end)
{
    struct search_query *q = ctx;
    (void)start;
    (void)end;
    return collect_distinct(&q->terms, &q->n_terms, token, n);
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
    tokenize_terms(q->whole, strlen(q->whole), collect_term, q);
}

void search_query_release(struct search_query *q)
{
    for (size_t i = 0; i < q->n; i++)
        free(q->tokens[i]);
    for (size_t i = 0; i < q->n_terms; i++)
        free(q->terms[i]);
    free(q->tokens);
    free(q->terms);
    free(q->whole);
    memset(q, 0, sizeof *q);
}

/* ---- scoring ---- */

void strlist_init(struct strlist *l)
{
    memset(l, 0, sizeof *l);
    buf_init(&l->text, FIELD_MAX);
}

void strlist_reset(struct strlist *l)
{
    buf_reset(&l->text);
    l->n = 0;
}

void strlist_release(struct strlist *l)
{
    buf_release(&l->text);
    free(l->off);
    memset(l, 0, sizeof *l);
}

/* 1 when s[k..) starts with a well-formed character of U+1000..U+CFFF (Han,
 * kana, Hangul...), which folding never changes. */
static int unfolded3(const char *s, size_t k, size_t end)
{
    const unsigned char *u = (const unsigned char *)s + k;
    return k + 3 <= end && u[0] >= 0xE1 && u[0] <= 0xEC && (u[1] & 0xC0) == 0x80 &&
           (u[2] & 0xC0) == 0x80;
}

/* Append the folded form of s[0..len) to out, exactly as tokenize_fold folds:
 * ASCII is lower-cased in place, characters folding cannot change are copied,
 * the rest goes through tokenize_fold (cut only before lead bytes, where its
 * decoding starts a character too). */
static void fold_append(struct buf *out, const char *s, size_t len, struct buf *tmp)
{
    size_t i = 0;
    while (i < len) {
        size_t j = i;
        while (j < len && (unsigned char)s[j] < 0x80)
            j++;
        if (j > i) {
            size_t from = out->len;
            if (buf_add(out, s + i, j - i))
                return;
            for (char *p = out->data + from; *p; p++)
                if (*p >= 'A' && *p <= 'Z')
                    *p = (char)(*p + 32);
            i = j;
        }
        while (j < len && (unsigned char)s[j] >= 0x80)
            j++;
        while (i < j) {
            size_t m = i;
            while (unfolded3(s, m, j))
                m += 3;
            if (m == i) {
                do {
                    m++;
                    while (m < j && ((unsigned char)s[m] & 0xC0) == 0x80)
                        m++;
                } while (m < j && !unfolded3(s, m, j));
                tokenize_fold(s + i, m - i, tmp);
                if (buf_add(out, tmp->data, tmp->len))
                    return;
            } else if (buf_add(out, s + i, m - i)) {
                return;
            }
            i = m;
        }
    }
}

/* out = the folded first max_chars characters of s (0: all of it). Stored
 * text is valid UTF-8, so characters are the bytes that are not
 * continuation bytes; a long body is not scanned past its prefix. */
void fold_field(struct buf *out, const char *s, size_t max_chars, struct buf *tmp)
{
    size_t n = 0;
    buf_reset(out);
    if (!s)
        return;
    if (!max_chars) {
        n = strlen(s);
    } else {
        for (size_t chars = 0; s[n]; n++)
            if (((unsigned char)s[n] & 0xC0) != 0x80 && ++chars > max_chars)
                break;
    }
    fold_append(out, s, n, tmp);
}

void strlist_add(struct strlist *l, const char *s, size_t len, struct buf *tmp)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->off = xrealloc(l->off, l->cap * sizeof *l->off);
    }
    l->off[l->n++] = l->text.len;
    fold_append(&l->text, s, len, tmp);
    buf_addch(&l->text, '\0');
}

/* Add the strings of a JSON array (json_object_get_string of each non-null). */
void strlist_add_json(struct strlist *l, struct json_object *arr, int skip_empty, struct buf *tmp)
{
    for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
        const char *t = json_object_get_string(json_object_array_get_idx(arr, i));
        if (t && (!skip_empty || *t))
            strlist_add(l, t, strlen(t), tmp);
    }
}

/* The tags of a stored entry, JSON array text. Written by KnowHub itself, it is
 * nearly always ["a","b"] without escapes: read that directly, and anything
 * else through json-c. */
void strlist_set_tags(struct strlist *l, const char *json, struct buf *tmp)
{
    const char *p = json;
    strlist_reset(l);
    if (!json)
        return;
    if (!strchr(json, '\\')) {
        p += strspn(p, " \t\r\n");
        if (*p == '[') {
            for (p++;;) {
                const char *end;
                p += strspn(p, " \t\r\n,");
                if (*p == ']')
                    return;
                if (*p != '"' || !(end = strchr(p + 1, '"')))
                    break;
                strlist_add(l, p + 1, (size_t)(end - (p + 1)), tmp);
                p = end + 1;
            }
        }
    }
    strlist_reset(l);
    {
        struct json_object *arr = json_parse_stored(json);
        if (json_object_is_type(arr, json_type_array))
            strlist_add_json(l, arr, 0, tmp);
        json_object_put(arr);
    }
}

/* 1 when b holds needle[0..n). The fields and tokens are short: finding the
 * first two bytes and comparing the rest beats memmem's set-up (a third of the
 * ranking's time with it). */
static int holds(const char *b, size_t len, const char *needle, size_t n)
{
    const char *p = b, *last;
    if (n == 0)
        return 1;
    if (n > len)
        return 0;
    for (last = b + (len - n); (p = memchr(p, needle[0], (size_t)(last - p) + 1)); p++)
        if (n == 1 || (p[1] == needle[1] && memcmp(p + 2, needle + 2, n - 2) == 0))
            return 1;
    return 0;
}

static int in_any(const struct strlist *l, const char *needle, size_t n)
{
    for (size_t i = 0; i < l->n; i++) {
        size_t end = i + 1 < l->n ? l->off[i + 1] - 1 : l->text.len - 1;
        if (holds(l->text.data + l->off[i], end - l->off[i], needle, n))
            return 1;
    }
    return 0;
}

void fold_entry_body(struct buf *out, const char *scenario, const char *body, struct buf *joined,
                     struct buf *tmp)
{
    buf_reset(joined);
    buf_adds(joined, scenario ? scenario : "");
    buf_addch(joined, '\n');
    buf_adds(joined, body ? body : "");
    fold_field(out, joined->data, 200, tmp);
}

void fields_init(struct fields *f)
{
    buf_init(&f->title, FIELD_MAX);
    buf_init(&f->stem, FIELD_MAX);
    buf_init(&f->body, FIELD_MAX);
    buf_init(&f->tmp, FIELD_MAX);
    strlist_init(&f->tags);
}

void fields_release(struct fields *f)
{
    buf_release(&f->title);
    buf_release(&f->stem);
    buf_release(&f->body);
    buf_release(&f->tmp);
    strlist_release(&f->tags);
}

/* The match score (search.h) over folded fields; tables: folded table names. */
double score_folded(const struct search_query *q, const struct fields *f, int manual,
                    const struct strlist *tables)
{
    double score = 0, n = (double)q->n;
    size_t whole = strlen(q->whole);
    for (size_t i = 0; i < q->n; i++) {
        const char *tok = q->tokens[i];
        size_t len = strlen(tok);
        if (holds(f->title.data, f->title.len, tok, len))
            score += 100 / n;
        if (in_any(&f->tags, tok, len))
            score += 50 / n;
        if (holds(f->stem.data, f->stem.len, tok, len))
            score += 30 / n;
        if (holds(f->body.data, f->body.len, tok, len))
            score += 10 / n;
    }
    if (whole && holds(f->title.data, f->title.len, q->whole, whole))
        score += 50;
    if (whole && in_any(&f->tags, q->whole, whole))
        score += 50;
    for (size_t i = 0; tables && i < tables->n; i++) {
        const char *t = tables->text.data + tables->off[i];
        if (in_any(&f->tags, t, strlen(t)))
            score += 30;
    }
    if (score > 0 && !manual)
        score *= 0.9;
    return score;
}

int score_source_manual(const char *source)
{
    return !source || strcmp(source, "manual") == 0;
}

double search_match_score(const struct search_query *q, const char *title, struct json_object *tags,
                          const char *stem, const char *body, const char *source,
                          struct json_object *table_names)
{
    struct fields f;
    struct strlist tables;
    double score;
    fields_init(&f);
    strlist_init(&tables);
    fold_field(&f.title, title, 0, &f.tmp);
    fold_field(&f.stem, stem, 0, &f.tmp);
    fold_field(&f.body, body, 200, &f.tmp);
    strlist_add_json(&f.tags, tags, 0, &f.tmp);
    strlist_add_json(&tables, table_names, 1, &f.tmp);
    score = score_folded(q, &f, score_source_manual(source), &tables);
    strlist_release(&tables);
    fields_release(&f);
    return score;
}

void search_snippet(const char *body, struct buf *out)
{
    size_t n = utf8_prefix(body, strlen(body), 500), start = 0;
    while (start < n && strchr(" \t\r\n\f\v", body[start]))
        start++;
    while (n > start && strchr(" \t\r\n\f\v", body[n - 1]))
        n--;
    buf_reset(out);
    buf_add(out, body + start, n - start);
}
