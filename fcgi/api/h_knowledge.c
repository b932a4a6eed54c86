/* h_knowledge: the entry view of seed 003 — list, create, get, update
 * (helpful/harmful cases, score, evolve feedback), delete, batch feedback,
 * revisions and revert. */
#include "service/auth.h"
#include "base/config.h"
#include "service/evolve.h"
#include "llm/llm.h"
#include "api/handlers.h"
#include "base/jfield.h"
#include "domain/knowledge_limits.h"
#include "domain/paths.h"
#include "store/store.h"
#include "base/util.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#define WHAT "Knowledge entry"

/* ---- shared pieces ---- */

/* JSON array text of a validated list of strings (a lone string is one item). */
static char *list_text(struct json_object *list)
{
    struct json_object *arr;
    char *text;
    if (!list)
        return xstrdup("[]");
    if (json_object_is_type(list, json_type_string)) {
        arr = json_object_new_array();
        json_object_array_add(arr, json_object_get(list));
    } else {
        arr = json_object_get(list);
    }
    text = xstrdup(json_text(arr));
    json_object_put(arr);
    return text;
}

/* tags_type as a bitmask, from a JSON list (validated here). */
static int types_or_400(struct response *res, struct json_object *list, unsigned *out)
{
    *out = 0;
    for (size_t i = 0; list && i < json_object_array_length(list); i++) {
        const char *name = json_object_get_string(json_object_array_get_idx(list, i));
        unsigned bit = knowledge_type_bit(name);
        if (!bit) {
            reply_error(res, 200, E_INVALID_REQUEST,
                        "Unknown tags_type '%s' (expected tool, usecase, definition, plan, "
                        "strategy)",
                        name);
            return -1;
        }
        *out |= bit;
    }
    return 0;
}

/* Reply with the entry id of the caller's space, histories included. */
static void reply_entry(struct request *req, struct response *res, const char *id,
                        struct json_object *extra_key_value_pairs)
{
    struct knowledge k;
    int rc;
    /* One snapshot (one read transaction) for the entry and its histories. */
    store_read_begin(req->store);
    rc = store_knowledge_get(req->store, req->who.space, id, 0, &k);
    if (rc) {
        store_read_end(req->store);
        json_object_put(extra_key_value_pairs);
        reply_store_error(res, rc, WHAT);
        return;
    }
    struct json_object *o = knowledge_to_json(&k, req->store);
    store_read_end(req->store);
    if (extra_key_value_pairs) {
        json_object_object_foreach(extra_key_value_pairs, key, val)
            json_object_object_add(o, key, json_object_get(val));
        json_object_put(extra_key_value_pairs);
    }
    knowledge_release(&k);
    reply_data(res, o);
}

/* Fetch the entry of the request's {id} in any status, or reply NOT_FOUND. */
static int entry_or_404(struct request *req, struct response *res, int any_status,
                        struct knowledge *k)
{
    int rc = store_knowledge_get(req->store, req->who.space, req->params[0], any_status, k);
    if (rc) {
        reply_store_error(res, rc, WHAT);
        return -1;
    }
    return 0;
}

/* ---- GET /api/knowledge ---- */

struct list_ctx {
    struct json_object *items;
};

static int list_add(const struct knowledge *k, void *ctx)
{
    struct list_ctx *lc = ctx;
    json_object_array_add(lc->items, knowledge_to_json(k, NULL));
    return 0;
}

void h_knowledge_list(struct request *req, struct response *res)
{
    struct knowledge_filter f = {0};
    struct list_ctx lc;
    long total = 0;
    int rc;

    if (http_query_long_or_400(req, res, "limit", 10, 1, 100, &f.limit) ||
        http_query_long_or_400(req, res, "offset", 0, 0, 1000000000L, &f.offset) ||
        knowledge_filter_from_query_or_400(req, res, &f))
        return;
    lc.items = json_object_new_array();
    rc = store_knowledge_list(req->store, req->who.space, &f, list_add, &lc, &total);
    if (rc) {
        json_object_put(lc.items);
        reply_store_error(res, rc, WHAT);
        return;
    }
    struct json_object *data = json_object_new_object();
    json_object_object_add(data, "items", lc.items);
    json_object_object_add(data, "total", json_object_new_int64(total));
    json_object_object_add(data, "limit", json_object_new_int64(f.limit));
    json_object_object_add(data, "offset", json_object_new_int64(f.offset));
    reply_data(res, data);
}

