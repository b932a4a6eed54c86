/* linkdoc (service): an entry's outgoing links as its document's front
 * matter, on reads and exports. */
#include "service/linkdoc.h"
#include "base/jfield.h"
#include "domain/frontmatter.h"
#include "domain/knowledge.h"
#include "service/timing.h"
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

const char *const linkdoc_keys[LINKDOC_KEYS] = {"supersedes", "contradicts", "refines", "related"};

/* An entry's outgoing links listed in front matter, at most. */
#define LINKDOC_MAX 1000

/* The outgoing links of an entry: [{type, id, qualified, status}]. */
static void outgoing_add(const struct knowledge_link *l, void *ctx)
{
    struct json_object *o;
    struct buf q;
    if (strcmp(l->direction, "out") != 0)
        return;
    buf_init(&q, 8192);
    buf_addf(&q, "%s/%s", l->other_category, l->other_path);
    o = json_object_new_object();
    json_object_object_add(o, "type", json_object_new_string(l->type));
    json_object_object_add(o, "id", json_object_new_string(l->other_id));
    json_object_object_add(o, "qualified", json_object_new_string(q.data));
    json_object_object_add(o, "status", json_object_new_string(l->other_status));
    json_object_array_add(ctx, o);
    buf_release(&q);
}

int linkdoc_outgoing(struct store *st, const char *space, const char *id, struct json_object **out)
{
    *out = json_object_new_array();
    return store_links_of(st, space, id, LINKDOC_MAX, outgoing_add, *out);
}

int linkdoc_present(struct json_object *meta)
{
    if (!meta || !json_object_is_type(meta, json_type_object))
        return 0;
    for (size_t i = 0; i < LINKDOC_KEYS; i++)
        if (json_object_object_get_ex(meta, linkdoc_keys[i], NULL))
            return 1;
    return 0;
}

void linkdoc_document(struct store *st, const char *space, const struct knowledge *k,
                      struct buf *out)
{
    struct json_object *links = NULL, *stored = json_parse_stored(k->meta), *meta = NULL;
    size_t body_off = 0;
    const char *why = NULL;
    size_t mark = out->len;
    int shown = 0;
    if (!k->document)
        goto out;
    if (linkdoc_outgoing(st, space, k->id, &links) != STORE_OK)
        goto plain;
    if (json_object_array_length(links) == 0 && !linkdoc_present(stored))
        goto plain;
    if (frontmatter_read(k->document, strlen(k->document), &meta, &body_off, &why) !=
        FRONTMATTER_OK)
        goto plain;
    for (size_t i = 0; i < LINKDOC_KEYS; i++) {
        struct json_object *list = json_object_new_array();
        json_object_object_del(meta, linkdoc_keys[i]);
        for (size_t j = 0; j < json_object_array_length(links); j++) {
            struct json_object *l = json_object_array_get_idx(links, j);
            if (strcmp(jf_member_str(l, "type"), linkdoc_keys[i]) == 0)
                json_object_array_add(list, json_object_new_string(jf_member_str(l, "qualified")));
        }
        if (json_object_array_length(list))
            json_object_object_add(meta, linkdoc_keys[i], list);
        else
            json_object_put(list);
    }
    if (frontmatter_render(meta, out) == 0 && buf_adds(out, k->document + body_off) == 0)
        shown = 1;
plain:
    if (!shown) {
        buf_truncate(out, mark);
        buf_adds(out, k->document);
    }
out:
    json_object_put(links);
    json_object_put(stored);
    json_object_put(meta);
}

/* ---- export ---- */

int linkdoc_superseded(struct store *st, const char *space, const struct knowledge *k,
                       int (*each)(const struct knowledge *, void *), void *ctx)
{
    struct json_object *links = NULL;
    int rc = linkdoc_outgoing(st, space, k->id, &links);
    for (size_t j = 0; rc == STORE_OK && j < json_object_array_length(links); j++) {
        struct json_object *l = json_object_array_get_idx(links, j);
        struct knowledge t, holder;
        int held, stop;
        if (strcmp(jf_member_str(l, "type"), "supersedes") != 0 ||
            strcmp(jf_member_str(l, "status"), "merged") != 0)
            continue;
        knowledge_init(&t);
        knowledge_init(&holder);
        rc = store_knowledge_get(st, space, jf_member_str(l, "id"), 1, &t);
        if (rc == STORE_OK) {
            held = store_knowledge_get_by_path(st, space, t.category, t.path, &holder);
            if (held == STORE_NOT_FOUND && t.document && t.merged_into &&
                strcmp(t.merged_into, k->id) == 0)
                rc = (stop = each(&t, ctx)) ? stop : STORE_OK;
            else if (held != STORE_OK && held != STORE_NOT_FOUND)
                rc = held;
        }
        knowledge_release(&t);
        knowledge_release(&holder);
    }
    json_object_put(links);
    return rc;
}

int linkdoc_shown(struct store *st, const char *space, const struct knowledge *k, struct buf *out)
{
    struct buf timed;
    struct knowledge shown = *k; /* a view: k's fields, the timed document */
    int rc;
    buf_init(&timed, 8 * 1024 * 1024);
    rc = timing_document(st, space, k->id, k->document, &timed);
    if (rc == 0) {
        shown.document = timed.data;
        linkdoc_document(st, space, &shown, out);
    }
    buf_release(&timed);
    return rc;
}
