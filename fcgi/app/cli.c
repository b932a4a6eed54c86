/* cli: operator sub-commands (init, token). Output meant for scripts goes to
 * stdout alone; everything else to stderr. */
#include "app/cli.h"
#include "app/client.h"
#include "service/auth.h"
#include "service/reviewgate.h"
#include "app/server.h"
#include "store/store.h"
#include "service/transfer.h"
#include "domain/frontmatter.h"
#include "domain/interop.h"
#include "base/fileset.h"
#include "llm/llm.h"

#include <json-c/json.h>
#include <sodium.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KNOWHUB_VERSION "0.1.0"

static struct store *open_store(const struct config *cfg)
{
    if (server_prepare_dirs(cfg))
        return NULL;
    return server_open_store(cfg);
}

/* Whether data_dir/admin.token holds something (login-link's source). */
static int admin_token_present(const struct config *cfg, struct buf *path)
{
    struct stat sb;
    buf_addf(path, "%s/admin.token", cfg->data_dir);
    return stat(path->data, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0;
}

/* The first start's token, or, when tokens exist but admin.token is gone or
 * empty, a new admin token written there: what login-link tells to run. */
static int init_admin_token(const struct config *cfg, struct store *st)
{
    struct buf path;
    long n = store_token_count(st);
    int rc;
    buf_init(&path, 4096);
    if (n < 0) {
        fprintf(stderr, "knowhub: cannot read the tokens: %s\n", store_errmsg(st));
        rc = 1;
    } else if (n == 0) {
        rc = server_first_start(cfg, st) ? 1 : 0;
    } else if (admin_token_present(cfg, &path)) {
        fprintf(stderr,
                "knowhub: already initialised; the admin token is in %s (knowhub login-link "
                "prints the panel's login link)\n",
                path.data);
        rc = 0;
    } else {
        fprintf(stderr, "knowhub: %s is missing: a new admin token goes there\n", path.data);
        rc = server_admin_token(cfg, st, "init admin") ? 1 : 0;
    }
    buf_release(&path);
    return rc;
}

int cli_init(const struct config *cfg, int argc, char **argv)
{
    struct store *st;
    int rc;
    (void)argv;
    if (argc != 0) {
        fputs("usage: knowhub init\n", stderr);
        return 2;
    }
    if (!(st = open_store(cfg)))
        return 1;
    rc = init_admin_token(cfg, st);
    store_close(st);
    return rc;
}

static int token_usage(void)
{
    fputs("usage: knowhub token create --space NAME --role admin|editor|agent|reader"
          " [--label TEXT] [--review off|agent_writes|llm_writes|all]\n"
          "       knowhub token list\n"
          "       knowhub token revoke ID\n",
          stderr);
    return 2;
}

static int token_create(struct store *st, int argc, char **argv)
{
    const char *space = NULL, *role = NULL, *label = "", *review = NULL;
    struct buf token;
    char id[TOKEN_ID_HEX + 1];
    int rc;
    for (int i = 0; i < argc; i++) {
        const char **slot = strcmp(argv[i], "--space") == 0    ? &space
                            : strcmp(argv[i], "--role") == 0   ? &role
                            : strcmp(argv[i], "--label") == 0  ? &label
                            : strcmp(argv[i], "--review") == 0 ? &review
                                                               : NULL;
        if (!slot || i + 1 == argc)
            return token_usage();
        *slot = argv[++i];
    }
    if (!space || !role)
        return token_usage();
    if (!space_name_valid(space)) {
        fprintf(stderr, "knowhub: invalid space name '%s' (a-z, 0-9, _ and -, 1 to 64)\n", space);
        return 2;
    }
    if (role_from_name(role) == ROLE_NONE) {
        fprintf(stderr, "knowhub: invalid role '%s' (admin, editor, agent or reader)\n", role);
        return 2;
    }
    if (strlen(label) > 200) {
        fputs("knowhub: the label is longer than 200 bytes\n", stderr);
        return 2;
    }
    if (review && !review_policy_valid(review)) {
        fprintf(stderr,
                "knowhub: invalid review policy '%s' (off, agent_writes, llm_writes or all)\n",
                review);
        return 2;
    }
    buf_init(&token, 256);
    /* the token and its own review policy (docs/review.md) in one transaction */
    if ((rc = store_begin(st)) == STORE_OK) {
        rc = auth_token_create(st, space, role_from_name(role), label, "operator", &token);
        if (rc == STORE_OK && review && auth_token_split(token.data, id))
            rc = store_token_review_set(st, id, review);
        if (rc == STORE_OK)
            rc = store_commit(st);
        else
            store_rollback(st);
    }
    if (rc == 0)
        printf("%s\n", token.data);
    else
        fprintf(stderr, "knowhub: cannot create the token: %s\n", store_errmsg(st));
    buf_release(&token);
    return rc ? 1 : 0;
}

static int print_token(const struct token_record *t, void *ctx)
{
    (void)ctx;
    printf("%-16s  %-16s  %-6s  %-19s  %-19s  %-7s  %s\n", t->id, t->space, t->role, t->created_at,
           t->last_used_at ? t->last_used_at : "-", t->revoked_at ? "revoked" : "valid", t->label);
    return 0;
}

int cli_token(const struct config *cfg, int argc, char **argv)
{
    struct store *st;
    int rc;
    if (argc < 1)
        return token_usage();
    if (strcmp(argv[0], "create") && strcmp(argv[0], "list") && strcmp(argv[0], "revoke"))
        return token_usage();
    if (strcmp(argv[0], "revoke") == 0 && argc != 2)
        return token_usage();
    if (!(st = open_store(cfg)))
        return 1;
    if (strcmp(argv[0], "create") == 0) {
        rc = token_create(st, argc - 1, argv + 1);
    } else if (strcmp(argv[0], "list") == 0) {
        printf("%-16s  %-16s  %-6s  %-19s  %-19s  %-7s  %s\n", "ID", "SPACE", "ROLE", "CREATED",
               "LAST USED", "STATE", "LABEL");
        rc = store_token_each(st, print_token, NULL) ? 1 : 0;
    } else {
        rc = store_token_revoke(st, argv[1], NULL, "operator");
        if (rc == STORE_NOT_FOUND)
            fprintf(stderr, "knowhub: no valid token with id %s\n", argv[1]);
        else if (rc)
            fprintf(stderr, "knowhub: cannot revoke: %s\n", store_errmsg(st));
        else
            fprintf(stderr, "knowhub: token %s revoked\n", argv[1]);
        rc = rc ? 1 : 0;
    }
    store_close(st);
    return rc;
}

/* Parse SRC [--space S] [--on-conflict X] [--flatten]; 0, or 2 (usage).
 * Export takes neither --on-conflict nor --flatten (opt NULL). */
static int transfer_args(int argc, char **argv, const char **src, const char **space,
                         struct import_options *opt, const char **format)
{
    *src = NULL;
    *format = NULL;
    *space = "default";
    if (opt) {
        opt->on_conflict = ON_CONFLICT_SKIP;
        opt->flatten = 0;
        opt->no_conflict_check = 0;
    }
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--space") == 0 && i + 1 < argc) {
            *space = argv[++i];
        } else if (opt && strcmp(argv[i], "--on-conflict") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            if (strcmp(v, "skip") == 0)
                opt->on_conflict = ON_CONFLICT_SKIP;
            else if (strcmp(v, "overwrite") == 0)
                opt->on_conflict = ON_CONFLICT_OVERWRITE;
            else if (strcmp(v, "rename") == 0)
                opt->on_conflict = ON_CONFLICT_RENAME;
            else
                return 2;
        } else if (opt && strcmp(argv[i], "--flatten") == 0) {
            opt->flatten = 1;
        } else if (opt && strcmp(argv[i], "--no-conflict-check") == 0) {
            opt->no_conflict_check = 1;
        } else if (opt && strcmp(argv[i], "--format") == 0 && i + 1 < argc) {
            *format = argv[++i];
        } else if ((argv[i][0] != '-' || (opt && strcmp(argv[i], "-") == 0)) && !*src) {
            *src = argv[i];
        } else {
            return 2;
        }
    }
    if (!*src || !space_name_valid(*space))
        return 2;
    if (opt)
        opt->space = *space;
    return 0;
}

