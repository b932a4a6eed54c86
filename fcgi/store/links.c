/* store/links.c: typed links between entries (migration 20): add (again:
 * nothing changes), read, remove, an entry's links both ways, and the
 * contradicts links a search shows (service/links.c, service/entries.c). */
#include "store/store_int.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

int store_link_add(struct store *st, const char *space, const struct link_key *key,
                   const char *actor, const char *reason, const char *now, int *added)
{
    int rc = stmt_run(st, S_LINK_ADD, "ttttttt", space, key->from_id, key->to_id, key->type, actor,
                      reason, now);
    *added = rc == STORE_OK && stmt_rows_changed(st) > 0;
    return rc;
}

int store_link_get(struct store *st, const char *space, const struct link_key *key,
                   struct link_row *out)
{
    struct cursor *s;
    int rc;
    out->actor = out->reason = out->created_at = NULL;
    if (!(s = stmt_bind(st, S_LINK_GET, "tttt", space, key->from_id, key->to_id, key->type)))
        return STORE_ERROR;
    if ((rc = stmt_step(s)) == STEP_ROW) {
        out->actor = stmt_col_dup(s, 0);
        out->reason = stmt_col_dup(s, 1);
        out->created_at = stmt_col_dup(s, 2);
    }
    return stmt_row_end(s, rc);
}

void link_row_release(struct link_row *r)
{
    free(r->actor);
    free(r->reason);
    free(r->created_at);
    r->actor = r->reason = r->created_at = NULL;
}

int store_link_remove(struct store *st, const char *space, const struct link_key *key, int *removed)
{
    int rc = stmt_run(st, S_LINK_REMOVE, "tttt", space, key->from_id, key->to_id, key->type);
    *removed = rc == STORE_OK && stmt_rows_changed(st) > 0;
    return rc;
}

int store_links_of(struct store *st, const char *space, const char *id, long limit,
                   void (*each)(const struct knowledge_link *, void *), void *ctx)
{
    struct cursor *s;
    int rc;
    if (!(s = stmt_bind(st, S_LINKS_OF, "ttl", space, id, limit)))
        return STORE_ERROR;
    while ((rc = stmt_step(s)) == STEP_ROW) {
        struct knowledge_link l = {
            stmt_col_text(s, 0), stmt_col_text(s, 1), stmt_col_text(s, 2),  stmt_col_text(s, 3),
            stmt_col_text(s, 4), stmt_col_text(s, 5), stmt_col_text(s, 6),  stmt_col_text(s, 7),
            stmt_col_text(s, 8), stmt_col_text(s, 9), stmt_col_text(s, 10), stmt_col_text(s, 11),
        };
        each(&l, ctx);
    }
    return stmt_rows_end(s, rc);
}

int store_links_contradicts_of(struct store *st, const char *space, const char *const *ids,
                               size_t n, void (*each)(size_t, const char *other_id, void *),
                               void *ctx)
{
    const char *json;
    struct json_object *arr;
    struct cursor *s;
    int rc;
    if (n == 0)
        return STORE_OK;
    arr = store_json_texts(ids, n, &json);
    s = stmt_bind(st, S_LINKS_CONTRADICTS_OF, "tt", space, json);
    rc = s ? STORE_OK : STORE_ERROR;
    while (s && (rc = stmt_step(s)) == STEP_ROW) {
        const char *of = stmt_col_text(s, 0);
        for (size_t i = 0; i < n; i++)
            if (strcmp(ids[i], of) == 0)
                each(i, stmt_col_text(s, 1), ctx);
    }
    if (s)
        rc = stmt_rows_end(s, rc);
    json_object_put(arr);
    return rc;
}
