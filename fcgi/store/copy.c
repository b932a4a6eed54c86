/* store/copy.c: moving an SQLite database into an empty PostgreSQL one
 * (knowhub migrate-to), and the proof that nothing changed on the way.
 *
 * Every table is streamed from SQLite in primary-key order and inserted in
 * batches of multi-row INSERTs, all inside one transaction on the target, so
 * memory stays bounded whatever the size and a failure leaves the target as
 * it was. Each row is hashed as it is read (BLAKE2b over every column, NULL
 * distinct from '', blobs as bytes); before the commit every table is read
 * back from PostgreSQL in the same order and hashed again: a row count or a
 * digest that differs rolls everything back. */
#include "store/store_int.h"

#include <libpq-fe.h>
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A batch is sent when it holds this many rows or bytes, whichever comes
 * first: few round trips, and a table of large documents still never holds
 * more than a few MiB in memory. PostgreSQL takes at most 65,535 parameters
 * per statement. */
#define BATCH_ROWS 1000
#define BATCH_BYTES (4u << 20)
#define PG_MAX_PARAMS 65535
/* A progress report every this many rows of a table. */
#define PROGRESS_EVERY 10000
/* The digest printed and compared per table (BLAKE2b, 128 bits). */
#define DIGEST_BYTES 16
/* Rows of the search-index pass fetched at a time. */
#define TERMS_FETCH "FETCH 1000 FROM copy_active"

/* A table to copy: its columns in copy order, one kind letter per column
 * (t text, i integer, b blob: how a value is sent and read back), and its
 * primary key (the order rows are hashed in on both sides). */
struct copy_table {
    const char *name, *columns, *kinds, *order;
};

/* Parents before children (tokens name a space, logins a token); every
 * column of schema 8 (migrate.c), listed rather than `*` so a column added
 * later without being added here cannot pass unnoticed on one side. */
static const struct copy_table tables[] = {
    {"spaces", "name, created_at", "tt", "name"},
    {"tokens", "id, hash, space, role, label, created_at, last_used_at, revoked_at", "tbtttttt",
     "id"},
    {"knowledge",
     "seq, id, space, category, path, title, description, tags, types, scenario, content,"
     " always_apply, source, urls, agent_id, message_id, source_ts, score, helpful, harmful,"
     " irrelevant, unused, neutral, status, merged_into, version, created_at, updated_at, meta,"
     " document",
     "itttttttittittttt"
     "iiiiii"
     "ttitttt",
     "seq"},
    {"knowledge_cases",
     "seq, space, knowledge_id, kind, case_id, scenario, result, agent_id, trace_id, goal_id,"
     " created_at",
     "itttttttttt", "seq"},
    {"knowledge_revisions", "space, knowledge_id, version, document, actor, reason, created_at",
     "ttitttt", "knowledge_id, version"},
    {"knowledge_feedback", "seq, space, knowledge_id, feedback, actor, status, created_at",
     "itttttt", "seq"},
    {"audit", "seq, ts, space, actor, action, target", "ittttt", "seq"},
    {"traces", "space, trace_id, task, created_at", "tttt", "space, trace_id"},
    {"knowledge_log",
     "id, space, trace_id, knowledge_id, goal_id, injected_at_sequence, injected_at, task,"
     " content, eval_status, eval_reason, evaluated_at, evaluated_at_trigger",
     "ittttittttttt", "id"},
    {"trace_rollups", "space, trace_id, knowledge_id, status, created_at", "ttttt",
     "space, trace_id, knowledge_id, status"},
    {"logins", "hash, token_id, csrf, created_at, expires_at", "btttt", "hash"},
    {"sessions", "space, id, title, document, created_at, updated_at", "tttttt", "space, id"},
    {"llm_calls",
     "id, space, purpose, model, prompt_tokens, completion_tokens, latency_ms, outcome,"
     " created_at",
     "itttiiitt", "id"},
    {"jobs",
     "id, space, kind, status, progress, total, params, result, error, actor, created_at,"
     " updated_at, node, lease_until",
     "ttttiitttttttt", "id"},
    {"vectors", "knowledge_seq, space, model, version, digest, dim, vec, stamp, updated_at",
     "ittitibit", "knowledge_seq"},
    {"embed_queue", "knowledge_seq", "i", "knowledge_seq"},
    {"idempotency_keys", "space, key, digest, knowledge_id, created_at", "ttttt", "space, key"},
    /* 16: the review queue */
    {"review_policies", "space, policy, actor, updated_at", "tttt", "space"},
    {"token_reviews", "token_id, policy", "tt", "token_id"},
    /* 18: promotion on evidence */
    {"review_promotion", "space, promote_after, actor, updated_at", "titt", "space"},
    {"proposals",
     "id, space, kind, state, write_path, knowledge_id, base_version, category, path, document,"
     " base_document, token_id, actor, agent_id, trace_id, source, reasons, created_at, decision,"
     " decision_reason, decided_by, decided_at, result_id",
     "tttttti"
     "tttttttttttttttt",
     "id"},
    /* 19: held slim merges */
    {"proposal_members", "space, proposal_id, knowledge_id, base_version", "ttti",
     "space, proposal_id, knowledge_id"},
    /* 20: typed links */
    {"knowledge_links", "space, from_id, to_id, type, actor, reason, created_at", "ttttttt",
     "space, from_id, to_id, type"},
    /* 21: evidence ageing */
    {"evidence_policy", "space, half_life_days, actor, updated_at", "titt", "space"},
    /* 22: expiry, review-by dates, pins */
    {"knowledge_time", "space, knowledge_id, expires_at, review_after, pinned", "tttti",
     "space, knowledge_id"},
};
#define TABLE_COUNT (sizeof tables / sizeof tables[0])

