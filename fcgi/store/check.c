/* store/check.c: the operator's self-checks: every statement prepares, and
 * the database's integrity, indexes, histories and paths (knowhub check),
 * on SQLite; on PostgreSQL, the checks of pg_sql.c. */
#include "store/store_int.h"

#include <string.h>

int store_prepare_all(struct store *st, const char **failed_sql)
{
    const char *const *sql = st->pg ? pg_stmt_sql : stmt_sql;
    *failed_sql = NULL;
    for (int i = 0; i < S_COUNT; i++)
        if (sql[i] && !stmt_get(st, (enum stmt_id)i)) {
            *failed_sql = sql[i];
            return STORE_ERROR;
        }
    return STORE_OK;
}

/* The last lines of either check: every statement prepares, and the schema
 * version. Returns the problems found (0 or 1). */
static int check_statements(struct store *st, struct buf *report)
{
    const char *failed;
    int problem = store_prepare_all(st, &failed) != STORE_OK;
    if (problem)
        buf_addf(report, "statements: %s fails: %s\n", failed, store_errmsg(st));
    else
        buf_adds(report, "statements: all prepare\n");
    buf_addf(report, "schema version: %d\n", store_schema_version(st));
    return problem;
}

/* store_check on PostgreSQL: pg_sql.c's checks, each counting its problems,
 * and every statement. */
static int check_postgres(struct store *st, struct buf *report)
{
    int problems = 0;
    for (const struct pg_check *c = pg_checks; c->name; c++) {
        long long n = pg_query_int(st, c->sql);
        if (n == 0) {
            buf_addf(report, "%s: ok\n", c->name);
            continue;
        }
        if (n < 0)
            buf_addf(report, "%s: cannot run: %s\n", c->name, store_errmsg(st));
        else
            buf_addf(report, "%s: %lld problems\n", c->name, n);
        problems++;
    }
    problems += check_statements(st, report);
    return problems;
}

/* One text result of a query, into out. */
static int query_text(struct store *st, const char *sql, struct buf *out)
{
    sqlite3_stmt *s;
    int rc;
    buf_reset(out);
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return STORE_ERROR;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (out->len)
            buf_addch(out, '\n');
        const unsigned char *t = sqlite3_column_text(s, 0);
        buf_adds(out, t ? (const char *)t : "");
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? STORE_OK : store_status_of(rc);
}

int store_check(struct store *st, struct buf *report)
{
    struct buf r;
    int problems = 0;
    if (st->pg)
        return check_postgres(st, report);
    buf_init(&r, 1 << 20);
    if (query_text(st, "PRAGMA integrity_check", &r) || strcmp(r.data, "ok") != 0) {
        buf_addf(report, "integrity_check: %s\n", r.data);
        problems++;
    } else {
        buf_adds(report, "integrity_check: ok\n");
    }
    if (query_text(st, "PRAGMA foreign_key_check", &r) || r.len) {
        buf_addf(report, "foreign_key_check: %s\n", r.len ? r.data : store_errmsg(st));
        problems++;
    } else {
        buf_adds(report, "foreign_key_check: ok\n");
    }
    {
        static const char *const indexes[] = FTS_INDEXES;
        struct buf a, b, sql;
        buf_init(&a, 64);
        buf_init(&b, 64);
        buf_init(&sql, 256);
        query_text(st, "SELECT count(*) FROM knowledge WHERE status = 'active'", &a);
        for (size_t i = 0; i < sizeof indexes / sizeof *indexes; i++) {
            buf_reset(&sql);
            buf_addf(&sql, "INSERT INTO %s(%s) VALUES('integrity-check')", indexes[i], indexes[i]);
            if (store_db_exec(st, sql.data)) {
                buf_addf(report, "%s: %s\n", indexes[i], store_errmsg(st));
                problems++;
                continue;
            }
            buf_reset(&sql);
            buf_addf(&sql, "SELECT count(*) FROM %s", indexes[i]);
            query_text(st, sql.data, &b);
            if (strcmp(a.data, b.data) != 0) {
                buf_addf(report, "%s: %s active entries, %s indexed\n", indexes[i], a.data, b.data);
                problems++;
            } else {
                buf_addf(report, "%s: ok, %s active entries all indexed\n", indexes[i], a.data);
            }
        }
        buf_release(&sql);
        query_text(st,
                   "SELECT count(*) FROM knowledge k WHERE status = 'active' AND"
                   " (SELECT count(*) FROM knowledge_revisions r WHERE r.knowledge_id = k.id) = 0",
                   &a);
        if (strcmp(a.data, "0") != 0) {
            buf_addf(report, "revisions: %s active entries have no revision\n", a.data);
            problems++;
        } else {
            buf_adds(report, "revisions: every entry has its history\n");
        }
        /* What export cannot write (kept from before the file view refused
         * it): a name over 255 bytes, or a file beside a folder of its name. */
        query_text(st,
                   "SELECT count(*) FROM knowledge k WHERE status = 'active' AND ("
                   " length(CAST(substr(path, instr(path, '/') + 1) AS BLOB)) > 255 OR"
                   " (instr(path, '/') > 0 AND"
                   "  length(CAST(substr(path, 1, instr(path, '/') - 1) AS BLOB)) > 255) OR"
                   " EXISTS(SELECT 1 FROM knowledge o WHERE o.space = k.space"
                   "  AND o.category = k.category AND o.status = 'active'"
                   "  AND o.path > k.path || '/' AND o.path < k.path || '0'))",
                   &a);
        if (strcmp(a.data, "0") != 0) {
            buf_addf(report,
                     "paths: %s active entries have a name over 255 bytes or a folder of "
                     "their name; export cannot write them: rename them\n",
                     a.data);
            problems++;
        } else {
            buf_adds(report, "paths: every path can be exported\n");
        }
        /* The BM25F statistics (search_index.c) follow the active entries. */
        query_text(st, CHECK_SEARCH_DOCS, &a);
        query_text(st, CHECK_SEARCH_STATS("char(10)"), &b);
        if (strcmp(a.data, "0") != 0 || strcmp(b.data, "0") != 0) {
            buf_addf(report,
                     "search statistics: %s entries without their terms record (or left over), "
                     "%s spaces whose counts differ from their records\n",
                     a.data, b.data);
            problems++;
        } else {
            buf_adds(report, "search statistics: ok\n");
        }
        buf_release(&a);
        buf_release(&b);
    }
    problems += check_statements(st, report);
    buf_release(&r);
    return problems;
}
