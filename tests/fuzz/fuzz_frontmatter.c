/* fuzz_frontmatter: front matter parsing, rendering and the write rules of
 * the file view on arbitrary documents. Aborts when a converted front matter
 * exceeds its documented budget (FRONTMATTER_MAX_NODES values,
 * FRONTMATTER_MAX_BYTES bytes of JSON) or a refused one yields a value. */
#include "domain/document.h"
#include "domain/frontmatter.h"
#include "base/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The values of v, itself included, counted independently of frontmatter.c. */
static size_t values(struct json_object *v)
{
    size_t n = 1;
    if (json_object_is_type(v, json_type_array))
        for (size_t i = 0; i < json_object_array_length(v); i++)
            n += values(json_object_array_get_idx(v, i));
    else if (json_object_is_type(v, json_type_object)) {
        json_object_object_foreach(v, key, val)
        {
            (void)key;
            n += values(val);
        }
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    size_t body_off = 0, read_off = 0;
    struct json_object *meta = frontmatter_parse(text, size, &body_off), *read_meta = NULL;
    const char *why = NULL;
    enum frontmatter_status st = frontmatter_read(text, size, &read_meta, &read_off, &why);
    struct buf out;
    struct error err;
    if (body_off > size || read_off > size)
        __builtin_trap();
    /* The budget: a refused or missing front matter gives nothing, a kept one
     * stays within FRONTMATTER_MAX_NODES values and FRONTMATTER_MAX_BYTES. */
    if ((st == FRONTMATTER_OK) != (read_meta != NULL) || (st == FRONTMATTER_REFUSED) != !!why)
        __builtin_trap();
    if (read_meta) {
        const char *json = json_object_to_json_string_ext(
            read_meta, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        if (values(read_meta) > FRONTMATTER_MAX_NODES || strlen(json) > FRONTMATTER_MAX_BYTES)
            abort();
    }
    if ((meta != NULL) != (read_meta != NULL))
        __builtin_trap();
    json_object_put(read_meta);
    buf_init(&out, 4 << 20);
    error_init(&err);
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
    error_release(&err);
    return 0;
}
