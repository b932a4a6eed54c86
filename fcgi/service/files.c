/* files (service): the file view's operations, with their checks and
 * messages: paths and categories, the front matter and body limits of a
 * write, versions (expected_version, expected_updated) and the rule that
 * only admins change rules. */
#include "service/files.h"
#include "base/error.h"
#include "base/jfield.h"
#include "base/markdown.h"
#include "base/util.h"
#include "domain/document.h"
#include "domain/frontmatter.h"
#include "domain/knowledge.h"
#include "domain/knowledge_limits.h"
#include "domain/paths.h"
#include "service/conflicts.h"
#include "service/ctx.h"
#include "service/knowledge.h"
#include "service/linkdoc.h"
#include "service/linkmatter.h"
#include "service/reviewgate.h"
#include "service/timing.h"
#include "service/writerate.h"
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

#define WHAT "Knowledge file"

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

static void field_required(struct error *err, const char *field)
{
    error_set(err, E_INVALID_REQUEST, "field_required", "'%s' is required", field);
    error_str(err, "field", field);
}

static void invalid_category(struct error *err, const char *category)
{
    error_set(err, E_INVALID_REQUEST, "invalid_category", "Invalid category: %s", category);
    error_str(err, "category", category);
}

static void file_not_found(struct error *err)
{
    error_set(err, E_FILE_NOT_FOUND, "file_not_found", "Knowledge file not found");
}

static int store_fail(int rc, struct error *err)
{
    store_status_error(rc, WHAT, err);
    return -1;
}

/* {category, path} of the body, checked as read, write and delete need it. */
static int target_of(struct json_object *body, const char *path_key, struct target *t,
                     struct error *err)
{
    char *path = stripped_field(body, path_key);
    struct buf norm;
    int rc = -1;
    t->category = stripped_field(body, "category");
    t->path = NULL;
    if (!t->category)
        t->category = xstrdup("");
    if (!path || !*path) {
        field_required(err, path_key);
        free(path);
        return -1;
    }
    buf_init(&norm, 4096);
    if (path_check(t->category, path, &norm, err) == 0) {
        t->path = xstrndup(norm.data, norm.len);
        rc = 0;
    }
    buf_release(&norm);
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
static int updated_holds(const struct svc_ctx *c, const struct knowledge *old, const char *expected)
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
    rc = store_knowledge_revision_time(c->st, c->space, old->id, old->version - 1, before);
    if (rc == STORE_NOT_FOUND)
        return 1;
    if (rc)
        return -rc;
    return strcmp(before, old->updated_at) != 0;
}

/* A list item (title, tags, path, source, created; for rules description and
 * alwaysApply), plus id, version, updated_at and updated_token. */
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

/* ---- limits ---- */

int svc_files_limits(const struct svc_ctx *c, struct json_object **data, struct error *err)
{
    struct json_object *limits = json_object_new_object();
    (void)c;
    (void)err;
    json_object_object_add(limits, "rule_description_max",
                           json_object_new_int(LIMIT_RULE_DESCRIPTION));
    json_object_object_add(limits, "rules", json_object_new_int(LIMIT_RULES_BODY));
    json_object_object_add(limits, "experiences", json_object_new_int(LIMIT_EXPERIENCES_BODY));
    /* beyond the reference: the front matter title's limit, for the editor's counter */
    json_object_object_add(limits, "title_max", json_object_new_int(LIMIT_TITLE));
    *data = json_object_new_object();
    json_object_object_add(*data, "limits", limits);
    return 0;
}

/* ---- list ---- */

static int list_add(const struct knowledge *k, void *ctx)
{
    json_object_array_add(ctx, list_item(k));
    return 0;
}

/* {items} of a scan, or -1 with the store's error. */
static int items_of(int rc, struct json_object *items, struct json_object **data, struct error *err)
{
    if (rc) {
        json_object_put(items);
        return store_fail(rc, err);
    }
    *data = json_object_new_object();
    json_object_object_add(*data, "items", items);
    return 0;
}

int svc_files_list(const struct svc_ctx *c, struct json_object *body, struct json_object **data,
                   struct error *err)
{
    char *category = stripped_field(body, "category");
    int result = -1;
    if (!category || !*category) {
        field_required(err, "category");
    } else if (!category_valid(category)) {
        invalid_category(err, category);
    } else {
        struct json_object *items = json_object_new_array();
        int rc = store_knowledge_scan(c->st, c->space, SCAN_CATEGORY, category, 0, list_add, items);
        result = items_of(rc, items, data, err);
    }
    free(category);
    return result;
}

/* ---- read ---- */

