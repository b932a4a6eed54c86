/* traces: the feedback loop's operations (create, list, log, inject, the
 * evaluation prompt and the evaluations), for REST and MCP alike. */
#include "service/traces.h"
#include "service/promote.h"
#include "service/writerate.h"
#include "base/jfield.h"
#include "base/util.h"
#include "domain/evalparse.h"
#include "domain/evalprompt.h"
#include "domain/knowledge_limits.h"
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

#define MAX_OUTPUT_CHARS (512 * 1024)

static const char *const triggers[] = {"goal_completion", "compression", "task_completion"};

static int status_valid(const char *s)
{
    for (int i = 0; i < 5; i++)
        if (strcmp(s, store_eval_statuses[i]) == 0)
            return 1;
    return 0;
}

/* err from a store status about a trace; always -1. */
static int store_fail(int rc, struct error *err)
{
    store_status_error(rc, "Trace", err);
    return -1;
}

int svc_trace_id_check(const char *trace_id, struct error *err)
{
    if (trace_id && id_text_valid(trace_id, 128))
        return 0;
    error_set(err, E_INVALID_REQUEST, NULL,
              "Invalid trace_id: 1 to 128 of A-Z a-z 0-9 . _ : -, not . or ..");
    return -1;
}

static struct json_object *str_or_null(const char *s)
{
    return s ? json_object_new_string(s) : NULL;
}

/* A log entry as the API shows it. */
static struct json_object *log_json(const struct log_entry *e)
{
    struct json_object *o = json_object_new_object(), *result = NULL;
    if (e->eval_status) {
        result = json_object_new_object();
        json_object_object_add(result, "eval_status", json_object_new_string(e->eval_status));
        json_object_object_add(result, "reason",
                               json_object_new_string(e->eval_reason ? e->eval_reason : ""));
    }
    json_object_object_add(o, "knowledge_id", json_object_new_string(e->knowledge_id));
    json_object_object_add(o, "goal_id", json_object_new_string(e->goal_id));
    json_object_object_add(o, "injected_at_sequence",
                           json_object_new_int64(e->injected_at_sequence));
    json_object_object_add(o, "injected_at", json_object_new_string(e->injected_at));
    json_object_object_add(o, "task", json_object_new_string(e->task));
    json_object_object_add(o, "content", json_object_new_string(e->content));
    json_object_object_add(o, "eval_result", result);
    json_object_object_add(o, "evaluated_at", str_or_null(e->evaluated_at));
    json_object_object_add(o, "evaluated_at_trigger", str_or_null(e->evaluated_at_trigger));
    return o;
}

static void add_log(const struct log_entry *e, void *ctx)
{
    json_object_array_add(ctx, log_json(e));
}

static struct json_object *trace_json(const struct trace_info *t)
{
    struct json_object *o = json_object_new_object(), *counts = json_object_new_object();
    for (int i = 0; i < 5; i++)
        json_object_object_add(counts, store_eval_statuses[i], json_object_new_int64(t->counts[i]));
    json_object_object_add(o, "trace_id", json_object_new_string(t->trace_id));
    json_object_object_add(o, "task", json_object_new_string(t->task));
    json_object_object_add(o, "created_at", json_object_new_string(t->created_at));
    json_object_object_add(o, "injections", json_object_new_int64(t->injections));
    json_object_object_add(o, "pending", json_object_new_int64(t->pending));
    json_object_object_add(o, "counts", counts);
    return o;
}

static void keep_trace(const struct trace_info *t, void *ctx)
{
    *(struct json_object **)ctx = trace_json(t);
}

static void add_trace(const struct trace_info *t, void *ctx)
{
    json_object_array_add(ctx, trace_json(t));
}

int svc_trace_create(const struct svc_ctx *c, struct json_object *body, struct json_object **data,
                     struct error *err)
{
    const char *trace_id, *task;
    char generated[40];
    int rc, created;
    *data = NULL;
    if (jf_string(err, body, "trace_id", 0, 128, &trace_id) ||
        jf_string(err, body, "task", 0, LIMIT_CASE_TEXT, &task))
        return -1;
    if (trace_id && svc_trace_id_check(trace_id, err))
        return -1;
    if (!trace_id) {
        id_random(generated, "trace-");
        trace_id = generated;
    }
    rc = store_trace_put(c->st, c->space, trace_id, task ? task : "", &created);
    if (rc == STORE_OK)
        rc = store_trace_get(c->st, c->space, trace_id, keep_trace, data);
    if (rc) {
        json_object_put(*data);
        *data = NULL;
        return store_fail(rc, err);
    }
    json_object_object_add(*data, "created", json_object_new_boolean(created));
    return 0;
}

