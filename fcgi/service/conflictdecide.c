/* conflictdecide (service): supersede, narrow or dismiss a conflict item;
 * each claims the item in the transaction that does its writes, so of two
 * reviewers one wins and the other gets CONFLICT already_decided. */
#include "service/conflictdecide.h"
#include "base/error.h"
#include "base/jfield.h"
#include "base/util.h"
#include "domain/document.h"
#include "domain/knowledge.h"
#include "service/conflictitems.h"
#include "service/ctx.h"
#include "service/knowledge.h"
#include "service/links.h"
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

/* The two sides of an item: a is the proposal's entry, b its member. */
struct sides {
    char *id[2];
    long base_version[2];
};

static void side_keep(const struct proposal_member *m, void *ctx)
{
    struct sides *s = ctx;
    if (!s->id[1]) {
        s->id[1] = xstrdup(m->knowledge_id);
        s->base_version[1] = m->base_version;
    }
}

/* The sides of p into s (caller frees the ids): a store status. */
static int sides_read(const struct svc_ctx *c, const struct proposal *p, struct sides *s)
{
    int rc;
    memset(s, 0, sizeof *s);
    s->id[0] = xstrdup(p->knowledge_id ? p->knowledge_id : "");
    s->base_version[0] = p->base_version;
    rc = store_proposal_members(c->st, c->space, p->id, side_keep, s);
    if (rc == STORE_OK && !s->id[1])
        rc = STORE_NOT_FOUND;
    return rc;
}

static void sides_release(struct sides *s)
{
    free(s->id[0]);
    free(s->id[1]);
}

int conflict_decision_valid(const char *decision)
{
    return strcmp(decision, "supersede") == 0 || strcmp(decision, "narrow") == 0 ||
           strcmp(decision, "dismiss") == 0;
}

static void side_gone(struct error *err, const char *id)
{
    error_set(err, E_CONFLICT, "side_gone",
              "Entry %s was deleted or superseded since this conflict was found; dismiss the item",
              id);
    error_str(err, "id", id);
}

/* Both sides active, in the transaction: 0, or -1 with err side_gone. */
static int sides_active(const struct svc_ctx *c, const struct sides *s, struct error *err)
{
    for (int i = 0; i < 2; i++) {
        struct knowledge k;
        int rc;
        knowledge_init(&k);
        rc = store_knowledge_get(c->st, c->space, s->id[i], 0, &k);
        knowledge_release(&k);
        if (rc == STORE_NOT_FOUND) {
            side_gone(err, s->id[i]);
            return -1;
        }
        if (rc) {
            store_status_error(rc, "Knowledge entry", err);
            return -1;
        }
    }
    return 0;
}

/* Write the reviewer's document of side i over the entry, at the version
 * the item was made at: a store status, or -1 with err. */
static int narrow_side(const struct svc_ctx *c, const struct sides *s, int i, const char *text,
                       struct error *err)
{
    struct knowledge now, k;
    struct buf doc;
    int rc;
    knowledge_init(&now);
    knowledge_init(&k);
    buf_init(&doc, 4 * 1024 * 1024);
    if ((rc = store_knowledge_get(c->st, c->space, s->id[i], 0, &now))) {
        if (rc == STORE_NOT_FOUND) {
            side_gone(err, s->id[i]);
            rc = -1;
        }
        goto out;
    }
    if (now.version != s->base_version[i]) {
        error_set(err, E_CONFLICT, "base_moved",
                  "Entry %s changed since the conflict was found (now version %ld); reload the "
                  "item and narrow the live text",
                  now.id, now.version);
        error_str(err, "id", now.id);
        error_int(err, "version", now.version);
        rc = -1;
        goto out;
    }
    if (knowledge_may_change(c, now.category, err) ||
        document_prepare(now.category, now.path, text, strlen(text), &doc, err)) {
        rc = -1;
        goto out;
    }
    k.space = xstrdup(c->space);
    k.category = xstrdup(now.category);
    k.path = xstrdup(now.path);
    document_fill(&k, now.category, now.path, doc.data, doc.len);
    rc = store_knowledge_update(c->st, c->space, now.id, &k, now.version, c->actor, "conflict");
out:
    knowledge_release(&now);
    knowledge_release(&k);
    buf_release(&doc);
    return rc;
}

