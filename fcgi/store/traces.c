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
    struct cursor *exists;
    if ((rc = store_begin(st)))
        return rc;
    if (!(exists = stmt_bind(st, S_TRACE_TASK, "tt", space, trace_id)))
        return store_tx_end(st, STORE_ERROR);
    rc = stmt_row_end(exists, stmt_step(exists));
    if (rc != STORE_OK && rc != STORE_NOT_FOUND)
        return store_tx_end(st, rc);
    if (created)
        *created = rc == STORE_NOT_FOUND;
    if (rc == STORE_OK && !task)
        return store_tx_end(st, STORE_OK);
    time_utc_iso_micro(now);
    if (task)
        return store_tx_end(st, stmt_run(st, S_TRACE_UPSERT, "tttt", space, trace_id, task, now));
    return store_tx_end(st, stmt_run(st, S_TRACE_INSERT, "ttt", space, trace_id, now));
}

static void trace_from_row(struct cursor *s, struct trace_info *t)
{
    t->trace_id = stmt_col_text(s, 0);
    t->task = stmt_col_text(s, 1);
    t->created_at = stmt_col_text(s, 2);
    t->injections = (long)stmt_col_int64(s, 3);
    t->pending = (long)stmt_col_int64(s, 4);
    for (int i = 0; i < 5; i++)
        t->counts[i] = (long)stmt_col_int64(s, 5 + i);
}

int store_trace_get(struct store *st, const char *space, const char *trace_id,
                    void (*each)(const struct trace_info *, void *), void *ctx)
{
    struct cursor *s = stmt_bind(st, S_TRACE_GET, "tt", space, trace_id);
    int rc;
    if (!s)
        return STORE_ERROR;
    if ((rc = stmt_step(s)) == STEP_ROW) {
        struct trace_info t;
        trace_from_row(s, &t);
        each(&t, ctx);
    }
    return stmt_row_end(s, rc);
}

int store_traces_list(struct store *st, const char *space, long limit, long offset,
                      void (*each)(const struct trace_info *, void *), void *ctx, long *total)
{
    struct cursor *count = stmt_bind(st, S_TRACE_COUNT, "t", space), *s;
    int rc;
    *total = 0;
    if (!count)
        return STORE_ERROR;
    if ((rc = stmt_row_count(count, total)))
        return rc;
    if (!(s = stmt_bind(st, S_TRACE_LIST, "tll", space, limit, offset)))
        return STORE_ERROR;
    while ((rc = stmt_step(s)) == STEP_ROW) {
        struct trace_info t;
        trace_from_row(s, &t);
        each(&t, ctx);
    }
    return stmt_rows_end(s, rc);
}

/* Log an injection of id (an entry; a proposal when task is not NULL,
 * with its task and content as served) into the trace, created if missing. */
static int log_add(struct store *st, const char *space, const char *trace_id, const char *id,
                   const char *goal_id, long sequence, const char *task, const char *content,
                   long *log_id)
{
    char now[27];
    int rc;
    if ((rc = store_begin(st)))
        return rc;
    if ((rc = store_trace_put(st, space, trace_id, NULL, NULL)))
        return store_tx_end(st, rc);
    time_utc_iso_micro(now);
    goal_id = goal_id ? goal_id : "";
    /* No row: not an active entry (a pending proposal) of the space. */
    rc = task ? stmt_returning(st, S_LOG_ADD_PROPOSAL, log_id, "ttttlttt", space, trace_id, id,
                               goal_id, sequence, now, task, content)
              : stmt_returning(st, S_LOG_ADD, log_id, "ttttlt", space, trace_id, id, goal_id,
                               sequence, now);
    return store_tx_end(st, rc);
}

int store_log_add(struct store *st, const char *space, const char *trace_id,
                  const char *knowledge_id, const char *goal_id, long sequence, long *log_id)
{
    return log_add(st, space, trace_id, knowledge_id, goal_id, sequence, NULL, NULL, log_id);
}

int store_log_add_proposal(struct store *st, const char *space, const char *trace_id,
                           const char *id, const char *goal_id, long sequence, const char *task,
                           const char *content, long *log_id)
{
    return log_add(st, space, trace_id, id, goal_id, sequence, task ? task : "", content, log_id);
}

void store_log_from_row(struct cursor *s, struct log_entry *e)
{
    e->id = (long)stmt_col_int64(s, 0);
    e->trace_id = stmt_col_text(s, 1);
    e->knowledge_id = stmt_col_text(s, 2);
    e->goal_id = stmt_col_text(s, 3);
    e->injected_at_sequence = (long)stmt_col_int64(s, 4);
    e->injected_at = stmt_col_text(s, 5);
    e->task = stmt_col_text(s, 6);
    e->content = stmt_col_text(s, 7);
    e->eval_status = stmt_col_opt(s, 8);
    e->eval_reason = stmt_col_opt(s, 9);
    e->evaluated_at = stmt_col_opt(s, 10);
    e->evaluated_at_trigger = stmt_col_opt(s, 11);
}

