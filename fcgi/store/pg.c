/* store/pg.c: the PostgreSQL side of a connection (libpq): connecting and
 * reconnecting, preparing each statement once per session, running a cursor
 * with its parameters and reading its result, SQLSTATEs as store statuses,
 * and the schema of an empty database. The store files above it do not know
 * which backend they run on: they bind, step and read cursors (stmt.c). */
#include "store/store_int.h"

#include <libpq-fe.h>
#include <sodium.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int store_is_postgres(const char *where)
{
    return where && (strncmp(where, "postgresql://", 13) == 0 ||
                     strncmp(where, "postgres://", 11) == 0 || strchr(where, '=') != NULL);
}

const char *store_backend(const struct store *st)
{
    return st->pg ? "postgresql" : "sqlite";
}

const char *store_identity(struct store *st)
{
    static atomic_ulong serial;
    const char *file;
    if (st->pg)
        return st->conninfo ? st->conninfo : "";
    file = sqlite3_db_filename(st->db, "main");
    if (file && file[0])
        return file;
    /* a database in memory is its connection's alone, and never the same twice */
    if (!st->memory_id[0])
        snprintf(st->memory_id, sizeof st->memory_id, ":memory:%lu", atomic_fetch_add(&serial, 1));
    return st->memory_id;
}

unsigned long long store_round_trips(const struct store *st)
{
    return st->round_trips;
}

void store_pg_redacted(const char *where, struct buf *out)
{
    /* libpq's own parser: a hand-made one would miss a form it accepts. */
    PQconninfoOption *opts = PQconninfoParse(where, NULL);
    int first = 1;
    if (!opts) {
        buf_adds(out, "(not a valid connection string)");
        return;
    }
    for (PQconninfoOption *o = opts; o->keyword; o++) {
        if (!o->val)
            continue;
        buf_addf(out, "%s%s=", first ? "" : " ", o->keyword);
        first = 0;
        if (strcmp(o->keyword, "password") == 0) {
            buf_adds(out, "***");
        } else if (*o->val && !strpbrk(o->val, " \t\r\n'\\")) {
            buf_adds(out, o->val);
        } else {
            buf_addch(out, '\'');
            for (const char *c = o->val; *c; c++) {
                if (*c == '\'' || *c == '\\')
                    buf_addch(out, '\\');
                buf_addch(out, *c);
            }
            buf_addch(out, '\'');
        }
    }
    PQconninfoFree(opts);
}

void store_libpq_version(struct buf *out)
{
    int v = PQlibVersion();
    /* 10 and later: major * 10000 + minor */
    buf_addf(out, "%d.%d", v / 10000, v % 10000);
}

void pg_set_error(struct store *st, const char *msg)
{
    size_t n;
    utf8_copy(st->pg_error, sizeof st->pg_error, msg ? msg : "unknown error");
    n = strlen(st->pg_error);
    while (n && (st->pg_error[n - 1] == '\n' || st->pg_error[n - 1] == ' '))
        st->pg_error[--n] = '\0';
    for (char *p = st->pg_error; *p; p++)
        if (*p == '\n' || *p == '\t')
            *p = ' '; /* one log line */
}

/* The store status of a failed result (its SQLSTATE), or of a lost connection. */
static int status_of_result(struct store *st, const PGresult *res)
{
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    if (PQstatus(st->pg) != CONNECTION_OK || !state || strncmp(state, "08", 2) == 0 ||
        strcmp(state, "57P01") == 0 || strcmp(state, "57P02") == 0 || strcmp(state, "57P03") == 0)
        return STORE_UNAVAILABLE; /* connection lost, server shutting down or starting */
    if (strcmp(state, "25P03") == 0 || strcmp(state, "57P05") == 0)
        return STORE_UNAVAILABLE; /* the server ended an idle session: a new one serves on */
    if (strcmp(state, "23505") == 0)
        return STORE_CONFLICT; /* unique_violation; other constraints are bugs */
    if (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0 || strcmp(state, "55P03") == 0 ||
        strcmp(state, "57014") == 0)
        return STORE_BUSY; /* serialization, deadlock, lock or statement timeout */
    if (strcmp(state, "53100") == 0 || strcmp(state, "53200") == 0)
        return STORE_FULL; /* disk full, out of memory */
    if (strcmp(state, "25006") == 0 || strncmp(state, "42501", 5) == 0)
        return STORE_READONLY; /* a read-only server (a standby), no privilege */
    return STORE_ERROR;
}