/* ---- POST /api/knowledge ---- */

/* A title from the first line of the scenario, at most 80 characters. */
static char *title_from(const char *scenario)
{
    const char *s = scenario + strspn(scenario, " \t\r\n");
    size_t n = strcspn(s, "\r\n");
    n = utf8_prefix(s, n, 80);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    return xstrndup(s, n);
}

static int body_limit_or_400(struct response *res, const char *category, const char *content)
{
    size_t max = strcmp(category, "rules") == 0 ? LIMIT_RULES_BODY : LIMIT_EXPERIENCES_BODY;
    size_t chars = utf8_length(content, strlen(content));
    if (chars > max) {
        error_param_str(res, "category", category);
        error_param_int(res, "max", (long long)max);
        error_param_int(res, "got", (long long)chars);
        reply_error_key(res, 200, E_LIMIT_EXCEEDED, "body_too_long",
                        "%s body exceeds %zu characters (got %zu)", category, max, chars);
        return -1;
    }
    return 0;
}

void h_knowledge_create(struct request *req, struct response *res)
{
    struct json_object *body = http_body_json_or_400(req, res);
    struct json_object *tags_type = NULL, *urls = NULL, *tags = NULL;
    const char *scenario, *content, *agent_id, *message_id, *title, *category, *path, *description;
    long score;
    int always_apply, rc;
    struct knowledge k;
    struct buf norm;
    struct error err;

    if (!body)
        return;
    knowledge_init(&k);
    buf_init(&norm, 1024);
    error_init(&err);
    if (jf_string_or_400(res, body, "scenario", 1, LIMIT_SCENARIO, &scenario) ||
        jf_string_or_400(res, body, "content", 1, LIMIT_EXPERIENCES_BODY * 4, &content) ||
        jf_string_list_or_400(res, body, "tags_type", KTYPE_COUNT * 2, 32, 0, &tags_type) ||
        jf_string_list_or_400(res, body, "urls", LIMIT_URLS, LIMIT_URL, 0, &urls) ||
        jf_string_or_400(res, body, "agent_id", 0, LIMIT_SHORT_TEXT, &agent_id) ||
        jf_long_or_400(res, body, "score", 1, 5, 3, &score) ||
        jf_string_or_400(res, body, "message_id", 0, LIMIT_SHORT_TEXT, &message_id) ||
        jf_string_or_400(res, body, "title", 0, LIMIT_TITLE, &title) ||
        jf_string_list_or_400(res, body, "tags", LIMIT_TAGS, LIMIT_TAG, 1, &tags) ||
        jf_string_or_400(res, body, "category", 0, 32, &category) ||
        jf_string_or_400(res, body, "path", 0, 1024, &path) ||
        jf_string_or_400(res, body, "description", 0, LIMIT_RULE_DESCRIPTION, &description) ||
        jf_bool_or_400(res, body, "always_apply", 1, &always_apply) ||
        types_or_400(res, tags_type, &k.types))
        goto out;
    /* A title is one line: it heads a section in the blocks agents paste. */
    if (title && has_line_break(title)) {
        reply_error_key(res, 200, E_INVALID_REQUEST, "title_one_line",
                        "'title' must be one line (no line breaks)");
        goto out;
    }
    if (!category)
        category = "experiences";
    if (!category_valid(category)) {
        error_param_str(res, "category", category);
        reply_error_key(res, 200, E_INVALID_REQUEST, "invalid_category", "Invalid category: %s",
                        category);
        goto out;
    }
    if (http_may_change_or_403(&req->who, res, category) ||
        body_limit_or_400(res, category, content))
        goto out;
    if (path) {
        if (path_check_e(category, path, &norm, &err)) {
            reply_error_of(res, &err);
            goto out;
        }
        k.path = xstrndup(norm.data, norm.len);
        if (knowledge_path_free_or_409(req, res, category, k.path, NULL))
            goto out;
    } else if (strcmp(category, "rules") == 0) {
        reply_error_key(res, 200, E_INVALID_REQUEST, "rule_path_required",
                        "'path' is required for a rule");
        goto out;
    }
    k.space = xstrdup(req->who.space);
    k.category = xstrdup(category);
    k.title = title && *title ? xstrdup(title) : title_from(scenario);
    k.description = xstrdup(description ? description : "");
    k.tags = list_text(tags);
    k.urls = list_text(urls);
    k.scenario = xstrdup(scenario);
    k.content = xstrdup(content);
    k.always_apply = always_apply;
    k.source = xstrdup("agent");
    k.agent_id = xstrdup(agent_id ? agent_id : "");
    k.message_id = xstrdup(message_id ? message_id : "");
    k.score = (int)score;
    {
        char now[20];
        time_utc_text(now);
        now[10] = 'T';
        k.source_ts = xstrdup(now);
    }
    rc = knowledge_create(req->store, &k, req->who.actor);
    if (rc == STORE_CONFLICT) {
        error_param_str(res, "category", k.category);
        error_param_str(res, "path", k.path);
        reply_error_key(res, 200, E_CONFLICT, "path_taken", "An entry already exists at %s/%s",
                        k.category, k.path);
    } else if (rc)
        reply_store_error(res, rc, WHAT);
    else
        reply_entry(req, res, k.id, NULL);
out:
    knowledge_release(&k);
    buf_release(&norm);
    error_release(&err);
    json_object_put(body);
}

