/* lindex: the lexical index in memory (lindex.h). */
#define _GNU_SOURCE /* qsort_r */
#include "service/lindex.h"
#include "base/util.h"
#include "domain/paths.h"
#include "domain/tokenize.h"
#include "store/store.h"

#include <math.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* A 256-bit set of the bytes and byte pairs of a folded text: a text that
 * holds another as a substring holds every bit of it, so a missing bit
 * proves a token absent without searching (the bound of the reference
 * score). */
struct sig {
    uint64_t w[4];
};

/* An entry: its strings in one block, its folded fields' offsets. */
struct ldoc {
    long long seq;   /* 0: a slot no longer in the index */
    char *block;     /* id, category, path, updated_at, then the folded fields */
    size_t *tag_off; /* the tags' offsets in their text (strlist) */
    uint32_t *terms; /* the ids of its terms, to count them out */
    uint32_t n_terms, n_tags;
    uint32_t off[8]; /* category, path, updated_at, title, stem, body, entry, tags */
    uint32_t len[5]; /* title, stem, body, entry, tags text (with its NULs) */
    long lens[BM25_FIELDS];
    struct sig title, tags, stem;
    unsigned types;
    unsigned char always_apply, manual;
};

enum { F_CATEGORY, F_PATH, F_UPDATED, F_TITLE, F_STEM, F_BODY, F_ENTRY, F_TAGS };

/* A term's frequency in an entry's fields: the head's (title, tags, stem,
 * scenario) in a byte each, the body's in two (12 bytes a posting). A
 * frequency past them makes the space not held (the passes serve it). */
struct post {
    uint32_t doc;
    uint16_t body;
    uint8_t head[BM25_BODY];
};

static long tf_of(const struct post *p, int f)
{
    return f == BM25_BODY ? (long)p->body : (long)p->head[f];
}

struct lterm {
    char *text;
    struct post *p; /* by doc, ascending: slots are handed out in order */
    uint32_t n, cap;
    long long df; /* live entries holding it */
};

struct lindex_space {
    char *db, *space;        /* store_identity, the space */
    pthread_rwlock_t lock;   /* searches read; a refresh writes */
    pthread_mutex_t refresh; /* one refresh at a time */
    pthread_mutex_t sort;    /* the sorted terms, made when a prefix search needs them */
    uint64_t gen;            /* the generation the space was last checked at */
    int checked;             /* gen is valid */
    int loaded;
    long long stamp; /* every change up to this stamp is in */
    struct ldoc *docs;
    size_t n_docs, cap_docs, live, dead;
    size_t *at, at_cap; /* seq -> slot + 1 */
    struct lterm *terms;
    size_t n_terms, cap_terms;
    uint32_t *term_at; /* term hash -> id + 1 */
    size_t term_cap;
    uint32_t *sorted; /* term ids in byte order (n_sorted of them) */
    size_t n_sorted;
    long long total_len[BM25_FIELDS];
    size_t bytes;
    int over;             /* past the budget: not held until its stamp moves */
    atomic_int reloading; /* a whole load under way: searches take the passes meanwhile */
    long long over_stamp;
    /* under registry_lock */
    int busy;
    unsigned long long used;
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lindex_space **registry;
static size_t registry_n, total_bytes;
static unsigned long long tick;
static size_t budget = (size_t)1 << 30; /* until lindex_configure */

void lindex_configure(size_t total)
{
    budget = total;
}

size_t lindex_budget(void)
{
    return budget;
}

/* ---- signatures ---- */

static void sig_add(struct sig *s, const char *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned a = (unsigned char)t[i], b = i + 1 < n ? (unsigned char)t[i + 1] : 256u;
        unsigned h1 = (a * 0x9E37u) >> 8 & 255u, h2 = ((a * 31u + b) * 0x9E3779B1u) >> 24 & 255u;
        s->w[h1 >> 6] |= 1ULL << (h1 & 63);
        if (i + 1 < n)
            s->w[h2 >> 6] |= 1ULL << (h2 & 63);
    }
}

static int sig_within(const struct sig *part, const struct sig *whole)
{
    for (int i = 0; i < 4; i++)
        if (part->w[i] & ~whole->w[i])
            return 0;
    return 1;
}

/* ---- the maps ---- */

static size_t seq_hash(long long seq, size_t cap)
{
    return (size_t)(((uint64_t)seq * 0x9E3779B97F4A7C15ULL) >> 17) & (cap - 1);
}

