/* store/tokens.c: spaces, API tokens and browser logins. */
#include "store/store_int.h"

#include <stdlib.h>
#include <string.h>

int store_space_ensure(struct store *st, const char *space)
{
    char now[20];
    time_utc_text(now);
    return stmt_run(st, S_SPACE_ENSURE, "tt", space, now);
}

long store_token_count(struct store *st)
{
    struct cursor *s = stmt_get(st, S_TOKEN_COUNT);
    long n = -1;
    if (!s)
        return -1;
    if (stmt_step(s) == STEP_ROW)
        n = stmt_col_int64(s, 0);
    stmt_finish(s);
    return n;
}

void store_token_record_release(struct token_record *t)
{
    free(t->id);
    free(t->space);
    free(t->role);
    free(t->label);
    free(t->created_at);
    free(t->last_used_at);
    free(t->revoked_at);
    memset(t, 0, sizeof *t);
}

int store_token_insert(struct store *st, const char *id, const unsigned char hash[32],
                       const char *space, const char *role, const char *label, const char *actor)
{
    char now[20];
    int rc;
    if ((rc = store_begin(st)))
        return rc;
    if ((rc = store_space_ensure(st, space)))
        return store_tx_end(st, rc);
    time_utc_text(now);
    rc = stmt_run(st, S_TOKEN_INSERT, "thtttt", id, hash, space, role, label ? label : "", now);
    if (rc == STORE_OK)
        rc = store_audit(st, space, actor, "token.create", id);
    return store_tx_end(st, rc);
}

/* On PostgreSQL a token lookup also reads the cache generation (column
 * col), so a request learns both in one round trip (store_generation). */
static void generation_from_row(struct cursor *s, int col)
{
    if (s->st->pg && stmt_col_count(s) > col) {
        s->st->generation = (uint64_t)stmt_col_int64(s, col);
        s->st->generation_fresh = 1;
    }
}

static void token_from_row(struct cursor *s, struct token_record *t)
{
    size_t bytes;
    const void *hash = stmt_col_blob(s, 7, &bytes);
    t->id = stmt_col_dup(s, 0);
    t->space = stmt_col_dup(s, 1);
    t->role = stmt_col_dup(s, 2);
    t->label = stmt_col_dup(s, 3);
    t->created_at = stmt_col_dup(s, 4);
    t->last_used_at = stmt_col_dup(s, 5);
    t->revoked_at = stmt_col_dup(s, 6);
    memset(t->hash, 0, sizeof t->hash);
    if (hash && bytes == 32)
        memcpy(t->hash, hash, 32);
}

int store_token_get(struct store *st, const char *id, struct token_record *out)
{
    struct cursor *s = stmt_bind(st, S_TOKEN_GET, "t", id);
    int rc;
    memset(out, 0, sizeof *out);
    if (!s)
        return STORE_ERROR;
    if ((rc = stmt_step(s)) == STEP_ROW) {
        token_from_row(s, out);
        generation_from_row(s, 8);
    }
    return stmt_row_end(s, rc);
}

int store_token_touch(struct store *st, const char *id)
{
    char now[20];
    time_utc_text(now);
    return stmt_run(st, S_TOKEN_TOUCH, "tt", id, now);
}

int store_token_revoke(struct store *st, const char *id, const char *space, const char *actor)
{
    struct token_record t = {0};
    char now[20];
    int rc;
    if ((rc = store_begin(st)))
        return rc;
    rc = store_token_get(st, id, &t);
    /* Another space's token is not found there: a space sees only its own. */
    if (rc == STORE_OK && ((space && strcmp(t.space, space) != 0) || t.revoked_at))
        rc = STORE_NOT_FOUND;
    if (rc == STORE_OK) {
        time_utc_text(now);
        rc = stmt_run(st, S_TOKEN_REVOKE, "tt", id, now);
        if (rc == STORE_OK && stmt_rows_changed(st) == 0)
            rc = STORE_NOT_FOUND;
    }
    if (rc == STORE_OK)
        rc = store_audit(st, t.space, actor, "token.revoke", id);
    store_token_record_release(&t);
    return store_tx_end(st, rc);
}

int store_token_each(struct store *st, int (*each)(const struct token_record *, void *), void *ctx)
{
    struct cursor *s = stmt_get(st, S_TOKEN_ALL);
    int rc;
    if (!s)
        return STORE_ERROR;
    while ((rc = stmt_step(s)) == STEP_ROW) {
        struct token_record t;
        int stop;
        token_from_row(s, &t);
        stop = each(&t, ctx);
        store_token_record_release(&t);
        if (stop)
            break;
    }
    return stmt_rows_end(s, rc);
}

/* ---- browser logins ---- */

int store_login_insert(struct store *st, const unsigned char hash[32], const char *token_id,
                       const char *csrf, long lifetime_seconds)
{
    char now[20], expires[20];
    int rc;
    if ((rc = store_begin(st)))
        return rc;
    time_utc_text(now);
    time_utc_text_offset(expires, lifetime_seconds);
    /* expired logins go as new ones come */
    if ((rc = stmt_run(st, S_LOGIN_EXPIRE, "t", now)))
        return store_tx_end(st, rc);
    return store_tx_end(st,
                        stmt_run(st, S_LOGIN_INSERT, "htttt", hash, token_id, csrf, now, expires));
}

int store_login_get(struct store *st, const unsigned char hash[32], struct token_record *token,
                    char **csrf)
{
    char now[20];
    int rc;
    struct cursor *s;
    memset(token, 0, sizeof *token);
    *csrf = NULL;
    time_utc_text(now);
    if (!(s = stmt_bind(st, S_LOGIN_GET, "ht", hash, now)))
        return STORE_ERROR;
    if ((rc = stmt_step(s)) == STEP_ROW) {
        token_from_row(s, token);
        *csrf = stmt_col_dup(s, 8);
        generation_from_row(s, 9);
    }
    return stmt_row_end(s, rc);
}

int store_login_delete(struct store *st, const unsigned char hash[32])
{
    return stmt_run(st, S_LOGIN_DELETE, "h", hash);
}
