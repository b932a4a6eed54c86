/* store/search_index.c: the BM25F statistics on both backends
 * (docs/search.md "Relevance"): each active entry's search row
 * (search_docs: what a candidate is scored and ordered by, its terms record
 * included, narrow so a search never reads the wide knowledge rows), and
 * per space the entries, the total length of each field
 * (search_spaces) and each term's document frequency (search_terms).
 * Triggers on knowledge mark the entries whose text or status changed
 * (search_dirty); before the outermost COMMIT of a write, the records of
 * the marked entries are made again in C (domain/bm25.h) and only the
 * differences reach the statistics, in one statement per space. Both
 * backends keep them alike, so both score alike. */
#include "store/store_int.h"
#include "domain/bm25.h"
#include "domain/tokenize.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a batch of marked entries changes in one space. */
struct space_delta {
    char *space;
    struct json_object *df;   /* term -> change of its document frequency */
    struct json_object *seqs; /* the entries synced, for the search log */
    long long docs, len[BM25_FIELDS];
};

struct deltas {
    struct space_delta *d;
    size_t n;
    struct buf key; /* a term, NUL-terminated */
};

static struct space_delta *delta_of(struct deltas *ds, const char *space)
{
    for (size_t i = 0; i < ds->n; i++)
        if (strcmp(ds->d[i].space, space) == 0)
            return &ds->d[i];
    ds->d = xrealloc(ds->d, (ds->n + 1) * sizeof *ds->d);
    memset(&ds->d[ds->n], 0, sizeof *ds->d);
    ds->d[ds->n].space = xstrdup(space);
    ds->d[ds->n].df = json_object_new_object();
    ds->d[ds->n].seqs = json_object_new_array();
    return &ds->d[ds->n++];
}

struct term_walk {
    struct deltas *ds;
    struct space_delta *d;
    int sign;
};

static int count_term(const char *term, size_t n, void *ctx)
{
    struct term_walk *w = ctx;
    struct json_object *v;
    int64_t now = 0;
    buf_reset(&w->ds->key);
    buf_add(&w->ds->key, term, n);
    if (json_object_object_get_ex(w->d->df, w->ds->key.data, &v))
        now = json_object_get_int64(v);
    json_object_object_add(w->d->df, w->ds->key.data, json_object_new_int64(now + w->sign));
    return 0;
}

/* Count record rec of space in (sign 1) or out (sign -1). */
static void count_record(struct deltas *ds, const char *space, const char *rec, int sign)
{
    long lens[BM25_FIELDS];
    struct term_walk w = {ds, delta_of(ds, space), sign};
    if (bm25_record_lengths(rec, lens))
        return; /* not a record: it never counted */
    w.d->docs += sign;
    for (int f = 0; f < BM25_FIELDS; f++)
        w.d->len[f] += sign * lens[f];
    bm25_record_terms(rec, count_term, &w);
}

/* Bring entry seq's record up to date; its changes go to ds. pg_terms:
 * make its PostgreSQL search terms again too (a rebuild). */
