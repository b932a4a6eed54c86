/* store/traces.c: traces and their knowledge log (injections and the
 * evaluations that count into the entries). */
#include "store/store_int.h"

#include <stdlib.h>
#include <string.h>

const char *const store_eval_statuses[5] = {"irrelevant", "unused", "helpful", "harmful",
                                            "neutral"};

int store_trace_put(struct store *st, const char *space, const char *trace_id, const char *task,
                    int *created)
{
    char now[27];
    int rc;
    sqlite3_stmt *s = stmt_get(st, task ? S_TRACE_UPSERT : S_TRACE_INSERT);
    sqlite3_stmt *exists = stmt_get(st, S_TRACE_TASK);
    if (!s || !exists)
        return STORE_ERROR;
    if ((rc = store_begin(st)))
        return rc;
    bind_text(exists, 1, space);
    bind_text(exists, 2, trace_id);
    rc = sqlite3_step(exists);
    stmt_finish(exists);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return tx_end(st, status_of(rc));
    if (created)
        *created = rc == SQLITE_DONE;
    if (rc == SQLITE_ROW && !task)
        return tx_end(st, STORE_OK);
    time_utc_iso_micro(now);
    bind_text(s, 1, space);
    bind_text(s, 2, trace_id);
    if (task) {
        bind_text(s, 3, task);
        bind_text(s, 4, now);
    } else {
        bind_text(s, 3, now);
    }
    return tx_end(st, step_done(s));
}

static void trace_from_row(sqlite3_stmt *s, struct trace_info *t)
{
    t->trace_id = col_text(s, 0);
    t->task = col_text(s, 1);
    t->created_at = col_text(s, 2);
    t->injections = (long)sqlite3_column_int64(s, 3);
    t->pending = (long)sqlite3_column_int64(s, 4);
    for (int i = 0; i < 5; i++)
        t->counts[i] = (long)sqlite3_column_int64(s, 5 + i);
}

int store_trace_get(struct store *st, const char *space, const char *trace_id,
                    void (*each)(const struct trace_info *, void *), void *ctx)
{
    sqlite3_stmt *s = stmt_get(st, S_TRACE_GET);
    int rc;
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, space);
    bind_text(s, 2, trace_id);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        struct trace_info t;
        trace_from_row(s, &t);
        each(&t, ctx);
        rc = STORE_OK;
    } else {
        rc = rc == SQLITE_DONE ? STORE_NOT_FOUND : status_of(rc);
    }
    stmt_finish(s);
    return rc;
}

int store_traces_list(struct store *st, const char *space, long limit, long offset,
                      void (*each)(const struct trace_info *, void *), void *ctx, long *total)
{
    sqlite3_stmt *count = stmt_get(st, S_TRACE_COUNT), *s = stmt_get(st, S_TRACE_LIST);
    int rc;
    if (!count || !s)
        return STORE_ERROR;
    bind_text(count, 1, space);
    rc = sqlite3_step(count);
    *total = rc == SQLITE_ROW ? (long)sqlite3_column_int64(count, 0) : 0;
    stmt_finish(count);
    if (rc != SQLITE_ROW)
        return status_of(rc);
    bind_text(s, 1, space);
    sqlite3_bind_int64(s, 2, limit);
    sqlite3_bind_int64(s, 3, offset);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct trace_info t;
        trace_from_row(s, &t);
        each(&t, ctx);
    }
    rc = rc == SQLITE_DONE ? STORE_OK : status_of(rc);
    stmt_finish(s);
    return rc;
}

