/* store/time.c: an entry's expiry, review-by date and pin (migration 21):
 * set, read, the space's expired entries, the next expiry anywhere, the
 * stale view and the entries due for review (service/timing.c). */
#include "store/store_int.h"

#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void knowledge_time_release(struct knowledge_time *t)
{
    free(t->expires_at);
    free(t->review_after);
    t->expires_at = t->review_after = NULL;
    t->pinned = 0;
}

int store_time_set(struct store *st, const char *space, const char *id,
                   const struct knowledge_time *t)
{
    if (!t->expires_at && !t->review_after && !t->pinned)
        return stmt_run(st, S_TIME_CLEAR, "tt", space, id);
    return stmt_run(st, S_TIME_SET, "tttti", space, id, t->expires_at, t->review_after,
                    t->pinned ? 1 : 0);
}

void store_time_from_row(struct cursor *s, struct knowledge_time *out)
{
    const char *e = stmt_col_opt(s, 0), *r = stmt_col_opt(s, 1);
    out->expires_at = e ? xstrdup(e) : NULL;
    out->review_after = r ? xstrdup(r) : NULL;
    out->pinned = stmt_col_int(s, 2) != 0;
}

int store_time_get(struct store *st, const char *space, const char *id, struct knowledge_time *out)
{
    struct cursor *s;
    int rc;
    out->expires_at = out->review_after = NULL;
    out->pinned = 0;
    if (!(s = stmt_bind(st, S_TIME_GET, "tt", space, id)))
        return STORE_ERROR;
    if ((rc = stmt_step(s)) == STEP_ROW)
        store_time_from_row(s, out);
    rc = stmt_row_end(s, rc);
    return rc == STORE_NOT_FOUND ? STORE_OK : rc;
}

/* Each row's first column to each. */
static int ids_each(struct cursor *s, void (*each)(const char *id, void *), void *ctx)
{
    int rc;
    if (!s)
        return STORE_ERROR;
    while ((rc = stmt_step(s)) == STEP_ROW)
        each(stmt_col_text(s, 0), ctx);
    return stmt_rows_end(s, rc);
}

static void expired_cache_release(struct store *st)
{
    struct expired_cache *x = &st->expired;
    for (size_t i = 0; i < x->n; i++)
        free(x->ids[i]);
    free(x->ids);
    free(x->space);
    memset(x, 0, sizeof *x);
}

static void cache_add(struct expired_cache *x, const char *id)
{
    if (x->n == x->cap) {
        x->cap = x->cap ? 2 * x->cap : 16;
        x->ids = xrealloc(x->ids, x->cap * sizeof *x->ids);
    }
    x->ids[x->n++] = xstrdup(id);
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int store_time_expired_view(struct store *st, const char *space, const char *now, uint64_t gen,
                            const char *const **ids, size_t *n)
{
    struct expired_cache *x = &st->expired;
    struct cursor *s;
    char *until = NULL;
    int rc;
    *ids = NULL;
    *n = 0;
    if (!(x->valid && x->gen == gen && strcmp(x->space, space) == 0 &&
          (!x->until[0] || strcmp(now, x->until) < 0))) {
        expired_cache_release(st);
        if (!(s = stmt_bind(st, S_TIME_EXPIRED, "tt", space, now)))
            return STORE_ERROR;
        while ((rc = stmt_step(s)) == STEP_ROW)
            cache_add(x, stmt_col_text(s, 0));
        if ((rc = stmt_rows_end(s, rc)) || (rc = store_time_next_expiry(st, now, &until))) {
            expired_cache_release(st);
            return rc;
        }
        if (x->n > 1)
            qsort(x->ids, x->n, sizeof *x->ids, by_text);
        x->space = xstrdup(space);
        x->gen = gen;
        snprintf(x->until, sizeof x->until, "%s", until ? until : "");
        free(until);
        /* inside a write transaction the generation may be rolled back and
         * reached again by other writes: used now, kept for no one after */
        x->valid = st->tx_depth == 0;
    }
    *ids = (const char *const *)x->ids;
    *n = x->n;
    return STORE_OK;
}

int store_time_expired(struct store *st, const char *space, const char *now,
                       void (*each)(const char *id, void *), void *ctx)
{
    const char *const *ids;
    size_t n;
    uint64_t gen;
    int rc = store_generation(st, &gen);
    if (rc == STORE_OK)
        rc = store_time_expired_view(st, space, now, gen, &ids, &n);
    for (size_t i = 0; rc == STORE_OK && i < n; i++)
        each(ids[i], ctx);
    return rc;
}

int store_time_next_expiry(struct store *st, const char *now, char **next)
{
    struct cursor *s;
    int rc;
    *next = NULL;
    if (!(s = stmt_bind(st, S_TIME_NEXT_EXPIRY, "t", now)))
        return STORE_ERROR;
    if ((rc = stmt_step(s)) == STEP_ROW) {
        const char *v = stmt_col_opt(s, 0);
        *next = v ? xstrdup(v) : NULL;
    }
    rc = stmt_row_end(s, rc);
    return rc == STORE_NOT_FOUND ? STORE_OK : rc;
}

int store_time_stale(struct store *st, const char *space, const char *now, long limit, long offset,
                     void (*each)(const struct stale_entry *, void *), void *ctx, long *total)
{
    struct cursor *s;
    int rc;
    *total = 0;
    if (!(s = stmt_bind(st, S_TIME_STALE_COUNT, "tt", space, now)))
        return STORE_ERROR;
    if ((rc = stmt_row_count(s, total)) != STORE_OK)
        return rc;
    if (!(s = stmt_bind(st, S_TIME_STALE, "ttll", space, now, limit, offset)))
        return STORE_ERROR;
    while ((rc = stmt_step(s)) == STEP_ROW) {
        struct stale_entry e = {stmt_col_text(s, 0),    stmt_col_text(s, 1), stmt_col_text(s, 2),
                                stmt_col_text(s, 3),    stmt_col_opt(s, 4),  stmt_col_opt(s, 5),
                                stmt_col_int(s, 6) != 0};
        each(&e, ctx);
    }
    return stmt_rows_end(s, rc);
}

int store_time_review_due(struct store *st, const char *space, const char *now, long limit,
                          void (*each)(const char *id, void *), void *ctx)
{
    return ids_each(stmt_bind(st, S_TIME_REVIEW_DUE, "ttl", space, now, limit), each, ctx);
}

int store_time_due_spaces(struct store *st, const char *now,
                          void (*each)(const char *space, void *), void *ctx)
{
    return ids_each(stmt_bind(st, S_TIME_DUE_SPACES, "t", now), each, ctx);
}

int store_answer_generation(struct store *st, uint64_t *gen)
{
    char now[21];
    int rc = store_generation(st, gen), passed;
    if (rc)
        return rc;
    time_utc_iso_z(now);
    passed = st->expiry_known && st->expiry_next[0] && strcmp(now, st->expiry_next) >= 0;
    if (!st->expiry_known || st->expiry_gen != *gen || passed) {
        char *next = NULL;
        if ((rc = store_time_next_expiry(st, now, &next)))
            return rc;
        if (passed)
            st->expiry_epoch++;
        snprintf(st->expiry_next, sizeof st->expiry_next, "%s", next ? next : "");
        free(next);
        st->expiry_gen = *gen;
        st->expiry_known = 1;
    }
    /* the epoch in the high bits: a generation never gets near them */
    *gen += st->expiry_epoch << 44;
    return STORE_OK;
}
