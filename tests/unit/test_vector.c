/* test_vector: search by meaning below HTTP.
 *   - domain/vector.c: dot products against a plain double sum (lengths
 *     around the 8-lane and 16-code blocks), int8 codes and their dot, the
 *     top-k heap against a sort (ties by slot), normalisation;
 *   - store/vectors.c: the embed queue filled by create and text edits,
 *     emptied by a put of the current version only, and stamps;
 *   - service/vindex.c: the nearest vectors exactly, following puts and
 *     deletes made through the store, exact similarities of named
 *     entries, and the int8 prescan
 *     agreeing with the exact scan on 3,000 random vectors. */
#include "harness.h"
#include "base/buf.h"
#include "base/util.h"
#include "domain/document.h"
#include "domain/knowledge.h"
#include "domain/vector.h"
#include "service/knowledge.h"
#include "service/vindex.h"
#include "store/store.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ACTOR "token:test:vector"
#define MODEL "test-model"

static unsigned long long rng = 88172645463325252ull;
static float frand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((double)(rng >> 11) / (double)(1ull << 53)) * 2.0f - 1.0f;
}

static void test_kernels(void)
{
    static const int dims[] = {1, 7, 8, 9, 15, 16, 17, 31, 33, 384, 385};
    for (size_t t = 0; t < sizeof dims / sizeof *dims; t++) {
        int d = dims[t];
        float *a = xmalloc((size_t)d * sizeof *a), *b = xmalloc((size_t)d * sizeof *b);
        int8_t *ca = xmalloc((size_t)d), *cb = xmalloc((size_t)d);
        double want = 0;
        long long want_i8 = 0;
        for (int i = 0; i < d; i++) {
            a[i] = frand();
            b[i] = frand();
            want += (double)a[i] * b[i];
        }
        CHECK(fabs(vec_dot(a, b, d) - want) < 1e-4);
        vec_normalise(a, d);
        vec_normalise(b, d);
        CHECK(fabs(vec_dot(a, a, d) - 1.0) < 1e-5);
        float sa = vec_quantise(a, d, ca), sb = vec_quantise(b, d, cb);
        int extreme = 0;
        for (int i = 0; i < d; i++) {
            want_i8 += (long long)ca[i] * cb[i];
            extreme |= ca[i] == 127 || ca[i] == -127;
        }
        CHECK(extreme); /* the largest component maps to +-127 */
        CHECK_INT(vec_dot_i8(ca, cb, d), want_i8);
        /* The codes' dot, scaled back, is close to the exact cosine. */
        CHECK(fabs((double)vec_dot_i8(ca, cb, d) * sa * sb - vec_dot(a, b, d)) < 0.02);
        free(a);
        free(b);
        free(ca);
        free(cb);
    }
    {
        float z[4] = {0, 0, 0, 0};
        CHECK(vec_normalise(z, 4) == 0.0f);
        CHECK(z[0] == 0.0f && z[3] == 0.0f);
    }
}

static int by_score(const void *x, const void *y)
{
    const struct vec_hit *a = x, *b = y;
    if (a->score != b->score)
        return a->score < b->score ? 1 : -1;
    return a->slot < b->slot ? -1 : a->slot > b->slot;
}

static void test_top(void)
{
    struct vec_hit all[1000];
    struct vec_top t;
    vec_top_init(&t, 10);
    for (size_t i = 0; i < 1000; i++) {
        /* Many ties: scores in steps of 1/50. */
        all[i].slot = i;
        all[i].score = floorf((frand() + 1.0f) * 25.0f) / 50.0f;
        vec_top_offer(&t, i, all[i].score);
    }
    vec_top_sort(&t);
    qsort(all, 1000, sizeof *all, by_score);
    CHECK_INT(t.n, 10);
    for (size_t i = 0; i < 10; i++) {
        CHECK_INT(t.h[i].slot, all[i].slot);
        CHECK(t.h[i].score == all[i].score);
    }
    vec_top_release(&t);
    vec_top_init(&t, 5);
    vec_top_offer(&t, 1, 0.5f);
    vec_top_offer(&t, 0, 0.7f);
    vec_top_sort(&t);
    CHECK_INT(t.n, 2);
    CHECK_INT(t.h[0].slot, 0);
    vec_top_release(&t);
}

/* ---- the store's queue and the index ---- */

