/* h_files: the file view of seed 004 — rules and experiences as Markdown
 * documents addressed by (category, path): limits, list, read, write,
 * rename, delete and the trash of deleted documents. Requests, checks,
 * messages and response shapes follow REFERENCE.md section 1. */
#include "service/auth.h"
#include "domain/document.h"
#include "domain/frontmatter.h"
#include "api/handlers.h"
#include "api/params.h"
#include "base/jfield.h"
#include "domain/knowledge_limits.h"
#include "base/markdown.h"
#include "domain/paths.h"
#include "service/knowledge.h"
#include "store/store.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* A copy of a string field with surrounding whitespace removed; NULL when
 * absent or not a string. A "\u0000" inside becomes \x01, so the checks
 * refuse it (a control character, an invalid category) instead of the text
 * being cut short at the NUL ("x.md\u0000.txt" is not "x.md"). */
static char *stripped_field(struct json_object *body, const char *key)
{
    struct json_object *v;
    const char *s;
    char *copy;
    size_t start, end, len;
    if (!json_object_object_get_ex(body, key, &v) || !(s = jf_str(v)))
        return NULL;
    len = (size_t)json_object_get_string_len(v);
    copy = xstrndup(s, len);
    for (size_t i = 0; i < len; i++)
        if (copy[i] == '\0')
            copy[i] = '\x01';
    start = strspn(copy, " \t\r\n\f\v");
    end = len;
    while (end > start && strchr(" \t\r\n\f\v", copy[end - 1]))
        end--;
    memmove(copy, copy + start, end - start);
    copy[end - start] = '\0';
    return copy;
}

struct target {
    char *category;
    char *path; /* normalised */
};

static void target_release(struct target *t)
{
    free(t->category);
    free(t->path);
}

/* {category, path} of the body, checked like the reference's read/write/delete. */
static int target_or_400(struct response *res, struct json_object *body, const char *path_key,
                         struct target *t)
{
    char *path = stripped_field(body, path_key);
    struct buf norm;
    struct error err;
    int rc = -1;
    t->category = stripped_field(body, "category");
    t->path = NULL;
    if (!t->category)
        t->category = xstrdup("");
    if (!path || !*path) {
        error_param_str(res, "field", path_key);
        reply_error_key(res, 200, E_INVALID_REQUEST, "field_required", "'%s' is required",
                        path_key);
        free(path);
        return -1;
    }
    buf_init(&norm, 4096);
    error_init(&err);
    if (path_check_e(t->category, path, &norm, &err)) {
        reply_error_of(res, &err);
    } else {
        t->path = xstrndup(norm.data, norm.len);
        rc = 0;
    }
    buf_release(&norm);
    error_release(&err);
    free(path);
    return rc;
}

/* The parsed front matter of an entry (its meta column). A meta over the
 * front matter budget (stored by a build that expanded YAML aliases) is
 * not parsed again: it reads as empty. */
static struct json_object *meta_of(const struct knowledge *k)
{
    struct json_object *m =
        k->meta && strlen(k->meta) <= FRONTMATTER_MAX_BYTES ? json_parse_stored(k->meta) : NULL;
    if (!m || !json_object_is_type(m, json_type_object)) {
        json_object_put(m);
        m = json_object_new_object();
    }
    return m;
}

static const char *meta_text(struct json_object *meta, const char *key)
{
    struct json_object *v;
    if (!json_object_object_get_ex(meta, key, &v) || !v)
        return "";
    return json_object_get_string(v);
}

/* The updated_token of an entry: "<updated_at>#<version>", which changes
 * with every write even within one second (expected_updated takes it). */
static struct json_object *updated_token(const char *updated_at, long version)
{
    struct buf t;
    struct json_object *o;
    buf_init(&t, 64);
    buf_addf(&t, "%s#%ld", updated_at, version);
    o = json_object_new_string(t.data);
    buf_release(&t);
    return o;
}

