/* feedback (service): the batch of feedback agents send after a task, each
 * item counted as a helpful or harmful case in its own transaction, its
 * feedback stored and, with an LLM, used to evolve the entry. */
#include "service/feedback.h"
#include "base/config.h"
#include "base/error.h"
#include "base/jfield.h"
#include "base/util.h"
#include "domain/knowledge.h"
#include "domain/knowledge_limits.h"
#include "llm/llm.h"
#include "service/ctx.h"
#include "service/evolve.h"
#include "service/knowledge.h"
#include "service/writerate.h"
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

#define WHAT "Knowledge entry"

/* An item that failed with e, in the one error shape (error_json). */
static struct json_object *item_failed(struct json_object *item, const struct error *e)
{
    json_object_object_add(item, "status", json_object_new_string("error"));
    json_object_object_add(item, "error", error_json(e));
    return item;
}

static struct json_object *item_error(struct json_object *item, const char *code,
                                      const char *message)
{
    json_object_object_add(item, "status", json_object_new_string("error"));
    json_object_object_add(item, "error", error_json_text(code, message));
    return item;
}

/* Evolve one batch item's entry with its feedback; the outcome goes to out
 * ("evolved": true, or "evolve_error"). The counted case stays either way. */
static void batch_evolve(const struct svc_ctx *c, const char *id, const char *feedback, long fid,
                         struct json_object *out)
{
    struct knowledge k;
    struct llm_reply r;
    struct buf content;
    struct error denied;
    int rc;
    knowledge_init(&k);
    llm_reply_init(&r);
    buf_init(&content, 1 << 20);
    error_init(&denied);
    rc = store_knowledge_get(c->st, c->space, id, 0, &k);
    if (rc == STORE_OK && knowledge_may_change(c, k.category, &denied)) {
        /* the case counted; rewriting a rule is for admins */
        error_text(&r.err, E_FORBIDDEN, NULL, "Only admins may change rules");
    } else if (rc == STORE_OK && evolve_rewrite(c, &k, feedback, &content, &r) == 0) {
        char *held = NULL;
        rc = store_begin(c->st);
        if (rc == STORE_OK && (rc = evolve_apply(c, &k, content.data, &held)) == STORE_OK)
            rc = store_knowledge_feedback_mark(c->st, fid, "applied");
        if (rc == STORE_OK)
            rc = store_commit(c->st);
        else
            store_rollback(c->st);
        if (rc == STORE_OK) {
            /* held for review: not evolved yet, the rewrite waits in the queue */
            json_object_object_add(out, "evolved", json_object_new_boolean(!held));
            if (held)
                json_object_object_add(out, "proposal_id", json_object_new_string(held));
            free(held);
            goto done;
        }
        free(held);
        error_text(&r.err, rc == STORE_CONFLICT ? E_CONFLICT : E_SERVICE_UNAVAILABLE, NULL,
                   "The entry changed meanwhile, or could not be written");
    } else if (rc == STORE_NOT_FOUND) {
        error_text(&r.err, E_NOT_FOUND, NULL, WHAT " not found");
    } else if (rc) { /* the entry (and so who may rewrite it) could not be read */
        error_text(&r.err, E_SERVICE_UNAVAILABLE, NULL, "The entry could not be read");
    }
    store_ignore(store_knowledge_feedback_mark(c->st, fid, "failed")); /* best effort */
    json_object_object_add(out, "evolved", json_object_new_boolean(0));
    json_object_object_add(out, "evolve_error", error_json(&r.err));
done:
    knowledge_release(&k);
    llm_reply_release(&r);
    buf_release(&content);
    error_release(&denied);
}

/* Apply one feedback item in its own transaction; returns its result object. */
static struct json_object *batch_item(const struct svc_ctx *c, struct json_object *in, size_t index)
{
    struct json_object *out = json_object_new_object(), *v;
    const char *id = NULL, *feedback = NULL, *case_id = NULL;
    struct knowledge_case kc;
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
    memset(&kc, 0, sizeof kc);
    kc.kind = json_object_get_boolean(v) ? "helpful" : "harmful";
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
        knowledge_new_case_id(generated);
        case_id = generated;
    }
    kc.case_id = case_id;
    kc.result = feedback;
    if ((rc = store_begin(c->st)))
        goto store_failed;
    rc = store_knowledge_add_case(c->st, c->space, id, &kc, c->actor, &added);
    if (rc == STORE_OK && feedback && *feedback)
        rc = store_knowledge_add_feedback(c->st, c->space, id, feedback, c->actor, &fid);
    if (rc) {
        store_rollback(c->st);
        goto store_failed;
    }
    if ((rc = store_commit(c->st)))
        goto store_failed;
    json_object_object_add(out, "status", json_object_new_string("success"));
    json_object_object_add(out, "counted", json_object_new_string(kc.kind));
    json_object_object_add(out, "added", json_object_new_boolean(added));
    if (feedback && *feedback) {
        json_object_object_add(out, "feedback", json_object_new_string("stored"));
        if (config_llm_configured(c->cfg))
            batch_evolve(c, id, feedback, fid, out);
    }
    return out;
store_failed : {
    struct error e;
    error_init(&e);
    store_status_error(rc, WHAT, &e); /* the code, key and message REST would answer */
    item_failed(out, &e);
    error_release(&e);
    return out;
}
}

int svc_knowledge_batch_update(const struct svc_ctx *c, struct json_object *body,
                               struct json_object **data, struct error *err)
{
    struct json_object *list, *results;
    size_t n, ok = 0;
    if (!json_object_object_get_ex(body, "feedback_list", &list) ||
        !json_object_is_type(list, json_type_array)) {
        error_set(err, E_INVALID_REQUEST, NULL, "'feedback_list' must be a list");
        return -1;
    }
    n = json_object_array_length(list);
    if (n > LIMIT_BATCH_ITEMS) {
        error_set(err, E_LIMIT_EXCEEDED, NULL, "'feedback_list' has more than %d items (got %zu)",
                  LIMIT_BATCH_ITEMS, n);
        return -1;
    }
    if (write_admit(c, (long)n, err))
        return -1;
    results = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        struct json_object *r = batch_item(c, json_object_array_get_idx(list, i), i), *st;
        if (json_object_object_get_ex(r, "status", &st) &&
            strcmp(json_object_get_string(st), "success") == 0)
            ok++;
        json_object_array_add(results, r);
    }
    *data = json_object_new_object();
    json_object_object_add(*data, "results", results);
    json_object_object_add(*data, "succeeded", json_object_new_int64((int64_t)ok));
    json_object_object_add(*data, "failed", json_object_new_int64((int64_t)(n - ok)));
    return 0;
}
