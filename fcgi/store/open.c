/* store/open.c: the connection: open (pragmas, the FTS5 tokenizer, the busy
 * handler), the statement cache and row helpers, transactions, read
 * snapshots, the generation and the online backup. */
#include "store/store_int.h"
#include "base/metrics.h"
#include "domain/tokenize.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int status_of(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_OK:
    case SQLITE_DONE:
    case SQLITE_ROW:
        return STORE_OK;
    case SQLITE_CONSTRAINT:
        /* Only uniqueness is a conflict; a CHECK or NOT NULL failure is a bug. */
        return rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY ? STORE_CONFLICT
                                                                                    : STORE_ERROR;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return STORE_BUSY;
    case SQLITE_FULL:
        return STORE_FULL;
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
        return STORE_READONLY;
    case SQLITE_IOERR:
        /* A file that cannot be written any more (made immutable, a
         * read-only remount, EPERM/EROFS on write): SQLite rolled back,
         * nothing was written; the caller may retry once it is writable. */
        return rc == SQLITE_IOERR_WRITE || rc == SQLITE_IOERR_FSYNC ||
                       rc == SQLITE_IOERR_DIR_FSYNC || rc == SQLITE_IOERR_TRUNCATE
                   ? STORE_READONLY
                   : STORE_ERROR;
    default:
        return STORE_ERROR;
    }
}

void store_global_init(void)
{
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

void store_status_error(int status, const char *what, struct error *e)
{
    switch (status) {
    case STORE_NOT_FOUND:
        error_set(e, E_NOT_FOUND, "not_found", "%s not found", what);
        break;
    case STORE_CONFLICT:
        error_set(e, E_CONFLICT, "conflict", "%s conflicts with an existing one", what);
        break;
    case STORE_BUSY:
        error_set(e, E_SERVICE_UNAVAILABLE, "db_busy", "The database is busy; try again");
        break;
    case STORE_FULL:
        error_set(e, E_SERVICE_UNAVAILABLE, "db_full", "The database is full; nothing was written");
        break;
    case STORE_READONLY:
        error_set(e, E_SERVICE_UNAVAILABLE, "db_readonly",
                  "The database is read-only; nothing was written");
        break;
    default:
        error_set(e, E_INTERNAL, "internal_error", "An unexpected error occurred");
        break;
    }
}

const char *store_errmsg(struct store *st)
{
    return st && st->db ? sqlite3_errmsg(st->db) : "no database";
}

sqlite3_stmt *stmt_get(struct store *st, enum stmt_id id)
{
    if (!st->stmt[id]) {
        if (sqlite3_prepare_v3(st->db, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT, &st->stmt[id],
                               NULL) != SQLITE_OK)
            return NULL;
    }
    return st->stmt[id];
}

void bind_text(sqlite3_stmt *s, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(s, i);
}

/* Step a statement that returns no row we need; reset it; return a store status. */
int step_done(sqlite3_stmt *s)
{
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? STORE_OK : status_of(rc);
}

void finish(sqlite3_stmt *s)
{
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
}

char *col_dup(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    return t ? xstrndup((const char *)t, (size_t)sqlite3_column_bytes(s, i)) : NULL;
}

const char *col_text(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    return t ? (const char *)t : "";
}

int exec(struct store *st, const char *sql)
{
    return status_of(sqlite3_exec(st->db, sql, NULL, NULL, NULL));
}

struct fts_emit_ctx {
    void *fts_ctx;
    int (*token)(void *, int, const char *, int, int, int);
};

static int fts_emit(void *arg, const char *token, size_t n, size_t start, size_t end)
{
    struct fts_emit_ctx *c = arg;
    return c->token(c->fts_ctx, 0, token, (int)n, (int)start, (int)end);
}

static const char fts_instance; /* the tokenizer keeps no state */

static int fts_create(void *unused, const char **args, int nargs, Fts5Tokenizer **out)
{
    (void)unused;
    (void)args;
    (void)nargs;
    *out = (Fts5Tokenizer *)(uintptr_t)&fts_instance;
    return SQLITE_OK;
}

static void fts_delete(Fts5Tokenizer *t)
{
    (void)t;
}

static int fts_tokenize(Fts5Tokenizer *t, void *fts_ctx, int flags, const char *text, int n,
                        int (*token)(void *, int, const char *, int, int, int))
{
    struct fts_emit_ctx c = {fts_ctx, token};
    (void)t;
    (void)flags;
    return tokenize(text, n > 0 ? (size_t)n : 0, fts_emit, &c);
}

/* Register the tokenizer on this connection (before any FTS5 table is used). */
static int register_tokenizer(sqlite3 *db)
{
    fts5_api *api = NULL;
    sqlite3_stmt *s;
    fts5_tokenizer tok = {fts_create, fts_delete, fts_tokenize};
    if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &s, NULL) != SQLITE_OK)
        return STORE_ERROR;
    sqlite3_bind_pointer(s, 1, (void *)&api, "fts5_api_ptr", NULL);
    sqlite3_step(s);
    sqlite3_finalize(s);
    if (!api || api->xCreateTokenizer(api, "knowhub", NULL, &tok, NULL) != SQLITE_OK)
        return STORE_ERROR;
    return STORE_OK;
}