/* Whether expected_updated still holds for old: an updated_token must name
 * its version; a plain updated_at (one-second resolution) must match and be
 * unambiguous — no earlier version written within that same second, else a
 * write in between could pass unseen. 1 holds, 0 not, or -(store status). */
static int updated_holds(struct request *req, const struct knowledge *old, const char *expected)
{
    const char *hash = strchr(expected, '#');
    size_t at_len = hash ? (size_t)(hash - expected) : strlen(expected);
    char before[20];
    long version;
    int rc;
    if (at_len != strlen(old->updated_at) || strncmp(expected, old->updated_at, at_len) != 0)
        return 0;
    if (hash)
        return parse_long(hash + 1, 1, 1L << 40, &version) == 0 && version == old->version;
    if (old->version <= 1)
        return 1;
    rc = store_knowledge_revision_time(req->store, req->who.space, old->id, old->version - 1,
                                       before);
    if (rc == STORE_NOT_FOUND)
        return 1;
    if (rc)
        return -rc;
    return strcmp(before, old->updated_at) != 0;
}

/* The reference's list item, plus id, version, updated_at and updated_token. */
static struct json_object *list_item(const struct knowledge *k)
{
    struct json_object *o = json_object_new_object(), *meta = meta_of(k);
    struct json_object *tags = json_parse_stored(k->tags ? k->tags : "[]");
    json_object_object_add(o, "title", json_object_new_string(k->title));
    json_object_object_add(o, "tags", tags ? tags : json_object_new_array());
    json_object_object_add(o, "path", json_object_new_string(k->path));
    json_object_object_add(o, "source", json_object_new_string(k->source));
    json_object_object_add(o, "created", json_object_new_string(meta_text(meta, "created")));
    if (strcmp(k->category, "rules") == 0) {
        json_object_object_add(o, "description", json_object_new_string(k->description));
        json_object_object_add(o, "alwaysApply", json_object_new_boolean(k->always_apply));
    }
    json_object_object_add(o, "id", json_object_new_string(k->id));
    json_object_object_add(o, "version", json_object_new_int64(k->version));
    json_object_object_add(o, "updated_at", json_object_new_string(k->updated_at));
    json_object_object_add(o, "updated_token", updated_token(k->updated_at, k->version));
    json_object_put(meta);
    return o;
}

/* ---- /limits ---- */

void h_files_limits(struct request *req, struct response *res)
{
    struct json_object *limits = json_object_new_object(), *data = json_object_new_object();
    (void)req;
    json_object_object_add(limits, "rule_description_max",
                           json_object_new_int(LIMIT_RULE_DESCRIPTION));
    json_object_object_add(limits, "rules", json_object_new_int(LIMIT_RULES_BODY));
    json_object_object_add(limits, "experiences", json_object_new_int(LIMIT_EXPERIENCES_BODY));
    json_object_object_add(data, "limits", limits);
    reply_data(res, data);
}

/* ---- /list ---- */

static int list_add(const struct knowledge *k, void *ctx)
{
    json_object_array_add(ctx, list_item(k));
    return 0;
}

void h_files_list(struct request *req, struct response *res)
{
    struct json_object *body = http_body_json_or_400(req, res), *items;
    char *category;
    int rc;
    if (!body)
        return;
    category = stripped_field(body, "category");
    if (!category || !*category) {
        error_param_str(res, "field", "category");
        reply_error_key(res, 200, E_INVALID_REQUEST, "field_required", "'category' is required");
    } else if (!category_valid(category)) {
        error_param_str(res, "category", category);
        reply_error_key(res, 200, E_INVALID_REQUEST, "invalid_category", "Invalid category: %s",
                        category);
    } else {
        items = json_object_new_array();
        rc = store_knowledge_scan(req->store, req->who.space, SCAN_CATEGORY, category, 0, list_add,
                                  items);
        reply_items(res, rc, items, "Knowledge file");
    }
    free(category);
    json_object_put(body);
}

/* ---- /read ---- */