static const char *layout_said(enum import_layout layout, int flatten)
{
    if (layout == IMPORT_JSONL)
        return "JSON Lines (one exported document per line)";
    if (layout == IMPORT_TREE)
        return "knowledge tree (rules/ and experiences/)";
    return flatten ? "plain folder, flattened (every .md file an experience named by its file "
                     "name, unless its front matter says category: rule)"
                   : "plain folder (every .md file an experience at its path, unless its front "
                     "matter says category: rule)";
}

int cli_import(const struct config *cfg, int argc, char **argv)
{
    const char *src, *space, *format;
    struct import_options opt;
    enum import_layout layout;
    enum transfer_status status;
    struct transfer_counts c = {0};
    struct store *st;
    int source_errno;
    if (transfer_args(argc, argv, &src, &space, &opt, &format)) {
        fputs("usage: knowhub import DIR|FILE.jsonl|- [--space NAME]"
              " [--on-conflict skip|overwrite|rename] [--flatten]"
              " [--no-conflict-check]\n"
              "       knowhub import AGENTS.md|CLAUDE.md|DIR|FILE.tar [--format F] [--space NAME]"
              " [--on-conflict ...]\n"
              "  DIR with rules/ or experiences/: rules/*.md, experiences/*.md and\n"
              "      experiences/<folder>/*.md; any other DIR: every .md below it\n"
              "  FILE.jsonl or - (standard input): what GET /api/knowledge/export writes\n"
              "  AGENTS.md, CLAUDE.md, a DIR with .cursor/rules, *.mdc or */SKILL.md, or a tar\n"
              "      of those: formats agents_md, claude_md, cursor, skills (detected)\n"
              "  exit status: 0 imported (skips too), 1 failed, 2 usage, 3 some refused\n",
              stderr);
        return 2;
    }
    if (cli_interop_source(src, format))
        return cli_import_interop(cfg, src, format, &opt);
    if (transfer_import_layout(src, &layout)) {
        fprintf(stderr, "knowhub: import: %s: %s\n", src, strerror(errno));
        return 1;
    }
    fprintf(stderr, "knowhub: import: %s: %s\n", src, layout_said(layout, opt.flatten));
    if (opt.flatten && layout != IMPORT_PLAIN)
        fputs("knowhub: import: --flatten applies to plain folders only; ignored\n", stderr);
    if (!(st = open_store(cfg)))
        return 1;
    status = transfer_import(st, &opt, src, layout, stdout, &c, &source_errno);
    if (status == TRANSFER_SOURCE_FAILED)
        fprintf(stderr, "knowhub: import: %s: %s\n", src, strerror(source_errno));
    else if (status == TRANSFER_STORE_FAILED)
        fprintf(stderr, "knowhub: import into space %s failed: %s\n", space, store_errmsg(st));
    if (status != TRANSFER_OK && (c.imported || c.updated))
        fputs("knowhub: import: the batch under way (up to 500 documents) was rolled back;"
              " earlier batches are kept\n",
              stderr);
    if (c.outside)
        fprintf(stderr,
                "knowhub: import: %ld name(s) beside rules/ and experiences/ not imported: a"
                " folder holding either is a knowledge tree (import the others on their own)\n",
                c.outside);
    fprintf(stderr,
            "knowhub: %ld imported, %ld updated, %ld unchanged, %ld skipped, %ld refused, %ld not "
            "Markdown, %ld hidden\n",
            c.imported, c.updated, c.unchanged, c.skipped, c.refused, c.not_markdown, c.hidden);
    if (c.conflicts || c.linked || c.link_warnings)
        fprintf(stderr,
                "knowhub: import: %ld conflict(s) found (the first 100 have a line \"conflict\"),"
                " %ld link(s) made from front matter, %ld not made (a line \"unlinked\")\n",
                c.conflicts, c.linked, c.link_warnings);
    store_close(st);
    return status != TRANSFER_OK ? 1 : c.refused ? 3 : 0;
}