int svc_files_read(const struct svc_ctx *c, struct json_object *body, struct json_object **data,
                   struct error *err)
{
    struct target t = {0};
    struct knowledge k;
    int rc, result = -1;
    knowledge_init(&k);
    if (target_of(body, "path", &t, err))
        goto out;
    rc = store_knowledge_get_by_path(c->st, c->space, t.category, t.path, &k);
    if (rc == STORE_NOT_FOUND) {
        file_not_found(err);
    } else if (rc) {
        store_fail(rc, err);
    } else {
        struct json_object *fields = list_item(&k), *meta = meta_of(&k);
        const char *doc_body = document_body(k.document);
        struct buf html;
        buf_init(&html, 4 * 1024 * 1024);
        markdown_to_html(doc_body, strlen(doc_body), &html);
        json_object_object_add(fields, "updated",
                               json_object_new_string(meta_text(meta, "updated")));
        json_object_put(meta);
        struct buf shown;
        buf_init(&shown, 8 * 1024 * 1024);
        /* its time and its outgoing links in the front matter, as they are now */
        if ((rc = linkdoc_shown(c->st, c->space, &k, &shown))) {
            buf_release(&shown);
            buf_release(&html);
            json_object_put(fields);
            store_fail(rc, err);
            goto out;
        }
        *data = json_object_new_object();
        json_object_object_add(*data, "content",
                               json_object_new_string_len(shown.data, (int)shown.len));
        buf_release(&shown);
        json_object_object_add(*data, "category", json_object_new_string(k.category));
        json_object_object_add(*data, "path", json_object_new_string(k.path));
        json_object_object_add(*data, "id", json_object_new_string(k.id));
        json_object_object_add(*data, "version", json_object_new_int64(k.version));
        json_object_object_add(*data, "updated_at", json_object_new_string(k.updated_at));
        json_object_object_add(*data, "updated_token", updated_token(k.updated_at, k.version));
        json_object_object_add(*data, "fields", fields);
        json_object_object_add(*data, "html", json_object_new_string_len(html.data, (int)html.len));
        buf_release(&html);
        result = 0;
    }
out:
    knowledge_release(&k);
    target_release(&t);
    return result;
}

/* ---- write ---- */

static void document_gone(struct error *err)
{
    error_set(err, E_CONFLICT, "document_gone",
              "The document was deleted or moved since you read it");
}

/* Update the document at t with k, or create it; a create that loses a
 * race to another writer becomes an update (its version stays a
 * revision). A store status (k->id set on success, *created), or -1 with
 * err. */
static int write_at(const struct svc_ctx *c, const struct target *t, struct knowledge *k,
                    long expected_version, const char *expected_updated, int *created,
                    struct error *err)
{
    struct knowledge old;
    int rc = STORE_ERROR;
    knowledge_init(&old);
    for (int attempt = 0; attempt < 3; attempt++) {
        knowledge_release(&old);
        rc = store_knowledge_get_by_path(c->st, c->space, t->category, t->path, &old);
        if (rc == STORE_OK) {
            int holds = expected_updated ? updated_holds(c, &old, expected_updated) : 1;
            if (holds < 0) {
                rc = store_fail(-holds, err);
                break;
            }
            if ((expected_version && expected_version != old.version) || !holds) {
                error_set(err, E_CONFLICT, "version_conflict",
                          "The document was changed by someone else (now version %ld, "
                          "updated %s#%ld); reload it and try again",
                          old.version, old.updated_at, old.version);
                error_int(err, "version", old.version);
                rc = -1;
                break;
            }
            /* The version just read always guards the update: a change in
             * between (a rename that moved the document away, an edit) is a
             * CONFLICT, answered when the writer expected a version, else
             * tried again from the lookup; never written over. */
            rc = store_knowledge_update(c->st, c->space, old.id, k,
                                        expected_version ? expected_version : old.version, c->actor,
                                        "write");
            if (rc == STORE_OK) {
                free(k->id);
                k->id = xstrdup(old.id);
            } else if (rc == STORE_NOT_FOUND) {
                /* Deleted since the lookup: create it anew (next attempt),
                 * unless the writer expected that version. */
                if (expected_version || expected_updated) {
                    document_gone(err);
                    rc = -1;
                    break;
                }
                continue;
            }
        } else if (rc == STORE_NOT_FOUND) {
            if (expected_version || expected_updated) {
                document_gone(err);
                rc = -1;
                break;
            }
            rc = knowledge_create(c->st, k, c->actor);
            *created = rc == STORE_OK;
        }
        if (rc != STORE_CONFLICT || expected_version || expected_updated)
            break;
    }
    knowledge_release(&old);
    return rc;
}

