/* store/knowledge.c: knowledge entries and their revisions, cases,
 * feedback, scores, deletion, merge and revert. */
#include "store/store_int.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bind ?4..?18 of S_K_INSERT and S_K_UPDATE: the fields a document sets. */
static void bind_document(struct cursor *s, const struct knowledge *k)
{
    stmt_bind_text(s, 4, k->category);
    stmt_bind_text(s, 5, k->path);
    stmt_bind_text(s, 6, k->title);
    stmt_bind_text(s, 7, k->description ? k->description : "");
    stmt_bind_text(s, 8, k->tags ? k->tags : "[]");
    stmt_bind_int(s, 9, (int)k->types);
    stmt_bind_text(s, 10, k->scenario ? k->scenario : "");
    stmt_bind_text(s, 11, k->content ? k->content : "");
    stmt_bind_int(s, 12, k->always_apply);
    stmt_bind_text(s, 13, k->source ? k->source : "manual");
    stmt_bind_text(s, 14, k->urls ? k->urls : "[]");
    stmt_bind_text(s, 15, k->agent_id ? k->agent_id : "");
    stmt_bind_text(s, 16, k->message_id ? k->message_id : "");
    stmt_bind_text(s, 17, k->meta ? k->meta : "{}");
    stmt_bind_text(s, 18, k->document ? k->document : "");
}

/* Record the current row of entry id as a revision. */
static int revision_add(struct store *st, const char *id, const char *actor, const char *reason,
                        const char *now)
{
    return stmt_run(st, S_REVISION_ADD, "tttt", id, actor, reason, now);
}

static int entry_in_space(struct store *st, const char *space, const char *id);

/* STORE_OK when id is an active entry of space, STORE_NOT_FOUND when not. */
static int entry_active(struct store *st, const char *space, const char *id)
{
    struct cursor *s = stmt_bind(st, S_K_ACTIVE, "tt", id, space);
    return s ? stmt_row_end(s, stmt_step(s)) : STORE_ERROR;
}

/* Begin a write transaction on the active entry id of space, with the
 * transaction's time in now; on any error nothing is left open. */
static int begin_on_entry(struct store *st, const char *space, const char *id, char now[static 20])
{
    int rc;
    if ((rc = store_begin(st)))
        return rc;
    if ((rc = entry_active(st, space, id)))
        return store_tx_end(st, rc);
    time_utc_text(now);
    return STORE_OK;
}

int store_knowledge_insert(struct store *st, const struct knowledge *k, const char *actor,
                           int *id_taken)
{
    char now[20];
    int rc;
    struct cursor *s = stmt_get(st, S_K_INSERT), *exists;
    *id_taken = 0;
    if (!s)
        return STORE_ERROR;
    if ((rc = store_begin(st)))
        return rc;
    if (!(exists = stmt_bind(st, S_K_ID_EXISTS, "t", k->id)))
        return store_tx_end(st, STORE_ERROR);
    rc = stmt_step(exists);
    stmt_finish(exists);
    if (rc == STEP_ROW) {
        *id_taken = 1;
        return store_tx_end(st, STORE_CONFLICT);
    }
    time_utc_text(now);
    stmt_bind_text(s, 1, k->id);
    stmt_bind_text(s, 2, k->space);
    stmt_bind_text(s, 3, now);
    bind_document(s, k);
    stmt_bind_text(s, 19, k->source_ts ? k->source_ts : "");
    stmt_bind_int(s, 20, k->score);
    rc = stmt_step_done(s);
    if (rc == STORE_OK)
        rc = store_place_clash(st, k->space, k->id);
    if (rc == STORE_OK)
        rc = store_terms_refresh(st, k->id);
    if (rc == STORE_OK)
        rc = revision_add(st, k->id, actor, "create", now);
    if (rc == STORE_OK)
        rc = store_audit_at(st, now, k->space, actor, "knowledge.create", k->id);
    return store_tx_end(st, rc);
}

