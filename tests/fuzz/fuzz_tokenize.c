/* fuzz_tokenize: the tokenizer on arbitrary bytes: offsets stay in range and
 * every token is valid UTF-8 that tokenizes to itself (exactly one token, the
 * same bytes, over its whole length); tokenize_fold runs on the same bytes. */
#include "base/buf.h"
#include "domain/tokenize.h"
#include "base/util.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One token tokenized again: what it must give back. */
struct again {
    const char *token;
    size_t n;
    int seen;
};

static int same(void *arg, const char *token, size_t n, size_t start, size_t end)
{
    struct again *a = arg;
    if (a->seen++ || n != a->n || memcmp(token, a->token, n) != 0 || start != 0 || end != n)
        __builtin_trap();
    return 0;
}

static int check(void *arg, const char *token, size_t n, size_t start, size_t end)
{
    size_t size = *(const size_t *)arg;
    struct again a = {token, n, 0};
    if (n == 0 || start >= end || end > size || !utf8_valid(token, n))
        __builtin_trap();
    tokenize(token, n, same, &a);
    if (a.seen != 1)
        __builtin_trap();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct buf folded;
    tokenize((const char *)data, size, check, &size);
    buf_init(&folded, 8 * size + 16);
    tokenize_fold((const char *)data, size, &folded);
    buf_release(&folded);
    return 0;
}