/* ---- GET /api/knowledge/{id} ---- */

void h_knowledge_get(struct request *req, struct response *res)
{
    reply_entry(req, res, req->params[0], NULL);
}

/* ---- PUT /api/knowledge/{id} ---- */

/* A validated case object; strings borrowed from the JSON. */
static int case_or_400(struct response *res, struct json_object *body, const char *key,
                       const char *kind, struct knowledge_case *c, int *present)
{
    struct json_object *o;
    *present = 0;
    memset(c, 0, sizeof *c);
    if (jf_object_or_400(res, body, key, &o))
        return -1;
    if (!o)
        return 0;
    c->kind = kind;
    if (jf_string_or_400(res, o, "case_id", 0, LIMIT_SHORT_TEXT, &c->case_id) ||
        jf_string_or_400(res, o, "scenario", 0, LIMIT_CASE_TEXT, &c->scenario) ||
        jf_string_or_400(res, o, "result", 0, LIMIT_CASE_TEXT, &c->result) ||
        jf_string_or_400(res, o, "agent_id", 0, LIMIT_SHORT_TEXT, &c->agent_id) ||
        jf_string_or_400(res, o, "trace_id", 0, LIMIT_SHORT_TEXT, &c->trace_id) ||
        jf_string_or_400(res, o, "goal_id", 0, LIMIT_SHORT_TEXT, &c->goal_id))
        return -1;
    *present = 1;
    return 0;
}

/* A random case id for feedback that names none: every such call counts. */
static void new_case_id(char out[static 24])
{
    unsigned char rnd[8];
    randombytes_buf(rnd, sizeof rnd);
    memcpy(out, "case-", 5);
    sodium_bin2hex(out + 5, 17, rnd, sizeof rnd);
}

