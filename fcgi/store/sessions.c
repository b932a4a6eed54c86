/* store/sessions.c: analysis sessions. */
#include "store/store_int.h"

/* Write a session with statement `which`: ?1-?5 are space, id, title,
 * document and now; a guarded statement (guard set) binds it as ?6 and
 * answers STORE_CONFLICT when the guard no longer holds. */
static int session_write(struct store *st, enum stmt_id which, const char *space, const char *id,
                         const char *title, const char *document, const char *guard)
{
    char now[27];
    int rc;
    time_utc_iso_micro(now);
    title = title ? title : "";
    rc = guard ? stmt_run(st, which, "tttttt", space, id, title, document, now, guard)
               : stmt_run(st, which, "ttttt", space, id, title, document, now);
    if (guard && rc == STORE_OK && stmt_rows_changed(st) == 0)
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

/* Pass every row of s (bound; NULL when it did not prepare) to each; with
 * one_row, STORE_NOT_FOUND when there was none. */
static int session_rows(struct cursor *s, void (*each)(const struct session_info *, void *),
                        void *ctx, int one_row)
{
    int rc, found = 0;
    if (!s)
        return STORE_ERROR;
    while ((rc = stmt_step(s)) == STEP_ROW) {
        struct session_info si = {stmt_col_text(s, 0), stmt_col_text(s, 1), stmt_col_opt(s, 2),
                                  stmt_col_text(s, 3), stmt_col_text(s, 4)};
        found = 1;
        each(&si, ctx);
    }
    rc = stmt_rows_end(s, rc);
    return rc == STORE_OK && one_row && !found ? STORE_NOT_FOUND : rc;
}

int store_session_get(struct store *st, const char *space, const char *id,
                      void (*each)(const struct session_info *, void *), void *ctx)
{
    return session_rows(stmt_bind(st, S_SESSION_GET, "tt", space, id), each, ctx, 1);
}

int store_session_list(struct store *st, const char *space,
                       void (*each)(const struct session_info *, void *), void *ctx)
{
    return session_rows(stmt_bind(st, S_SESSION_LIST, "t", space), each, ctx, 0);
}

int store_session_delete(struct store *st, const char *space, const char *id)
{
    int rc = stmt_run(st, S_SESSION_DELETE, "tt", space, id);
    return rc == STORE_OK && stmt_rows_changed(st) == 0 ? STORE_NOT_FOUND : rc;
}
