/* sessions: the analysis sessions' operations (service/sessions.h). */
#include "service/sessions.h"
#include "base/jfield.h"
#include "base/util.h"
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

#define MAX_TABLES 500

static int session_id_check(const char *id, struct error *err)
{
    if (id_text_valid(id, 128))
        return 0;
    error_set(err, E_INVALID_REQUEST, NULL,
              "Invalid session id: 1 to 128 of A-Z a-z 0-9 . _ : -, not . or ..");
    return -1;
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

/* The session as stored, into *data. */
static int session_data(const struct svc_ctx *c, const char *id, struct json_object **data,
                        struct error *err)
{
    int rc = store_session_get(c->st, c->space, id, keep_full, data);
    if (rc) {
        json_object_put(*data);
        *data = NULL;
        store_status_error(rc, "Session", err);
        return -1;
    }
    return 0;
}

int svc_session_list(const struct svc_ctx *c, struct json_object **data, struct error *err)
{
    struct json_object *items = json_object_new_array();
    int rc = store_session_list(c->st, c->space, add_summary, items);
    *data = NULL;
    if (rc) {
        json_object_put(items);
        store_status_error(rc, "Session", err);
        return -1;
    }
    *data = json_object_new_object();
    json_object_object_add(*data, "items", items);
    return 0;
}

int svc_session_get(const struct svc_ctx *c, const char *id, struct json_object **data,
                    struct error *err)
{
    *data = NULL;
    return session_id_check(id, err) ? -1 : session_data(c, id, data, err);
}

/* The parent id of a table (derive.trigger.tableId), or NULL. */
static const char *parent_of(struct json_object *table)
{
    struct json_object *derive, *trigger;
    if (json_object_object_get_ex(table, "derive", &derive) && derive &&
        json_object_object_get_ex(derive, "trigger", &trigger))
        return jf_member_str(trigger, "tableId");
    return NULL;
}

/* Every table is an object with a distinct id. */
static int tables_check(struct json_object *tables, struct error *err)
{
    size_t n = json_object_array_length(tables);
    if (n > MAX_TABLES) {
        error_set(err, E_LIMIT_EXCEEDED, NULL, "A session holds at most %d tables", MAX_TABLES);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        struct json_object *t = json_object_array_get_idx(tables, i), *id;
        const char *tid;
        if (!json_object_is_type(t, json_type_object) || !json_object_object_get_ex(t, "id", &id) ||
            !(tid = jf_str(id)) || !id_text_valid(tid, 256)) {
            error_set(err, E_INVALID_REQUEST, NULL,
                      "Table %zu needs an 'id' (1 to 256 of A-Z a-z 0-9 . _ : -, not . or ..)", i);
            return -1;
        }
        for (size_t j = 0; j < i; j++) {
            struct json_object *other;
            json_object_object_get_ex(json_object_array_get_idx(tables, j), "id", &other);
            if (strcmp(json_object_get_string(other), tid) == 0) {
                error_set(err, E_INVALID_REQUEST, NULL, "Two tables have the id '%s'", tid);
                return -1;
            }
        }
    }
    return 0;
}

int svc_session_put(const struct svc_ctx *c, struct json_object *body, struct json_object **data,
                    struct error *err)
{
    struct json_object *tables, *doc;
    const char *id, *title, *expected;
    char generated[40];
    int rc;
    *data = NULL;
    if (jf_string(err, body, "id", 0, 128, &id) || jf_string(err, body, "title", 0, 200, &title) ||
        jf_string(err, body, "expected_updated_at", 0, 64, &expected))
        return -1;
    if (expected && !id) {
        error_set(err, E_INVALID_REQUEST, NULL, "'expected_updated_at' needs the session's 'id'");
        return -1;
    }
    if (id && session_id_check(id, err))
        return -1;
    if (!json_object_object_get_ex(body, "tables", &tables) ||
        !json_object_is_type(tables, json_type_array)) {
        error_set(err, E_INVALID_REQUEST, NULL, "'tables' must be a list");
        return -1;
    }
    if (tables_check(tables, err))
        return -1;
    if (!id) {
        id_random(generated, "session-");
        id = generated;
    }
    doc = json_object_new_object();
    json_object_object_add(doc, "tables", json_object_get(tables));
    /* With expected_updated_at (the session as the caller read it) a save
     * in between is never overwritten: CONFLICT, and the caller reloads. */
    rc = expected ? store_session_put_if(c->st, c->space, id, title, json_text(doc), expected)
                  : store_session_put(c->st, c->space, id, title, json_text(doc));
    json_object_put(doc);
    if (rc == STORE_CONFLICT) {
        error_set(err, E_CONFLICT, "session_changed",
                  "The session was changed (or removed) since %s; reload it and try again",
                  expected);
        return -1;
    }
    if (rc) {
        store_status_error(rc, "Session", err);
        return -1;
    }
    return session_data(c, id, data, err);
}

int svc_session_delete(const struct svc_ctx *c, const char *id, struct error *err)
{
    int rc;
    if (session_id_check(id, err))
        return -1;
    rc = store_session_delete(c->st, c->space, id);
    if (rc) {
        store_status_error(rc, "Session", err);
        return -1;
    }
    return 0;
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

int svc_session_delete_table(const struct svc_ctx *c, const char *id, const char *table_id,
                             struct json_object **data, struct error *err)
{
    int rc = STORE_CONFLICT;
    *data = NULL;
    if (session_id_check(id, err))
        return -1;
    for (int attempt = 0; attempt < 3 && rc == STORE_CONFLICT; attempt++) {
        struct session_raw raw = {NULL, NULL, NULL};
        struct json_object *kept, *doc;
        rc = store_session_get(c->st, c->space, id, keep_raw, &raw);
        if (rc) {
            store_status_error(rc, "Session", err);
            return -1;
        }
        kept = without_table(raw.document, table_id);
        if (!kept) {
            session_raw_release(&raw);
            error_set(err, E_NOT_FOUND, NULL, "Table not found in this session");
            return -1;
        }
        doc = json_object_new_object();
        json_object_object_add(doc, "tables", kept);
        /* Only if nobody wrote it since it was read (else read it again). */
        rc = store_session_put_if(c->st, c->space, id, raw.title, json_text(doc), raw.updated_at);
        json_object_put(doc);
        session_raw_release(&raw);
    }
    if (rc == STORE_CONFLICT) {
        error_set(err, E_CONFLICT, NULL, "The session kept changing; try again");
        return -1;
    }
    if (rc) {
        store_status_error(rc, "Session", err);
        return -1;
    }
    return session_data(c, id, data, err);
}