void h_knowledge_update(struct request *req, struct response *res)
{
    struct svc_ctx sc;
    struct json_object *body = http_body_json_or_400(req, res), *applied;
    struct knowledge_case helpful, harmful;
    struct knowledge current;
    struct llm_reply reply;
    struct buf evolved;
    int has_helpful, has_harmful, rc, added, have_evolve = 0;
    const char *feedback;
    long score, evolve_feedback_id = 0;
    char case_id[24];
    http_svc_ctx(req, &sc);

    if (!body)
        return;
    if (case_or_400(res, body, "add_helpful_case", "helpful", &helpful, &has_helpful) ||
        case_or_400(res, body, "add_harmful_case", "harmful", &harmful, &has_harmful) ||
        jf_long_or_400(res, body, "update_score", 1, 5, 0, &score) ||
        jf_string_or_400(res, body, "evolve_feedback", 0, LIMIT_CASE_TEXT, &feedback))
        goto out;
    if (!has_helpful && !has_harmful && !score && !feedback) {
        reply_error(res, 200, E_INVALID_REQUEST,
                    "Nothing to update: give add_helpful_case, add_harmful_case, update_score "
                    "or evolve_feedback");
        goto out;
    }
    if (feedback) {
        /* The feedback is kept whatever happens. Without an LLM, or when the
         * LLM fails, the request changes nothing else, so the caller can
         * simply send the rest again. The LLM is asked outside any
         * transaction; its rewrite is applied with the rest, atomically.
         * A rewrite changes the content: on a rule, admins only. */
        long feedback_id;
        {
            struct knowledge target;
            int denied;
            if (entry_or_404(req, res, 0, &target))
                goto out;
            denied = http_may_change_or_403(&req->who, res, target.category);
            knowledge_release(&target);
            if (denied)
                goto out;
        }
        rc = store_knowledge_add_feedback(req->store, req->who.space, req->params[0], feedback,
                                          req->who.actor, &feedback_id);
        if (rc) {
            reply_store_error(res, rc, WHAT);
            goto out;
        }
        if (!config_llm_configured(req->cfg)) {
            reply_error(res, 200, E_LLM_NOT_CONFIGURED,
                        "evolve_feedback needs an LLM (KNOWHUB_LLM_BASE_URL is not set); the "
                        "feedback was stored (#%ld) and nothing else was changed",
                        feedback_id);
            goto out;
        }
        knowledge_init(&current);
        llm_reply_init(&reply);
        buf_init(&evolved, 1 << 20);
        have_evolve = 1;
        rc = store_knowledge_get(req->store, req->who.space, req->params[0], 0, &current);
        if (rc) {
            reply_store_error(res, rc, WHAT);
            goto out;
        }
        if (evolve_rewrite(&sc, &current, feedback, &evolved, &reply)) {
            store_ignore(
                store_knowledge_feedback_mark(req->store, feedback_id, "failed")); /* best effort */
            reply_error(res, 200, reply.err.code,
                        "%s; the feedback was stored (#%ld) and "
                        "nothing else was changed",
                        reply.err.message.data, feedback_id);
            goto out;
        }
        evolve_feedback_id = feedback_id;
    }
    applied = json_object_new_object();
    if ((rc = store_begin(req->store)))
        goto fail;
    if (score || evolve_feedback_id) {
        /* A score or a rewrite changes the entry: on a rule, admins only.
         * Checked inside the transaction, on the entry as it is now. */
        struct knowledge target;
        int may;
        if ((rc = store_knowledge_get(req->store, req->who.space, req->params[0], 0, &target)))
            goto fail;
        may = http_may_change_or_403(&req->who, res, target.category) == 0;
        knowledge_release(&target);
        if (!may) {
            store_rollback(req->store);
            json_object_put(applied);
            if (evolve_feedback_id)
                store_ignore(store_knowledge_feedback_mark(req->store, evolve_feedback_id,
                                                           "failed")); /* best effort */
            goto out;
        }
    }
    if (evolve_feedback_id) {
        if ((rc = evolve_apply(&sc, &current, evolved.data)) ||
            (rc = store_knowledge_feedback_mark(req->store, evolve_feedback_id, "applied")))
            goto fail;
        json_object_object_add(applied, "evolve_feedback", json_object_new_string("evolved"));
    }
    {
        struct knowledge_case *cases[2] = {has_helpful ? &helpful : NULL,
                                           has_harmful ? &harmful : NULL};
        static const char *const keys[2] = {"add_helpful_case", "add_harmful_case"};
        for (int i = 0; i < 2; i++) {
            if (!cases[i])
                continue;
            if (!cases[i]->case_id) {
                new_case_id(case_id);
                cases[i]->case_id = case_id;
            }
            if ((rc = store_knowledge_add_case(req->store, req->who.space, req->params[0], cases[i],
                                               req->who.actor, &added)))
                goto fail;
            json_object_object_add(applied, keys[i],
                                   json_object_new_string(added ? "added" : "duplicate"));
        }
    }
    if (score) {
        if ((rc = store_knowledge_set_score(req->store, req->who.space, req->params[0], (int)score,
                                            req->who.actor)))
            goto fail;
        json_object_object_add(applied, "update_score", json_object_new_int(score));
    }
    if ((rc = store_commit(req->store)))
        goto fail_committed;
    {
        struct json_object *extra = json_object_new_object();
        json_object_object_add(extra, "applied", applied);
        reply_entry(req, res, req->params[0], extra);
    }
    goto out;
fail:
    store_rollback(req->store);
fail_committed:
    json_object_put(applied);
    if (evolve_feedback_id) /* the rewrite was not applied: the feedback waits no more */
        store_ignore(store_knowledge_feedback_mark(req->store, evolve_feedback_id,
                                                   "failed")); /* best effort */
    if (rc == STORE_CONFLICT && evolve_feedback_id)
        reply_error(res, 200, E_CONFLICT,
                    "The entry changed while the LLM was rewriting it; nothing was changed, "
                    "send the request again");
    else
        reply_store_error(res, rc, WHAT);
out:
    if (have_evolve) {
        knowledge_release(&current);
        llm_reply_release(&reply);
        buf_release(&evolved);
    }
    json_object_put(body);
}

