/* fuzz_paths: file-view path validation: whatever passes is confined. */
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
    buf_release(&norm);
    error_release(&err);
    free(path);
    return 0;
}