/* export --format jsonl: to standard output, or to a new FILE that a
 * failure removes (an export cut short must not pass for a whole one). */
static int export_jsonl(struct store *st, const char *space, const char *target,
                        struct transfer_counts *c)
{
    int to_stdout = strcmp(target, "-") == 0, fd, write_errno;
    FILE *out = stdout;
    int rc;
    if (!to_stdout) {
        fd = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0 || !(out = fdopen(fd, "w"))) {
            fprintf(stderr, "knowhub: export: %s: %s\n", target, strerror(errno));
            if (fd >= 0)
                close(fd);
            return 1;
        }
    }
    rc = transfer_export_jsonl(st, space, out, c, &write_errno);
    if (!to_stdout && fclose(out) && rc == 0) {
        write_errno = errno;
        rc = -1;
    }
    if (rc) {
        fprintf(stderr, "knowhub: export of space %s failed (%s)%s\n", space,
                write_errno ? strerror(write_errno) : store_errmsg(st),
                to_stdout ? "; what was written is incomplete" : "; the file was removed");
        if (!to_stdout)
            unlink(target);
    }
    return rc ? 1 : 0;
}

int cli_export(const struct config *cfg, int argc, char **argv)
{
    const char *target = NULL, *space = "default", *format = "files";
    struct transfer_counts c = {0};
    struct store *st;
    int rc, bad = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--space") == 0 && i + 1 < argc)
            space = argv[++i];
        else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc)
            format = argv[++i];
        else if ((argv[i][0] != '-' || strcmp(argv[i], "-") == 0) && argv[i][0] && !target)
            target = argv[i];
        else
            bad = 1;
    }
    if (bad || !target || !space_name_valid(space) ||
        (strcmp(format, "files") && strcmp(format, "jsonl") &&
         interop_format_parse(format) == INTEROP_NONE) ||
        ((strcmp(format, "files") == 0 ||
          interop_format_is_archive(interop_format_parse(format))) &&
         strcmp(target, "-") == 0)) {
        fputs("usage: knowhub export DIR [--space NAME]\n"
              "       knowhub export FILE.jsonl|- --format jsonl [--space NAME]\n"
              "       knowhub export FILE.md|DIR|- --format agents_md|claude_md [--space NAME]\n"
              "       knowhub export DIR --format cursor|skills [--space NAME]\n"
              "  DIR gets rules/ and experiences/ files; FILE.jsonl (new) or standard\n"
              "  output the lines of GET /api/knowledge/export; agents_md and claude_md\n"
              "  write FILE.md, or DIR/AGENTS.md / DIR/CLAUDE.md; cursor\n"
              "  DIR/.cursor/rules/*.mdc, skills DIR/<name>/SKILL.md\n",
              stderr);
        return 2;
    }
    if (interop_format_parse(format) != INTEROP_NONE)
        return cli_export_interop(cfg, target, space, format);
    if (!(st = open_store(cfg)))
        return 1;
    if (strcmp(format, "jsonl") == 0) {
        rc = export_jsonl(st, space, target, &c);
    } else {
        rc = transfer_export(st, space, target, stdout, &c) ? 1 : 0;
        if (rc)
            fprintf(stderr, "knowhub: export to %s failed\n", target);
    }
    fprintf(stderr, "knowhub: %ld exported\n", c.exported);
    store_close(st);
    return rc;
}

