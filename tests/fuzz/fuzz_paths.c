/* fuzz_paths: file-view path validation: whatever passes is confined; a
 * title's slug is always a valid file name of at most 60 bytes. */
#include "domain/paths.h"
#include "base/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *path = xstrndup((const char *)data, size);
    struct buf norm;
    struct error err;
    buf_init(&norm, 8192);
    error_init(&err);
    for (int c = 0; c < 2; c++) {
        const char *category = c ? "experiences" : "rules";
        if (path_check(category, path, &norm, &err) == 0) {
            /* Accepted paths are relative, without "..", backslash or control
             * bytes, valid UTF-8, and at most one folder deep. */
            const char *slash = strchr(norm.data, '/');
            if (norm.data[0] == '/' || strcmp(norm.data, "..") == 0 ||
                strncmp(norm.data, "../", 3) == 0 || (slash && strcmp(slash, "/..") == 0) ||
                strchr(norm.data, '\\') || !utf8_valid(norm.data, norm.len) ||
                (slash && (c == 0 || strchr(slash + 1, '/'))))
                __builtin_trap();
            for (size_t i = 0; i < norm.len; i++)
                if ((unsigned char)norm.data[i] < 0x20)
                    __builtin_trap();
        }
    }
    /* The input as a title: its slug, when there is one, is a plain name
     * (no '/', '\\', '.', control byte or edge '-'), valid UTF-8, that
     * path_check takes with ".md" added. */
    if (path_slug(path, &norm) == 0) {
        if (norm.len == 0 || norm.len > PATH_SLUG_MAX_BYTES || !utf8_valid(norm.data, norm.len) ||
            strpbrk(norm.data, "/\\.") || norm.data[0] == '-' || norm.data[norm.len - 1] == '-')
            __builtin_trap();
        for (size_t i = 0; i < norm.len; i++)
            if ((unsigned char)norm.data[i] < 0x20 || norm.data[i] == 0x7f)
                __builtin_trap();
        buf_adds(&norm, ".md");
        {
            struct buf checked;
            buf_init(&checked, 8192);
            if (path_check("rules", norm.data, &checked, &err) != 0)
                __builtin_trap();
            buf_release(&checked);
        }
    } else if (norm.len != 0) {
        __builtin_trap();
    }
    buf_release(&norm);
    error_release(&err);
    free(path);
    return 0;
}
