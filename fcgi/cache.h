/* cache: a worker thread's cache of read answers (the searches), keyed by
 * the whole request (space, method, path, query, body) and tagged with the
 * database's generation: any commit by any connection makes every answer
 * stale, so a hit is always what the handler would answer now. */
#ifndef KNOWHUB_CACHE_H
#define KNOWHUB_CACHE_H

#include <stddef.h>
#include <stdint.h>

struct cache;

/* A cache of `slots` answers (direct-mapped), each at most max_body bytes. */
struct cache *cache_new(size_t slots, size_t max_body);
void cache_free(struct cache *c);

/* The answer stored for key at generation gen, or NULL; valid until the
 * next cache_put. */
const char *cache_get(struct cache *c, const char *key, size_t key_len, uint64_t gen,
                      size_t *body_len);
/* Store an answer (replacing whatever shared its slot). */
void cache_put(struct cache *c, const char *key, size_t key_len, uint64_t gen, const char *body,
               size_t body_len);

#endif
