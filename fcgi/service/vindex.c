/* vindex: the in-memory vector index (vindex.h). */
#include "service/vindex.h"
#include "base/util.h"
#include "domain/vector.h"
#include "store/store.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* One space's vectors: slot i holds entry id[i], its unit vector
 * vec[i*dim..] and int8 code[i*dim..] with scale[i]; `at` maps an id to
 * its slot + 1 (open addressing, linear probing; 0 = empty). */
struct vspace {
    char *space, *model;
    pthread_rwlock_t lock;   /* readers scan; a refresh writes */
    pthread_mutex_t refresh; /* one refresh at a time */
    long long stamp;         /* every change up to this stamp is in */
    int dim;                 /* 0 until the first vector */
    size_t n, cap;
    char **id;
    float *vec;
    int8_t *code;
    float *scale;
    size_t *at, hcap;
    size_t id_bytes; /* the ids' bytes, kept as they come and go */
};

#define REFRESH_CHUNK 4096

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vspace **registry;
static size_t registry_n;
static int prescan_mode = -1;

void vindex_set_prescan(int mode)
{
    prescan_mode = mode;
}

static struct vspace *vspace_of(const char *space, const char *model)
{
    struct vspace *v = NULL;
    pthread_mutex_lock(&registry_lock);
    for (size_t i = 0; i < registry_n && !v; i++)
        if (strcmp(registry[i]->space, space) == 0 && strcmp(registry[i]->model, model) == 0)
            v = registry[i];
    if (!v) {
        v = xcalloc(1, sizeof *v);
        v->space = xstrdup(space);
        v->model = xstrdup(model);
        pthread_rwlock_init(&v->lock, NULL);
        pthread_mutex_init(&v->refresh, NULL);
        registry = xrealloc(registry, (registry_n + 1) * sizeof *registry);
        registry[registry_n++] = v;
    }
    pthread_mutex_unlock(&registry_lock);
    return v;
}

/* ---- the id -> slot map ---- */

static size_t id_hash(const char *id, size_t cap)
{
    return (size_t)hash_fnv1a(id, strlen(id)) & (cap - 1);
}

static size_t *probe(struct vspace *v, const char *id)
{
    size_t i = id_hash(id, v->hcap);
    while (v->at[i] && strcmp(v->id[v->at[i] - 1], id) != 0)
        i = (i + 1) & (v->hcap - 1);
    return &v->at[i];
}

static void rehash(struct vspace *v, size_t cap)
{
    free(v->at);
    v->hcap = cap;
    v->at = xcalloc(cap, sizeof *v->at);
    for (size_t s = 0; s < v->n; s++)
        *probe(v, v->id[s]) = s + 1;
}

/* Remove the map's entry for id (backward-shift deletion keeps probes whole). */
static void unmap(struct vspace *v, const char *id)
{
    size_t i = (size_t)(probe(v, id) - v->at), j = i;
    if (!v->at[i])
        return;
    v->at[i] = 0;
    for (;;) {
        j = (j + 1) & (v->hcap - 1);
        if (!v->at[j])
            return;
        size_t home = id_hash(v->id[v->at[j] - 1], v->hcap);
        /* Move j back to i when its home is not in (i, j] (cyclically). */
        if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
            v->at[i] = v->at[j];
            v->at[j] = 0;
            i = j;
        }
    }
}

/* ---- changes ---- */

static void slot_set(struct vspace *v, size_t s, const struct vector_row *r)
{
    float *f = v->vec + s * (size_t)v->dim;
    memcpy(f, r->vec, (size_t)v->dim * sizeof *f);
    vec_normalise(f, v->dim); /* stored normalised; again for rows from elsewhere */
    v->scale[s] = vec_quantise(f, v->dim, v->code + s * (size_t)v->dim);
}