int store_log_add(struct store *st, const char *space, const char *trace_id,
                  const char *knowledge_id, const char *goal_id, long sequence, long *log_id)
{
    char now[27];
    int rc;
    sqlite3_stmt *s = stmt_get(st, S_LOG_ADD);
    if (!s)
        return STORE_ERROR;
    if ((rc = store_begin(st)))
        return rc;
    if ((rc = store_trace_put(st, space, trace_id, NULL, NULL)))
        return tx_end(st, rc);
    time_utc_iso_micro(now);
    bind_text(s, 1, space);
    bind_text(s, 2, trace_id);
    bind_text(s, 3, knowledge_id);
    bind_text(s, 4, goal_id ? goal_id : "");
    sqlite3_bind_int64(s, 5, sequence);
    bind_text(s, 6, now);
    rc = step_done(s);
    if (rc == STORE_OK && sqlite3_changes(st->db) == 0)
        rc = STORE_NOT_FOUND;
    if (rc == STORE_OK)
        *log_id = (long)sqlite3_last_insert_rowid(st->db);
    return tx_end(st, rc);
}

static void log_from_row(sqlite3_stmt *s, struct log_entry *e)
{
    e->id = (long)sqlite3_column_int64(s, 0);
    e->trace_id = col_text(s, 1);
    e->knowledge_id = col_text(s, 2);
    e->goal_id = col_text(s, 3);
    e->injected_at_sequence = (long)sqlite3_column_int64(s, 4);
    e->injected_at = col_text(s, 5);
    e->task = col_text(s, 6);
    e->content = col_text(s, 7);
    e->eval_status = (const char *)sqlite3_column_text(s, 8);
    e->eval_reason = (const char *)sqlite3_column_text(s, 9);
    e->evaluated_at = (const char *)sqlite3_column_text(s, 10);
    e->evaluated_at_trigger = (const char *)sqlite3_column_text(s, 11);
}

static int log_rows(sqlite3_stmt *s, void (*each)(const struct log_entry *, void *), void *ctx)
{
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct log_entry e;
        log_from_row(s, &e);
        each(&e, ctx);
    }
    rc = rc == SQLITE_DONE ? STORE_OK : status_of(rc);
    stmt_finish(s);
    return rc;
}

int store_log_each(struct store *st, const char *space, const char *trace_id, int pending_only,
                   long limit, long offset, void (*each)(const struct log_entry *, void *),
                   void *ctx, long *total)
{
    sqlite3_stmt *exists = stmt_get(st, S_TRACE_TASK);
    sqlite3_stmt *s = stmt_get(st, pending_only ? S_LOG_PENDING : S_LOG_ALL);
    sqlite3_stmt *count = stmt_get(st, S_LOG_COUNT);
    int rc;
    if (!s || !exists || !count)
        return STORE_ERROR;
    /* One read transaction: the trace and its log agree. */
    int own_tx = st->tx_depth == 0;
    if (own_tx && (rc = db_exec(st, "BEGIN")))
        return rc;
    bind_text(exists, 1, space);
    bind_text(exists, 2, trace_id);
    rc = sqlite3_step(exists);
    stmt_finish(exists);
    if (rc == SQLITE_ROW) {
        bind_text(count, 1, space);
        bind_text(count, 2, trace_id);
        sqlite3_bind_int(count, 3, pending_only);
        rc = sqlite3_step(count);
        if (total)
            *total = rc == SQLITE_ROW ? (long)sqlite3_column_int64(count, 0) : 0;
        stmt_finish(count);
        if (rc != SQLITE_ROW) {
            rc = status_of(rc);
        } else {
            bind_text(s, 1, space);
            bind_text(s, 2, trace_id);
            sqlite3_bind_int64(s, 3, limit);
            sqlite3_bind_int64(s, 4, offset);
            rc = log_rows(s, each, ctx);
        }
    } else {
        rc = rc == SQLITE_DONE ? STORE_NOT_FOUND : status_of(rc);
    }
    if (own_tx)
        db_exec(st, "COMMIT");
    return rc;
}

int store_log_of_entry(struct store *st, const char *knowledge_id, long limit,
                       void (*each)(const struct log_entry *, void *), void *ctx)
{
    sqlite3_stmt *s = stmt_get(st, S_LOG_ENTRY);
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, knowledge_id);
    sqlite3_bind_int64(s, 2, limit);
    return log_rows(s, each, ctx);
}