/* The review gate (service/review.h) for a write (document) or a delete
 * (document NULL) of the file at t: a create when nothing is there, else a
 * change of the live document, made against expected_version (0: the
 * version read now). 1 with *data when held as a proposal, 0 to write it,
 * -1 with err. */
static int file_held(const struct svc_ctx *c, const struct target *t, const char *document,
                     long expected_version, struct json_object **data, struct error *err)
{
    struct review_write w = {0};
    struct knowledge old;
    int rc;
    knowledge_init(&old);
    rc = store_knowledge_get_by_path(c->st, c->space, t->category, t->path, &old);
    if (rc && rc != STORE_NOT_FOUND) {
        knowledge_release(&old);
        return store_fail(rc, err);
    }
    w.write_path = "file";
    w.category = t->category;
    w.path = t->path;
    w.source = "agent";
    if (rc == STORE_NOT_FOUND) {
        if (!document) {
            file_not_found(err);
            return -1;
        }
        w.kind = "create";
        w.document = document;
        rc = review_gate(c, &w, data, err);
        knowledge_release(&old);
        return rc;
    }
    w.kind = document ? "update" : "delete";
    w.knowledge_id = old.id;
    w.base_version = expected_version ? expected_version : old.version;
    w.document = document ? document : old.document;
    w.base_document = old.document;
    w.agent_id = old.agent_id;
    rc = review_gate(c, &w, data, err);
    knowledge_release(&old);
    return rc;
}

int svc_files_write(const struct svc_ctx *c, struct json_object *body, struct json_object **data,
                    struct error *err)
{
    struct json_object *v;
    struct target t = {0};
    struct knowledge k, now;
    struct buf doc;
    struct timing_change when;
    const char *content = "", *expected_updated;
    long expected_version;
    int rc, created = 0, result = -1;

    knowledge_init(&k);
    buf_init(&doc, 4 * 1024 * 1024);
    if (target_of(body, "path", &t, err) || write_admit(c, 1, err))
        goto out;
    if (json_object_object_get_ex(body, "content", &v) && v) {
        if (!(content = jf_str(v)) || strlen(content) != (size_t)json_object_get_string_len(v)) {
            error_set(err, E_INVALID_REQUEST, "field_not_string", "'content' must be a string");
            error_str(err, "field", "content");
            goto out;
        }
    }
    if (jf_long(err, body, "expected_version", 1, 1L << 40, 0, &expected_version) ||
        jf_string(err, body, "expected_updated", 0, 64, &expected_updated) ||
        knowledge_may_change(c, t.category, err) ||
        document_prepare(t.category, t.path, content, strlen(content), &doc, err) ||
        timing_change_of_document(doc.data, &when, err) ||
        knowledge_path_free(c, t.category, t.path, NULL, err))
        goto out;
    k.space = xstrdup(c->space);
    k.category = xstrdup(t.category);
    k.path = xstrdup(t.path);
    k.score = 3;
    document_fill(&k, t.category, t.path, doc.data, doc.len);
    if ((rc = file_held(c, &t, doc.data, expected_version, data, err))) {
        result = rc > 0 ? 0 : -1;
        goto out;
    }
    /* the document and its time in one transaction */
    if ((rc = store_begin(c->st)) == STORE_OK) {
        rc = write_at(c, &t, &k, expected_version, expected_updated, &created, err);
        if (rc == STORE_OK)
            rc = timing_apply(c->st, c->space, k.id, &when);
        rc = store_tx_end(c->st, rc); /* rc < 0: err is set, rolled back */
    }
    if (rc < 0)
        goto out;
    if (rc == STORE_CONFLICT) {
        error_set(err, E_CONFLICT, "changed_meanwhile",
                  "The document was changed by someone else; reload it and try again");
        goto out;
    }
    if (rc) {
        store_fail(rc, err);
        goto out;
    }
    *data = json_object_new_object();
    json_object_object_add(*data, "category", json_object_new_string(t.category));
    json_object_object_add(*data, "path", json_object_new_string(t.path));
    json_object_object_add(*data, "id", json_object_new_string(k.id));
    if (store_knowledge_get(c->st, c->space, k.id, 0, &now) == STORE_OK) {
        json_object_object_add(*data, "version", json_object_new_int64(now.version));
        json_object_object_add(*data, "updated_at", json_object_new_string(now.updated_at));
        json_object_object_add(*data, "updated_token", updated_token(now.updated_at, now.version));
        knowledge_release(&now);
    }
    json_object_object_add(*data, "created", json_object_new_boolean(created));
    json_object_object_add(*data, "conflicts", conflicts_check(c, &k));
    linkmatter_answer(c, &k, *data); /* its front matter's link keys */
    result = 0;
out:
    knowledge_release(&k);
    buf_release(&doc);
    target_release(&t);
    return result;
}