static size_t *seq_slot(struct lindex_space *l, long long seq)
{
    size_t i = seq_hash(seq, l->at_cap);
    while (l->at[i] && l->docs[l->at[i] - 1].seq != seq)
        i = (i + 1) & (l->at_cap - 1);
    return &l->at[i];
}

static void seq_grow(struct lindex_space *l)
{
    size_t cap = l->at_cap ? 2 * l->at_cap : 1024;
    free(l->at);
    l->at = xcalloc(cap, sizeof *l->at);
    l->at_cap = cap;
    for (size_t d = 0; d < l->n_docs; d++)
        if (l->docs[d].seq)
            *seq_slot(l, l->docs[d].seq) = d + 1;
}

static uint32_t *term_slot(const struct lindex_space *l, const char *t, size_t n)
{
    size_t i = (size_t)hash_fnv1a(t, n) & (l->term_cap - 1);
    while (l->term_at[i]) {
        const char *x = l->terms[l->term_at[i] - 1].text;
        if (strncmp(x, t, n) == 0 && x[n] == '\0')
            break;
        i = (i + 1) & (l->term_cap - 1);
    }
    return &l->term_at[i];
}

static struct lterm *term_find(const struct lindex_space *l, const char *t, size_t n)
{
    uint32_t id;
    if (!l->term_cap)
        return NULL;
    id = *term_slot(l, t, n);
    return id ? &l->terms[id - 1] : NULL;
}

static uint32_t term_get(struct lindex_space *l, const char *t, size_t n)
{
    uint32_t *slot;
    if (2 * (l->n_terms + 1) > l->term_cap) {
        size_t cap = l->term_cap ? 2 * l->term_cap : 4096;
        free(l->term_at);
        l->term_at = xcalloc(cap, sizeof *l->term_at);
        l->term_cap = cap;
        for (size_t i = 0; i < l->n_terms; i++)
            *term_slot(l, l->terms[i].text, strlen(l->terms[i].text)) = (uint32_t)i + 1;
    }
    slot = term_slot(l, t, n);
    if (*slot)
        return *slot - 1;
    if (l->n_terms == l->cap_terms) {
        l->cap_terms = l->cap_terms ? 2 * l->cap_terms : 4096;
        l->terms = xrealloc(l->terms, l->cap_terms * sizeof *l->terms);
    }
    memset(&l->terms[l->n_terms], 0, sizeof *l->terms);
    l->terms[l->n_terms].text = xstrndup(t, n);
    l->bytes += n + 1 + sizeof *l->terms + 2 * sizeof *l->term_at;
    *slot = (uint32_t)++l->n_terms;
    l->n_sorted = 0; /* the sorted order is made again when next needed */
    return (uint32_t)l->n_terms - 1;
}

/* ---- entries in and out ---- */

/* Scratch space of a load or refresh. */
struct scratch {
    struct buf block, field, tmp, stem, entry;
    struct strlist tags;
    uint32_t *ids; /* the term ids of the entry being added */
    size_t ids_cap;
};

struct adding {
    struct lindex_space *l;
    struct scratch *s;
    uint32_t slot, n_ids;
    int saturated;
};

static int add_term(const char *term, size_t n, const long tf[BM25_FIELDS], void *ctx)
{
    struct adding *a = ctx;
    uint32_t id = term_get(a->l, term, n);
    struct lterm *t = &a->l->terms[id];
    struct post *p;
    if (t->n == t->cap) {
        uint32_t was = t->cap;
        t->cap = was ? 2 * was : 1;
        t->p = xrealloc(t->p, t->cap * sizeof *t->p);
        a->l->bytes += (t->cap - was) * sizeof *t->p;
    }
    p = &t->p[t->n++];
    p->doc = a->slot;
    for (int f = 0; f < BM25_BODY; f++) {
        if (tf[f] > UINT8_MAX)
            a->saturated = 1;
        p->head[f] = (uint8_t)(tf[f] > UINT8_MAX ? UINT8_MAX : tf[f]);
    }
    if (tf[BM25_BODY] > UINT16_MAX)
        a->saturated = 1;
    p->body = (uint16_t)(tf[BM25_BODY] > UINT16_MAX ? UINT16_MAX : tf[BM25_BODY]);
    t->df++;
    if (a->n_ids == a->s->ids_cap) {
        a->s->ids_cap = a->s->ids_cap ? 2 * a->s->ids_cap : 256;
        a->s->ids = xrealloc(a->s->ids, a->s->ids_cap * sizeof *a->s->ids);
    }
    a->s->ids[a->n_ids++] = id;
    return 0;
}