int svc_trace_list(const struct svc_ctx *c, long limit, long offset, struct json_object **items,
                   long *total, struct error *err)
{
    int rc;
    *items = json_object_new_array();
    *total = 0;
    rc = store_traces_list(c->st, c->space, limit, offset, add_trace, *items, total);
    if (rc) {
        json_object_put(*items);
        *items = NULL;
        return store_fail(rc, err);
    }
    return 0;
}

int svc_trace_get(const struct svc_ctx *c, const char *trace_id, struct json_object **data,
                  struct error *err)
{
    int rc;
    *data = NULL;
    if (svc_trace_id_check(trace_id, err))
        return -1;
    rc = store_trace_get(c->st, c->space, trace_id, keep_trace, data);
    if (rc) {
        json_object_put(*data);
        *data = NULL;
        return store_fail(rc, err);
    }
    return 0;
}

int svc_trace_log(const struct svc_ctx *c, const char *trace_id, int pending_only, long limit,
                  long offset, struct json_object **data, struct error *err)
{
    struct json_object *entries;
    long total = 0;
    int rc;
    *data = NULL;
    if (svc_trace_id_check(trace_id, err))
        return -1;
    entries = json_object_new_array();
    rc = store_log_each(c->st, c->space, trace_id, pending_only, limit, offset, add_log, entries,
                        &total);
    if (rc) {
        json_object_put(entries);
        return store_fail(rc, err);
    }
    *data = json_object_new_object();
    json_object_object_add(*data, "trace_id", json_object_new_string(trace_id));
    json_object_object_add(*data, "entries", entries);
    json_object_object_add(*data, "total", json_object_new_int64(total));
    json_object_object_add(*data, "limit", json_object_new_int64(limit));
    json_object_object_add(*data, "offset", json_object_new_int64(offset));
    return 0;
}

int svc_trace_inject(const struct svc_ctx *c, const char *trace_id, struct json_object *body,
                     struct error *err)
{
    const char *knowledge_id, *goal_id;
    long sequence, log_id;
    int rc;
    if (svc_trace_id_check(trace_id, err) ||
        jf_string(err, body, "knowledge_id", 1, LIMIT_SHORT_TEXT, &knowledge_id) ||
        jf_string(err, body, "goal_id", 0, LIMIT_SHORT_TEXT, &goal_id) ||
        jf_long(err, body, "injected_at_sequence", 0, 1L << 50, 0, &sequence))
        return -1;
    rc = store_log_add(c->st, c->space, trace_id, knowledge_id, goal_id, sequence, &log_id);
    if (rc == STORE_NOT_FOUND) {
        error_set(err, E_NOT_FOUND, NULL, "Knowledge entry not found");
        return -1;
    }
    return rc ? store_fail(rc, err) : 0;
}

/* ---- the evaluation prompt ---- */

struct prompt_ctx {
    struct buf *out;
    const char *lang;
    long n, full; /* entries in the prompt; 1 once one did not fit */
};

static void prompt_entry(const struct log_entry *e, void *arg)
{
    struct prompt_ctx *p = arg;
    struct eval_prompt_item item = {e->knowledge_id, e->task, e->content, e->injected_at_sequence,
                                    e->goal_id};
    /* In order: once one entry does not fit, the later ones are left out too. */
    if (!p->full && eval_prompt_entry(p->out, p->lang, &item) == 0)
        p->n++;
    else
        p->full = 1;
}

static void keep_task(const struct trace_info *t, void *ctx)
{
    *(char **)ctx = xstrdup(t->task);
}