/* ---- DELETE /api/knowledge/{id} ---- */

void h_knowledge_delete(struct request *req, struct response *res)
{
    struct knowledge k;
    int rc;
    knowledge_init(&k);
    /* The category that decides who may delete is read in the transaction
     * that deletes, so a move into rules meanwhile cannot slip through. */
    if ((rc = store_begin(req->store))) {
        reply_store_error(res, rc, WHAT);
        return;
    }
    if (entry_or_404(req, res, 0, &k) || http_may_change_or_403(&req->who, res, k.category)) {
        store_rollback(req->store);
        knowledge_release(&k);
        return;
    }
    rc = store_knowledge_delete(req->store, req->who.space, k.id, req->who.actor);
    if (rc)
        store_rollback(req->store);
    else
        rc = store_commit(req->store);
    if (rc) {
        reply_store_error(res, rc, WHAT);
    } else {
        struct json_object *data = json_object_new_object();
        json_object_object_add(data, "id", json_object_new_string(k.id));
        json_object_object_add(data, "status", json_object_new_string("deleted"));
        json_object_object_add(data, "version", json_object_new_int64(k.version + 1));
        reply_data(res, data);
    }
    knowledge_release(&k);
}

/* ---- POST /api/knowledge/batch_update ---- */

static struct json_object *item_error(struct json_object *item, const char *code,
                                      const char *message)
{
    struct json_object *err = json_object_new_object();
    json_object_object_add(err, "code", json_object_new_string(code));
    json_object_object_add(err, "message", json_object_new_string(message));
    json_object_object_add(item, "status", json_object_new_string("error"));
    json_object_object_add(item, "error", err);
    return item;
}

/* Evolve one batch item's entry with its feedback; the outcome goes to out
 * ("evolved": true, or "evolve_error"). The counted case stays either way. */
static void batch_evolve(struct request *req, const char *id, const char *feedback, long fid,
                         struct json_object *out)
{
    struct svc_ctx sc;
    struct knowledge k;
    struct llm_reply r;
    struct buf content;
    int rc;
    http_svc_ctx(req, &sc);
    knowledge_init(&k);
    llm_reply_init(&r);
    buf_init(&content, 1 << 20);
    rc = store_knowledge_get(req->store, req->who.space, id, 0, &k);
    if (rc == STORE_OK && !auth_may_change(&req->who, k.category)) {
        r.err.code = E_FORBIDDEN; /* the case counted; rewriting a rule is for admins */
        buf_adds(&r.err.message, "Only admins may change rules");
    } else if (rc == STORE_OK && evolve_rewrite(&sc, &k, feedback, &content, &r) == 0) {
        rc = store_begin(req->store);
        if (rc == STORE_OK && (rc = evolve_apply(&sc, &k, content.data)) == STORE_OK)
            rc = store_knowledge_feedback_mark(req->store, fid, "applied");
        if (rc == STORE_OK)
            rc = store_commit(req->store);
        else
            store_rollback(req->store);
        if (rc == STORE_OK) {
            json_object_object_add(out, "evolved", json_object_new_boolean(1));
            goto done;
        }
        r.err.code = rc == STORE_CONFLICT ? E_CONFLICT : E_SERVICE_UNAVAILABLE;
        buf_reset(&r.err.message);
        buf_adds(&r.err.message, "The entry changed meanwhile, or could not be written");
    } else if (rc == STORE_NOT_FOUND) {
        r.err.code = E_NOT_FOUND;
        buf_adds(&r.err.message, WHAT " not found");
    } else if (rc) { /* the entry (and so who may rewrite it) could not be read */
        r.err.code = E_SERVICE_UNAVAILABLE;
        buf_adds(&r.err.message, "The entry could not be read");
    }
    store_ignore(store_knowledge_feedback_mark(req->store, fid, "failed")); /* best effort */
    json_object_object_add(out, "evolved", json_object_new_boolean(0));
    {
        struct json_object *err = json_object_new_object();
        json_object_object_add(err, "code", json_object_new_string(r.err.code));
        json_object_object_add(err, "message", json_object_new_string(r.err.message.data));
        json_object_object_add(out, "evolve_error", err);
    }
done:
    knowledge_release(&k);
    llm_reply_release(&r);
    buf_release(&content);
}

