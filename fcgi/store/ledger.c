/* store/ledger.c: the audit trail, the LLM usage ledger and the counts
 * the metrics page shows. */
#include "store/store_int.h"

#include <string.h>

int audit_at(struct store *st, const char *now, const char *space, const char *actor,
             const char *action, const char *target)
{
    sqlite3_stmt *s = stmt_get(st, S_AUDIT);
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, now);
    bind_text(s, 2, space);
    bind_text(s, 3, actor);
    bind_text(s, 4, action);
    bind_text(s, 5, target ? target : "");
    int rc = step_done(s);
    if (rc == STORE_OK && st->audit_hook) {
        const char *fields[] = {now, space, actor, action, target ? target : ""};
        size_t len = st->audit_pending.len;
        for (int i = 0; i < 5; i++)
            if (buf_add(&st->audit_pending, fields[i], strlen(fields[i]) + 1)) {
                st->audit_pending.len = len; /* too many rows: the log misses these */
                st->audit_pending.data[len] = '\0';
                break;
            }
        if (st->tx_depth == 0)
            audit_flush(st);
    }
    return rc;
}

int store_audit(struct store *st, const char *space, const char *actor, const char *action,
                const char *target)
{
    char now[20];
    time_utc_text(now);
    return audit_at(st, now, space, actor, action, target);
}

int store_llm_call_add(struct store *st, const char *space, const char *purpose, const char *model,
                       long prompt_tokens, long completion_tokens, long latency_ms,
                       const char *outcome)
{
    char now[27];
    sqlite3_stmt *s = stmt_get(st, S_LLM_CALL_ADD);
    if (!s)
        return STORE_ERROR;
    time_utc_iso_micro(now);
    bind_text(s, 1, space ? space : "");
    bind_text(s, 2, purpose);
    bind_text(s, 3, model);
    sqlite3_bind_int64(s, 4, prompt_tokens);
    sqlite3_bind_int64(s, 5, completion_tokens);
    sqlite3_bind_int64(s, 6, latency_ms);
    bind_text(s, 7, outcome);
    bind_text(s, 8, now);
    return step_done(s);
}

int store_llm_usage(struct store *st, const char *space, const char *since,
                    void (*each)(const struct llm_usage *, void *), void *ctx)
{
    sqlite3_stmt *s = stmt_get(st, S_LLM_USAGE);
    int rc;
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, space);
    bind_text(s, 2, since ? since : "");
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct llm_usage u = {col_text(s, 0),
                              col_text(s, 1),
                              (long)sqlite3_column_int64(s, 2),
                              (long)sqlite3_column_int64(s, 3),
                              (long)sqlite3_column_int64(s, 4),
                              (long)sqlite3_column_int64(s, 5),
                              (long)sqlite3_column_int64(s, 6)};
        each(&u, ctx);
    }
    rc = rc == SQLITE_DONE ? STORE_OK : status_of(rc);
    stmt_finish(s);
    return rc;
}

int store_space_counts(struct store *st, void (*each)(const char *, long, long, void *), void *ctx)
{
    sqlite3_stmt *s = stmt_get(st, S_SPACE_COUNTS);
    int rc;
    if (!s)
        return STORE_ERROR;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW)
        each(col_text(s, 0), (long)sqlite3_column_int64(s, 1), (long)sqlite3_column_int64(s, 2),
             ctx);
    rc = rc == SQLITE_DONE ? STORE_OK : status_of(rc);
    stmt_finish(s);
    return rc;
}

int store_job_counts(struct store *st, void (*each)(const char *, const char *, long, void *),
                     void *ctx)
{
    sqlite3_stmt *s = stmt_get(st, S_JOB_COUNTS);
    int rc;
    if (!s)
        return STORE_ERROR;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW)
        each(col_text(s, 0), col_text(s, 1), (long)sqlite3_column_int64(s, 2), ctx);
    rc = rc == SQLITE_DONE ? STORE_OK : status_of(rc);
    stmt_finish(s);
    return rc;
}