/* Append s (n bytes) and a NUL to b; its offset. */
static uint32_t put(struct buf *b, const char *s, size_t n)
{
    size_t at = b->len;
    buf_add(b, s, n);
    buf_addch(b, '\0');
    return (uint32_t)at;
}

static void scratch_init(struct scratch *s)
{
    buf_init(&s->block, FIELD_MAX);
    buf_init(&s->field, FIELD_MAX);
    buf_init(&s->tmp, FIELD_MAX);
    buf_init(&s->stem, FIELD_MAX);
    buf_init(&s->entry, FIELD_MAX);
    strlist_init(&s->tags);
    s->ids = NULL;
    s->ids_cap = 0;
}

static void scratch_release(struct scratch *s)
{
    buf_release(&s->block);
    buf_release(&s->field);
    buf_release(&s->tmp);
    buf_release(&s->stem);
    buf_release(&s->entry);
    strlist_release(&s->tags);
    free(s->ids);
}

/* An entry's slot emptied: it is no longer in the index. */
static void ldoc_free(struct ldoc *d)
{
    free(d->block);
    free(d->tag_off);
    free(d->terms);
    d->block = NULL;
    d->tag_off = NULL;
    d->terms = NULL;
    d->seq = 0;
}

static void drop(struct lindex_space *l, long long seq)
{
    size_t *slot;
    struct ldoc *d;
    if (!l->at_cap || !*(slot = seq_slot(l, seq)))
        return;
    d = &l->docs[*slot - 1];
    for (uint32_t i = 0; i < d->n_terms; i++)
        l->terms[d->terms[i]].df--;
    for (int f = 0; f < BM25_FIELDS; f++)
        l->total_len[f] -= d->lens[f];
    ldoc_free(d);
    l->live--;
    l->dead++;
    /* the map keeps no hole: its entries after this one are placed again */
    *slot = 0;
    for (size_t i = (size_t)(slot - l->at + 1) & (l->at_cap - 1); l->at[i];
         i = (i + 1) & (l->at_cap - 1)) {
        size_t v = l->at[i];
        l->at[i] = 0;
        *seq_slot(l, l->docs[v - 1].seq) = v;
    }
}

/* Put row r in (replacing what the index held for its seq); 0, or -1 when
 * a frequency does not fit the postings (the space is not held). */
static int add(struct lindex_space *l, const struct match_row *r, struct scratch *s)
{
    struct adding a = {l, s, 0, 0, 0};
    struct ldoc *d;
    size_t block_len;
    drop(l, r->seq);
    if (bm25_record_lengths(r->terms, (long[BM25_FIELDS]){0}))
        return 0; /* no record: the passes never meet it either */
    if (l->n_docs == l->cap_docs) {
        l->cap_docs = l->cap_docs ? 2 * l->cap_docs : 1024;
        l->docs = xrealloc(l->docs, l->cap_docs * sizeof *l->docs);
    }
    if (2 * (l->n_docs + 1) > l->at_cap)
        seq_grow(l);
    a.slot = (uint32_t)l->n_docs;
    d = &l->docs[l->n_docs++];
    memset(d, 0, sizeof *d);
    d->seq = r->seq;
    d->types = r->types;
    d->always_apply = (unsigned char)(r->always_apply != 0);
    d->manual = (unsigned char)score_source_manual(r->source);
    bm25_record_lengths(r->terms, d->lens);
    for (int f = 0; f < BM25_FIELDS; f++)
        l->total_len[f] += d->lens[f];
    buf_reset(&s->block);
    put(&s->block, r->id, strlen(r->id));
    d->off[F_CATEGORY] = put(&s->block, r->category, strlen(r->category));
    d->off[F_PATH] = put(&s->block, r->path, strlen(r->path));
    d->off[F_UPDATED] = put(&s->block, r->updated_at, strlen(r->updated_at));
    fold_field(&s->field, r->title, 0, &s->tmp);
    d->off[F_TITLE] = put(&s->block, s->field.data, d->len[0] = (uint32_t)s->field.len);
    sig_add(&d->title, s->field.data, s->field.len);
    path_stem(r->path, &s->stem);
    fold_field(&s->field, s->stem.data, 0, &s->tmp);
    d->off[F_STEM] = put(&s->block, s->field.data, d->len[1] = (uint32_t)s->field.len);
    sig_add(&d->stem, s->field.data, s->field.len);
    fold_field(&s->field, r->body, 200, &s->tmp);
    d->off[F_BODY] = put(&s->block, s->field.data, d->len[2] = (uint32_t)s->field.len);
    fold_entry_body(&s->field, r->scenario, r->body, &s->entry, &s->tmp);
    d->off[F_ENTRY] = put(&s->block, s->field.data, d->len[3] = (uint32_t)s->field.len);
    strlist_set_tags(&s->tags, r->tags, &s->tmp);
    d->off[F_TAGS] = (uint32_t)s->block.len;
    buf_add(&s->block, s->tags.text.data, s->tags.text.len);
    d->len[4] = (uint32_t)s->tags.text.len;
    d->n_tags = (uint32_t)s->tags.n;
    d->tag_off = xcalloc(s->tags.n + 1, sizeof *d->tag_off);
    for (size_t i = 0; i < s->tags.n; i++) {
        size_t end = i + 1 < s->tags.n ? s->tags.off[i + 1] - 1 : s->tags.text.len - 1;
        d->tag_off[i] = s->tags.off[i];
        sig_add(&d->tags, s->tags.text.data + s->tags.off[i], end - s->tags.off[i]);
    }
    block_len = s->block.len;
    d->block = xmalloc(block_len + 1);
    memcpy(d->block, s->block.data, block_len);
    d->block[block_len] = '\0';
    bm25_record_each(r->terms, add_term, &a);
    d->n_terms = a.n_ids;
    d->terms = xmalloc((a.n_ids + 1) * sizeof *d->terms);
    if (a.n_ids)
        memcpy(d->terms, s->ids, a.n_ids * sizeof *d->terms);
    l->bytes += sizeof *d + block_len + (s->tags.n + 1) * sizeof *d->tag_off +
                (a.n_ids + 1) * sizeof *d->terms + 2 * sizeof *l->at;
    l->live++;
    *seq_slot(l, r->seq) = l->n_docs;
    return a.saturated ? -1 : 0;
}