int store_knowledge_get(struct store *st, const char *space, const char *id, int any_status,
                        struct knowledge *out)
{
    return store_knowledge_row(stmt_bind(st, S_K_GET, "tti", id, space, any_status != 0), out);
}

/* texts[0..n) as a PostgreSQL array literal: {"a","b"}, each quoted, a
 * quote or backslash inside escaped with a backslash. */
static void pg_text_array(struct buf *out, const char *const *texts, size_t n)
{
    buf_addch(out, '{');
    for (size_t i = 0; i < n; i++) {
        buf_adds(out, i ? ",\"" : "\"");
        for (const char *p = texts[i]; *p; p++) {
            if (*p == '"' || *p == '\\')
                buf_addch(out, '\\');
            buf_addch(out, *p);
        }
        buf_addch(out, '"');
    }
    buf_addch(out, '}');
}

int store_knowledge_get_many(struct store *st, const char *space, const char *const *ids, size_t n,
                             int (*each)(struct knowledge *, size_t, void *), void *ctx)
{
    const char *json = NULL;
    struct json_object *arr = NULL; /* SQLite's list: JSON */
    struct knowledge *got = xcalloc(n + 1, sizeof *got);
    struct buf list;
    struct cursor *s;
    int rc;
    buf_init(&list, (size_t)1 << 24);
    if (st->pg)
        pg_text_array(&list, ids, n);
    else
        arr = store_json_texts(ids, n, &json);
    s = stmt_bind(st, S_K_GET_MANY, "tt", space, st->pg ? list.data : json);
    rc = s ? STORE_OK : STORE_ERROR;
    for (size_t i = 0; i < n; i++)
        knowledge_init(&got[i]);
    /* the rows come in no order: each to its place among ids */
    while (s && (rc = stmt_step(s)) == STEP_ROW) {
        const char *id = stmt_col_text(s, 0);
        for (size_t i = 0; i < n; i++)
            if (!got[i].id && strcmp(ids[i], id) == 0) {
                store_knowledge_from_row(s, &got[i], 1);
                break;
            }
    }
    if (s)
        rc = stmt_rows_end(s, rc);
    for (size_t i = 0; rc == STORE_OK && i < n; i++)
        if (got[i].id && each(&got[i], i, ctx))
            break;
    for (size_t i = 0; i < n; i++)
        knowledge_release(&got[i]);
    free(got);
    buf_release(&list);
    json_object_put(arr);
    return rc;
}

int store_knowledge_list(struct store *st, const char *space, const struct knowledge_filter *f,
                         int (*each)(const struct knowledge *, void *), void *ctx, long *total)
{
    struct cursor *count;
    int rc, types = (int)f->types;
    /* One read transaction so the count and the page agree; inside the
     * caller's transaction (BEGIN would fail there), that one serves. */
    int own_tx = st->tx_depth == 0;
    if (own_tx && (rc = store_db_exec(st, "BEGIN")))
        return rc;
    count = stmt_bind(st, S_K_COUNT, "tit", space, types, f->category);
    if ((rc = count ? stmt_row_count(count, total) : STORE_ERROR)) {
        if (own_tx)
            store_db_exec(st, "ROLLBACK");
        return rc;
    }
    rc = store_knowledge_rows(
        stmt_bind(st, S_K_LIST, "titll", space, types, f->category, f->limit, f->offset), 0, each,
        ctx);
    if (own_tx)
        store_db_exec(st, "COMMIT");
    return rc;
}