/* Apply one feedback item in its own transaction; returns its result object. */
static struct json_object *batch_item(struct request *req, struct json_object *in, size_t index)
{
    struct json_object *out = json_object_new_object(), *v;
    const char *id = NULL, *feedback = NULL, *case_id = NULL;
    struct knowledge_case c;
    char generated[24];
    int added, rc;
    long fid = 0;

    json_object_object_add(out, "index", json_object_new_int64((int64_t)index));
    if (!json_object_is_type(in, json_type_object))
        return item_error(out, E_INVALID_REQUEST, "Each feedback item must be an object");
    if (json_object_object_get_ex(in, "knowledge_id", &v))
        id = jf_str(v);
    if (!id || !*id || strlen(id) > LIMIT_SHORT_TEXT)
        return item_error(out, E_INVALID_REQUEST, "'knowledge_id' is required");
    /* A "\u0000" would cut the id short and count on the entry it prefixes. */
    if (strlen(id) != (size_t)json_object_get_string_len(v))
        return item_error(out, E_INVALID_REQUEST, "'knowledge_id' must not contain NUL");
    json_object_object_add(out, "knowledge_id", json_object_new_string(id));
    if (!json_object_object_get_ex(in, "is_effective", &v) ||
        !json_object_is_type(v, json_type_boolean))
        return item_error(out, E_INVALID_REQUEST, "'is_effective' must be true or false");
    memset(&c, 0, sizeof c);
    c.kind = json_object_get_boolean(v) ? "helpful" : "harmful";
    if (json_object_object_get_ex(in, "feedback", &v) && !json_object_is_type(v, json_type_null)) {
        feedback = jf_str(v);
        if (!feedback || strlen(feedback) != (size_t)json_object_get_string_len(v) ||
            utf8_length(feedback, strlen(feedback)) > LIMIT_CASE_TEXT)
            return item_error(out, E_INVALID_REQUEST,
                              "'feedback' must be a string of at most 4000 characters");
    }
    if (json_object_object_get_ex(in, "case_id", &v) && !json_object_is_type(v, json_type_null)) {
        case_id = jf_str(v);
        if (!case_id || !*case_id || strlen(case_id) > LIMIT_SHORT_TEXT ||
            strlen(case_id) != (size_t)json_object_get_string_len(v))
            return item_error(out, E_INVALID_REQUEST, "'case_id' must be a non-empty string");
    }
    if (!case_id) {
        new_case_id(generated);
        case_id = generated;
    }
    c.case_id = case_id;
    c.result = feedback;
    if ((rc = store_begin(req->store)))
        goto store_fail;
    rc = store_knowledge_add_case(req->store, req->who.space, id, &c, req->who.actor, &added);
    if (rc == STORE_OK && feedback && *feedback)
        rc = store_knowledge_add_feedback(req->store, req->who.space, id, feedback, req->who.actor,
                                          &fid);
    if (rc) {
        store_rollback(req->store);
        goto store_fail;
    }
    if ((rc = store_commit(req->store)))
        goto store_fail;
    json_object_object_add(out, "status", json_object_new_string("success"));
    json_object_object_add(out, "counted", json_object_new_string(c.kind));
    json_object_object_add(out, "added", json_object_new_boolean(added));
    if (feedback && *feedback) {
        json_object_object_add(out, "feedback", json_object_new_string("stored"));
        if (config_llm_configured(req->cfg))
            batch_evolve(req, id, feedback, fid, out);
    }
    return out;
store_fail:
    if (rc == STORE_NOT_FOUND)
        return item_error(out, E_NOT_FOUND, WHAT " not found");
    if (rc == STORE_BUSY || rc == STORE_FULL || rc == STORE_READONLY)
        return item_error(out, E_SERVICE_UNAVAILABLE, "The database cannot be written now");
    return item_error(out, E_INTERNAL, "An unexpected error occurred");
}

