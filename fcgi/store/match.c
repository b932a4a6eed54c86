/* store/match.c: full-text search candidates: a store_match_query rendered
 * into an FTS5 expression over knowledge_fts or knowledge_head, or on
 * PostgreSQL into a tsquery over knowledge_terms (pg_terms.c). */
#include "store/store_int.h"

#include <stdint.h>

/* The terms joined by the query's operator: each quoted (inner quotes
 * doubled, so a term never becomes FTS5 syntax), with * for a prefix term. */
static void add_terms(struct buf *out, const struct store_match_query *q)
{
    const char *op = q->op == MATCH_OR ? "OR" : "AND";
    for (size_t i = 0; i < q->n_terms; i++) {
        if (i)
            buf_addf(out, " %s ", op);
        buf_addch(out, '"');
        for (const char *p = q->terms[i]; *p; p++) {
            if (*p == '"')
                buf_addch(out, '"');
            buf_addch(out, *p);
        }
        buf_adds(out, q->prefix ? "\"*" : "\"");
    }
}

/* The FTS5 expression of q: the terms anywhere (no fields), or in each of
 * the fields ("{title} : (...) AND {tags} : (...)"). */
static void match_expr(struct buf *out, const struct store_match_query *q)
{
    static const struct {
        unsigned field;
        const char *column;
    } columns[] = {{MATCH_TITLE, "title"}, {MATCH_TAGS, "tags"}, {MATCH_STEM, "stem"}};
    buf_reset(out);
    if (!q->fields) {
        add_terms(out, q);
        return;
    }
    for (size_t c = 0; c < sizeof columns / sizeof *columns; c++) {
        if (!(q->fields & columns[c].field))
            continue;
        if (out->len)
            buf_adds(out, " AND ");
        buf_addf(out, "{%s} : (", columns[c].column);
        add_terms(out, q);
        buf_addch(out, ')');
    }
}

int store_knowledge_match(struct store *st, const char *space, const struct store_match_query *q,
                          long long *last, int (*each)(const struct match_row *, void *), void *ctx)
{
    const struct knowledge_filter *f = q->f;
    long long below = q->below > 0 ? q->below : INT64_MAX; /* a bound FTS5 can seek to */
    struct buf match;
    struct cursor *s;
    int rc;
    /* inside a write transaction, the search rows follow its changes first */
    if (st->tx_depth && (rc = search_index_sync(st)))
        return rc;
    buf_init(&match, 1 << 16);
    if (st->pg)
        pg_match_query(&match, q);
    else
        match_expr(&match, q);
    s = stmt_bind(st, q->index == MATCH_HEAD ? S_MATCH_HEAD : S_MATCH, "ttitlL", match.data, space,
                  f ? (int)f->types : 0, f ? f->category : NULL, q->limit, below);
    if (!s) {
        buf_release(&match);
        return STORE_ERROR;
    }
    if (last)
        *last = 0;
    while ((rc = stmt_step(s)) == STEP_ROW) {
        struct match_row r = {0};
        r.seq = stmt_col_int64(s, 0);
        store_match_row_read(s, 1, &r);
        if (last)
            *last = r.seq;
        if (each(&r, ctx))
            break;
    }
    rc = stmt_rows_end(s, rc);
    buf_release(&match);
    return rc;
}
