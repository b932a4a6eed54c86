/* h_sessions: analysis sessions for the save-experience flow (seed 004
 * section 7): a chain of tables where a derived table names its parent in
 * derive.trigger.tableId. Agents or the browser store them; the browser
 * shows them and saves a leaf's chain as an experience. */
#include "api/handlers.h"
#include "base/jfield.h"
#include "store/store.h"
#include "base/util.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TABLES 500

static int session_id_or_400(struct request *req, struct response *res)
{
    if (!id_text_valid(req->params[0], 128)) {
        reply_error(res, 200, E_INVALID_REQUEST,
                    "Invalid session id: 1 to 128 of A-Z a-z 0-9 . _ : -, not . or ..");
        return -1;
    }
    return 0;
}

static void add_summary(const struct session_info *s, void *ctx)
{
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "id", json_object_new_string(s->id));
    json_object_object_add(o, "title", json_object_new_string(s->title));
    json_object_object_add(o, "created_at", json_object_new_string(s->created_at));
    json_object_object_add(o, "updated_at", json_object_new_string(s->updated_at));
    json_object_array_add(ctx, o);
}

static void keep_full(const struct session_info *s, void *ctx)
{
    struct json_object *o = json_object_new_object(), *doc = json_parse_stored(s->document);
    struct json_object *tables = NULL;
    if (!doc || !json_object_object_get_ex(doc, "tables", &tables))
        tables = NULL;
    json_object_object_add(o, "id", json_object_new_string(s->id));
    json_object_object_add(o, "title", json_object_new_string(s->title));
    json_object_object_add(o, "tables", tables ? json_object_get(tables) : json_object_new_array());
    json_object_object_add(o, "created_at", json_object_new_string(s->created_at));
    json_object_object_add(o, "updated_at", json_object_new_string(s->updated_at));
    json_object_put(doc);
    *(struct json_object **)ctx = o;
}

static void reply_session(struct request *req, struct response *res, const char *id)
{
    struct json_object *o = NULL;
    int rc = store_session_get(req->store, req->who.space, id, keep_full, &o);
    if (rc)
        reply_store_error(res, rc, "Session");
    else
        reply_data(res, o);
}

void h_sessions_list(struct request *req, struct response *res)
{
    struct json_object *items = json_object_new_array();
    int rc = store_session_list(req->store, req->who.space, add_summary, items);
    reply_items(res, rc, items, "Session");
}

void h_sessions_get(struct request *req, struct response *res)
{
    if (session_id_or_400(req, res) == 0)
        reply_session(req, res, req->params[0]);
}

/* The parent id of a table (derive.trigger.tableId), or NULL. */
static const char *parent_of(struct json_object *table)
{
    struct json_object *derive, *trigger, *id;
    if (json_object_object_get_ex(table, "derive", &derive) && derive &&
        json_object_object_get_ex(derive, "trigger", &trigger) && trigger &&
        json_object_object_get_ex(trigger, "tableId", &id))
        return jf_str(id);
    return NULL;
}

/* Every table is an object with a distinct id; parents exist. */
static int tables_or_400(struct response *res, struct json_object *tables)
{
    size_t n = json_object_array_length(tables);
    if (n > MAX_TABLES) {
        reply_error(res, 200, E_LIMIT_EXCEEDED, "A session holds at most %d tables", MAX_TABLES);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        struct json_object *t = json_object_array_get_idx(tables, i), *id;
        const char *tid;
        if (!json_object_is_type(t, json_type_object) || !json_object_object_get_ex(t, "id", &id) ||
            !(tid = jf_str(id)) || !id_text_valid(tid, 256)) {
            reply_error(res, 200, E_INVALID_REQUEST,
                        "Table %zu needs an 'id' (1 to 256 of A-Z a-z 0-9 . _ : -, not . or ..)",
                        i);
            return -1;
        }
        for (size_t j = 0; j < i; j++) {
            struct json_object *other;
            json_object_object_get_ex(json_object_array_get_idx(tables, j), "id", &other);
            if (strcmp(json_object_get_string(other), tid) == 0) {
                reply_error(res, 200, E_INVALID_REQUEST, "Two tables have the id '%s'", tid);
                return -1;
            }
        }
    }
    return 0;
}

