/* revisions (service): pages of an entry's revisions and the revert. */
#include "service/revisions.h"
#include "base/error.h"
#include "base/jfield.h"
#include "base/util.h"
#include "domain/knowledge.h"
#include "service/ctx.h"
#include "service/knowledge.h"
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

static void revision_not_found(struct error *err, long version, const char *id)
{
    error_set(err, E_NOT_FOUND, "revision_not_found", "Revision %ld of %s not found", version, id);
    error_int(err, "version", version);
}

/* The revert itself, inside the caller's transaction: every read that
 * decides who may revert fails closed (a store error is an error answer). */
static int revert_in_tx(const struct svc_ctx *c, const char *id, long version, struct error *err)
{
    struct revision_category want = {0, 0, NULL};
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
    free(want.category);
    knowledge_release(&k);
    return result;
}

int svc_knowledge_revert(const struct svc_ctx *c, const char *id, struct json_object *body,
                         struct json_object **data, struct error *err)
{
    long version;
    int rc;
    if (jf_long(err, body, "version", 1, 1000000000L, 0, &version) ||
        review_refuse(c, "revert", 0, err) || write_admit(c, 1, err))
        return -1;
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
    return knowledge_entry_data(c, id, NULL, data, err);
}
