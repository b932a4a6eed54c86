/* fuzz_auth: the Authorization header against a store holding one token:
 * nothing but that exact token may authenticate. */
#include "service/auth.h"
#include "store/store.h"
#include "base/util.h"

#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct store *st;
static struct buf token;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *header = xstrndup((const char *)data, size);
    struct identity who = {0};
    if (!st) {
        if (sodium_init() < 0)
            abort();
        store_global_init();
        if (store_open(":memory:", &st))
            abort();
        buf_init(&token, 256);
        buf_adds(&token, "Bearer ");
        struct buf t;
        buf_init(&t, 256);
        if (auth_token_create(st, "fuzz", ROLE_READER, "", "operator", &t))
            abort();
        buf_adds(&token, t.data);
        buf_release(&t);
    }
    if (auth_check(st, header, &who) == 0) {
        /* Only the real token (with optional extra spaces after Bearer) passes. */
        const char *a = header + 7, *b = token.data + 7;
        while (*a == ' ')
            a++;
        if (strncasecmp(header, "Bearer ", 7) != 0 || strcmp(a, b) != 0)
            __builtin_trap();
    }
    free(who.space);
    free(who.token_id);
    free(who.actor);
    free(header);
    return 0;
}
