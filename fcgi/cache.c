/* cache: a direct-mapped cache of read answers, one per worker thread. */
#include "cache.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

struct slot {
    char *key;
    size_t key_len;
    char *body;
    size_t body_len;
    uint64_t gen;
};

struct cache {
    struct slot *slots;
    size_t n, max_body;
};

struct cache *cache_new(size_t slots, size_t max_body)
{
    struct cache *c = xcalloc(1, sizeof *c);
    c->slots = xcalloc(slots, sizeof *c->slots);
    c->n = slots;
    c->max_body = max_body;
    return c;
}

void cache_free(struct cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->slots[i].key);
        free(c->slots[i].body);
    }
    free(c->slots);
    free(c);
}

static size_t slot_of(const struct cache *c, const char *key, size_t len)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)key[i];
        h *= 1099511628211ULL;
    }
    return (size_t)(h % c->n);
}

const char *cache_get(struct cache *c, const char *key, size_t key_len, uint64_t gen,
                      size_t *body_len)
{
    struct slot *s = &c->slots[slot_of(c, key, key_len)];
    if (!s->key || s->gen != gen || s->key_len != key_len || memcmp(s->key, key, key_len) != 0)
        return NULL;
    *body_len = s->body_len;
    return s->body;
}

void cache_put(struct cache *c, const char *key, size_t key_len, uint64_t gen, const char *body,
               size_t body_len)
{
    struct slot *s = &c->slots[slot_of(c, key, key_len)];
    if (body_len > c->max_body)
        return;
    free(s->key);
    free(s->body);
    s->key = xstrndup(key, key_len);
    s->key_len = key_len;
    s->body = xstrndup(body, body_len);
    s->body_len = body_len;
    s->gen = gen;
}
