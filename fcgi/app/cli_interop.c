/* cli_interop: knowhub import and export in the interop formats
 * (AGENTS.md, CLAUDE.md, Cursor rules, Agent Skills; docs/agents.md). */
#include "app/cli.h"
#include "app/server.h"
#include "base/fileset.h"
#include "base/util.h"
#include "domain/interop.h"
#include "service/transfer.h"
#include "store/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

static int is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* A folder with .mdc files or SKILL.md files (its own or its folders'). */
static enum interop_format dir_format(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    enum interop_format f = INTEROP_NONE;
    struct buf sub;
    if (!d)
        return INTEROP_NONE;
    buf_init(&sub, 8192);
    while ((e = readdir(d)) && f != INTEROP_CURSOR) {
        struct stat sb;
        if (ends_with(e->d_name, ".mdc"))
            f = INTEROP_CURSOR;
        else if (strcmp(e->d_name, "SKILL.md") == 0)
            f = INTEROP_SKILLS;
        else if (e->d_name[0] != '.') {
            buf_reset(&sub);
            buf_addf(&sub, "%s/%s/SKILL.md", dir, e->d_name);
            if (!buf_failed(&sub) && lstat(sub.data, &sb) == 0 && S_ISREG(sb.st_mode))
                f = INTEROP_SKILLS;
        }
    }
    closedir(d);
    buf_release(&sub);
    return f;
}

int cli_interop_source(const char *src, const char *format)
{
    struct buf rules;
    int yes;
    if (format)
        return 1;
    if (strcmp(src, "-") == 0)
        return 0;
    if (!is_dir(src)) {
        const char *b = base_name(src);
        return strcasecmp(b, "AGENTS.md") == 0 || strcasecmp(b, "CLAUDE.md") == 0 ||
               ends_with(b, ".tar") || ends_with(b, ".tar.gz") || ends_with(b, ".tgz");
    }
    {
        /* a knowledge tree stays one, whatever names its documents have */
        enum import_layout layout;
        if (transfer_import_layout(src, &layout) == 0 && layout == IMPORT_TREE)
            return 0;
    }
    buf_init(&rules, 8192);
    buf_addf(&rules, "%s/.cursor/rules", src);
    yes = (!buf_failed(&rules) && is_dir(rules.data)) || dir_format(src) != INTEROP_NONE;
    buf_release(&rules);
    return yes;
}

/* Read a whole file of at most max bytes into out. */
static int read_whole(const char *file, struct buf *out, struct buf *why)
{
    char chunk[65536];
    ssize_t got;
    int fd = strcmp(file, "-") == 0 ? dup(STDIN_FILENO) : open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        buf_addf(why, "%s", strerror(errno));
        return -1;
    }
    while ((got = read(fd, chunk, sizeof chunk)) > 0)
        if (buf_add(out, chunk, (size_t)got)) {
            buf_adds(why, "too large");
            close(fd);
            return -1;
        }
    if (got < 0)
        buf_addf(why, "%s", strerror(errno));
    close(fd);
    return got < 0 ? -1 : 0;
}

/* The files of src into fs ("-": standard input, the format given). */
static int load_source(const char *src, enum interop_format f, struct fileset *fs, struct buf *why)
{
    struct buf data, rules;
    const char *reason = NULL;
    int rc = -1;
    buf_init(&data, FILESET_MAX_TOTAL);
    buf_init(&rules, 8192);
    if (is_dir(src)) {
        buf_addf(&rules, "%s/.cursor/rules", src);
        /* a project folder: its .cursor/rules alone, not the whole project */
        if ((f == INTEROP_NONE || f == INTEROP_CURSOR) && is_dir(rules.data))
            rc = fileset_from_dir(rules.data, fs, why);
        else
            rc = fileset_from_dir(src, fs, why);
        goto out;
    }
    if (read_whole(src, &data, why))
        goto out;
    if (ends_with(src, ".tar") || ends_with(src, ".tar.gz") || ends_with(src, ".tgz") ||
        interop_format_is_archive(f)) {
        rc = fileset_from_tar(data.data, data.len, fs, why);
    } else if ((rc = fileset_add(fs,
                                 strcmp(src, "-")         ? base_name(src)
                                 : f == INTEROP_CLAUDE_MD ? "CLAUDE.md"
                                                          : "AGENTS.md",
                                 data.data, data.len, &reason))) {
        buf_adds(why, reason);
    }
out:
    buf_release(&data);
    buf_release(&rules);
    return rc;
}