static char *add_entry(struct store *st, const char *space, const char *path, const char *title)
{
    struct knowledge k;
    struct buf doc;
    struct error err;
    char text[512], *id = NULL;
    snprintf(text, sizeof text, "---\ntitle: %s\n---\n\nBody of %s.\n", title, title);
    buf_init(&doc, 1 << 20);
    error_init(&err);
    if (CHECK_INT(document_prepare("experiences", path, text, strlen(text), &doc, &err), 0)) {
        knowledge_init(&k);
        k.space = xstrdup(space);
        k.category = xstrdup("experiences");
        k.path = xstrdup(path);
        k.score = 3;
        document_fill(&k, "experiences", path, doc.data, doc.len);
        if (CHECK_INT(knowledge_create(st, &k, ACTOR), STORE_OK))
            id = xstrdup(k.id);
        knowledge_release(&k);
    }
    buf_release(&doc);
    error_release(&err);
    return id;
}

struct queue {
    struct embed_todo t[64];
    char *id[64];
    size_t n;
};

static void queued(const struct embed_todo *t, void *ctx)
{
    struct queue *q = ctx;
    if (q->n < 64) {
        q->t[q->n] = *t;
        q->id[q->n] = t->id ? xstrdup(t->id) : NULL;
        q->n++;
    }
}

static void queue_release(struct queue *q)
{
    for (size_t i = 0; i < q->n; i++)
        free(q->id[i]);
    q->n = 0;
}

/* The queued row of id (NULL when not queued). */
static const struct embed_todo *find(const struct queue *q, const char *id)
{
    for (size_t i = 0; i < q->n; i++)
        if (q->id[i] && strcmp(q->id[i], id) == 0)
            return &q->t[i];
    return NULL;
}

static void take(struct store *st, const char *space, struct queue *q)
{
    queue_release(q);
    CHECK_INT(store_embed_take(st, space, 64, 1000, queued, q), STORE_OK);
}

/* A unit vector along axis i of dim 8, nudged by w along axis 7. */
static void axis(float v[8], int i, float w)
{
    memset(v, 0, 8 * sizeof *v);
    v[i] = 1.0f;
    v[7] += w;
    vec_normalise(v, 8);
}

static void put(struct store *st, const char *space, const struct embed_todo *t, const float *v)
{
    CHECK_INT(store_vector_put(st, t->seq, space, MODEL, t->version, "digest", v, 8), STORE_OK);
}

