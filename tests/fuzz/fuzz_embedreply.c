/* fuzz_embedreply: an embeddings server's answer, the one input a lying
 * server controls. The first byte picks the texts asked (1..8) and the
 * dimension expected (0: any); the rest is the body. Either n vectors of
 * one dimension, every value finite, or an error and no vectors. */
#include "llm/llm.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct embed_reply r;
    size_t n;
    int expect;
    char *body;
    if (size < 1)
        return 0;
    n = 1 + (data[0] & 7);
    expect = (data[0] >> 3) & 1 ? 3 : 0;
    body = malloc(size);
    memcpy(body, data + 1, size - 1);
    body[size - 1] = 0;
    embed_reply_init(&r);
    llm_parse_embeddings(&r, body, n, expect);
    if (r.err.code) {
        if (r.vec || r.n || r.dim)
            __builtin_trap();
    } else {
        if (r.n != n || r.dim < 1 || r.dim > EMBED_MAX_DIM || (expect && r.dim != expect))
            __builtin_trap();
        for (size_t i = 0; i < n * (size_t)r.dim; i++)
            if (!isfinite(r.vec[i]))
                __builtin_trap();
    }
    embed_reply_release(&r);
    free(body);
    return 0;
}
