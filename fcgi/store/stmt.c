/* store/stmt.c: the statement cache and the helpers every store file runs
 * its statements with: binding, stepping, reading columns, and the mapping
 * of SQLite result codes to store statuses. */
#include "store/store_int.h"

#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>

int store_status_of(int rc)
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

/* The quota of store_set_space_entries (checked by search_index.c, said
 * by store_status_error). */
static atomic_long space_entries_max;

void store_set_space_entries(long max)
{
    atomic_store(&space_entries_max, max > 0 ? max : 0);
}

long store_space_entries(void)
{
    return atomic_load(&space_entries_max);
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
    case STORE_UNAVAILABLE:
        error_set(e, E_SERVICE_UNAVAILABLE, "db_unavailable", "The database is not available");
        break;
    case STORE_QUOTA:
        error_set(e, E_LIMIT_EXCEEDED, "space_full",
                  "The space holds its limit of %ld entries: delete or merge some first",
                  store_space_entries());
        error_int(e, "max", store_space_entries());
        break;
    default:
        error_set(e, E_INTERNAL, "internal_error", "An unexpected error occurred");
        break;
    }
}

const char *store_errmsg(struct store *st)
{
    if (st && st->pg)
        return st->pg_error[0] ? st->pg_error : "no error";
    return st && st->db ? sqlite3_errmsg(st->db) : "no database";
}

struct cursor *stmt_get(struct store *st, enum stmt_id id)
{
    struct cursor *c = &st->cur[id];
    if (st->pg) {
        if (pg_prepare(st, id))
            return NULL;
    } else if (!c->lite) {
        if (!stmt_sql[id] || sqlite3_prepare_v3(st->db, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT,
                                                &c->lite, NULL) != SQLITE_OK)
            return NULL;
    }
    if (!c->st)
        buf_init(&c->blob, 1 << 20); /* a vector of 8,192 floats is 32 KiB */
    c->st = st;
    c->id = id;
    return c;
}

/* The parameter slot i (from 1) of a PostgreSQL cursor, in text format. */
static int pg_slot(struct cursor *s, int i)
{
    if (i < 1 || i > CURSOR_MAX_PARAMS)
        abort(); /* a statement with more parameters than the cursor holds */
    for (int k = s->nparams; k < i - 1; k++)
        s->values[k] = NULL; /* a gap binds NULL, as in SQLite */
    if (i > s->nparams)
        s->nparams = i;
    s->formats[i - 1] = 0;
    s->lengths[i - 1] = 0;
    return i - 1;
}

/* A parameter SQLite refused (rc): the statement must not run without it. */
static void bound(struct cursor *s, int rc)
{
    if (rc != SQLITE_OK && !s->unbound)
        s->unbound = sqlite3_errstr(rc);
}

/* Text goes to either database only when it is valid UTF-8: PostgreSQL
 * refuses anything else, and SQLite would keep it for json-c and the
 * copy to PostgreSQL to refuse later. */
static int text_ok(struct cursor *s, const char *v, size_t n)
{
    if (n > INT_MAX || !utf8_valid(v, n)) {
        if (!s->unbound)
            s->unbound = n > INT_MAX ? "a text over 2 GB" : "a text that is not valid UTF-8";
        return 0;
    }
    return 1;
}

void stmt_bind_text(struct cursor *s, int i, const char *v)
{
    if (v && !text_ok(s, v, strlen(v)))
        return;
    if (s->st->pg)
        s->values[pg_slot(s, i)] = v;
    else if (v)
        bound(s, sqlite3_bind_text(s->lite, i, v, -1, SQLITE_STATIC));
    else
        bound(s, sqlite3_bind_null(s->lite, i));
}

void stmt_bind_text_n(struct cursor *s, int i, const char *v, size_t n)
{
    if (!text_ok(s, v, n))
        return;
    if (s->st->pg) {
        int k = pg_slot(s, i);
        free(s->owned[k]);
        s->owned[k] = xstrndup(v, n);
        s->values[k] = s->owned[k];
    } else {
        bound(s, sqlite3_bind_text(s->lite, i, v, (int)n, SQLITE_TRANSIENT));
    }
}

void stmt_bind_int64(struct cursor *s, int i, long long v)
{
    if (s->st->pg) {
        int k = pg_slot(s, i);
        snprintf(s->num[k], sizeof s->num[k], "%lld", v);
        s->values[k] = s->num[k];
    } else {
        bound(s, sqlite3_bind_int64(s->lite, i, v));
    }
}

