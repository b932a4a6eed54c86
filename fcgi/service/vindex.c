/* vindex: the in-memory vector index (vindex.h). */
#include "service/vindex.h"
#include "base/util.h"
#include "domain/vector.h"
#include "store/store.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* One space's vectors: slot i holds entry id[i], its unit vector
 * vec[i*dim..] and int8 code[i*dim..] with scale[i]; `at` maps an id to
 * its slot + 1 (open addressing, linear probing; 0 = empty). */
struct vindex_space {
    char *space, *model;
    pthread_rwlock_t lock;   /* readers scan; a refresh writes */
    pthread_mutex_t refresh; /* one refresh at a time */
    long long stamp;         /* every change up to this stamp is in (0: nothing loaded) */
    int dim;                 /* 0 until the first vector */
    size_t n, cap;
    char **id;
    float *vec;
    int8_t *code;
    float *scale;
    size_t *at, hcap;
    size_t id_bytes; /* the ids' bytes, kept as they come and go */
    /* Under registry_lock, what the budget and the figures read. Written by
     * the holder of the refresh lock, or by an eviction while busy is 0:
     * a space nobody uses is touched only under registry_lock. */
    size_t held;             /* bytes accounted to it (claimed before a load) */
    size_t count;            /* vectors held */
    size_t needed;           /* over its cap: the bytes it would take */
    unsigned long long used; /* the tick of its last search */
    int busy;                /* searches and refreshes using it now */
    int over;                /* OVER_*: not held until its vectors change */
    int evicted;             /* not held for want of room: loads on its next search */
};

enum { FITS, OVER_SPACE, OVER_TOTAL };

#define REFRESH_CHUNK 4096
/* The bytes an id is reckoned at before it is read (knowledge-YYYYMMDD-xxxxxxxx). */
#define ID_BYTES_GUESS 32

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vindex_space **registry;
static size_t registry_n;
static int prescan_mode = -1;
/* Set by main before threads start (vindex_configure); 0: no limit. */
static size_t budget_total, budget_space;
/* Under registry_lock. */
static size_t total_held;
static unsigned long long tick, evictions;

void vindex_set_prescan(int mode)
{
    prescan_mode = mode;
}

void vindex_configure(size_t total_bytes, size_t space_bytes)
{
    budget_total = total_bytes;
    budget_space = space_bytes;
}

/* Space's index of model, marked in use (vindex_close gives it back). */
static struct vindex_space *use(const char *space, const char *model)
{
    struct vindex_space *v = NULL;
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
    v->busy++;
    v->used = ++tick;
    pthread_mutex_unlock(&registry_lock);
    return v;
}

void vindex_close(struct vindex_space *v)
{
    pthread_mutex_lock(&registry_lock);
    v->busy--;
    pthread_mutex_unlock(&registry_lock);
}

/* ---- the id -> slot map ---- */

static size_t id_hash(const char *id, size_t cap)
{
    return (size_t)hash_fnv1a(id, strlen(id)) & (cap - 1);
}

static size_t *probe(struct vindex_space *v, const char *id)
{
    size_t i = id_hash(id, v->hcap);
    while (v->at[i] && strcmp(v->id[v->at[i] - 1], id) != 0)
        i = (i + 1) & (v->hcap - 1);
    return &v->at[i];
}

static void rehash(struct vindex_space *v, size_t cap)
{
    free(v->at);
    v->hcap = cap;
    v->at = xcalloc(cap, sizeof *v->at);
    for (size_t s = 0; s < v->n; s++)
        *probe(v, v->id[s]) = s + 1;
}

/* Remove the map's entry for id (backward-shift deletion keeps probes whole). */
static void unmap(struct vindex_space *v, const char *id)
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

/* ---- sizes ---- */

/* The bytes of an index of cap slots of dim floats, hcap map slots and
 * id_bytes of ids (what vindex_usage reports). */
