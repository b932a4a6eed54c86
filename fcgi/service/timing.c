/* timing (service): expiry, review-by dates and pins (timing.h). */
#include "service/timing.h"
#include "base/error.h"
#include "base/util.h"
#include "service/ctx.h"
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

void timing_now(char out[static WHEN_TEXT])
{
    time_utc_iso_z(out);
}

/* One moment field: absent (*has 0), null ("" and *has 1) or a moment. */
static int moment_of(struct json_object *body, const char *key, int *has, char out[WHEN_TEXT],
                     struct error *err)
{
    struct json_object *v;
    *has = 0;
    out[0] = '\0';
    if (!body || !json_object_object_get_ex(body, key, &v))
        return 0;
    *has = 1;
    if (!v)
        return 0;
    if (!json_object_is_type(v, json_type_string) ||
        when_parse(json_object_get_string(v), (size_t)json_object_get_string_len(v), out)) {
        error_set(err, E_INVALID_REQUEST, "invalid_time",
                  "'%s' must be a date (YYYY-MM-DD) or a UTC time (YYYY-MM-DDTHH:MM:SSZ), or null",
                  key);
        error_str(err, "field", key);
        return -1;
    }
    return 0;
}

int timing_change_of(struct json_object *body, struct timing_change *ch, struct error *err)
{
    struct json_object *v;
    memset(ch, 0, sizeof *ch);
    if (moment_of(body, "expires_at", &ch->has_expires, ch->expires_at, err) ||
        moment_of(body, "review_after", &ch->has_review, ch->review_after, err))
        return -1;
    if (body && json_object_object_get_ex(body, "pinned", &v)) {
        ch->has_pinned = 1;
        if (v && !json_object_is_type(v, json_type_boolean)) {
            error_set(err, E_INVALID_REQUEST, "invalid_time", "'pinned' must be true or false");
            error_str(err, "field", "pinned");
            return -1;
        }
        ch->pinned = v && json_object_get_boolean(v);
    }
    return 0;
}

int timing_change_any(const struct timing_change *ch)
{
    return ch->has_expires || ch->has_review || ch->has_pinned;
}

int timing_apply(struct store *st, const char *space, const char *id,
                 const struct timing_change *ch)
{
    struct knowledge_time cur, next;
    int rc;
    if (!timing_change_any(ch))
        return STORE_OK;
    if ((rc = store_time_get(st, space, id, &cur)))
        return rc;
    next.expires_at =
        ch->has_expires ? (ch->expires_at[0] ? (char *)ch->expires_at : NULL) : cur.expires_at;
    next.review_after =
        ch->has_review ? (ch->review_after[0] ? (char *)ch->review_after : NULL) : cur.review_after;
    next.pinned = ch->has_pinned ? ch->pinned : cur.pinned;
    rc = store_time_set(st, space, id, &next);
    knowledge_time_release(&cur);
    return rc;
}

/* expires_at, review_after (null when NULL) and pinned into o. */
static void time_fields_add(struct json_object *o, const char *expires_at, const char *review_after,
                            int pinned)
{
    json_object_object_add(o, "expires_at", expires_at ? json_object_new_string(expires_at) : NULL);
    json_object_object_add(o, "review_after",
                           review_after ? json_object_new_string(review_after) : NULL);
    json_object_object_add(o, "pinned", json_object_new_boolean(pinned));
}

int timing_json_add(struct store *st, const char *space, const char *id, struct json_object *o)
{
    struct knowledge_time t;
    int rc = store_time_get(st, space, id, &t);
    if (rc)
        return rc;
    time_fields_add(o, t.expires_at, t.review_after, t.pinned);
    knowledge_time_release(&t);
    return STORE_OK;
}

int timing_pinned(struct store *st, const char *space, const char *id, int *pinned)
{
    struct knowledge_time t;
    int rc = store_time_get(st, space, id, &t);
    *pinned = rc == STORE_OK && t.pinned;
    knowledge_time_release(&t);
    return rc;
}

/* ---- the expired set ---- */

static void expired_add(const char *id, void *ctx)
{
    struct timing_expired *set = ctx;
    if (set->n == set->cap) {
        set->cap = set->cap ? set->cap * 2 : 16;
        set->ids = xrealloc(set->ids, set->cap * sizeof *set->ids);
    }
    set->ids[set->n++] = xstrdup(id);
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int timing_expired_load(struct store *st, const char *space, struct timing_expired *set)
{
    char now[WHEN_TEXT];
    int rc;
    memset(set, 0, sizeof *set);
    timing_now(now);
    rc = store_time_expired(st, space, now, expired_add, set);
    if (set->n > 1)
        qsort(set->ids, set->n, sizeof *set->ids, by_text);
    return rc;
}

int timing_expired_has(const struct timing_expired *set, const char *id)
{
    return set->n && bsearch(&id, set->ids, set->n, sizeof *set->ids, by_text) != NULL;
}

void timing_expired_release(struct timing_expired *set)
{
    for (size_t i = 0; i < set->n; i++)
        free(set->ids[i]);
    free(set->ids);
    memset(set, 0, sizeof *set);
}

/* ---- the stale view ---- */

struct stale_ctx {
    struct json_object *items;
    const char *now;
};

static void stale_add(const struct stale_entry *e, void *arg)
{
    struct stale_ctx *s = arg;
    struct json_object *o = json_object_new_object();
    int expired = e->expires_at && strcmp(e->expires_at, s->now) <= 0;
    static const char *const keys[] = {"id", "title", "category", "path"};
    const char *values[] = {e->id, e->title, e->category, e->path};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        json_object_object_add(o, keys[i], json_object_new_string(values[i]));
    time_fields_add(o, e->expires_at, e->review_after, e->pinned);
    json_object_object_add(o, "why", json_object_new_string(expired ? "expired" : "review_due"));
    json_object_array_add(s->items, o);
}

int svc_knowledge_stale(const struct svc_ctx *c, long limit, long offset, struct json_object **data,
                        struct error *err)
{
    char now[WHEN_TEXT];
    struct stale_ctx s = {json_object_new_array(), now};
    long total = 0;
    int rc;
    timing_now(now);
    rc = store_time_stale(c->st, c->space, now, limit, offset, stale_add, &s, &total);
    if (rc) {
        json_object_put(s.items);
        store_status_error(rc, "Knowledge", err);
        return -1;
    }
    *data = json_object_new_object();
    json_object_object_add(*data, "items", s.items);
    json_object_object_add(*data, "total", json_object_new_int64(total));
    json_object_object_add(*data, "limit", json_object_new_int64(limit));
    json_object_object_add(*data, "offset", json_object_new_int64(offset));
    return 0;
}

int timing_review_sweep(const struct svc_ctx *c)
{
    (void)c;
    return STORE_OK;
}
