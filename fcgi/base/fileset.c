/* fileset: a bounded set of named files in memory, to and from a tar
 * archive (libarchive) or a directory. */
#include "base/fileset.h"
#include "base/util.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void fileset_init(struct fileset *fs)
{
    fs->v = NULL;
    fs->n = fs->cap = 0;
    fs->total = 0;
}

void fileset_release(struct fileset *fs)
{
    for (size_t i = 0; i < fs->n; i++) {
        free(fs->v[i].name);
        free(fs->v[i].data);
    }
    free(fs->v);
    fileset_init(fs);
}

int fileset_name_valid(const char *name)
{
    size_t n = strlen(name), depth = 0;
    const char *seg = name;
    if (n == 0 || n > FILESET_MAX_NAME || !utf8_valid(name, n) || name[0] == '/')
        return 0;
    for (const char *p = name;; p++) {
        if (*p == '/' || *p == '\0') {
            size_t len = (size_t)(p - seg);
            if (len == 0 || (len == 1 && seg[0] == '.') ||
                (len == 2 && seg[0] == '.' && seg[1] == '.'))
                return 0;
            if (*p == '\0')
                break;
            if (++depth > FILESET_MAX_DEPTH)
                return 0;
            seg = p + 1;
        } else if (*p == '\\' || (unsigned char)*p < 0x20 || *p == 0x7f) {
            return 0;
        }
    }
    return 1;
}

const struct fileset_entry *fileset_find(const struct fileset *fs, const char *name)
{
    for (size_t i = 0; i < fs->n; i++)
        if (strcmp(fs->v[i].name, name) == 0)
            return &fs->v[i];
    return NULL;
}

int fileset_add(struct fileset *fs, const char *name, const char *data, size_t len,
                const char **why)
{
    if (!fileset_name_valid(name)) {
        *why = "the name is absolute, holds '..', a backslash or a control character, is not "
               "UTF-8, or is too long or too deep";
        return -1;
    }
    if (len > FILESET_MAX_FILE) {
        *why = "larger than 1 MiB";
        return -1;
    }
    if (fs->n >= FILESET_MAX_FILES) {
        *why = "more than 5000 files";
        return -1;
    }
    if (fs->total + len > FILESET_MAX_TOTAL) {
        *why = "more than 32 MiB in all";
        return -1;
    }
    if (fileset_find(fs, name)) {
        *why = "the name comes twice";
        return -1;
    }
    if (fs->n == fs->cap) {
        fs->cap = fs->cap ? 2 * fs->cap : 16;
        fs->v = xrealloc(fs->v, fs->cap * sizeof *fs->v);
    }
    fs->v[fs->n].name = xstrdup(name);
    fs->v[fs->n].data = xmalloc(len + 1);
    memcpy(fs->v[fs->n].data, data, len);
    fs->v[fs->n].data[len] = '\0';
    fs->v[fs->n].len = len;
    fs->n++;
    fs->total += len;
    return 0;
}

/* A member name without its leading "./" (tar -C dir . writes them). */
static const char *member_name(const char *name)
{
    while (name[0] == '.' && name[1] == '/')
        name += 2;
    return name;
}

static int tar_member(struct archive *a, struct archive_entry *e, struct fileset *fs,
                      struct buf *why)
{
    const char *raw = archive_entry_pathname_utf8(e);
    const char *name, *reason = NULL;
    struct buf data;
    mode_t type = archive_entry_filetype(e);
    int rc = -1;
    if (!raw)
        raw = archive_entry_pathname(e);
    if (!raw) {
        buf_adds(why, "a tar member has no name");
        return -1;
    }
    name = member_name(raw);
    if (type == AE_IFDIR || (*name == '\0' && type != AE_IFREG))
        return 0;
    if (type != AE_IFREG || archive_entry_hardlink(e)) {
        buf_addf(why, "tar member %.200s is a link or not a regular file (only files are read)",
                 raw);
        return -1;
    }
    if (archive_entry_size_is_set(e) && archive_entry_size(e) > FILESET_MAX_FILE) {
        buf_addf(why, "tar member %.200s: larger than 1 MiB", raw);
        return -1;
    }
    buf_init(&data, FILESET_MAX_FILE);
    for (;;) {
        char chunk[65536];
        la_ssize_t got = archive_read_data(a, chunk, sizeof chunk);
        if (got < 0) {
            buf_addf(why, "tar member %.200s: %s", raw, archive_error_string(a));
            goto out;
        }
        if (got == 0)
            break;
        if (buf_add(&data, chunk, (size_t)got)) {
            buf_addf(why, "tar member %.200s: larger than 1 MiB", raw);
            goto out;
        }
    }
    if (fileset_add(fs, name, data.data, data.len, &reason)) {
        buf_addf(why, "tar member %.200s: %s", raw, reason);
        goto out;
    }
    rc = 0;
out:
    buf_release(&data);
    return rc;
}

