/* fuzz_when: an entry's moments from outside (a request's expires_at and
 * review_after, a front matter's): what parses is canonical and parses
 * again to itself; a document given a time says that time when read back. */
#include "domain/when.h"
#include "base/buf.h"
#include "base/util.h"
#include "domain/frontmatter.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = xstrndup((const char *)data, size);
    char out[WHEN_TEXT], again[WHEN_TEXT];
    struct buf doc, twice;
    if (when_parse((const char *)data, size, out) == 0) {
        if (strlen(out) != WHEN_TEXT - 1 || out[10] != 'T' || out[19] != 'Z' ||
            when_parse(out, strlen(out), again) || strcmp(out, again) != 0)
            __builtin_trap();
    }
    /* the input as a document: with a time, read back, it says that time
     * (the second rendering changes nothing) */
    buf_init(&doc, 1 << 22);
    buf_init(&twice, 1 << 22);
    when_document(text, "2031-06-01T00:00:00Z", NULL, 1, &doc);
    if (!doc.failed) {
        struct json_object *meta = NULL;
        size_t body_off;
        const char *why;
        when_document(doc.data, "2031-06-01T00:00:00Z", NULL, 1, &twice);
        if (frontmatter_read(doc.data, doc.len, &meta, &body_off, &why) == FRONTMATTER_OK &&
            !twice.failed && strcmp(doc.data, twice.data) != 0)
            __builtin_trap();
        json_object_put(meta);
    }
    buf_release(&doc);
    buf_release(&twice);
    free(text);
    return 0;
}
