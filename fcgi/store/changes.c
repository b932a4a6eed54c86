/* store/changes.c: the knowledge's changes as they commit, for the stream
 * thread (app/streams.c), and the MCP sessions' subscriptions. SQLite keeps
 * a row per change (migration 15's triggers), in commit order since it has
 * one writer at a time; PostgreSQL sends each as a notification at commit
 * (knowledge_notify), which a LISTENing session receives in commit order. */
#include "store/store_int.h"

#include <libpq-fe.h>
#include <string.h>

#define CHANNEL "knowhub_changes"
#define FIELDS 7

int store_changes_follow(struct store *st)
{
    long long last = 0;
    int rc;
    if (st->pg) {
        rc = pg_exec(st, "LISTEN " CHANNEL);
        st->listen_pid = rc == STORE_OK ? PQbackendPID(st->pg) : 0;
        return rc;
    }
    struct cursor *s = stmt_bind(st, S_CHANGES_LAST, "");
    if (!s)
        return STORE_ERROR;
    rc = stmt_step(s);
    if (rc == STEP_ROW)
        last = stmt_col_int64(s, 0);
    rc = stmt_row_end(s, rc);
    st->changes_seen = last;
    return rc;
}

int store_changes_fd(struct store *st)
{
    return st->pg && PQstatus(st->pg) == CONNECTION_OK ? PQsocket(st->pg) : -1;
}

/* Split a notification's payload (fields joined by 0x1f) into c. */
static int payload_fields(char *text, struct store_change *c)
{
    const char **f[FIELDS] = {&c->space,        &c->id,       &c->category, &c->path,
                              &c->old_category, &c->old_path, &c->action};
    for (int i = 0; i < FIELDS; i++) {
        char *end = strchr(text, 0x1f);
        if ((end == NULL) != (i == FIELDS - 1))
            return -1;
        if (end)
            *end = '\0';
        *f[i] = text;
        text = end ? end + 1 : text;
    }
    return 0;
}

static int pg_changes_read(struct store *st, store_change_fn fn, void *arg)
{
    PGnotify *n;
    int lost = 0;
    /* A session lost (and replaced by a statement since) LISTENs no more:
     * follow anew, and say that changes may have gone by. */
    if (PQstatus(st->pg) != CONNECTION_OK || PQbackendPID(st->pg) != st->listen_pid) {
        if (store_changes_follow(st))
            return STORE_UNAVAILABLE;
        lost = 1;
    }
    if (!PQconsumeInput(st->pg)) {
        pg_set_error(st, PQerrorMessage(st->pg));
        st->listen_pid = 0;
        return STORE_UNAVAILABLE;
    }
    while ((n = PQnotifies(st->pg))) {
        struct store_change c;
        if (strcmp(n->relname, CHANNEL) == 0 && payload_fields(n->extra, &c) == 0)
            fn(arg, &c);
        PQfreemem(n);
    }
    return lost ? STORE_UNAVAILABLE : STORE_OK;
}

int store_changes_read(struct store *st, store_change_fn fn, void *arg)
{
    int rc, more = 1, gap = 0;
    if (st->pg)
        return pg_changes_read(st, fn, arg);
    while (more) {
        struct cursor *s = stmt_bind(st, S_CHANGES_SINCE, "L", st->changes_seen);
        int rows = 0;
        if (!s)
            return STORE_ERROR;
        while ((rc = stmt_step(s)) == STEP_ROW) {
            long long seq = stmt_col_int64(s, 0);
            /* AUTOINCREMENT numbers every row and a rollback takes its
             * number back: a jump is rows trimmed before they were read. */
            if (rows == 0 && st->changes_seen > 0 && seq > st->changes_seen + 1)
                gap = 1;
            struct store_change c = {stmt_col_text(s, 1), stmt_col_text(s, 2), stmt_col_text(s, 3),
                                     stmt_col_text(s, 4), stmt_col_text(s, 5), stmt_col_text(s, 6),
                                     stmt_col_text(s, 7)};
            st->changes_seen = seq;
            rows++;
            fn(arg, &c);
        }
        if ((rc = stmt_rows_end(s, rc)))
            return rc;
        more = rows == 256;
    }
    return gap ? STORE_UNAVAILABLE : STORE_OK;
}

int store_changes_trim(struct store *st, long seconds)
{
    char before[27];
    if (st->pg)
        return STORE_OK;
    time_utc_iso_micro_offset(before, -seconds);
    return stmt_run(st, S_CHANGES_TRIM, "t", before);
}

int store_sub_put(struct store *st, const char *space, const char *token_id, const char *session,
                  const char *uri, long max)
{
    char now[27];
    long n = 0;
    int rc;
    time_utc_iso_micro(now);
    if ((rc = store_begin(st)))
        return rc;
    rc = stmt_row_count(stmt_bind(st, S_SUB_COUNT, "t", token_id), &n);
    if (rc == STORE_OK && n >= max)
        rc = STORE_QUOTA;
    if (rc == STORE_OK)
        rc = stmt_run(st, S_SUB_PUT, "ttttt", space, token_id, session, uri, now);
    if (rc) {
        store_rollback(st);
        return rc;
    }
    return store_commit(st);
}

int store_sub_delete(struct store *st, const char *token_id, const char *session, const char *uri)
{
    return stmt_run(st, S_SUB_DELETE, "ttt", token_id, session, uri);
}

int store_sub_end(struct store *st, const char *token_id, const char *session)
{
    return stmt_run(st, S_SUB_END, "tt", token_id, session);
}

int store_sub_match(struct store *st, const char *space, const char *uri,
                    void (*each)(void *, const char *, const char *), void *arg)
{
    struct cursor *s = stmt_bind(st, S_SUB_MATCH, "tt", space, uri);
    int rc;
    if (!s)
        return STORE_ERROR;
    while ((rc = stmt_step(s)) == STEP_ROW)
        each(arg, stmt_col_text(s, 0), stmt_col_text(s, 1));
    return stmt_rows_end(s, rc);
}

int store_sub_touch(struct store *st, const char *token_id, const char *session)
{
    char now[27];
    time_utc_iso_micro(now);
    return stmt_run(st, S_SUB_TOUCH, "ttt", token_id, session, now);
}

int store_sub_expire(struct store *st, long seconds)
{
    char before[27];
    time_utc_iso_micro_offset(before, -seconds);
    return stmt_run(st, S_SUB_EXPIRE, "t", before);
}