static void clear(struct lindex_space *l)
{
    for (size_t i = 0; i < l->n_docs; i++)
        ldoc_free(&l->docs[i]);
    for (size_t i = 0; i < l->n_terms; i++) {
        free(l->terms[i].text);
        free(l->terms[i].p);
    }
    free(l->docs);
    free(l->at);
    free(l->terms);
    free(l->term_at);
    free(l->sorted);
    l->docs = NULL;
    l->at = NULL;
    l->terms = NULL;
    l->term_at = NULL;
    l->sorted = NULL;
    l->n_docs = l->cap_docs = l->live = l->dead = l->at_cap = 0;
    l->n_terms = l->cap_terms = l->term_cap = l->n_sorted = 0;
    memset(l->total_len, 0, sizeof l->total_len);
    l->bytes = 0;
    l->loaded = 0;
}

/* ---- keeping in step ---- */

struct applying {
    struct lindex_space *l;
    struct scratch s;
    long long top; /* the highest stamp met */
    int failed;    /* over the budget, or a frequency too large */
    size_t own;    /* the bytes the budget counts for l (as before the refresh) */
    size_t room;   /* the bytes l may take */
};

/* The bytes space l may take, want at least if it can be had: the budget
 * less every other space's, after the least recently searched spaces that
 * no search holds are let go as need be (under registry_lock; own: what the
 * budget counts for l now). */
static size_t room_for(struct lindex_space *l, size_t own, size_t want)
{
    for (;;) {
        struct lindex_space *cold = NULL;
        if (total_bytes - own + want <= budget)
            break;
        for (size_t i = 0; i < registry_n; i++) {
            struct lindex_space *o = registry[i];
            if (o != l && !o->busy && o->loaded && (!cold || o->used < cold->used))
                cold = o;
        }
        if (!cold)
            break;
        /* idle: no search holds it, and none can start while registry_lock is held */
        pthread_rwlock_wrlock(&cold->lock);
        total_bytes -= cold->bytes;
        clear(cold);
        cold->checked = 0;
        pthread_rwlock_unlock(&cold->lock);
    }
    return budget > total_bytes - own ? budget - (total_bytes - own) : 0;
}

static int apply_row(long long seq, long long stamp, const struct match_row *row, void *ctx)
{
    struct applying *a = ctx;
    if (stamp > a->top)
        a->top = stamp;
    if (!row)
        drop(a->l, seq);
    else if (add(a->l, row, &a->s))
        a->failed = 1;
    if (a->l->bytes > a->room) {
        /* growing past its room: more is made if idle spaces can go */
        pthread_mutex_lock(&registry_lock);
        a->room = room_for(a->l, a->own, a->l->bytes + a->l->bytes / 4);
        pthread_mutex_unlock(&registry_lock);
        if (a->l->bytes > a->room)
            a->failed = 1;
    }
    return a->failed;
}

