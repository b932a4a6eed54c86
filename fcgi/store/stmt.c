/* store/stmt.c: the statement cache and the helpers every store file runs
 * its statements with: binding, stepping, reading columns, and the mapping
 * of SQLite result codes to store statuses. */
#include "store/store_int.h"

#include <stdlib.h>

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

void stmt_finish(sqlite3_stmt *s)
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

int db_exec(struct store *st, const char *sql)
{
    return status_of(sqlite3_exec(st->db, sql, NULL, NULL, NULL));
}

/* Bind ?1.. of s from ap, one argument per letter of types (see stmt_bind). */
static void bind_va(sqlite3_stmt *s, const char *types, va_list ap)
{
    for (int i = 1; types[i - 1]; i++) {
        switch (types[i - 1]) {
        case 't':
            bind_text(s, i, va_arg(ap, const char *));
            break;
        case 'i':
            sqlite3_bind_int(s, i, va_arg(ap, int));
            break;
        case 'l':
            sqlite3_bind_int64(s, i, va_arg(ap, long));
            break;
        case 'L':
            sqlite3_bind_int64(s, i, va_arg(ap, long long));
            break;
        case 'h':
            sqlite3_bind_blob(s, i, va_arg(ap, const unsigned char *), 32, SQLITE_STATIC);
            break;
        case 'b': {
            const void *p = va_arg(ap, const void *);
            sqlite3_bind_blob(s, i, p, va_arg(ap, int), SQLITE_STATIC);
            break;
        }
        default:
            abort(); /* a typo in a store file: fail loudly in every test */
        }
    }
}

/* Statement id with its parameters bound from ap; NULL when it does not prepare. */
static sqlite3_stmt *stmt_vbind(struct store *st, enum stmt_id id, const char *types, va_list ap)
{
    sqlite3_stmt *s = stmt_get(st, id);
    if (s)
        bind_va(s, types, ap);
    return s;
}

sqlite3_stmt *stmt_bind(struct store *st, enum stmt_id id, const char *types, ...)
{
    sqlite3_stmt *s;
    va_list ap;
    va_start(ap, types);
    s = stmt_vbind(st, id, types, ap);
    va_end(ap);
    return s;
}

int stmt_run(struct store *st, enum stmt_id id, const char *types, ...)
{
    sqlite3_stmt *s;
    va_list ap;
    va_start(ap, types);
    s = stmt_vbind(st, id, types, ap);
    va_end(ap);
    return s ? step_done(s) : STORE_ERROR;
}

int row_end(sqlite3_stmt *s, int rc)
{
    stmt_finish(s);
    if (rc == SQLITE_ROW)
        return STORE_OK;
    return rc == SQLITE_DONE ? STORE_NOT_FOUND : status_of(rc);
}

int rows_end(sqlite3_stmt *s, int rc)
{
    stmt_finish(s);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? STORE_OK : status_of(rc);
}

int row_count(sqlite3_stmt *s, long *n)
{
    int rc = sqlite3_step(s);
    *n = rc == SQLITE_ROW ? (long)sqlite3_column_int64(s, 0) : 0;
    stmt_finish(s);
    return rc == SQLITE_ROW ? STORE_OK : status_of(rc);
}

int rows_changed(struct store *st)
{
    return sqlite3_changes(st->db);
}
