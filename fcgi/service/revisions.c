/* revisions (service): pages of an entry's revisions and the revert. */
#include "service/revisions.h"
#include "base/error.h"
#include "base/jfield.h"
#include "base/util.h"
#include "domain/knowledge.h"
#include "service/ctx.h"
#include "service/knowledge.h"
#include "service/linkmatter.h"
#include "service/reviewgate.h"
#include "service/writerate.h"
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

#define WHAT "Knowledge entry"

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

int svc_knowledge_revisions(const struct svc_ctx *c, const char *id, long limit, long offset,
                            struct json_object **data, struct error *err)
{
    struct revision_page page = {NULL, limit, offset, 0};
    int rc;
    page.items = json_object_new_array();
    rc = store_knowledge_revisions_each(c->st, c->space, id, revision_add, &page);
    if (rc) {
        json_object_put(page.items);
        store_status_error(rc, WHAT, err);
        return -1;
    }
    *data = json_object_new_object();
    json_object_object_add(*data, "id", json_object_new_string(id));
    json_object_object_add(*data, "items", page.items);
    json_object_object_add(*data, "total", json_object_new_int64(page.total));
    json_object_object_add(*data, "limit", json_object_new_int64(page.limit));
    json_object_object_add(*data, "offset", json_object_new_int64(page.offset));
    return 0;
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

/* The category of revision want->version's snapshot (NULL when not found),
 * its path and its document (for a revert held for review). */
struct revision_category {
    long version;
    int found;
    char *category, *path, *document;
};

static char *snapshot_text(struct json_object *doc, const char *key)
{
    struct json_object *v;
    if (doc && json_object_object_get_ex(doc, key, &v) && json_object_is_type(v, json_type_string))
        return xstrdup(json_object_get_string(v));
    return NULL;
}

static int revision_category(const struct knowledge_revision *r, void *ctx)
{
    struct revision_category *want = ctx;
    struct json_object *doc;
    if (r->version != want->version)
        return 0;
    want->found = 1;
    doc = json_parse_stored(r->document);
    want->category = snapshot_text(doc, "category");
    want->path = snapshot_text(doc, "path");
    want->document = snapshot_text(doc, "document");
    json_object_put(doc);
    return 1;
}

static void revision_category_release(struct revision_category *want)
{
    free(want->category);
    free(want->path);
    free(want->document);
}

static void revision_not_found(struct error *err, long version, const char *id)
{
    error_set(err, E_NOT_FOUND, "revision_not_found", "Revision %ld of %s not found", version, id);
    error_int(err, "version", version);
}

/* The revert itself, inside the caller's transaction: every read that
 * decides who may revert fails closed (a store error is an error answer). */
static int revert_in_tx(const struct svc_ctx *c, const char *id, long version, struct error *err)
{
    struct revision_category want = {0, 0, NULL, NULL, NULL};
    struct knowledge k;
    int rc, result = -1;
    if ((rc = store_knowledge_get(c->st, c->space, id, 1, &k))) {
        store_status_error(rc, WHAT, err);
        return -1;
    }
    if (knowledge_may_change(c, k.category, err))
        goto out;
    if (!version && strcmp(k.status, "active") != 0 &&
        (rc = store_knowledge_revisions_each(c->st, c->space, k.id, last_active, &version))) {
        store_status_error(rc, WHAT, err);
        goto out;
    }
    if (!version) {
        error_set(err, E_INVALID_REQUEST, "revert_version_required",
                  "'version' is required (only a deleted entry can be restored without one)");
        goto out;
    }
    /* Reverting to a revision that was a rule changes a rule: admins only. */
    want.version = version;
    rc = store_knowledge_revisions_each(c->st, c->space, k.id, revision_category, &want);
    if (rc) {
        store_status_error(rc, WHAT, err);
        goto out;
    }
    if (!want.found) {
        revision_not_found(err, version, k.id);
        goto out;
    }
    if (!want.category) {
        error_set(err, E_INTERNAL, NULL, "Revision %ld of %s cannot be read", version, k.id);
        goto out;
    }
    if (knowledge_may_change(c, want.category, err))
        goto out;
    rc = store_knowledge_revert(c->st, c->space, k.id, version, c->actor);
    if (rc == STORE_NOT_FOUND) {
        revision_not_found(err, version, k.id);
    } else if (rc == STORE_CONFLICT) {
        error_set(err, E_CONFLICT, "revert_path_taken",
                  "Another entry now holds the path of revision %ld (or a folder or file of "
                  "that name exists); move it first",
                  version);
        error_int(err, "version", version);
    } else if (rc) {
        store_status_error(rc, WHAT, err);
    } else {
        result = 0;
    }
out:
    revision_category_release(&want);
    knowledge_release(&k);
    return result;
}

/* The review gate for a revert of entry id to version: when the policy
 * holds the caller's writes, the revert of an active entry is a proposal of
 * kind update whose document is the revision's, made against the live
 * document and version (an approval writes it as any update). A restore of
 * a deleted entry, and a revert to a revision at another place (which moves
 * the entry back), cannot be held yet: refused. 1 with *data when held, 0
 * to revert now, -1 with err. */
static int revert_held(const struct svc_ctx *c, const char *id, long version,
                       struct json_object **data, struct error *err)
{
    struct revision_category want = {version, 0, NULL, NULL, NULL};
    struct review_write w = {0};
    struct knowledge k;
    int rc, holds, result = -1;
    if (review_holds(c, 0, &holds, err))
        return -1;
    if (!holds)
        return 0;
    if ((rc = store_knowledge_get(c->st, c->space, id, 1, &k))) {
        store_status_error(rc, WHAT, err);
        return -1;
    }
    if (knowledge_may_change(c, k.category, err))
        goto out;
    if (strcmp(k.status, "active") != 0) {
        review_refuse(c, "revert", 0, err);
        goto out;
    }
    if (!version) {
        result = 0; /* revert_in_tx says a version is required */
        goto out;
    }
    if ((rc = store_knowledge_revisions_each(c->st, c->space, k.id, revision_category, &want))) {
        store_status_error(rc, WHAT, err);
        goto out;
    }
    if (!want.found) {
        revision_not_found(err, version, k.id);
        goto out;
    }
    if (!want.category || !want.path || !want.document) {
        error_set(err, E_INTERNAL, NULL, "Revision %ld of %s cannot be read", version, k.id);
        goto out;
    }
    if (knowledge_may_change(c, want.category, err))
        goto out;
    if (strcmp(want.category, k.category) != 0 || strcmp(want.path, k.path) != 0) {
        review_refuse(c, "revert", 0, err);
        goto out;
    }
    w.write_path = "revert";
    w.kind = "update";
    w.knowledge_id = k.id;
    w.base_version = k.version;
    w.category = k.category;
    w.path = k.path;
    w.document = want.document;
    w.base_document = k.document;
    w.agent_id = k.agent_id;
    w.source = "agent";
    w.was_live = 1;
    result = review_gate(c, &w, data, err);
out:
    revision_category_release(&want);
    knowledge_release(&k);
    return result;
}

/* A revision's document holds the link keys its front matter was written
 * with (docs/conflicts.md "Links in revisions"): the reverted document's
 * keys are applied again, as a write applies them. */
static void revert_links(const struct svc_ctx *c, const char *id, struct json_object *data)
{
    struct knowledge k;
    knowledge_init(&k);
    if (store_knowledge_get(c->st, c->space, id, 0, &k) == STORE_OK)
        linkmatter_answer(c, &k, data);
    knowledge_release(&k);
}

int svc_knowledge_revert(const struct svc_ctx *c, const char *id, struct json_object *body,
                         struct json_object **data, struct error *err)
{
    long version;
    int rc;
    if (jf_long(err, body, "version", 1, 1000000000L, 0, &version) || write_admit(c, 1, err))
        return -1;
    if ((rc = revert_held(c, id, version, data, err)))
        return rc > 0 ? 0 : -1;
    /* One write transaction: the entry and revision read for the checks
     * are the ones reverted, with no change possible in between. */
    if ((rc = store_begin(c->st))) {
        store_status_error(rc, WHAT, err);
        return -1;
    }
    if (revert_in_tx(c, id, version, err)) {
        store_rollback(c->st);
        return -1;
    }
    if ((rc = store_commit(c->st))) {
        store_status_error(rc, WHAT, err);
        return -1;
    }
    if (knowledge_entry_data(c, id, NULL, data, err))
        return -1;
    revert_links(c, id, *data);
    return 0;
}
