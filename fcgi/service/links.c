/* links (service): typed links between entries, the roles and review rule
 * that guard them, supersede (retire in the link's transaction) and the
 * conflicts_with of search results. */
#include "service/links.h"
#include "base/error.h"
#include "base/jfield.h"
#include "base/util.h"
#include "domain/knowledge.h"
#include "service/auth.h"
#include "service/conflictitems.h"
#include "service/ctx.h"
#include "service/knowledge.h"
#include "service/reviewgate.h"
#include "service/writerate.h"
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

#define WHAT "Knowledge entry"
/* An entry's links in one answer, at most. */
#define LINKS_LIST_MAX 1000

static int link_type_valid(const char *type)
{
    static const char *const types[] = {"supersedes", "contradicts", "refines", "related"};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (type && strcmp(type, types[i]) == 0)
            return 1;
    return 0;
}

static int link_type_check(const char *type, struct error *err)
{
    if (link_type_valid(type))
        return 0;
    error_set(err, E_INVALID_REQUEST, "invalid_link_type",
              "The link type must be supersedes, contradicts, refines or related");
    error_str(err, "field", "type");
    return -1;
}

static int store_fail(int rc, struct error *err)
{
    store_status_error(rc, WHAT, err);
    return -1;
}

/* Both entries of key (any status) into from and to, in the caller's
 * transaction, and whether the caller may link them: NOT_FOUND when one is
 * not of the caller's space; supersedes needs an editor (it retires an
 * entry) and is never done unreviewed; a rule on either side needs an
 * admin. 0, or -1 with err (from and to released). */
static int link_entries(const struct svc_ctx *c, const struct link_key *key, struct knowledge *from,
                        struct knowledge *to, int reviewed, struct error *err)
{
    int rc, supersedes = strcmp(key->type, "supersedes") == 0;
    knowledge_init(from);
    knowledge_init(to);
    if ((rc = store_knowledge_get(c->st, c->space, key->from_id, 1, from)) ||
        (rc = store_knowledge_get(c->st, c->space, key->to_id, 1, to))) {
        store_fail(rc, err);
        goto fail;
    }
    if (c->role < (supersedes ? ROLE_EDITOR : ROLE_AGENT)) { /* the MCP tool lists for readers */
        error_set(err, E_FORBIDDEN, "role_forbidden", "The %s role may not do this",
                  role_name(c->role));
        error_str(err, "role", role_name(c->role));
        goto fail;
    }
    if (knowledge_may_change(c, from->category, err) || knowledge_may_change(c, to->category, err))
        goto fail;
    if (supersedes && !reviewed && review_refuse(c, "supersede", 0, err))
        goto fail;
    return 0;
fail:
    knowledge_release(from);
    knowledge_release(to);
    return -1;
}

static struct json_object *link_json(const struct link_key *key, const struct link_row *row)
{
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "from", json_object_new_string(key->from_id));
    json_object_object_add(o, "to", json_object_new_string(key->to_id));
    json_object_object_add(o, "type", json_object_new_string(key->type));
    json_object_object_add(o, "actor", json_object_new_string(row->actor ? row->actor : ""));
    json_object_object_add(o, "reason", json_object_new_string(row->reason ? row->reason : ""));
    json_object_object_add(o, "created_at",
                           json_object_new_string(row->created_at ? row->created_at : ""));
    return o;
}

/* ---- list ---- */

static void link_item(const struct knowledge_link *l, void *ctx)
{
    struct json_object *o = json_object_new_object(), *other = json_object_new_object();
    json_object_object_add(o, "from", json_object_new_string(l->from_id));
    json_object_object_add(o, "to", json_object_new_string(l->to_id));
    json_object_object_add(o, "type", json_object_new_string(l->type));
    json_object_object_add(o, "direction", json_object_new_string(l->direction));
    json_object_object_add(o, "actor", json_object_new_string(l->actor));
    json_object_object_add(o, "reason", json_object_new_string(l->reason));
    json_object_object_add(o, "created_at", json_object_new_string(l->created_at));
    json_object_object_add(other, "id", json_object_new_string(l->other_id));
    json_object_object_add(other, "title", json_object_new_string(l->other_title));
    json_object_object_add(other, "path", json_object_new_string(l->other_path));
    json_object_object_add(other, "category", json_object_new_string(l->other_category));
    json_object_object_add(other, "status", json_object_new_string(l->other_status));
    json_object_object_add(o, "other", other);
    json_object_array_add(ctx, o);
}