static int cmp_entries(const void *a, const void *b)
{
    return strcmp(((const struct fileset_entry *)a)->name, ((const struct fileset_entry *)b)->name);
}

int fileset_from_tar(const char *data, size_t len, struct fileset *fs, struct buf *why)
{
    struct archive *a = archive_read_new();
    struct archive_entry *e;
    int rc = 0, r;
    size_t members = 0;
    archive_read_support_format_tar(a);
    archive_read_support_filter_gzip(a);
    if (archive_read_open_memory(a, data, len) != ARCHIVE_OK) {
        buf_addf(why, "not a tar archive (%s)", archive_error_string(a));
        rc = -1;
        goto out;
    }
    while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
        /* folders count too: a gzip of a million empty folders is small */
        if (++members > 2 * FILESET_MAX_FILES) {
            buf_addf(why, "more than %d tar members", 2 * FILESET_MAX_FILES);
            rc = -1;
            goto out;
        }
        if (tar_member(a, e, fs, why)) {
            rc = -1;
            goto out;
        }
    }
    if (r != ARCHIVE_EOF) {
        buf_addf(why, "not a tar archive, or a damaged one (%s)", archive_error_string(a));
        rc = -1;
    }
out:
    archive_read_free(a);
    if (rc)
        fileset_release(fs);
    else if (fs->n > 1) /* reported in name order, whatever the archive's order */
        qsort(fs->v, fs->n, sizeof *fs->v, cmp_entries);
    return rc;
}

static la_ssize_t tar_write(struct archive *a, void *arg, const void *data, size_t n)
{
    (void)a;
    return buf_add(arg, data, n) ? -1 : (la_ssize_t)n;
}

static int tar_open(struct archive *a, void *arg)
{
    (void)a;
    (void)arg;
    return ARCHIVE_OK;
}

static int tar_close(struct archive *a, void *arg)
{
    (void)a;
    (void)arg;
    return ARCHIVE_OK;
}

int fileset_to_tar(const struct fileset *fs, long mtime, struct buf *out)
{
    struct archive *a = archive_write_new();
    struct archive_entry *e = archive_entry_new();
    int r, ok = archive_write_set_format_gnutar(a) == ARCHIVE_OK &&
                archive_write_set_bytes_in_last_block(a, 1) == ARCHIVE_OK &&
                archive_write_open(a, out, tar_open, tar_write, tar_close) == ARCHIVE_OK;
    for (size_t i = 0; ok && i < fs->n; i++) {
        archive_entry_clear(e);
        archive_entry_copy_pathname(e, fs->v[i].name);
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, 0644);
        archive_entry_set_size(e, (la_int64_t)fs->v[i].len);
        archive_entry_set_mtime(e, (time_t)mtime, 0);
        /* GNU tar format: names go out as their bytes (UTF-8), with no
         * conversion from the C locale (pax would mark them hdrcharset=BINARY) */
        r = archive_write_header(a, e);
        ok = r == ARCHIVE_OK &&
             archive_write_data(a, fs->v[i].data, fs->v[i].len) == (la_ssize_t)fs->v[i].len;
    }
    ok = archive_write_close(a) == ARCHIVE_OK && ok;
    archive_entry_free(e);
    archive_write_free(a);
    return ok && !buf_failed(out) ? 0 : -1;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int read_regular(const char *file, struct buf *out, struct buf *why, const char *rel)
{
    char chunk[65536];
    ssize_t got;
    int fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        buf_addf(why, "%s: %s", rel, strerror(errno));
        return -1;
    }
    while ((got = read(fd, chunk, sizeof chunk)) > 0)
        if (buf_add(out, chunk, (size_t)got)) {
            close(fd);
            buf_addf(why, "%s: larger than 1 MiB", rel);
            return -1;
        }
    if (got < 0)
        buf_addf(why, "%s: %s", rel, strerror(errno));
    close(fd);
    return got < 0 ? -1 : 0;
}