void h_sessions_put(struct request *req, struct response *res)
{
    struct json_object *body = http_body_json_or_400(req, res), *tables, *doc;
    const char *id, *title, *expected;
    char generated[40];
    int rc;
    if (!body)
        return;
    if (jf_string_or_400(res, body, "id", 0, 128, &id) ||
        jf_string_or_400(res, body, "title", 0, 200, &title) ||
        jf_string_or_400(res, body, "expected_updated_at", 0, 64, &expected))
        goto out;
    if (expected && !id) {
        reply_error(res, 200, E_INVALID_REQUEST, "'expected_updated_at' needs the session's 'id'");
        goto out;
    }
    if (id && !id_text_valid(id, 128)) {
        reply_error(res, 200, E_INVALID_REQUEST,
                    "Invalid session id: 1 to 128 of A-Z a-z 0-9 . _ : -, not . or ..");
        goto out;
    }
    if (!json_object_object_get_ex(body, "tables", &tables) ||
        !json_object_is_type(tables, json_type_array)) {
        reply_error(res, 200, E_INVALID_REQUEST, "'tables' must be a list");
        goto out;
    }
    if (tables_or_400(res, tables))
        goto out;
    if (!id) {
        unsigned char rnd[8];
        randombytes_buf(rnd, sizeof rnd);
        memcpy(generated, "session-", 8);
        sodium_bin2hex(generated + 8, 17, rnd, sizeof rnd);
        id = generated;
    }
    doc = json_object_new_object();
    json_object_object_add(doc, "tables", json_object_get(tables));
    /* With expected_updated_at (the session as the caller read it) a save
     * in between is never overwritten: CONFLICT, and the caller reloads. */
    rc = expected
             ? store_session_put_if(req->store, req->who.space, id, title, json_text(doc), expected)
             : store_session_put(req->store, req->who.space, id, title, json_text(doc));
    json_object_put(doc);
    if (rc == STORE_CONFLICT)
        reply_error_key(res, 200, E_CONFLICT, "session_changed",
                        "The session was changed (or removed) since %s; reload it and try again",
                        expected);
    else if (rc)
        reply_store_error(res, rc, "Session");
    else
        reply_session(req, res, id);
out:
    json_object_put(body);
}

void h_sessions_delete(struct request *req, struct response *res)
{
    int rc;
    if (session_id_or_400(req, res))
        return;
    rc = store_session_delete(req->store, req->who.space, req->params[0]);
    if (rc)
        reply_store_error(res, rc, "Session");
    else
        reply_data(res, NULL);
}

/* A session as stored: its title, document text and when it was written
 * (caller frees). */
struct session_raw {
    char *title, *document, *updated_at;
};

static void keep_raw(const struct session_info *s, void *ctx)
{
    struct session_raw *r = ctx;
    r->title = xstrdup(s->title);
    r->document = xstrdup(s->document);
    r->updated_at = xstrdup(s->updated_at);
}

static void session_raw_release(struct session_raw *r)
{
    free(r->title);
    free(r->document);
    free(r->updated_at);
}

/* The tables of a session document without the table gone; tables that
 * derived from it now derive from its parent. NULL when gone is not there. */
static struct json_object *without_table(const char *document, const char *gone)
{
    struct json_object *doc = json_parse_stored(document), *tables = NULL, *kept;
    const char *grandparent = NULL;
    int found = 0;
    if (!doc || !json_object_object_get_ex(doc, "tables", &tables) ||
        !json_object_is_type(tables, json_type_array)) {
        json_object_put(doc);
        return NULL;
    }
    kept = json_object_new_array();
    for (size_t i = 0; i < json_object_array_length(tables); i++) {
        struct json_object *t = json_object_array_get_idx(tables, i), *id;
        json_object_object_get_ex(t, "id", &id);
        if (strcmp(json_object_get_string(id), gone) == 0) {
            found = 1;
            grandparent = parent_of(t);
        } else {
            json_object_array_add(kept, json_object_get(t));
        }
    }
    for (size_t i = 0; found && i < json_object_array_length(kept); i++) {
        struct json_object *t = json_object_array_get_idx(kept, i), *derive, *trigger;
        const char *parent = parent_of(t);
        if (!parent || strcmp(parent, gone) != 0)
            continue;
        json_object_object_get_ex(t, "derive", &derive);
        json_object_object_get_ex(derive, "trigger", &trigger);
        json_object_object_add(trigger, "tableId",
                               grandparent ? json_object_new_string(grandparent) : NULL);
    }
    json_object_put(doc); /* grandparent (a string of doc) was copied where it was used */
    if (!found) {
        json_object_put(kept);
        return NULL;
    }
    return kept;
}

/* DELETE /api/sessions/{id}/tables/{table_id}: drop one table; tables that
 * derived from it now derive from its parent (or start the chain), as the
 * reference re-parents a deleted middle step. The session is replaced only
 * if it is still as read, so a save in between is never undone (the drop is
 * then made again on what is there now). */
void h_sessions_delete_table(struct request *req, struct response *res)
{
    int rc = STORE_CONFLICT;
    if (session_id_or_400(req, res))
        return;
    for (int attempt = 0; attempt < 3 && rc == STORE_CONFLICT; attempt++) {
        struct session_raw raw = {NULL, NULL, NULL};
        struct json_object *kept, *doc;
        rc = store_session_get(req->store, req->who.space, req->params[0], keep_raw, &raw);
        if (rc) {
            reply_store_error(res, rc, "Session");
            return;
        }
        kept = without_table(raw.document, req->params[1]);
        if (!kept) {
            session_raw_release(&raw);
            reply_error(res, 200, E_NOT_FOUND, "Table not found in this session");
            return;
        }
        doc = json_object_new_object();
        json_object_object_add(doc, "tables", kept);
        /* Only if nobody wrote it since it was read (else read it again). */
        rc = store_session_put_if(req->store, req->who.space, req->params[0], raw.title,
                                  json_text(doc), raw.updated_at);
        json_object_put(doc);
        session_raw_release(&raw);
    }
    if (rc == STORE_CONFLICT)
        reply_error(res, 200, E_CONFLICT, "The session kept changing; try again");
    else if (rc)
        reply_store_error(res, rc, "Session");
    else
        reply_session(req, res, req->params[0]);
}