static int sync_one(struct store *st, long long seq, struct deltas *ds, struct buf *rec,
                    int pg_terms)
{
    struct cursor *s;
    char *old_space = NULL, *old_terms = NULL, *space = NULL, *id = NULL;
    int rc, active = 0;
    if (!(s = stmt_bind(st, S_SX_DOC_GET, "L", seq)))
        return STORE_ERROR;
    if ((rc = stmt_step(s)) == STEP_ROW) {
        old_space = stmt_col_dup(s, 0);
        old_terms = stmt_col_dup(s, 1);
    }
    if ((rc = stmt_row_end(s, rc)) && rc != STORE_NOT_FOUND)
        goto out;
    if (!(s = stmt_bind(st, S_SX_SOURCE, "L", seq))) {
        rc = STORE_ERROR;
        goto out;
    }
    if ((rc = stmt_step(s)) == STEP_ROW && strcmp(stmt_col_text(s, 2), "active") == 0) {
        const char *text[BM25_FIELDS];
        size_t len[BM25_FIELDS];
        active = 1;
        id = stmt_col_dup(s, 0);
        space = stmt_col_dup(s, 1);
        text[BM25_TITLE] = stmt_col_text(s, 3);
        text[BM25_TAGS] = stmt_col_text(s, 4);
        store_path_stem_of(stmt_col_text(s, 5), &text[BM25_STEM], &len[BM25_STEM]);
        text[BM25_SCENARIO] = stmt_col_text(s, 6);
        text[BM25_BODY] = stmt_col_text(s, 7);
        len[BM25_TITLE] = strlen(text[BM25_TITLE]);
        len[BM25_TAGS] = strlen(text[BM25_TAGS]);
        len[BM25_SCENARIO] = strlen(text[BM25_SCENARIO]);
        len[BM25_BODY] = strlen(text[BM25_BODY]);
        bm25_record(text, len, rec);
    }
    if ((rc = stmt_row_end(s, rc)) && rc != STORE_NOT_FOUND)
        goto out;
    rc = STORE_OK;
    if (pg_terms && active && (rc = store_terms_refresh(st, id)))
        goto out;
    /* the search log names the entry in each space it left or is in */
    if (old_space)
        json_object_array_add(delta_of(ds, old_space)->seqs, json_object_new_int64(seq));
    if (active && !(old_space && strcmp(old_space, space) == 0))
        json_object_array_add(delta_of(ds, space)->seqs, json_object_new_int64(seq));
    /* the statistics count only what changed in the record */
    if (!(old_terms && active && strcmp(old_space, space) == 0 &&
          strcmp(old_terms, rec->data) == 0)) {
        if (old_terms)
            count_record(ds, old_space, old_terms, -1);
        if (active)
            count_record(ds, space, rec->data, 1);
    }
    if (active)
        rc = stmt_run(st, S_SX_DOC_PUT, "Lt", seq, rec->data);
    else if (old_terms)
        rc = stmt_run(st, S_SX_DOC_DELETE, "L", seq);
    if (rc == STORE_OK)
        rc = stmt_run(st, S_SX_UNDIRTY, "L", seq);
out:
    free(old_space);
    free(old_terms);
    free(space);
    free(id);
    return rc;
}

/* STORE_QUOTA when a write that added entries to a space left it with
 * more than the limit (docs: its entries now, the statistics' count). */
static int quota_check(long long added, long long docs)
{
    long max = store_space_entries();
    return added > 0 && max > 0 && docs > max ? STORE_QUOTA : STORE_OK;
}

/* How many stamps of a space's search log are kept, and how often the
 * older rows go (a reader further behind loads the space anew). */
#define LOG_KEEP 4096
#define LOG_PRUNE_EVERY 256

/* The space's totals moved by d, its stamp raised and the entries synced
 * logged at it; *docs: its entries now. */
static int space_add(struct store *st, const struct space_delta *d, long *docs)
{
    long stamp = 0;
    int rc = stmt_returning(st, S_SX_SPACE_ADD, docs, "tLLLLLL", d->space, d->docs, d->len[0],
                            d->len[1], d->len[2], d->len[3], d->len[4]);
    if (rc == STORE_OK)
        rc = stmt_returning(st, S_SX_STAMP_NEXT, &stamp, "t", d->space);
    if (rc == STORE_OK && json_object_array_length(d->seqs) > 0)
        rc = stmt_run(st, S_SX_LOG_ADD, "tLt", d->space, (long long)stamp,
                      json_object_to_json_string_ext(d->seqs, JSON_C_TO_STRING_PLAIN));
    if (rc == STORE_OK && stamp > LOG_KEEP && stamp % LOG_PRUNE_EVERY == 0) {
        rc = stmt_run(st, S_SX_LOG_FLOOR, "tL", d->space, (long long)(stamp - LOG_KEEP));
        if (rc == STORE_OK)
            rc = stmt_run(st, S_SX_LOG_PRUNE, "tL", d->space, (long long)(stamp - LOG_KEEP));
    }
    return rc;
}

