/* store/store_int.h: what the files of fcgi/store/ share and nothing outside
 * includes: the connection (struct store), the statement ids and their SQL,
 * and the statement, row and transaction helpers. */
#ifndef KNOWHUB_STORE_INT_H
#define KNOWHUB_STORE_INT_H

#include "store/store.h"
#include "base/buf.h"
#include "base/util.h"

#include <sqlite3.h>
#include <stdarg.h>

/* How long a writer waits for the database (SQLite's busy timeout) or for
 * another thread's write transaction (turn.c) before STORE_BUSY. */
#define BUSY_TIMEOUT_MS 10000
/* The PostgreSQL advisory lock every write transaction takes (one writer at
 * a time across nodes), and the one migrations run under. */
#define PG_WRITER_LOCK "7162200414"
#define PG_MIGRATE_LOCK "7162200415"

/* The file stem of a path with at most one folder: "a/b.md" -> "b"
 * (migrate.c's triggers, search_index.c's rebuild; store_path_stem_of in C). */
#define STEM_SQL(p)                                                                                \
    "substr(substr(" p ", instr(" p ", '/') + 1), 1,"                                              \
    " length(substr(" p ", instr(" p ", '/') + 1)) - 3)"

/* Both full-text indexes emptied and filled from the active entries. Their
 * rowids are -seq (migration 10): FTS5's ascending order, the one it reads
 * lazily, is then the newest first. Filled in ascending rowid order: FTS5
 * writes out its pending terms whenever a rowid is below the last one, and
 * 10,000 entries in seq order took 82 s instead of 0.9 s. */
/* The two full-text indexes (check.c, fts_compact.c). */
#define FTS_INDEXES                                                                                \
    {                                                                                              \
        "knowledge_fts", "knowledge_head"                                                          \
    }

// clang-format off
#define FTS_FILL_SQL                                                                               \
    "INSERT INTO knowledge_fts(knowledge_fts) VALUES('delete-all');"                              \
    "INSERT INTO knowledge_fts(rowid, title, tags, stem, scenario, body)"                         \
    "  SELECT -seq, title, tags, " STEM_SQL("path") ", scenario, content FROM knowledge"          \
    "  WHERE status = 'active' ORDER BY seq DESC;"                                                \
    "INSERT INTO knowledge_head(knowledge_head) VALUES('delete-all');"                            \
    "INSERT INTO knowledge_head(rowid, title, tags, stem)"                                        \
    "  SELECT -seq, title, tags, " STEM_SQL("path") " FROM knowledge WHERE status = 'active'"    \
    "  ORDER BY seq DESC;"
// clang-format on

