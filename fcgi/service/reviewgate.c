/* reviewgate (service): the review policy applied to one write; a held
 * write becomes a proposal (store/review.c). */
#include "service/reviewgate.h"
#include "base/error.h"
#include "base/util.h"
#include "domain/screen.h"
#include "service/ctx.h"
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

static int store_fail(int rc, struct error *err)
{
    store_status_error(rc, "Proposal", err);
    return -1;
}

/* Whether policy holds w by a caller of role: off holds nothing;
 * agent_writes the writes of agent tokens; llm_writes the texts an LLM
 * wrote; all every write made through a token (the CLI's are the
 * operator's own). */
static int policy_holds(const char *policy, const struct svc_ctx *c, const struct review_write *w)
{
    if (strcmp(policy, "agent_writes") == 0)
        return c->role == ROLE_AGENT;
    if (strcmp(policy, "llm_writes") == 0)
        return w->by_llm;
    if (strcmp(policy, "all") == 0)
        return c->token_id != NULL || w->by_llm;
    return 0;
}

/* The answer of a held write. */
static struct json_object *held_answer(const char *state, const char *id, const char *kind,
                                       const char *category, const char *path)
{
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "status", json_object_new_string(state));
    json_object_object_add(o, "proposal_id", json_object_new_string(id));
    json_object_object_add(o, "kind", json_object_new_string(kind));
    json_object_object_add(o, "category", json_object_new_string(category));
    json_object_object_add(o, "path", json_object_new_string(path));
    return o;
}

/* The poisoning screen (domain/screen.h) on the text a create or an update
 * brings, whatever the policy: 1 with *reasons (a JSON array of the
 * findings' codes, the caller's to free) when it found something, 0 when
 * clean, -1 with err when the text is too long to screen. A delete brings
 * no text of its own. */
static int screened(const struct review_write *w, char **reasons, struct error *err)
{
    struct screen_result r;
    struct json_object *codes;
    int n;
    if (!w->document || w->was_live || strcmp(w->kind, "delete") == 0)
        return 0;
    n = screen_text(w->document, strlen(w->document), &r);
    if (n < 0) {
        error_set(err, E_LIMIT_EXCEEDED, NULL,
                  "The document is over the %d bytes the poisoning screen reads", SCREEN_MAX_INPUT);
        return -1;
    }
    if (n == 0)
        return 0;
    codes = json_object_new_array();
    for (size_t i = 0; i < r.count; i++)
        json_object_array_add(codes, json_object_new_string(r.findings[i].code));
    *reasons = xstrdup(json_object_to_json_string_ext(codes, JSON_C_TO_STRING_PLAIN));
    json_object_put(codes);
    return 1;
}

/* The proposal of w, with its members, in one transaction: a store status. */
static int proposal_store(const struct svc_ctx *c, const struct review_write *w,
                          const struct proposal *p)
{
    int rc = w->member_count ? store_begin(c->st) : STORE_OK;
    if (rc == STORE_OK)
        rc = store_proposal_insert(c->st, p);
    for (size_t i = 0; rc == STORE_OK && i < w->member_count; i++)
        rc = store_proposal_member_add(c->st, c->space, p->id, w->members[i].id,
                                       w->members[i].version);
    if (w->member_count)
        rc = rc == STORE_OK ? store_commit(c->st) : (store_rollback(c->st), rc);
    return rc;
}

/* Screen w and store it as a proposal when holds (or when the screen found
 * something): 1 with *data, 0 when not held, -1 with err. */