static size_t index_bytes(size_t cap, size_t dim, size_t hcap, size_t id_bytes)
{
    return cap * (dim * (sizeof(float) + 1) + sizeof(float) + sizeof(char *)) +
           hcap * sizeof(size_t) + id_bytes;
}

static size_t held_bytes(const struct vindex_space *v)
{
    return index_bytes(v->cap, (size_t)v->dim, v->hcap, v->id_bytes);
}

/* The slots kept for n vectors: n and an eighth (what a load ends with). */
static size_t slots_for(size_t n)
{
    return n + n / 8 + 16;
}

/* The map's slots for n vectors: a power of 2, at least twice n + 1. */
static size_t map_for(size_t n)
{
    size_t cap = 512;
    while (cap < 2 * (n + 1))
        cap *= 2;
    return cap;
}

/* What n vectors of dim floats will take once loaded. */
static size_t bytes_for(size_t n, size_t dim)
{
    return n ? index_bytes(slots_for(n), dim, map_for(n), n * ID_BYTES_GUESS) : 0;
}

static void resize(struct vindex_space *v, size_t cap)
{
    size_t d = (size_t)v->dim;
    v->id = xrealloc(v->id, cap * sizeof *v->id);
    v->vec = xrealloc(v->vec, cap * d * sizeof *v->vec);
    v->code = xrealloc(v->code, cap * d);
    v->scale = xrealloc(v->scale, cap * sizeof *v->scale);
    v->cap = cap;
}

/* Room for n vectors of dim floats in an empty index, so a first load
 * allocates once and holds what was reckoned. */
static void reserve(struct vindex_space *v, size_t n, int dim)
{
    if (v->n || !n || dim <= 0)
        return;
    v->dim = dim;
    resize(v, slots_for(n));
    rehash(v, map_for(n));
}

/* Free every vector: the index is as new. */
static void clear(struct vindex_space *v)
{
    for (size_t i = 0; i < v->n; i++)
        free(v->id[i]);
    free(v->id);
    free(v->vec);
    free(v->code);
    free(v->scale);
    free(v->at);
    v->id = NULL;
    v->vec = NULL;
    v->code = NULL;
    v->scale = NULL;
    v->at = NULL;
    v->n = v->cap = v->hcap = v->id_bytes = 0;
    v->dim = 0;
}

/* ---- changes ---- */

static void slot_set(struct vindex_space *v, size_t s, const struct vector_row *r)
{
    float *f = v->vec + s * (size_t)v->dim;
    memcpy(f, r->vec, (size_t)v->dim * sizeof *f);
    vec_normalise(f, v->dim); /* stored normalised; again for rows from elsewhere */
    v->scale[s] = vec_quantise(f, v->dim, v->code + s * (size_t)v->dim);
}

static void put(struct vindex_space *v, const struct vector_row *r)
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
    if (v->n == v->cap)
        resize(v, v->cap ? 2 * v->cap : 256);
    if (2 * (v->n + 1) > v->hcap)
        rehash(v, v->hcap ? 2 * v->hcap : 512);
    v->id[v->n] = xstrdup(r->id);
    v->id_bytes += strlen(r->id) + 1;
    slot_set(v, v->n, r);
    *probe(v, r->id) = v->n + 1;
    v->n++;
}

/* Drop id's vector: the last slot moves into its place. */
static void drop(struct vindex_space *v, const char *id)
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

static void pending_release(struct pending *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free((char *)p->r[i].id);
        free((void *)p->r[i].vec);
    }
    free(p->r);
}

/* Give back what the doubling left unused after a large load. */
static void trim(struct vindex_space *v)
{
    size_t cap = slots_for(v->n);
    if (v->cap > cap)
        resize(v, cap);
}

static int row_active(const struct vector_row *r)
{
    return r->dim > 0 && strcmp(r->status, "active") == 0;
}

/* The vectors a chunk adds: its active rows not in the index yet. */
static size_t added_by(struct vindex_space *v, const struct pending *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++)
        n += row_active(&p->r[i]) && (!v->hcap || !*probe(v, p->r[i].id));
    return n;
}