void h_files_read(struct request *req, struct response *res)
{
    struct json_object *body = http_body_json_or_400(req, res);
    struct target t = {0};
    struct knowledge k;
    int rc;
    if (!body)
        return;
    knowledge_init(&k);
    if (target_or_400(res, body, "path", &t))
        goto out;
    rc = store_knowledge_get_by_path(req->store, req->who.space, t.category, t.path, &k);
    if (rc == STORE_NOT_FOUND) {
        reply_error_key(res, 200, E_FILE_NOT_FOUND, "file_not_found", "Knowledge file not found");
    } else if (rc) {
        reply_store_error(res, rc, "Knowledge file");
    } else {
        struct json_object *data = json_object_new_object(), *fields = list_item(&k);
        struct buf html;
        const char *doc_body = document_body(k.document);
        buf_init(&html, 4 * 1024 * 1024);
        markdown_to_html(doc_body, strlen(doc_body), &html);
        struct json_object *meta = meta_of(&k);
        json_object_object_add(fields, "updated",
                               json_object_new_string(meta_text(meta, "updated")));
        json_object_put(meta);
        json_object_object_add(data, "content", json_object_new_string(k.document));
        json_object_object_add(data, "category", json_object_new_string(k.category));
        json_object_object_add(data, "path", json_object_new_string(k.path));
        json_object_object_add(data, "id", json_object_new_string(k.id));
        json_object_object_add(data, "version", json_object_new_int64(k.version));
        json_object_object_add(data, "updated_at", json_object_new_string(k.updated_at));
        json_object_object_add(data, "updated_token", updated_token(k.updated_at, k.version));
        json_object_object_add(data, "fields", fields);
        json_object_object_add(data, "html", json_object_new_string_len(html.data, (int)html.len));
        buf_release(&html);
        reply_data(res, data);
    }
out:
    knowledge_release(&k);
    target_release(&t);
    json_object_put(body);
}

/* ---- /write ---- */