int svc_trace_eval_prompt(const struct svc_ctx *c, const char *trace_id, const char *goal,
                          struct json_object **data, struct error *err)
{
    const char *lang = ui_language(c->accept_language);
    char *task = NULL;
    struct buf prompt;
    struct prompt_ctx p = {NULL, lang, 0, 0};
    long pending = 0;
    int rc;
    *data = NULL;
    if (svc_trace_id_check(trace_id, err))
        return -1;
    buf_init(&prompt, 16 * 1024 * 1024);
    rc = store_trace_get(c->st, c->space, trace_id, keep_task, &task);
    if (rc == STORE_OK) {
        eval_prompt_begin(&prompt, lang, task, goal);
        p.out = &prompt;
        rc = store_log_each(c->st, c->space, trace_id, 1, EVAL_PROMPT_MAX_ENTRIES, 0, prompt_entry,
                            &p, &pending);
        eval_prompt_end(&prompt, lang, p.n, pending - p.n);
    }
    if (rc) {
        store_fail(rc, err);
    } else {
        *data = json_object_new_object();
        json_object_object_add(*data, "trace_id", json_object_new_string(trace_id));
        json_object_object_add(*data, "language", json_object_new_string(lang));
        json_object_object_add(*data, "pending", json_object_new_int64(pending));
        json_object_object_add(*data, "included", json_object_new_int64(p.n));
        json_object_object_add(*data, "omitted", json_object_new_int64(pending - p.n));
        json_object_object_add(*data, "prompt",
                               json_object_new_string_len(prompt.data, (int)prompt.len));
    }
    free(task);
    buf_release(&prompt);
    return rc ? -1 : 0;
}

/* ---- the evaluations ---- */

static struct json_object *unmatched(size_t index, const char *knowledge_id, const char *why)
{
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "index", json_object_new_int64((int64_t)index));
    json_object_object_add(o, "knowledge_id",
                           knowledge_id ? json_object_new_string(knowledge_id) : NULL);
    json_object_object_add(o, "reason", json_object_new_string(why));
    return o;
}

static const char *item_text(struct json_object *item, const char *key, size_t max)
{
    struct json_object *v;
    const char *s;
    if (!json_object_object_get_ex(item, key, &v) || !(s = jf_str(v)))
        return NULL;
    if (strlen(s) != (size_t)json_object_get_string_len(v) || utf8_length(s, strlen(s)) > max)
        return NULL;
    return s;
}

/* The verdicts of body: the structured list or the ones parsed from the
 * evaluator's output (*list, the caller's), and how they were found. */
static int evaluations_of(struct json_object *body, const char *output, struct json_object **list,
                          const char **strategy, struct error *err)
{
    struct json_object *given;
    *list = NULL;
    *strategy = "none";
    if (json_object_object_get_ex(body, "evaluations", &given) && given) {
        if (!json_object_is_type(given, json_type_array)) {
            error_set(err, E_INVALID_REQUEST, NULL, "'evaluations' must be a list");
            return -1;
        }
        *list = json_object_get(given);
        *strategy = "structured";
    } else if (output) {
        enum eval_strategy found = eval_parse(output, strlen(output), list);
        *strategy = eval_strategy_name(found);
        if (found == EVAL_NONE) {
            error_set(err, E_INVALID_REQUEST, NULL,
                      "No evaluation JSON found in 'output' (tried the whole text, a ```json "
                      "block and a bare {...} object with an \"evaluations\" list); nothing "
                      "was changed");
            return -1;
        }
    } else {
        error_set(err, E_INVALID_REQUEST, NULL,
                  "Give 'output' (the evaluator's reply) or "
                  "'evaluations'");
        return -1;
    }
    if (json_object_array_length(*list) > 1000) {
        error_set(err, E_LIMIT_EXCEEDED, NULL, "More than 1000 evaluations");
        return -1;
    }
    return 0;
}

/* Apply every verdict of list inside the open transaction: the applied ones
 * to updated, the others (with why) to missed. A store status. */
static int apply_verdicts(const struct svc_ctx *c, const char *trace_id, const char *trigger,
                          struct json_object *list, struct json_object *updated,
                          struct json_object *missed)
{
    struct json_object *t = NULL;
    int rc = store_trace_get(c->st, c->space, trace_id, keep_trace, &t);
    json_object_put(t);
    if (rc)
        return rc;
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        struct json_object *item = json_object_array_get_idx(list, i), *u;
        const char *kid, *status, *reason;
        long log_id;
        int rolled_up;
        if (!json_object_is_type(item, json_type_object)) {
            json_object_array_add(missed, unmatched(i, NULL, "not an object"));
            continue;
        }
        kid = item_text(item, "knowledge_id", LIMIT_SHORT_TEXT);
        status = item_text(item, "eval_status", 32);
        reason = item_text(item, "reason", LIMIT_CASE_TEXT);
        if (!kid) {
            json_object_array_add(missed, unmatched(i, NULL, "'knowledge_id' missing"));
            continue;
        }
        if (!status || !status_valid(status)) {
            json_object_array_add(missed, unmatched(i, kid,
                                                    "unknown eval_status (irrelevant, unused, "
                                                    "helpful, harmful or neutral)"));
            continue;
        }
        rc = store_log_evaluate(c->st, c->space, trace_id, kid, status, reason, trigger, &log_id,
                                &rolled_up);
        if (rc == STORE_NOT_FOUND) {
            json_object_array_add(missed,
                                  unmatched(i, kid, "no pending injection of it in this trace"));
            continue;
        }
        /* a pending proposal served to the trace: its verdicts are its
         * evidence (promote.h), counted once per trace and kind */
        if (rc == STORE_OK && promote_is_proposal(kid))
            rc = promote_counted(c, trace_id, kid, status, &rolled_up);
        if (rc)
            return rc;
        u = json_object_new_object();
        json_object_object_add(u, "index", json_object_new_int64((int64_t)i));
        json_object_object_add(u, "knowledge_id", json_object_new_string(kid));
        json_object_object_add(u, "eval_status", json_object_new_string(status));
        json_object_object_add(u, "counted", json_object_new_boolean(rolled_up));
        json_object_array_add(updated, u);
    }
    return STORE_OK;
}

