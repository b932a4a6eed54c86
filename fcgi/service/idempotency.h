/* idempotency: the Idempotency-Key of a create. A client that did not hear
 * the answer (a timeout, a 503 after a crash) sends the same request with
 * the same key again and gets the entry the first one made, never a second
 * entry; the same key with another request is a CONFLICT. Keys are per
 * space and hold IDEMPOTENCY_HOURS (store/store.h). */
#ifndef KNOWHUB_IDEMPOTENCY_H
#define KNOWHUB_IDEMPOTENCY_H

#include <json-c/json.h>

#include "base/error.h"
#include "service/ctx.h"
#include "store/store.h"

#define IDEMPOTENCY_KEY_MAX 128 /* characters, printable ASCII without spaces */

struct idem {
    const char *key; /* NULL: the request has none */
    char digest[IDEMPOTENCY_DIGEST_HEX];
};

/* The request's key (c->idempotency_key, the Idempotency-Key header, else
 * the body's "idempotency_key") checked, and the digest of the body; key
 * NULL when there is none. -1 with err (INVALID_REQUEST) on a bad key. */
int idem_begin(const struct svc_ctx *c, struct json_object *body, struct idem *idem,
               struct error *err);

/* A key already used in the space: 1 with the id of the entry it made in
 * *id (the caller frees it) when the request is the same, -1 with err
 * (CONFLICT when it is another request, or the store's error); 0 when the
 * key is new. */
int idem_find(const struct svc_ctx *c, const struct idem *idem, char **id, struct error *err);

#endif