void h_files_write(struct request *req, struct response *res)
{
    struct json_object *body = http_body_json_or_400(req, res), *v;
    struct target t = {0};
    struct knowledge k, old;
    struct buf doc;
    struct error err;
    const char *content = "", *expected_updated;
    long expected_version;
    int rc = STORE_ERROR, created = 0;

    if (!body)
        return;
    knowledge_init(&k);
    knowledge_init(&old);
    buf_init(&doc, 4 * 1024 * 1024);
    error_init(&err);
    if (target_or_400(res, body, "path", &t))
        goto out;
    if (json_object_object_get_ex(body, "content", &v) && v) {
        if (!(content = jf_str(v)) || strlen(content) != (size_t)json_object_get_string_len(v)) {
            error_param_str(res, "field", "content");
            reply_error_key(res, 200, E_INVALID_REQUEST, "field_not_string",
                            "'content' must be a string");
            goto out;
        }
    }
    if (jf_long_or_400(res, body, "expected_version", 1, 1L << 40, 0, &expected_version) ||
        jf_string_or_400(res, body, "expected_updated", 0, 64, &expected_updated) ||
        auth_may_change_or_403(&req->who, res, t.category))
        goto out;
    if (document_prepare_e(t.category, t.path, content, strlen(content), &doc, &err)) {
        reply_error_of(res, &err);
        goto out;
    }
    if (knowledge_path_free_or_409(req, res, t.category, t.path, NULL))
        goto out;
    k.space = xstrdup(req->who.space);
    k.category = xstrdup(t.category);
    k.path = xstrdup(t.path);
    k.score = 3;
    document_fill(&k, t.category, t.path, doc.data, doc.len);
    /* Update the document at this path, or create it; a create that loses a
     * race to another writer becomes an update (its version stays a revision). */
    for (int attempt = 0; attempt < 3; attempt++) {
        knowledge_release(&old);
        rc = store_knowledge_get_by_path(req->store, req->who.space, t.category, t.path, &old);
        if (rc == STORE_OK) {
            int holds = expected_updated ? updated_holds(req, &old, expected_updated) : 1;
            if (holds < 0) {
                reply_store_error(res, -holds, "Knowledge file");
                goto out;
            }
            if ((expected_version && expected_version != old.version) || !holds) {
                error_param_int(res, "version", old.version);
                reply_error_key(res, 200, E_CONFLICT, "version_conflict",
                                "The document was changed by someone else (now version %ld, "
                                "updated %s#%ld); reload it and try again",
                                old.version, old.updated_at, old.version);
                goto out;
            }
            /* With expected_updated alone, the version just read guards the
             * update, so a change in between is a CONFLICT, not overwritten. */
            rc = store_knowledge_update(req->store, req->who.space, old.id, &k,
                                        expected_version   ? expected_version
                                        : expected_updated ? old.version
                                                           : 0,
                                        req->who.actor, "write");
            if (rc == STORE_OK) {
                free(k.id);
                k.id = xstrdup(old.id);
            } else if (rc == STORE_NOT_FOUND) {
                /* Deleted since the lookup: create it anew (next attempt),
                 * unless the writer expected that version. */
                if (expected_version || expected_updated) {
                    reply_error_key(res, 200, E_CONFLICT, "document_gone",
                                    "The document was deleted or moved since you read it");
                    goto out;
                }
                continue;
            }
        } else if (rc == STORE_NOT_FOUND) {
            if (expected_version || expected_updated) {
                reply_error_key(res, 200, E_CONFLICT, "document_gone",
                                "The document was deleted or moved since you read it");
                goto out;
            }
            rc = knowledge_create(req->store, &k, req->who.actor);
            created = rc == STORE_OK;
        }
        if (rc != STORE_CONFLICT || expected_version || expected_updated)
            break;
    }
    if (rc == STORE_CONFLICT) {
        reply_error_key(res, 200, E_CONFLICT, "changed_meanwhile",
                        "The document was changed by someone else; reload it and try again");
    } else if (rc) {
        reply_store_error(res, rc, "Knowledge file");
    } else {
        struct knowledge now;
        struct json_object *data = json_object_new_object();
        json_object_object_add(data, "category", json_object_new_string(t.category));
        json_object_object_add(data, "path", json_object_new_string(t.path));
        json_object_object_add(data, "id", json_object_new_string(k.id));
        if (store_knowledge_get(req->store, req->who.space, k.id, 0, &now) == STORE_OK) {
            json_object_object_add(data, "version", json_object_new_int64(now.version));
            json_object_object_add(data, "updated_at", json_object_new_string(now.updated_at));
            json_object_object_add(data, "updated_token",
                                   updated_token(now.updated_at, now.version));
            knowledge_release(&now);
        }
        json_object_object_add(data, "created", json_object_new_boolean(created));
        reply_data(res, data);
    }
out:
    knowledge_release(&k);
    knowledge_release(&old);
    buf_release(&doc);
    error_release(&err);
    target_release(&t);
    json_object_put(body);
}

/* ---- /rename ---- */

/* One attempt at moving the document at from to to: reads it, checks the
 * destination, and moves it guarded by the version just read. A store
 * status; STORE_CONFLICT with nothing replied when the document changed
 * between the read and the move (the caller may try again); -1 when a
 * reply was written. */