enum stmt_id {
    S_SPACE_ENSURE,
    S_TOKEN_COUNT,
    S_TOKEN_INSERT,
    S_TOKEN_GET,
    S_TOKEN_TOUCH,
    S_TOKEN_REVOKE,
    S_TOKEN_ALL,
    S_K_ID_EXISTS,
    S_K_INSERT,
    S_K_GET,
    S_K_GET_MANY,
    S_K_ACTIVE,
    S_K_LIST,
    S_K_COUNT,
    S_K_SPACE_OF,
    S_CASE_INSERT,
    S_CASE_BUMP_HELPFUL,
    S_CASE_BUMP_HARMFUL,
    S_CASES,
    S_K_SET_SCORE,
    S_FEEDBACK_INSERT,
    S_K_DELETE,
    S_REVISION_ADD,
    S_REVISIONS,
    S_REVISION_DOC,
    S_K_RESTORE,
    S_AUDIT,
    S_K_BY_PATH,
    S_K_UPDATE,
    S_SCAN_CATEGORY,
    S_SCAN_ALWAYS_RULES,
    S_SCAN_ACTIVE,
    S_SCAN_DELETED,
    S_MATCH,
    S_MATCH_HEAD,
    S_TRACE_UPSERT,
    S_TRACE_INSERT,
    S_TRACE_GET,
    S_TRACE_LIST,
    S_TRACE_COUNT,
    S_LOG_ADD,
    S_LOG_ALL,
    S_LOG_PENDING,
    S_LOG_COUNT,
    S_LOG_ENTRY,
    S_LOG_FIND_PENDING,
    S_LOG_SET_EVAL,
    S_ROLLUP_INSERT,
    S_BUMP_IRRELEVANT,
    S_BUMP_UNUSED,
    S_BUMP_NEUTRAL,
    S_TRACE_TASK,
    S_LOGIN_INSERT,
    S_LOGIN_GET,
    S_LOGIN_DELETE,
    S_LOGIN_EXPIRE,
    S_SESSION_PUT,
    S_SESSION_GET,
    S_SESSION_LIST,
    S_SESSION_DELETE,
    S_LLM_CALL_ADD,
    S_LLM_USAGE,
    S_JOB_CREATE,
    S_JOB_GET,
    S_JOB_OPEN,
    S_JOB_MERGE,
    S_IDEM_GET,
    S_IDEM_PUT,
    S_IDEM_EXPIRE,
    S_JOB_LIST,
    S_JOB_COUNTS,
    S_SPACE_COUNTS,
    S_JOB_CLAIM,
    S_JOB_WAITING,
    S_JOB_PROGRESS,
    S_JOB_FINISH,
    S_JOB_REQUEUE,
    S_FEEDBACK_MARK,
    S_MERGE_COUNTERS,
    S_MERGE_CASES,
    S_MERGE_TOMBSTONE,
    S_DATA_VERSION,
    S_GENERATION,
    S_CASES_PAGE,
    S_CASES_COUNT,
    S_K_MOVE,
    S_K_FOLDER_TAKEN,
    S_K_FILE_TAKEN,
    S_K_PLACE,
    S_REVISION_TIME,
    S_SESSION_PUT_IF,
    S_READ_BEGIN,
    S_READ_END,
    S_VEC_PUT,
    S_VEC_TOUCH,
    S_VEC_DEQUEUE,
    S_VEC_TAKE,
    S_VEC_NEXT,
    S_VEC_FILL,
    S_VEC_FORGET_DIGESTS,
    S_VEC_QUEUED,
    S_VEC_COUNTS,
    S_VEC_SINCE,
    S_VEC_STAMP,
    S_VEC_DIM,
    /* PostgreSQL only (NULL in stmt_sql): the search terms of an entry (pg_terms.c) */
    S_K_TERMS_SOURCE,
    S_K_TERMS_PUT,
    S_EMBED_TURN_TAKE, /* PostgreSQL only: one node embeds at a time (vectors.c) */
    S_EMBED_TURN_GIVE,
    /* the BM25F statistics (search_index.c) */
    S_SX_DIRTY,
    S_SX_DIRTY_COUNT,
    S_SX_UNDIRTY,
    S_SX_SOURCE,
    S_SX_DOC_GET,
    S_SX_DOC_PUT,
    S_SX_DOC_DELETE,
    S_SX_DF_ADD,
    S_SX_DF_PRUNE,
    S_SX_SPACE_ADD,
    S_SX_STATS_GET,
    S_SX_META_GET,
    S_SX_META_SET,
    S_SX_STAMP_NEXT, /* the search index's changes (lindex) */
    S_SX_LOG_ADD,
    S_SX_LOG_FLOOR,
    S_SX_LOG_PRUNE,
    S_SX_STAMP,
    S_SX_DOCS,
    S_SX_LOG_SINCE,
    /* the home screen's overview (ledger.c) */
    S_OVERVIEW_CATEGORIES,
    S_OVERVIEW_TRACES,
    S_OVERVIEW_RECENT,
    S_OVERVIEW_INJECTED,
    S_OVERVIEW_HARMFUL,
    S_CHANGES_LAST, /* SQLite only: PostgreSQL notifies (changes.c) */
    S_CHANGES_SINCE,
    S_CHANGES_TRIM,
    S_SUB_PUT,
    S_SUB_DELETE,
    S_SUB_END,
    S_SUB_COUNT,
    S_SUB_MATCH,
    S_SUB_TOUCH,
    S_SUB_EXPIRE,
    S_REVIEW_POLICY_GET,
    S_REVIEW_POLICY_SET,
    S_PROPOSAL_INSERT,
    S_PROPOSAL_GET,
    S_PROPOSAL_LIST,
    S_PROPOSAL_COUNT,
    S_PROPOSAL_DECIDE,
    S_PROPOSAL_COUNTS,
    S_PROPOSAL_TOTALS,
    S_TOKEN_REVIEW_SET,
    /* 18: promotion on evidence */
    S_REVIEW_PROMOTE_GET,
    S_REVIEW_PROMOTE_SET,
    S_PROPOSAL_PENDING_DOCS,
    S_LOG_ADD_PROPOSAL,
    S_PROPOSAL_VERDICTS,
    /* 19: held slim merges */
    S_PROPOSAL_MEMBER_ADD,
    S_PROPOSAL_MEMBERS,
    S_PROPOSAL_MEMBER_HELD,
    /* 20: typed links */
    S_LINK_ADD,
    S_LINK_GET,
    S_LINK_REMOVE,
    S_LINKS_OF,
    S_LINKS_CONTRADICTS_OF,
    S_LINKS_DROP_SUPERSEDES,
    S_EVIDENCE_POLICY_GET,
    S_EVIDENCE_POLICY_SET,
    S_EVIDENCE_VERDICTS,
    /* a title's free name (service/knowledge.c) */
    S_K_PATHS_RANGE,
    /* conflict items in the review queue (service/conflictitems.c) */
    S_CONFLICT_ITEM_FIND,
    /* 22: expiry, review-by dates, pins */
    S_TIME_SET,
    S_TIME_CLEAR,
    S_TIME_GET,
    S_TIME_EXPIRED,
    S_TIME_NEXT_EXPIRY,
    S_TIME_STALE,
    S_TIME_STALE_COUNT,
    S_TIME_REVIEW_DUE,
    S_TIME_DUE_SPACES,
    S_K_WHOLE,
    S_COUNT
};