/* The identity columns (SQLite rowids) whose sequences must continue past
 * the copied keys, else the next insert on PostgreSQL collides. */
static const char *const identities[][2] = {
    {"knowledge", "seq"}, {"knowledge_cases", "seq"}, {"knowledge_feedback", "seq"},
    {"audit", "seq"},     {"knowledge_log", "id"},    {"llm_calls", "id"},
};

/* Checks of pg_sql.c that a faulty copy fails (the sequences, the stamp,
 * the search index); the others judge the data itself, which the source
 * had already: they are reported, as `knowhub check` would. */
static int copy_check(const char *name)
{
    static const char *const mine[] = {"knowledge_terms",
                                       "knowledge_terms_stale",
                                       "knowledge_terms_fields",
                                       "vector_stamp",
                                       "sequences",
                                       "generation",
                                       "schema_version"};
    for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++)
        if (strcmp(name, mine[i]) == 0)
            return 1;
    return 0;
}

/* Keep PostgreSQL's message (or ours) as the connection's last error. */
static int fail(struct store *to, const char *msg)
{
    pg_set_error(to, msg && *msg ? msg : NULL);
    return PQstatus(to->pg) == CONNECTION_OK ? STORE_ERROR : STORE_UNAVAILABLE;
}

/* The SQLite side failed: its message, as the copy's error. */
static void source_error(struct store *to, struct store *from)
{
    char message[sizeof to->pg_error];
    snprintf(message, sizeof message, "the source: %s", sqlite3_errmsg(from->db));
    pg_set_error(to, message);
}

/* One value into the digest: a NULL is one 0 byte; anything else a 1, its
 * length (8 bytes) and its bytes, so '' differs from NULL and no two rows
 * run together. */
static void hash_value(crypto_generichash_state *h, const void *p, size_t n, int is_null)
{
    unsigned char head[9] = {0};
    if (is_null) {
        crypto_generichash_update(h, head, 1);
        return;
    }
    head[0] = 1;
    for (int i = 0; i < 8; i++)
        head[1 + i] = (unsigned char)((uint64_t)n >> (8 * i));
    crypto_generichash_update(h, head, sizeof head);
    if (n)
        crypto_generichash_update(h, p, n);
}

/* ---- the copy of one table ---- */

