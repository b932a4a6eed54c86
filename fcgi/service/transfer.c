/* transfer: import and export of the knowledge directory layout. */
#include "service/transfer.h"
#include "base/buf.h"
#include "domain/document.h"
#include "domain/paths.h"
#include "service/knowledge.h"
#include "store/store.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define IMPORT_MAX_FILE (1024 * 1024)
#define IMPORT_BATCH 500 /* files per transaction */

struct importer {
    struct store *st;
    const char *space;
    enum on_conflict on_conflict;
    FILE *report;
    struct transfer_counts *counts;
    long in_batch;
};

/* Sorted names of a directory (without . and ..); caller frees. */
static char **sorted_names(const char *dir, size_t *n)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t cap = 0;
    *n = 0;
    if (!d)
        return NULL;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            names = xrealloc(names, cap * sizeof *names);
        }
        names[(*n)++] = xstrdup(e->d_name);
    }
    closedir(d);
    for (size_t i = 1; i < *n; i++) /* insertion sort keeps this dependency-free and stable */
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    return names;
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static void refuse(struct importer *im, const char *category, const char *path, const char *why)
{
    fprintf(im->report, "refused %s/%s: %s\n", category, path, why);
    im->counts->refused++;
}

/* Read a regular file (no symlink) of at most IMPORT_MAX_FILE bytes. */
static int read_file(const char *file, struct buf *out, const char **why)
{
    char chunk[65536];
    ssize_t got;
    int fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    buf_reset(out);
    if (fd < 0) {
        *why = errno == ELOOP ? "symbolic links are not imported" : "cannot be read";
        return -1;
    }
    while ((got = read(fd, chunk, sizeof chunk)) > 0)
        if (buf_add(out, chunk, (size_t)got)) {
            close(fd);
            *why = "larger than 1 MiB";
            return -1;
        }
    close(fd);
    if (got < 0) {
        *why = "cannot be read";
        return -1;
    }
    if (!utf8_valid(out->data, out->len)) {
        *why = "not valid UTF-8 (or contains NUL bytes)";
        return -1;
    }
    return 0;
}

/* A free path "<stem>-N.md" next to path, into out. */
static int free_path(struct importer *im, const char *category, const char *path, struct buf *out)
{
    size_t n = strlen(path) - 3; /* without ".md" */
    struct buf norm;
    struct error err;
    int bad;
    for (int i = 2; i < 1000; i++) {
        struct knowledge k;
        int rc;
        buf_reset(out);
        buf_add(out, path, n);
        buf_addf(out, "-%d.md", i);
        /* "-N" may push a long name past what the file view (and a disk) holds. */
        buf_init(&norm, 4096);
        error_init(&err);
        bad = path_check(category, out->data, &norm, &err);
        buf_release(&norm);
        error_release(&err);
        if (bad)
            return -1;
        rc = store_knowledge_get_by_path(im->st, im->space, category, out->data, &k);
        knowledge_release(&k);
        if (rc == STORE_NOT_FOUND)
            return 0;
        if (rc)
            return -1;
    }
    return -1;
}

/* Commit every IMPORT_BATCH files so a huge import neither holds the write
 * lock for long nor loses more than one batch to a crash. */
static int batch_step(struct importer *im)
{
    if (++im->in_batch < IMPORT_BATCH)
        return 0;
    im->in_batch = 0;
    if (store_commit(im->st) || store_begin(im->st))
        return -1;
    return 0;
}