/* The SQL of each statement (statements.c), and its PostgreSQL text (pg_sql.c). */
extern const char *const stmt_sql[S_COUNT];
extern const char *const pg_stmt_sql[S_COUNT];
/* The PostgreSQL schema at store_schema_latest(), for an empty database (pg_sql.c). */
extern const char pg_schema_sql[];
/* The PostgreSQL migration from version 8 to 9 (pg_sql.c). */
extern const char pg_migration_9[];
extern const char pg_migration_11[];
extern const char pg_migration_12[];
extern const char pg_migration_13[];
extern const char pg_migration_14[];
extern const char pg_migration_15[];
extern const char pg_migration_16[];
extern const char pg_migration_17[];
extern const char pg_migration_18[];
extern const char pg_migration_19[];
extern const char pg_migration_20[];
extern const char pg_migration_21[];
extern const char pg_migration_22[];
extern const char pg_migration_23[];
/* `knowhub check` on PostgreSQL: each query returns one integer, its problems (pg_sql.c). */
struct pg_check {
    const char *name, *sql;
};
extern const struct pg_check pg_checks[];

/* Most parameters a statement has. */
#define CURSOR_MAX_PARAMS 24

/* A statement of a connection, bound and read row by row. On SQLite it is the
 * prepared statement itself; on PostgreSQL it gathers the parameters, runs
 * the statement at the first step and walks the rows of its result. */