/* Count an irrelevant/unused/neutral judgement once per trace. */
static int rollup_metric(struct store *st, const char *space, const char *trace_id,
                         const char *knowledge_id, const char *status, const char *now,
                         int *rolled_up)
{
    enum stmt_id bump = strcmp(status, "irrelevant") == 0 ? S_BUMP_IRRELEVANT
                        : strcmp(status, "unused") == 0   ? S_BUMP_UNUSED
                                                          : S_BUMP_NEUTRAL;
    sqlite3_stmt *ins = stmt_get(st, S_ROLLUP_INSERT), *b = stmt_get(st, bump);
    int rc;
    if (!ins || !b)
        return STORE_ERROR;
    bind_text(ins, 1, space);
    bind_text(ins, 2, trace_id);
    bind_text(ins, 3, knowledge_id);
    bind_text(ins, 4, status);
    bind_text(ins, 5, now);
    if ((rc = step_done(ins)) || sqlite3_changes(st->db) == 0)
        return rc;
    bind_text(b, 1, knowledge_id);
    rc = step_done(b);
    if (rc == STORE_OK)
        *rolled_up = 1;
    return rc;
}

int store_log_evaluate(struct store *st, const char *space, const char *trace_id,
                       const char *knowledge_id, const char *status, const char *reason,
                       const char *trigger, long *log_id, int *rolled_up)
{
    sqlite3_stmt *find = stmt_get(st, S_LOG_FIND_PENDING), *set = stmt_get(st, S_LOG_SET_EVAL);
    sqlite3_stmt *task_q = stmt_get(st, S_TRACE_TASK);
    char now[27], *goal_id = NULL, *task = NULL;
    int rc;
    *rolled_up = 0;
    if (!find || !set || !task_q)
        return STORE_ERROR;
    if ((rc = store_begin(st)))
        return rc;
    bind_text(find, 1, space);
    bind_text(find, 2, trace_id);
    bind_text(find, 3, knowledge_id);
    rc = sqlite3_step(find);
    if (rc == SQLITE_ROW) {
        *log_id = (long)sqlite3_column_int64(find, 0);
        goal_id = col_dup(find, 1);
    }
    stmt_finish(find);
    if (rc != SQLITE_ROW)
        return tx_end(st, rc == SQLITE_DONE ? STORE_NOT_FOUND : status_of(rc));
    time_utc_iso_micro(now);
    sqlite3_bind_int64(set, 1, *log_id);
    bind_text(set, 2, status);
    bind_text(set, 3, reason ? reason : "");
    bind_text(set, 4, now);
    bind_text(set, 5, trigger);
    rc = step_done(set);
    if (rc == STORE_OK && (strcmp(status, "helpful") == 0 || strcmp(status, "harmful") == 0)) {
        /* A case named after the trace: a second verdict of the same kind from
         * the same trace counts nothing. A deleted entry keeps its log only. */
        struct buf case_id;
        int added = 0;
        bind_text(task_q, 1, space);
        bind_text(task_q, 2, trace_id);
        if (sqlite3_step(task_q) == SQLITE_ROW)
            task = col_dup(task_q, 0);
        stmt_finish(task_q);
        buf_init(&case_id, 1024);
        buf_addf(&case_id, "trace:%s", trace_id);
        struct knowledge_case c = {.kind = status,
                                   .case_id = case_id.data,
                                   .scenario = task ? task : "",
                                   .result = reason ? reason : "",
                                   .trace_id = trace_id,
                                   .goal_id = goal_id};
        rc = store_knowledge_add_case(st, space, knowledge_id, &c, "evaluation", &added);
        if (rc == STORE_NOT_FOUND)
            rc = STORE_OK;
        *rolled_up = added;
        buf_release(&case_id);
    } else if (rc == STORE_OK) {
        rc = rollup_metric(st, space, trace_id, knowledge_id, status, now, rolled_up);
    }
    free(goal_id);
    free(task);
    return tx_end(st, rc);
}