int svc_links_list(const struct svc_ctx *c, const char *id, struct json_object **data,
                   struct error *err)
{
    struct json_object *items;
    struct knowledge k;
    int rc;
    knowledge_init(&k);
    if ((rc = store_knowledge_get(c->st, c->space, id, 1, &k)))
        return store_fail(rc, err);
    items = json_object_new_array();
    rc = store_links_of(c->st, c->space, k.id, LINKS_LIST_MAX, link_item, items);
    knowledge_release(&k);
    if (rc) {
        json_object_put(items);
        return store_fail(rc, err);
    }
    *data = json_object_new_object();
    json_object_object_add(*data, "items", items);
    return 0;
}

/* ---- add and remove ---- */

/* One change of a link: its key and, to add, its reason; what it did. */
struct link_change {
    struct link_key key;
    const char *reason;
    int done;      /* added, removed */
    long restored; /* a removal restored `to` to this version */
};

/* A change inside the write transaction, both entries read: a store status. */
typedef int (*link_step)(const struct svc_ctx *c, struct link_change *ch,
                         const struct knowledge *from, const struct knowledge *to);

/* Run step in one write transaction after link_entries: the entries that
 * decide who may link are read in the transaction that links them, so a
 * move into rules meanwhile cannot slip through. 0, or -1 with err. */
static int link_tx(const struct svc_ctx *c, struct link_change *ch, link_step step,
                   struct error *err)
{
    struct knowledge from, to;
    int rc;
    if (write_admit(c, 1, err))
        return -1;
    if ((rc = store_begin(c->st)))
        return store_fail(rc, err);
    if (link_entries(c, &ch->key, &from, &to, 0, err)) {
        store_rollback(c->st);
        return -1;
    }
    rc = step(c, ch, &from, &to);
    knowledge_release(&from);
    knowledge_release(&to);
    if (rc)
        store_rollback(c->st);
    else
        rc = store_commit(c->st);
    if (rc == STORE_CONFLICT && ch->restored) {
        error_set(err, E_CONFLICT, "revert_path_taken",
                  "Another entry now holds the path of the superseded entry (or a folder or "
                  "file of that name exists); move it first");
        error_int(err, "version", ch->restored);
        return -1;
    }
    return rc ? store_fail(rc, err) : 0;
}

/* Add the link (both entries active): a link that exists is left as it is
 * (done 0); a new supersedes link retires its target. */
static int link_add_step(const struct svc_ctx *c, struct link_change *ch,
                         const struct knowledge *from, const struct knowledge *to)
{
    struct link_row row;
    char now[20];
    int rc = store_link_get(c->st, c->space, &ch->key, &row);
    link_row_release(&row);
    if (rc != STORE_NOT_FOUND)
        return rc; /* it exists (STORE_OK), or an error */
    if (strcmp(from->status, "active") != 0 || strcmp(to->status, "active") != 0)
        return STORE_NOT_FOUND;
    time_utc_text(now);
    rc = store_link_add(c->st, c->space, &ch->key, c->actor, ch->reason, now, &ch->done);
    /* not added: another writer's same link committed first, and did the rest */
    if (rc == STORE_OK && ch->done && strcmp(ch->key.type, "supersedes") == 0)
        rc = store_knowledge_supersede(c->st, c->space, ch->key.from_id, ch->key.to_id, c->actor);
    return rc;
}

int svc_links_add(const struct svc_ctx *c, const char *id, struct json_object *body,
                  struct json_object **data, struct error *err)
{
    struct link_change ch = {{id, NULL, NULL}, NULL, 0, 0};
    struct link_row row;
    int rc;
    if (jf_string(err, body, "to", 1, 64, &ch.key.to_id) ||
        jf_string(err, body, "type", 1, 32, &ch.key.type) ||
        jf_string(err, body, "reason", 0, LINK_REASON_MAX, &ch.reason) ||
        link_type_check(ch.key.type, err))
        return -1;
    if (strcmp(id, ch.key.to_id) == 0) {
        error_set(err, E_INVALID_REQUEST, "link_self", "An entry cannot be linked to itself");
        error_str(err, "field", "to");
        return -1;
    }
    if (!ch.reason)
        ch.reason = "";
    if (link_tx(c, &ch, link_add_step, err))
        return -1;
    if ((rc = store_link_get(c->st, c->space, &ch.key, &row)))
        return store_fail(rc, err);
    *data = link_json(&ch.key, &row);
    json_object_object_add(*data, "added", json_object_new_boolean(ch.done));
    link_row_release(&row);
    if (strcmp(ch.key.type, "contradicts") == 0) {
        /* an editor resolves it in the review queue (best effort: the link stands) */
        struct conflict_pair pair = {ch.key.from_id, ch.key.to_id, ch.reason, "link", "link", 0};
        char *item = NULL;
        if (conflict_item_queue(c, &pair, &item) >= 0 && item)
            json_object_object_add(*data, "review_id", json_object_new_string(item));
        free(item);
    }
    return 0;
}