static int import_file(struct importer *im, const char *category, const char *rel, const char *file)
{
    struct buf text, doc, norm, alt;
    struct error err;
    struct knowledge k, old;
    const char *why = NULL, *path;
    int rc = 0, src;

    buf_init(&text, IMPORT_MAX_FILE);
    buf_init(&doc, 2 * IMPORT_MAX_FILE);
    error_init(&err);
    buf_init(&norm, 4096);
    buf_init(&alt, 4096);
    knowledge_init(&k);
    knowledge_init(&old);
    if (path_check(category, rel, &norm, &err)) {
        refuse(im, category, rel, err.message.data);
        goto out;
    }
    if (read_file(file, &text, &why)) {
        refuse(im, category, rel, why);
        goto out;
    }
    if (document_prepare(category, norm.data, text.data, text.len, &doc, &err)) {
        refuse(im, category, rel, err.message.data);
        goto out;
    }
    path = norm.data;
    src = store_knowledge_get_by_path(im->st, im->space, category, path, &old);
    if (src != STORE_OK && src != STORE_NOT_FOUND) {
        rc = -1;
        goto out;
    }
    if (src == STORE_OK) {
        if (strcmp(old.document, doc.data) == 0) {
            fprintf(im->report, "unchanged %s/%s\n", category, path);
            im->counts->unchanged++;
            goto out;
        }
        if (im->on_conflict == ON_CONFLICT_SKIP) {
            fprintf(im->report, "skipped %s/%s: exists (use --on-conflict overwrite|rename)\n",
                    category, path);
            im->counts->skipped++;
            goto out;
        }
        if (im->on_conflict == ON_CONFLICT_RENAME) {
            if (free_path(im, category, path, &alt)) {
                refuse(im, category, rel, "no free name to rename to");
                goto out;
            }
            path = alt.data;
            src = STORE_NOT_FOUND;
        }
    }
    {
        /* A stored file where this file's folder would be, or the reverse:
         * refused here, as the API refuses it, rather than failing the import. */
        enum path_clash clash;
        if (store_knowledge_path_clash(im->st, im->space, category, path,
                                       src == STORE_OK ? old.id : NULL, &clash)) {
            rc = -1;
            goto out;
        }
        if (clash != PATH_CLASH_NONE) {
            refuse(im, category, rel,
                   clash == PATH_CLASH_FOLDER
                       ? "a folder of that name holds documents (a name is a file or a folder)"
                       : "its folder is the name of a document (a name is a file or a folder)");
            goto out;
        }
    }
    k.space = xstrdup(im->space);
    k.category = xstrdup(category);
    k.path = xstrdup(path);
    k.score = 3;
    document_fill(&k, category, path, doc.data, doc.len);
    if (src == STORE_OK) {
        if (store_knowledge_update(im->st, im->space, old.id, &k, 0, "import", "import")) {
            rc = -1;
            goto out;
        }
        fprintf(im->report, "updated %s/%s\n", category, path);
        im->counts->updated++;
    } else {
        if (knowledge_create(im->st, &k, "import")) {
            rc = -1;
            goto out;
        }
        if (path == alt.data)
            fprintf(im->report, "imported %s/%s (renamed from %s)\n", category, path, rel);
        else
            fprintf(im->report, "imported %s/%s\n", category, path);
        im->counts->imported++;
    }
    rc = batch_step(im);
out:
    knowledge_release(&k);
    knowledge_release(&old);
    buf_release(&text);
    buf_release(&doc);
    error_release(&err);
    buf_release(&norm);
    buf_release(&alt);
    return rc;
}

/* Import category_dir; depth 0 is the category folder itself. */
static int import_tree(struct importer *im, const char *category, const char *dir,
                       const char *prefix, int depth)
{
    size_t n;
    char **names = sorted_names(dir, &n);
    struct buf file, rel;
    int rc = 0;
    if (!names)
        return 0;
    buf_init(&file, 8192);
    buf_init(&rel, 8192);
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct stat sb;
        buf_reset(&file);
        buf_reset(&rel);
        buf_addf(&file, "%s/%s", dir, names[i]);
        buf_addf(&rel, "%s%s", prefix, names[i]);
        if (lstat(file.data, &sb)) {
            refuse(im, category, rel.data, "cannot be read");
        } else if (S_ISLNK(sb.st_mode)) {
            refuse(im, category, rel.data, "symbolic links are not imported");
        } else if (S_ISDIR(sb.st_mode)) {
            if (depth >= 1 || strcmp(category, "rules") == 0) {
                fprintf(im->report, "refused %s/%s/: %s\n", category, rel.data,
                        strcmp(category, "rules") == 0
                            ? "rules does not allow sub-directories"
                            : "experiences allows at most one level of sub-directories");
                im->counts->refused++;
            } else {
                buf_addch(&rel, '/');
                rc = import_tree(im, category, file.data, rel.data, depth + 1);
            }
        } else if (S_ISREG(sb.st_mode)) {
            rc = import_file(im, category, rel.data, file.data);
        } else {
            refuse(im, category, rel.data, "not a regular file");
        }
    }
    free_names(names, n);
    buf_release(&file);
    buf_release(&rel);
    return rc;
}