void stmt_bind_int(struct cursor *s, int i, int v)
{
    stmt_bind_int64(s, i, v);
}

static void bind_blob(struct cursor *s, int i, const void *p, int n)
{
    if (s->st->pg) {
        int k = pg_slot(s, i);
        s->values[k] = p ? p : "";
        s->lengths[k] = n;
        s->formats[k] = 1; /* binary: bytea as it is */
    } else {
        bound(s, sqlite3_bind_blob(s->lite, i, p, n, SQLITE_STATIC));
    }
}

int stmt_step(struct cursor *s)
{
    if (s->unbound) {
        fprintf(stderr, "knowhub: a statement was not run: a parameter was refused (%s)\n",
                s->unbound);
        return -STORE_ERROR;
    }
    if (s->st->pg) {
        if (!s->res) {
            int rc = pg_run(s);
            if (rc)
                return -rc;
            s->row = -1;
        }
        return ++s->row < s->rows ? STEP_ROW : STEP_DONE;
    }
    /* a write of its own (autocommit) in the writers' turn, as a transaction is */
    int lone =
        s->st->tx_depth == 0 && !sqlite3_stmt_busy(s->lite) && !sqlite3_stmt_readonly(s->lite);
    if (lone && store_turn_take(s->st))
        return -STORE_BUSY;
    int rc = sqlite3_step(s->lite);
    if (lone)
        store_turn_give();
    if (rc == SQLITE_ROW)
        return STEP_ROW;
    return rc == SQLITE_DONE ? STEP_DONE : -store_status_of(rc);
}

/* Step a statement that returns no row we need; reset it; return a store status. */
int stmt_step_done(struct cursor *s)
{
    int rc = stmt_step(s);
    stmt_finish(s);
    return step_status(rc);
}

void stmt_finish(struct cursor *s)
{
    s->unbound = NULL;
    if (s->st->pg) {
        pg_clear(s);
        for (int k = 0; k < s->nparams; k++) {
            free(s->owned[k]);
            s->owned[k] = NULL;
        }
        s->nparams = 0;
        return;
    }
    sqlite3_reset(s->lite);
    sqlite3_clear_bindings(s->lite);
}

int stmt_col_count(struct cursor *s)
{
    return s->st->pg ? pg_col_count(s) : sqlite3_column_count(s->lite);
}

const char *stmt_col_opt(struct cursor *s, int i)
{
    i += s->col_base;
    return s->st->pg ? pg_col(s, i) : (const char *)sqlite3_column_text(s->lite, i);
}

const char *stmt_col_text(struct cursor *s, int i)
{
    const char *t = stmt_col_opt(s, i);
    return t ? t : "";
}

char *stmt_col_dup(struct cursor *s, int i)
{
    i += s->col_base;
    if (s->st->pg) {
        const char *t = pg_col(s, i);
        return t ? xstrdup(t) : NULL;
    }
    const unsigned char *t = sqlite3_column_text(s->lite, i);
    return t ? xstrndup((const char *)t, (size_t)sqlite3_column_bytes(s->lite, i)) : NULL;
}

long long stmt_col_int64(struct cursor *s, int i)
{
    i += s->col_base;
    if (s->st->pg) {
        const char *t = pg_col(s, i);
        return t ? strtoll(t, NULL, 10) : 0;
    }
    return sqlite3_column_int64(s->lite, i);
}

int stmt_col_int(struct cursor *s, int i)
{
    return (int)stmt_col_int64(s, i);
}

const void *stmt_col_blob(struct cursor *s, int i, size_t *n)
{
    i += s->col_base;
    if (s->st->pg)
        return pg_col_blob(s, i, n);
    const void *p = sqlite3_column_blob(s->lite, i);
    *n = (size_t)sqlite3_column_bytes(s->lite, i);
    return p;
}

int store_db_exec(struct store *st, const char *sql)
{
    if (st->pg)
        return pg_exec(st, sql);
    return store_status_of(sqlite3_exec(st->db, sql, NULL, NULL, NULL));
}