static void account(struct lindex_space *l, size_t before)
{
    pthread_mutex_lock(&registry_lock);
    total_bytes = total_bytes - before + l->bytes;
    pthread_mutex_unlock(&registry_lock);
}

/* Bring l up to date under its write lock (the refresh lock held). */
static int refresh(struct store *st, struct lindex_space *l, uint64_t gen)
{
    long long stamp, floor;
    struct applying a;
    size_t before = l->bytes;
    int rc, whole;
    memset(&a, 0, sizeof a);
    a.l = l;
    if ((rc = store_search_stamp(st, l->space, &stamp, &floor)))
        return rc;
    if (l->over && stamp == l->over_stamp) {
        l->gen = gen; /* still over its budget: the passes serve it */
        l->checked = 1;
        return STORE_OK;
    }
    /* A snapshot older than the index (a read that began before another
     * thread's refresh) is served by the index as it is: as if it began a
     * moment later. It is not marked checked: the next search looks again. */
    if (l->loaded && stamp < l->stamp)
        return STORE_OK;
    whole = !l->loaded || l->stamp < floor || (l->dead > 1024 && l->dead > l->live);
    if (!whole && stamp == l->stamp) {
        l->gen = gen;
        l->checked = 1;
        return STORE_OK;
    }
    a.own = before;
    pthread_mutex_lock(&registry_lock);
    a.room = room_for(l, before, whole ? 0 : before);
    pthread_mutex_unlock(&registry_lock);
    scratch_init(&a.s);
    if (whole)
        atomic_store(&l->reloading, 1);
    pthread_rwlock_wrlock(&l->lock);
    if (whole)
        clear(l);
    l->over = 0;
    rc = store_search_docs(st, l->space, whole ? -1 : l->stamp, apply_row, &a);
    if (rc == STORE_OK && !a.failed) {
        l->loaded = 1;
        l->stamp = whole ? stamp : (a.top > stamp ? a.top : stamp);
        l->gen = gen;
        l->checked = 1;
    } else {
        clear(l);
        l->checked = 0;
        if (a.failed) {
            l->over = 1;
            l->over_stamp = stamp;
        }
    }
    pthread_rwlock_unlock(&l->lock);
    atomic_store(&l->reloading, 0);
    scratch_release(&a.s);
    account(l, before);
    return rc;
}

static struct lindex_space *use(const char *db, const char *space)
{
    struct lindex_space *l = NULL;
    pthread_mutex_lock(&registry_lock);
    for (size_t i = 0; i < registry_n && !l; i++)
        if (strcmp(registry[i]->space, space) == 0 && strcmp(registry[i]->db, db) == 0)
            l = registry[i];
    if (!l) {
        l = xcalloc(1, sizeof *l);
        l->db = xstrdup(db);
        l->space = xstrdup(space);
        pthread_rwlock_init(&l->lock, NULL);
        pthread_mutex_init(&l->refresh, NULL);
        pthread_mutex_init(&l->sort, NULL);
        registry = xrealloc(registry, (registry_n + 1) * sizeof *registry);
        registry[registry_n++] = l;
    }
    l->busy++;
    l->used = ++tick;
    pthread_mutex_unlock(&registry_lock);
    return l;
}

static void unuse(struct lindex_space *l)
{
    pthread_mutex_lock(&registry_lock);
    l->busy--;
    pthread_mutex_unlock(&registry_lock);
}

int lindex_open(struct store *st, const char *space, uint64_t gen, struct lindex_space **out)
{
    struct lindex_space *l;
    int rc = STORE_OK;
    *out = NULL;
    if (budget == 0)
        return STORE_OK;
    l = use(store_identity(st), space);
    /* A space being loaded whole (its first search, or after as many
     * replaced entries as live ones) would hold this search for the load:
     * the passes answer it meanwhile. */
    if (atomic_load(&l->reloading)) {
        unuse(l);
        return STORE_OK;
    }
    pthread_mutex_lock(&l->refresh);
    if (!(l->checked && l->gen == gen))
        rc = refresh(st, l, gen);
    pthread_mutex_unlock(&l->refresh);
    pthread_rwlock_rdlock(&l->lock);
    if (rc != STORE_OK || !l->loaded || l->over) {
        pthread_rwlock_unlock(&l->lock);
        unuse(l);
        return rc;
    }
    *out = l;
    return STORE_OK;
}

void lindex_close(struct lindex_space *l)
{
    pthread_rwlock_unlock(&l->lock);
    unuse(l);
}