/* Move tmp to path unless path exists: link(2) refuses an existing path
 * atomically; a file system without hard links (FAT) gets a last look and
 * a rename. 0, or -1 with errno (EEXIST when path exists). */
static int move_no_replace(const char *tmp, const char *path)
{
    struct stat sb;
    if (link(tmp, path) == 0) {
        unlink(tmp); /* path holds the copy now */
        return 0;
    }
    if (errno != EPERM && errno != EOPNOTSUPP && errno != ENOSYS)
        return -1;
    if (lstat(path, &sb) == 0) {
        errno = EEXIST;
        return -1;
    }
    return rename(tmp, path);
}

/* Copy the database into a new file next to path, then move it to path:
 * a failed copy never leaves half a file under path, and without force an
 * existing path is never replaced (link(2) fails on it atomically). */
static int backup_to(struct store *st, const char *path, int force)
{
    struct buf tmp;
    int fd, rc = 1, status;
    buf_init(&tmp, 8192);
    if (buf_addf(&tmp, "%s.tmp-XXXXXX", path)) {
        fprintf(stderr, "knowhub: backup: %s: the path is too long\n", path);
        goto out;
    }
    if ((fd = mkstemp(tmp.data)) < 0) {
        fprintf(stderr, "knowhub: backup: %s: %s\n", path, strerror(errno));
        goto out;
    }
    close(fd);
    status = store_backup(st, tmp.data);
    if (status) {
        fprintf(stderr, "knowhub: backup to %s failed: %s; nothing was written there\n", path,
                status == STORE_FULL ? "the disk is full" : "the copy failed");
        unlink(tmp.data);
        goto out;
    }
    if (force ? rename(tmp.data, path) : move_no_replace(tmp.data, path)) {
        fprintf(stderr, "knowhub: backup: %s: %s%s\n", path, strerror(errno),
                errno == EEXIST ? " (knowhub backup FILE --force replaces it)" : "");
        unlink(tmp.data);
        goto out;
    }
    fprintf(stderr, "knowhub: backup written to %s\n", path);
    rc = 0;
out:
    buf_release(&tmp);
    return rc;
}

