/* fuzz_interop: the interop formats' readers on arbitrary input
 * (fcgi/base/fileset.c, fcgi/domain/interop.c): the first byte picks the
 * format, the rest is the body POST /api/knowledge/import would get (a tar,
 * plain or gzip, for cursor and skills; the Markdown file else). Aborts when
 * a set read from a tar breaks its budgets or holds a name that
 * fileset_name_valid refuses, or a document comes out without a category,
 * a path or its text. */
#include "base/buf.h"
#include "base/fileset.h"
#include "domain/interop.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const enum interop_format formats[] = {INTEROP_AGENTS_MD, INTEROP_CLAUDE_MD,
                                                  INTEROP_CURSOR, INTEROP_SKILLS};
    struct fileset fs;
    struct interop_docs docs;
    struct buf why, report;
    const char *reason;
    long skipped = 0, refused = 0;
    enum interop_format f;
    if (size < 1)
        return 0;
    f = formats[data[0] % 4];
    fileset_init(&fs);
    interop_docs_init(&docs);
    buf_init(&why, 4096);
    buf_init(&report, 16 * 1024 * 1024);
    if (interop_format_is_archive(f)) {
        if (fileset_from_tar((const char *)data + 1, size - 1, &fs, &why) == 0) {
            size_t total = 0;
            if (fs.n > FILESET_MAX_FILES)
                abort();
            for (size_t i = 0; i < fs.n; i++) {
                if (!fileset_name_valid(fs.v[i].name) || fs.v[i].len > FILESET_MAX_FILE)
                    abort();
                total += fs.v[i].len;
            }
            if (total != fs.total || total > FILESET_MAX_TOTAL)
                abort();
        } else if (fs.n != 0 || why.len == 0) {
            abort();
        }
    } else if (fileset_add(&fs, "AGENTS.md", (const char *)data + 1, size - 1, &reason)) {
        goto out;
    }
    interop_import_parse(f, &fs, &docs, &report, &skipped, &refused);
    for (size_t i = 0; i < docs.n; i++)
        if (!docs.v[i].category || !docs.v[i].path || !docs.v[i].text || !docs.v[i].from ||
            strlen(docs.v[i].text) != docs.v[i].len)
            abort();
out:
    interop_docs_release(&docs);
    fileset_release(&fs);
    buf_release(&why);
    buf_release(&report);
    return 0;
}
