/* store/jobs.c: background jobs. */
#include "store/store_int.h"

static void job_from_row(sqlite3_stmt *s, struct job_info *j)
{
    j->id = col_text(s, 0);
    j->space = col_text(s, 1);
    j->kind = col_text(s, 2);
    j->status = col_text(s, 3);
    j->progress = (long)sqlite3_column_int64(s, 4);
    j->total = (long)sqlite3_column_int64(s, 5);
    j->params = col_text(s, 6);
    j->result = (const char *)sqlite3_column_text(s, 7);
    j->error = (const char *)sqlite3_column_text(s, 8);
    j->actor = col_text(s, 9);
    j->created_at = col_text(s, 10);
    j->updated_at = col_text(s, 11);
}

static int job_rows(sqlite3_stmt *s, void (*each)(const struct job_info *, void *), void *ctx,
                    int *found)
{
    int rc;
    *found = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct job_info j;
        job_from_row(s, &j);
        *found = 1;
        each(&j, ctx);
    }
    rc = rc == SQLITE_DONE ? STORE_OK : status_of(rc);
    stmt_finish(s);
    return rc;
}

int store_job_create(struct store *st, const char *id, const char *space, const char *kind,
                     const char *params, const char *actor)
{
    char now[27];
    sqlite3_stmt *s = stmt_get(st, S_JOB_CREATE);
    if (!s)
        return STORE_ERROR;
    time_utc_iso_micro(now);
    bind_text(s, 1, id);
    bind_text(s, 2, space);
    bind_text(s, 3, kind);
    bind_text(s, 4, params ? params : "{}");
    bind_text(s, 5, actor);
    bind_text(s, 6, now);
    return step_done(s);
}

int store_job_get(struct store *st, const char *space, const char *id,
                  void (*each)(const struct job_info *, void *), void *ctx)
{
    sqlite3_stmt *s = stmt_get(st, S_JOB_GET);
    int rc, found;
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, space);
    bind_text(s, 2, id);
    rc = job_rows(s, each, ctx, &found);
    return rc == STORE_OK && !found ? STORE_NOT_FOUND : rc;
}

int store_job_list(struct store *st, const char *space, long limit,
                   void (*each)(const struct job_info *, void *), void *ctx)
{
    sqlite3_stmt *s = stmt_get(st, S_JOB_LIST);
    int found;
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, space);
    sqlite3_bind_int64(s, 2, limit);
    return job_rows(s, each, ctx, &found);
}

int store_job_claim(struct store *st, void (*each)(const struct job_info *, void *), void *ctx)
{
    char now[27];
    sqlite3_stmt *s = stmt_get(st, S_JOB_CLAIM);
    int rc, found;
    if (!s)
        return STORE_ERROR;
    time_utc_iso_micro(now);
    bind_text(s, 1, now);
    rc = job_rows(s, each, ctx, &found);
    return rc == STORE_OK && !found ? STORE_NOT_FOUND : rc;
}

int store_job_progress(struct store *st, const char *id, long progress, long total)
{
    char now[27];
    sqlite3_stmt *s = stmt_get(st, S_JOB_PROGRESS);
    if (!s)
        return STORE_ERROR;
    time_utc_iso_micro(now);
    bind_text(s, 1, id);
    sqlite3_bind_int64(s, 2, progress);
    sqlite3_bind_int64(s, 3, total);
    bind_text(s, 4, now);
    return step_done(s);
}

int store_job_finish(struct store *st, const char *id, const char *status, const char *result,
                     const char *error)
{
    char now[27];
    sqlite3_stmt *s = stmt_get(st, S_JOB_FINISH);
    if (!s)
        return STORE_ERROR;
    time_utc_iso_micro(now);
    bind_text(s, 1, id);
    bind_text(s, 2, status);
    bind_text(s, 3, result);
    bind_text(s, 4, error);
    bind_text(s, 5, now);
    return step_done(s);
}

int store_job_requeue_running(struct store *st)
{
    char now[27];
    sqlite3_stmt *s = stmt_get(st, S_JOB_REQUEUE);
    if (!s)
        return STORE_ERROR;
    time_utc_iso_micro(now);
    bind_text(s, 1, now);
    return step_done(s);
}
