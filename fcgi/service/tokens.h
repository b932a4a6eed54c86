/* tokens: the API tokens and spaces of the caller's space, for admins in the
 * panel (GET/POST /api/tokens, DELETE /api/tokens/{id}) and for every caller
 * the spaces it may use (GET /api/spaces). The operator's CLI (knowhub
 * token) sees every space; these see the caller's alone. */
#ifndef KNOWHUB_TOKENS_H
#define KNOWHUB_TOKENS_H

#include "base/error.h"
#include "service/ctx.h"

/* The most tokens one list answers (newest first); "truncated" says when a
 * space has more. */
#define TOKENS_LIST_MAX 500
/* A label's longest, in characters (the CLI's limit). */
#define TOKEN_LABEL_MAX 200

/* {items: [{id, role, label, created_at, last_used_at, revoked_at, state,
 * current}], total, truncated}: the tokens of the caller's space, newest
 * first; no secret or hash. */
int svc_token_list(const struct svc_ctx *c, struct json_object **data, struct error *err);

/* body {role, label?}: a new token of the caller's space; data {token (the
 * full text, shown this once), id, space, role, label, created_at}. An audit
 * row "token.create" names the new id. */
int svc_token_create(const struct svc_ctx *c, struct json_object *body, struct json_object **data,
                     struct error *err);

/* Revoke token id of the caller's space: NOT_FOUND when it is another
 * space's, unknown or already revoked; CONFLICT for the caller's own token
 * (revoke it from another admin token or the CLI, so nobody locks themselves
 * out by a click). data {id, revoked: true}; an audit row "token.revoke". */
int svc_token_revoke(const struct svc_ctx *c, const char *id, struct json_object **data,
                     struct error *err);

/* {items: [{name, role, current}], current}: the spaces the caller may use.
 * A token belongs to one space today, so that is the one item; the shape
 * leaves room for grants to several. */
int svc_space_list(const struct svc_ctx *c, struct json_object **data, struct error *err);

#endif
