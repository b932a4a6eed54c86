/* server: data directory layout, first-start initialisation and the proxy key. */
#include "app/server.h"
#include "base/util.h"
#include "service/auth.h"
#include "store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
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

void server_store_said(const struct config *cfg, struct buf *out)
{
    buf_reset(out);
    if (cfg->database_url) {
        buf_adds(out, "postgresql ");
        store_pg_redacted(cfg->database_url, out);
    } else {
        buf_addf(out, "sqlite %s/knowhub.db", cfg->data_dir);
    }
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

/* Replace path with data (mode 0600 whatever the umask) through path.new and
 * a rename: a reader (nginx at a reload) sees the old file or the new one,
 * never half of one. 0, or -1 with errno set. */
static int write_private_file(const char *path, const char *data, size_t len)
{
    struct buf tmp;
    int fd, rc = -1, saved;
    buf_init(&tmp, 4096);
    buf_addf(&tmp, "%s.new", path);
    unlink(tmp.data);
    fd = open(tmp.data, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        goto out;
    if (fchmod(fd, 0600))
        goto failed;
    if (write_all(fd, data, len) || fsync(fd))
        goto failed;
    if (close(fd)) {
        fd = -1;
        goto failed;
    }
    fd = -1;
    if (rename(tmp.data, path))
        goto failed;
    rc = 0;
    goto out;
failed:
    saved = errno;
    if (fd >= 0)
        close(fd);
    unlink(tmp.data);
    errno = saved;
out:
    buf_release(&tmp);
    return rc;
}

/* The key in path into out: 1 when read, 0 when there is no such file, -1
 * after a message when it cannot be read or holds no key. */
static int read_proxy_key(const char *path, char out[static SERVER_PROXY_KEY_HEX + 1])
{
    char text[SERVER_PROXY_KEY_HEX + 8];
    struct stat sb;
    ssize_t n;
    size_t len;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        if (errno == ENOENT)
            return 0;
        fprintf(stderr, "knowhub: cannot read the proxy key %s: %s\n", path, strerror(errno));
        return -1;
    }
    /* A key left readable to others (an operator's copy) is the owner's again. */
    if (fstat(fd, &sb) == 0 && (sb.st_mode & 077) && fchmod(fd, 0600) == 0)
        fprintf(stderr, "knowhub: %s was readable by others: now mode 0600\n", path);
    do
        n = read(fd, text, sizeof text - 1);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        fprintf(stderr, "knowhub: cannot read the proxy key %s: %s\n", path, strerror(errno));
    close(fd);
    if (n < 0)
        return -1;
    len = (size_t)n;
    while (len && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' '))
        len--;
    for (size_t i = 0; i < len; i++)
        if (!((text[i] >= '0' && text[i] <= '9') || (text[i] >= 'a' && text[i] <= 'f')))
            len = 0; /* not a key */
    if (len != SERVER_PROXY_KEY_HEX) {
        fprintf(stderr,
                "knowhub: %s does not hold a proxy key (%d lower-case hexadecimal characters); "
                "remove it, and knowhub makes a new one at its next start "
                "(docs/operations.md, \"The proxy key\")\n",
                path, SERVER_PROXY_KEY_HEX);
        sodium_memzero(text, sizeof text);
        return -1;
    }
    memcpy(out, text, len);
    out[len] = '\0';
    sodium_memzero(text, sizeof text);
    return 1;
}

int server_proxy_key(const struct config *cfg, char out[static SERVER_PROXY_KEY_HEX + 1])
{
    struct buf key_path, conf_path, text;
    unsigned char raw[SERVER_PROXY_KEY_HEX / 2];
    int rc = -1, found;
    buf_init(&key_path, 4096);
    buf_init(&conf_path, 4096);
    buf_init(&text, 4096);
    buf_addf(&key_path, "%s/proxy.key", cfg->data_dir);
    buf_addf(&conf_path, "%s/proxy_key.conf", cfg->data_dir);
    if (buf_failed(&conf_path)) {
        fprintf(stderr, "knowhub: the data directory's path is too long\n");
        goto out;
    }
    if ((found = read_proxy_key(key_path.data, out)) < 0)
        goto out;
    if (!found) {
        randombytes_buf(raw, sizeof raw);
        sodium_bin2hex(out, SERVER_PROXY_KEY_HEX + 1, raw, sizeof raw);
        sodium_memzero(raw, sizeof raw);
        buf_addf(&text, "%s\n", out);
        if (write_private_file(key_path.data, text.data, text.len)) {
            fprintf(stderr, "knowhub: cannot write the proxy key %s: %s\n", key_path.data,
                    strerror(errno));
            goto out;
        }
        fprintf(stderr, "knowhub: made a new proxy key in %s\n", key_path.data);
    }
    /* Written at every start: the include always holds the key in use. */
    buf_reset(&text);
    buf_addf(&text,
             "# Written by knowhub serve at each start from proxy.key (docs/operations.md,\n"
             "# \"The proxy key\"): nginx's master reads it at (re)load and passes the key\n"
             "# to knowhub, which treats a request as loopback only when it matches.\n"
             "# Keep it out of reach of nginx's workers (mode 0600).\n"
             "fastcgi_param KNOWHUB_PROXY_KEY \"%s\";\n",
             out);
    if (write_private_file(conf_path.data, text.data, text.len)) {
        fprintf(stderr, "knowhub: cannot write the nginx include %s: %s\n", conf_path.data,
                strerror(errno));
        goto out;
    }
    rc = 0;
out:
    if (text.len)
        sodium_memzero(text.data, text.len);
    if (rc)
        sodium_memzero(out, SERVER_PROXY_KEY_HEX + 1);
    buf_release(&key_path);
    buf_release(&conf_path);
    buf_release(&text);
    return rc;
}

int server_admin_token(const struct config *cfg, struct store *st, const char *label)
{
    struct buf token, path;
    int rc = -1;
    buf_init(&token, 256);
    buf_init(&path, 4096);
    buf_addf(&path, "%s/admin.token", cfg->data_dir);
    if (auth_token_create(st, "default", ROLE_ADMIN, label, "operator", &token) != 0) {
        fprintf(stderr, "knowhub: cannot create the admin token: %s\n", store_errmsg(st));
        goto out;
    }
    buf_addch(&token, '\n');
    if (write_private_file(path.data, token.data, token.len)) {
        fprintf(stderr, "knowhub: cannot write %s: %s\n", path.data, strerror(errno));
        goto out;
    }
    fprintf(stderr, "knowhub: admin token of space \"default\" written to %s\n", path.data);
    rc = 0;
out:
    sodium_memzero(token.data, token.len);
    buf_release(&token);
    buf_release(&path);
    return rc;
}

int server_first_start(const struct config *cfg, struct store *st)
{
    long n = store_token_count(st);
    if (n != 0)
        return n > 0 ? 0 : -1;
    fputs("knowhub: first start: no token yet\n", stderr);
    return server_admin_token(cfg, st, "first-start admin");
}