struct cursor {
    struct store *st;
    enum stmt_id id;
    sqlite3_stmt *lite;
    /* PostgreSQL (pg.c) */
    struct pg_result *res;
    int row, rows;                         /* the row being read, how many */
    int nparams;                           /* the highest parameter bound */
    const char *values[CURSOR_MAX_PARAMS]; /* text, or binary for blobs */
    int lengths[CURSOR_MAX_PARAMS], formats[CURSOR_MAX_PARAMS];
    char num[CURSOR_MAX_PARAMS][24]; /* numbers bound, as text */
    char *owned[CURSOR_MAX_PARAMS];  /* texts copied (stmt_bind_text_n) */
    struct buf blob;                 /* the last blob read, decoded */
    int col_base;        /* stmt_col_*(s, i) read column col_base + i (S_K_WHOLE's parts) */
    const char *unbound; /* why a parameter was refused (NULL: none): step fails */
};

/* time.c: the expired ids of one space as last read by store_time_expired,
 * used again while the generation stays and before the next expiry (a
 * search reads them once; a space with many expired entries would read
 * them all every time). */
struct expired_cache {
    char *space;
    uint64_t gen;
    char until[21]; /* the first expiry after the read, "" none */
    char **ids;
    size_t n, cap;
    int valid;
};

struct store {
    unsigned long long round_trips;  /* PostgreSQL: requests sent to the server (pg.c) */
    sqlite3 *db;                     /* SQLite, or NULL on PostgreSQL */
    struct pg_conn *pg;              /* PostgreSQL, or NULL on SQLite */
    struct cursor cur[S_COUNT];      /* every statement, prepared on first use */
    unsigned char pg_ready[S_COUNT]; /* prepared on this PostgreSQL session */
    char *conninfo;                  /* PostgreSQL: what it connects with (to reconnect) */
    char pg_error[256];              /* PostgreSQL: the last error message */
    long pg_changes;                 /* PostgreSQL: rows the last statement changed */
    uint64_t generation;             /* PostgreSQL: read with the last token lookup */
    int generation_fresh;            /* ... and not yet handed out by store_generation */
    uint64_t expiry_gen;             /* time.c: the generation expiry_next was read at */
    uint64_t expiry_epoch;           /* ... expiries passed since (mixed into answers' tags) */
    char expiry_next[21];            /* ... the first expiry after then ("" none) */
    int expiry_known;                /* ... expiry_next was read */
    struct expired_cache expired;    /* time.c: store_time_expired's last read */
    int tx_depth;
    int schema_seen;          /* PostgreSQL: the schema_version table was there (migrate.c) */
    int schema_read_version;  /* ... store_schema_version_recent's last answer */
    long schema_read_ms;      /* ... read then (monotonic_ms; 0: none kept) */
    int read_depth;           /* store_read_begin() calls not yet ended */
    int read_open;            /* the outermost of them opened a read transaction */
    int read_begin_pending;   /* PostgreSQL: ... whose BEGIN goes with its first statement (pg.c) */
    long compact_next_ms;     /* fts_compact.c: no merge before (monotonic_ms) */
    long compact_spent_ms;    /* ... and the time the merge under way took so far */
    uint64_t compact_version; /* ... and store_data_version() when last looked */
    long long changes_seen;   /* changes.c, SQLite: the last change passed on */
    int listen_pid;           /* changes.c, PostgreSQL: the session that LISTENs (0: none) */
    struct metrics *metrics;  /* this connection's thread's counters, or NULL */
    char *node;               /* the node claiming jobs on this connection (NULL: none named) */
    char memory_id[32];       /* store_identity of a database in memory ("" until asked) */
    long lease_seconds;       /* how long a claim or a progress report holds a job */
    /* Audit rows of the open transaction (five NUL-ended fields each), handed
     * to audit_hook at the outermost commit; audit_mark[d]: the length when
     * savepoint depth d began, so a savepoint's rollback drops its rows. */
    struct buf audit_pending;
    size_t audit_mark[8];
    store_audit_fn audit_hook;
    void *audit_ctx;
};