static int hold(const struct svc_ctx *c, const struct review_write *w, int holds,
                struct json_object **data, struct error *err)
{
    struct proposal p;
    char *found = NULL, id[40], now[27];
    const char *state = "pending", *reasons = "[]";
    int rc;
    /* Text that tries to steer its reader is quarantined on every write,
     * whatever the policy: held, never served, approved by admins only. */
    switch (screened(w, &found, err)) {
    case -1:
        return -1;
    case 1:
        state = "quarantined";
        reasons = found;
        holds = 1;
        break;
    default:
        break;
    }
    if (!holds)
        return 0;
    memset(&p, 0, sizeof p);
    id_random(id, "prop-");
    time_utc_iso_micro(now);
    p.id = id;
    p.space = (char *)c->space;
    p.kind = (char *)w->kind;
    p.state = (char *)state;
    p.write_path = (char *)w->write_path;
    p.knowledge_id = (char *)w->knowledge_id;
    p.base_version = w->base_version;
    p.category = (char *)w->category;
    p.path = (char *)w->path;
    p.document = (char *)w->document;
    p.base_document = (char *)w->base_document;
    p.token_id = (char *)c->token_id;
    p.actor = (char *)c->actor;
    p.agent_id = (char *)(w->agent_id ? w->agent_id : "");
    p.trace_id = (char *)(w->trace_id ? w->trace_id : "");
    p.source = (char *)(w->source ? w->source : "");
    p.reasons = (char *)reasons;
    p.created_at = now;
    if ((rc = proposal_store(c, w, &p))) {
        free(found);
        return store_fail(rc, err);
    }
    *data = held_answer(state, id, w->kind, w->category, w->path);
    if (found)
        json_object_object_add(*data, "reasons", json_tokener_parse(found));
    free(found);
    return 1;
}

int review_gate(const struct svc_ctx *c, const struct review_write *w, struct json_object **data,
                struct error *err)
{
    char *policy = NULL;
    int rc, holds;
    if ((rc = store_review_policy_get(c->st, c->space, c->token_id, &policy)))
        return store_fail(rc, err);
    holds = policy_holds(policy, c, w);
    free(policy);
    return hold(c, w, holds, data, err);
}

int review_propose(const struct svc_ctx *c, const struct review_write *w, struct json_object **data,
                   struct error *err)
{
    return hold(c, w, 1, data, err);
}

/* The caller's policy into *policy (caller frees) and whether it holds a
 * write of this caller (by_llm as in review_write) into *holds; -1 with err. */
static int caller_policy(const struct svc_ctx *c, int by_llm, char **policy, int *holds,
                         struct error *err)
{
    struct review_write w = {0};
    int rc;
    if ((rc = store_review_policy_get(c->st, c->space, c->token_id, policy)))
        return store_fail(rc, err);
    w.by_llm = by_llm;
    *holds = policy_holds(*policy, c, &w);
    return 0;
}

int review_holds(const struct svc_ctx *c, int by_llm, int *holds, struct error *err)
{
    char *policy = NULL;
    int rc = caller_policy(c, by_llm, &policy, holds, err);
    free(policy);
    return rc;
}

int review_refuse(const struct svc_ctx *c, const char *write_path, int by_llm, struct error *err)
{
    char *policy = NULL;
    int holds;
    if (caller_policy(c, by_llm, &policy, &holds, err))
        return -1;
    if (holds) {
        error_set(err, E_FORBIDDEN, "review_required",
                  "The space's review policy (%s) holds this write, and %s cannot be held for "
                  "review yet: ask an editor to do it, or an admin to change the policy",
                  policy, write_path);
        error_str(err, "write_path", write_path);
    }
    free(policy);
    return holds ? -1 : 0;
}

int review_policy_valid(const char *policy)
{
    static const char *const policies[] = {"off", "agent_writes", "llm_writes", "all"};
    for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++)
        if (strcmp(policy, policies[i]) == 0)
            return 1;
    return 0;
}

int review_held_data(const struct svc_ctx *c, const char *id, struct json_object **data,
                     struct error *err)
{
    struct proposal p;
    int rc = store_proposal_get(c->st, c->space, id, &p);
    if (rc) {
        store_proposal_release(&p);
        return store_fail(rc, err);
    }
    /* held: pending or quarantined when it was made, whatever came since */
    *data = held_answer(strcmp(p.state, "quarantined") == 0 ? "quarantined" : "pending", p.id,
                        p.kind, p.category, p.path);
    json_object_object_add(*data, "state", json_object_new_string(p.state));
    store_proposal_release(&p);
    return 0;
}