static int rename_once(struct request *req, struct response *res, const struct target *from,
                       const struct target *to, long expected_version, struct knowledge *old)
{
    struct knowledge k, taken;
    int rc;
    knowledge_release(old);
    rc = store_knowledge_get_by_path(req->store, req->who.space, from->category, from->path, old);
    if (rc == STORE_NOT_FOUND) {
        reply_error_key(res, 200, E_FILE_NOT_FOUND, "file_not_found", "Knowledge file not found");
        return -1;
    }
    if (rc) {
        reply_store_error(res, rc, "Knowledge file");
        return -1;
    }
    if (expected_version && expected_version != old->version) {
        error_param_int(res, "version", old->version);
        reply_error_key(res, 200, E_CONFLICT, "version_conflict",
                        "The document was changed by someone else (now version %ld); reload it "
                        "and try again",
                        old->version);
        return -1;
    }
    if (strcmp(from->category, to->category) == 0 && strcmp(from->path, to->path) == 0)
        return STORE_OK;
    rc = store_knowledge_get_by_path(req->store, req->who.space, to->category, to->path, &taken);
    knowledge_release(&taken);
    if (rc == STORE_OK) {
        error_param_str(res, "category", to->category);
        error_param_str(res, "path", to->path);
        reply_error_key(res, 200, E_CONFLICT, "path_taken", "A document already exists at %s/%s",
                        to->category, to->path);
        return -1;
    }
    if (rc != STORE_NOT_FOUND) {
        reply_store_error(res, rc, "Knowledge file");
        return -1;
    }
    if (knowledge_path_free_or_409(req, res, to->category, to->path, old->id))
        return -1;
    if (strcmp(from->category, to->category) != 0) {
        /* Into another category: its limits apply, as to a write there. */
        struct buf doc;
        struct error err;
        int bad;
        buf_init(&doc, 4 * 1024 * 1024);
        error_init(&err);
        bad = document_prepare_e(to->category, to->path, old->document, strlen(old->document), &doc,
                                 &err);
        if (bad)
            reply_error_of(res, &err);
        buf_release(&doc);
        error_release(&err);
        if (bad)
            return -1;
    }
    /* The fields the new place decides (a title from the stem, a rule's
     * alwaysApply); the text itself is never written back. */
    knowledge_init(&k);
    document_fill(&k, to->category, to->path, old->document, strlen(old->document));
    k.category = xstrdup(to->category);
    k.path = xstrdup(to->path);
    rc =
        store_knowledge_move(req->store, req->who.space, old->id, old->version, &k, req->who.actor);
    knowledge_release(&k);
    return rc;
}

void h_files_rename(struct request *req, struct response *res)
{
    struct json_object *body = http_body_json_or_400(req, res), *nb = NULL;
    struct target from = {0}, to = {0};
    struct knowledge old;
    long expected_version;
    char *new_category;
    int rc;

    if (!body)
        return;
    knowledge_init(&old);
    if (target_or_400(res, body, "path", &from) ||
        jf_long_or_400(res, body, "expected_version", 1, 1L << 40, 0, &expected_version))
        goto out;
    /* The destination: new_path in new_category (default: the same category). */
    new_category = stripped_field(body, "new_category");
    nb = json_object_new_object();
    json_object_object_add(
        nb, "category",
        json_object_new_string(new_category && *new_category ? new_category : from.category));
    free(new_category);
    if (json_object_object_get_ex(body, "new_path", NULL))
        json_object_object_add(nb, "new_path",
                               json_object_get(json_object_object_get(body, "new_path")));
    if (target_or_400(res, nb, "new_path", &to) ||
        auth_may_change_or_403(&req->who, res, from.category) ||
        auth_may_change_or_403(&req->who, res, to.category))
        goto out;
    /* A write between the read and the move makes the move a CONFLICT in
     * the store (never a write-back of the text read); without an expected
     * version the move is tried again on what is there now. */
    for (int attempt = 0;; attempt++) {
        rc = rename_once(req, res, &from, &to, expected_version, &old);
        if (rc != STORE_CONFLICT || expected_version || attempt == 2)
            break;
    }
    if (rc < 0)
        goto out;
    if (rc == STORE_CONFLICT) {
        error_param_str(res, "category", to.category);
        error_param_str(res, "path", to.path);
        reply_error_key(res, 200, E_CONFLICT, "rename_conflict",
                        "The document changed, or %s/%s was taken, meanwhile; reload and retry",
                        to.category, to.path);
    } else if (rc) {
        reply_store_error(res, rc, "Knowledge file");
    } else {
        struct json_object *data = json_object_new_object();
        json_object_object_add(data, "category", json_object_new_string(to.category));
        json_object_object_add(data, "path", json_object_new_string(to.path));
        json_object_object_add(data, "id", json_object_new_string(old.id));
        reply_data(res, data);
    }
out:
    knowledge_release(&old);
    target_release(&from);
    target_release(&to);
    json_object_put(nb);
    json_object_put(body);
}

