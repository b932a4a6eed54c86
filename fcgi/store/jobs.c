/* store/jobs.c: background jobs. */
#include "store/store_int.h"

static void job_from_row(struct cursor *s, struct job_info *j)
{
    j->id = stmt_col_text(s, 0);
    j->space = stmt_col_text(s, 1);
    j->kind = stmt_col_text(s, 2);
    j->status = stmt_col_text(s, 3);
    j->progress = (long)stmt_col_int64(s, 4);
    j->total = (long)stmt_col_int64(s, 5);
    j->params = stmt_col_text(s, 6);
    j->result = stmt_col_opt(s, 7);
    j->error = stmt_col_opt(s, 8);
    j->actor = stmt_col_text(s, 9);
    j->created_at = stmt_col_text(s, 10);
    j->updated_at = stmt_col_text(s, 11);
}

/* Pass every row of s (bound; NULL when it did not prepare) to each; with
 * one_row, STORE_NOT_FOUND when there was none. */
static int job_rows(struct cursor *s, void (*each)(const struct job_info *, void *), void *ctx,
                    int one_row)
{
    int rc, found = 0;
    if (!s)
        return STORE_ERROR;
    while ((rc = stmt_step(s)) == STEP_ROW) {
        struct job_info j;
        job_from_row(s, &j);
        found = 1;
        each(&j, ctx);
    }
    rc = stmt_rows_end(s, rc);
    return rc == STORE_OK && one_row && !found ? STORE_NOT_FOUND : rc;
}

int store_job_create(struct store *st, const char *id, const char *space, const char *kind,
                     const char *params, const char *actor)
{
    char now[27];
    time_utc_iso_micro(now);
    return stmt_run(st, S_JOB_CREATE, "tttttt", id, space, kind, params ? params : "{}", actor,
                    now);
}

int store_job_get(struct store *st, const char *space, const char *id,
                  void (*each)(const struct job_info *, void *), void *ctx)
{
    return job_rows(stmt_bind(st, S_JOB_GET, "tt", space, id), each, ctx, 1);
}

int store_job_list(struct store *st, const char *space, long limit,
                   void (*each)(const struct job_info *, void *), void *ctx)
{
    return job_rows(stmt_bind(st, S_JOB_LIST, "tl", space, limit), each, ctx, 0);
}

/* A lease's length on a connection no node was named on (tests, the CLI). */
#define LEASE_DEFAULT_SECONDS 300

void store_set_node(struct store *st, const char *node, long lease_seconds)
{
    free(st->node);
    st->node = node ? xstrdup(node) : NULL;
    st->lease_seconds = lease_seconds;
}

/* When a lease taken now runs out. */
static void lease_end(const struct store *st, char out[27])
{
    time_utc_iso_micro_offset(out,
                              st->lease_seconds > 0 ? st->lease_seconds : LEASE_DEFAULT_SECONDS);
}

int store_job_claim(struct store *st, void (*each)(const struct job_info *, void *), void *ctx)
{
    char now[27], until[27];
    struct cursor *waiting;
    int rc;
    time_utc_iso_micro(now);
    /* Look before claiming: the job thread polls every 200 ms, and on
     * PostgreSQL even an UPDATE that changes no row raises the cache
     * generation (a statement trigger), which would empty every node's
     * answer cache five times a second. */
    if (!(waiting = stmt_bind(st, S_JOB_WAITING, "t", now)))
        return STORE_ERROR;
    if ((rc = stmt_row_end(waiting, stmt_step(waiting))))
        return rc; /* STORE_NOT_FOUND: none waits */
    lease_end(st, until);
    return job_rows(stmt_bind(st, S_JOB_CLAIM, "ttt", now, st->node, until), each, ctx, 1);
}

/* STORE_NOT_FOUND when the statement changed no row: the job is no longer
 * this node's (its lease ran out and another took it over), or finished. */
static int held(struct store *st, int rc)
{
    return rc == STORE_OK && stmt_rows_changed(st) == 0 ? STORE_NOT_FOUND : rc;
}

int store_job_progress(struct store *st, const char *id, long progress, long total)
{
    char now[27], until[27];
    time_utc_iso_micro(now);
    lease_end(st, until);
    return held(st,
                stmt_run(st, S_JOB_PROGRESS, "tllttt", id, progress, total, now, until, st->node));
}

/* What a job is finished with when its own result or error cannot be stored
 * (not valid UTF-8, or refused by the database). */
#define JOB_UNSTORABLE                                                                             \
    "{\"code\":\"INTERNAL_ERROR\",\"message\":\"The job ended, but its result could not be "       \
    "stored\",\"retry\":false}"

int store_job_finish(struct store *st, const char *id, const char *status, const char *result,
                     const char *error)
{
    char now[27];
    int rc;
    time_utc_iso_micro(now);
    rc = held(st, stmt_run(st, S_JOB_FINISH, "tttttt", id, status, result, error, now, st->node));
    if (rc != STORE_ERROR)
        return rc;
    /* finished all the same, failed: not left running until its lease ends */
    return held(st, stmt_run(st, S_JOB_FINISH, "tttttt", id, "failed", NULL, JOB_UNSTORABLE, now,
                             st->node));
}

int store_job_requeue_running(struct store *st)
{
    char now[27];
    time_utc_iso_micro(now);
    return stmt_run(st, S_JOB_REQUEUE, "tt", now, st->node);
}

int store_job_open(struct store *st, const char *space, const char *kind,
                   void (*each)(const struct job_info *, void *), void *ctx)
{
    return job_rows(stmt_bind(st, S_JOB_OPEN, "tt", space, kind), each, ctx, 1);
}

int store_job_merge(struct store *st, const char *id, const char *params)
{
    char now[27];
    time_utc_iso_micro(now);
    return held(st, stmt_run(st, S_JOB_MERGE, "ttt", id, params, now));
}
