/* vindex: each space's vectors of one model in memory, shared by every
 * thread of the process (one copy, not one per thread), searched by exact
 * cosine. Kept in step with the store by the vectors' stamps: a search first
 * asks the store for the highest stamp (one indexed lookup) and, when it
 * moved, loads only the rows changed since, so an entry embedded, deleted
 * or restored through any process is seen by the next search here. */
#ifndef KNOWHUB_VINDEX_H
#define KNOWHUB_VINDEX_H

#include <stddef.h>

struct store;

struct vindex_hit {
    char *id; /* owned */
    float score;
};

/* Scans of more than this many floats go through the int8 codes first. */
#define VINDEX_PRESCAN_FLOATS (2u * 1024 * 1024)

/* A similarity for an entry without a vector. */
#define VINDEX_NONE (-2.0f)

/* The k entries of space whose vectors of model are nearest the unit vector
 * q (dim floats), best first, into *hits (caller frees with
 * vindex_hits_free); *n may be 0 (no vectors, or another dimension). And
 * the exact similarity of each of ids[0..nids) into sims (VINDEX_NONE for
 * an entry without a vector). Returns a store status (the refresh). */
int vindex_search(struct store *st, const char *space, const char *model, const float *q, int dim,
                  size_t k, struct vindex_hit **hits, size_t *n, const char *const *ids,
                  size_t nids, float *sims);
void vindex_hits_free(struct vindex_hit *hits, size_t n);

/* Bring space's index up to date now (the search does it too). */
int vindex_refresh(struct store *st, const char *space, const char *model);

/* Vectors held and their bytes: space's (every model), or every space's
 * when space is NULL (the operator's /metrics). */
void vindex_usage(const char *space, size_t *vectors, size_t *bytes);

/* How the last scans ran, for the benchmark: 0 exact, 1 int8 prescan. */
void vindex_set_prescan(int mode); /* -1 automatic (default), 0 never, 1 always */

#endif
