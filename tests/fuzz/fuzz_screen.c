/* fuzz_screen: the poisoning screen on arbitrary bytes. Aborts when a
 * finding points outside the text, a rule reports twice, the count passes
 * SCREEN_MAX_FINDINGS, or an excerpt holds a line break or a control
 * character (it must be safe to show). */
#include "base/buf.h"
#include "domain/screen.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    struct screen_result r;
    struct buf ex;
    int n = screen_text(text, size, &r);
    if (n < 0 || (size_t)n != r.count || r.count > SCREEN_MAX_FINDINGS)
        abort();
    buf_init(&ex, 4096);
    for (size_t i = 0; i < r.count; i++) {
        const struct screen_finding *f = &r.findings[i];
        if (f->length == 0 || f->offset >= size || f->length > size - f->offset)
            abort();
        for (size_t j = i + 1; j < r.count; j++)
            if (strcmp(f->code, r.findings[j].code) == 0)
                abort();
        buf_reset(&ex);
        if (screen_excerpt(text, size, f, &ex) != 0)
            abort();
        for (size_t k = 0; k < ex.len; k++)
            if ((unsigned char)ex.data[k] < 0x20 || ex.data[k] == 0x7f)
                abort();
    }
    buf_release(&ex);
    return 0;
}