/* turn.c: the writers' turn in this process (what store_begin takes first):
 * a statement that writes outside a transaction takes it for its step
 * (stmt.c), or it would meet the writer holding SQLite's lock in the busy
 * handler and stretch that writer's turn by its sleeps. STORE_BUSY when it
 * was not had in time. */
int store_turn_take(struct store *st);
void store_turn_give(void);

/* tx.c: SQLite's PRAGMA data_version, which moves when another connection
 * commits, into *v; a store status (*v 0 when it cannot be read). */
int store_data_version(struct store *st, uint64_t *v);

/* ---- stmt.c: statements, binding, rows (either backend) ---- */

/* What stmt_step() returns: a row to read, the end, or minus a store status. */
enum { STEP_DONE = 0, STEP_ROW = 1 };
/* The store status of a stmt_step() result (STORE_OK for a row or the end). */
static inline int step_status(int rc)
{
    return rc < 0 ? -rc : STORE_OK;
}
/* The store status of an SQLite result code. */
int store_status_of(int rc);
/* Statement id of this connection, prepared on first use; NULL when it
 * does not prepare (store_errmsg says why). */
struct cursor *stmt_get(struct store *st, enum stmt_id id);
/* Bind parameter i (from 1): text v (NULL: SQL NULL), not copied; the first
 * n bytes of v, copied; numbers. */
void stmt_bind_text(struct cursor *s, int i, const char *v);
void stmt_bind_text_n(struct cursor *s, int i, const char *v, size_t n);
void stmt_bind_int(struct cursor *s, int i, int v);
void stmt_bind_int64(struct cursor *s, int i, long long v);
/* Statement id with ?1, ?2 ... bound from the arguments, one per letter
 * of types: 't' text (const char *, NULL binds NULL), 'i' int, 'l' long,
 * 'L' long long, 'h' a 32-byte hash (const unsigned char *), 'b' a blob (two arguments:
 * const void *, int length). Texts and
 * hashes are not copied: they must live until the statement is reset.
 * NULL when the statement does not prepare. */
struct cursor *stmt_bind(struct store *st, enum stmt_id id, const char *types, ...);
/* stmt_bind, then stmt_step_done: run a statement whose rows are not needed. */
int stmt_run(struct store *st, enum stmt_id id, const char *types, ...);
/* stmt_bind, then the integer of the first row's first column into *out
 * (an INSERT ... RETURNING); STORE_NOT_FOUND when there is no row. */
int stmt_returning(struct store *st, enum stmt_id id, long *out, const char *types, ...);
/* The first two integer columns of bound statement s's one row into *a and
 * *b (0 and STORE_OK when there is no row); NULL s: STORE_ERROR. */
int stmt_two_int64(struct cursor *s, long long *a, long long *b);
/* The MATCH_ROW_COLUMNS of cursor s's row, from column `first`, into r
 * (borrowed: valid until the next step). */
void store_match_row_read(struct cursor *s, int first, struct match_row *r);
/* The next row: STEP_ROW, STEP_DONE, or minus a store status. */
int stmt_step(struct cursor *s);
/* Step a statement that returns no row we need; reset it; return a store status. */
int stmt_step_done(struct cursor *s);
/* Reset s and clear its bindings, for its next use. */
void stmt_finish(struct cursor *s);
/* End a one-row read whose step returned rc (the row already read): reset
 * s; STORE_OK for a row, STORE_NOT_FOUND for none, else the error. */
int stmt_row_end(struct cursor *s, int rc);
/* End a loop over rows whose last step returned rc (STEP_ROW when the
 * loop stopped early): reset s; STORE_OK or the error. */
int stmt_rows_end(struct cursor *s, int rc);
/* The count (column 0) of s's one row into *n (0 when none); resets s. */
int stmt_row_count(struct cursor *s, long *n);
/* Rows the last INSERT, UPDATE or DELETE of this connection changed. */
int stmt_rows_changed(struct store *st);
/* Columns of the current row: how many; a copy of column i (caller frees),
 * NULL for NULL; its text ("" for NULL) or NULL for NULL, valid until the
 * next step or reset; its number; its bytes (NULL when NULL or empty). */