int store_knowledge_add_case(struct store *st, const char *space, const char *id,
                             const struct knowledge_case *c, const char *actor, int *added)
{
    char now[20];
    int rc, helpful = strcmp(c->kind, "helpful") == 0;
    *added = 0;
    if ((rc = begin_on_entry(st, space, id, now)))
        return rc;
    rc = stmt_run(st, S_CASE_INSERT, "tttttttttt", space, id, helpful ? "helpful" : "harmful",
                  c->case_id, c->scenario ? c->scenario : "", c->result ? c->result : "",
                  c->agent_id ? c->agent_id : "", c->trace_id ? c->trace_id : "",
                  c->goal_id ? c->goal_id : "", now);
    if (rc)
        return store_tx_end(st, rc);
    if (stmt_rows_changed(st) == 1) {
        rc = stmt_run(st, helpful ? S_CASE_BUMP_HELPFUL : S_CASE_BUMP_HARMFUL, "t", id);
        if (rc == STORE_OK)
            rc = store_audit_at(st, now, space, actor,
                                helpful ? "knowledge.helpful" : "knowledge.harmful", id);
        if (rc == STORE_OK)
            *added = 1;
    }
    return store_tx_end(st, rc);
}

void store_case_from_row(struct cursor *s, struct knowledge_case *c)
{
    c->kind = stmt_col_text(s, 0);
    c->case_id = stmt_col_text(s, 1);
    c->scenario = stmt_col_text(s, 2);
    c->result = stmt_col_text(s, 3);
    c->agent_id = stmt_col_text(s, 4);
    c->trace_id = stmt_col_text(s, 5);
    c->goal_id = stmt_col_text(s, 6);
    c->created_at = stmt_col_text(s, 7);
}

/* Pass every row of a cases statement to each, then reset it. */
static int case_rows(struct cursor *s, int (*each)(const struct knowledge_case *, void *),
                     void *ctx)
{
    int rc;
    if (!s)
        return STORE_ERROR;
    while ((rc = stmt_step(s)) == STEP_ROW) {
        struct knowledge_case c;
        store_case_from_row(s, &c);
        if (each(&c, ctx))
            break;
    }
    return stmt_rows_end(s, rc);
}

int store_knowledge_cases_each(struct store *st, const char *id, const char *kind, long limit,
                               int (*each)(const struct knowledge_case *, void *), void *ctx)
{
    return case_rows(stmt_bind(st, S_CASES, "ttl", id, kind, limit), each, ctx);
}

int store_knowledge_cases_page(struct store *st, const char *space, const char *id,
                               const char *kind, long limit, long offset,
                               int (*each)(const struct knowledge_case *, void *), void *ctx,
                               long *total)
{
    struct cursor *count;
    int rc;
    if ((rc = entry_in_space(st, space, id)))
        return rc;
    if (!(count = stmt_bind(st, S_CASES_COUNT, "tt", id, kind)))
        return STORE_ERROR;
    if ((rc = stmt_row_count(count, total)))
        return rc;
    return case_rows(stmt_bind(st, S_CASES_PAGE, "ttll", id, kind, limit, offset), each, ctx);
}

int store_knowledge_set_score(struct store *st, const char *space, const char *id, int score,
                              const char *actor)
{
    char now[20];
    int rc;
    if ((rc = begin_on_entry(st, space, id, now)))
        return rc;
    rc = stmt_run(st, S_K_SET_SCORE, "ttit", id, space, score, now);
    if (rc == STORE_OK && stmt_rows_changed(st) == 1) {
        rc = revision_add(st, id, actor, "score", now);
        if (rc == STORE_OK)
            rc = store_audit_at(st, now, space, actor, "knowledge.score", id);
    }
    return store_tx_end(st, rc);
}

int store_knowledge_add_feedback(struct store *st, const char *space, const char *id,
                                 const char *text, const char *actor, long *feedback_id)
{
    char now[20];
    int rc;
    if ((rc = begin_on_entry(st, space, id, now)))
        return rc;
    rc = stmt_returning(st, S_FEEDBACK_INSERT, feedback_id, "ttttt", space, id, text, actor, now);
    if (rc == STORE_OK)
        rc = store_audit_at(st, now, space, actor, "knowledge.feedback", id);
    return store_tx_end(st, rc);
}

