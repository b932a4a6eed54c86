/* tokens: the API tokens and spaces of the caller's space (tokens.h). Only
 * public ids, roles, labels and times leave here: a token's text is shown
 * once, by svc_token_create, and its hash never. */
#include "service/tokens.h"
#include "base/jfield.h"
#include "service/auth.h"
#include "service/reviewgate.h"
#include "store/store.h"

#include <sodium.h>
#include <string.h>

static struct json_object *str_or_null(const char *s)
{
    return s ? json_object_new_string(s) : NULL;
}

struct token_listing {
    const struct svc_ctx *c;
    struct json_object *items; /* at most TOKENS_LIST_MAX, oldest first */
    long total;
};

/* Keep the caller's space's tokens, the newest TOKENS_LIST_MAX of them:
 * whatever a space holds, the answer stays bounded. */
static int keep_token(const struct token_record *t, void *ctx)
{
    struct token_listing *l = ctx;
    struct json_object *o;
    if (strcmp(t->space, l->c->space) != 0)
        return 0;
    l->total++;
    if (json_object_array_length(l->items) == TOKENS_LIST_MAX)
        json_object_array_del_idx(l->items, 0, 1);
    o = json_object_new_object();
    json_object_object_add(o, "id", json_object_new_string(t->id));
    json_object_object_add(o, "role", json_object_new_string(t->role));
    json_object_object_add(o, "label", json_object_new_string(t->label ? t->label : ""));
    json_object_object_add(o, "created_at", json_object_new_string(t->created_at));
    json_object_object_add(o, "last_used_at", str_or_null(t->last_used_at));
    json_object_object_add(o, "revoked_at", str_or_null(t->revoked_at));
    json_object_object_add(o, "state", json_object_new_string(t->revoked_at ? "revoked" : "valid"));
    json_object_object_add(
        o, "current",
        json_object_new_boolean(l->c->token_id && strcmp(t->id, l->c->token_id) == 0));
    json_object_array_add(l->items, o);
    return 0;
}

int svc_token_list(const struct svc_ctx *c, struct json_object **data, struct error *err)
{
    struct token_listing l = {c, json_object_new_array(), 0};
    struct json_object *newest_first;
    size_t n;
    int rc = store_token_each(c->st, keep_token, &l);
    *data = NULL;
    if (rc) {
        json_object_put(l.items);
        store_status_error(rc, "Token", err);
        return -1;
    }
    n = json_object_array_length(l.items);
    newest_first = json_object_new_array_ext((int)n);
    for (size_t i = n; i-- > 0;)
        json_object_array_add(newest_first, json_object_get(json_object_array_get_idx(l.items, i)));
    json_object_put(l.items);
    *data = json_object_new_object();
    json_object_object_add(*data, "items", newest_first);
    json_object_object_add(*data, "total", json_object_new_int64(l.total));
    json_object_object_add(*data, "truncated", json_object_new_boolean(l.total > (long)n));
    return 0;
}

/* Forget a token's text: wiped, then released. */
static void token_text_release(struct buf *token)
{
    sodium_memzero(token->data, token->len);
    buf_release(token);
}

int svc_token_create(const struct svc_ctx *c, struct json_object *body, struct json_object **data,
                     struct error *err)
{
    const char *role_text = NULL, *label = NULL, *review = NULL;
    struct token_record rec = {0};
    char id[TOKEN_ID_HEX + 1];
    enum role role;
    struct buf token;
    int rc;
    *data = NULL;
    if (jf_string(err, body, "role", 1, 16, &role_text) ||
        jf_string(err, body, "label", 0, TOKEN_LABEL_MAX, &label) ||
        jf_string(err, body, "review", 0, 32, &review))
        return -1;
    if (review && !review_policy_valid(review)) {
        error_set(err, E_INVALID_REQUEST, "invalid_review_policy",
                  "'review' must be off, agent_writes, llm_writes or all");
        error_str(err, "field", "review");
        return -1;
    }
    role = role_from_name(role_text);
    if (role == ROLE_NONE) {
        error_set(err, E_INVALID_REQUEST, "invalid_role",
                  "Invalid role: %s (admin, editor, agent or reader)", role_text);
        error_str(err, "role", role_text);
        return -1;
    }
    buf_init(&token, 256);
    /* the token and its own review policy in one transaction */
    if ((rc = store_begin(c->st)) == STORE_OK) {
        rc = auth_token_create(c->st, c->space, role, label ? label : "", c->actor, &token);
        if (rc == STORE_OK) {
            auth_token_split(token.data, id); /* a token just made: always shaped as one */
            if (review)
                rc = store_token_review_set(c->st, id, review);
        }
        if (rc == STORE_OK)
            rc = store_commit(c->st);
        else
            store_rollback(c->st);
    }
    if (rc == STORE_OK)
        rc = store_token_get(c->st, id, &rec);
    if (rc) {
        token_text_release(&token);
        store_token_record_release(&rec);
        store_status_error(rc, "Token", err);
        return -1;
    }
    *data = json_object_new_object();
    json_object_object_add(*data, "token", json_object_new_string(token.data));
    json_object_object_add(*data, "id", json_object_new_string(rec.id));
    json_object_object_add(*data, "space", json_object_new_string(rec.space));
    json_object_object_add(*data, "role", json_object_new_string(rec.role));
    json_object_object_add(*data, "label", json_object_new_string(rec.label ? rec.label : ""));
    json_object_object_add(*data, "created_at", json_object_new_string(rec.created_at));
    if (review) /* its own review policy (docs/review.md) */
        json_object_object_add(*data, "review", json_object_new_string(review));
    token_text_release(&token);
    store_token_record_release(&rec);
    return 0;
}

int svc_token_revoke(const struct svc_ctx *c, const char *id, struct json_object **data,
                     struct error *err)
{
    int rc;
    *data = NULL;
    if (!auth_token_id_valid(id)) {
        error_set(err, E_NOT_FOUND, "not_found", "Token not found");
        return -1;
    }
    if (c->token_id && strcmp(id, c->token_id) == 0) {
        error_set(err, E_CONFLICT, "token_self_revoke",
                  "This is the token you are signed in with: revoke it from another admin token "
                  "or with knowhub token revoke");
        return -1;
    }
    rc = store_token_revoke(c->st, id, c->space, c->actor);
    auth_cache_forget(id); /* refused here at once; on other nodes within the bound */
    if (rc) {
        store_status_error(rc, "Token", err);
        return -1;
    }
    *data = json_object_new_object();
    json_object_object_add(*data, "id", json_object_new_string(id));
    json_object_object_add(*data, "revoked", json_object_new_boolean(1));
    return 0;
}

int svc_space_list(const struct svc_ctx *c, struct json_object **data, struct error *err)
{
    struct json_object *items = json_object_new_array(), *one = json_object_new_object();
    (void)err;
    json_object_object_add(one, "name", json_object_new_string(c->space));
    json_object_object_add(one, "role", json_object_new_string(role_name(c->role)));
    json_object_object_add(one, "current", json_object_new_boolean(1));
    json_object_array_add(items, one);
    *data = json_object_new_object();
    json_object_object_add(*data, "items", items);
    json_object_object_add(*data, "current", json_object_new_string(c->space));
    return 0;
}