static void test_queue_and_index(void)
{
    struct store *st = NULL;
    struct queue q = {0};
    const char *space = "vq";
    char *a, *b, *c;
    float v[8];
    long long s1, s2;
    struct vindex_hit *hits;
    size_t n;
    if (!CHECK_INT(store_open(":memory:", &st), STORE_OK))
        return;
    a = add_entry(st, space, "a.md", "Alpha");
    b = add_entry(st, space, "b.md", "Beta");
    c = add_entry(st, space, "c.md", "Gamma");
    take(st, space, &q);
    CHECK_INT(q.n, 3); /* every new entry waits */
    CHECK(find(&q, a) && find(&q, a)->model == NULL);
    CHECK_INT(store_vector_stamp(st, &s1), STORE_OK);
    CHECK_INT(s1, 0);
    axis(v, 0, 0.0f);
    put(st, space, find(&q, a), v);
    axis(v, 1, 0.0f);
    put(st, space, find(&q, b), v);
    axis(v, 2, 0.0f);
    put(st, space, find(&q, c), v);
    take(st, space, &q);
    CHECK_INT(q.n, 0); /* each put took its entry off */
    CHECK_INT(store_vector_stamp(st, &s2), STORE_OK);
    CHECK_INT(s2, 3);

    /* The nearest of a query along axis 1 is b, exactly 1. */
    axis(v, 1, 0.0f);
    CHECK_INT(vindex_search(st, space, MODEL, v, 8, 2, &hits, &n, NULL, 0, NULL), STORE_OK);
    if (CHECK_INT(n, 2)) {
        CHECK_STR(hits[0].id, b);
        CHECK(fabsf(hits[0].score - 1.0f) < 1e-6f);
    }
    vindex_hits_free(hits, n);

    /* A text edit queues the entry again; a put of the version read before
     * the edit leaves it queued, a put of the current one takes it off. */
    {
        struct knowledge k;
        const struct embed_todo *t;
        long long seq;
        CHECK_INT(store_knowledge_get(st, space, b, 0, &k), STORE_OK);
        free(k.content);
        k.content = xstrdup("New body of Beta.");
        CHECK_INT(store_knowledge_update(st, space, b, &k, 0, ACTOR, "write"), STORE_OK);
        knowledge_release(&k);
        take(st, space, &q);
        t = find(&q, b);
        if (CHECK(t != NULL) && CHECK_INT(q.n, 1)) {
            seq = t->seq;
            CHECK_INT(t->vector_version, t->version - 1); /* the vector is of the old text */
            CHECK_INT(store_vector_put(st, seq, space, MODEL, t->version - 1, "old", v, 8),
                      STORE_OK);
            take(st, space, &q);
            CHECK(find(&q, b) != NULL);
            put(st, space, find(&q, b), v);
            take(st, space, &q);
            CHECK_INT(q.n, 0);
        }
    }

    /* Deleted: gone from the index at once (the status change moves its
     * vector's stamp), and not queued. */
    CHECK_INT(store_knowledge_delete(st, space, b, ACTOR), STORE_OK);
    axis(v, 1, 0.0f);
    CHECK_INT(vindex_search(st, space, MODEL, v, 8, 3, &hits, &n, NULL, 0, NULL), STORE_OK);
    CHECK_INT(n, 2);
    for (size_t i = 0; i < n; i++)
        CHECK(strcmp(hits[i].id, b) != 0);
    vindex_hits_free(hits, n);
    take(st, space, &q);
    CHECK_INT(q.n, 0); /* a deleted entry is not queued */

    /* The exact similarity of named entries, and none for an unknown one. */
    {
        const char *ids[] = {a, c, "knowledge-00000000-00000000"};
        float sims[3];
        axis(v, 2, 0.0f);
        CHECK_INT(vindex_search(st, space, MODEL, v, 8, 1, &hits, &n, ids, 3, sims), STORE_OK);
        CHECK(fabsf(sims[0]) < 1e-6f);
        CHECK(fabsf(sims[1] - 1.0f) < 1e-6f);
        CHECK(sims[2] == VINDEX_NONE);
        vindex_hits_free(hits, n);
    }
    queue_release(&q);
    free(a);
    free(b);
    free(c);
    store_close(st);
}

/* The int8 prescan finds the exact scan's best on random vectors. */
static void test_prescan(void)
{
    struct store *st = NULL;
    struct queue q = {0};
    const char *space = "vp";
    enum { N = 3000, D = 8 };
    int agree = 0, rounds = 50;
    if (!CHECK_INT(store_open(":memory:", &st), STORE_OK))
        return;
    CHECK_INT(store_begin(st), STORE_OK);
    for (int i = 0; i < N; i++) {
        char path[32], title[32];
        snprintf(path, sizeof path, "p%04d.md", i);
        snprintf(title, sizeof title, "Entry %d", i);
        free(add_entry(st, space, path, title));
    }
    CHECK_INT(store_commit(st), STORE_OK);
    for (;;) {
        take(st, space, &q);
        if (!q.n)
            break;
        for (size_t i = 0; i < q.n; i++) {
            float v[D];
            for (int k = 0; k < D; k++)
                v[k] = frand();
            vec_normalise(v, D);
            CHECK_INT(store_vector_put(st, q.t[i].seq, space, MODEL, q.t[i].version, "d", v, D),
                      STORE_OK);
        }
    }
    for (int r = 0; r < rounds; r++) {
        float v[D];
        struct vindex_hit *h1, *h2;
        size_t n1, n2;
        for (int k = 0; k < D; k++)
            v[k] = frand();
        vec_normalise(v, D);
        vindex_set_prescan(0);
        CHECK_INT(vindex_search(st, space, MODEL, v, D, 5, &h1, &n1, NULL, 0, NULL), STORE_OK);
        vindex_set_prescan(1);
        CHECK_INT(vindex_search(st, space, MODEL, v, D, 5, &h2, &n2, NULL, 0, NULL), STORE_OK);
        CHECK_INT(n1, 5);
        CHECK_INT(n2, 5);
        agree += n1 && n2 && strcmp(h1[0].id, h2[0].id) == 0;
        vindex_hits_free(h1, n1);
        vindex_hits_free(h2, n2);
    }
    vindex_set_prescan(-1);
    CHECK_INT(agree, rounds);
    queue_release(&q);
    store_close(st);
}

int main(void)
{
    test_kernels();
    test_top();
    test_queue_and_index();
    test_prescan();
    return test_summary();
}