/* SQLite's busy handler: what sqlite3_busy_timeout does (sleeps of 1 to 100
 * ms until BUSY_TIMEOUT_MS have passed), counted for the metrics. */
static int busy_wait(void *arg, int count)
{
    static const int delays[] = {1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100};
    enum { N_DELAYS = sizeof delays / sizeof delays[0] };
    struct store *st = arg;
    int spent = 0, delay;
    if (count < N_DELAYS) {
        delay = delays[count];
        for (int i = 0; i < count; i++)
            spent += delays[i];
    } else {
        delay = delays[N_DELAYS - 1];
        spent = 328 + (count - N_DELAYS) * delay; /* 328: the sum of delays */
    }
    if (spent >= BUSY_TIMEOUT_MS) {
        metrics_store_event(st->metrics, METRICS_SQLITE_TIMEOUT);
        return 0;
    }
    if (spent + delay > BUSY_TIMEOUT_MS)
        delay = BUSY_TIMEOUT_MS - spent;
    metrics_store_event(st->metrics, METRICS_SQLITE_RETRY);
    sqlite3_sleep(delay);
    return 1;
}

int store_open(const char *path, struct store **out)
{
    return store_open_upgrade(path, NULL, NULL, out);
}

int store_open_upgrade(const char *path, const char *backup_dir, struct store_upgrade *up,
                       struct store **out)
{
    struct store *st = xcalloc(1, sizeof *st);
    struct store_upgrade local;
    int rc, found;
    *out = NULL;
    buf_init(&st->audit_pending, 1024 * 1024);
    if (!up) {
        store_upgrade_init(&local);
        up = &local;
    }
    rc = sqlite3_open_v2(path, &st->db,
                         SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        rc = status_of(rc);
        goto fail;
    }
    sqlite3_extended_result_codes(st->db, 1);
    sqlite3_busy_handler(st->db, busy_wait, st);
    /* Before anything writes (even the journal mode): a newer schema is
     * left exactly as it is. */
    found = up->from_version = up->to_version = store_schema_version(st);
    if (found > store_schema_latest()) {
        rc = STORE_TOO_NEW;
        goto fail;
    }
    if ((rc = exec(st, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                       "PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY;")))
        goto fail;
    if ((rc = register_tokenizer(st->db)))
        goto fail;
    /* Outside the migration's write transaction: SQLite's backup cannot
     * read a source connection that holds one. */
    if (found > 0 && found < store_schema_latest() &&
        backup_before_migrating(st, path, backup_dir, found, &up->backup, &up->why)) {
        rc = STORE_BACKUP_FAILED;
        goto fail;
    }
    if ((rc = migrate(st, &up->from_version)))
        goto fail;
    up->to_version = store_schema_latest();
    *out = st;
    if (up == &local)
        store_upgrade_release(&local);
    return STORE_OK;
fail:
    store_close(st);
    if (up == &local)
        store_upgrade_release(&local);
    return rc ? rc : STORE_ERROR;
}

void store_close(struct store *st)
{
    if (!st)
        return;
    while (st->tx_depth)
        store_rollback(st); /* also releases writer_lock */
    for (int i = 0; i < S_COUNT; i++)
        sqlite3_finalize(st->stmt[i]);
    sqlite3_close(st->db);
    buf_release(&st->audit_pending);
    free(st);
}

void store_set_metrics(struct store *st, struct metrics *m)
{
    st->metrics = m;
}

void store_set_audit_hook(struct store *st, store_audit_fn hook, void *ctx)
{
    st->audit_hook = hook;
    st->audit_ctx = ctx;
}

const char *store_sqlite_version(void)
{
    return sqlite3_libversion();
}

/* Hand the committed audit rows to the hook and forget them. */
void audit_flush(struct store *st)
{
    const char *p = st->audit_pending.data, *end = p + st->audit_pending.len;
    while (st->audit_hook && p < end) {
        const char *f[5];
        for (int i = 0; i < 5; i++) {
            f[i] = p;
            p += strlen(p) + 1;
        }
        st->audit_hook(st->audit_ctx, f[0], f[1], f[2], f[3], f[4]);
    }
    buf_reset(&st->audit_pending);
}