int cli_import_interop(const struct config *cfg, const char *src, const char *format,
                       const struct import_options *opt)
{
    enum interop_format f = interop_format_parse(format);
    struct fileset fs;
    struct buf why;
    struct transfer_counts c = {0};
    enum transfer_status status;
    struct store *st;
    int rc = 1;
    if (format && f == INTEROP_NONE) {
        fprintf(stderr,
                "knowhub: import: --format must be agents_md, claude_md, cursor or skills"
                " (got '%s')\n",
                format);
        return 2;
    }
    fileset_init(&fs);
    buf_init(&why, 4096);
    if (load_source(src, f, &fs, &why)) {
        fprintf(stderr, "knowhub: import: %s: %s; nothing imported\n", src, why.data);
        goto out;
    }
    if (f == INTEROP_NONE && (f = interop_detect(&fs)) == INTEROP_NONE) {
        fprintf(stderr,
                "knowhub: import: %s: no .mdc rule, SKILL.md, AGENTS.md or CLAUDE.md in it"
                " (use --format)\n",
                src);
        goto out;
    }
    fprintf(stderr, "knowhub: import: %s: %s (%zu file(s))\n", src, interop_format_name(f), fs.n);
    if (!(st = server_prepare_dirs(cfg) ? NULL : server_open_store(cfg)))
        goto out;
    status = transfer_import_interop(st, opt, f, &fs, 1, stdout, &c);
    if (status != TRANSFER_OK)
        fprintf(stderr, "knowhub: import into space %s failed: %s\n", opt->space, store_errmsg(st));
    fprintf(stderr, "knowhub: not carried by %s: %s\n", interop_format_name(f),
            interop_not_carried(f));
    fprintf(stderr,
            "knowhub: %ld imported, %ld updated, %ld unchanged, %ld skipped, %ld refused, %ld not "
            "imported\n",
            c.imported, c.updated, c.unchanged, c.skipped, c.refused, c.not_markdown);
    store_close(st);
    rc = status != TRANSFER_OK ? 1 : c.refused ? 3 : 0;
out:
    fileset_release(&fs);
    buf_release(&why);
    return rc;
}

int cli_export_interop(const struct config *cfg, const char *target, const char *space,
                       const char *format)
{
    enum interop_format f = interop_format_parse(format);
    struct fileset fs;
    struct store *st;
    long written = 0, left_out = 0;
    enum transfer_status status;
    int rc = 1;
    fileset_init(&fs);
    if (!(st = server_prepare_dirs(cfg) ? NULL : server_open_store(cfg)))
        return 1;
    status = transfer_export_interop(st, space, f, &fs, &written, &left_out);
    if (status != TRANSFER_OK) {
        fprintf(stderr, "knowhub: export of space %s failed: %s\n", space,
                status == TRANSFER_TOO_LARGE
                    ? "the file would be larger than 1 MiB (use --format cursor)"
                    : store_errmsg(st));
        goto out;
    }
    if (!interop_format_is_archive(f) && strcmp(target, "-") == 0) {
        rc = fwrite(fs.v[0].data, 1, fs.v[0].len, stdout) == fs.v[0].len && fflush(stdout) == 0 ? 0
                                                                                                : 1;
    } else if (!interop_format_is_archive(f) && ends_with(target, ".md") && !is_dir(target)) {
        int fd = open(target, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
        rc = fd >= 0 && write_all(fd, fs.v[0].data, fs.v[0].len) == 0 ? 0 : 1;
        if (fd >= 0 && close(fd))
            rc = 1;
        if (rc)
            fprintf(stderr, "knowhub: export: %s: %s\n", target, strerror(errno));
        else
            printf("exported %s\n", target);
    } else {
        rc = fileset_to_dir(&fs, target, stdout) ? 1 : 0;
    }
    if (rc)
        fprintf(stderr, "knowhub: export to %s failed\n", target);
    fprintf(stderr, "knowhub: %ld exported, %ld left out or changed (%s)\n", written, left_out,
            interop_format_is_archive(f) ? "see " INTEROP_REPORT_NAME
                                         : "see the comment at the top of the file");
out:
    fileset_release(&fs);
    store_close(st);
    return rc;
}
