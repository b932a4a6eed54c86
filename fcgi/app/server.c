/* server: data directory layout and first-start initialisation. */
#include "app/server.h"
#include "service/auth.h"
#include "store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int mkdir_p(const char *path, mode_t mode)
{
    struct buf b;
    int rc = 0;
    buf_init(&b, 4096);
    if (buf_adds(&b, path)) {
        buf_release(&b);
        return -1;
    }
    for (char *p = b.data + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(b.data, mode) && errno != EEXIST)
            rc = -1;
        *p = '/';
    }
    if (mkdir(b.data, mode) && errno != EEXIST)
        rc = -1;
    buf_release(&b);
    return rc;
}

int server_prepare_dirs(const struct config *cfg)
{
    struct buf run;
    int rc;
    buf_init(&run, 4096);
    buf_addf(&run, "%s/logs", cfg->data_dir);
    rc = mkdir_p(cfg->data_dir, 0750) || mkdir_p(run.data, 0750) ? -1 : 0;
    buf_reset(&run);
    buf_addf(&run, "%s/run", cfg->data_dir);
    rc = rc || mkdir_p(run.data, 0750) ? -1 : 0;
    if (rc)
        fprintf(stderr, "knowhub: cannot create %s: %s\n", run.data, strerror(errno));
    buf_release(&run);
    return rc;
}

void server_db_path(const struct config *cfg, struct buf *out)
{
    buf_reset(out);
    if (cfg->database_url)
        buf_adds(out, cfg->database_url);
    else
        buf_addf(out, "%s/knowhub.db", cfg->data_dir);
}

void server_socket_path(const struct config *cfg, struct buf *out)
{
    buf_reset(out);
    if (cfg->socket_path)
        buf_adds(out, cfg->socket_path);
    else
        buf_addf(out, "%s/run/knowhub.sock", cfg->data_dir);
}

struct store *server_open_store(const struct config *cfg)
{
    struct buf db, backups;
    struct store_upgrade up;
    struct store *st = NULL;
    int rc;
    buf_init(&db, 4096);
    buf_init(&backups, 4096);
    server_db_path(cfg, &db);
    buf_addf(&backups, "%s/backups", cfg->data_dir);
    /* Messages name a PostgreSQL database by its variable: its URL may hold a password. */
    const char *shown = cfg->database_url ? "KNOWHUB_DATABASE_URL (PostgreSQL)" : db.data;
    store_upgrade_init(&up);
    /* the backend is the variable's, never guessed from a path (a data
     * directory may hold an '=') */
    rc = store_open_upgrade(db.data, cfg->database_url != NULL, backups.data, &up, &st);
    if (rc == STORE_TOO_NEW)
        fprintf(stderr,
                "knowhub: the database %s has schema version %d, newer than this knowhub "
                "knows (%d): it was written by a newer knowhub. Run that version, or restore "
                "a backup taken before the upgrade (docs/operations.md, \"Upgrade\"); the "
                "database was not changed\n",
                shown, up.from_version, store_schema_latest());
    else if (rc == STORE_BACKUP_FAILED)
        fprintf(stderr,
                "knowhub: the database %s needs a migration from schema version %d to %d, but "
                "the backup before it could not be written to %s (%s); nothing was migrated. "
                "Make room or fix %s, then start again\n",
                shown, up.from_version, store_schema_latest(), up.backup.data, up.why,
                backups.data);
    else if (rc)
        fprintf(stderr, "knowhub: cannot open the database %s\n", shown);
    else if (up.from_version > 0 && up.from_version < up.to_version)
        fprintf(stderr,
                "knowhub: migrated the database %s from schema version %d to %d (backup of "
                "version %d: %s)\n",
                shown, up.from_version, up.to_version, up.from_version,
                up.backup.len ? up.backup.data : "none");
    store_upgrade_release(&up);
    buf_release(&db);
    buf_release(&backups);
    return st;
}

int server_first_start(const struct config *cfg, struct store *st)
{
    struct buf token, path;
    int fd, rc = -1;
    if (store_token_count(st) != 0)
        return store_token_count(st) > 0 ? 0 : -1;
    buf_init(&token, 256);
    buf_init(&path, 4096);
    buf_addf(&path, "%s/admin.token", cfg->data_dir);
    if (auth_token_create(st, "default", ROLE_ADMIN, "first-start admin", &token) != 0) {
        fprintf(stderr, "knowhub: cannot create the admin token: %s\n", store_errmsg(st));
        goto out;
    }
    fd = open(path.data, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || fchmod(fd, 0600) || write(fd, token.data, token.len) != (ssize_t)token.len ||
        write(fd, "\n", 1) != 1) {
        fprintf(stderr, "knowhub: cannot write %s: %s\n", path.data, strerror(errno));
        if (fd >= 0)
            close(fd);
        goto out;
    }
    close(fd);
    fprintf(stderr, "knowhub: first start: space \"default\", admin token in %s\n", path.data);
    rc = 0;
out:
    buf_release(&token);
    buf_release(&path);
    return rc;
}