/* Pass every row of s (bound; NULL when it did not prepare) to each. */
static int log_rows(struct cursor *s, void (*each)(const struct log_entry *, void *), void *ctx)
{
    int rc;
    if (!s)
        return STORE_ERROR;
    while ((rc = stmt_step(s)) == STEP_ROW) {
        struct log_entry e;
        store_log_from_row(s, &e);
        each(&e, ctx);
    }
    return stmt_rows_end(s, rc);
}

int store_log_each(struct store *st, const char *space, const char *trace_id, int pending_only,
                   long limit, long offset, void (*each)(const struct log_entry *, void *),
                   void *ctx, long *total)
{
    struct cursor *exists, *count;
    long n = 0;
    int rc;
    /* One read transaction: the trace and its log agree. */
    int own_tx = st->tx_depth == 0;
    if (own_tx && (rc = store_db_exec(st, "BEGIN")))
        return rc;
    if (!(exists = stmt_bind(st, S_TRACE_TASK, "tt", space, trace_id)))
        rc = STORE_ERROR;
    else
        rc = stmt_row_end(exists, stmt_step(exists));
    if (rc == STORE_OK) {
        count = stmt_bind(st, S_LOG_COUNT, "tti", space, trace_id, pending_only);
        rc = count ? stmt_row_count(count, &n) : STORE_ERROR;
        if (total)
            *total = n;
    }
    if (rc == STORE_OK)
        rc = log_rows(stmt_bind(st, pending_only ? S_LOG_PENDING : S_LOG_ALL, "ttll", space,
                                trace_id, limit, offset),
                      each, ctx);
    if (own_tx)
        store_db_exec(st, "COMMIT");
    return rc;
}

int store_log_of_entry(struct store *st, const char *knowledge_id, long limit,
                       void (*each)(const struct log_entry *, void *), void *ctx)
{
    return log_rows(stmt_bind(st, S_LOG_ENTRY, "tl", knowledge_id, limit), each, ctx);
}

/* Count an irrelevant/unused/neutral judgement once per trace. */
static int rollup_metric(struct store *st, const char *space, const char *trace_id,
                         const char *knowledge_id, const char *status, const char *now,
                         int *rolled_up)
{
    enum stmt_id bump = strcmp(status, "irrelevant") == 0 ? S_BUMP_IRRELEVANT
                        : strcmp(status, "unused") == 0   ? S_BUMP_UNUSED
                                                          : S_BUMP_NEUTRAL;
    int rc = stmt_run(st, S_ROLLUP_INSERT, "ttttt", space, trace_id, knowledge_id, status, now);
    if (rc || stmt_rows_changed(st) == 0)
        return rc;
    rc = stmt_run(st, bump, "t", knowledge_id);
    if (rc == STORE_OK)
        *rolled_up = 1;
    return rc;
}

int store_log_evaluate(struct store *st, const char *space, const char *trace_id,
                       const char *knowledge_id, const char *status, const char *reason,
                       const char *trigger, long *log_id, int *rolled_up)
{
    struct cursor *find, *task_q;
    char now[27], *goal_id = NULL, *task = NULL;
    int rc;
    *rolled_up = 0;
    if ((rc = store_begin(st)))
        return rc;
    if (!(find = stmt_bind(st, S_LOG_FIND_PENDING, "ttt", space, trace_id, knowledge_id)))
        return store_tx_end(st, STORE_ERROR);
    if ((rc = stmt_step(find)) == STEP_ROW) {
        *log_id = (long)stmt_col_int64(find, 0);
        goal_id = stmt_col_dup(find, 1);
    }
    if ((rc = stmt_row_end(find, rc)))
        return store_tx_end(st, rc);
    time_utc_iso_micro(now);
    rc = stmt_run(st, S_LOG_SET_EVAL, "ltttt", *log_id, status, reason ? reason : "", now, trigger);
    if (rc == STORE_OK && (strcmp(status, "helpful") == 0 || strcmp(status, "harmful") == 0)) {
        /* A case named after the trace: a second verdict of the same kind from
         * the same trace counts nothing. A deleted entry keeps its log only. */
        struct buf case_id;
        int added = 0;
        if ((task_q = stmt_bind(st, S_TRACE_TASK, "tt", space, trace_id))) {
            if (stmt_step(task_q) == STEP_ROW)
                task = stmt_col_dup(task_q, 0);
            stmt_finish(task_q);
        }
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
    return store_tx_end(st, rc);
}