struct batch {
    const struct copy_table *t;
    int ncols, max_rows, rows;
    int prepared;    /* the full-batch INSERT is prepared on this session */
    struct buf data; /* the values of the batch, each NUL-ended */
    size_t *off;     /* offset of each value in data; SIZE_MAX for NULL */
    int *len;        /* its length */
    const char **values;
    int *formats;
    struct buf sql;
};

/* INSERT INTO t(columns) VALUES ($1::bigint, $2::text, ...), ... for rows
 * rows: each parameter cast to its column's type (with several rows
 * PostgreSQL would otherwise take them all as text). */
static void insert_sql(struct batch *b, int rows)
{
    static const char *const casts[] = {['t'] = "text", ['i'] = "bigint", ['b'] = "bytea"};
    int p = 1;
    buf_reset(&b->sql);
    buf_addf(&b->sql, "INSERT INTO %s(%s) VALUES ", b->t->name, b->t->columns);
    for (int r = 0; r < rows; r++) {
        buf_adds(&b->sql, r ? ",(" : "(");
        for (int c = 0; c < b->ncols; c++, p++)
            buf_addf(&b->sql, "%s$%d::%s", c ? "," : "", p, casts[(unsigned char)b->t->kinds[c]]);
        buf_addch(&b->sql, ')');
    }
}

/* Send the rows gathered: the prepared statement when the batch is full,
 * else its own text (the last, shorter batch of a table). */
static int batch_flush(struct store *to, struct batch *b)
{
    int n = b->rows * b->ncols, rc = STORE_OK;
    char name[48];
    PGresult *res;
    if (b->rows == 0)
        return STORE_OK;
    for (int i = 0; i < n; i++)
        b->values[i] = b->off[i] == SIZE_MAX ? NULL : b->data.data + b->off[i];
    snprintf(name, sizeof name, "copy_%s", b->t->name);
    if (b->rows == b->max_rows && !b->prepared) {
        insert_sql(b, b->rows);
        if (buf_failed(&b->sql))
            return fail(to, "the INSERT statement is too long");
        res = PQprepare(to->pg, name, b->sql.data, 0, NULL);
        if (PQresultStatus(res) != PGRES_COMMAND_OK)
            rc = fail(to, PQresultErrorMessage(res));
        PQclear(res);
        if (rc)
            return rc;
        b->prepared = 1;
    }
    if (b->rows == b->max_rows) {
        res = PQexecPrepared(to->pg, name, n, b->values, b->len, b->formats, 0);
    } else {
        insert_sql(b, b->rows);
        if (buf_failed(&b->sql))
            return fail(to, "the INSERT statement is too long");
        res = PQexecParams(to->pg, b->sql.data, n, NULL, b->values, b->len, b->formats, 0);
    }
    if (PQresultStatus(res) != PGRES_COMMAND_OK)
        rc = fail(to, PQresultErrorMessage(res));
    PQclear(res);
    b->rows = 0;
    buf_reset(&b->data);
    return rc;
}

static void batch_init(struct batch *b, const struct copy_table *t)
{
    int cells;
    memset(b, 0, sizeof *b);
    b->t = t;
    b->ncols = (int)strlen(t->kinds);
    b->max_rows = PG_MAX_PARAMS / b->ncols < BATCH_ROWS ? PG_MAX_PARAMS / b->ncols : BATCH_ROWS;
    cells = b->max_rows * b->ncols;
    /* One value may be as large as SQLite allows (1 GB): the batch that
     * holds it goes out alone, right after it. */
    buf_init(&b->data, (size_t)1 << 30);
    buf_init(&b->sql, (size_t)1 << 24);
    b->off = xcalloc((size_t)cells, sizeof *b->off);
    b->len = xcalloc((size_t)cells, sizeof *b->len);
    b->values = xcalloc((size_t)cells, sizeof *b->values);
    b->formats = xcalloc((size_t)cells, sizeof *b->formats);
    /* blobs go as binary bytea, everything else as text */
    for (int i = 0; i < cells; i++)
        b->formats[i] = t->kinds[i % b->ncols] == 'b';
}

