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

/* The code point at s (n bytes left) and its length in *len; a byte that
 * does not start a valid character is U+FFFD of length 1. */
static unsigned code_point(const char *s, size_t n, size_t *len)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t want = u[0] < 0x80             ? 1
                  : (u[0] & 0xe0) == 0xc0 ? 2
                  : (u[0] & 0xf0) == 0xe0 ? 3
                  : (u[0] & 0xf8) == 0xf0 ? 4
                                          : 0;
    /* a lead byte without its continuation, an overlong form, a surrogate */
    if (want == 0 || want > n || !utf8_valid(s, want)) {
        *len = 1;
        return 0xfffd;
    }
    *len = want;
    switch (*len) {
    case 1:
        return u[0];
    case 2:
        return ((u[0] & 0x1fu) << 6) | (u[1] & 0x3fu);
    case 3:
        return ((u[0] & 0x0fu) << 12) | ((u[1] & 0x3fu) << 6) | (u[2] & 0x3fu);
    default:
        return ((u[0] & 0x07u) << 18) | ((u[1] & 0x3fu) << 12) | ((u[2] & 0x3fu) << 6) |
               (u[3] & 0x3fu);
    }
}

static int ascii_alnum(unsigned c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* 1 when c separates words in a file name: ASCII other than letters and
 * digits, Latin-1 punctuation, general punctuation (— “ ” …), CJK symbols
 * and punctuation (、。「」《》), fullwidth punctuation (，：！？（）),
 * replacement and unassigned-looking controls. */
static int separator(unsigned c)
{
    if (c < 0x80)
        return !ascii_alnum(c);
    return (c >= 0x80 && c <= 0xbf) || c == 0xd7 || c == 0xf7 || (c >= 0x2000 && c <= 0x206f) ||
           (c >= 0x2190 && c <= 0x23ff) || (c >= 0x2500 && c <= 0x27bf) ||
           (c >= 0x3000 && c <= 0x303f) || (c >= 0xfe30 && c <= 0xfe4f) ||
           (c >= 0xff00 && c <= 0xff0f) || (c >= 0xff1a && c <= 0xff20) ||
           (c >= 0xff3b && c <= 0xff40) || (c >= 0xff5b && c <= 0xff65) || c == 0xfeff ||
           c == 0xfffd;
}

int path_slug(const char *title, struct buf *out)
{
    size_t len = title ? strlen(title) : 0, ascii = 0, other = 0, k;
    int ascii_mode;
    buf_reset(out);
    for (size_t i = 0; i < len; i += k) {
        unsigned c = code_point(title + i, len - i, &k);
        if (c < 0x80 && ascii_alnum(c))
            ascii++;
        else if (!separator(c))
            other++;
    }
    if (ascii + other == 0)
        return -1;
    ascii_mode = ascii >= other;
    for (size_t i = 0; i < len;) {
        size_t start, end, word_len = 0;
        /* The next word: a run of kept characters. */
        while (i < len && (separator(code_point(title + i, len - i, &k)) ||
                           (ascii_mode && (unsigned char)title[i] >= 0x80)))
            i += k;
        start = i;
        while (i < len) {
            unsigned c = code_point(title + i, len - i, &k);
            if (separator(c) || (ascii_mode && c >= 0x80))
                break;
            i += k;
        }
        end = i;
        if (start == end)
            break;
        word_len = end - start;
        if (out->len + (out->len ? 1 : 0) + word_len > PATH_SLUG_MAX_BYTES) {
            if (out->len && (ascii_mode || out->len + 1 >= PATH_SLUG_MAX_BYTES))
                break; /* at a word boundary */
            /* A first word (or, in a title's own characters, the next one)
             * longer than what is left: as many whole characters as fit. */
            if (out->len)
                buf_addch(out, '-');
            word_len = utf8_fit(title + start, word_len, PATH_SLUG_MAX_BYTES - out->len);
            end = start + word_len;
            i = len;
        } else if (out->len) {
            buf_addch(out, '-');
        }
        for (size_t j = start; j < end; j++) {
            char c = title[j];
            buf_addch(out, c >= 'A' && c <= 'Z' ? (char)(c + 32) : c);
        }
    }
    while (out->len && out->data[out->len - 1] == '-')
        out->data[--out->len] = '\0';
    return out->len ? 0 : -1;
}