/* One write transaction at a time in this process: a waiting writer sleeps on
 * this mutex and wakes as soon as it is free, where SQLite's busy handler would
 * retry in 1-100 ms sleeps. Initialised before any thread starts; other
 * processes (the CLI) still meet SQLite's busy timeout. */
static pthread_mutex_t writer_lock = PTHREAD_MUTEX_INITIALIZER;

static int writer_lock_take(struct store *st)
{
    struct timespec deadline;
    if (pthread_mutex_trylock(&writer_lock) == 0)
        return STORE_OK;
    metrics_store_event(st->metrics, METRICS_WRITER_WAIT);
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += BUSY_TIMEOUT_MS / 1000;
    if (pthread_mutex_timedlock(&writer_lock, &deadline) == 0)
        return STORE_OK;
    metrics_store_event(st->metrics, METRICS_WRITER_TIMEOUT);
    return STORE_BUSY;
}

int store_begin(struct store *st)
{
    int rc;
    if (st->tx_depth == 0 && (rc = writer_lock_take(st)))
        return rc;
    rc = exec(st, st->tx_depth ? "SAVEPOINT nested" : "BEGIN IMMEDIATE");
    if (rc == STORE_OK) {
        if (st->tx_depth == 0)
            buf_reset(&st->audit_pending);
        if (st->tx_depth < 8)
            st->audit_mark[st->tx_depth] = st->audit_pending.len;
        st->tx_depth++;
    } else if (st->tx_depth == 0)
        pthread_mutex_unlock(&writer_lock);
    return rc;
}

int store_commit(struct store *st)
{
    int rc;
    if (st->tx_depth == 0)
        return STORE_ERROR;
    rc = exec(st, st->tx_depth > 1 ? "RELEASE nested" : "COMMIT");
    if (rc == STORE_OK) {
        if (--st->tx_depth == 0) {
            pthread_mutex_unlock(&writer_lock);
            audit_flush(st);
        }
    } else {
        store_rollback(st);
    }
    return rc;
}

void store_rollback(struct store *st)
{
    if (st->tx_depth == 0)
        return;
    if (st->tx_depth > 1)
        exec(st, "ROLLBACK TO nested; RELEASE nested");
    else
        exec(st, "ROLLBACK");
    if (--st->tx_depth < 8)
        st->audit_pending.len = st->audit_mark[st->tx_depth];
    st->audit_pending.data[st->audit_pending.len] = '\0';
    if (st->tx_depth == 0)
        pthread_mutex_unlock(&writer_lock);
}

void store_read_begin(struct store *st)
{
    sqlite3_stmt *s;
    if (st->read_depth++ || st->tx_depth)
        return; /* already inside one snapshot */
    s = stmt_get(st, S_READ_BEGIN);
    st->read_open = s && step_done(s) == STORE_OK;
}

void store_read_end(struct store *st)
{
    sqlite3_stmt *s;
    if (st->read_depth == 0 || --st->read_depth || !st->read_open)
        return;
    st->read_open = 0;
    s = stmt_get(st, S_READ_END);
    if (!s || step_done(s) != STORE_OK)
        exec(st, "ROLLBACK");
}

/* End a write: commit when rc is STORE_OK, else roll back; returns the final status. */
int tx_end(struct store *st, int rc)
{
    if (rc == STORE_OK)
        return store_commit(st);
    store_rollback(st);
    return rc;
}

int store_backup(struct store *st, const char *path)
{
    sqlite3 *dest;
    sqlite3_backup *b;
    int rc;
    if (sqlite3_open_v2(path, &dest, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK) {
        sqlite3_close(dest);
        return STORE_READONLY;
    }
    b = sqlite3_backup_init(dest, "main", st->db, "main");
    if (!b) {
        sqlite3_close(dest);
        return STORE_ERROR;
    }
    /* In steps, so writers are never blocked for long while the copy runs. */
    do {
        rc = sqlite3_backup_step(b, 256);
        if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
            sqlite3_sleep(20);
    } while (rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED);
    sqlite3_backup_finish(b);
    rc = rc == SQLITE_DONE ? sqlite3_errcode(dest) : rc;
    sqlite3_close(dest);
    return status_of(rc);
}

uint64_t store_generation(struct store *st)
{
    sqlite3_stmt *s = stmt_get(st, S_DATA_VERSION);
    uint64_t other = 0;
    if (s && sqlite3_step(s) == SQLITE_ROW)
        other = (uint64_t)sqlite3_column_int64(s, 0);
    if (s)
        finish(s);
    /* data_version moves with other connections' commits, total_changes with
     * this connection's own writes: together, any change anywhere. */
    return (other << 32) ^ (uint64_t)sqlite3_total_changes64(st->db);
}
