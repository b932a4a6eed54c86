/* timing (service): expiry, review-by dates and pins (timing.h). */
#include "service/timing.h"
#include "base/error.h"
#include "base/buf.h"
#include "base/util.h"
#include "domain/frontmatter.h"
#include "domain/knowledge.h"
#include "service/ctx.h"
#include "service/reviewgate.h"
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
    if (!v || (json_object_is_type(v, json_type_string) && json_object_get_string_len(v) == 0))
        return 0; /* null, or "" (MCP drops null arguments): cleared */
    if (!json_object_is_type(v, json_type_string) ||
        when_parse(json_object_get_string(v), (size_t)json_object_get_string_len(v), out)) {
        error_set(err, E_INVALID_REQUEST, "invalid_time",
                  "'%s' must be a date (YYYY-MM-DD) or a UTC time (YYYY-MM-DDTHH:MM:SSZ), or null "
                  "or \"\" to clear it",
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

int timing_change_of_document(const char *document, struct timing_change *ch, struct error *err)
{
    size_t body_off;
    struct json_object *meta = frontmatter_parse(document, strlen(document), &body_off);
    int rc = timing_change_of(meta, ch, err);
    json_object_put(meta);
    ch->has_expires = ch->has_review = ch->has_pinned = 1;
    return rc;
}

void timing_change_document(struct buf *doc, const struct timing_change *ch)
{
    struct buf timed;
    if (!timing_change_any(ch))
        return;
    buf_init(&timed, doc->max);
    when_document(doc->data, ch->expires_at[0] ? ch->expires_at : NULL,
                  ch->review_after[0] ? ch->review_after : NULL, ch->pinned, &timed);
    if (!timed.failed) {
        buf_reset(doc);
        buf_add(doc, timed.data, timed.len);
    }
    buf_release(&timed);
}

int timing_apply_document(struct store *st, const char *space, const char *id, const char *document)
{
    struct timing_change ch;
    struct error ignored;
    size_t body_off;
    struct json_object *meta = frontmatter_parse(document, strlen(document), &body_off);
    int rc = STORE_OK;
    error_init(&ignored);
    /* only the keys it names: a proposal's document made from the stored
     * one (slim's, a held rewrite's) leaves a time set by PUT alone */
    if (timing_change_of(meta, &ch, &ignored) == 0)
        rc = timing_apply(st, space, id, &ch);
    json_object_put(meta);
    error_release(&ignored);
    return rc;
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

void timing_json_of(const struct knowledge_time *t, struct json_object *o)
{
    time_fields_add(o, t->expires_at, t->review_after, t->pinned);
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

int timing_document(struct store *st, const char *space, const char *id, const char *document,
                    struct buf *out)
{
    struct knowledge_time t;
    int rc = store_time_get(st, space, id, &t);
    if (rc == STORE_OK)
        when_document(document, t.expires_at, t.review_after, t.pinned, out);
    knowledge_time_release(&t);
    return rc;
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

/* The entries a sweep proposes, at most this many a call (the rest next time). */
#define SWEEP_BATCH 20

/* Propose a review of entry id (active, past review_after): the proposal
 * holds its current document, time included. A store status. */
static int review_due_propose(const struct svc_ctx *c, const char *id)
{
    struct svc_ctx clock = *c;
    struct json_object *held = NULL;
    struct knowledge k;
    struct error err;
    struct buf doc;
    int rc;
    if ((rc = store_knowledge_get(c->st, c->space, id, 0, &k)))
        return rc == STORE_NOT_FOUND ? STORE_OK : rc;
    buf_init(&doc, 8 * 1024 * 1024);
    error_init(&err);
    if ((rc = timing_document(c->st, c->space, id, k.document, &doc)) == STORE_OK) {
        /* live text (was_live): nothing to screen */
        struct review_write w = {.write_path = TIMING_CLOCK_ACTOR,
                                 .kind = "review_due",
                                 .knowledge_id = k.id,
                                 .base_version = k.version,
                                 .category = k.category,
                                 .path = k.path,
                                 .document = doc.data,
                                 .base_document = doc.data,
                                 .source = TIMING_CLOCK_ACTOR,
                                 .was_live = 1};
        clock.actor = TIMING_CLOCK_ACTOR;
        clock.token_id = NULL;
        /* a pending one made meanwhile by another sweep: the unique index
         * refuses the second, which is no failure */
        if (review_propose(&clock, &w, &held, &err) < 0)
            rc = err.code && strcmp(err.code, E_CONFLICT) == 0 ? STORE_OK : STORE_ERROR;
    }
    json_object_put(held);
    error_release(&err);
    buf_release(&doc);
    knowledge_release(&k);
    return rc;
}

struct due_ids {
    char *ids[SWEEP_BATCH];
    size_t n;
};

static void due_add(const char *id, void *ctx)
{
    struct due_ids *d = ctx;
    if (d->n < SWEEP_BATCH)
        d->ids[d->n++] = xstrdup(id);
}

int timing_review_sweep(const struct svc_ctx *c)
{
    char now[WHEN_TEXT];
    struct due_ids due = {{0}, 0};
    int rc;
    timing_now(now);
    rc = store_time_review_due(c->st, c->space, now, SWEEP_BATCH, due_add, &due);
    for (size_t i = 0; i < due.n; i++) {
        if (rc == STORE_OK)
            rc = review_due_propose(c, due.ids[i]);
        free(due.ids[i]);
    }
    return rc;
}

struct due_spaces {
    char *names[50];
    size_t n;
};

static void space_add(const char *space, void *ctx)
{
    struct due_spaces *d = ctx;
    if (d->n < sizeof d->names / sizeof *d->names)
        d->names[d->n++] = xstrdup(space);
}

int timing_review_tick(struct store *st, const struct config *cfg)
{
    struct due_spaces due = {{0}, 0};
    char now[WHEN_TEXT];
    int rc;
    timing_now(now);
    rc = store_time_due_spaces(st, now, space_add, &due);
    for (size_t i = 0; i < due.n; i++) {
        struct svc_ctx c = {0};
        c.space = due.names[i];
        c.actor = TIMING_CLOCK_ACTOR;
        c.role = ROLE_ADMIN;
        c.st = st;
        c.cfg = cfg;
        if (rc == STORE_OK)
            rc = timing_review_sweep(&c);
        free(due.names[i]);
    }
    return rc;
}

int timing_review_decided(const struct svc_ctx *c, const char *id, const char *decision,
                          const char *document)
{
    struct timing_change ch;
    char now[WHEN_TEXT];
    timing_now(now);
    memset(&ch, 0, sizeof ch);
    if (strcmp(decision, "reject") == 0) {
        /* no longer valid: expired now, out of every read path, in the stale view */
        ch.has_expires = ch.has_review = 1;
        memcpy(ch.expires_at, now, sizeof now);
        return timing_apply(c->st, c->space, id, &ch);
    }
    if (document && strcmp(decision, "edit") == 0) {
        struct error ignored;
        error_init(&ignored);
        if (timing_change_of_document(document, &ch, &ignored))
            memset(&ch, 0, sizeof ch); /* a time it cannot read: the time stays */
        error_release(&ignored);
    }
    /* reviewed now: a review_after not after now is done with */
    if (!ch.has_review || (ch.review_after[0] && strcmp(ch.review_after, now) <= 0)) {
        ch.has_review = 1;
        ch.review_after[0] = '\0';
    }
    return timing_apply(c->st, c->space, id, &ch);
}