/* Remove the link; a supersedes link whose target it retired (still
 * merged into its source) brings the target back to its revision before,
 * as a revert does. */
static int link_remove_step(const struct svc_ctx *c, struct link_change *ch,
                            const struct knowledge *from, const struct knowledge *to)
{
    int rc = store_link_remove(c->st, c->space, &ch->key, &ch->done);
    (void)from;
    if (rc == STORE_OK && ch->done && strcmp(ch->key.type, "supersedes") == 0 &&
        strcmp(to->status, "merged") == 0 && to->merged_into &&
        strcmp(to->merged_into, ch->key.from_id) == 0 && to->version > 1) {
        ch->restored = to->version - 1; /* the supersede added one version */
        rc = store_knowledge_revert(c->st, c->space, ch->key.to_id, ch->restored, c->actor);
    }
    return rc;
}

int svc_links_remove(const struct svc_ctx *c, const char *id, const char *to_id, const char *type,
                     struct json_object **data, struct error *err)
{
    struct link_change ch = {{id, to_id, type}, NULL, 0, 0};
    if (link_type_check(type, err) || link_tx(c, &ch, link_remove_step, err))
        return -1;
    *data = json_object_new_object();
    json_object_object_add(*data, "removed", json_object_new_boolean(ch.done));
    return 0;
}

int links_type_valid(const char *type)
{
    return link_type_valid(type);
}

int links_change_in_tx(const struct svc_ctx *c, const struct link_key *key, const char *reason,
                       int add, int *done, struct error *err)
{
    struct link_change ch = {*key, reason ? reason : "", 0, 0};
    struct knowledge from, to;
    int rc;
    *done = 0;
    if (link_type_check(key->type, err))
        return -1;
    if (strcmp(key->from_id, key->to_id) == 0) {
        error_set(err, E_INVALID_REQUEST, "link_self", "An entry cannot be linked to itself");
        return -1;
    }
    if (link_entries(c, &ch.key, &from, &to, 0, err))
        return -1;
    rc = add ? link_add_step(c, &ch, &from, &to) : link_remove_step(c, &ch, &from, &to);
    knowledge_release(&from);
    knowledge_release(&to);
    if (rc)
        return store_fail(rc, err);
    *done = ch.done;
    return 0;
}

int links_supersede_reviewed(const struct svc_ctx *c, const char *keep, const char *other,
                             const char *reason, struct error *err)
{
    struct link_change ch = {{keep, other, "supersedes"}, reason ? reason : "", 0, 0};
    struct knowledge from, to;
    int rc;
    if (link_entries(c, &ch.key, &from, &to, 1, err))
        return -1;
    rc = link_add_step(c, &ch, &from, &to);
    knowledge_release(&from);
    knowledge_release(&to);
    return rc ? store_fail(rc, err) : 0;
}

int links_contradicts_clear(const struct svc_ctx *c, const char *a, const char *b)
{
    struct link_key ab = {a, b, "contradicts"}, ba = {b, a, "contradicts"};
    int removed, rc = store_link_remove(c->st, c->space, &ab, &removed);
    return rc ? rc : store_link_remove(c->st, c->space, &ba, &removed);
}

/* ---- conflicts_with ---- */

/* ctx: the results' conflicts_with arrays, by the place of their ids. */
static void conflict_id(size_t i, const char *other_id, void *ctx)
{
    struct json_object **with = ctx;
    json_object_array_add(with[i], json_object_new_string(other_id));
}

int links_conflicts_annotate(const struct svc_ctx *c, struct json_object *results)
{
    size_t n = json_object_array_length(results), k = 0;
    const char **ids = xcalloc(n + 1, sizeof *ids);
    struct json_object **with = xcalloc(n + 1, sizeof *with);
    int rc;
    for (size_t i = 0; i < n; i++) {
        struct json_object *item = json_object_array_get_idx(results, i);
        struct json_object *arr = json_object_new_array();
        const char *id = jf_member_str(item, "id");
        json_object_object_add(item, "conflicts_with", arr);
        if (id) {
            ids[k] = id;
            with[k++] = arr;
        }
    }
    /* every result's in one read */
    rc = store_links_contradicts_of(c->st, c->space, ids, k, conflict_id, with);
    free(ids);
    free(with);
    return rc;
}