int transfer_import(struct store *st, const char *space, const char *dir,
                    enum on_conflict on_conflict, FILE *report, struct transfer_counts *counts)
{
    static const char *const categories[] = {"rules", "experiences"};
    struct importer im = {st, space, on_conflict, report, counts, 0};
    struct buf sub;
    DIR *d = opendir(dir);
    int rc = 0;
    if (!d)
        return -1;
    closedir(d);
    if (store_space_ensure(st, space) || store_begin(st))
        return -1;
    buf_init(&sub, 8192);
    for (size_t c = 0; c < 2 && rc == 0; c++) {
        buf_reset(&sub);
        buf_addf(&sub, "%s/%s", dir, categories[c]);
        rc = import_tree(&im, categories[c], sub.data, "", 0);
    }
    buf_release(&sub);
    if (rc) {
        store_rollback(st);
        return -1;
    }
    return store_commit(st) ? -1 : 0;
}

/* ---- export ---- */

struct exporter {
    const char *dir;
    FILE *report;
    struct transfer_counts *counts;
    int failed;
};

static int mkdir_once(const char *path)
{
    struct stat sb;
    if (mkdir(path, 0755) && errno != EEXIST)
        return -1;
    /* Never write through a symbolic link planted in the target tree. */
    return lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode) ? 0 : -1;
}

static int export_one(const struct knowledge *k, void *arg)
{
    struct exporter *ex = arg;
    struct buf file, norm;
    struct error err;
    const char *slash;
    int fd, ok = 0;
    buf_init(&file, 8192);
    buf_init(&norm, 4096);
    error_init(&err);
    /* Paths were checked on the way in; check again before touching the disk. */
    if (path_check(k->category, k->path, &norm, &err) || strcmp(norm.data, k->path) != 0) {
        fprintf(ex->report, "refused %s/%s: %s\n", k->category, k->path, err.message.data);
        goto out;
    }
    buf_addf(&file, "%s/%s", ex->dir, k->category);
    if (mkdir_once(file.data))
        goto fail;
    if ((slash = strchr(k->path, '/'))) {
        buf_addch(&file, '/');
        buf_add(&file, k->path, (size_t)(slash - k->path));
        if (mkdir_once(file.data))
            goto fail;
        buf_adds(&file, slash);
    } else {
        buf_addf(&file, "/%s", k->path);
    }
    fd = open(file.data, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        goto fail;
    size_t len = strlen(k->document);
    ok = write_all(fd, k->document, len) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok)
        goto fail;
    fprintf(ex->report, "exported %s/%s\n", k->category, k->path);
    ex->counts->exported++;
    goto out;
fail:
    fprintf(ex->report, "failed %s/%s: %s\n", k->category, k->path, strerror(errno));
    ex->failed = 1;
out:
    buf_release(&file);
    buf_release(&norm);
    error_release(&err);
    return 0;
}

int transfer_export(struct store *st, const char *space, const char *dir, FILE *report,
                    struct transfer_counts *counts)
{
    struct exporter ex = {dir, report, counts, 0};
    if (mkdir_once(dir))
        return -1;
    if (store_knowledge_scan(st, space, SCAN_ACTIVE, NULL, 1, export_one, &ex))
        return -1;
    return ex.failed ? -1 : 0;
}
