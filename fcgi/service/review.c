/* review (service): the policy that holds writes for review, the queue and
 * its decisions. A decision claims the proposal with a conditional UPDATE
 * (state still what was read) in the transaction that does its write, so of
 * two reviewers exactly one wins and the other gets CONFLICT. */
#include "service/review.h"
#include "base/error.h"
#include "base/jfield.h"
#include "base/util.h"
#include "domain/document.h"
#include "domain/knowledge.h"
#include "service/conflicts.h"
#include "service/conflictdecide.h"
#include "service/ctx.h"
#include "service/files.h"
#include "service/knowledge.h"
#include "service/linkmatter.h"
#include "service/timing.h"
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

#define WHAT "Proposal"

static const char *const policies[] = {"off", "agent_writes", "llm_writes", "all"};
#define POLICY_COUNT (sizeof policies / sizeof policies[0])

static int store_fail(int rc, struct error *err)
{
    store_status_error(rc, WHAT, err);
    return -1;
}

/* ---- policy ---- */

static int policy_data(const char *policy, long promote_after, struct json_object **data)
{
    struct json_object *all = json_object_new_array();
    for (size_t i = 0; i < POLICY_COUNT; i++)
        json_object_array_add(all, json_object_new_string(policies[i]));
    *data = json_object_new_object();
    json_object_object_add(*data, "policy", json_object_new_string(policy));
    json_object_object_add(*data, "policies", all);
    json_object_object_add(*data, "promote_after", json_object_new_int64(promote_after));
    return 0;
}

int svc_review_policy_get(const struct svc_ctx *c, struct json_object **data, struct error *err)
{
    char *policy = NULL;
    long after = REVIEW_PROMOTE_DEFAULT;
    int rc = store_review_policy_get(c->st, c->space, NULL, &policy);
    if (rc == STORE_OK)
        rc = store_review_promote_get(c->st, c->space, &after);
    if (rc) {
        free(policy);
        return store_fail(rc, err);
    }
    policy_data(policy, after, data);
    free(policy);
    return 0;
}

int svc_review_policy_set(const struct svc_ctx *c, struct json_object *body,
                          struct json_object **data, struct error *err)
{
    const char *policy;
    size_t i;
    long after = -1;
    int rc;
    if (jf_string(err, body, "policy", 0, 32, &policy) ||
        jf_long(err, body, "promote_after", 0, REVIEW_PROMOTE_MAX, -1, &after))
        return -1;
    if (!policy && after < 0) {
        error_set(err, E_INVALID_REQUEST, "policy_required",
                  "Give 'policy', 'promote_after' or both");
        error_str(err, "field", "policy");
        return -1;
    }
    for (i = 0; policy && i < POLICY_COUNT && strcmp(policy, policies[i]) != 0; i++)
        ;
    if (policy && i == POLICY_COUNT) {
        error_set(err, E_INVALID_REQUEST, "invalid_review_policy",
                  "'policy' must be off, agent_writes, llm_writes or all");
        error_str(err, "field", "policy");
        return -1;
    }
    /* both in one transaction: all or nothing */
    if ((rc = store_begin(c->st)))
        return store_fail(rc, err);
    if (policy)
        rc = store_review_policy_set(c->st, c->space, policies[i], c->actor);
    if (rc == STORE_OK && after >= 0)
        rc = store_review_promote_set(c->st, c->space, after, c->actor);
    rc = rc == STORE_OK ? store_commit(c->st) : (store_rollback(c->st), rc);
    if (rc)
        return store_fail(rc, err);
    return svc_review_policy_get(c, data, err);
}

/* ---- the queue ---- */

static void add_text(struct json_object *o, const char *key, const char *v)
{
    json_object_object_add(o, key, v ? json_object_new_string(v) : NULL);
}

