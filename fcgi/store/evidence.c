/* store/evidence.c: a space's evidence ageing policy (migration 21) and the
 * times of the verdicts the entry search ages (service/evidence.c). */
#include "store/store_int.h"
#include "base/util.h"

int store_evidence_policy_get(struct store *st, const char *space, long *half_life_days)
{
    struct cursor *s;
    int rc;
    *half_life_days = 0;
    if (!(s = stmt_bind(st, S_EVIDENCE_POLICY_GET, "t", space)))
        return STORE_ERROR;
    if ((rc = stmt_step(s)) == STEP_ROW)
        *half_life_days = (long)stmt_col_int64(s, 0);
    rc = stmt_row_end(s, rc);
    return rc == STORE_NOT_FOUND ? STORE_OK : rc;
}

int store_evidence_policy_set(struct store *st, const char *space, long half_life_days,
                              const char *actor)
{
    char now[27];
    time_utc_iso_micro(now);
    return stmt_run(st, S_EVIDENCE_POLICY_SET, "tttl", space, actor, now, half_life_days);
}

int store_evidence_verdicts(struct store *st, const char *space, const char *ids_json,
                            void (*each)(const char *id, const char *kind, const char *hour, long n,
                                         void *ctx),
                            void *ctx)
{
    struct cursor *s;
    int rc;
    if (!(s = stmt_bind(st, S_EVIDENCE_VERDICTS, "tt", space, ids_json)))
        return STORE_ERROR;
    while ((rc = stmt_step(s)) == STEP_ROW)
        each(stmt_col_text(s, 0), stmt_col_text(s, 1), stmt_col_text(s, 2),
             (long)stmt_col_int64(s, 3), ctx);
    return stmt_rows_end(s, rc);
}
