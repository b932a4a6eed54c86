/* paths: validation of file-view paths with the reference's messages. */
#include "domain/paths.h"
#include "base/util.h"

#include <string.h>

#define PATH_MAX_CHARS 255
/* A file or folder name on disk (NAME_MAX): export writes every segment as
 * one. The whole path, at most 255 characters of at most 4 bytes, stays
 * far below PATH_MAX with the export directory in front. */

int category_valid(const char *category)
{
    return category && (strcmp(category, "rules") == 0 || strcmp(category, "experiences") == 0);
}

int path_check(const char *category, const char *path, struct buf *out, struct error *err)
{
    size_t parts = 0, len = strlen(path);
    const char *last = NULL;
    size_t last_len = 0;
    int absolute = path[0] == '/';

    buf_reset(out);
    error_set(err, E_INVALID_REQUEST, NULL, "%s", "");
    if (!category_valid(category)) {
        error_set(err, E_INVALID_REQUEST, "invalid_category", "Invalid category: '%s'",
                  category ? category : "");
        error_str(err, "category", category);
        return -1;
    }
    if (len == 0) {
        error_set(err, E_INVALID_REQUEST, "path_empty", "Empty path");
        return -1;
    }
    /* Split like pathlib: empty and "." segments vanish, a leading "/" is a part. */
    for (const char *p = path; *p;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n && !(n == 1 && p[0] == '.')) {
            parts++;
            last = p;
            last_len = n;
        }
        p += n + (slash ? 1 : 0);
    }
    if (absolute)
        parts++;
    if (!last || last_len < 4 || memcmp(last + last_len - 3, ".md", 3) != 0) {
        error_set(err, E_INVALID_REQUEST, "path_not_md", "Knowledge files must be .md format");
        return -1;
    }
    if (strcmp(category, "rules") == 0 && parts > 1) {
        error_set(err, E_INVALID_REQUEST, "path_rules_flat",
                  "rules does not allow sub-directories");
        return -1;
    }
    if (parts > 2) {
        error_set(err, E_INVALID_REQUEST, "path_too_deep",
                  "experiences allows at most one level of sub-directories");
        return -1;
    }
    if (absolute) {
        error_set(err, E_INVALID_REQUEST, "path_absolute", "Absolute path not allowed: '%s'", path);
        error_str(err, "path", path);
        return -1;
    }
    for (const char *p = path; *p;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.') {
            error_set(err, E_INVALID_REQUEST, "path_traversal",
                      "Path traversal segment '..' in: '%s'", path);
            error_str(err, "path", path);
            return -1;
        }
        p += n + (slash ? 1 : 0);
    }
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if (*p < 0x20 || *p == 0x7f || *p == '\\') {
            error_set(err, E_INVALID_REQUEST, "path_bad_char",
                      "Path contains a backslash or a control character");
            return -1;
        }
    }
    if (!utf8_valid(path, len) || utf8_length(path, len) > PATH_MAX_CHARS) {
        error_set(err, E_INVALID_REQUEST, "path_too_long",
                  "Path must be valid UTF-8 of at most %d characters", PATH_MAX_CHARS);
        error_int(err, "max", PATH_MAX_CHARS);
        return -1;
    }
    for (const char *p = path; *p;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n > PATH_SEGMENT_MAX_BYTES) {
            error_set(err, E_INVALID_REQUEST, "name_too_long",
                      "A file or folder name must be at most %d bytes (got %zu)",
                      PATH_SEGMENT_MAX_BYTES, n);
            error_int(err, "max", PATH_SEGMENT_MAX_BYTES);
            error_int(err, "got", (long long)n);
            return -1;
        }
        p += n + (slash ? 1 : 0);
    }
    for (const char *p = path; *p;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n && !(n == 1 && p[0] == '.')) {
            if (out->len)
                buf_addch(out, '/');
            buf_add(out, p, n);
        }
        p += n + (slash ? 1 : 0);
    }
    return 0;
}

void path_stem(const char *path, struct buf *out)
{
    const char *base = strrchr(path, '/');
    size_t n;
    base = base ? base + 1 : path;
    n = strlen(base);
    if (n >= 3 && strcmp(base + n - 3, ".md") == 0)
        n -= 3;
    buf_reset(out);
    buf_add(out, base, n);
}