/* The writes of a decision, in the transaction after the claim: a store
 * status, or -1 with err; *result the entry that stays or was written. */
static int decision_write(const struct svc_ctx *c, const char *decision, const struct sides *s,
                          const char *keep, struct json_object *documents, const char *reason,
                          const char **result, struct error *err)
{
    int rc = STORE_OK;
    if (strcmp(decision, "dismiss") == 0)
        return links_contradicts_clear(c, s->id[0], s->id[1]);
    if (sides_active(c, s, err))
        return -1;
    if (strcmp(decision, "supersede") == 0) {
        int k = strcmp(keep, s->id[0]) == 0 ? 0 : 1;
        *result = s->id[k];
        return links_supersede_reviewed(c, s->id[k], s->id[1 - k], reason, err);
    }
    for (int i = 0; rc == STORE_OK && i < 2; i++) {
        struct json_object *text;
        if (!json_object_object_get_ex(documents, s->id[i], &text))
            continue;
        rc = narrow_side(c, s, i, json_object_get_string(text), err);
        if (rc == STORE_OK && !*result)
            *result = s->id[i];
    }
    return rc == STORE_OK ? links_contradicts_clear(c, s->id[0], s->id[1]) : rc;
}

/* The body's arguments of decision, checked against the sides: 0, or -1
 * with err. */
static int arguments_check(const char *decision, const struct sides *s, const char *keep,
                           struct json_object *documents, const char *reason, struct error *err)
{
    if (strcmp(decision, "supersede") == 0 &&
        (!keep || (strcmp(keep, s->id[0]) != 0 && strcmp(keep, s->id[1]) != 0))) {
        error_set(err, E_INVALID_REQUEST, "keep_invalid",
                  "'supersede' needs 'keep': the id of the side that stays (one of the two)");
        error_str(err, "field", "keep");
        return -1;
    }
    if (strcmp(decision, "dismiss") == 0 && (!reason || !*reason)) {
        error_set(err, E_INVALID_REQUEST, "reason_required", "A dismissal needs a 'reason'");
        error_str(err, "field", "reason");
        return -1;
    }
    if (strcmp(decision, "narrow") == 0) {
        size_t n = documents ? (size_t)json_object_object_length(documents) : 0, known = 0;
        struct json_object *v;
        for (int i = 0; i < 2 && documents; i++)
            if (json_object_object_get_ex(documents, s->id[i], &v)) {
                if (!json_object_is_type(v, json_type_string) ||
                    strlen(json_object_get_string(v)) > 1024 * 1024) {
                    error_set(err, E_INVALID_REQUEST, "documents_required",
                              "Each of 'documents' is a document (a string up to 1 MiB)");
                    error_str(err, "field", "documents");
                    return -1;
                }
                known++;
            }
        if (n == 0 || known != n) {
            error_set(err, E_INVALID_REQUEST, "documents_required",
                      "'narrow' needs 'documents': {<side id>: <document>} for one side or both");
            error_str(err, "field", "documents");
            return -1;
        }
    }
    return 0;
}

