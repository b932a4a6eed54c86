/* overview: the home screen's numbers and short lists (overview.h), read
 * in one snapshot so the counts and the lists agree. */
#include "service/overview.h"
#include "base/util.h"
#include "store/store.h"

struct overview_list {
    struct json_object *items;
    const char *count_name; /* NULL: no count (the latest changes) */
};

static void add_row(const struct overview_row *r, void *ctx)
{
    struct overview_list *l = ctx;
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "id", json_object_new_string(r->id));
    json_object_object_add(o, "category", json_object_new_string(r->category));
    json_object_object_add(o, "path", json_object_new_string(r->path));
    json_object_object_add(o, "title", json_object_new_string(r->title));
    json_object_object_add(o, "updated_at", json_object_new_string(r->updated_at));
    if (l->count_name)
        json_object_object_add(o, l->count_name, json_object_new_int64(r->n));
    json_object_array_add(l->items, o);
}

int svc_overview(const struct svc_ctx *c, struct json_object **data, struct error *err)
{
    static const struct {
        const char *name, *count_name;
        enum store_overview_list which;
    } lists[] = {
        {"recent", NULL, OVERVIEW_RECENT},
        {"most_injected", "injections", OVERVIEW_INJECTED},
        {"most_harmful", "harmful", OVERVIEW_HARMFUL},
    };
    struct store_overview_counts n;
    long pending = 0, quarantined = 0;
    struct json_object *out = json_object_new_object(), *counts;
    char since[27];
    int rc;
    *data = NULL;
    time_utc_iso_micro_offset(since, -OVERVIEW_WEEK_SECONDS);
    store_read_begin(c->st);
    rc = store_overview_counts(c->st, c->space, since, &n);
    if (rc == STORE_OK)
        rc = store_proposal_counts(c->st, c->space, &pending, &quarantined);
    for (size_t i = 0; rc == STORE_OK && i < sizeof lists / sizeof lists[0]; i++) {
        struct overview_list l = {json_object_new_array(), lists[i].count_name};
        json_object_object_add(out, lists[i].name, l.items);
        rc = store_overview_list(c->st, c->space, lists[i].which, OVERVIEW_LIST_MAX, add_row, &l);
    }
    store_read_end(c->st);
    if (rc) {
        json_object_put(out);
        store_status_error(rc, "Overview", err);
        return -1;
    }
    counts = json_object_new_object();
    json_object_object_add(counts, "rules", json_object_new_int64(n.rules));
    json_object_object_add(counts, "experiences", json_object_new_int64(n.experiences));
    json_object_object_add(counts, "traces", json_object_new_int64(n.traces));
    json_object_object_add(counts, "traces_week", json_object_new_int64(n.traces_since));
    json_object_object_add(out, "counts", counts);
    {
        /* the review queue (docs/review.md): what waits, never what it says */
        struct json_object *review = json_object_new_object();
        json_object_object_add(review, "pending", json_object_new_int64(pending));
        json_object_object_add(review, "quarantined", json_object_new_int64(quarantined));
        json_object_object_add(out, "review", review);
    }
    json_object_object_add(out, "week_since", json_object_new_string(since));
    *data = out;
    return 0;
}