/* ---- rename ---- */

/* The review gate for the move of old to to: a proposal of kind rename
 * (category and path the new place; the live document as both documents,
 * the text does not change) when the policy holds it. 1 with *held, 0 to
 * move now, -1 with err. */
static int rename_held(const struct svc_ctx *c, const struct knowledge *old,
                       const struct target *to, struct json_object **held, struct error *err)
{
    struct review_write w = {0};
    w.write_path = "rename";
    w.kind = "rename";
    w.knowledge_id = old->id;
    w.base_version = old->version;
    w.category = to->category;
    w.path = to->path;
    w.document = old->document;
    w.base_document = old->document;
    w.agent_id = old->agent_id;
    w.source = "agent";
    w.was_live = 1;
    return review_gate(c, &w, held, err);
}

/* One attempt at moving the document at from to to: reads it, checks the
 * destination, and moves it guarded by the version just read (or, with
 * held not NULL, asks the review gate first: STORE_OK with *held set when
 * it was held as a proposal). A store status; STORE_CONFLICT with err
 * untouched when the document changed between the read and the move (the
 * caller may try again); -1 with err. */
static int rename_once(const struct svc_ctx *c, const struct target *from, const struct target *to,
                       long expected_version, struct knowledge *old, struct json_object **held,
                       struct error *err)
{
    struct knowledge k, taken;
    int rc;
    knowledge_release(old);
    rc = store_knowledge_get_by_path(c->st, c->space, from->category, from->path, old);
    if (rc == STORE_NOT_FOUND) {
        file_not_found(err);
        return -1;
    }
    if (rc)
        return store_fail(rc, err);
    if (expected_version && expected_version != old->version) {
        error_set(err, E_CONFLICT, "version_conflict",
                  "The document was changed by someone else (now version %ld); reload it "
                  "and try again",
                  old->version);
        error_int(err, "version", old->version);
        return -1;
    }
    if (strcmp(from->category, to->category) == 0 && strcmp(from->path, to->path) == 0)
        return STORE_OK;
    rc = store_knowledge_get_by_path(c->st, c->space, to->category, to->path, &taken);
    knowledge_release(&taken);
    if (rc == STORE_OK) {
        error_set(err, E_CONFLICT, "path_taken", "A document already exists at %s/%s", to->category,
                  to->path);
        error_str(err, "category", to->category);
        error_str(err, "path", to->path);
        return -1;
    }
    if (rc != STORE_NOT_FOUND)
        return store_fail(rc, err);
    if (knowledge_path_free(c, to->category, to->path, old->id, err))
        return -1;
    if (strcmp(from->category, to->category) != 0) {
        /* Into another category: its limits apply, as to a write there. */
        struct buf doc;
        int bad;
        buf_init(&doc, 4 * 1024 * 1024);
        bad = document_prepare(to->category, to->path, old->document, strlen(old->document), &doc,
                               err);
        buf_release(&doc);
        if (bad)
            return -1;
    }
    if (held && (rc = rename_held(c, old, to, held, err)))
        return rc > 0 ? STORE_OK : -1;
    /* The fields the new place decides (a title from the stem, a rule's
     * alwaysApply); the text itself is never written back. */
    knowledge_init(&k);
    document_fill(&k, to->category, to->path, old->document, strlen(old->document));
    k.category = xstrdup(to->category);
    k.path = xstrdup(to->path);
    rc = store_knowledge_move(c->st, c->space, old->id, old->version, &k, c->actor);
    knowledge_release(&k);
    return rc;
}

int svc_files_rename(const struct svc_ctx *c, struct json_object *body, struct json_object **data,
                     struct error *err)
{
    struct json_object *nb = NULL, *held = NULL;
    struct target from = {0}, to = {0};
    struct knowledge old;
    long expected_version;
    char *new_category;
    int rc, result = -1;