int conflict_item_decide(const struct svc_ctx *c, const char *id, const char *decision,
                         struct json_object *body, struct error *err)
{
    const char *keep, *reason, *result = NULL;
    struct json_object *documents;
    struct proposal p;
    struct sides s = {{NULL, NULL}, {0, 0}};
    int rc, answer = -1;
    memset(&p, 0, sizeof p);
    if (jf_string(err, body, "keep", 0, 64, &keep) ||
        jf_string(err, body, "reason", 0, 2000, &reason) ||
        jf_object(err, body, "documents", &documents))
        return -1;
    if ((rc = store_proposal_get(c->st, c->space, id, &p))) {
        store_status_error(rc, "Proposal", err);
        goto out;
    }
    if (strcmp(p.kind, "conflict") != 0) {
        error_set(err, E_INVALID_REQUEST, "invalid_decision",
                  "supersede, narrow and dismiss decide conflict items only");
        error_str(err, "field", "decision");
        goto out;
    }
    if (strcmp(p.state, "pending") != 0) {
        error_set(err, E_CONFLICT, "already_decided",
                  "Proposal %s was decided by someone else first; reload the queue", id);
        error_str(err, "id", id);
        goto out;
    }
    if ((rc = sides_read(c, &p, &s))) {
        store_status_error(rc, "Proposal", err);
        goto out;
    }
    if (arguments_check(decision, &s, keep, documents, reason, err))
        goto out;
    if ((rc = store_begin(c->st))) {
        store_status_error(rc, "Proposal", err);
        goto out;
    }
    /* claim it first: the loser stops here, before any write */
    rc = store_proposal_decide(c->st, c->space, id, "pending",
                               strcmp(decision, "dismiss") == 0 ? "rejected" : "approved", decision,
                               reason, c->actor, NULL);
    if (rc == STORE_OK)
        rc = decision_write(c, decision, &s, keep, documents, reason, &result, err);
    if (rc == STORE_OK && result)
        rc = store_proposal_decide(c->st, c->space, id, "approved", "approved", decision, reason,
                                   c->actor, result);
    if (rc == STORE_OK)
        rc = store_commit(c->st);
    else
        store_rollback(c->st);
    if (rc == STORE_CONFLICT && !err->code) {
        error_set(err, E_CONFLICT, "already_decided",
                  "Proposal %s was decided by someone else first; reload the queue", id);
        error_str(err, "id", id);
    } else if (rc > 0 && !err->code) {
        store_status_error(rc, "Proposal", err);
    }
    answer = rc ? -1 : 0;
out:
    sides_release(&s);
    store_proposal_release(&p);
    return answer;
}

struct json_object *conflict_item_summary(const struct proposal *p)
{
    struct json_object *o = json_object_new_object();
    struct json_object *reasons = p->reasons ? json_tokener_parse(p->reasons) : NULL;
    size_t n = reasons && json_object_is_type(reasons, json_type_array)
                   ? json_object_array_length(reasons)
                   : 0;
    const char *first = n ? json_object_get_string(json_object_array_get_idx(reasons, 0)) : "";
    int against = n > 1 && strcmp(first, CONFLICT_AGAINST_RULE) == 0;
    const char *reason = n ? json_object_get_string(json_object_array_get_idx(reasons, n - 1)) : "";
    json_object_object_add(o, "reason", json_object_new_string(reason ? reason : ""));
    json_object_object_add(o, "judge", json_object_new_string(p->source ? p->source : ""));
    json_object_object_add(o, "against_rule", json_object_new_boolean(against));
    json_object_put(reasons);
    return o;
}

int conflict_item_sides(const struct svc_ctx *c, const struct proposal *p, struct json_object *data)
{
    struct json_object *list = json_object_new_array();
    struct sides s;
    int rc = sides_read(c, p, &s);
    for (int i = 0; rc == STORE_OK && i < 2; i++) {
        struct json_object *o = json_object_new_object();
        struct knowledge k;
        int found;
        knowledge_init(&k);
        rc = store_knowledge_get(c->st, c->space, s.id[i], 1, &k);
        found = rc == STORE_OK;
        if (rc == STORE_NOT_FOUND)
            rc = STORE_OK;
        json_object_object_add(o, "id", json_object_new_string(s.id[i]));
        json_object_object_add(o, "base_version", json_object_new_int64(s.base_version[i]));
        json_object_object_add(o, "version", found ? json_object_new_int64(k.version) : NULL);
        json_object_object_add(o, "status", json_object_new_string(found ? k.status : "gone"));
        json_object_object_add(o, "title", found ? json_object_new_string(k.title) : NULL);
        json_object_object_add(o, "path", found ? json_object_new_string(k.path) : NULL);
        json_object_object_add(o, "category", found ? json_object_new_string(k.category) : NULL);
        json_object_object_add(o, "always_apply",
                               found ? json_object_new_boolean(k.always_apply) : NULL);
        json_object_object_add(o, "document",
                               found && k.document ? json_object_new_string(k.document) : NULL);
        json_object_array_add(list, o);
        knowledge_release(&k);
    }
    sides_release(&s);
    if (rc) {
        json_object_put(list);
        return rc;
    }
    json_object_object_add(data, "sides", list);
    return STORE_OK;
}
