/* idempotency: the Idempotency-Key of a create (idempotency.h). */
#include "service/idempotency.h"
#include "base/jfield.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

int idem_begin(const struct svc_ctx *c, struct json_object *body, struct idem *idem,
               struct error *err)
{
    const char *in_body = NULL, *key;
    unsigned char h[32];
    memset(idem, 0, sizeof *idem);
    if (jf_string(err, body, "idempotency_key", 0, IDEMPOTENCY_KEY_MAX * 4, &in_body))
        return -1;
    key = c->idempotency_key ? c->idempotency_key : in_body;
    if (!key)
        return 0;
    if (c->idempotency_key && in_body && strcmp(in_body, c->idempotency_key) != 0) {
        error_set(err, E_INVALID_REQUEST, "idempotency_key_invalid",
                  "The Idempotency-Key header and the body's idempotency_key differ");
        return -1;
    }
    size_t n = strlen(key);
    int ok = n >= 1 && n <= IDEMPOTENCY_KEY_MAX;
    for (size_t i = 0; ok && i < n; i++)
        ok = key[i] > 0x20 && key[i] < 0x7f;
    if (!ok) {
        error_set(err, E_INVALID_REQUEST, "idempotency_key_invalid",
                  "An Idempotency-Key is 1 to %d printable ASCII characters without spaces",
                  IDEMPOTENCY_KEY_MAX);
        return -1;
    }
    idem->key = key;
    /* the request as parsed: the same body gives the same digest */
    const char *text = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN);
    crypto_generichash(h, sizeof h, (const unsigned char *)text, strlen(text), NULL, 0);
    sodium_bin2hex(idem->digest, sizeof idem->digest, h, sizeof h);
    return 0;
}

int idem_find(const struct svc_ctx *c, const struct idem *idem, char **id, struct error *err)
{
    char stored[IDEMPOTENCY_DIGEST_HEX];
    int rc = store_idempotency_get(c->st, c->space, idem->key, stored, id);
    if (rc == STORE_NOT_FOUND)
        return 0;
    if (rc) {
        store_status_error(rc, "Idempotency-Key", err);
        return -1;
    }
    if (strcmp(stored, idem->digest) != 0) {
        error_set(err, E_CONFLICT, "idempotency_key_reused",
                  "This Idempotency-Key came with another request; a new entry needs a new key");
        free(*id);
        *id = NULL;
        return -1;
    }
    return 1;
}
