/* store/whole.c: an entry with its cases, log and time, read by one
 * statement (S_K_WHOLE): one round trip and one snapshot on PostgreSQL, the
 * rows decoded by each part's own decoder. */
#include "store/store_int.h"

/* One row of S_K_WHOLE to its part's decoder (sql_parts.h); found: the
 * entry's row came (it comes first: without it the rest is not shown). */
static void whole_part(struct cursor *s, struct knowledge *out, struct knowledge_parts *p,
                       int *found, int *cases_done)
{
    int part = stmt_col_int(s, 0);
    struct knowledge_case c;
    struct log_entry e;
    if (part == 1) {
        s->col_base = KNOWLEDGE_PART_ENTRY;
        store_knowledge_from_row(s, out, 1);
        *found = 1;
    } else if (*found && (part == 2 || part == 3) && p->each_case && !cases_done[part - 2]) {
        s->col_base = KNOWLEDGE_PART_CASE;
        store_case_from_row(s, &c);
        cases_done[part - 2] = p->each_case(&c, part == 2 ? p->helpful : p->harmful);
    } else if (*found && part == 4 && p->each_log) {
        s->col_base = KNOWLEDGE_PART_LOG;
        store_log_from_row(s, &e);
        p->each_log(&e, p->log);
    } else if (*found && part == 5) {
        s->col_base = KNOWLEDGE_PART_TIME;
        store_time_from_row(s, &p->time);
    }
    s->col_base = 0;
}

int store_knowledge_read(struct store *st, const char *space, const char *id, int any_status,
                         struct knowledge *out, struct knowledge_parts *parts)
{
    struct cursor *s = stmt_bind(st, S_K_WHOLE, "ttill", id, space, any_status != 0,
                                 parts->cases_limit, parts->log_limit);
    int rc, found = 0, cases_done[2] = {0, 0};
    knowledge_init(out);
    parts->time.expires_at = parts->time.review_after = NULL;
    parts->time.pinned = 0;
    if (!s)
        return STORE_ERROR;
    while ((rc = stmt_step(s)) == STEP_ROW)
        whole_part(s, out, parts, &found, cases_done);
    rc = stmt_rows_end(s, rc);
    if (rc == STORE_OK && !found)
        rc = STORE_NOT_FOUND;
    return rc;
}
