/* cache: a worker thread's cache of read answers (the searches), keyed by a
 * digest of the whole request (space, method, path, query, body) and tagged
 * with the database's generation: any commit by any connection makes every
 * answer stale, so a hit is always what the handler would answer now. The
 * cache holds at most a fixed number of bytes; stale answers are freed as
 * soon as the generation moves. */
#ifndef KNOWHUB_CACHE_H
#define KNOWHUB_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define CACHE_KEY_BYTES 32
/* Requests with a larger body are never cached (a search body is small; a
 * padded one would only cost memory). */
#define CACHE_MAX_REQUEST_BODY (16 * 1024)
/* No single answer is larger than this, or than an eighth of the cache. */
#define CACHE_MAX_ANSWER (256 * 1024)

struct cache;

/* A request's key: a 32-byte BLAKE2b digest of its parts, each prefixed
 * with its length, so two different requests never share a key text. */
struct cache_key {
    unsigned char digest[CACHE_KEY_BYTES];
};
void cache_key_of(struct cache_key *key, const char *const parts[], const size_t lens[],
                  size_t count);

/* A cache of `slots` answers (direct-mapped) holding at most max_bytes of
 * answers and bookkeeping together; NULL (no cache) when either is 0. */
struct cache *cache_new(size_t slots, size_t max_bytes);
void cache_free(struct cache *c);

/* The answer stored for key at generation gen, or NULL; valid until the
 * next cache_put. A new gen frees every answer of the older one. */
const char *cache_get(struct cache *c, const struct cache_key *key, uint64_t gen, size_t *body_len);
/* Store an answer (replacing whatever shared its slot, and evicting others
 * while the cache would be over its bytes); an answer over the largest kept
 * is not stored. */
void cache_put(struct cache *c, const struct cache_key *key, uint64_t gen, const char *body,
               size_t body_len);

/* Bytes held (answers plus a per-entry overhead) and answers held. */
size_t cache_bytes(const struct cache *c);
size_t cache_entries(const struct cache *c);
/* The largest answer this cache keeps. */
size_t cache_max_answer(const struct cache *c);

#endif