static void put(struct vspace *v, const struct vector_row *r)
{
    size_t *a;
    if (!v->dim)
        v->dim = r->dim;
    if (r->dim != v->dim)
        return; /* another dimension: not searchable with this index */
    if (!v->hcap)
        rehash(v, 512);
    a = probe(v, r->id);
    if (*a) {
        slot_set(v, *a - 1, r);
        return;
    }
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 256, d = (size_t)v->dim;
        v->id = xrealloc(v->id, cap * sizeof *v->id);
        v->vec = xrealloc(v->vec, cap * d * sizeof *v->vec);
        v->code = xrealloc(v->code, cap * d);
        v->scale = xrealloc(v->scale, cap * sizeof *v->scale);
        v->cap = cap;
    }
    if (2 * (v->n + 1) > v->hcap)
        rehash(v, v->hcap ? 2 * v->hcap : 512);
    v->id[v->n] = xstrdup(r->id);
    v->id_bytes += strlen(r->id) + 1;
    slot_set(v, v->n, r);
    *probe(v, r->id) = v->n + 1;
    v->n++;
}

/* Drop id's vector: the last slot moves into its place. */
static void drop(struct vspace *v, const char *id)
{
    size_t s, last, d = (size_t)v->dim;
    size_t *a = v->hcap ? probe(v, id) : NULL;
    if (!a || !*a)
        return;
    s = *a - 1;
    last = v->n - 1;
    unmap(v, id);
    v->id_bytes -= strlen(v->id[s]) + 1;
    free(v->id[s]);
    if (s != last) {
        v->id[s] = v->id[last];
        memcpy(v->vec + s * d, v->vec + last * d, d * sizeof *v->vec);
        memcpy(v->code + s * d, v->code + last * d, d);
        v->scale[s] = v->scale[last];
        *probe(v, v->id[s]) = s + 1;
    }
    v->n--;
}

/* The rows read since the last stamp, copied (the store's are gone after
 * the callback), applied under the write lock. */
struct pending {
    struct vector_row *r;
    size_t n;
};

static void keep_row(const struct vector_row *r, void *ctx)
{
    struct pending *p = ctx;
    struct vector_row c = *r;
    c.id = xstrdup(r->id);
    c.status = strcmp(r->status, "active") == 0 ? "active" : "gone";
    c.vec = r->dim > 0 ? memcpy(xmalloc((size_t)r->dim * sizeof(float)), r->vec,
                                (size_t)r->dim * sizeof(float))
                       : NULL;
    p->r = xrealloc(p->r, (p->n + 1) * sizeof *p->r);
    p->r[p->n++] = c;
}

/* Give back what the doubling left unused after a large load. */
static void trim(struct vspace *v)
{
    size_t cap = v->n + v->n / 8 + 16, d = (size_t)v->dim;
    if (v->cap <= cap)
        return;
    v->id = xrealloc(v->id, cap * sizeof *v->id);
    v->vec = xrealloc(v->vec, cap * d * sizeof *v->vec);
    v->code = xrealloc(v->code, cap * d);
    v->scale = xrealloc(v->scale, cap * sizeof *v->scale);
    v->cap = cap;
}

/* Load what changed since the index's stamp, REFRESH_CHUNK rows at a time
 * (so a first load holds one chunk beside the index, not a copy of it),
 * each applied under the write lock. */
static int refresh(struct store *st, struct vspace *v)
{
    long long top, seen;
    size_t loaded = 0;
    int rc;
    pthread_rwlock_rdlock(&v->lock);
    seen = v->stamp;
    pthread_rwlock_unlock(&v->lock);
    if ((rc = store_vector_stamp(st, &top)) != STORE_OK || top <= seen)
        return rc;
    /* v->stamp changes only under the refresh lock. Another thread holding it
     * is loading already: search what is in (a deleted entry is still left
     * out when the hits are loaded) rather than wait for a long first load. */
    if (pthread_mutex_trylock(&v->refresh) != 0)
        return STORE_OK;
    while (rc == STORE_OK && v->stamp < top) {
        struct pending p = {0};
        rc = store_vectors_since(st, v->space, v->model, v->stamp, REFRESH_CHUNK, keep_row, &p);
        if (rc == STORE_OK) {
            pthread_rwlock_wrlock(&v->lock);
            for (size_t i = 0; i < p.n; i++) {
                if (p.r[i].dim > 0 && strcmp(p.r[i].status, "active") == 0)
                    put(v, &p.r[i]);
                else
                    drop(v, p.r[i].id);
            }
            /* A short chunk is the last: everything up to top is in. */
            if (p.n == REFRESH_CHUNK)
                v->stamp = p.r[p.n - 1].stamp;
            else
                v->stamp = p.n && p.r[p.n - 1].stamp > top ? p.r[p.n - 1].stamp : top;
            loaded += p.n;
            if (v->stamp >= top && loaded > REFRESH_CHUNK)
                trim(v);
            pthread_rwlock_unlock(&v->lock);
        }
        for (size_t i = 0; i < p.n; i++) {
            free((char *)p.r[i].id);
            free((void *)p.r[i].vec);
        }
        free(p.r);
    }
    pthread_mutex_unlock(&v->refresh);
    return rc;
}