int cli_backup(const struct config *cfg, int argc, char **argv)
{
    struct store *st;
    const char *file = NULL;
    struct stat sb;
    int force = 0, bad = 0, rc;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--force") == 0 && !force)
            force = 1;
        else if (argv[i][0] != '-' && argv[i][0] && !file)
            file = argv[i];
        else
            bad = 1;
    }
    if (!file || bad) {
        fputs("usage: knowhub backup FILE [--force]\n"
              "  FILE must not exist; --force replaces it\n",
              stderr);
        return 2;
    }
    if (cfg->database_url) {
        fputs("knowhub: backup copies the SQLite database; on PostgreSQL use pg_dump "
              "(docs/operations.md, \"PostgreSQL and several nodes\")\n",
              stderr);
        return 2;
    }
    /* Said before the copy, which takes long on a large database; the
     * link at the end refuses it again if FILE appears meanwhile. */
    if (!force && lstat(file, &sb) == 0) {
        fprintf(stderr, "knowhub: backup: %s exists; knowhub backup %s --force replaces it\n", file,
                file);
        return 1;
    }
    if (!(st = open_store(cfg)))
        return 1;
    rc = backup_to(st, file, force);
    store_close(st);
    return rc;
}

int cli_check(const struct config *cfg, int argc, char **argv)
{
    struct store *st;
    struct buf report;
    int problems;
    (void)argv;
    if (argc != 0) {
        fputs("usage: knowhub check\n", stderr);
        return 2;
    }
    if (!(st = open_store(cfg)))
        return 1;
    buf_init(&report, 1 << 20);
    problems = store_check(st, &report);
    fputs(report.data, stdout);
    printf("%s\n", problems ? "problems found" : "ok");
    buf_release(&report);
    store_close(st);
    return problems ? 1 : 0;
}

/* The first line of a small file into out (at most out's maximum); -1 with
 * errno when it cannot be read. */
static int read_first_line(const char *path, struct buf *out)
{
    char chunk[512];
    ssize_t got;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    while ((got = read(fd, chunk, sizeof chunk)) > 0)
        if (buf_add(out, chunk, (size_t)got)) {
            close(fd);
            errno = EFBIG;
            return -1;
        }
    close(fd);
    if (got < 0)
        return -1;
    out->len = strcspn(out->data, "\r\n");
    out->data[out->len] = '\0';
    return 0;
}

