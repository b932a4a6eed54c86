/* conflicts (service): the conflict check of a write. */
#include "service/conflicts.h"
#include "base/buf.h"
#include "base/util.h"
#include "domain/conflict.h"
#include "service/ctx.h"
#include "service/search.h"
#include "store/store.h"

#include <string.h>

/* The query a check searches with: the entry's title, scenario and the
 * beginning of its body (the words a replacement would share). */
#define QUERY_BODY_CHARS 300

struct check {
    const struct knowledge *k;
    struct json_object *list;
    struct buf reason;
};

/* The actor of the links the check makes (the audit trail tells them from
 * a person's). */
#define CHECK_ACTOR "conflict-check"

/* A contradiction becomes a contradicts link from the new entry to the
 * other (kept as it is when one exists): item.link says "contradicts"
 * once it is there. Best effort, like the whole check. */
static void link_contradiction(const struct svc_ctx *c, const char *from, struct json_object *item)
{
    struct link_key key = {from, json_object_get_string(json_object_object_get(item, "id")),
                           "contradicts"};
    char now[20];
    int added = 0;
    time_utc_text(now);
    if (store_link_add(c->st, c->space, &key, CHECK_ACTOR,
                       json_object_get_string(json_object_object_get(item, "reason")), now,
                       &added) == STORE_OK)
        json_object_object_add(item, "link", json_object_new_string("contradicts"));
}

/* The detector's item for o judged against k, or NULL when unrelated. */
static struct json_object *judged(const struct knowledge *k, const struct knowledge *o,
                                  struct buf *reason)
{
    struct conflict_entry a = {o->title, o->scenario, o->content};
    struct conflict_entry b = {k->title, k->scenario, k->content};
    struct conflict_result r;
    struct json_object *item;
    conflict_check(&a, &b, &r, reason);
    if (r.verdict == CONFLICT_UNRELATED)
        return NULL;
    item = json_object_new_object();
    json_object_object_add(item, "id", json_object_new_string(o->id));
    json_object_object_add(item, "title", json_object_new_string(o->title));
    json_object_object_add(item, "path", json_object_new_string(o->path));
    json_object_object_add(item, "category", json_object_new_string(o->category));
    json_object_object_add(item, "verdict",
                           json_object_new_string(conflict_verdict_name(r.verdict)));
    json_object_object_add(item, "reason", json_object_new_string(reason->data));
    json_object_object_add(item, "similarity", json_object_new_double(r.jaccard));
    return item;
}

static void judge(const struct search_hit *h, void *ctx)
{
    struct check *ch = ctx;
    struct json_object *item;
    if (strcmp(h->k->id, ch->k->id) != 0 && (item = judged(ch->k, h->k, &ch->reason)))
        json_object_array_add(ch->list, item);
}

static int is_contradiction(struct json_object *item)
{
    return strcmp(json_object_get_string(json_object_object_get(item, "verdict")),
                  "contradiction") == 0;
}

struct json_object *conflicts_pair(const struct svc_ctx *c, const struct knowledge *k,
                                   const struct knowledge *other)
{
    struct buf reason;
    struct json_object *item;
    buf_init(&reason, 1024);
    item = judged(k, other, &reason);
    if (item && is_contradiction(item))
        link_contradiction(c, k->id, item);
    buf_release(&reason);
    return item;
}

struct json_object *conflicts_check(const struct svc_ctx *c, const struct knowledge *k)
{
    struct knowledge_filter f = {0};
    struct search_opts opts = search_opts_of(c->cfg, 0);
    struct check ch = {k, json_object_new_array(), {0}};
    struct buf q;
    const char *body = k->content ? k->content : "";
    buf_init(&q, 4096);
    buf_init(&ch.reason, 1024);
    buf_add_one_line(&q, k->title ? k->title : "");
    buf_addch(&q, ' ');
    buf_add_one_line(&q, k->scenario ? k->scenario : "");
    buf_addch(&q, ' ');
    buf_add(&q, body, utf8_prefix(body, strlen(body), QUERY_BODY_CHARS));
    f.category = k->category;
    /* one more than asked: the entry itself is found too */
    store_ignore(
        search_entries(c->st, c->space, q.data, &f, CONFLICTS_CANDIDATES + 1, &opts, judge, &ch));
    while (json_object_array_length(ch.list) > CONFLICTS_CANDIDATES)
        json_object_array_del_idx(ch.list, CONFLICTS_CANDIDATES, 1);
    for (size_t i = 0; i < json_object_array_length(ch.list); i++) {
        struct json_object *item = json_object_array_get_idx(ch.list, i);
        if (is_contradiction(item))
            link_contradiction(c, k->id, item);
    }
    buf_release(&q);
    buf_release(&ch.reason);
    return ch.list;
}
