/* store/match.c: full-text search candidates (FTS5). */
#include "store/store_int.h"

#include <stdint.h>

static const char *col_or_empty(sqlite3_stmt *s, int i)
{
    const char *v = (const char *)sqlite3_column_text(s, i);
    return v ? v : "";
}

int store_knowledge_match(struct store *st, enum match_index index, const char *space,
                          const char *match, const struct knowledge_filter *f, long limit,
                          long long below, long long *last,
                          int (*each)(const struct match_row *, void *), void *ctx)
{
    sqlite3_stmt *s = stmt_get(st, index == MATCH_HEAD ? S_MATCH_HEAD : S_MATCH);
    int rc;
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, match);
    bind_text(s, 2, space);
    sqlite3_bind_int(s, 3, f ? (int)f->types : 0);
    bind_text(s, 4, f ? f->category : NULL);
    sqlite3_bind_int64(s, 5, limit);
    sqlite3_bind_int64(s, 6, below > 0 ? below : INT64_MAX); /* a bound FTS5 can seek to */
    if (last)
        *last = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct match_row r;
        r.seq = sqlite3_column_int64(s, 0);
        r.id = col_or_empty(s, 1);
        r.category = col_or_empty(s, 2);
        r.path = col_or_empty(s, 3);
        r.title = col_or_empty(s, 4);
        r.tags = col_or_empty(s, 5);
        r.body = col_or_empty(s, 6);
        r.source = col_or_empty(s, 7);
        r.updated_at = col_or_empty(s, 8);
        r.always_apply = sqlite3_column_int(s, 9);
        r.scenario = col_or_empty(s, 10);
        if (last)
            *last = r.seq;
        if (each(&r, ctx))
            break;
    }
    rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? STORE_OK : status_of(rc);
    finish(s);
    return rc;
}