int cli_login_link(const struct config *cfg, int argc, char **argv)
{
    struct buf path, token, link;
    int rc = 1;
    (void)argv;
    if (argc != 0) {
        fputs("usage: knowhub login-link\n", stderr);
        return 2;
    }
    buf_init(&link, 8192);
    if (client_local_url(&link)) {
        buf_release(&link);
        return 2;
    }
    buf_init(&path, 4096);
    buf_init(&token, 1024);
    buf_addf(&path, "%s/admin.token", cfg->data_dir);
    if (read_first_line(path.data, &token) || token.len == 0) {
        fprintf(stderr,
                "knowhub: no admin token in %s: run `knowhub init` (with the same KNOWHUB_DATA),"
                " which writes a new one there, then login-link again\n",
                path.data);
        goto out;
    }
    if (buf_addf(&link, "/#token=%s\n", token.data)) {
        fputs("knowhub: KNOWHUB_HOST is too long\n", stderr);
        goto out;
    }
    fputs(link.data, stdout);
    rc = 0;
out:
    buf_release(&path);
    buf_release(&token);
    buf_release(&link);
    return rc;
}

static void copy_progress(void *ctx, const char *table, long long rows, int done)
{
    (void)ctx;
    if (done)
        fprintf(stderr, "knowhub: %s: %lld rows\n", table, rows);
    else
        fprintf(stderr, "knowhub: %s: %lld rows so far\n", table, rows);
}

int cli_migrate_to(const struct config *cfg, int argc, char **argv)
{
    struct config lite = *cfg;
    struct store *from = NULL, *to = NULL;
    struct buf path, report;
    int rc;
    if (argc != 1 || !store_is_postgres(argv[0])) {
        fputs("usage: knowhub migrate-to URL\n"
              "  URL: the PostgreSQL database (postgresql://... or key=value pairs) that\n"
              "  receives a copy of $KNOWHUB_DATA/knowhub.db; it must hold no data yet\n",
              stderr);
        return 2;
    }
    /* The source is always the SQLite file, whatever KNOWHUB_DATABASE_URL
     * says; it must exist (opening would create an empty one). The URL is
     * never printed: it may hold a password. */
    lite.database_url = NULL;
    buf_init(&path, 4096);
    buf_init(&report, 1 << 20);
    server_db_path(&lite, &path);
    if (access(path.data, F_OK) != 0) {
        fprintf(stderr, "knowhub: no database at %s: nothing to migrate\n", path.data);
        rc = 1;
        goto out;
    }
    if (!(from = server_open_store(&lite))) {
        rc = 1;
        goto out;
    }
    if (store_open(argv[0], &to)) {
        fputs("knowhub: cannot open the target PostgreSQL database\n", stderr);
        rc = 1;
        goto out;
    }
    fprintf(stderr, "knowhub: copying %s into PostgreSQL\n", path.data);
    rc = store_copy_to(from, to, copy_progress, NULL, &report);
    fputs(report.data, stdout);
    if (rc == STORE_CONFLICT)
        fputs("knowhub: the target database already holds data; migrate-to fills only an empty"
              " one (createdb a new database)\n",
              stderr);
    else if (rc)
        fprintf(stderr, "knowhub: migration failed, nothing was committed: %s\n", store_errmsg(to));
    else
        fputs("knowhub: migrated; set KNOWHUB_DATABASE_URL to this database and start knowhub\n",
              stderr);
    rc = rc ? 1 : 0;
out:
    store_close(to);
    store_close(from);
    buf_release(&path);
    buf_release(&report);
    return rc;
}

int cli_version(const struct config *cfg, int argc, char **argv)
{
    struct buf pq, said;
    (void)argv;
    if (argc != 0) {
        fputs("usage: knowhub version\n", stderr);
        return 2;
    }
    buf_init(&pq, 64);
    buf_init(&said, 8192);
    store_libpq_version(&pq);
    server_store_said(cfg, &said);
    printf("knowhub %s\n"
           "stores: sqlite (SQLite %s), postgresql (libpq %s)\n"
           "libraries: json-c %s, libcurl %s, libyaml %s, libsodium %s, libarchive %s\n"
           "this configuration: store %s\n",
           KNOWHUB_VERSION, store_sqlite_version(), pq.data, json_c_version(), llm_curl_version(),
           frontmatter_yaml_version(), sodium_version_string(), fileset_archive_version(),
           said.data);
    buf_release(&pq);
    buf_release(&said);
    return 0;
}