int store_knowledge_delete(struct store *st, const char *space, const char *id, const char *actor)
{
    char now[20];
    int rc;
    if ((rc = store_begin(st)))
        return rc;
    time_utc_text(now);
    rc = stmt_run(st, S_K_DELETE, "ttt", id, space, now);
    if (rc == STORE_OK && stmt_rows_changed(st) == 0)
        rc = STORE_NOT_FOUND;
    if (rc == STORE_OK)
        rc = revision_add(st, id, actor, "delete", now);
    if (rc == STORE_OK)
        rc = store_audit_at(st, now, space, actor, "knowledge.delete", id);
    return store_tx_end(st, rc);
}

/* STORE_OK when id belongs to space in any status. */
static int entry_in_space(struct store *st, const char *space, const char *id)
{
    struct cursor *s = stmt_bind(st, S_K_SPACE_OF, "tt", id, space);
    return s ? stmt_row_end(s, stmt_step(s)) : STORE_ERROR;
}

int store_knowledge_revisions_each(struct store *st, const char *space, const char *id,
                                   int (*each)(const struct knowledge_revision *, void *),
                                   void *ctx)
{
    struct cursor *s;
    int rc;
    if ((rc = entry_in_space(st, space, id)))
        return rc;
    if (!(s = stmt_bind(st, S_REVISIONS, "tt", id, space)))
        return STORE_ERROR;
    while ((rc = stmt_step(s)) == STEP_ROW) {
        struct knowledge_revision r = {
            .version = (long)stmt_col_int64(s, 0),
            .document = stmt_col_text(s, 1),
            .actor = stmt_col_text(s, 2),
            .reason = stmt_col_text(s, 3),
            .created_at = stmt_col_text(s, 4),
        };
        if (each(&r, ctx))
            break;
    }
    return stmt_rows_end(s, rc);
}

int store_knowledge_revert(struct store *st, const char *space, const char *id, long version,
                           const char *actor)
{
    char now[20];
    char *doc = NULL;
    int rc;
    struct cursor *get;
    if ((rc = store_begin(st)))
        return rc;
    if (!(get = stmt_bind(st, S_REVISION_DOC, "ttl", id, space, version)))
        return store_tx_end(st, STORE_ERROR);
    rc = stmt_step(get);
    if (rc == STEP_ROW)
        doc = stmt_col_dup(get, 0);
    stmt_finish(get);
    if (!doc)
        return store_tx_end(st, rc == STEP_DONE ? STORE_NOT_FOUND : step_status(rc));
    time_utc_text(now);
    rc = stmt_run(st, S_K_RESTORE, "tttt", id, space, doc,
                  now); /* the partial unique index answers CONFLICT for a taken path */
    free(doc);
    if (rc == STORE_OK)
        rc = store_place_clash(st, space, id);
    if (rc == STORE_OK)
        rc = store_terms_refresh(st, id);
    if (rc == STORE_OK) /* back in force: nothing supersedes it any more */
        rc = stmt_run(st, S_LINKS_DROP_SUPERSEDES, "tt", space, id);
    if (rc == STORE_OK)
        rc = revision_add(st, id, actor, "revert", now);
    if (rc == STORE_OK)
        rc = store_audit_at(st, now, space, actor, "knowledge.revert", id);
    return store_tx_end(st, rc);
}

int store_knowledge_update(struct store *st, const char *space, const char *id,
                           const struct knowledge *k, long expected_version, const char *actor,
                           const char *reason)
{
    char now[20], action[64];
    int rc;
    struct cursor *s = stmt_get(st, S_K_UPDATE);
    if (!s)
        return STORE_ERROR;
    if ((rc = begin_on_entry(st, space, id, now)))
        return rc;
    stmt_bind_text(s, 1, id);
    stmt_bind_text(s, 2, space);
    stmt_bind_int64(s, 3, expected_version);
    bind_document(s, k);
    stmt_bind_text(s, 19, now);
    rc = stmt_step_done(s);
    if (rc == STORE_OK && stmt_rows_changed(st) == 0)
        rc = STORE_CONFLICT; /* it exists (checked above), so the version moved on */
    if (rc == STORE_OK)
        rc = store_place_clash_at(st, space, id, k->category, k->path);
    if (rc == STORE_OK)
        rc = store_terms_refresh(st, id);
    if (rc == STORE_OK)
        rc = revision_add(st, id, actor, reason, now);
    snprintf(action, sizeof action, "knowledge.%s", reason);
    if (rc == STORE_OK)
        rc = store_audit_at(st, now, space, actor, action, id);
    return store_tx_end(st, rc);
}

