/* explain: relevance components and the entries a search left out
 * (service/explain.h). */
#include "service/explain.h"
#include "base/jfield.h"
#include "domain/knowledge.h"
#include "domain/score.h"
#include "domain/tokenize.h"
#include "service/timing.h"
#include "store/store.h"

#include <string.h>

struct json_object *explain_relevance(const struct search_opts *o, enum search_mode mode,
                                      const struct fused_hit *h)
{
    struct json_object *r = json_object_new_object();
    json_object_object_add(r, "reference", json_object_new_double(h->match));
    /* the coverage back out of the relevance it was fused into */
    if (o->ranking == RANKING_FUSED)
        json_object_object_add(
            r, "bm25f",
            json_object_new_double((h->lexical - SEARCH_REF_WEIGHT * h->match) / 100.0));
    else if (o->ranking == RANKING_BM25F)
        json_object_object_add(r, "bm25f", json_object_new_double(h->lexical / 100.0));
    json_object_object_add(r, "fused", json_object_new_double(h->lexical));
    if (mode != MODE_LEXICAL) {
        json_object_object_add(r, "vector", json_object_new_double(h->vector));
        json_object_object_add(r, "hybrid", json_object_new_double(h->fused));
    }
    return r;
}

/* 1 when list holds an item whose id is id. */
static int listed(struct json_object *list, const char *id)
{
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        const char *v = jf_member_str(json_object_array_get_idx(list, i), "id");
        if (v && strcmp(v, id) == 0)
            return 1;
    }
    return 0;
}

int explain_left_out_add(struct json_object *left_out, const char *id, const char *title,
                         const char *why)
{
    struct json_object *o;
    if (json_object_array_length(left_out) >= EXPLAIN_LEFT_OUT_MAX || listed(left_out, id))
        return 0;
    o = json_object_new_object();
    json_object_object_add(o, "id", json_object_new_string(id));
    json_object_object_add(o, "title", json_object_new_string(title ? title : ""));
    json_object_object_add(o, "why", json_object_new_string(why));
    json_object_array_add(left_out, o);
    return 1;
}

int explain_left_out_weak(const struct svc_ctx *c, const struct ranked_id *lex, size_t n,
                          struct json_object *results, struct json_object *left_out)
{
    int rc = STORE_OK;
    for (size_t i = 0; rc == STORE_OK && i < n; i++) {
        struct knowledge k;
        if (!lex[i].weak || listed(results, lex[i].id) || listed(left_out, lex[i].id))
            continue;
        if (json_object_array_length(left_out) >= EXPLAIN_LEFT_OUT_MAX)
            break;
        knowledge_init(&k);
        rc = store_knowledge_get(c->st, c->space, lex[i].id, 0, &k);
        if (rc == STORE_OK)
            explain_left_out_add(left_out, lex[i].id, k.title, "weak");
        else if (rc == STORE_NOT_FOUND) /* gone meanwhile */
            rc = STORE_OK;
        knowledge_release(&k);
    }
    return rc;
}

/* One link of a result: the entry it supersedes. */
static void superseded_one(const struct knowledge_link *l, void *ctx)
{
    if (strcmp(l->type, "supersedes") == 0 && strcmp(l->direction, "out") == 0)
        explain_left_out_add(ctx, l->other_id, l->other_title, "superseded");
}

int explain_left_out_superseded(const struct svc_ctx *c, struct json_object *results,
                                struct json_object *left_out)
{
    int rc = STORE_OK;
    for (size_t i = 0; rc == STORE_OK && i < json_object_array_length(results); i++) {
        const char *id = jf_member_str(json_object_array_get_idx(results, i), "id");
        if (id && json_object_array_length(left_out) < EXPLAIN_LEFT_OUT_MAX)
            rc =
                store_links_of(c->st, c->space, id, EXPLAIN_LEFT_OUT_MAX, superseded_one, left_out);
    }
    return rc;
}

/* Whether a text holds a search term of q (the tokenizer's terms, stemmed). */
struct term_find {
    const struct search_query *q;
    int found;
};

static int term_seen(void *ctx, const char *term, size_t n, size_t start, size_t end)
{
    struct term_find *f = ctx;
    (void)start;
    (void)end;
    for (size_t i = 0; i < f->q->n_terms; i++)
        if (strlen(f->q->terms[i]) == n && memcmp(f->q->terms[i], term, n) == 0) {
            f->found = 1;
            return 1; /* stop: one is enough */
        }
    return 0;
}

static int holds_term(const struct search_query *q, const char *text)
{
    struct term_find f = {q, 0};
    if (text && q->n_terms)
        tokenize_terms(text, strlen(text), term_seen, &f);
    return f.found;
}

int explain_left_out_expired(const struct svc_ctx *c, const char *query,
                             struct json_object *left_out)
{
    struct timing_expired set;
    struct search_query q;
    int rc = timing_expired_load(c->st, c->space, &set);
    search_query_init(&q, query ? query : "");
    for (size_t i = 0; rc == STORE_OK && i < set.n && i < EXPLAIN_EXPIRED_SCAN &&
                       json_object_array_length(left_out) < EXPLAIN_LEFT_OUT_MAX;
         i++) {
        struct knowledge k;
        knowledge_init(&k);
        rc = store_knowledge_get(c->st, c->space, set.ids[i], 0, &k);
        if (rc == STORE_OK &&
            (holds_term(&q, k.title) || holds_term(&q, k.scenario) || holds_term(&q, k.content)))
            explain_left_out_add(left_out, k.id, k.title, "expired");
        else if (rc == STORE_NOT_FOUND) /* deleted meanwhile, or no more active */
            rc = STORE_OK;
        knowledge_release(&k);
    }
    search_query_release(&q);
    timing_expired_release(&set);
    return rc;
}

int explain_left_out_rest(const struct svc_ctx *c, const char *query, const struct ranked_id *lex,
                          size_t n, struct json_object *results, struct json_object *left_out)
{
    int rc = lex ? explain_left_out_weak(c, lex, n, results, left_out) : STORE_OK;
    if (rc == STORE_OK)
        rc = explain_left_out_superseded(c, results, left_out);
    if (rc == STORE_OK)
        rc = explain_left_out_expired(c, query, left_out);
    return rc;
}