/* Write a batch's changes: the document frequencies (terms whose count went
 * to 0 removed), the space's totals and its search log; quota: refuse a
 * space grown past its entries (a write's, not a rebuild's). */
static int flush(struct store *st, struct deltas *ds, int quota)
{
    int rc = STORE_OK;
    for (size_t i = 0; i < ds->n; i++) {
        struct space_delta *d = &ds->d[i];
        struct json_object *changed = json_object_new_object();
        const char *json;
        long docs = 0;
        json_object_object_foreach(d->df, term, v)
        {
            if (json_object_get_int64(v) != 0)
                json_object_object_add(changed, term, json_object_get(v));
        }
        json = json_object_to_json_string_ext(changed, JSON_C_TO_STRING_PLAIN |
                                                           JSON_C_TO_STRING_NOSLASHESCAPE);
        if (rc == STORE_OK && json_object_object_length(changed) > 0)
            rc = stmt_run(st, S_SX_DF_ADD, "tt", d->space, json);
        if (rc == STORE_OK && json_object_object_length(changed) > 0)
            rc = stmt_run(st, S_SX_DF_PRUNE, "tt", d->space, json);
        if (rc == STORE_OK)
            rc = space_add(st, d, &docs);
        if (rc == STORE_OK && quota)
            rc = quota_check(d->docs, docs);
        json_object_put(changed);
        json_object_put(d->df);
        json_object_put(d->seqs);
        free(d->space);
    }
    free(ds->d);
    ds->d = NULL;
    ds->n = 0;
    return rc;
}

/* Entries marked, a batch at a time; pg_terms: make PostgreSQL's terms
 * again too (a rebuild); total > 0: say how far it got of total. */
static int sync_marked(struct store *st, long long total, int pg_terms)
{
    struct deltas ds = {0};
    struct buf rec;
    long long done = 0, next_report = 20000;
    int rc = STORE_OK;
    buf_init(&ds.key, 4096);
    buf_init(&rec, (size_t)1 << 26);
    for (;;) {
        long long seqs[256];
        size_t n = 0;
        struct cursor *s = stmt_get(st, S_SX_DIRTY);
        if (!s) {
            rc = STORE_ERROR;
            break;
        }
        while ((rc = stmt_step(s)) == STEP_ROW && n < sizeof seqs / sizeof *seqs)
            seqs[n++] = stmt_col_int64(s, 0);
        if ((rc = stmt_rows_end(s, rc)) || n == 0)
            break;
        for (size_t i = 0; rc == STORE_OK && i < n; i++)
            rc = sync_one(st, seqs[i], &ds, &rec, pg_terms);
        if (rc == STORE_OK)
            rc = flush(st, &ds, total == 0 && !pg_terms);
        else
            (void)flush(st, &ds, 0); /* frees; the transaction rolls back */
        if (rc)
            break;
        done += (long long)n;
        if (total > 0 && done >= next_report) {
            fprintf(stderr, "knowhub: search index: %lld of %lld entries\n", done, total);
            next_report += 20000;
        }
        /* A short batch took every mark, and syncing makes none (the marks
         * are knowledge's triggers'): no statement to find the table empty. */
        if (n < sizeof seqs / sizeof *seqs)
            break;
    }
    buf_release(&rec);
    buf_release(&ds.key);
    return rc;
}

int search_index_sync(struct store *st)
{
    return sync_marked(st, 0, 0);
}

/* SQLite: the FTS5 indexes made again from the active entries. */
static const char rebuild_fts[] = FTS_FILL_SQL;

/* The stamps rise on: the log is emptied below each space's stamp, so a
 * process holding the space loads it anew. */
static const char rebuild_stats[] =
    "DELETE FROM search_docs; DELETE FROM search_terms;"
    "DELETE FROM search_spaces; UPDATE search_stamps SET log_floor = stamp;"
    "DELETE FROM search_log; DELETE FROM search_dirty;"
    "INSERT INTO search_dirty(seq)"
    "  SELECT seq FROM knowledge WHERE status = 'active';";