static int walk_dir(const char *dir, const char *prefix, int depth, struct fileset *fs,
                    struct buf *why)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    if (!d) {
        buf_addf(why, "%s: %s", *prefix ? prefix : dir, strerror(errno));
        return -1;
    }
    while ((de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
            strcmp(de->d_name, ".git") == 0)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            names = xrealloc(names, cap * sizeof *names);
        }
        names[n++] = xstrdup(de->d_name);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_names);
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct buf file, rel, data;
        struct stat sb;
        const char *reason;
        buf_init(&file, 8192);
        buf_init(&rel, FILESET_MAX_NAME + 1);
        buf_init(&data, FILESET_MAX_FILE);
        buf_addf(&file, "%s/%s", dir, names[i]);
        buf_addf(&rel, "%s%s", prefix, names[i]);
        if (buf_failed(&file) || buf_failed(&rel)) {
            buf_addf(why, "%.200s...: the path is too long", rel.data);
            rc = -1;
        } else if (lstat(file.data, &sb)) {
            buf_addf(why, "%s: %s", rel.data, strerror(errno));
            rc = -1;
        } else if (S_ISLNK(sb.st_mode)) {
            buf_addf(why, "%s: symbolic links are not imported", rel.data);
            rc = -1;
        } else if (S_ISDIR(sb.st_mode)) {
            buf_addch(&rel, '/');
            if (depth >= FILESET_MAX_DEPTH) {
                buf_addf(why, "%s: more than %d folders deep", rel.data, FILESET_MAX_DEPTH);
                rc = -1;
            } else {
                rc = walk_dir(file.data, rel.data, depth + 1, fs, why);
            }
        } else if (!S_ISREG(sb.st_mode)) {
            buf_addf(why, "%s: not a regular file", rel.data);
            rc = -1;
        } else if (read_regular(file.data, &data, why, rel.data)) {
            rc = -1;
        } else if (fileset_add(fs, rel.data, data.data, data.len, &reason)) {
            buf_addf(why, "%s: %s", rel.data, reason);
            rc = -1;
        }
        buf_release(&file);
        buf_release(&rel);
        buf_release(&data);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

int fileset_from_dir(const char *dir, struct fileset *fs, struct buf *why)
{
    int rc = walk_dir(dir, "", 0, fs, why);
    if (rc)
        fileset_release(fs);
    return rc;
}

static int mkdir_checked(const char *path)
{
    struct stat sb;
    if (mkdir(path, 0755) && errno != EEXIST)
        return -1;
    /* Never write through a symbolic link planted in the target tree. */
    if (lstat(path, &sb))
        return -1;
    if (!S_ISDIR(sb.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

/* The folders above dir, made as mkdir -p would (the caller's own path:
 * symbolic links in it are followed, unlike inside the tree written). */
static int mkdir_parents(const char *dir)
{
    struct buf part;
    int rc = 0;
    buf_init(&part, 8192);
    for (const char *p = strchr(dir + 1, '/'); p && rc == 0; p = strchr(p + 1, '/')) {
        struct stat sb;
        buf_reset(&part);
        buf_add(&part, dir, (size_t)(p - dir));
        if (buf_failed(&part) || (mkdir(part.data, 0755) && errno != EEXIST) ||
            stat(part.data, &sb) || !S_ISDIR(sb.st_mode))
            rc = -1;
    }
    buf_release(&part);
    return rc;
}

int fileset_to_dir(const struct fileset *fs, const char *dir, FILE *report)
{
    int failed = 0;
    if (mkdir_parents(dir) || mkdir_checked(dir))
        return -1;
    for (size_t i = 0; i < fs->n; i++) {
        struct buf file;
        const char *name = fs->v[i].name;
        int fd, ok = 1;
        buf_init(&file, 8192);
        buf_adds(&file, dir);
        for (const char *p = name, *slash; ok && (slash = strchr(p, '/')); p = slash + 1) {
            buf_addch(&file, '/');
            buf_add(&file, p, (size_t)(slash - p));
            ok = !buf_failed(&file) && mkdir_checked(file.data) == 0;
        }
        buf_reset(&file);
        buf_addf(&file, "%s/%s", dir, name);
        if (ok && !buf_failed(&file)) {
            fd = open(file.data, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
            ok = fd >= 0 && write_all(fd, fs->v[i].data, fs->v[i].len) == 0;
            if (fd >= 0)
                ok = close(fd) == 0 && ok;
        } else {
            ok = 0;
        }
        if (ok) {
            fprintf(report, "exported %s\n", name);
        } else {
            fprintf(report, "failed %s: %s\n", name, strerror(errno ? errno : ENAMETOOLONG));
            failed = 1;
        }
        buf_release(&file);
    }
    return failed ? -1 : 0;
}

const char *fileset_archive_version(void)
{
    const char *v = archive_version_string(); /* "libarchive 3.6.2" */
    const char *space = strchr(v, ' ');
    return space ? space + 1 : v;
}