void lindex_stats(const struct lindex_space *l, const char *const *terms, size_t n,
                  struct bm25_stats *stats, long long *df)
{
    memset(stats, 0, sizeof *stats);
    stats->docs = (double)l->live;
    for (int f = 0; f < BM25_FIELDS; f++)
        stats->total_len[f] = (double)l->total_len[f];
    for (size_t i = 0; i < n; i++) {
        const struct lterm *t = term_find(l, terms[i], strlen(terms[i]));
        df[i] = t ? t->df : 0;
    }
}

void lindex_usage(size_t *spaces, size_t *entries, size_t *bytes)
{
    *spaces = *entries = 0;
    pthread_mutex_lock(&registry_lock);
    for (size_t i = 0; i < registry_n; i++)
        if (registry[i]->loaded) {
            (*spaces)++;
            *entries += registry[i]->live;
        }
    *bytes = total_bytes;
    pthread_mutex_unlock(&registry_lock);
}

/* ---- ranking ---- */

/* The view of entry d the ranking scores. */
static void view(const struct lindex_space *l, uint32_t slot, int entry_view, struct lindex_doc *v,
                 struct fields *f)
{
    const struct ldoc *d = &l->docs[slot];
    memset(f, 0, sizeof *f);
    v->id = d->block;
    v->category = d->block + d->off[F_CATEGORY];
    v->path = d->block + d->off[F_PATH];
    v->updated_at = d->block + d->off[F_UPDATED];
    v->types = d->types;
    v->always_apply = d->always_apply;
    v->manual = d->manual;
    f->title.data = d->block + d->off[F_TITLE];
    f->title.len = d->len[0];
    f->stem.data = d->block + d->off[F_STEM];
    f->stem.len = d->len[1];
    f->body.data = d->block + d->off[entry_view ? F_ENTRY : F_BODY];
    f->body.len = d->len[entry_view ? 3 : 2];
    f->tags.text.data = d->block + d->off[F_TAGS];
    f->tags.text.len = d->len[4];
    f->tags.off = d->tag_off;
    f->tags.n = d->n_tags;
    v->f = f;
}

/* The query's signatures: each token's, the whole query's, each table's. */
struct qsig {
    struct sig tok[64], whole, table[64];
    size_t n_tok, n_table;
};

static void qsig_init(struct qsig *s, const struct lindex_rank *r)
{
    memset(s, 0, sizeof *s);
    s->n_tok = r->q->n < 64 ? r->q->n : 64;
    for (size_t i = 0; i < s->n_tok; i++)
        sig_add(&s->tok[i], r->q->tokens[i], strlen(r->q->tokens[i]));
    sig_add(&s->whole, r->q->whole, strlen(r->q->whole));
    s->n_table = r->tables->n < 64 ? r->tables->n : 64;
    for (size_t i = 0; i < s->n_table; i++) {
        const char *t = r->tables->text.data + r->tables->off[i];
        sig_add(&s->table[i], t, strlen(t));
    }
}

/* The most the reference score of d can be (score_folded's sum, over the
 * fields whose signature may hold each token; the body's 10/N always). */
static double ref_bound(const struct lindex_rank *r, const struct qsig *s, const struct ldoc *d)
{
    double score = 0, n = (double)r->q->n;
    size_t whole = strlen(r->q->whole);
    if (r->q->n > 64 || r->tables->n > 64)
        return INFINITY;
    for (size_t i = 0; i < s->n_tok; i++) {
        if (sig_within(&s->tok[i], &d->title))
            score += 100 / n;
        if (sig_within(&s->tok[i], &d->tags))
            score += 50 / n;
        if (sig_within(&s->tok[i], &d->stem))
            score += 30 / n;
        score += 10 / n;
    }
    if (whole && sig_within(&s->whole, &d->title))
        score += 50;
    if (whole && sig_within(&s->whole, &d->tags))
        score += 50;
    for (size_t i = 0; i < s->n_table; i++)
        if (sig_within(&s->table[i], &d->tags))
            score += 30;
    if (score > 0 && !d->manual)
        score *= 0.9;
    return score + 1e-9;
}

/* A list merged into the candidates: a term's postings; term: the query
 * term it weighs (-1: it only names candidates); tags_only: postings whose
 * term is in the tags. */
struct cursor_of {
    const struct post *p, *end;
    int term;
    int tags_only;
};

struct cand {
    uint32_t doc;
    double cov, ub;
};

