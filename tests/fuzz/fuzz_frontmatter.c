/* fuzz_frontmatter: front matter parsing, rendering and the write rules of
 * the file view on arbitrary documents. */
#include "document.h"
#include "frontmatter.h"
#include "util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    size_t body_off = 0;
    struct json_object *meta = frontmatter_parse(text, size, &body_off);
    struct buf out, err;
    if (body_off > size)
        __builtin_trap();
    buf_init(&out, 4 << 20);
    buf_init(&err, 4096);
    if (meta) {
        /* What we write must read back as the same mapping. */
        size_t off2 = 0;
        struct json_object *again;
        if (frontmatter_render(meta, &out) == 0) {
            again = frontmatter_parse(out.data, out.len, &off2);
            if (!again)
                __builtin_trap();
            json_object_put(again);
        }
    }
    if (utf8_valid(text, size)) {
        char *copy = xstrndup(text, size);
        struct knowledge k;
        if (document_prepare("rules", "fuzz.md", copy, size, &out, &err) == 0) {
            knowledge_init(&k);
            document_fill(&k, "rules", "fuzz.md", out.data, out.len);
            knowledge_release(&k);
        }
        free(copy);
    }
    json_object_put(meta);
    buf_release(&out);
    buf_release(&err);
    return 0;
}
