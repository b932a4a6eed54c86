/* test_cache: the answer cache: keys are digests of the request's parts
 * (part boundaries count), the cache never holds more than its bytes,
 * large answers are not kept, and a new generation frees every old answer. */
#include "base/cache.h"
#include "harness.h"

#include <stdlib.h>
#include <string.h>

static struct cache_key key_of(const char *space, const char *path, const char *body)
{
    const char *parts[] = {space, "GET", path, "", body};
    size_t lens[] = {strlen(space), 3, strlen(path), 0, strlen(body)};
    struct cache_key k;
    cache_key_of(&k, parts, lens, 5);
    return k;
}

static void test_keys(void)
{
    struct cache_key a = key_of("default", "/api/x", "{}"), b = key_of("default", "/api/x", "{}");
    struct cache_key c = key_of("default", "/api/x", "{} "), d = key_of("default", "/api/", "x{}");
    struct cache_key e = key_of("other", "/api/x", "{}");
    CHECK(sizeof a.digest == 32);
    CHECK(memcmp(a.digest, b.digest, sizeof a.digest) == 0);
    CHECK(memcmp(a.digest, c.digest, sizeof a.digest) != 0);
    /* moving a byte from one part to the next is another request */
    CHECK(memcmp(a.digest, d.digest, sizeof a.digest) != 0);
    CHECK(memcmp(a.digest, e.digest, sizeof a.digest) != 0);
}

static void test_hit_and_generation(void)
{
    struct cache *c = cache_new(64, 1 << 20);
    struct cache_key a = key_of("s", "/a", ""), b = key_of("s", "/b", "");
    size_t len = 0;
    const char *hit;
    cache_put(c, &a, 7, "answer a", 8);
    cache_put(c, &b, 7, "answer b", 8);
    hit = cache_get(c, &a, 7, &len);
    CHECK(hit && len == 8 && memcmp(hit, "answer a", 8) == 0);
    CHECK(cache_get(c, &b, 7, &len) != NULL || cache_entries(c) == 1); /* may share a/b's slot */
    CHECK(cache_bytes(c) > 0);
    /* a new generation: nothing is served, and everything old is freed at once */
    CHECK(cache_get(c, &a, 8, &len) == NULL);
    CHECK_INT((int)cache_entries(c), 0);
    CHECK_INT((int)cache_bytes(c), 0);
    CHECK(cache_get(c, &a, 7, &len) == NULL);
    cache_put(c, &a, 9, "new", 3);
    CHECK_INT((int)cache_entries(c), 1);
    /* a put at a newer generation frees the older entries too */
    cache_put(c, &b, 10, "newer", 5);
    CHECK_INT((int)cache_entries(c), 1);
    CHECK(cache_get(c, &a, 10, &len) == NULL);
    hit = cache_get(c, &b, 10, &len);
    CHECK(hit && len == 5 && strcmp(hit, "newer") == 0);
    cache_free(c);
}

static void test_byte_bound(void)
{
    size_t max = 64 * 1024;
    struct cache *c = cache_new(512, max);
    char *body = malloc(8 * 1024);
    char path[32];
    size_t len;
    memset(body, 'x', 8 * 1024);
    CHECK_INT((int)cache_max_answer(c), (int)(max / 8));
    /* an answer over the largest kept is not stored */
    {
        struct cache_key big = key_of("s", "/big", "");
        cache_put(c, &big, 1, body, max / 8 + 1);
        CHECK(cache_get(c, &big, 1, &len) == NULL);
        CHECK_INT((int)cache_entries(c), 0);
    }
    /* many answers of 8 KiB: never over the bound, the newest always kept */
    for (int i = 0; i < 200; i++) {
        struct cache_key k;
        snprintf(path, sizeof path, "/p%d", i);
        k = key_of("s", path, "");
        cache_put(c, &k, 1, body, 8 * 1024);
        CHECK(cache_bytes(c) <= max);
        CHECK(cache_get(c, &k, 1, &len) != NULL && len == 8 * 1024);
    }
    CHECK(cache_entries(c) >= 2 && cache_entries(c) < 8);
    cache_free(c);
    free(body);
    /* no slots or no bytes: no cache at all */
    CHECK(cache_new(0, max) == NULL);
    CHECK(cache_new(16, 0) == NULL);
    CHECK_INT((int)cache_bytes(NULL), 0);
}

int main(void)
{
    test_keys();
    test_hit_and_generation();
    test_byte_bound();
    return test_summary();
}