    knowledge_init(&old);
    if (target_of(body, "path", &from, err) ||
        jf_long(err, body, "expected_version", 1, 1L << 40, 0, &expected_version) ||
        write_admit(c, 1, err))
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
    if (target_of(nb, "new_path", &to, err) || knowledge_may_change(c, from.category, err) ||
        knowledge_may_change(c, to.category, err))
        goto out;
    /* A write between the read and the move makes the move a CONFLICT in
     * the store (never a write-back of the text read); without an expected
     * version the move is tried again on what is there now. */
    for (int attempt = 0;; attempt++) {
        rc = rename_once(c, &from, &to, expected_version, &old, &held, err);
        if (rc != STORE_CONFLICT || expected_version || attempt == 2)
            break;
    }
    if (rc < 0)
        goto out;
    if (held) { /* a proposal: nothing moved */
        *data = held;
        result = 0;
    } else if (rc == STORE_CONFLICT) {
        error_set(err, E_CONFLICT, "rename_conflict",
                  "The document changed, or %s/%s was taken, meanwhile; reload and retry",
                  to.category, to.path);
        error_str(err, "category", to.category);
        error_str(err, "path", to.path);
    } else if (rc) {
        store_fail(rc, err);
    } else {
        *data = json_object_new_object();
        json_object_object_add(*data, "category", json_object_new_string(to.category));
        json_object_object_add(*data, "path", json_object_new_string(to.path));
        json_object_object_add(*data, "id", json_object_new_string(old.id));
        result = 0;
    }
out:
    knowledge_release(&old);
    target_release(&from);
    target_release(&to);
    json_object_put(nb);
    return result;
}

int svc_files_move(const struct svc_ctx *c, const char *from_category, const char *from_path,
                   long version, const char *category, const char *path, struct error *err)
{
    struct target from = {(char *)from_category, (char *)from_path};
    struct target to = {(char *)category, (char *)path};
    struct knowledge old;
    int rc;
    knowledge_init(&old);
    rc = rename_once(c, &from, &to, version, &old, NULL, err);
    knowledge_release(&old);
    if (rc == STORE_CONFLICT && !err->code) {
        error_set(err, E_CONFLICT, "path_taken", "A document already exists at %s/%s", category,
                  path);
        error_str(err, "category", category);
        error_str(err, "path", path);
        rc = -1;
    }
    return rc;
}

/* ---- delete ---- */

int svc_files_delete(const struct svc_ctx *c, struct json_object *body, struct json_object **data,
                     struct error *err)
{
    struct target t = {0};
    struct knowledge k;
    int rc, result = -1;
    knowledge_init(&k);
    *data = NULL;
    if (target_of(body, "path", &t, err) || knowledge_may_change(c, t.category, err) ||
        write_admit(c, 1, err))
        goto out;
    if ((rc = file_held(c, &t, NULL, 0, data, err))) {
        result = rc > 0 ? 0 : -1;
        goto out;
    }
    rc = store_knowledge_get_by_path(c->st, c->space, t.category, t.path, &k);
    if (rc == STORE_OK)
        rc = store_knowledge_delete(c->st, c->space, k.id, c->actor);
    if (rc == STORE_NOT_FOUND)
        file_not_found(err);
    else if (rc)
        store_fail(rc, err);
    else
        result = 0;
out:
    knowledge_release(&k);
    target_release(&t);
    return result;
}

/* ---- trash ---- */

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

int svc_files_trash(const struct svc_ctx *c, struct json_object *body, struct json_object **data,
                    struct error *err)
{
    char *category = stripped_field(body, "category");
    int result = -1;
    if (category && *category && !category_valid(category)) {
        invalid_category(err, category);
    } else {
        struct json_object *items = json_object_new_array();
        int rc = store_knowledge_scan(c->st, c->space, SCAN_DELETED,
                                      category && *category ? category : NULL, 0, trash_add, items);
        result = items_of(rc, items, data, err);
    }
    free(category);
    return result;
}

/* ---- preview ---- */

int svc_files_preview(const struct svc_ctx *c, struct json_object *body, struct json_object **data,
                      struct error *err)
{
    struct json_object *meta;
    const char *content, *why;
    size_t body_off;
    struct buf html;
    (void)c;
    if (jf_string(err, body, "content", 0, 1000000, &content))
        return -1;
    if (!content)
        content = "";
    /* A refused front matter is named, as a write of it would be. */
    if (frontmatter_read(content, strlen(content), &meta, &body_off, &why) == FRONTMATTER_REFUSED) {
        error_set(err, E_INVALID_REQUEST, "front_matter_refused", "Front matter refused: %s", why);
        error_str(err, "reason", why);
        return -1;
    }
    json_object_put(meta);
    buf_init(&html, 8 * 1024 * 1024);
    markdown_to_html(content + body_off, strlen(content + body_off), &html);
    *data = json_object_new_object();
    json_object_object_add(*data, "html", json_object_new_string_len(html.data, (int)html.len));
    buf_release(&html);
    return 0;
}