static void batch_release(struct batch *b)
{
    buf_release(&b->data);
    buf_release(&b->sql);
    free(b->off);
    free(b->len);
    free(b->values);
    free(b->formats);
}

/* Stream table t from SQLite into PostgreSQL; its rows and the digest of
 * what was read into *rows and digest. */
static int copy_table(struct store *from, struct store *to, const struct copy_table *t,
                      store_copy_progress progress, void *ctx, long long *rows,
                      unsigned char digest[DIGEST_BYTES])
{
    crypto_generichash_state h;
    struct batch b;
    struct buf sql;
    sqlite3_stmt *s = NULL;
    int rc = STORE_OK, step_rc;
    *rows = 0;
    buf_init(&sql, 4096);
    buf_addf(&sql, "SELECT %s FROM %s ORDER BY %s", t->columns, t->name, t->order);
    if (sqlite3_prepare_v2(from->db, sql.data, -1, &s, NULL) != SQLITE_OK) {
        source_error(to, from);
        buf_release(&sql);
        return STORE_ERROR;
    }
    buf_release(&sql);
    batch_init(&b, t);
    crypto_generichash_init(&h, NULL, 0, DIGEST_BYTES);
    while ((step_rc = sqlite3_step(s)) == SQLITE_ROW) {
        for (int c = 0; c < b.ncols; c++) {
            int cell = b.rows * b.ncols + c;
            const void *p;
            size_t n;
            if (sqlite3_column_type(s, c) == SQLITE_NULL) {
                hash_value(&h, NULL, 0, 1);
                b.off[cell] = SIZE_MAX;
                b.len[cell] = 0;
                continue;
            }
            /* column_text turns a number into its decimal text, which is
             * what PostgreSQL answers for it too */
            p = t->kinds[c] == 'b' ? sqlite3_column_blob(s, c)
                                   : (const void *)sqlite3_column_text(s, c);
            n = (size_t)sqlite3_column_bytes(s, c);
            hash_value(&h, p, n, 0);
            b.off[cell] = b.data.len;
            b.len[cell] = (int)n;
            if (buf_add(&b.data, p ? p : "", n) || buf_addch(&b.data, '\0')) {
                rc = fail(to, "a row is too large to copy");
                goto out;
            }
        }
        b.rows++;
        ++*rows;
        if ((b.rows == b.max_rows || b.data.len >= BATCH_BYTES) && (rc = batch_flush(to, &b)))
            goto out;
        if (progress && *rows % PROGRESS_EVERY == 0)
            progress(ctx, t->name, *rows, 0);
    }
    if (step_rc != SQLITE_DONE) {
        source_error(to, from);
        rc = store_status_of(step_rc);
        goto out;
    }
    rc = batch_flush(to, &b);
out:
    crypto_generichash_final(&h, digest, DIGEST_BYTES);
    if (b.prepared) {
        char dealloc[64];
        snprintf(dealloc, sizeof dealloc, "DEALLOCATE copy_%s", t->name);
        if (rc == STORE_OK)
            rc = pg_exec(to, dealloc);
    }
    batch_release(&b);
    sqlite3_finalize(s);
    if (rc == STORE_OK && progress)
        progress(ctx, t->name, *rows, 1);
    return rc;
}

/* ---- reading the target back ---- */

/* The primary key of t for PostgreSQL's ORDER BY: its text columns in byte
 * order (COLLATE "C"), as SQLite's BINARY sorts them, whatever collation
 * the schema or the database gives them; else the rows would be hashed in
 * another order and differ. */
static void pg_order(struct buf *sql, const struct copy_table *t)
{
    const char *k = t->order;
    while (*k) {
        size_t n = strcspn(k, ", ");
        const char *c = t->columns;
        int kind = 't';
        /* the key column's kind: its place in the column list */
        for (int i = 0; *c; i++) {
            size_t m = strcspn(c, ",");
            while (*c == ' ')
                c++, m--;
            if (m == n && strncmp(c, k, n) == 0) {
                kind = t->kinds[i];
                break;
            }
            c += m;
            c += *c == ',';
        }
        buf_add(sql, k, n);
        if (kind == 't')
            buf_adds(sql, " COLLATE \"C\"");
        k += n;
        while (*k == ',' || *k == ' ')
            k++;
        if (*k)
            buf_adds(sql, ", ");
    }
}