/* Apply one chunk of rows under the write lock (loaded: the rows of this
 * refresh, the chunk's included). A chunk grows the index by what it adds,
 * not by doubling, so an index over its cap is over by one chunk at most. */
static void apply(struct vindex_space *v, const struct pending *p, long long top, size_t loaded)
{
    size_t adds;
    pthread_rwlock_wrlock(&v->lock);
    if (v->dim && v->n + (adds = added_by(v, p)) > v->cap)
        resize(v, slots_for(v->n + adds));
    for (size_t i = 0; i < p->n; i++) {
        if (row_active(&p->r[i]))
            put(v, &p->r[i]);
        else
            drop(v, p->r[i].id);
    }
    /* A short chunk is the last: everything up to top is in. */
    if (p->n == REFRESH_CHUNK)
        v->stamp = p->r[p->n - 1].stamp;
    else
        v->stamp = p->n && p->r[p->n - 1].stamp > top ? p->r[p->n - 1].stamp : top;
    if (v->stamp >= top && loaded > REFRESH_CHUNK)
        trim(v);
    pthread_rwlock_unlock(&v->lock);
}

/* ---- the budget ---- */

/* Whether an index of `bytes` is over a space's cap (OVER_*), or FITS. */
static int over_cap(size_t bytes)
{
    if (budget_space && bytes > budget_space)
        return OVER_SPACE;
    if (budget_total && bytes > budget_total)
        return OVER_TOTAL;
    return FITS;
}

static int over_of(struct vindex_space *v)
{
    int over;
    pthread_mutex_lock(&registry_lock);
    over = v->over;
    pthread_mutex_unlock(&registry_lock);
    return over;
}

/* The least recently searched space holding vectors that nobody uses,
 * other than self (registry_lock held). */
static struct vindex_space *coldest(const struct vindex_space *self)
{
    struct vindex_space *cold = NULL;
    for (size_t i = 0; i < registry_n; i++) {
        struct vindex_space *w = registry[i];
        if (w != self && !w->busy && w->held && (!cold || w->used < cold->used))
            cold = w;
    }
    return cold;
}

/* Hand the memory of dropped vectors back to the system. glibc would keep
 * it: after the first large free its mmap threshold rises, so later indexes
 * come from the heaps of the threads that loaded them and stay there; a few
 * evictions from different threads held several budgets. */
