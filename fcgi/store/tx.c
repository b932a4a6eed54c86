/* store/tx.c: a connection's life after it opened: transactions (one
 * writer at a time in this process), read snapshots, audit rows handed on
 * at commit, the generation, the online backup and closing. */
#include "store/store_int.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void store_close(struct store *st)
{
    if (!st)
        return;
    while (st->tx_depth)
        store_rollback(st); /* also gives the writers' turn back */
    for (int i = 0; i < S_COUNT; i++) {
        if (st->cur[i].st && st->pg)
            stmt_finish(&st->cur[i]); /* frees its result and copies */
        sqlite3_finalize(st->cur[i].lite);
        buf_release(&st->cur[i].blob);
    }
    sqlite3_close(st->db);
    pg_close(st);
    buf_release(&st->audit_pending);
    for (size_t i = 0; i < st->expired.n; i++) /* time.c's cache, without a call into it */
        free(st->expired.ids[i]);
    free(st->expired.ids);
    free(st->expired.space);
    free(st->node);
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
void store_audit_flush(struct store *st)
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

int store_begin(struct store *st)
{
    int rc;
    if (st->tx_depth == 0 && (rc = store_turn_take(st)))
        return rc;
    /* On PostgreSQL an advisory lock makes writers take turns across every
     * node, as BEGIN IMMEDIATE does across SQLite's processes: each write's
     * reads and checks see what the previous writer committed. */
    rc = store_db_exec(st, st->tx_depth ? "SAVEPOINT nested"
                           : st->pg     ? "BEGIN; SELECT pg_advisory_xact_lock(" PG_WRITER_LOCK ")"
                                        : "BEGIN IMMEDIATE");
    if (rc == STORE_OK) {
        if (st->tx_depth == 0)
            buf_reset(&st->audit_pending);
        if (st->tx_depth < 8)
            st->audit_mark[st->tx_depth] = st->audit_pending.len;
        st->tx_depth++;
    } else if (st->tx_depth == 0) {
        /* PostgreSQL: BEGIN ran and the lock was not granted in time (or the
         * session broke): end that transaction, or every later statement of
         * this connection would fail as "in an aborted transaction". */
        if (st->pg)
            store_ignore(store_db_exec(st, "ROLLBACK"));
        store_turn_give();
    }
    return rc;
}

int store_commit(struct store *st)
{
    int rc;
    if (st->tx_depth == 0)
        return STORE_ERROR;
    /* The BM25F statistics follow the entries this transaction changed. */
    if (st->tx_depth == 1 && (rc = search_index_sync(st))) {
        store_rollback(st);
        return rc;
    }
    rc = store_db_exec(st, st->tx_depth > 1 ? "RELEASE nested" : "COMMIT");
    if (rc == STORE_OK) {
        if (--st->tx_depth == 0) {
            store_turn_give();
            store_audit_flush(st);
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
        store_db_exec(st, "ROLLBACK TO nested; RELEASE nested");
    else
        store_db_exec(st, "ROLLBACK");
    if (--st->tx_depth < 8)
        buf_truncate(&st->audit_pending, st->audit_mark[st->tx_depth]);
    if (st->tx_depth == 0)
        store_turn_give();
}

void store_read_begin(struct store *st)
{
    struct cursor *s;
    if (st->read_depth++ || st->tx_depth)
        return; /* already inside one snapshot */
    if (st->pg) {
        /* sent in the round trip of the section's first statement (pg.c) */
        st->read_open = st->read_begin_pending = 1;
        return;
    }
    s = stmt_get(st, S_READ_BEGIN);
    st->read_open = s && stmt_step_done(s) == STORE_OK;
}

int store_in_transaction(const struct store *st)
{
    return st->tx_depth > 0;
}

void store_read_end(struct store *st)
{
    struct cursor *s;
    if (st->read_depth == 0 || --st->read_depth || !st->read_open)
        return;
    st->read_open = 0;
    if (st->read_begin_pending) {
        st->read_begin_pending = 0; /* no statement ran: no transaction to end */
        return;
    }
    s = stmt_get(st, S_READ_END);
    if (!s || stmt_step_done(s) != STORE_OK)
        store_db_exec(st, "ROLLBACK");
}

/* End a write: commit when rc is STORE_OK, else roll back; returns the final status. */
int store_tx_end(struct store *st, int rc)
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
    if (st->pg) {
        snprintf(st->pg_error, sizeof st->pg_error,
                 "on PostgreSQL, back up with pg_dump (docs/operations.md)");
        return STORE_ERROR;
    }
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
    return store_status_of(rc);
}

int store_data_version(struct store *st, uint64_t *v)
{
    struct cursor *s = stmt_get(st, S_DATA_VERSION);
    int rc;
    *v = 0;
    if (!s)
        return STORE_ERROR;
    rc = stmt_step(s);
    if (rc == STEP_ROW)
        *v = (uint64_t)stmt_col_int64(s, 0);
    return stmt_row_end(s, rc) == STORE_OK ? STORE_OK : STORE_ERROR;
}

/* The cache generation: the generation table's count (on PostgreSQL the sum
 * of its 8 slots), which the generation triggers raise in every writer's
 * transaction, on any node or process, when a table an answer is read from
 * changes; not the LLM ledger, the audit log or a token's last use, which
 * would empty every space's cache for nothing (docs/search.md "The answer
 * cache"). */
void store_generation_forget(struct store *st)
{
    st->generation_fresh = 0;
}

int store_generation(struct store *st, uint64_t *gen)
{
    struct cursor *s;
    int rc;
    *gen = 0;
    if (st->pg && st->generation_fresh) {
        /* read with this request's token lookup: no second round trip */
        st->generation_fresh = 0;
        *gen = st->generation;
        return STORE_OK;
    }
    if (!(s = stmt_get(st, S_GENERATION)))
        return STORE_ERROR;
    rc = stmt_step(s);
    if (rc == STEP_ROW)
        *gen = (uint64_t)stmt_col_int64(s, 0);
    return stmt_row_end(s, rc) == STORE_OK && rc == STEP_ROW ? STORE_OK : STORE_ERROR;
}