/* Settings of every session: UTC and UTF-8; timeouts that turn a stuck lock
 * into STORE_BUSY instead of a hung worker; and the end of a session whose
 * client stopped. A node frozen (or cut off) inside a write transaction
 * holds the writers' lock: the server ends its session, and so the lock,
 * once it has been idle in the transaction 15 s (a write is idle there for
 * milliseconds; migrate-to turns it off for its one long transaction,
 * copy.c), or once the server's keepalives find the client's host gone
 * (about 25 s over TCP). The GIN indexes of the search terms keep their
 * pending lists (rows inserted but not yet merged into the index) at 64 kB
 * instead of 4 MB: every search scans the whole pending list of each index
 * it reads, which made a pass over a freshly written space several times
 * slower (docs/performance.md "Search on PostgreSQL"); the session that
 * passes the limit merges the list. A setting the URL's `options` (or
 * PGOPTIONS) gave is the operator's: its source is "client". One result,
 * the last's. */
static const char session_sql[] =
    "SET TIME ZONE 'UTC'; SET client_encoding = 'UTF8';"
    " SELECT count(set_config(v.name, v.value, false))::int FROM (VALUES"
    "  ('lock_timeout', '10s'), ('statement_timeout', '60s'),"
    "  ('idle_in_transaction_session_timeout', '15s'),"
    "  ('tcp_keepalives_idle', '10'), ('tcp_keepalives_interval', '5'),"
    "  ('tcp_keepalives_count', '3'), ('gin_pending_list_limit', '64')) AS v(name, value)"
    " JOIN pg_settings s ON s.name = v.name WHERE s.source <> 'client'";

static int session_setup(struct store *st)
{
    PGresult *res;
    st->round_trips++;
    res = PQexec(st->pg, session_sql);
    int rc = PQresultStatus(res) == PGRES_TUPLES_OK ? STORE_OK : status_of_result(st, res);
    if (rc)
        pg_set_error(st, PQerrorMessage(st->pg));
    PQclear(res);
    memset(st->pg_ready, 0, sizeof st->pg_ready);
    return rc;
}

/* Notices and warnings (a server shutting down says so on every session)
 * are not errors: the statuses say what failed. Kept out of the log. */