static void heap_down(struct cand *h, size_t n, size_t i)
{
    for (;;) {
        size_t c = 2 * i + 1;
        struct cand t;
        if (c >= n)
            return;
        if (c + 1 < n && h[c + 1].ub > h[c].ub)
            c++;
        if (h[c].ub <= h[i].ub)
            return;
        t = h[c];
        h[c] = h[i];
        h[i] = t;
        i = c;
    }
}

static void skip_untagged(struct cursor_of *c)
{
    while (c->tags_only && c->p < c->end && c->p->head[BM25_TAGS] == 0)
        c->p++;
}

static int by_term(const void *a, const void *b, void *ctx)
{
    const struct lterm *t = ctx;
    return strcmp(t[*(const uint32_t *)a].text, t[*(const uint32_t *)b].text);
}

/* The terms in byte order, made when first needed since terms were added. */
static void sort_terms(struct lindex_space *l)
{
    pthread_mutex_lock(&l->sort);
    if (l->n_sorted != l->n_terms) {
        l->sorted = xrealloc(l->sorted, (l->n_terms + 1) * sizeof *l->sorted);
        for (size_t i = 0; i < l->n_terms; i++)
            l->sorted[i] = (uint32_t)i;
        qsort_r(l->sorted, l->n_terms, sizeof *l->sorted, by_term, l->terms);
        l->n_sorted = l->n_terms;
    }
    pthread_mutex_unlock(&l->sort);
}

/* How many postings the words a prefix begins may add to a search, at most
 * (the table names' words; the prefix candidates), and how many of the
 * prefix candidates are scored: the passes take a few hundred rows for
 * them, newest first; a one-letter prefix of a large space begins most of
 * its words. */
#define PREFIX_POSTINGS 8192
#define PREFIX_SCORED 400

/* Each term a prefix begins, in byte order, to each(term, ctx) until it
 * returns non-zero. */
static void with_prefix(struct lindex_space *l, const char *prefix,
                        int (*each)(struct lterm *t, void *ctx), void *ctx)
{
    size_t n = strlen(prefix), lo = 0, hi;
    sort_terms(l);
    hi = l->n_sorted;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(l->terms[l->sorted[mid]].text, prefix) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < l->n_sorted && strncmp(l->terms[l->sorted[lo]].text, prefix, n) == 0; lo++)
        if (each(&l->terms[l->sorted[lo]], ctx))
            return;
}

struct lists {
    struct cursor_of *c;
    size_t n, cap;
    size_t prefixed; /* postings added for the table names' words */
    int term, tags_only;
};

static int list_add(struct lterm *t, void *ctx)
{
    struct lists *ls = ctx;
    if (!t->n)
        return 0;
    if (ls->term < 0) {
        if (ls->prefixed + t->n > PREFIX_POSTINGS)
            return 1; /* enough: the words after it are left out */
        ls->prefixed += t->n;
    }
    if (ls->n == ls->cap) {
        ls->cap = ls->cap ? 2 * ls->cap : 16;
        ls->c = xrealloc(ls->c, ls->cap * sizeof *ls->c);
    }
    ls->c[ls->n++] = (struct cursor_of){t->p, t->p + t->n, ls->term, ls->tags_only};
    return 0;
}

struct table_words {
    struct lindex_space *l;
    struct lists *ls;
    size_t count;
};

static int table_prefix(void *ctx, const char *token, size_t n, size_t start, size_t end)
{
    struct table_words *w = ctx;
    char word[256];
    (void)start;
    (void)end;
    if (w->count++ >= 64 || n >= sizeof word)
        return 0;
    memcpy(word, token, n);
    word[n] = '\0';
    with_prefix(w->l, word, list_add, w->ls);
    return 0;
}

/* The candidates of the query's terms (and tables), merged by entry, with
 * their coverage and bound, into *out (a heap by bound); seen marks them. */