int stmt_col_count(struct cursor *s);
char *stmt_col_dup(struct cursor *s, int i);
const char *stmt_col_text(struct cursor *s, int i);
const char *stmt_col_opt(struct cursor *s, int i);
long long stmt_col_int64(struct cursor *s, int i);
int stmt_col_int(struct cursor *s, int i);
const void *stmt_col_blob(struct cursor *s, int i, size_t *n);
/* Run SQL text without a prepared statement (pragmas, BEGIN ...). */
int store_db_exec(struct store *st, const char *sql);

/* ---- pg.c: the PostgreSQL side of the cursor and the connection ---- */

/* Keep msg (or "unknown error") as the connection's last error, on one line. */
void pg_set_error(struct store *st, const char *msg);
/* Decode bytea's text form "\x0a1b..." into out; -1 when it is not one. */
int pg_unhex(struct buf *out, const char *text);
/* Connect to conninfo (a postgresql:// URL or key=value pairs). */
int pg_connect(struct store *st, const char *conninfo);
void pg_close(struct store *st);
/* Prepare statement id on this session if needed; STORE_OK or an error. */
int pg_prepare(struct store *st, enum stmt_id id);
/* Run s with its parameters: STORE_OK with its result in s->res, or an error. */
int pg_run(struct cursor *s);
/* A column of the current row of s's result. */
int pg_col_count(struct cursor *s);
const char *pg_col(struct cursor *s, int i); /* NULL for NULL */
const void *pg_col_blob(struct cursor *s, int i, size_t *n);
void pg_clear(struct cursor *s);
/* One integer from sql (-1 when it fails or returns no row). */
long long pg_query_int(struct store *st, const char *sql);
/* PQexec of sql (several statements allowed); a store status. */
int pg_exec(struct store *st, const char *sql);
/* ---- migrate.c, PostgreSQL: create the schema of an empty database under
 * an advisory lock (*found: the version found); the version of the schema. */
int pg_migrate(struct store *st, int *found);
int pg_schema_version(struct store *st);
/* Keep the PostgreSQL search terms of entry id in step with its text
 * (nothing on SQLite, whose triggers keep FTS5 in step). */
int store_terms_refresh(struct store *st, const char *id);
/* The file stem of a path as migrate.c's STEM_SQL makes it for FTS5: after
 * the first '/', without the last three characters (".md"); into *stem
 * (pointing into path) and *len (pg_terms.c). */
void store_path_stem_of(const char *path, const char **stem, size_t *len);
/* The tsquery of a match query into out (pg_terms.c). */
void pg_match_query(struct buf *out, const struct store_match_query *q);

/* ---- search_index.c: the BM25F statistics ---- */

/* Bring the terms records and statistics of the entries marked changed
 * (search_dirty, filled by triggers) up to date, inside the open write
 * transaction; tx.c calls it before the outermost COMMIT. */
int search_index_sync(struct store *st);
/* Inside the caller's write transaction: rebuild every search index (FTS5
 * or PostgreSQL's terms, the records and statistics) when they were made by
 * another tokenizer version. */
int search_index_refresh(struct store *st);
/* Inside the caller's write transaction: the records and statistics made
 * again from the active entries (migrate-to, once its terms are made). */
int search_index_rebuild_stats(struct store *st);

/* `knowhub check` of the BM25F statistics, on both backends: active
 * entries without a terms record plus records of no active entry; spaces
 * whose entry count, or sum of document frequencies, differs from their
 * records' (nl: the SQL of a newline character). */
