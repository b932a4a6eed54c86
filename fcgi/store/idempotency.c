/* store/idempotency.c: the Idempotency-Keys of creates (migration 12). */
#include "store/store_int.h"

#include <stdio.h>
#include <string.h>

int store_idempotency_get(struct store *st, const char *space, const char *key,
                          char digest[IDEMPOTENCY_DIGEST_HEX], char **knowledge_id)
{
    char since[27];
    struct cursor *s;
    int rc;
    *knowledge_id = NULL;
    digest[0] = '\0';
    time_utc_iso_micro_offset(since, -IDEMPOTENCY_HOURS * 3600L);
    if (!(s = stmt_bind(st, S_IDEM_GET, "ttt", space, key, since)))
        return STORE_ERROR;
    if ((rc = stmt_step(s)) == STEP_ROW) {
        const char *d = stmt_col_text(s, 0);
        snprintf(digest, IDEMPOTENCY_DIGEST_HEX, "%s", d ? d : "");
        *knowledge_id = xstrdup(stmt_col_text(s, 1));
    }
    return stmt_row_end(s, rc);
}

int store_idempotency_put(struct store *st, const char *space, const char *key, const char *digest,
                          const char *knowledge_id)
{
    char now[27], since[27];
    int rc;
    time_utc_iso_micro(now);
    time_utc_iso_micro_offset(since, -IDEMPOTENCY_HOURS * 3600L);
    /* the keys of every space past their day go with any new one */
    if ((rc = stmt_run(st, S_IDEM_EXPIRE, "t", since)))
        return rc;
    return stmt_run(st, S_IDEM_PUT, "ttttt", space, key, digest, knowledge_id, now);
}
