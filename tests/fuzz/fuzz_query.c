/* fuzz_query: URL decoding and query-string parsing. */
#include "http/http.h"
#include "base/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *q = xstrndup((const char *)data, size);
    struct request req;
    struct buf out;
    buf_init(&out, 1 << 20);
    if (url_decode(q, size, 1, &out) == 0 && !utf8_valid(out.data, out.len))
        __builtin_trap();
    request_init(&req);
    req.query = q;
    if (http_parse_query(&req) == 0)
        for (size_t i = 0; i < req.n_qp; i++)
            if (!utf8_valid(req.qp[i].value, strlen(req.qp[i].value)))
                __builtin_trap();
    request_release(&req);
    buf_release(&out);
    free(q);
    return 0;
}