/* The JSON of p; with its documents when full. */
static struct json_object *proposal_json(const struct proposal *p, int full)
{
    struct json_object *o = json_object_new_object(), *reasons;
    add_text(o, "id", p->id);
    add_text(o, "kind", p->kind);
    add_text(o, "state", p->state);
    add_text(o, "write_path", p->write_path);
    add_text(o, "knowledge_id", p->knowledge_id);
    json_object_object_add(o, "base_version",
                           p->knowledge_id ? json_object_new_int64(p->base_version) : NULL);
    add_text(o, "category", p->category);
    add_text(o, "path", p->path);
    reasons = p->reasons ? json_tokener_parse(p->reasons) : NULL;
    json_object_object_add(o, "reasons", reasons ? reasons : json_object_new_array());
    {
        struct json_object *prov = json_object_new_object();
        add_text(prov, "token_id", p->token_id);
        add_text(prov, "actor", p->actor);
        add_text(prov, "agent_id", p->agent_id);
        add_text(prov, "trace_id", p->trace_id);
        add_text(prov, "source", p->source);
        json_object_object_add(o, "provenance", prov);
    }
    add_text(o, "created_at", p->created_at);
    add_text(o, "decision", p->decision);
    add_text(o, "decision_reason", p->decision_reason);
    add_text(o, "decided_by", p->decided_by);
    add_text(o, "decided_at", p->decided_at);
    add_text(o, "result_id", p->result_id);
    if (strcmp(p->kind, "conflict") == 0)
        json_object_object_add(o, "conflict", conflict_item_summary(p));
    if (full) {
        add_text(o, "document", p->document);
        add_text(o, "base_document", p->base_document);
    }
    return o;
}

static void list_add(const struct proposal *p, void *ctx)
{
    json_object_array_add(ctx, proposal_json(p, 0));
}

static int state_valid(const char *state)
{
    static const char *const states[] = {"pending", "approved", "rejected", "quarantined"};
    for (size_t i = 0; i < sizeof states / sizeof states[0]; i++)
        if (strcmp(state, states[i]) == 0)
            return 1;
    return 0;
}

int svc_review_list(const struct svc_ctx *c, const char *state, long limit, long offset,
                    struct json_object **data, struct error *err)
{
    struct json_object *items;
    long total = 0;
    int rc;
    if (state && !state_valid(state)) {
        error_set(err, E_INVALID_REQUEST, "invalid_review_state",
                  "'state' must be pending, approved, rejected or quarantined");
        error_str(err, "field", "state");
        return -1;
    }
    /* entries past their review_after join the queue as it is read */
    store_ignore(timing_review_sweep(c)); /* best effort */
    items = json_object_new_array();
    if ((rc =
             store_proposal_list(c->st, c->space, state, limit, offset, list_add, items, &total))) {
        json_object_put(items);
        return store_fail(rc, err);
    }
    *data = json_object_new_object();
    json_object_object_add(*data, "items", items);
    json_object_object_add(*data, "total", json_object_new_int64(total));
    json_object_object_add(*data, "limit", json_object_new_int64(limit));
    json_object_object_add(*data, "offset", json_object_new_int64(offset));
    return 0;
}

/* The place a rename moves its entry from: the entry's at the version the
 * rename was made against (its revision), so the view says old -> new
 * after the approval too. */
struct rename_origin {
    long version;
    struct json_object *from;
};

static int origin_of_revision(const struct knowledge_revision *r, void *ctx)
{
    struct rename_origin *o = ctx;
    struct json_object *doc, *v;
    if (r->version != o->version)
        return 0;
    doc = json_parse_stored(r->document);
    o->from = json_object_new_object();
    json_object_object_add(
        o->from, "category",
        doc && json_object_object_get_ex(doc, "category", &v) ? json_object_get(v) : NULL);
    json_object_object_add(o->from, "path",
                           doc && json_object_object_get_ex(doc, "path", &v) ? json_object_get(v)
                                                                             : NULL);
    json_object_put(doc);
    return 1;
}