#define CHECK_SEARCH_DOCS                                                                          \
    "SELECT (SELECT count(*) FROM knowledge k WHERE status = 'active' AND NOT EXISTS"              \
    " (SELECT 1 FROM search_docs d WHERE d.seq = k.seq)) + (SELECT count(*) FROM search_docs d"    \
    " WHERE NOT EXISTS (SELECT 1 FROM knowledge k WHERE k.seq = d.seq AND k.status = 'active'))"   \
    " + (SELECT count(*) FROM search_dirty)"
#define CHECK_SEARCH_STATS(nl)                                                                     \
    "SELECT count(*) FROM (SELECT d.space, count(*) AS docs, sum(length(d.terms)"                  \
    " - length(replace(d.terms, " nl ", '')) - 1) AS occurrences FROM search_docs d"               \
    " GROUP BY d.space) r FULL JOIN (SELECT s.space, s.docs, (SELECT coalesce(sum(df), 0)"         \
    " FROM search_terms t WHERE t.space = s.space) AS occurrences FROM search_spaces s"            \
    " WHERE s.docs <> 0) w ON w.space = r.space WHERE r.docs IS DISTINCT FROM w.docs"              \
    " OR r.occurrences IS DISTINCT FROM w.occurrences"

/* ---- tx.c ---- */

/* Hand the committed audit rows to the hook and forget them. */
void store_audit_flush(struct store *st);

/* ---- migrate.c ---- */

/* Copy the database at version old into dir (NULL: the directory of path)
 * before migrating it; see migrate.c. 0, or -1 with the reason in *why. */
int store_backup_before_migrating(struct store *st, const char *path, const char *dir, int old,
                                  struct buf *backup, const char **why);
/* Apply the migrations the database lacks, in one write transaction;
 * *version receives the version found. */
int store_schema_migrate(struct store *st, int *version);

/* ---- files.c ---- */

/* Fill k from a row of KNOWLEDGE_COLUMNS; the document only with with_document. */
void store_knowledge_from_row(struct cursor *s, struct knowledge *k, int with_document);
/* Pass every row of s (bound, of KNOWLEDGE_COLUMNS; NULL when it did not
 * prepare) to each as an entry, until each returns non-zero; resets s. */
int store_knowledge_rows(struct cursor *s, int with_document,
                         int (*each)(const struct knowledge *, void *), void *ctx);
/* The one row of s (bound, of KNOWLEDGE_COLUMNS; NULL when it did not
 * prepare) into out, document included (caller releases); STORE_NOT_FOUND
 * when there is none. Resets s. */
int store_knowledge_row(struct cursor *s, struct knowledge *out);
/* S_K_WHOLE's parts: the first column of each (sql_parts.h KNOWLEDGE_WHOLE_SQL). */
#define KNOWLEDGE_PART_ENTRY 2
#define KNOWLEDGE_PART_CASE 31
#define KNOWLEDGE_PART_LOG 39
#define KNOWLEDGE_PART_TIME 51
/* The row's case (texts borrowed: knowledge.c), log entry (texts
 * borrowed: traces.c) and entry time (owned: time.c). */
void store_case_from_row(struct cursor *s, struct knowledge_case *c);
void store_log_from_row(struct cursor *s, struct log_entry *e);
void store_time_from_row(struct cursor *s, struct knowledge_time *out);
/* texts[0..n) as a JSON array (the caller puts it) and *json its plain text
 * (a statement's list parameter: json_each, json_array_elements_text). */
struct json_object *store_json_texts(const char *const *texts, size_t n, const char **json);
/* STORE_CONFLICT when the active entry id, at (category, path), shares its
 * name with a folder (or, a folder of its, with a file) of space. */
int store_place_clash_at(struct store *st, const char *space, const char *id, const char *category,
                         const char *path);
/* store_place_clash_at for entry id where it now is (nothing when it is not active). */
int store_place_clash(struct store *st, const char *space, const char *id);

/* ---- ledger.c ---- */

/* Append an audit row with time now (inside the caller's transaction if any). */
int store_audit_at(struct store *st, const char *now, const char *space, const char *actor,
                   const char *action, const char *target);

#endif