int vindex_refresh(struct store *st, const char *space, const char *model)
{
    return refresh(st, vspace_of(space, model));
}

/* ---- search ---- */

static void scan_exact(const struct vspace *v, const float *q, struct vec_top *top)
{
    size_t d = (size_t)v->dim;
    for (size_t s = 0; s < v->n; s++)
        vec_top_offer(top, s, vec_dot(v->vec + s * d, q, v->dim));
}

/* The int8 codes first (a quarter of the bytes), keeping 8k of the best
 * (at least 256), then those rescored exactly. */
static void scan_prescan(const struct vspace *v, const float *q, struct vec_top *top)
{
    size_t d = (size_t)v->dim, wide = top->k * 8 < 256 ? 256 : top->k * 8;
    int8_t *qc = xmalloc(d);
    struct vec_top pre;
    vec_quantise(q, v->dim, qc);
    vec_top_init(&pre, wide);
    for (size_t s = 0; s < v->n; s++)
        vec_top_offer(&pre, s, (float)vec_dot_i8(v->code + s * d, qc, v->dim) * v->scale[s]);
    for (size_t i = 0; i < pre.n; i++)
        vec_top_offer(top, pre.h[i].slot, vec_dot(v->vec + pre.h[i].slot * d, q, v->dim));
    vec_top_release(&pre);
    free(qc);
}

int vindex_search(struct store *st, const char *space, const char *model, const float *q, int dim,
                  size_t k, struct vindex_hit **hits, size_t *n, const char *const *ids,
                  size_t nids, float *sims)
{
    struct vspace *v = vspace_of(space, model);
    struct vec_top top;
    int rc = refresh(st, v);
    *hits = NULL;
    *n = 0;
    if (rc != STORE_OK)
        return rc;
    pthread_rwlock_rdlock(&v->lock);
    if (v->n && v->dim == dim && k) {
        int pre = prescan_mode >= 0 ? prescan_mode : v->n * (size_t)v->dim > VINDEX_PRESCAN_FLOATS;
        vec_top_init(&top, k);
        if (pre)
            scan_prescan(v, q, &top);
        else
            scan_exact(v, q, &top);
        vec_top_sort(&top);
        *hits = xcalloc(top.n + 1, sizeof **hits);
        for (size_t i = 0; i < top.n; i++) {
            (*hits)[i].id = xstrdup(v->id[top.h[i].slot]);
            (*hits)[i].score = top.h[i].score;
        }
        *n = top.n;
        vec_top_release(&top);
    }
    for (size_t i = 0; i < nids; i++) {
        size_t *a = v->n && v->dim == dim ? probe(v, ids[i]) : NULL;
        sims[i] = a && *a ? vec_dot(v->vec + (*a - 1) * (size_t)v->dim, q, dim) : VINDEX_NONE;
    }
    pthread_rwlock_unlock(&v->lock);
    return STORE_OK;
}

void vindex_hits_free(struct vindex_hit *hits, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(hits[i].id);
    free(hits);
}

void vindex_usage(const char *space, size_t *vectors, size_t *bytes)
{
    *vectors = *bytes = 0;
    pthread_mutex_lock(&registry_lock);
    for (size_t i = 0; i < registry_n; i++) {
        struct vspace *v = registry[i];
        if (space && strcmp(v->space, space) != 0)
            continue;
        pthread_rwlock_rdlock(&v->lock);
        *vectors += v->n;
        *bytes += v->cap * ((size_t)v->dim * (sizeof(float) + 1) + sizeof(float) + sizeof(char *)) +
                  v->hcap * sizeof(size_t) + v->id_bytes;
        pthread_rwlock_unlock(&v->lock);
    }
    pthread_mutex_unlock(&registry_lock);
}