static void member_add(const struct proposal_member *m, void *ctx)
{
    struct json_object *o = json_object_new_object();
    add_text(o, "id", m->knowledge_id);
    json_object_object_add(o, "base_version", json_object_new_int64(m->base_version));
    add_text(o, "title", m->title);
    add_text(o, "path", m->path);
    add_text(o, "status", m->status ? m->status : "gone");
    json_object_object_add(o, "version", m->status ? json_object_new_int64(m->version) : NULL);
    json_object_array_add(ctx, o);
}

int svc_review_get(const struct svc_ctx *c, const char *id, struct json_object **data,
                   struct error *err)
{
    struct proposal p;
    int rc = store_proposal_get(c->st, c->space, id, &p);
    if (rc)
        return store_fail(rc, err);
    *data = proposal_json(&p, 1);
    if (strcmp(p.kind, "rename") == 0 && p.knowledge_id) {
        struct rename_origin o = {p.base_version, NULL};
        rc =
            store_knowledge_revisions_each(c->st, c->space, p.knowledge_id, origin_of_revision, &o);
        json_object_object_add(*data, "from", rc == STORE_OK ? o.from : NULL);
        if (rc != STORE_OK)
            json_object_put(o.from);
    }
    if (strcmp(p.kind, "conflict") == 0 && (rc = conflict_item_sides(c, &p, *data))) {
        json_object_put(*data);
        store_proposal_release(&p);
        return store_fail(rc, err);
    }
    if (strcmp(p.kind, "slim_merge") == 0) {
        struct json_object *members = json_object_new_array();
        if ((rc = store_proposal_members(c->st, c->space, p.id, member_add, members))) {
            json_object_put(members);
            json_object_put(*data);
            store_proposal_release(&p);
            return store_fail(rc, err);
        }
        json_object_object_add(*data, "members", members);
    }
    store_proposal_release(&p);
    return 0;
}

int svc_review_counts(const struct svc_ctx *c, struct json_object **data, struct error *err)
{
    long pending, quarantined;
    int rc;
    store_ignore(timing_review_sweep(c)); /* best effort: entries due join the queue */
    rc = store_proposal_counts(c->st, c->space, &pending, &quarantined);
    if (rc)
        return store_fail(rc, err);
    *data = json_object_new_object();
    json_object_object_add(*data, "pending", json_object_new_int64(pending));
    json_object_object_add(*data, "quarantined", json_object_new_int64(quarantined));
    return 0;
}

/* ---- decisions ---- */

static void already_decided(struct error *err, const char *id)
{
    error_set(err, E_CONFLICT, "already_decided",
              "Proposal %s was decided by someone else first; reload the queue", id);
    error_str(err, "id", id);
}

static void base_moved(struct error *err, const struct knowledge *now)
{
    error_set(err, E_CONFLICT, "base_moved",
              "The entry changed since the proposal was made (now version %ld); decide it "
              "with edit and the document re-based on the live one",
              now->version);
    error_int(err, "version", now->version);
}

void review_entry_of(const struct svc_ctx *c, const char *category, const char *path,
                     const char *document, struct knowledge *k)
{
    k->space = xstrdup(c->space);
    k->category = xstrdup(category);
    k->path = *path ? xstrdup(path) : NULL;
    k->score = 3;
    document_fill(k, category, path, document, strlen(document));
}

/* The members of a slim merge, read before any is written. */
struct members {
    char **id;
    long *version;
    size_t n;
};

static void member_keep(const struct proposal_member *m, void *ctx)
{
    struct members *ms = ctx;
    ms->id = xrealloc(ms->id, (ms->n + 1) * sizeof *ms->id);
    ms->version = xrealloc(ms->version, (ms->n + 1) * sizeof *ms->version);
    ms->id[ms->n] = xstrdup(m->knowledge_id);
    ms->version[ms->n++] = m->base_version;
}

/* Merge the slim merge p's members into its survivor id, each still at
 * the version it was read at (actor the reviewer): a store status or -1
 * with err CONFLICT member_moved. */