void h_knowledge_batch_update(struct request *req, struct response *res)
{
    struct json_object *body = http_body_json_or_400(req, res), *list, *results;
    size_t n, ok = 0;
    if (!body)
        return;
    if (!json_object_object_get_ex(body, "feedback_list", &list) ||
        !json_object_is_type(list, json_type_array)) {
        reply_error(res, 200, E_INVALID_REQUEST, "'feedback_list' must be a list");
        goto out;
    }
    n = json_object_array_length(list);
    if (n > LIMIT_BATCH_ITEMS) {
        reply_error(res, 200, E_LIMIT_EXCEEDED, "'feedback_list' has more than %d items (got %zu)",
                    LIMIT_BATCH_ITEMS, n);
        goto out;
    }
    results = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        struct json_object *r = batch_item(req, json_object_array_get_idx(list, i), i), *st;
        if (json_object_object_get_ex(r, "status", &st) &&
            strcmp(json_object_get_string(st), "success") == 0)
            ok++;
        json_object_array_add(results, r);
    }
    struct json_object *data = json_object_new_object();
    json_object_object_add(data, "results", results);
    json_object_object_add(data, "succeeded", json_object_new_int64((int64_t)ok));
    json_object_object_add(data, "failed", json_object_new_int64((int64_t)(n - ok)));
    reply_data(res, data);
out:
    json_object_put(body);
}

/* ---- GET /api/knowledge/{id}/cases ---- */

void h_knowledge_cases(struct request *req, struct response *res)
{
    const char *kind = http_query(req, "kind");
    struct json_object *items;
    long limit, offset, total = 0;
    int rc;
    if (!kind || (strcmp(kind, "helpful") != 0 && strcmp(kind, "harmful") != 0)) {
        reply_error(res, 200, E_INVALID_REQUEST, "'kind' must be helpful or harmful");
        return;
    }
    if (http_query_long_or_400(req, res, "limit", 100, 1, 1000, &limit) ||
        http_query_long_or_400(req, res, "offset", 0, 0, 1000000000L, &offset))
        return;
    items = json_object_new_array();
    rc = store_knowledge_cases_page(req->store, req->who.space, req->params[0], kind, limit, offset,
                                    knowledge_case_to_json, items, &total);
    if (rc) {
        json_object_put(items);
        reply_store_error(res, rc, WHAT);
        return;
    }
    reply_page(res, items, total, limit, offset);
}

/* ---- GET /api/knowledge/{id}/revisions, POST .../revert ---- */

/* One page of revisions: the store walks them all (newest first) and this
 * keeps only [offset, offset + limit), counting the rest. */
struct revision_page {
    struct json_object *items;
    long limit, offset, total;
};

static int revision_add(const struct knowledge_revision *r, void *ctx)
{
    struct revision_page *page = ctx;
    struct json_object *o;
    long at = page->total++;
    if (at < page->offset || at >= page->offset + page->limit)
        return 0;
    o = json_object_new_object();
    json_object_object_add(o, "version", json_object_new_int64(r->version));
    json_object_object_add(o, "actor", json_object_new_string(r->actor));
    json_object_object_add(o, "reason", json_object_new_string(r->reason));
    json_object_object_add(o, "created_at", json_object_new_string(r->created_at));
    json_object_object_add(o, "document", json_parse_stored(r->document));
    json_object_array_add(page->items, o);
    return 0;
}

/* An entry edited without end would otherwise make an answer without end:
 * a page, the newest 100 by default. */
void h_knowledge_revisions(struct request *req, struct response *res)
{
    struct revision_page page = {0};
    struct json_object *data;
    int rc;
    if (http_query_long_or_400(req, res, "limit", 100, 1, 1000, &page.limit) ||
        http_query_long_or_400(req, res, "offset", 0, 0, 1000000000L, &page.offset))
        return;
    page.items = json_object_new_array();
    rc = store_knowledge_revisions_each(req->store, req->who.space, req->params[0], revision_add,
                                        &page);
    if (rc) {
        json_object_put(page.items);
        reply_store_error(res, rc, WHAT);
        return;
    }
    data = json_object_new_object();
    json_object_object_add(data, "id", json_object_new_string(req->params[0]));
    json_object_object_add(data, "items", page.items);
    json_object_object_add(data, "total", json_object_new_int64(page.total));
    json_object_object_add(data, "limit", json_object_new_int64(page.limit));
    json_object_object_add(data, "offset", json_object_new_int64(page.offset));
    reply_data(res, data);
}