/* Read table t back from PostgreSQL in the same order, one row at a time
 * (single-row mode: no whole table in memory), hashed as copy_table did. */
static int digest_target(struct store *to, const struct copy_table *t, long long *rows,
                         unsigned char digest[DIGEST_BYTES])
{
    crypto_generichash_state h;
    struct buf sql, blob;
    PGresult *res;
    int rc = STORE_OK, ncols = (int)strlen(t->kinds);
    *rows = 0;
    buf_init(&sql, 4096);
    buf_init(&blob, (size_t)1 << 30);
    buf_addf(&sql, "SELECT %s FROM %s ORDER BY ", t->columns, t->name);
    pg_order(&sql, t);
    crypto_generichash_init(&h, NULL, 0, DIGEST_BYTES);
    if (!PQsendQuery(to->pg, sql.data) || !PQsetSingleRowMode(to->pg))
        rc = fail(to, PQerrorMessage(to->pg));
    /* every result is read, even after an error, to leave the session idle */
    while ((res = PQgetResult(to->pg))) {
        ExecStatusType status = PQresultStatus(res);
        if (status == PGRES_SINGLE_TUPLE && rc == STORE_OK) {
            for (int c = 0; c < ncols; c++) {
                if (PQgetisnull(res, 0, c)) {
                    hash_value(&h, NULL, 0, 1);
                } else if (t->kinds[c] == 'b') {
                    (void)pg_unhex(&blob, PQgetvalue(res, 0, c)); /* not bytea: hashed as empty */
                    hash_value(&h, blob.data, blob.len, 0);
                } else {
                    hash_value(&h, PQgetvalue(res, 0, c), (size_t)PQgetlength(res, 0, c), 0);
                }
            }
            ++*rows;
        } else if (status != PGRES_SINGLE_TUPLE && status != PGRES_TUPLES_OK && rc == STORE_OK) {
            rc = fail(to, PQresultErrorMessage(res));
        }
        PQclear(res);
    }
    crypto_generichash_final(&h, digest, DIGEST_BYTES);
    buf_release(&sql);
    buf_release(&blob);
    return rc;
}

/* ---- after the rows: sequences, the search index, the checks ---- */

static int set_sequences(struct store *to)
{
    char sql[256];
    int rc;
    for (size_t i = 0; i < sizeof identities / sizeof identities[0]; i++) {
        /* the next value handed out is max + 1 (1 for an empty table) */
        snprintf(sql, sizeof sql,
                 "SELECT setval(pg_get_serial_sequence('%s', '%s'), coalesce(max(%s), 0) + 1,"
                 " false) FROM %s",
                 identities[i][0], identities[i][1], identities[i][1], identities[i][0]);
        if ((rc = pg_exec(to, sql)))
            return rc;
    }
    /* the in-memory vector indexes load what changed after the stamp they
     * hold: new stamps must come after every copied one */
    return pg_exec(to, "SELECT setval('vector_stamp', coalesce(max(stamp), 0) + 1, false)"
                       " FROM vectors");
}

/* The search terms of every active entry (SQLite's FTS5 triggers have no
 * counterpart there: the C tokenizer makes them), a cursor's page at a time. */
static int refresh_terms(struct store *to, store_copy_progress progress, void *ctx)
{
    long long done = 0;
    int rc = pg_exec(to, "DECLARE copy_active NO SCROLL CURSOR FOR"
                         " SELECT id FROM knowledge WHERE status = 'active' ORDER BY seq");
    while (rc == STORE_OK) {
        PGresult *res = PQexec(to->pg, TERMS_FETCH);
        int n;
        if (PQresultStatus(res) != PGRES_TUPLES_OK) {
            rc = fail(to, PQresultErrorMessage(res));
            PQclear(res);
            break;
        }
        n = PQntuples(res);
        for (int i = 0; i < n && rc == STORE_OK; i++) {
            rc = store_terms_refresh(to, PQgetvalue(res, i, 0));
            if (progress && ++done % PROGRESS_EVERY == 0)
                progress(ctx, "knowledge_terms", done, 0);
        }
        PQclear(res);
        if (n == 0)
            break;
    }
    if (rc == STORE_OK)
        rc = pg_exec(to, "CLOSE copy_active");
    if (rc == STORE_OK && progress)
        progress(ctx, "knowledge_terms", done, 1);
    return rc;
}

