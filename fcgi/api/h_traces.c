/* h_traces: the feedback loop of seed 000 over HTTP. A trace (an agent's
 * task) has a knowledge log of injections; an evaluator's verdicts update the
 * log and roll up into the entries' counters, which the next search ranks by. */
#include "domain/evalparse.h"
#include "domain/evalprompt.h"
#include "api/handlers.h"
#include "base/jfield.h"
#include "domain/knowledge_limits.h"
#include "store/store.h"
#include "base/util.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OUTPUT_CHARS (512 * 1024)
#define LOG_PAGE_DEFAULT 100
#define LOG_PAGE_MAX 1000

static const char *const triggers[] = {"goal_completion", "compression", "task_completion"};

static int status_valid(const char *s)
{
    for (int i = 0; i < 5; i++)
        if (strcmp(s, store_eval_statuses[i]) == 0)
            return 1;
    return 0;
}

/* The {trace_id} of the path, or INVALID_REQUEST. */
static const char *trace_param_or_400(struct request *req, struct response *res)
{
    if (!id_text_valid(req->params[0], 128)) {
        reply_error(res, 200, E_INVALID_REQUEST,
                    "Invalid trace_id: 1 to 128 of A-Z a-z 0-9 . _ : -, not . or ..");
        return NULL;
    }
    return req->params[0];
}

static struct json_object *str_or_null(const char *s)
{
    return s ? json_object_new_string(s) : NULL;
}

/* A log entry exactly in the seed's shape. */
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

/* ---- POST /api/traces, GET /api/traces, GET /api/traces/{trace_id} ---- */

void h_traces_create(struct request *req, struct response *res)
{
    struct json_object *body = http_body_json_or_400(req, res), *t = NULL;
    const char *trace_id, *task;
    char generated[40];
    int rc, created;
    if (!body)
        return;
    if (jf_string_or_400(res, body, "trace_id", 0, 128, &trace_id) ||
        jf_string_or_400(res, body, "task", 0, LIMIT_CASE_TEXT, &task))
        goto out;
    if (trace_id && !id_text_valid(trace_id, 128)) {
        reply_error(res, 200, E_INVALID_REQUEST,
                    "Invalid trace_id: 1 to 128 of A-Z a-z 0-9 . _ : -, not . or ..");
        goto out;
    }
    if (!trace_id) {
        unsigned char rnd[8];
        randombytes_buf(rnd, sizeof rnd);
        memcpy(generated, "trace-", 6);
        sodium_bin2hex(generated + 6, 17, rnd, sizeof rnd);
        trace_id = generated;
    }
    rc = store_trace_put(req->store, req->who.space, trace_id, task ? task : "", &created);
    if (rc == STORE_OK)
        rc = store_trace_get(req->store, req->who.space, trace_id, keep_trace, &t);
    if (rc) {
        reply_store_error(res, rc, "Trace");
    } else {
        json_object_object_add(t, "created", json_object_new_boolean(created));
        reply_data(res, t);
    }
out:
    json_object_put(body);
}

void h_traces_list(struct request *req, struct response *res)
{
    struct json_object *items;
    long limit, offset, total = 0;
    int rc;
    if (http_query_long_or_400(req, res, "limit", 20, 1, 100, &limit) ||
        http_query_long_or_400(req, res, "offset", 0, 0, 1000000000L, &offset))
        return;
    items = json_object_new_array();
    rc = store_traces_list(req->store, req->who.space, limit, offset, add_trace, items, &total);
    if (rc) {
        json_object_put(items);
        reply_store_error(res, rc, "Trace");
        return;
    }
    reply_page(res, items, total, limit, offset);
}

void h_traces_get(struct request *req, struct response *res)
{
    struct json_object *t = NULL;
    const char *trace_id = trace_param_or_400(req, res);
    int rc;
    if (!trace_id)
        return;
    rc = store_trace_get(req->store, req->who.space, trace_id, keep_trace, &t);
    if (rc)
        reply_store_error(res, rc, "Trace");
    else
        reply_data(res, t);
}

/* ---- the knowledge log ---- */

/* The knowledge log, a page at a time: ?limit (1..1000, default 100) and
 * ?offset; total counts them all, so a small log is one whole page. */
