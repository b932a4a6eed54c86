/* auth: API tokens. A token is "kh_<id>_<secret>": the id (16 hex) finds the
 * row, the secret's BLAKE2b hash (libsodium) is compared in constant time.
 * Only hashes are stored. */
#ifndef KNOWHUB_AUTH_H
#define KNOWHUB_AUTH_H

#include "base/buf.h"
#include "service/ctx.h"

struct store;

/* A token's public id: 16 lower-case hex digits ("kh_<id>_<secret>"). */
#define TOKEN_ID_HEX 16

/* 1 when id is a token's public id (TOKEN_ID_HEX lower-case hex digits). */
int auth_token_id_valid(const char *id);
/* Split a token text "kh_<id>_<secret>": its id into id, and its secret;
 * NULL when text is not shaped as a token. */
const char *auth_token_split(const char *text, char id[TOKEN_ID_HEX + 1]);

/* Role from its name ("admin", "editor", "agent", "reader"); ROLE_NONE if unknown. */
enum role role_from_name(const char *name);
const char *role_name(enum role role);

/* Rules are changed by admins only: 1 when a caller of this role may change
 * an entry of category (NULL counts as not a rule). The services turn a 0
 * into FORBIDDEN, key rules_admin_only (knowledge_may_change). */
int auth_may_change(enum role role, const char *category);

/* Return 1 when name is a valid space name: [a-z0-9_-], 1..64 characters. */
int space_name_valid(const char *name);

/* Create a token for space (created if needed) and role, audited as actor's
 * ("operator" for the CLI); the full token text goes to out (shown once,
 * never stored). Returns a store status. */
int auth_token_create(struct store *st, const char *space, enum role role, const char *label,
                      const char *actor, struct buf *out);

/* What a credential check found. */
enum auth_result {
    AUTH_OK = 0,           /* who is filled */
    AUTH_DENIED = -1,      /* missing, malformed, unknown, forged, revoked or expired */
    AUTH_UNAVAILABLE = -2, /* the store could not be read: answer 503, never a pass */
};

/* Check an "Authorization" header value; on AUTH_OK who is filled. A token
 * verified at most auth_cache_bound_ms() ago is taken from memory, without
 * the store (docs/performance.md "Round trips per request"). */
enum auth_result auth_check(struct store *st, const char *authorization, struct identity *who);
/* How long a verified token is kept (ms; 0: never). main sets it before
 * the threads start (KNOWHUB_TOKEN_CACHE_MS, 1000). */
void auth_cache_configure(long bound_ms);
long auth_cache_bound_ms(void);
/* Drop a token kept in memory: its revocation takes effect at once here. */
void auth_cache_forget(const char *token_id);

/* ---- browser logins ---- */

#define LOGIN_COOKIE "kh_session"
#define LOGIN_COOKIE_TLS "__Host-kh_session"
#define LOGIN_LIFETIME_SECONDS (7L * 24 * 3600)

/* The login cookie's name: over https the __Host- one (the browser keeps it
 * only when Secure, Path=/ and host-only, so no sibling host or plain-http
 * page can plant it), else plain kh_session. Only that name is read. */
const char *auth_cookie_name(int https);

/* Start a browser login for the token of who: a fresh cookie value (only its
 * hash is stored) and CSRF token go to cookie and csrf. */
int auth_login_start(struct store *st, const struct identity *who, struct buf *cookie,
                     struct buf *csrf);
/* Check the login cookie called name in a Cookie header; on AUTH_OK who and
 * *csrf (the caller frees it) are filled. */
enum auth_result auth_check_cookie(struct store *st, const char *cookie_header, const char *name,
                                   struct identity *who, char **csrf);
/* Forget the login cookie called name of a Cookie header (no error when there is none). */
void auth_login_end(struct store *st, const char *cookie_header, const char *name);
/* Constant-time comparison of the expected and given CSRF tokens. */
int auth_csrf_ok(const char *expected, const char *given);
/* 1 when an "Authorization" header value is "Bearer <secret>" (constant
 * time; a NULL or empty secret matches nothing). */
int auth_bearer_is(const char *authorization, const char *secret);

#endif