/* ---- /delete ---- */

void h_files_delete(struct request *req, struct response *res)
{
    struct json_object *body = http_body_json_or_400(req, res);
    struct target t = {0};
    struct knowledge k;
    int rc;
    if (!body)
        return;
    knowledge_init(&k);
    if (target_or_400(res, body, "path", &t) || auth_may_change_or_403(&req->who, res, t.category))
        goto out;
    rc = store_knowledge_get_by_path(req->store, req->who.space, t.category, t.path, &k);
    if (rc == STORE_OK)
        rc = store_knowledge_delete(req->store, req->who.space, k.id, req->who.actor);
    if (rc == STORE_NOT_FOUND)
        reply_error_key(res, 200, E_FILE_NOT_FOUND, "file_not_found", "Knowledge file not found");
    else if (rc)
        reply_store_error(res, rc, "Knowledge file");
    else
        reply_data(res, NULL);
out:
    knowledge_release(&k);
    target_release(&t);
    json_object_put(body);
}

/* ---- /trash ---- */

static int trash_add(const struct knowledge *k, void *ctx)
{
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "id", json_object_new_string(k->id));
    json_object_object_add(o, "category", json_object_new_string(k->category));
    json_object_object_add(o, "path", json_object_new_string(k->path));
    json_object_object_add(o, "title", json_object_new_string(k->title));
    json_object_object_add(o, "version", json_object_new_int64(k->version));
    json_object_object_add(o, "deleted_at", json_object_new_string(k->updated_at));
    /* "deleted", or "merged" (by slim) with the entry it was merged into. */
    json_object_object_add(o, "status", json_object_new_string(k->status));
    json_object_object_add(o, "merged_into",
                           k->merged_into ? json_object_new_string(k->merged_into) : NULL);
    json_object_array_add(ctx, o);
    return 0;
}

void h_files_trash(struct request *req, struct response *res)
{
    struct json_object *body = http_body_json_or_400(req, res), *items;
    char *category;
    int rc;
    if (!body)
        return;
    category = stripped_field(body, "category");
    if (category && *category && !category_valid(category)) {
        error_param_str(res, "category", category);
        reply_error_key(res, 200, E_INVALID_REQUEST, "invalid_category", "Invalid category: %s",
                        category);
    } else {
        items = json_object_new_array();
        rc = store_knowledge_scan(req->store, req->who.space, SCAN_DELETED,
                                  category && *category ? category : NULL, 0, trash_add, items);
        reply_items(res, rc, items, "Knowledge file");
    }
    free(category);
    json_object_put(body);
}

/* ---- /preview ---- */

/* The safe HTML of a document's body as the editor types it (nothing stored). */
void h_files_preview(struct request *req, struct response *res)
{
    struct json_object *body = http_body_json_or_400(req, res);
    const char *content;
    struct buf html;
    if (!body)
        return;
    buf_init(&html, 8 * 1024 * 1024);
    if (jf_string_or_400(res, body, "content", 0, 1000000, &content) == 0) {
        struct json_object *data, *meta;
        size_t body_off;
        const char *why;
        if (!content)
            content = "";
        /* A refused front matter is named, as a write of it would be. */
        if (frontmatter_read(content, strlen(content), &meta, &body_off, &why) ==
            FRONTMATTER_REFUSED) {
            error_param_str(res, "reason", why);
            reply_error_key(res, 200, E_INVALID_REQUEST, "front_matter_refused",
                            "Front matter refused: %s", why);
            goto out;
        }
        json_object_put(meta);
        data = json_object_new_object();
        markdown_to_html(content + body_off, strlen(content + body_off), &html);
        json_object_object_add(data, "html", json_object_new_string_len(html.data, (int)html.len));
        reply_data(res, data);
    }
out:
    buf_release(&html);
    json_object_put(body);
}