/* The newest revision whose snapshot was active: what "restore" brings back. */
static int last_active(const struct knowledge_revision *r, void *ctx)
{
    long *version = ctx;
    struct json_object *doc = json_parse_stored(r->document), *status;
    int active = doc && json_object_object_get_ex(doc, "status", &status) &&
                 strcmp(json_object_get_string(status), "active") == 0;
    json_object_put(doc);
    if (active)
        *version = r->version;
    return active; /* newest first: stop at the first */
}

/* The category of revision want->version's snapshot (NULL when not found). */
struct revision_category {
    long version;
    int found;
    char *category;
};

static int revision_category(const struct knowledge_revision *r, void *ctx)
{
    struct revision_category *want = ctx;
    struct json_object *doc, *cat;
    if (r->version != want->version)
        return 0;
    want->found = 1;
    doc = json_parse_stored(r->document);
    if (doc && json_object_object_get_ex(doc, "category", &cat) && json_object_get_string(cat))
        want->category = xstrdup(json_object_get_string(cat));
    json_object_put(doc);
    return 1;
}

/* The revert itself, inside the caller's transaction: every read that
 * decides who may revert fails closed (a store error is an error answer). */
static void revert_in_tx(struct request *req, struct response *res, long version)
{
    struct revision_category want = {0, 0, NULL};
    struct knowledge k;
    int rc;
    if (entry_or_404(req, res, 1, &k))
        return;
    if (http_may_change_or_403(&req->who, res, k.category))
        goto out;
    if (!version && strcmp(k.status, "active") != 0 &&
        (rc = store_knowledge_revisions_each(req->store, req->who.space, k.id, last_active,
                                             &version))) {
        reply_store_error(res, rc, WHAT);
        goto out;
    }
    if (!version) {
        reply_error_key(res, 200, E_INVALID_REQUEST, "revert_version_required",
                        "'version' is required (only a deleted entry can be restored without one)");
        goto out;
    }
    /* Reverting to a revision that was a rule changes a rule: admins only. */
    want.version = version;
    rc = store_knowledge_revisions_each(req->store, req->who.space, k.id, revision_category, &want);
    if (rc) {
        reply_store_error(res, rc, WHAT);
        goto out;
    }
    if (!want.found) {
        error_param_int(res, "version", version);
        reply_error_key(res, 200, E_NOT_FOUND, "revision_not_found", "Revision %ld of %s not found",
                        version, k.id);
        goto out;
    }
    if (!want.category) {
        reply_error(res, 500, E_INTERNAL, "Revision %ld of %s cannot be read", version, k.id);
        goto out;
    }
    if (http_may_change_or_403(&req->who, res, want.category))
        goto out;
    rc = store_knowledge_revert(req->store, req->who.space, k.id, version, req->who.actor);
    if (rc == STORE_NOT_FOUND) {
        error_param_int(res, "version", version);
        reply_error_key(res, 200, E_NOT_FOUND, "revision_not_found", "Revision %ld of %s not found",
                        version, k.id);
    } else if (rc == STORE_CONFLICT) {
        error_param_int(res, "version", version);
        reply_error_key(res, 200, E_CONFLICT, "revert_path_taken",
                        "Another entry now holds the path of revision %ld (or a folder or file of "
                        "that name exists); move it first",
                        version);
    } else if (rc)
        reply_store_error(res, rc, WHAT);
out:
    free(want.category);
    knowledge_release(&k);
}

void h_knowledge_revert(struct request *req, struct response *res)
{
    struct json_object *body = http_body_json_or_400(req, res);
    long version;
    int rc;
    if (!body)
        return;
    if (jf_long_or_400(res, body, "version", 1, 1000000000L, 0, &version))
        goto out;
    /* One write transaction: the entry and revision read for the checks
     * are the ones reverted, with no change possible in between. */
    if ((rc = store_begin(req->store))) {
        reply_store_error(res, rc, WHAT);
        goto out;
    }
    revert_in_tx(req, res, version);
    if (res->done) {
        store_rollback(req->store);
        goto out;
    }
    if ((rc = store_commit(req->store)))
        reply_store_error(res, rc, WHAT);
    else
        reply_entry(req, res, req->params[0], NULL);
out:
    json_object_put(body);
}