/* pg_sql.c's checks on the copy; the number of failed copy checks. */
static int run_checks(struct store *to, struct buf *report)
{
    int failed = 0;
    for (const struct pg_check *c = pg_checks; c->name; c++) {
        long long n = pg_query_int(to, c->sql);
        if (n == 0)
            continue;
        if (n < 0)
            buf_addf(report, "check %s: cannot run: %s\n", c->name, store_errmsg(to));
        else
            buf_addf(report, "check %s: %lld problems%s\n", c->name, n,
                     copy_check(c->name) ? "" : " (in the source too: knowhub check)");
        if (n < 0 || copy_check(c->name))
            failed++;
        if (n < 0)
            break; /* the transaction is aborted: nothing more runs */
    }
    if (!failed)
        buf_adds(report, "checks: ok\n");
    return failed;
}

/* Turn the tables' own triggers (not the foreign keys') off for the copy, or
 * back on. They would only redo what the copy brings whole (embed_queue) or
 * mark caches stale, and in one long transaction that mark is the problem:
 * each statement's update of the same generation row leaves a version no
 * one can prune until the commit, and the next update walks them all (the
 * copy of 50,000 entries slowed from seconds to minutes). Off is ALTER
 * TABLE, the tables' owner's right: when the role may not, they stay on
 * (a savepoint keeps the transaction) and the copy is only slower. 1 when
 * they are off. */
static int triggers_off(struct store *to, struct buf *report)
{
    char sql[128];
    int rc = pg_exec(to, "SAVEPOINT copy_triggers");
    for (size_t i = 0; i <= TABLE_COUNT && rc == STORE_OK; i++) {
        snprintf(sql, sizeof sql, "ALTER TABLE %s DISABLE TRIGGER USER",
                 i < TABLE_COUNT ? tables[i].name : "knowledge_terms");
        rc = pg_exec(to, sql);
    }
    if (rc == STORE_OK)
        return pg_exec(to, "RELEASE copy_triggers") == STORE_OK;
    buf_addf(report, "triggers stay on during the copy (slower): %s\n", store_errmsg(to));
    (void)pg_exec(to, "ROLLBACK TO copy_triggers; RELEASE copy_triggers");
    return 0;
}

static int triggers_on(struct store *to)
{
    char sql[128];
    int rc = STORE_OK;
    for (size_t i = 0; i <= TABLE_COUNT && rc == STORE_OK; i++) {
        snprintf(sql, sizeof sql, "ALTER TABLE %s ENABLE TRIGGER USER",
                 i < TABLE_COUNT ? tables[i].name : "knowledge_terms");
        rc = pg_exec(to, sql);
    }
    /* what the generation triggers would have done, once: any answer a
     * process cached from this database before is stale */
    return rc ? rc : pg_exec(to, "UPDATE generation SET n = n + 1");
}

/* STORE_CONFLICT, naming the table, when the target holds any row of a
 * table the copy fills (a token, an entry, or anything else). */
static int target_empty(struct store *to, struct buf *report)
{
    char sql[128];
    for (size_t i = 0; i < TABLE_COUNT; i++) {
        long long any;
        snprintf(sql, sizeof sql, "SELECT EXISTS(SELECT 1 FROM %s)::int", tables[i].name);
        if ((any = pg_query_int(to, sql)) < 0)
            return STORE_ERROR;
        if (any) {
            buf_addf(report,
                     "the target database is not empty (table %s has rows):"
                     " nothing was copied\n",
                     tables[i].name);
            snprintf(to->pg_error, sizeof to->pg_error, "the target database is not empty");
            return STORE_CONFLICT;
        }
    }
    return STORE_OK;
}