/* Every record and statistic made again from the active entries (and
 * with pg_terms PostgreSQL's terms); this tokenizer's version recorded.
 * was: the version the indexes had, for the log. */
static int rebuild(struct store *st, int pg_terms, long long was)
{
    struct cursor *s;
    long total = 0;
    int rc = store_db_exec(st, rebuild_stats);
    if (rc == STORE_OK)
        rc = (s = stmt_get(st, S_SX_DIRTY_COUNT)) ? stmt_row_count(s, &total) : STORE_ERROR;
    if (rc == STORE_OK && total > 0) {
        fprintf(stderr, "knowhub: search index: rebuilding for tokenizer %d (was %lld)\n",
                TOKENIZER_VERSION, was);
        rc = sync_marked(st, total, pg_terms);
    }
    if (rc == STORE_OK)
        rc = stmt_run(st, S_SX_META_SET, "L", (long long)TOKENIZER_VERSION);
    return rc;
}

int search_index_refresh(struct store *st)
{
    struct cursor *s;
    long long version = -1;
    int rc;
    if (!(s = stmt_get(st, S_SX_META_GET)))
        return STORE_ERROR;
    if ((rc = stmt_step(s)) == STEP_ROW)
        version = stmt_col_int64(s, 0);
    if ((rc = stmt_row_end(s, rc)) || version == TOKENIZER_VERSION)
        return rc;
    if (!st->pg && (rc = store_db_exec(st, rebuild_fts)))
        return rc;
    return rebuild(st, st->pg != NULL, version);
}

int search_index_rebuild_stats(struct store *st)
{
    return rebuild(st, 0, 0);
}

int store_search_stats(struct store *st, const char *space, const char *const *terms, size_t n,
                       struct bm25_stats *stats, long long *df)
{
    const char *json;
    struct json_object *arr = store_json_texts(terms, n, &json);
    struct cursor *s;
    int rc;
    memset(stats, 0, sizeof *stats);
    for (size_t i = 0; i < n; i++)
        df[i] = 0;
    /* One statement, one round trip on PostgreSQL: the space's row (no
     * term; none for a space without entries yet), then the terms'. */
    if (!(s = stmt_bind(st, S_SX_STATS_GET, "tt", space, json))) {
        rc = STORE_ERROR;
        goto out;
    }
    while ((rc = stmt_step(s)) == STEP_ROW) {
        const char *term = stmt_col_opt(s, 0);
        if (!term) {
            stats->docs = (double)stmt_col_int64(s, 1);
            for (int f = 0; f < BM25_FIELDS; f++)
                stats->total_len[f] = (double)stmt_col_int64(s, 2 + f);
            continue;
        }
        for (size_t i = 0; i < n; i++)
            if (strcmp(terms[i], term) == 0)
                df[i] = stmt_col_int64(s, 1);
    }
    rc = stmt_rows_end(s, rc);
out:
    json_object_put(arr);
    return rc;
}

int store_search_stamp(struct store *st, const char *space, long long *stamp, long long *floor)
{
    return stmt_two_int64(stmt_bind(st, S_SX_STAMP, "t", space), stamp, floor);
}

int store_search_docs(struct store *st, const char *space, long long after,
                      int (*each)(long long seq, long long stamp, const struct match_row *row,
                                  void *ctx),
                      void *ctx)
{
    struct cursor *s = after < 0 ? stmt_bind(st, S_SX_DOCS, "t", space)
                                 : stmt_bind(st, S_SX_LOG_SINCE, "tL", space, after);
    int rc;
    if (!s)
        return STORE_ERROR;
    while ((rc = stmt_step(s)) == STEP_ROW) {
        struct match_row r = {0};
        long long seq = stmt_col_int64(s, 0), stamp = stmt_col_int64(s, 1);
        int gone = stmt_col_opt(s, 2) == NULL;
        if (!gone) {
            r.seq = seq;
            store_match_row_read(s, 2, &r);
            r.types = (unsigned)stmt_col_int64(s, 13);
        }
        if (each(seq, stamp, gone ? NULL : &r, ctx))
            break;
    }
    return stmt_rows_end(s, rc);
}
