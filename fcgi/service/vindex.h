/* vindex: each space's vectors of one model in memory, shared by every
 * thread of the process (one copy, not one per thread), searched by exact
 * cosine. Kept in step with the store by the vectors' stamps: a search first
 * asks the store for the highest stamp (one indexed lookup) and, when it
 * moved, loads only the rows changed since, so an entry embedded, deleted
 * or restored through any process is seen by the next search here.
 *
 * Memory is bounded (vindex_configure, docs/operations.md "Quotas"): a space
 * whose vectors would take more than its cap is not held (searched by words
 * only), and a load that would put the process over its budget first evicts
 * the least recently searched spaces not in use, which reload on their next
 * search. */
#ifndef KNOWHUB_VINDEX_H
#define KNOWHUB_VINDEX_H

#include <stddef.h>

struct store;
struct vindex_space;

struct vindex_hit {
    char *id; /* owned */
    float score;
};

/* Scans of more than this many floats go through the int8 codes first. */
#define VINDEX_PRESCAN_FLOATS (2u * 1024 * 1024)

/* A similarity for an entry without a vector. */
#define VINDEX_NONE (-2.0f)

/* The memory budget: every space's index together, and one space's, in
 * bytes (0: no limit). Called once by main before threads start; until
 * then there is no limit. */
void vindex_configure(size_t total_bytes, size_t space_bytes);

/* What a search of a space's index can use. */
enum vindex_state {
    VINDEX_READY,       /* the whole index, up to date */
    VINDEX_LOADING,     /* another thread is loading it: only what is in so far */
    VINDEX_OVER_BUDGET, /* its vectors exceed its cap: nothing is held */
    VINDEX_NO_ROOM      /* the budget is held by spaces in use right now: nothing this time */
};

/* Hold space's index of model for a search, brought up to date, into *v:
 * it is not evicted until vindex_close(*v), which the caller must call
 * whatever the result. *state says what vindex_scan will search. Returns
 * a store status (the refresh). */
int vindex_open(struct store *st, const char *space, const char *model, struct vindex_space **v,
                enum vindex_state *state);

/* The k entries of an open index whose vectors are nearest the unit vector
 * q (dim floats), best first, into *hits (caller frees with
 * vindex_hits_free); *n may be 0 (no vectors, nothing held, or another
 * dimension). And the exact similarity of each of ids[0..nids) into sims
 * (VINDEX_NONE for an entry without a vector). */
void vindex_scan(struct vindex_space *v, const float *q, int dim, size_t k,
                 struct vindex_hit **hits, size_t *n, const char *const *ids, size_t nids,
                 float *sims);
void vindex_close(struct vindex_space *v);

/* vindex_open, vindex_scan and vindex_close in one. Returns a store status. */
int vindex_search(struct store *st, const char *space, const char *model, const float *q, int dim,
                  size_t k, struct vindex_hit **hits, size_t *n, const char *const *ids,
                  size_t nids, float *sims);
void vindex_hits_free(struct vindex_hit *hits, size_t n);

/* Bring space's index up to date now (the search does it too). */
int vindex_refresh(struct store *st, const char *space, const char *model);

/* Vectors held and their bytes: space's (every model), or every space's
 * when space is NULL (the operator's /metrics). */
void vindex_usage(const char *space, size_t *vectors, size_t *bytes);

/* The index's figures against its budget: space's (every model), or every
 * space's when space is NULL. */
struct vindex_figures {
    size_t vectors, bytes;        /* held now */
    size_t total_budget;          /* KNOWHUB_VECTOR_BYTES (0: no limit) */
    size_t space_cap;             /* KNOWHUB_VECTOR_SPACE_BYTES (0: no limit) */
    size_t needed;                /* bytes a space over its cap would take (0: not over) */
    size_t over;                  /* spaces over their cap: not held, searched by words */
    size_t evicted;               /* spaces evicted, reloaded on their next search */
    unsigned long long evictions; /* evictions since the start (every space's) */
};
void vindex_figures(const char *space, struct vindex_figures *f);

/* How the last scans ran, for the benchmark: 0 exact, 1 int8 prescan. */
void vindex_set_prescan(int mode); /* -1 automatic (default), 0 never, 1 always */

#endif