static void notice_ignore(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

int pg_connect(struct store *st, const char *conninfo)
{
    /* Earlier keywords are overridden by what the URL says: its own
     * connect_timeout, application_name or keepalives win over these
     * defaults. Keepalives (over TCP; a Unix socket has none) find a server
     * host that vanished in about 25 s instead of the system's 2 hours. */
    const char *keys[] = {
        "connect_timeout",     "application_name", "keepalives", "keepalives_idle",
        "keepalives_interval", "keepalives_count", "dbname",     NULL};
    const char *values[] = {"5", "knowhub", "1", "10", "5", "3", conninfo, NULL};
    free(st->conninfo);
    st->conninfo = xstrdup(conninfo);
    st->pg = PQconnectdbParams(keys, values, 1);
    if (!st->pg)
        return STORE_ERROR;
    PQsetNoticeProcessor(st->pg, notice_ignore, NULL);
    if (PQstatus(st->pg) != CONNECTION_OK) {
        pg_set_error(st, PQerrorMessage(st->pg));
        return STORE_UNAVAILABLE;
    }
    return session_setup(st);
}

void pg_close(struct store *st)
{
    if (st->pg)
        PQfinish(st->pg);
    st->pg = NULL;
    free(st->conninfo);
    st->conninfo = NULL;
}

/* Outside a transaction a lost session may be replaced: nothing of it is
 * lost. Inside one it may not (its writes are gone): the caller fails. */
static int may_reconnect(const struct store *st)
{
    return st->tx_depth == 0 && (!st->read_open || st->read_begin_pending);
}

/* Whether this process last found the database unreachable: the log says
 * so once when it goes and once when it is back, not once per connection
 * and statement. */
static atomic_int database_lost;

static void note_reachable(const struct store *st, int reachable)
{
    if (!reachable && !atomic_exchange(&database_lost, 1))
        fprintf(stderr,
                "knowhub: PostgreSQL unreachable (%s); answering 503, retry: true, until it is"
                " back\n",
                st->pg_error);
    else if (reachable && atomic_exchange(&database_lost, 0))
        fprintf(stderr, "knowhub: PostgreSQL reachable again\n");
}

/* A new session for a lost one; STORE_OK or STORE_UNAVAILABLE. */
static int reconnect(struct store *st)
{
    int rc;
    PQreset(st->pg);
    if (PQstatus(st->pg) != CONNECTION_OK) {
        pg_set_error(st, PQerrorMessage(st->pg));
        note_reachable(st, 0);
        return STORE_UNAVAILABLE;
    }
    rc = session_setup(st) ? STORE_UNAVAILABLE : STORE_OK;
    note_reachable(st, rc == STORE_OK);
    return rc;
}

/* A session to run on: the current one, or a new one when it was lost. */
static int alive(struct store *st)
{
    if (PQstatus(st->pg) == CONNECTION_OK)
        return STORE_OK;
    return may_reconnect(st) ? reconnect(st) : STORE_UNAVAILABLE;
}

/* Statements planned for their parameters each time (custom plans): the
 * search candidates, whose best plan depends on the words; and transaction
 * control, which is not worth a prepared statement. */
static int unprepared(enum stmt_id id)
{
    return id == S_MATCH || id == S_MATCH_HEAD || id == S_READ_BEGIN || id == S_READ_END;
}

static int prepare(struct store *st, enum stmt_id id, int may_retry)
{
    char name[16];
    PGresult *res;
    int rc;
    if (!pg_stmt_sql[id]) {
        pg_set_error(st, "no PostgreSQL text for this statement");
        return STORE_ERROR;
    }
    if (st->pg_ready[id] || unprepared(id))
        return STORE_OK;
    if ((rc = alive(st)))
        return rc;
    snprintf(name, sizeof name, "k%d", (int)id);
    st->round_trips++;
    res = PQprepare(st->pg, name, pg_stmt_sql[id], 0, NULL);
    rc = PQresultStatus(res) == PGRES_COMMAND_OK ? STORE_OK : status_of_result(st, res);
    if (rc)
        pg_set_error(st, PQresultErrorMessage(res));
    PQclear(res);
    if (rc == STORE_UNAVAILABLE && may_retry && may_reconnect(st) && reconnect(st) == STORE_OK)
        return prepare(st, id, 0); /* the session was lost while idle: once more */
    st->pg_ready[id] = rc == STORE_OK;
    return rc;
}

int pg_prepare(struct store *st, enum stmt_id id)
{
    return prepare(st, id, 1);
}

/* Queue statement s (a pipeline's part). */
static int send_statement(struct cursor *s)
{
    char name[16];
    if (unprepared(s->id))
        return PQsendQueryParams(s->st->pg, pg_stmt_sql[s->id], s->nparams, NULL, s->values,
                                 s->lengths, s->formats, 0);
    snprintf(name, sizeof name, "k%d", (int)s->id);
    return PQsendQueryPrepared(s->st->pg, name, s->nparams, s->values, s->lengths, s->formats, 0);
}

/* The results of one statement of a pipeline, up to its end (NULL): the
 * first kept, the rest cleared. */
static PGresult *pipeline_result(PGconn *c)
{
    PGresult *first = PQgetResult(c), *r;
    if (first)
        while ((r = PQgetResult(c)))
            PQclear(r);
    return first;
}

/* A read section's BEGIN and its first statement s in one round trip (a
 * pipeline: BEGIN, s, sync). Its result is s's, or when BEGIN failed
 * BEGIN's (s was not run). */
static PGresult *execute_with_begin(struct cursor *s)
{
    PGconn *c = s->st->pg;
    PGresult *begin = NULL, *res = NULL, *r;
    if (!PQenterPipelineMode(c))
        return NULL;
    if (PQsendQueryParams(c, pg_stmt_sql[S_READ_BEGIN], 0, NULL, NULL, NULL, NULL, 0) &&
        send_statement(s) && PQpipelineSync(c)) {
        begin = pipeline_result(c);
        res = pipeline_result(c);
        /* to the sync, then out of the pipeline (a lost session ends it too) */
        while ((r = PQgetResult(c))) {
            ExecStatusType status = PQresultStatus(r);
            PQclear(r);
            if (status == PGRES_PIPELINE_SYNC)
                break;
        }
    }
    PQexitPipelineMode(c);
    if (begin && PQresultStatus(begin) == PGRES_COMMAND_OK) {
        s->st->read_begin_pending = 0;
        PQclear(begin);
        return res;
    }
    PQclear(res);
    return begin;
}

static PGresult *execute(struct cursor *s)
{
    struct store *st = s->st;
    st->round_trips++;
    if (st->read_begin_pending)
        return execute_with_begin(s);
    if (unprepared(s->id))
        return PQexecParams(st->pg, pg_stmt_sql[s->id], s->nparams, NULL, s->values, s->lengths,
                            s->formats, 0);
    char name[16];
    snprintf(name, sizeof name, "k%d", (int)s->id);
    return PQexecPrepared(st->pg, name, s->nparams, s->values, s->lengths, s->formats, 0);
}

static int run(struct cursor *s, int may_retry)
{
    /* A failed statement aborts PostgreSQL's whole transaction, where SQLite
     * lets the caller go on. No store function goes on after a failed
     * statement at its own level: each write is inside store_begin, which
     * nested is a savepoint, and its failure rolls back to it
     * (store_rollback), so an outer transaction (an import, a batch) goes on
     * on both backends alike. */
    struct store *st = s->st;
    int rc;
    ExecStatusType status;
    pg_clear(s);
    if ((rc = alive(st)) || (rc = pg_prepare(st, s->id)))
        return rc;
    s->res = execute(s);
    status = PQresultStatus(s->res);
    if (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK) {
        const char *n = PQcmdTuples(s->res);
        st->pg_changes = n && *n ? atol(n) : 0;
        s->rows = PQntuples(s->res);
        return STORE_OK;
    }
    rc = status_of_result(st, s->res);
    pg_set_error(st, PQresultErrorMessage(s->res));
    pg_clear(s);
    if (rc == STORE_UNAVAILABLE && may_retry && may_reconnect(st) && reconnect(st) == STORE_OK)
        return run(s, 0); /* lost while idle (a server restart): once more, on a new session */
    return rc;
}

int pg_run(struct cursor *s)
{
    return run(s, 1);
}

void pg_clear(struct cursor *s)
{
    if (s->res)
        PQclear(s->res);
    s->res = NULL;
    s->rows = 0;
    s->row = -1;
}

int pg_col_count(struct cursor *s)
{
    return s->res ? PQnfields(s->res) : 0;
}

const char *pg_col(struct cursor *s, int i)
{
    if (!s->res || s->row < 0 || s->row >= s->rows || i >= PQnfields(s->res) ||
        PQgetisnull(s->res, s->row, i))
        return NULL;
    return PQgetvalue(s->res, s->row, i);
}

int pg_unhex(struct buf *out, const char *text)
{
    size_t len;
    buf_reset(out);
    if (!text || text[0] != '\\' || text[1] != 'x')
        return -1;
    text += 2;
    len = strlen(text);
    while (len >= 2) {
        unsigned char chunk[256];
        size_t take = len > 2 * sizeof chunk ? 2 * sizeof chunk : len & ~(size_t)1, n;
        if (sodium_hex2bin(chunk, sizeof chunk, text, take, NULL, &n, NULL) != 0 ||
            buf_add(out, chunk, n))
            return -1;
        text += take;
        len -= take;
    }
    return 0;
}

/* A bytea column arrives as text "\x0a1b...": decoded into s->blob. */
const void *pg_col_blob(struct cursor *s, int i, size_t *n)
{
    *n = 0;
    if (pg_unhex(&s->blob, pg_col(s, i)))
        return NULL;
    *n = s->blob.len;
    return *n ? s->blob.data : NULL;
}

static int exec_sql(struct store *st, const char *sql, int may_retry);

/* A read section's BEGIN not sent yet, before SQL text of the section. */
static int begin_now(struct store *st)
{
    if (!st->read_begin_pending)
        return STORE_OK;
    st->read_begin_pending = 0;
    return exec_sql(st, pg_stmt_sql[S_READ_BEGIN], 0);
}

static int exec_sql(struct store *st, const char *sql, int may_retry)
{
    PGresult *res;
    int rc;
    if ((rc = alive(st)) || (rc = begin_now(st)))
        return rc;
    st->round_trips++;
    res = PQexec(st->pg, sql);
    rc = PQresultStatus(res) == PGRES_COMMAND_OK || PQresultStatus(res) == PGRES_TUPLES_OK
             ? STORE_OK
             : status_of_result(st, res);
    if (rc)
        pg_set_error(st, PQresultErrorMessage(res));
    PQclear(res);
    if (rc == STORE_UNAVAILABLE && may_retry && may_reconnect(st) && reconnect(st) == STORE_OK)
        return exec_sql(st, sql, 0);
    return rc;
}

int pg_exec(struct store *st, const char *sql)
{
    return exec_sql(st, sql, 1);
}

long long pg_query_int(struct store *st, const char *sql)
{
    PGresult *res;
    long long v = -1;
    if (alive(st) || begin_now(st))
        return -1;
    st->round_trips++;
    res = PQexec(st->pg, sql);
    if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 && !PQgetisnull(res, 0, 0))
        v = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
    else if (PQresultStatus(res) != PGRES_TUPLES_OK)
        pg_set_error(st, PQresultErrorMessage(res));
    PQclear(res);
    return v;
}