static void reply_log(struct request *req, struct response *res, int pending_only)
{
    struct json_object *entries;
    const char *trace_id = trace_param_or_400(req, res);
    long limit, offset, total = 0;
    int rc;
    if (!trace_id ||
        http_query_long_or_400(req, res, "limit", LOG_PAGE_DEFAULT, 1, LOG_PAGE_MAX, &limit) ||
        http_query_long_or_400(req, res, "offset", 0, 0, 1000000000L, &offset))
        return;
    entries = json_object_new_array();
    rc = store_log_each(req->store, req->who.space, trace_id, pending_only, limit, offset, add_log,
                        entries, &total);
    if (rc) {
        json_object_put(entries);
        reply_store_error(res, rc, "Trace");
        return;
    }
    struct json_object *data = json_object_new_object();
    json_object_object_add(data, "trace_id", json_object_new_string(trace_id));
    json_object_object_add(data, "entries", entries);
    json_object_object_add(data, "total", json_object_new_int64(total));
    json_object_object_add(data, "limit", json_object_new_int64(limit));
    json_object_object_add(data, "offset", json_object_new_int64(offset));
    reply_data(res, data);
}

void h_traces_log(struct request *req, struct response *res)
{
    reply_log(req, res, 0);
}

void h_traces_pending(struct request *req, struct response *res)
{
    reply_log(req, res, 1);
}

void h_traces_inject(struct request *req, struct response *res)
{
    struct json_object *body = http_body_json_or_400(req, res);
    const char *trace_id = body ? trace_param_or_400(req, res) : NULL, *knowledge_id, *goal_id;
    long sequence, log_id;
    int rc;
    if (!trace_id)
        goto out;
    if (jf_string_or_400(res, body, "knowledge_id", 1, LIMIT_SHORT_TEXT, &knowledge_id) ||
        jf_string_or_400(res, body, "goal_id", 0, LIMIT_SHORT_TEXT, &goal_id) ||
        jf_long_or_400(res, body, "injected_at_sequence", 0, 1L << 50, 0, &sequence))
        goto out;
    rc = store_log_add(req->store, req->who.space, trace_id, knowledge_id, goal_id, sequence,
                       &log_id);
    if (rc == STORE_NOT_FOUND)
        reply_error(res, 200, E_NOT_FOUND, "Knowledge entry not found");
    else if (rc)
        reply_store_error(res, rc, "Trace");
    else
        reply_log(req, res, 0);
out:
    json_object_put(body);
}

/* ---- GET /api/traces/{trace_id}/eval_prompt ---- */

struct prompt_ctx {
    struct buf *out;
    const char *lang;
    long n, full; /* entries in the prompt; 1 once one did not fit */
};

static void prompt_entry(const struct log_entry *e, void *arg)
{
    struct prompt_ctx *p = arg;
    /* In order: once one entry does not fit, the later ones are left out too. */
    if (!p->full && eval_prompt_entry(p->out, p->lang, e) == 0)
        p->n++;
    else
        p->full = 1;
}

static void keep_task(const struct trace_info *t, void *ctx)
{
    *(char **)ctx = xstrdup(t->task);
}

void h_traces_eval_prompt(struct request *req, struct response *res)
{
    const char *trace_id = trace_param_or_400(req, res), *goal;
    const char *lang = http_language(req);
    char *task = NULL;
    struct buf prompt;
    struct prompt_ctx p;
    long pending = 0;
    int rc;
    if (!trace_id)
        return;
    goal = http_query(req, "goal");
    buf_init(&prompt, 16 * 1024 * 1024);
    rc = store_trace_get(req->store, req->who.space, trace_id, keep_task, &task);
    if (rc == STORE_OK) {
        eval_prompt_begin(&prompt, lang, task, goal);
        p = (struct prompt_ctx){&prompt, lang, 0, 0};
        rc = store_log_each(req->store, req->who.space, trace_id, 1, EVAL_PROMPT_MAX_ENTRIES, 0,
                            prompt_entry, &p, &pending);
        eval_prompt_end(&prompt, lang, p.n, pending - p.n);
    }
    if (rc) {
        reply_store_error(res, rc, "Trace");
    } else {
        struct json_object *data = json_object_new_object();
        json_object_object_add(data, "trace_id", json_object_new_string(trace_id));
        json_object_object_add(data, "language", json_object_new_string(lang));
        json_object_object_add(data, "pending", json_object_new_int64(pending));
        json_object_object_add(data, "included", json_object_new_int64(p.n));
        json_object_object_add(data, "omitted", json_object_new_int64(pending - p.n));
        json_object_object_add(data, "prompt",
                               json_object_new_string_len(prompt.data, (int)prompt.len));
        reply_data(res, data);
    }
    free(task);
    buf_release(&prompt);
}

