/* store/ledger.c: the audit trail, the LLM usage ledger and the counts
 * the metrics page shows. */
#include "store/store_int.h"

#include <string.h>

int store_audit_at(struct store *st, const char *now, const char *space, const char *actor,
                   const char *action, const char *target)
{
    int rc;
    target = target ? target : "";
    rc = stmt_run(st, S_AUDIT, "ttttt", now, space, actor, action, target);
    if (rc == STORE_OK && st->audit_hook) {
        const char *fields[] = {now, space, actor, action, target};
        size_t len = st->audit_pending.len;
        for (int i = 0; i < 5; i++)
            if (buf_add(&st->audit_pending, fields[i], strlen(fields[i]) + 1)) {
                buf_truncate(&st->audit_pending, len); /* too many rows: the log misses these */
                break;
            }
        if (st->tx_depth == 0)
            store_audit_flush(st);
    }
    return rc;
}

int store_audit(struct store *st, const char *space, const char *actor, const char *action,
                const char *target)
{
    char now[20];
    time_utc_text(now);
    return store_audit_at(st, now, space, actor, action, target);
}

int store_llm_call_add(struct store *st, const char *space, const char *purpose, const char *model,
                       long prompt_tokens, long completion_tokens, long latency_ms,
                       const char *outcome)
{
    char now[27];
    time_utc_iso_micro(now);
    return stmt_run(st, S_LLM_CALL_ADD, "tttllltt", space ? space : "", purpose, model,
                    prompt_tokens, completion_tokens, latency_ms, outcome, now);
}

int store_llm_usage(struct store *st, const char *space, const char *since,
                    void (*each)(const struct llm_usage *, void *), void *ctx)
{
    struct cursor *s = stmt_bind(st, S_LLM_USAGE, "tt", space, since ? since : "");
    int rc;
    if (!s)
        return STORE_ERROR;
    while ((rc = stmt_step(s)) == STEP_ROW) {
        struct llm_usage u = {stmt_col_text(s, 0),        stmt_col_text(s, 1),
                              (long)stmt_col_int64(s, 2), (long)stmt_col_int64(s, 3),
                              (long)stmt_col_int64(s, 4), (long)stmt_col_int64(s, 5),
                              (long)stmt_col_int64(s, 6)};
        each(&u, ctx);
    }
    return stmt_rows_end(s, rc);
}

int store_space_counts(struct store *st, void (*each)(const char *, long, long, void *), void *ctx)
{
    struct cursor *s = stmt_get(st, S_SPACE_COUNTS);
    int rc;
    if (!s)
        return STORE_ERROR;
    while ((rc = stmt_step(s)) == STEP_ROW)
        each(stmt_col_text(s, 0), (long)stmt_col_int64(s, 1), (long)stmt_col_int64(s, 2), ctx);
    return stmt_rows_end(s, rc);
}

int store_overview_counts(struct store *st, const char *space, const char *since,
                          struct store_overview_counts *out)
{
    struct cursor *s = stmt_bind(st, S_OVERVIEW_CATEGORIES, "t", space);
    int rc;
    memset(out, 0, sizeof *out);
    if (!s)
        return STORE_ERROR;
    while ((rc = stmt_step(s)) == STEP_ROW) {
        long n = (long)stmt_col_int64(s, 1);
        if (strcmp(stmt_col_text(s, 0), "rules") == 0)
            out->rules = n;
        else
            out->experiences = n;
    }
    if ((rc = stmt_rows_end(s, rc)))
        return rc;
    if (!(s = stmt_bind(st, S_OVERVIEW_TRACES, "tt", space, since)))
        return STORE_ERROR;
    if ((rc = stmt_step(s)) == STEP_ROW) {
        out->traces = (long)stmt_col_int64(s, 0);
        out->traces_since = (long)stmt_col_int64(s, 1);
    }
    return stmt_rows_end(s, rc);
}

int store_overview_list(struct store *st, const char *space, enum store_overview_list which,
                        long limit, void (*each)(const struct overview_row *, void *), void *ctx)
{
    static const enum stmt_id ids[] = {S_OVERVIEW_RECENT, S_OVERVIEW_INJECTED, S_OVERVIEW_HARMFUL};
    struct cursor *s = stmt_bind(st, ids[which], "tl", space, limit);
    int rc;
    if (!s)
        return STORE_ERROR;
    while ((rc = stmt_step(s)) == STEP_ROW) {
        struct overview_row r = {stmt_col_text(s, 0), stmt_col_text(s, 1),
                                 stmt_col_text(s, 2), stmt_col_text(s, 3),
                                 stmt_col_text(s, 4), (long)stmt_col_int64(s, 5)};
        each(&r, ctx);
    }
    return stmt_rows_end(s, rc);
}

int store_job_counts(struct store *st, void (*each)(const char *, const char *, long, void *),
                     void *ctx)
{
    struct cursor *s = stmt_get(st, S_JOB_COUNTS);
    int rc;
    if (!s)
        return STORE_ERROR;
    while ((rc = stmt_step(s)) == STEP_ROW)
        each(stmt_col_text(s, 0), stmt_col_text(s, 1), (long)stmt_col_int64(s, 2), ctx);
    return stmt_rows_end(s, rc);
}
