/* store/review.c: the review queue (migration 16): a space's review policy
 * and the proposals of writes held for review (service/review.c). */
#include "store/store_int.h"

#include <stdlib.h>
#include <string.h>

void store_proposal_release(struct proposal *p)
{
    char **texts[] = {
        &p->id,           &p->space,      &p->kind,     &p->state,           &p->write_path,
        &p->knowledge_id, &p->category,   &p->path,     &p->document,        &p->base_document,
        &p->token_id,     &p->actor,      &p->agent_id, &p->trace_id,        &p->source,
        &p->reasons,      &p->created_at, &p->decision, &p->decision_reason, &p->decided_by,
        &p->decided_at,   &p->result_id};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        free(*texts[i]);
        *texts[i] = NULL;
    }
    p->base_version = 0;
}

int store_review_policy_get(struct store *st, const char *space, const char *token_id,
                            char **policy)
{
    struct cursor *s;
    int rc;
    *policy = NULL;
    if (!(s = stmt_bind(st, S_REVIEW_POLICY_GET, "tt", space, token_id)))
        return STORE_ERROR;
    if ((rc = stmt_step(s)) == STEP_ROW)
        *policy = stmt_col_dup(s, 0);
    rc = stmt_row_end(s, rc);
    if (rc == STORE_NOT_FOUND) {
        *policy = xstrdup("off");
        rc = STORE_OK;
    }
    return rc;
}

int store_review_policy_set(struct store *st, const char *space, const char *policy,
                            const char *actor)
{
    char now[27];
    time_utc_iso_micro(now);
    return stmt_run(st, S_REVIEW_POLICY_SET, "tttt", space, policy, actor, now);
}

int store_token_review_set(struct store *st, const char *token_id, const char *policy)
{
    return stmt_run(st, S_TOKEN_REVIEW_SET, "tt", token_id, policy);
}

int store_proposal_insert(struct store *st, const struct proposal *p)
{
    return stmt_run(st, S_PROPOSAL_INSERT, "ttttttlttttttttttt", p->id, p->space, p->kind, p->state,
                    p->write_path, p->knowledge_id, p->base_version, p->category, p->path,
                    p->document, p->base_document, p->token_id, p->actor, p->agent_id, p->trace_id,
                    p->source, p->reasons, p->created_at);
}

/* The row of s (PROPOSAL_COLUMNS) into p: borrowed when copy is 0, else owned. */
static void proposal_of_row(struct cursor *s, struct proposal *p, int copy)
{
    char **texts[] = {&p->id,         &p->space,           &p->kind,
                      &p->state,      &p->write_path,      &p->knowledge_id,
                      NULL,           &p->category,        &p->path,
                      &p->document,   &p->base_document,   &p->token_id,
                      &p->actor,      &p->agent_id,        &p->trace_id,
                      &p->source,     &p->reasons,         &p->created_at,
                      &p->decision,   &p->decision_reason, &p->decided_by,
                      &p->decided_at, &p->result_id};
    for (int i = 0; i < (int)(sizeof texts / sizeof texts[0]); i++) {
        if (!texts[i])
            continue;
        const char *v = stmt_col_opt(s, i);
        *texts[i] = copy ? (v ? xstrdup(v) : NULL) : (char *)v;
    }
    p->base_version = (long)stmt_col_int64(s, 6);
}

int store_proposal_get(struct store *st, const char *space, const char *id, struct proposal *p)
{
    struct cursor *s;
    int rc;
    memset(p, 0, sizeof *p);
    if (!(s = stmt_bind(st, S_PROPOSAL_GET, "tt", id, space)))
        return STORE_ERROR;
    if ((rc = stmt_step(s)) == STEP_ROW)
        proposal_of_row(s, p, 1);
    return stmt_row_end(s, rc);
}

int store_proposal_list(struct store *st, const char *space, const char *state, long limit,
                        long offset, void (*each)(const struct proposal *, void *), void *ctx,
                        long *total)
{
    struct cursor *s;
    int rc;
    *total = 0;
    if (!(s = stmt_bind(st, S_PROPOSAL_COUNT, "tt", space, state)))
        return STORE_ERROR;
    if ((rc = stmt_step(s)) == STEP_ROW)
        *total = (long)stmt_col_int64(s, 0);
    if ((rc = stmt_row_end(s, rc)))
        return rc;
    if (!(s = stmt_bind(st, S_PROPOSAL_LIST, "ttll", space, state, limit, offset)))
        return STORE_ERROR;
    while ((rc = stmt_step(s)) == STEP_ROW) {
        struct proposal p;
        memset(&p, 0, sizeof p);
        proposal_of_row(s, &p, 0);
        each(&p, ctx);
    }
    return stmt_rows_end(s, rc);
}

int store_proposal_decide(struct store *st, const char *space, const char *id, const char *from,
                          const char *state, const char *decision, const char *reason,
                          const char *actor, const char *result_id)
{
    struct proposal p;
    char now[27];
    int rc;
    time_utc_iso_micro(now);
    if ((rc = stmt_run(st, S_PROPOSAL_DECIDE, "ttttttttt", id, space, state, decision, reason,
                       actor, now, result_id, from)))
        return rc;
    if (stmt_rows_changed(st) == 1)
        return STORE_OK;
    /* none changed: gone, or decided by someone else first */
    rc = store_proposal_get(st, space, id, &p);
    store_proposal_release(&p);
    return rc == STORE_OK ? STORE_CONFLICT : rc;
}