static int members_merge(const struct svc_ctx *c, const struct proposal *p, const char *survivor,
                         struct error *err)
{
    struct members ms = {0};
    int rc = store_proposal_members(c->st, c->space, p->id, member_keep, &ms);
    for (size_t i = 0; rc == STORE_OK && i < ms.n; i++) {
        rc = store_knowledge_merge(c->st, c->space, survivor, ms.id[i], ms.version[i], c->actor);
        if (rc == STORE_CONFLICT || rc == STORE_NOT_FOUND) {
            error_set(err, E_CONFLICT, "member_moved",
                      "Entry %s changed or went since the merge was proposed; reject this one "
                      "and run slim again",
                      ms.id[i]);
            error_str(err, "id", ms.id[i]);
            rc = -1;
        }
    }
    for (size_t i = 0; i < ms.n; i++)
        free(ms.id[i]);
    free(ms.id);
    free(ms.version);
    return rc;
}

/* The write an approval makes, in the caller's transaction: a store status
 * or -1 with err; *result the entry made or changed (caller frees). */
static int approve_write(const struct svc_ctx *c, const struct proposal *p, const char *decision,
                         const char *document, const char *into, char **result, struct error *err)
{
    const char *target = strcmp(decision, "merge") == 0 ? into : p->knowledge_id;
    int rename = strcmp(p->kind, "rename") == 0, slim = strcmp(p->kind, "slim_merge") == 0;
    struct knowledge now, k;
    int rc;
    knowledge_init(&now);
    knowledge_init(&k);
    if (rename && strcmp(decision, "approve") != 0) {
        /* it brings no text of its own to edit or merge */
        error_set(err, E_INVALID_REQUEST, "invalid_decision",
                  "A rename is approved or rejected; edit the document after it");
        error_str(err, "field", "decision");
        return -1;
    }
    if (slim && strcmp(decision, "merge") == 0) {
        /* it merges into its own survivor */
        error_set(err, E_INVALID_REQUEST, "invalid_decision",
                  "A slim merge is approved, edited or rejected");
        error_str(err, "field", "decision");
        return -1;
    }
    if (strcmp(p->kind, "review_due") == 0 && strcmp(decision, "merge") == 0) {
        /* an entry's review: still valid, edited, or expired */
        error_set(err, E_INVALID_REQUEST, "invalid_decision",
                  "A review_due item is approved, edited or rejected");
        error_str(err, "field", "decision");
        return -1;
    }
    if (!target) { /* a create */
        review_entry_of(c, p->category, p->path, document, &k);
        if (knowledge_may_change(c, p->category, err)) {
            rc = -1;
        } else if ((rc = knowledge_create(c->st, &k, c->actor)) == STORE_CONFLICT) {
            error_set(err, E_CONFLICT, "path_taken", "An entry already exists at %s/%s",
                      p->category, k.path ? k.path : p->path);
            rc = -1;
        }
        if (rc == STORE_OK)
            *result = xstrdup(k.id);
        knowledge_release(&k);
        return rc;
    }
    if ((rc = store_knowledge_get(c->st, c->space, target, 0, &now))) {
        if (rc != STORE_NOT_FOUND)
            return rc;
        error_set(err, E_NOT_FOUND, "not_found",
                  "Knowledge entry %s is gone (deleted or merged since); nothing to write into",
                  target);
        return -1;
    }
    if (knowledge_may_change(c, now.category, err)) {
        rc = -1;
    } else if (strcmp(p->kind, "review_due") == 0 && strcmp(decision, "approve") == 0) {
        rc = STORE_OK; /* still valid as it is: timing_review_decided confirms it */
    } else if (target == p->knowledge_id && now.version != p->base_version &&
               strcmp(decision, "edit") != 0) {
        base_moved(err, &now);
        rc = -1;
    } else if (strcmp(p->kind, "delete") == 0 && strcmp(decision, "approve") == 0) {
        rc = store_knowledge_delete(c->st, c->space, now.id, c->actor);
    } else if (rename) {
        rc =
            knowledge_may_change(c, p->category, err)
                ? -1
                : svc_files_move(c, now.category, now.path, now.version, p->category, p->path, err);
    } else {
        /* a change, a merge, or an edit (of a delete too: the entry is kept,
         * with the reviewer's document); a slim merge's survivor gets its
         * "merge" revision, as slim gives it, and then its members */
        review_entry_of(c, now.category, now.path, document, &k);
        rc = store_knowledge_update(c->st, c->space, now.id, &k, now.version, c->actor,
                                    slim ? "merge" : "review");
        if (rc == STORE_OK && slim)
            rc = members_merge(c, p, now.id, err);
    }
    if (rc == STORE_OK)
        *result = xstrdup(now.id);
    knowledge_release(&now);
    knowledge_release(&k);
    return rc;
}

