/* store/vectors.c: embedding vectors and the queue of entries to embed. */
#include "store/store_int.h"

#include <stdio.h>
#include <unistd.h>

int store_embed_take(struct store *st, const char *space, long limit, long head_chars,
                     void (*each)(const struct embed_todo *, void *), void *ctx)
{
    struct cursor *s = stmt_bind(st, S_VEC_TAKE, "llt", limit, head_chars, space);
    int rc;
    if (!s)
        return STORE_ERROR;
    while ((rc = stmt_step(s)) == STEP_ROW) {
        struct embed_todo t;
        t.seq = stmt_col_int64(s, 0);
        t.id = stmt_col_opt(s, 1);
        t.space = stmt_col_opt(s, 2);
        t.version = (long)stmt_col_int64(s, 3);
        t.status = stmt_col_text(s, 4);
        t.title = stmt_col_text(s, 5);
        t.scenario = stmt_col_text(s, 6);
        t.content_head = stmt_col_text(s, 7);
        t.model = stmt_col_opt(s, 8);
        t.vector_version = (long)stmt_col_int64(s, 9);
        t.digest = stmt_col_text(s, 10);
        each(&t, ctx);
    }
    return stmt_rows_end(s, rc);
}

int store_embed_next_space(struct store *st, const char *after, char **space)
{
    struct cursor *s = stmt_bind(st, S_VEC_NEXT, "t", after);
    int rc;
    *space = NULL;
    if (!s)
        return STORE_ERROR;
    if ((rc = stmt_step(s)) == STEP_ROW)
        *space = stmt_col_dup(s, 0); /* NULL: nothing queued */
    return stmt_rows_end(s, rc);
}

int store_embed_fill(struct store *st, const char *space, const char *model, int force)
{
    int rc = store_begin(st);
    if (rc == STORE_OK && force)
        rc = stmt_run(st, S_VEC_FORGET_DIGESTS, "t", space);
    if (rc == STORE_OK)
        rc = stmt_run(st, S_VEC_FILL, "tt", space, model);
    return store_tx_end(st, rc);
}

/* The name a turn is held by: this node's (store_set_node), else this
 * process's. */
static const char *turn_holder(const struct store *st, char *own, size_t size)
{
    if (st->node && *st->node)
        return st->node;
    snprintf(own, size, "pid-%ld", (long)getpid());
    return own;
}

int store_embed_turn_take(struct store *st, long lease_ms, char *holder, size_t holder_size,
                          long *left_ms)
{
    char own[32];
    struct cursor *s;
    int rc;
    if (holder_size)
        holder[0] = '\0';
    *left_ms = 0;
    if (!st->pg)
        return STORE_OK; /* one host: its processes share the cost, rarely the queue */
    s = stmt_bind(st, S_EMBED_TURN_TAKE, "tl", turn_holder(st, own, sizeof own), lease_ms);
    if (!s)
        return STORE_ERROR;
    rc = stmt_step(s);
    if (rc == STEP_ROW && stmt_col_int(s, 0) == 0) {
        if (holder_size)
            snprintf(holder, holder_size, "%s", stmt_col_text(s, 1));
        *left_ms = (long)stmt_col_int64(s, 2);
        rc = -STORE_BUSY; /* another node's turn, and its lease runs */
    }
    return stmt_rows_end(s, rc);
}

int store_embed_turn_give(struct store *st)
{
    char own[32];
    if (!st->pg)
        return STORE_OK;
    return stmt_run(st, S_EMBED_TURN_GIVE, "t", turn_holder(st, own, sizeof own));
}

int store_embed_queued(struct store *st, const char *space, long *n)
{
    struct cursor *s = stmt_bind(st, S_VEC_QUEUED, "t", space);
    *n = 0;
    return s ? stmt_row_count(s, n) : STORE_ERROR;
}

int store_vector_put(struct store *st, long long seq, const char *space, const char *model,
                     long version, const char *digest, const float *vec, int dim)
{
    char now[27];
    static const float none = 0;
    int rc = store_begin(st);
    time_utc_iso_micro(now);
    if (rc == STORE_OK)
        rc = stmt_run(st, S_VEC_PUT, "Lttltibt", seq, space, model, version, digest, dim,
                      dim > 0 ? (const void *)vec : (const void *)&none,
                      dim > 0 ? dim * (int)sizeof *vec : 0, now);
    if (rc == STORE_OK)
        rc = stmt_run(st, S_VEC_DEQUEUE, "Ll", seq, version);
    return store_tx_end(st, rc);
}

int store_vector_touch(struct store *st, long long seq, long version)
{
    int rc = store_begin(st);
    if (rc == STORE_OK)
        rc = stmt_run(st, S_VEC_TOUCH, "Ll", seq, version);
    if (rc == STORE_OK)
        rc = stmt_run(st, S_VEC_DEQUEUE, "Ll", seq, version);
    return store_tx_end(st, rc);
}

int store_embed_done(struct store *st, long long seq, long version)
{
    return stmt_run(st, S_VEC_DEQUEUE, "Ll", seq, version);
}

int store_vector_counts(struct store *st, const char *space, const char *model, long *entries,
                        long *rows, long *vectors, long *dim)
{
    struct cursor *s = stmt_bind(st, S_VEC_COUNTS, "tt", space, model);
    int rc;
    *entries = *rows = *vectors = *dim = 0;
    if (!s)
        return STORE_ERROR;
    if ((rc = stmt_step(s)) == STEP_ROW) {
        *rows = (long)stmt_col_int64(s, 0);
        *vectors = (long)stmt_col_int64(s, 1);
        *dim = (long)stmt_col_int64(s, 2);
        *entries = (long)stmt_col_int64(s, 3);
    }
    return stmt_rows_end(s, rc);
}

int store_vectors_since(struct store *st, const char *space, const char *model, long long stamp,
                        long limit, void (*each)(const struct vector_row *, void *), void *ctx)
{
    struct cursor *s = stmt_bind(st, S_VEC_SINCE, "ttLl", space, model, stamp, limit);
    int rc;
    if (!s)
        return STORE_ERROR;
    while ((rc = stmt_step(s)) == STEP_ROW) {
        struct vector_row r;
        r.seq = stmt_col_int64(s, 0);
        r.id = stmt_col_text(s, 1);
        r.status = stmt_col_text(s, 2);
        r.dim = stmt_col_int(s, 3);
        size_t bytes;
        r.vec = stmt_col_blob(s, 4, &bytes);
        r.stamp = stmt_col_int64(s, 5);
        if (r.dim < 0 || bytes != (size_t)r.dim * sizeof(float))
            r.dim = 0; /* a damaged row counts as none */
        each(&r, ctx);
    }
    return stmt_rows_end(s, rc);
}

int store_vector_stamp(struct store *st, long long *stamp)
{
    struct cursor *s = stmt_get(st, S_VEC_STAMP);
    int rc;
    *stamp = 0;
    if (!s)
        return STORE_ERROR;
    if ((rc = stmt_step(s)) == STEP_ROW)
        *stamp = stmt_col_int64(s, 0);
    return stmt_row_end(s, rc);
}

int store_vector_dim(struct store *st, const char *model, long *dim)
{
    struct cursor *s = stmt_bind(st, S_VEC_DIM, "t", model);
    *dim = 0;
    return s ? stmt_row_count(s, dim) : STORE_ERROR;
}
