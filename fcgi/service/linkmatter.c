/* linkmatter (service): typed links of a written document's front matter,
 * applied on writes and imports. */
#include "service/linkmatter.h"
#include "base/error.h"
#include "base/jfield.h"
#include "base/util.h"
#include "domain/knowledge.h"
#include "service/ctx.h"
#include "service/linkdoc.h"
#include "service/links.h"
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

/* ---- apply ---- */

static void warn(struct linkmatter_result *res, const char *type, const char *path,
                 const char *code, const char *message)
{
    struct json_object *w = json_object_new_object();
    json_object_object_add(w, "type", json_object_new_string(type));
    json_object_object_add(w, "path", json_object_new_string(path ? path : ""));
    json_object_object_add(w, "code", json_object_new_string(code ? code : "link_refused"));
    json_object_object_add(w, "message", json_object_new_string(message ? message : ""));
    json_object_array_add(res->warnings, w);
}

/* The entry a front matter path names: an active entry at that path (of
 * the named category, else from's), or one the entry already links to
 * with this type at that path (a superseded target is retired, so no
 * active entry holds its path). The id into id (caller frees), or NULL. */
static char *target_of(const struct svc_ctx *c, const char *from_category, const char *type,
                       const char *value, struct json_object *current)
{
    struct knowledge t;
    struct buf q;
    const char *category = from_category, *path = value, *slash = strchr(value, '/');
    char *id = NULL;
    buf_init(&q, 8192);
    if (slash && ((size_t)(slash - value) == 5 && strncmp(value, "rules", 5) == 0))
        category = "rules", path = slash + 1;
    else if (slash && (size_t)(slash - value) == 11 && strncmp(value, "experiences", 11) == 0)
        category = "experiences", path = slash + 1;
    buf_addf(&q, "%s/%s", category, path);
    knowledge_init(&t);
    if (store_knowledge_get_by_path(c->st, c->space, category, path, &t) == STORE_OK)
        id = xstrdup(t.id);
    knowledge_release(&t);
    for (size_t j = 0; !id && j < json_object_array_length(current); j++) {
        struct json_object *l = json_object_array_get_idx(current, j);
        if (strcmp(jf_member_str(l, "type"), type) == 0 &&
            strcmp(jf_member_str(l, "qualified"), q.data) == 0)
            id = xstrdup(jf_member_str(l, "id"));
    }
    buf_release(&q);
    return id;
}

/* One change, in the caller's transaction or in its own: counted in res,
 * or a warning naming path. */
static void change(const struct svc_ctx *c, const struct link_key *key, int add, int in_tx,
                   const char *path, struct linkmatter_result *res)
{
    struct error err;
    int done = 0, rc = STORE_OK, failed;
    error_init(&err);
    if (!in_tx && (rc = store_begin(c->st)))
        store_status_error(rc, "Knowledge entry", &err);
    failed = rc || links_change_in_tx(c, key, "front matter", add, &done, &err);
    if (!in_tx && !rc && failed)
        store_rollback(c->st);
    else if (!in_tx && !failed && (rc = store_commit(c->st))) {
        store_status_error(rc, "Knowledge entry", &err);
        failed = 1;
    }
    if (failed)
        warn(res, key->type, path, err.key, err.message.data);
    else if (add)
        res->added += done;
    else
        res->removed += done;
    error_release(&err);
}

/* 1 when list (of {id, type?}) holds id, of type when type is not NULL. */
static int holds(struct json_object *list, const char *type, const char *id)
{
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        struct json_object *l = json_object_array_get_idx(list, i);
        if ((!type || strcmp(jf_member_str(l, "type"), type) == 0) &&
            strcmp(jf_member_str(l, "id"), id) == 0)
            return 1;
    }
    return 0;
}

