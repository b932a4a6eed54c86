/* store/sessions.c: analysis sessions. */
#include "store/store_int.h"

/* Write a session with statement `which`: ?1-?5 are space, id, title,
 * document and now; a guarded statement (guard set) binds it as ?6 and
 * answers STORE_CONFLICT when the guard no longer holds. */
static int session_write(struct store *st, int which, const char *space, const char *id,
                         const char *title, const char *document, const char *guard)
{
    char now[27];
    int rc;
    sqlite3_stmt *s = stmt_get(st, which);
    if (!s)
        return STORE_ERROR;
    time_utc_iso_micro(now);
    bind_text(s, 1, space);
    bind_text(s, 2, id);
    bind_text(s, 3, title ? title : "");
    bind_text(s, 4, document);
    bind_text(s, 5, now);
    if (guard)
        bind_text(s, 6, guard);
    rc = step_done(s);
    if (guard && rc == STORE_OK && sqlite3_changes(st->db) == 0)
        rc = STORE_CONFLICT;
    return rc;
}

int store_session_put(struct store *st, const char *space, const char *id, const char *title,
                      const char *document)
{
    return session_write(st, S_SESSION_PUT, space, id, title, document, NULL);
}

int store_session_put_if(struct store *st, const char *space, const char *id, const char *title,
                         const char *document, const char *expected_updated_at)
{
    return session_write(st, S_SESSION_PUT_IF, space, id, title, document, expected_updated_at);
}

static int session_rows(sqlite3_stmt *s, void (*each)(const struct session_info *, void *),
                        void *ctx, int *found)
{
    int rc;
    *found = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct session_info si = {col_text(s, 0), col_text(s, 1),
                                  (const char *)sqlite3_column_text(s, 2), col_text(s, 3),
                                  col_text(s, 4)};
        *found = 1;
        each(&si, ctx);
    }
    rc = rc == SQLITE_DONE ? STORE_OK : status_of(rc);
    stmt_finish(s);
    return rc;
}

int store_session_get(struct store *st, const char *space, const char *id,
                      void (*each)(const struct session_info *, void *), void *ctx)
{
    sqlite3_stmt *s = stmt_get(st, S_SESSION_GET);
    int rc, found;
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, space);
    bind_text(s, 2, id);
    rc = session_rows(s, each, ctx, &found);
    return rc == STORE_OK && !found ? STORE_NOT_FOUND : rc;
}

int store_session_list(struct store *st, const char *space,
                       void (*each)(const struct session_info *, void *), void *ctx)
{
    sqlite3_stmt *s = stmt_get(st, S_SESSION_LIST);
    int found;
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, space);
    return session_rows(s, each, ctx, &found);
}

int store_session_delete(struct store *st, const char *space, const char *id)
{
    int rc;
    sqlite3_stmt *s = stmt_get(st, S_SESSION_DELETE);
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, space);
    bind_text(s, 2, id);
    rc = step_done(s);
    return rc == STORE_OK && sqlite3_changes(st->db) == 0 ? STORE_NOT_FOUND : rc;
}