/* An approval answers as the write it makes would have: the conflict check
 * (service/conflicts.h) of the entry it created or changed, when that entry
 * is live (not after a delete or a rejection), and its front matter's link
 * keys applied (service/linkmatter.h, answer links). */
static void approved_checked(const struct svc_ctx *c, const char *result, struct json_object *data)
{
    struct knowledge k;
    knowledge_init(&k);
    if (result && data && store_knowledge_get(c->st, c->space, result, 0, &k) == STORE_OK) {
        json_object_object_add(data, "conflicts", conflicts_check(c, &k));
        linkmatter_answer(c, &k, data);
    }
    knowledge_release(&k);
}

/* 1 when the decision wrote the document into an entry (whose time it then
 * says: docs/conflicts.md "Time"): not a rename, a deleted entry, or a
 * review_due item kept as it is. */
static int written(const struct proposal *p, const char *decision)
{
    if (strcmp(p->kind, "rename") == 0)
        return 0;
    if (strcmp(p->kind, "delete") == 0 || strcmp(p->kind, "review_due") == 0)
        return strcmp(decision, "approve") != 0;
    return 1;
}

/* A review_due item decided, in the decision's transaction: the entry's
 * time (service/timing.h). A rejection expires the entry: a rule's is an
 * admin's, as every change of a rule. A store status or -1 with err. */
static int review_due_decided(const struct svc_ctx *c, const struct proposal *p,
                              const char *decision, const char *document, struct error *err)
{
    if (strcmp(decision, "reject") == 0 && strcmp(p->category, "rules") == 0 &&
        knowledge_may_change(c, p->category, err))
        return -1;
    return timing_review_decided(c, p->knowledge_id, decision, document);
}

/* Decide the proposal id (decision, reason, document and into checked by
 * the caller): the proposal as decided in *data. only_pending: a
 * quarantined one is left as it is (CONFLICT already_decided). */
static int decide(const struct svc_ctx *c, const char *id, const char *decision, const char *reason,
                  const char *document, const char *into, int only_pending,
                  struct json_object **data, struct error *err)
{
    const char *state;
    struct proposal p;
    struct buf doc;
    char *result = NULL;
    int rc, answer = -1;