static void give_back(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

/* Free a space nobody uses (registry_lock held): its next search loads it. */
static void evict(struct vindex_space *w)
{
    clear(w);
    w->stamp = 0;
    total_held -= w->held;
    w->held = w->count = 0;
    w->evicted = 1;
    evictions++;
}

/* Account v at `bytes` (n vectors), first evicting the least recently
 * searched spaces nobody uses while the process would be over its budget.
 * 1 when it fits (and is accounted), 0 when spaces in use hold too much. */
static int claim(struct vindex_space *v, size_t bytes, size_t n)
{
    struct vindex_space *cold;
    int fits, evicted = 0;
    pthread_mutex_lock(&registry_lock);
    while (budget_total && total_held - v->held + bytes > budget_total && (cold = coldest(v))) {
        evict(cold);
        evicted = 1;
    }
    fits = !budget_total || total_held - v->held + bytes <= budget_total;
    if (fits) {
        total_held = total_held - v->held + bytes;
        v->held = bytes;
        v->count = n;
    }
    pthread_mutex_unlock(&registry_lock);
    if (evicted)
        give_back();
    return fits;
}

/* Drop v's vectors (its refresh lock held): over its cap (over, needed;
 * stamp is top, so it stays out until the vectors change) or for want of
 * room (over FITS, stamp 0: the next search tries again). */
static void unload(struct vindex_space *v, int over, size_t needed, long long stamp)
{
    int held = v->cap > 0; /* v's writer is this thread */
    pthread_mutex_lock(&registry_lock);
    total_held -= v->held;
    v->held = v->count = 0;
    v->over = over;
    v->needed = needed;
    v->evicted = over == FITS;
    pthread_mutex_unlock(&registry_lock);
    pthread_rwlock_wrlock(&v->lock);
    clear(v);
    v->stamp = stamp;
    pthread_rwlock_unlock(&v->lock);
    if (held)
        give_back();
}

/* Before a load from nothing (first, after an eviction, or over its cap
 * and its vectors changed): count the space's vectors in the store and
 * load only what fits, after making room. */
static int admit(struct store *st, struct vindex_space *v, long long top, enum vindex_state *state)
{
    long entries, rows, vectors, dim;
    size_t n, need;
    int over, rc = store_vector_counts(st, v->space, v->model, &entries, &rows, &vectors, &dim);
    if (rc != STORE_OK)
        return rc;
    n = vectors > 0 && dim > 0 ? (size_t)vectors : 0;
    need = bytes_for(n, (size_t)dim);
    if ((over = over_cap(need)) != FITS) {
        unload(v, over, need, top);
        *state = VINDEX_OVER_BUDGET;
    } else if (!claim(v, need, 0)) {
        unload(v, FITS, 0, 0);
        *state = VINDEX_NO_ROOM;
    } else {
        pthread_rwlock_wrlock(&v->lock);
        clear(v);
        v->stamp = 0;
        reserve(v, n, (int)dim);
        pthread_rwlock_unlock(&v->lock);
        pthread_mutex_lock(&registry_lock);
        v->over = FITS;
        v->needed = 0;
        v->evicted = 0;
        pthread_mutex_unlock(&registry_lock);
    }
    return STORE_OK;
}

/* After a chunk: the index as it is now is accounted, or dropped when it
 * went over its cap or no room can be made. */
static void account(struct vindex_space *v, long long top, enum vindex_state *state)
{
    size_t bytes = held_bytes(v); /* v's writer is this thread */
    int over = over_cap(bytes);
    if (over != FITS) {
        unload(v, over, bytes, top);
        *state = VINDEX_OVER_BUDGET;
    } else if (!claim(v, bytes, v->n)) {
        unload(v, FITS, 0, 0);
        *state = VINDEX_NO_ROOM;
    }
}

/* ---- refresh ---- */

/* Load what changed since the index's stamp up to top (the refresh lock
 * held), REFRESH_CHUNK rows at a time (so a first load holds one chunk
 * beside the index, not a copy of it), each applied under the write lock
 * and accounted. */
static int load(struct store *st, struct vindex_space *v, long long top, enum vindex_state *state)
{
    size_t loaded = 0;
    int rc = STORE_OK;
    while (rc == STORE_OK && *state == VINDEX_READY && v->stamp < top) {
        struct pending p = {0};
        rc = store_vectors_since(st, v->space, v->model, v->stamp, REFRESH_CHUNK, keep_row, &p);
        if (rc == STORE_OK) {
            loaded += p.n;
            apply(v, &p, top, loaded);
            account(v, top, state);
        }
        pending_release(&p);
    }
    return rc;
}

/* Bring v (in use) up to date: *state says what it holds. */
static int refresh(struct store *st, struct vindex_space *v, enum vindex_state *state)
{
    long long top, seen;
    int rc, over;
    pthread_rwlock_rdlock(&v->lock);
    seen = v->stamp;
    pthread_rwlock_unlock(&v->lock);
    /* After the stamp: unload marks a space over before it sets the stamp. */
    over = over_of(v);
    *state = over != FITS ? VINDEX_OVER_BUDGET : VINDEX_READY;
    if ((rc = store_vector_stamp(st, &top)) != STORE_OK || top <= seen)
        return rc;
    /* v->stamp changes only under the refresh lock. Another thread holding
     * it on a first load (or a check of a space over its cap) may take
     * long: search what is in, and say so (the answer is not cached). On
     * a loaded index it applies a few changes: wait for them. */
    if (pthread_mutex_trylock(&v->refresh) != 0) {
        if (seen == 0 || over != FITS) {
            *state = VINDEX_LOADING;
            return STORE_OK;
        }
        pthread_mutex_lock(&v->refresh);
    }
    *state = VINDEX_READY;
    if (v->stamp < top && (v->stamp == 0 || over_of(v) != FITS))
        rc = admit(st, v, top, state);
    if (rc == STORE_OK && *state == VINDEX_READY)
        rc = load(st, v, top, state);
    pthread_mutex_unlock(&v->refresh);
    return rc;
}

int vindex_open(struct store *st, const char *space, const char *model, struct vindex_space **v,
                enum vindex_state *state)
{
    *v = use(space, model);
    return refresh(st, *v, state);
}

int vindex_refresh(struct store *st, const char *space, const char *model)
{
    struct vindex_space *v;
    enum vindex_state state;
    int rc = vindex_open(st, space, model, &v, &state);
    vindex_close(v);
    return rc;
}

/* ---- search ---- */

static void scan_exact(const struct vindex_space *v, const float *q, struct vec_top *top)
{
    size_t d = (size_t)v->dim;
    for (size_t s = 0; s < v->n; s++)
        vec_top_offer(top, s, vec_dot(v->vec + s * d, q, v->dim));
}

/* The int8 codes first (a quarter of the bytes), keeping 8k of the best
 * (at least 256), then those rescored exactly. */
static void scan_prescan(const struct vindex_space *v, const float *q, struct vec_top *top)
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

/* The k nearest into *hits (the read lock held). */
static void nearest(const struct vindex_space *v, const float *q, size_t k,
                    struct vindex_hit **hits, size_t *n)
{
    struct vec_top top;
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

void vindex_scan(struct vindex_space *v, const float *q, int dim, size_t k,
                 struct vindex_hit **hits, size_t *n, const char *const *ids, size_t nids,
                 float *sims)
{
    *hits = NULL;
    *n = 0;
    pthread_rwlock_rdlock(&v->lock);
    if (v->n && v->dim == dim && k)
        nearest(v, q, k, hits, n);
    for (size_t i = 0; i < nids; i++) {
        size_t *a = v->n && v->dim == dim ? probe(v, ids[i]) : NULL;
        sims[i] = a && *a ? vec_dot(v->vec + (*a - 1) * (size_t)v->dim, q, dim) : VINDEX_NONE;
    }
    pthread_rwlock_unlock(&v->lock);
}

int vindex_search(struct store *st, const char *space, const char *model, const float *q, int dim,
                  size_t k, struct vindex_hit **hits, size_t *n, const char *const *ids,
                  size_t nids, float *sims)
{
    struct vindex_space *v;
    enum vindex_state state;
    int rc = vindex_open(st, space, model, &v, &state);
    *hits = NULL;
    *n = 0;
    if (rc == STORE_OK)
        vindex_scan(v, q, dim, k, hits, n, ids, nids, sims);
    vindex_close(v);
    return rc;
}

void vindex_hits_free(struct vindex_hit *hits, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(hits[i].id);
    free(hits);
}

/* ---- figures ---- */

void vindex_figures(const char *space, struct vindex_figures *f)
{
    memset(f, 0, sizeof *f);
    f->total_budget = budget_total;
    f->space_cap = budget_space;
    pthread_mutex_lock(&registry_lock);
    for (size_t i = 0; i < registry_n; i++) {
        const struct vindex_space *v = registry[i];
        if (space && strcmp(v->space, space) != 0)
            continue;
        f->vectors += v->count;
        f->bytes += v->held;
        f->needed += v->needed;
        f->over += v->over != FITS;
        f->evicted += v->evicted;
    }
    f->evictions = evictions;
    pthread_mutex_unlock(&registry_lock);
}

void vindex_usage(const char *space, size_t *vectors, size_t *bytes)
{
    struct vindex_figures f;
    vindex_figures(space, &f);
    *vectors = f.vectors;
    *bytes = f.bytes;
}