/* ---- POST /api/traces/{trace_id}/evaluations ---- */

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

void h_traces_evaluate(struct request *req, struct response *res)
{
    struct json_object *body = http_body_json_or_400(req, res), *list = NULL, *given;
    struct json_object *updated = NULL, *missed = NULL;
    const char *trace_id = body ? trace_param_or_400(req, res) : NULL, *trigger, *output;
    const char *strategy = "none";
    int rc, known = 0;
    if (!trace_id)
        goto out;
    if (jf_string_or_400(res, body, "trigger", 1, 64, &trigger) ||
        jf_string_or_400(res, body, "output", 0, MAX_OUTPUT_CHARS, &output))
        goto out;
    for (size_t i = 0; i < sizeof triggers / sizeof *triggers; i++)
        known |= strcmp(trigger, triggers[i]) == 0;
    if (!known) {
        reply_error(res, 200, E_INVALID_REQUEST,
                    "'trigger' must be goal_completion, compression or task_completion");
        goto out;
    }
    if (json_object_object_get_ex(body, "evaluations", &given) && given) {
        if (!json_object_is_type(given, json_type_array)) {
            reply_error(res, 200, E_INVALID_REQUEST, "'evaluations' must be a list");
            goto out;
        }
        list = json_object_get(given);
        strategy = "structured";
    } else if (output) {
        enum eval_strategy found = eval_parse(output, strlen(output), &list);
        strategy = eval_strategy_name(found);
        if (found == EVAL_NONE) {
            reply_error(res, 200, E_INVALID_REQUEST,
                        "No evaluation JSON found in 'output' (tried the whole text, a ```json "
                        "block and a bare {...} object with an \"evaluations\" list); nothing "
                        "was changed");
            goto out;
        }
    } else {
        reply_error(res, 200, E_INVALID_REQUEST,
                    "Give 'output' (the evaluator's reply) or "
                    "'evaluations'");
        goto out;
    }
    if (json_object_array_length(list) > 1000) {
        reply_error(res, 200, E_LIMIT_EXCEEDED, "More than 1000 evaluations");
        goto out;
    }
    /* All or nothing: one transaction for every verdict of this reply. */
    updated = json_object_new_array();
    missed = json_object_new_array();
    if ((rc = store_begin(req->store)))
        goto store_fail;
    {
        struct json_object *t = NULL;
        rc = store_trace_get(req->store, req->who.space, trace_id, keep_trace, &t);
        json_object_put(t);
        if (rc)
            goto rollback;
    }
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        struct json_object *item = json_object_array_get_idx(list, i);
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
        rc = store_log_evaluate(req->store, req->who.space, trace_id, kid, status, reason, trigger,
                                &log_id, &rolled_up);
        if (rc == STORE_NOT_FOUND) {
            json_object_array_add(missed,
                                  unmatched(i, kid, "no pending injection of it in this trace"));
            rc = STORE_OK;
            continue;
        }
        if (rc)
            goto rollback;
        struct json_object *u = json_object_new_object();
        json_object_object_add(u, "index", json_object_new_int64((int64_t)i));
        json_object_object_add(u, "knowledge_id", json_object_new_string(kid));
        json_object_object_add(u, "eval_status", json_object_new_string(status));
        json_object_object_add(u, "counted", json_object_new_boolean(rolled_up));
        json_object_array_add(updated, u);
    }
    if ((rc = store_commit(req->store)))
        goto store_fail;
    {
        struct json_object *data = json_object_new_object();
        json_object_object_add(data, "trace_id", json_object_new_string(trace_id));
        json_object_object_add(data, "trigger", json_object_new_string(trigger));
        json_object_object_add(data, "strategy", json_object_new_string(strategy));
        json_object_object_add(data, "updated", json_object_get(updated));
        json_object_object_add(data, "unmatched", json_object_get(missed));
        reply_data(res, data);
    }
    goto out;
rollback:
    store_rollback(req->store);
store_fail:
    reply_store_error(res, rc, "Trace");
out:
    json_object_put(updated);
    json_object_put(missed);
    json_object_put(list);
    json_object_put(body);
}