    buf_init(&doc, 4 * 1024 * 1024);
    if ((rc = store_proposal_get(c->st, c->space, id, &p))) {
        store_fail(rc, err);
        goto out;
    }
    if (strcmp(p.kind, "conflict") == 0) {
        /* nothing of its own to write: conflict_item_decide's decisions */
        error_set(err, E_INVALID_REQUEST, "invalid_decision",
                  "A conflict item is decided by supersede, narrow or dismiss");
        error_str(err, "field", "decision");
        goto out;
    }
    if (strcmp(p.state, "pending") != 0 && (only_pending || strcmp(p.state, "quarantined") != 0)) {
        already_decided(err, id);
        goto out;
    }
    if (strcmp(p.state, "quarantined") == 0 && c->role < ROLE_ADMIN &&
        strcmp(decision, "reject") != 0) {
        error_set(err, E_FORBIDDEN, "quarantine_admin_only",
                  "Only admins may approve a quarantined proposal");
        goto out;
    }
    if (document && document_prepare(p.category, *p.path ? p.path : "entry.md", document,
                                     strlen(document), &doc, err))
        goto out;
    state = strcmp(decision, "reject") == 0 ? "rejected" : "approved";
    if ((rc = store_begin(c->st))) {
        store_fail(rc, err);
        goto out;
    }
    /* claim it first: the loser stops here, before any write */
    rc = store_proposal_decide(c->st, c->space, id, p.state, state, decision, reason, c->actor,
                               NULL);
    if (rc == STORE_OK && strcmp(state, "approved") == 0) {
        rc = approve_write(c, &p, decision, document ? doc.data : p.document, into, &result, err);
        if (rc == STORE_OK && written(&p, decision))
            rc = timing_apply_document(c->st, c->space, result, document ? doc.data : p.document);
        if (rc == STORE_OK)
            rc = store_proposal_decide(c->st, c->space, id, state, state, decision, reason,
                                       c->actor, result);
    }
    if (rc == STORE_OK && strcmp(p.kind, "review_due") == 0)
        rc = review_due_decided(c, &p, decision, document ? doc.data : NULL, err);
    if (rc == STORE_OK)
        rc = store_commit(c->st);
    else
        store_rollback(c->st);
    if (rc == STORE_CONFLICT && !err->code)
        already_decided(err, id);
    else if (rc > 0 && !err->code)
        store_fail(rc, err);
    if (rc)
        goto out;
    answer = svc_review_get(c, id, data, err);
    if (answer == 0)
        approved_checked(c, result, *data);
out:
    free(result);
    store_proposal_release(&p);
    buf_release(&doc);
    return answer;
}

int svc_review_decide(const struct svc_ctx *c, const char *id, struct json_object *body,
                      struct json_object **data, struct error *err)
{
    const char *decision, *reason, *document, *into;
    if (jf_string(err, body, "decision", 1, 16, &decision) ||
        jf_string(err, body, "reason", 0, 2000, &reason) ||
        jf_string(err, body, "document", 0, 1024 * 1024, &document) ||
        jf_string(err, body, "into", 0, 64, &into))
        return -1;
    if (conflict_decision_valid(decision))
        return conflict_item_decide(c, id, decision, body, err) ? -1
                                                                : svc_review_get(c, id, data, err);
    if (strcmp(decision, "approve") != 0 && strcmp(decision, "reject") != 0 &&
        strcmp(decision, "edit") != 0 && strcmp(decision, "merge") != 0) {
        error_set(err, E_INVALID_REQUEST, "invalid_decision",
                  "'decision' must be approve, reject, edit or merge (a conflict item: "
                  "supersede, narrow or dismiss)");
        error_str(err, "field", "decision");
        return -1;
    }
    if (strcmp(decision, "reject") == 0 && (!reason || !*reason)) {
        error_set(err, E_INVALID_REQUEST, "reason_required", "A rejection needs a 'reason'");
        error_str(err, "field", "reason");
        return -1;
    }
    if ((strcmp(decision, "edit") == 0 || strcmp(decision, "merge") == 0) && !document) {
        error_set(err, E_INVALID_REQUEST, "document_required", "'%s' needs a 'document'", decision);
        error_str(err, "field", "document");
        return -1;
    }
    if (strcmp(decision, "merge") == 0 && !into) {
        error_set(err, E_INVALID_REQUEST, "into_required", "'merge' needs 'into', an entry id");
        error_str(err, "field", "into");
        return -1;
    }
    return decide(c, id, decision, reason, document, into, 0, data, err);
}

int review_decide_on_evidence(const struct svc_ctx *c, const char *id, int approve,
                              const char *reason, struct json_object **data, struct error *err)
{
    /* the evidence decides as an editor would, under its own name: never a
     * quarantined proposal, never a rule (admins edit them) */
    struct svc_ctx as = *c;
    as.actor = REVIEW_EVIDENCE_ACTOR;
    as.role = ROLE_EDITOR;
    return decide(&as, id, approve ? "approve" : "reject", reason, NULL, NULL, 1, data, err);
}