/* Bind ?1.. of s from ap, one argument per letter of types (see stmt_bind). */
static void bind_va(struct cursor *s, const char *types, va_list ap)
{
    for (int i = 1; types[i - 1]; i++) {
        switch (types[i - 1]) {
        case 't':
            stmt_bind_text(s, i, va_arg(ap, const char *));
            break;
        case 'i':
            stmt_bind_int(s, i, va_arg(ap, int));
            break;
        case 'l':
            stmt_bind_int64(s, i, va_arg(ap, long));
            break;
        case 'L':
            stmt_bind_int64(s, i, va_arg(ap, long long));
            break;
        case 'h':
            bind_blob(s, i, va_arg(ap, const unsigned char *), 32);
            break;
        case 'b': {
            const void *p = va_arg(ap, const void *);
            bind_blob(s, i, p, va_arg(ap, int));
            break;
        }
        default:
            abort(); /* a typo in a store file: fail loudly in every test */
        }
    }
}

/* Statement id with its parameters bound from ap; NULL when it does not prepare. */
static struct cursor *stmt_vbind(struct store *st, enum stmt_id id, const char *types, va_list ap)
{
    struct cursor *s = stmt_get(st, id);
    if (s)
        bind_va(s, types, ap);
    return s;
}

struct cursor *stmt_bind(struct store *st, enum stmt_id id, const char *types, ...)
{
    struct cursor *s;
    va_list ap;
    va_start(ap, types);
    s = stmt_vbind(st, id, types, ap);
    va_end(ap);
    return s;
}

int stmt_run(struct store *st, enum stmt_id id, const char *types, ...)
{
    struct cursor *s;
    va_list ap;
    va_start(ap, types);
    s = stmt_vbind(st, id, types, ap);
    va_end(ap);
    return s ? stmt_step_done(s) : STORE_ERROR;
}

int stmt_returning(struct store *st, enum stmt_id id, long *out, const char *types, ...)
{
    struct cursor *s;
    va_list ap;
    int rc;
    va_start(ap, types);
    s = stmt_vbind(st, id, types, ap);
    va_end(ap);
    if (!s)
        return STORE_ERROR;
    if ((rc = stmt_step(s)) == STEP_ROW)
        *out = (long)stmt_col_int64(s, 0);
    return stmt_row_end(s, rc);
}

int stmt_two_int64(struct cursor *s, long long *a, long long *b)
{
    int rc;
    *a = *b = 0;
    if (!s)
        return STORE_ERROR;
    if ((rc = stmt_step(s)) == STEP_ROW) {
        *a = stmt_col_int64(s, 0);
        *b = stmt_col_int64(s, 1);
    }
    rc = stmt_row_end(s, rc);
    return rc == STORE_NOT_FOUND ? STORE_OK : rc;
}

void store_match_row_read(struct cursor *s, int first, struct match_row *r)
{
    r->id = stmt_col_text(s, first);
    r->category = stmt_col_text(s, first + 1);
    r->path = stmt_col_text(s, first + 2);
    r->title = stmt_col_text(s, first + 3);
    r->tags = stmt_col_text(s, first + 4);
    r->body = stmt_col_text(s, first + 5);
    r->source = stmt_col_text(s, first + 6);
    r->updated_at = stmt_col_text(s, first + 7);
    r->always_apply = stmt_col_int(s, first + 8);
    r->scenario = stmt_col_text(s, first + 9);
    r->terms = stmt_col_text(s, first + 10);
}

int stmt_row_end(struct cursor *s, int rc)
{
    stmt_finish(s);
    if (rc == STEP_ROW)
        return STORE_OK;
    return rc == STEP_DONE ? STORE_NOT_FOUND : step_status(rc);
}

int stmt_rows_end(struct cursor *s, int rc)
{
    stmt_finish(s);
    return step_status(rc);
}

int stmt_row_count(struct cursor *s, long *n)
{
    int rc = stmt_step(s);
    *n = rc == STEP_ROW ? (long)stmt_col_int64(s, 0) : 0;
    stmt_finish(s);
    return rc == STEP_ROW ? STORE_OK : rc == STEP_DONE ? STORE_OK : step_status(rc);
}

int stmt_rows_changed(struct store *st)
{
    return st->pg ? (int)st->pg_changes : sqlite3_changes(st->db);
}

struct json_object *store_json_texts(const char *const *texts, size_t n, const char **json)
{
    struct json_object *arr = json_object_new_array();
    for (size_t i = 0; i < n; i++)
        json_object_array_add(arr, json_object_new_string(texts[i]));
    *json = json_object_to_json_string_ext(arr,
                                           JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    return arr;
}