/* The two counts of statement s (bound), as pending and quarantined. */
static int two_counts(struct cursor *s, long *pending, long *quarantined)
{
    long long p, q;
    int rc = stmt_two_int64(s, &p, &q);
    *pending = (long)p;
    *quarantined = (long)q;
    return rc;
}

int store_proposal_counts(struct store *st, const char *space, long *pending, long *quarantined)
{
    return two_counts(stmt_bind(st, S_PROPOSAL_COUNTS, "t", space), pending, quarantined);
}

int store_proposal_totals(struct store *st, long *pending, long *quarantined)
{
    return two_counts(stmt_get(st, S_PROPOSAL_TOTALS), pending, quarantined);
}

/* ---- held slim merges (migration 19) ---- */

int store_proposal_member_add(struct store *st, const char *space, const char *id,
                              const char *knowledge_id, long base_version)
{
    return stmt_run(st, S_PROPOSAL_MEMBER_ADD, "tttl", space, id, knowledge_id, base_version);
}

int store_proposal_members(struct store *st, const char *space, const char *id,
                           void (*each)(const struct proposal_member *, void *), void *ctx)
{
    struct cursor *s;
    int rc;
    if (!(s = stmt_bind(st, S_PROPOSAL_MEMBERS, "tt", space, id)))
        return STORE_ERROR;
    while ((rc = stmt_step(s)) == STEP_ROW) {
        struct proposal_member m = {stmt_col_text(s, 0), (long)stmt_col_int64(s, 1),
                                    stmt_col_opt(s, 2),  stmt_col_opt(s, 3),
                                    stmt_col_opt(s, 4),  (long)stmt_col_int64(s, 5)};
        each(&m, ctx);
    }
    return stmt_rows_end(s, rc);
}

int store_proposal_member_held(struct store *st, const char *space, const char *knowledge_id,
                               char **id)
{
    struct cursor *s;
    int rc;
    *id = NULL;
    if (!(s = stmt_bind(st, S_PROPOSAL_MEMBER_HELD, "tt", space, knowledge_id)))
        return STORE_ERROR;
    if ((rc = stmt_step(s)) == STEP_ROW)
        *id = stmt_col_dup(s, 0);
    return stmt_row_end(s, rc);
}

int store_conflict_item_find(struct store *st, const char *space, const char *a, const char *b,
                             char **id, char **state)
{
    struct cursor *s;
    int rc;
    *id = *state = NULL;
    if (!(s = stmt_bind(st, S_CONFLICT_ITEM_FIND, "ttt", space, a, b)))
        return STORE_ERROR;
    if ((rc = stmt_step(s)) == STEP_ROW) {
        *id = stmt_col_dup(s, 0);
        *state = stmt_col_dup(s, 1);
    }
    return stmt_row_end(s, rc);
}

/* ---- promotion on evidence (migration 18; service/promote.c) ---- */

int store_review_promote_get(struct store *st, const char *space, long *after)
{
    struct cursor *s;
    int rc;
    *after = REVIEW_PROMOTE_DEFAULT;
    if (!(s = stmt_bind(st, S_REVIEW_PROMOTE_GET, "t", space)))
        return STORE_ERROR;
    if ((rc = stmt_step(s)) == STEP_ROW)
        *after = (long)stmt_col_int64(s, 0);
    rc = stmt_row_end(s, rc);
    return rc == STORE_NOT_FOUND ? STORE_OK : rc;
}

int store_review_promote_set(struct store *st, const char *space, long after, const char *actor)
{
    char now[27];
    time_utc_iso_micro(now);
    return stmt_run(st, S_REVIEW_PROMOTE_SET, "tttl", space, actor, now, after);
}

int store_proposal_pending_docs(struct store *st, const char *space, long limit,
                                void (*each)(const struct proposal *, void *), void *ctx)
{
    struct cursor *s;
    int rc;
    if (!(s = stmt_bind(st, S_PROPOSAL_PENDING_DOCS, "tl", space, limit)))
        return STORE_ERROR;
    while ((rc = stmt_step(s)) == STEP_ROW) {
        struct proposal p;
        memset(&p, 0, sizeof p);
        p.id = (char *)stmt_col_text(s, 0);
        p.kind = (char *)stmt_col_text(s, 1);
        p.knowledge_id = (char *)stmt_col_opt(s, 2);
        p.category = (char *)stmt_col_text(s, 3);
        p.path = (char *)stmt_col_text(s, 4);
        p.document = (char *)stmt_col_text(s, 5);
        p.state = (char *)"pending";
        each(&p, ctx);
    }
    return stmt_rows_end(s, rc);
}

int store_proposal_verdicts(struct store *st, const char *space, const char *id, long limit,
                            void (*each)(const char *trace_id, const char *status,
                                         const char *reason, void *ctx),
                            void *ctx)
{
    struct cursor *s;
    int rc;
    if (!(s = stmt_bind(st, S_PROPOSAL_VERDICTS, "ttl", space, id, limit)))
        return STORE_ERROR;
    while ((rc = stmt_step(s)) == STEP_ROW)
        each(stmt_col_text(s, 0), stmt_col_text(s, 1), stmt_col_text(s, 2), ctx);
    return stmt_rows_end(s, rc);
}