static size_t gather(struct lindex_space *l, const struct lindex_rank *r, const struct qsig *qs,
                     unsigned char *seen, struct cand **out)
{
    struct lists ls = {0};
    size_t n = 0, cap = 64;
    struct cand *h = xmalloc(cap * sizeof *h);
    long tf[BM25_FIELDS];
    double norm[BM25_FIELDS];
    for (size_t i = 0; i < r->bq->n; i++) {
        struct lterm *t = term_find(l, r->bq->terms[i], strlen(r->bq->terms[i]));
        ls.term = (int)i;
        if (t)
            list_add(t, &ls);
    }
    if (r->tables->n) {
        struct table_words w = {l, &ls, 0};
        ls.term = -1;
        ls.tags_only = 1;
        for (size_t i = 0; i < r->tables->n; i++) {
            const char *tn = r->tables->text.data + r->tables->off[i];
            tokenize_terms(tn, strlen(tn), table_prefix, &w);
        }
    }
    for (size_t i = 0; i < ls.n; i++)
        skip_untagged(&ls.c[i]);
    for (;;) {
        uint32_t doc = UINT32_MAX;
        double sum = 0, parts[BM25_MAX_TERMS];
        unsigned long long has = 0;
        struct ldoc *d;
        for (size_t i = 0; i < ls.n; i++)
            if (ls.c[i].p < ls.c[i].end && ls.c[i].p->doc < doc)
                doc = ls.c[i].p->doc;
        if (doc == UINT32_MAX)
            break;
        d = &l->docs[doc];
        if (d->seq)
            bm25_norms(r->stats, d->lens, norm);
        for (size_t i = 0; i < ls.n; i++) {
            struct cursor_of *c = &ls.c[i];
            if (c->p >= c->end || c->p->doc != doc)
                continue;
            if (d->seq && c->term >= 0 && r->bq->idf[c->term] > 0 && !(has >> c->term & 1)) {
                for (int f = 0; f < BM25_FIELDS; f++)
                    tf[f] = tf_of(c->p, f);
                parts[c->term] = bm25_term_part(r->bq, (size_t)c->term, norm, tf);
                has |= 1ULL << c->term;
            }
            c->p++;
            skip_untagged(c);
        }
        if (!d->seq)
            continue; /* gone from the index: its postings stay until a reload */
        for (size_t i = 0; i < r->bq->n; i++)
            if (has >> i & 1)
                sum += parts[i];
        seen[doc >> 3] |= (unsigned char)(1u << (doc & 7));
        if (n == cap)
            h = xrealloc(h, (cap *= 2) * sizeof *h);
        h[n].doc = doc;
        h[n].cov = r->bq->idf_sum > 0 ? sum / r->bq->idf_sum : 0;
        h[n].ub = r->relevance(ref_bound(r, qs, d), h[n].cov, r->ctx);
        n++;
    }
    free(ls.c);
    for (size_t i = n / 2; i-- > 0;)
        heap_down(h, n, i);
    *out = h;
    return n;
}

struct late {
    struct lindex_space *l;
    const struct lindex_rank *r;
    unsigned char *seen;
    size_t visited, scored; /* postings read, candidates scored */
};

/* The entries holding term, newest first (the highest slots), scored while
 * the prefix budgets last; 1: stop. */
static int late_term(struct lterm *t, void *ctx)
{
    struct late *a = ctx;
    for (uint32_t i = t->n; i-- > 0;) {
        uint32_t doc = t->p[i].doc;
        struct lindex_doc v;
        struct fields f;
        if (++a->visited > PREFIX_POSTINGS || a->scored >= PREFIX_SCORED)
            return 1;
        if (a->seen[doc >> 3] >> (doc & 7) & 1 || !a->l->docs[doc].seq)
            continue;
        a->seen[doc >> 3] |= (unsigned char)(1u << (doc & 7));
        view(a->l, doc, a->r->entry_view, &v, &f);
        if (a->r->admit(&v, a->r->ctx)) {
            a->scored++;
            a->r->score(&v, 0, a->r->ctx); /* holds no query term: coverage 0 */
        }
    }
    return 0;
}

void lindex_rank(struct lindex_space *l, const struct lindex_rank *r)
{
    struct qsig qs;
    struct cand *h;
    unsigned char *seen = xcalloc(l->n_docs / 8 + 1, 1);
    size_t n;
    int extensible = 0;
    qsig_init(&qs, r);
    n = gather(l, r, &qs, seen, &h);
    while (n > 0 && !(r->threshold(r->ctx) > h[0].ub)) {
        struct cand c = h[0];
        struct lindex_doc v;
        struct fields f;
        h[0] = h[--n];
        heap_down(h, n, 0);
        view(l, c.doc, r->entry_view, &v, &f);
        if (r->admit(&v, r->ctx))
            r->score(&v, c.cov, r->ctx);
    }
    free(h);
    for (size_t i = 0; i < r->q->n_terms && !extensible; i++)
        extensible = !tokenize_han_bigram(r->q->terms[i], strlen(r->q->terms[i]));
    if (extensible && r->positive(r->ctx) < r->want) {
        struct late a = {l, r, seen, 0, 0};
        for (size_t i = 0; i < r->q->n_terms && a.visited <= PREFIX_POSTINGS; i++)
            with_prefix(l, r->q->terms[i], late_term, &a);
    }
    free(seen);
}