int store_knowledge_revision_time(struct store *st, const char *space, const char *id, long version,
                                  char out[static 20])
{
    struct cursor *s = stmt_bind(st, S_REVISION_TIME, "ttl", id, space, version);
    int rc;
    out[0] = '\0';
    if (!s)
        return STORE_ERROR;
    if ((rc = stmt_step(s)) == STEP_ROW)
        snprintf(out, 20, "%s", stmt_col_text(s, 0));
    return stmt_row_end(s, rc);
}

int store_knowledge_feedback_mark(struct store *st, long feedback_id, const char *status)
{
    return stmt_run(st, S_FEEDBACK_MARK, "lt", feedback_id, status);
}

/* Retire member (active) into survivor (active) in one transaction: a
 * merge sums the counters and copies the cases first; both leave member a
 * tombstone (status merged, merged_into) with a revision and an audit row
 * named reason. */
static int retire_into(struct store *st, const char *space, const char *survivor,
                       const char *member, long member_version, const char *actor,
                       const char *reason)
{
    char now[20], action[32];
    int merge = strcmp(reason, "merge") == 0, rc;
    if ((rc = store_begin(st)))
        return rc;
    if ((rc = entry_active(st, space, survivor)) || (rc = entry_active(st, space, member)))
        return store_tx_end(st, rc);
    time_utc_text(now);
    if ((merge && ((rc = stmt_run(st, S_MERGE_COUNTERS, "tt", survivor, member)) ||
                   (rc = stmt_run(st, S_MERGE_CASES, "tt", survivor, member)))) ||
        (rc = stmt_run(st, S_MERGE_TOMBSTONE, "ttttl", survivor, member, now, space,
                       member_version)))
        return store_tx_end(st, rc);
    if (stmt_rows_changed(st) == 0) /* active (checked above): it changed since it was read */
        return store_tx_end(st, STORE_CONFLICT);
    rc = revision_add(st, member, actor, reason, now);
    snprintf(action, sizeof action, "knowledge.%s", reason);
    if (rc == STORE_OK)
        rc = store_audit_at(st, now, space, actor, action, member);
    return store_tx_end(st, rc);
}

int store_knowledge_merge(struct store *st, const char *space, const char *survivor,
                          const char *member, long member_version, const char *actor)
{
    return retire_into(st, space, survivor, member, member_version, actor, "merge");
}

int store_knowledge_supersede(struct store *st, const char *space, const char *by, const char *old,
                              const char *actor)
{
    return retire_into(st, space, by, old, 0, actor, "supersede");
}

int store_knowledge_move(struct store *st, const char *space, const char *id, long expected_version,
                         const struct knowledge *k, const char *actor)
{
    char now[20];
    int rc;
    if (expected_version <= 0)
        return STORE_ERROR;
    if ((rc = begin_on_entry(st, space, id, now)))
        return rc;
    /* the partial unique index answers CONFLICT for a taken path */
    rc = stmt_run(st, S_K_MOVE, "ttlttttit", id, space, expected_version, k->category, k->path,
                  k->title, k->scenario ? k->scenario : "", k->always_apply, now);
    if (rc == STORE_OK && stmt_rows_changed(st) == 0)
        rc = STORE_CONFLICT; /* it is active (checked above), so the version moved on */
    if (rc == STORE_OK)
        rc = store_place_clash_at(st, space, id, k->category, k->path);
    if (rc == STORE_OK)
        rc = store_terms_refresh(st, id);
    if (rc == STORE_OK)
        rc = revision_add(st, id, actor, "rename", now);
    if (rc == STORE_OK)
        rc = store_audit_at(st, now, space, actor, "knowledge.rename", id);
    return store_tx_end(st, rc);
}