/* The paths of a key's value: a list of strings, or one string. */
static int wanted_paths(struct json_object *v, struct json_object **paths)
{
    *paths = json_object_new_array();
    if (!v)
        return 0;
    if (json_object_is_type(v, json_type_string)) {
        json_object_array_add(*paths, json_object_get(v));
        return 0;
    }
    if (!json_object_is_type(v, json_type_array))
        return -1;
    for (size_t i = 0; i < json_object_array_length(v); i++) {
        struct json_object *p = json_object_array_get_idx(v, i);
        if (!json_object_is_type(p, json_type_string))
            return -1;
        json_object_array_add(*paths, json_object_get(p));
    }
    return 0;
}

static void apply_type(const struct svc_ctx *c, const char *from_id, const char *from_category,
                       const char *type, struct json_object *value, struct json_object *current,
                       int in_tx, struct linkmatter_result *res)
{
    struct json_object *paths, *wanted = json_object_new_array();
    if (wanted_paths(value, &paths)) {
        warn(res, type, "", "invalid_link_list",
             "A link key in front matter must be a list of paths (or one path)");
        goto out;
    }
    for (size_t i = 0; i < json_object_array_length(paths); i++) {
        const char *p = json_object_get_string(json_object_array_get_idx(paths, i));
        char *id = target_of(c, from_category, type, p, current);
        if (!id) {
            warn(res, type, p, "link_target_not_found", "No document at this path");
            continue;
        }
        {
            struct json_object *w = json_object_new_object();
            json_object_object_add(w, "id", json_object_new_string(id));
            json_object_object_add(w, "path", json_object_new_string(p));
            json_object_array_add(wanted, w);
        }
        free(id);
    }
    /* the links of this type that are not listed go; the listed ones that are missing come */
    for (size_t j = 0; j < json_object_array_length(current); j++) {
        struct json_object *l = json_object_array_get_idx(current, j);
        struct link_key key = {from_id, jf_member_str(l, "id"), type};
        if (strcmp(jf_member_str(l, "type"), type) == 0 && !holds(wanted, NULL, key.to_id))
            change(c, &key, 0, in_tx, jf_member_str(l, "qualified"), res);
    }
    for (size_t i = 0; i < json_object_array_length(wanted); i++) {
        struct json_object *w = json_object_array_get_idx(wanted, i);
        struct link_key key = {from_id, jf_member_str(w, "id"), type};
        if (!holds(current, type, key.to_id))
            change(c, &key, 1, in_tx, jf_member_str(w, "path"), res);
    }
out:
    json_object_put(paths);
    json_object_put(wanted);
}

long linkmatter_apply(const struct svc_ctx *c, const char *from_id, const char *from_category,
                      struct json_object *meta, int in_tx, struct linkmatter_result *res)
{
    struct json_object *current = NULL, *v;
    res->added = res->removed = 0;
    res->warnings = json_object_new_array();
    if (!linkdoc_present(meta))
        return 0;
    if (linkdoc_outgoing(c->st, c->space, from_id, &current) != STORE_OK) {
        warn(res, "", "", "link_read_failed", "The entry's links could not be read");
        goto out;
    }
    for (size_t i = 0; i < LINKDOC_KEYS; i++)
        if (json_object_object_get_ex(meta, linkdoc_keys[i], &v))
            apply_type(c, from_id, from_category, linkdoc_keys[i], v, current, in_tx, res);
out:
    json_object_put(current);
    return (long)json_object_array_length(res->warnings);
}

void linkmatter_answer(const struct svc_ctx *c, const struct knowledge *k, struct json_object *data)
{
    struct json_object *meta = json_parse_stored(k->meta), *o;
    struct linkmatter_result res;
    if (linkdoc_present(meta)) {
        linkmatter_apply(c, k->id, k->category, meta, 0, &res);
        o = json_object_new_object();
        json_object_object_add(o, "added", json_object_new_int64(res.added));
        json_object_object_add(o, "removed", json_object_new_int64(res.removed));
        json_object_object_add(o, "warnings", res.warnings);
        json_object_object_add(data, "links", o);
    }
    json_object_put(meta);
}
