/* cache: a direct-mapped cache of read answers, one per worker thread,
 * keyed by digests and bounded in bytes. */
#include "base/cache.h"
#include "base/util.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

/* What an entry costs besides its answer: its slot is preallocated, but the
 * answer's allocation has malloc's header and rounding. */
#define ENTRY_OVERHEAD 64

struct slot {
    struct cache_key key;
    char *body; /* NULL: empty */
    size_t body_len;
};

struct cache {
    struct slot *slots;
    size_t n, max_bytes, max_answer;
    size_t bytes, entries;
    size_t hand;  /* where eviction looks next */
    uint64_t gen; /* every entry is of this generation */
};

void cache_key_of(struct cache_key *key, const char *const parts[], const size_t lens[],
                  size_t count)
{
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, sizeof key->digest);
    for (size_t i = 0; i < count; i++) {
        unsigned char len[8];
        uint64_t n = lens[i];
        for (int b = 0; b < 8; b++)
            len[b] = (unsigned char)(n >> (8 * b));
        crypto_generichash_update(&st, len, sizeof len);
        crypto_generichash_update(&st, (const unsigned char *)parts[i], lens[i]);
    }
    crypto_generichash_final(&st, key->digest, sizeof key->digest);
}

struct cache *cache_new(size_t slots, size_t max_bytes)
{
    struct cache *c;
    if (!slots || !max_bytes)
        return NULL;
    c = xcalloc(1, sizeof *c);
    c->slots = xcalloc(slots, sizeof *c->slots);
    c->n = slots;
    c->max_bytes = max_bytes;
    c->max_answer = max_bytes / 8 < CACHE_MAX_ANSWER ? max_bytes / 8 : CACHE_MAX_ANSWER;
    return c;
}

static void drop(struct cache *c, struct slot *s)
{
    if (!s->body)
        return;
    c->bytes -= s->body_len + ENTRY_OVERHEAD;
    c->entries--;
    free(s->body);
    s->body = NULL;
    s->body_len = 0;
}

void cache_free(struct cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        free(c->slots[i].body);
    free(c->slots);
    free(c);
}

/* Entries of an older generation can never be served again: free them now
 * rather than when their slots are next written. */
static void set_generation(struct cache *c, uint64_t gen)
{
    if (gen == c->gen)
        return;
    for (size_t i = 0; c->entries && i < c->n; i++)
        drop(c, &c->slots[i]);
    c->gen = gen;
}

static struct slot *slot_of(const struct cache *c, const struct cache_key *key)
{
    uint64_t h = 0;
    for (int b = 0; b < 8; b++)
        h |= (uint64_t)key->digest[b] << (8 * b);
    return &c->slots[h % c->n];
}

const char *cache_get(struct cache *c, const struct cache_key *key, uint64_t gen, size_t *body_len)
{
    struct slot *s;
    set_generation(c, gen);
    s = slot_of(c, key);
    if (!s->body || memcmp(s->key.digest, key->digest, sizeof key->digest) != 0)
        return NULL;
    *body_len = s->body_len;
    return s->body;
}

void cache_put(struct cache *c, const struct cache_key *key, uint64_t gen, const char *body,
               size_t body_len)
{
    struct slot *s;
    size_t cost = body_len + ENTRY_OVERHEAD;
    if (body_len > c->max_answer || cost > c->max_bytes)
        return;
    set_generation(c, gen);
    s = slot_of(c, key);
    drop(c, s);
    /* Over the bound: free other answers, going round the slots (a clock). */
    while (c->bytes + cost > c->max_bytes) {
        drop(c, &c->slots[c->hand]);
        c->hand = (c->hand + 1) % c->n;
    }
    s->key = *key;
    s->body = xmalloc(body_len + 1);
    memcpy(s->body, body, body_len);
    s->body[body_len] = '\0';
    s->body_len = body_len;
    c->bytes += cost;
    c->entries++;
}

size_t cache_bytes(const struct cache *c)
{
    return c ? c->bytes : 0;
}

size_t cache_entries(const struct cache *c)
{
    return c ? c->entries : 0;
}

size_t cache_max_answer(const struct cache *c)
{
    return c ? c->max_answer : 0;
}