/* After the verdicts are stored: each pending proposal that got a helpful
 * or harmful one is decided if its evidence now decides it (its own
 * transaction: the verdicts stand whatever happens to it), the outcome in
 * the item's "promotion". A proposal named twice is decided once. */
static void promote_after_verdicts(const struct svc_ctx *c, struct json_object *updated)
{
    for (size_t i = 0; i < json_object_array_length(updated); i++) {
        struct json_object *u = json_object_array_get_idx(updated, i), *outcome = NULL;
        const char *kid = json_object_get_string(json_object_object_get(u, "knowledge_id"));
        const char *status = json_object_get_string(json_object_object_get(u, "eval_status"));
        int again = 0;
        struct error err;
        if (!promote_is_proposal(kid) ||
            (strcmp(status, "helpful") != 0 && strcmp(status, "harmful") != 0))
            continue;
        for (size_t j = 0; j < i && !again; j++) {
            struct json_object *v = json_object_array_get_idx(updated, j);
            again =
                json_object_object_get_ex(v, "promotion", NULL) &&
                strcmp(kid, json_object_get_string(json_object_object_get(v, "knowledge_id"))) == 0;
        }
        if (again)
            continue;
        error_init(&err);
        if (promote_decide(c, kid, &outcome, &err) == 0)
            json_object_object_add(u, "promotion", outcome);
        error_release(&err);
    }
}

int svc_trace_evaluate(const struct svc_ctx *c, const char *trace_id, struct json_object *body,
                       struct json_object **data, struct error *err)
{
    struct json_object *list = NULL, *updated = NULL, *missed = NULL;
    const char *trigger, *output, *strategy;
    int rc, known = 0, ret = -1;
    *data = NULL;
    if (svc_trace_id_check(trace_id, err) || jf_string(err, body, "trigger", 1, 64, &trigger) ||
        jf_string(err, body, "output", 0, MAX_OUTPUT_CHARS, &output))
        return -1;
    for (size_t i = 0; i < sizeof triggers / sizeof *triggers; i++)
        known |= strcmp(trigger, triggers[i]) == 0;
    if (!known) {
        error_set(err, E_INVALID_REQUEST, NULL,
                  "'trigger' must be goal_completion, compression or task_completion");
        return -1;
    }
    if (evaluations_of(body, output, &list, &strategy, err) ||
        write_admit(c, (long)json_object_array_length(list), err))
        goto out;
    /* All or nothing: one transaction for every verdict of this reply. */
    updated = json_object_new_array();
    missed = json_object_new_array();
    if ((rc = store_begin(c->st))) {
        store_fail(rc, err);
        goto out;
    }
    if ((rc = apply_verdicts(c, trace_id, trigger, list, updated, missed))) {
        store_rollback(c->st);
        store_fail(rc, err);
        goto out;
    }
    if ((rc = store_commit(c->st))) {
        store_fail(rc, err);
        goto out;
    }
    promote_after_verdicts(c, updated);
    *data = json_object_new_object();
    json_object_object_add(*data, "trace_id", json_object_new_string(trace_id));
    json_object_object_add(*data, "trigger", json_object_new_string(trigger));
    json_object_object_add(*data, "strategy", json_object_new_string(strategy));
    json_object_object_add(*data, "updated", json_object_get(updated));
    json_object_object_add(*data, "unmatched", json_object_get(missed));
    ret = 0;
out:
    json_object_put(updated);
    json_object_put(missed);
    json_object_put(list);
    return ret;
}
