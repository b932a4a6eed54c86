/* store/open.c: opening a connection: its pragmas, the FTS5 tokenizer
 * "knowhub", the busy handler, and the migrations of an older database; or
 * a PostgreSQL connection and its schema (pg.c). */
#include "store/store_int.h"
#include "base/metrics.h"
#include "domain/tokenize.h"

#include <stdint.h>
#include <stdio.h>

void store_global_init(void)
{
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
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
    /* A query's strings are search terms already (match.c quotes each one):
     * stemming them again would change some ("convers" -> "conver"), and
     * PostgreSQL takes them as they are. */
    if (flags & FTS5_TOKENIZE_QUERY)
        return n > 0 ? token(fts_ctx, 0, text, n, 0, n) : SQLITE_OK;
    return tokenize_terms(text, n > 0 ? (size_t)n : 0, fts_emit, &c);
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

/* The search indexes made by this tokenizer (search_index.c), in a write
 * transaction of their own. */
static int search_index_ensure(struct store *st)
{
    int rc = store_begin(st);
    return rc ? rc : store_tx_end(st, search_index_refresh(st));
}

int store_open(const char *path, struct store **out)
{
    return store_open_upgrade(path, store_is_postgres(path), NULL, NULL, out);
}

/* Connect to the PostgreSQL database conninfo names and bring its schema to
 * the latest (backups of PostgreSQL are the operator's: pg_dump). */
static int open_postgres(const char *conninfo, struct store_upgrade *up, struct store **out)
{
    struct store *st = xcalloc(1, sizeof *st);
    int rc;
    buf_init(&st->audit_pending, 1024 * 1024);
    if ((rc = pg_connect(st, conninfo)) || (rc = pg_migrate(st, &up->from_version)) ||
        (rc = search_index_ensure(st))) {
        if (st->pg_error[0])
            fprintf(stderr, "knowhub: PostgreSQL: %s\n", st->pg_error);
        store_close(st);
        return rc;
    }
    up->to_version = store_schema_latest();
    *out = st;
    return STORE_OK;
}

int store_open_upgrade(const char *path, int postgres, const char *backup_dir,
                       struct store_upgrade *up, struct store **out)
{
    if (postgres) {
        struct store_upgrade local;
        int rc;
        *out = NULL;
        if (up)
            return open_postgres(path, up, out);
        store_upgrade_init(&local);
        rc = open_postgres(path, &local, out);
        store_upgrade_release(&local);
        return rc;
    }
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
        rc = store_status_of(rc);
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
    if ((rc = store_db_exec(st, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                                "PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY;"
                                "PRAGMA mmap_size = 1073741824;")))
        goto fail;
    if ((rc = register_tokenizer(st->db)))
        goto fail;
    /* Outside the migration's write transaction: SQLite's backup cannot
     * read a source connection that holds one. */
    if (found > 0 && found < store_schema_latest() &&
        store_backup_before_migrating(st, path, backup_dir, found, &up->backup, &up->why)) {
        rc = STORE_BACKUP_FAILED;
        goto fail;
    }
    if ((rc = store_schema_migrate(st, &up->from_version)) || (rc = search_index_ensure(st)))
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