int store_copy_to(struct store *from, struct store *to, store_copy_progress progress, void *ctx,
                  struct buf *report)
{
    unsigned char source[TABLE_COUNT][DIGEST_BYTES];
    long long source_rows[TABLE_COUNT];
    int rc, differ = 0, off;
    if (!from->db || !to->pg) {
        buf_adds(report, "the source must be SQLite and the target PostgreSQL\n");
        return STORE_ERROR;
    }
    if ((rc = store_begin(to)))
        return rc;
    /* the copy is one long transaction: the server's timeouts are for requests */
    rc = pg_exec(to, "SET LOCAL statement_timeout = 0;"
                     " SET LOCAL idle_in_transaction_session_timeout = 0");
    if (rc == STORE_OK)
        rc = target_empty(to, report);
    if (rc) {
        store_rollback(to);
        return rc;
    }
    off = triggers_off(to, report);
    /* one snapshot of the source: a consistent copy even if it is written to */
    store_read_begin(from);
    for (size_t i = 0; i < TABLE_COUNT && rc == STORE_OK; i++) {
        /* with the triggers on, the knowledge rows' insert trigger
         * queued every active entry: the queue is the source's, no more
         * and no less */
        if (strcmp(tables[i].name, "embed_queue") == 0 &&
            (rc = pg_exec(to, "DELETE FROM embed_queue")))
            break;
        rc = copy_table(from, to, &tables[i], progress, ctx, &source_rows[i], source[i]);
        if (rc) /* which table: PostgreSQL's message may not say (invalid UTF-8) */
            buf_addf(report, "%s: the copy failed (%lld rows read): %s\n", tables[i].name,
                     source_rows[i], store_errmsg(to));
    }
    store_read_end(from);
    if (rc == STORE_OK)
        rc = set_sequences(to);
    if (rc == STORE_OK)
        rc = refresh_terms(to, progress, ctx);
    if (rc == STORE_OK)
        rc = search_index_rebuild_stats(to);
    if (rc == STORE_OK && off)
        rc = triggers_on(to);
    for (size_t i = 0; i < TABLE_COUNT && rc == STORE_OK; i++) {
        unsigned char target[DIGEST_BYTES];
        char a[2 * DIGEST_BYTES + 1], b[2 * DIGEST_BYTES + 1];
        long long rows;
        int same;
        if ((rc = digest_target(to, &tables[i], &rows, target)))
            break;
        same = rows == source_rows[i] && memcmp(source[i], target, DIGEST_BYTES) == 0;
        sodium_bin2hex(a, sizeof a, source[i], DIGEST_BYTES);
        sodium_bin2hex(b, sizeof b, target, DIGEST_BYTES);
        if (rows == source_rows[i])
            buf_addf(report, "%s: %lld rows, checksum %s = %s %s\n", tables[i].name, rows, a, b,
                     same ? "ok" : "DIFFERS");
        else
            buf_addf(report, "%s: %lld rows != %lld rows, checksum %s = %s DIFFERS\n",
                     tables[i].name, source_rows[i], rows, a, b);
        differ += !same;
    }
    if (rc == STORE_OK && differ) {
        snprintf(to->pg_error, sizeof to->pg_error,
                 "%d table%s differ%s from the source: rolled back", differ, differ > 1 ? "s" : "",
                 differ > 1 ? "" : "s");
        rc = STORE_ERROR;
    }
    if (rc == STORE_OK && run_checks(to, report)) {
        snprintf(to->pg_error, sizeof to->pg_error, "the copy fails its checks: rolled back");
        rc = STORE_ERROR;
    }
    rc = store_tx_end(to, rc);
    /* Statistics for the copied tables at once, not at autovacuum's next
     * round: plans made on an empty table's figures are many times slower. */
    if (rc == STORE_OK)
        store_ignore(store_db_exec(to, "ANALYZE"));
    return rc;
}
