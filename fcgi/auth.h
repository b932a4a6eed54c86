/* auth: API tokens. A token is "kh_<id>_<secret>": the id (16 hex) finds the
 * row, the secret's BLAKE2b hash (libsodium) is compared in constant time.
 * Only hashes are stored. */
#ifndef KNOWHUB_AUTH_H
#define KNOWHUB_AUTH_H

#include "buf.h"
#include "http.h"

struct store;

/* Role from its name ("admin", "editor", "agent", "reader"); ROLE_NONE if unknown. */
enum role role_from_name(const char *name);
const char *role_name(enum role role);

/* Return 1 when name is a valid space name: [a-z0-9_-], 1..64 characters. */
int space_name_valid(const char *name);

/* Create a token for space (created if needed) and role; the full token text
 * goes to out (shown once, never stored). Returns a store status. */
int auth_token_create(struct store *st, const char *space, enum role role, const char *label,
                      struct buf *out);

/* Check an "Authorization" header value; on success fill who and return 0;
 * -1 when missing, malformed, unknown, forged or revoked; -2 on a store error. */
int auth_check(struct store *st, const char *authorization, struct identity *who);

#endif
