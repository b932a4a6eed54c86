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
 * another thread's write transaction (writer_lock) before STORE_BUSY. */
#define BUSY_TIMEOUT_MS 10000

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
    S_JOB_LIST,
    S_JOB_COUNTS,
    S_SPACE_COUNTS,
    S_JOB_CLAIM,
    S_JOB_PROGRESS,
    S_JOB_FINISH,
    S_JOB_REQUEUE,
    S_FEEDBACK_MARK,
    S_MERGE_COUNTERS,
    S_MERGE_CASES,
    S_MERGE_TOMBSTONE,
    S_DATA_VERSION,
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
    S_VEC_FILL,
    S_VEC_FORGET_DIGESTS,
    S_VEC_QUEUED,
    S_VEC_COUNTS,
    S_VEC_SINCE,
    S_VEC_STAMP,
    S_VEC_DIM,
    S_COUNT
};

/* The SQL of each statement (statements.c). */
extern const char *const stmt_sql[S_COUNT];

struct store {
    sqlite3 *db;
    sqlite3_stmt *stmt[S_COUNT];
    int tx_depth;
    int read_depth;          /* store_read_begin() calls not yet ended */
    int read_open;           /* the outermost of them opened a read transaction */
    struct metrics *metrics; /* this connection's thread's counters, or NULL */
    char *node;              /* the node claiming jobs on this connection (NULL: none named) */
    long lease_seconds;      /* how long a claim or a progress report holds a job */
    /* Audit rows of the open transaction (five NUL-ended fields each), handed
     * to audit_hook at the outermost commit; audit_mark[d]: the length when
     * savepoint depth d began, so a savepoint's rollback drops its rows. */
    struct buf audit_pending;
    size_t audit_mark[8];
    store_audit_fn audit_hook;
    void *audit_ctx;
};

/* ---- stmt.c: statements, binding, rows ---- */

/* The store status of an SQLite result code. */
int status_of(int rc);
/* Statement id of this connection, prepared on first use; NULL when it
 * does not prepare (store_errmsg says why). */
sqlite3_stmt *stmt_get(struct store *st, enum stmt_id id);
/* Bind text v (NULL: SQL NULL) as parameter i, without a copy. */
void bind_text(sqlite3_stmt *s, int i, const char *v);
/* Statement id with ?1, ?2 ... bound from the arguments, one per letter
 * of types: 't' text (const char *, NULL binds NULL), 'i' int, 'l' long,
 * 'L' long long, 'h' a 32-byte hash (const unsigned char *), 'b' a blob (two arguments:
 * const void *, int length). Texts and
 * hashes are not copied: they must live until the statement is reset.
 * NULL when the statement does not prepare. */
sqlite3_stmt *stmt_bind(struct store *st, enum stmt_id id, const char *types, ...);
/* stmt_bind, then step_done: run a statement whose rows are not needed. */
int stmt_run(struct store *st, enum stmt_id id, const char *types, ...);
/* Step a statement that returns no row we need; reset it; return a store status. */
int step_done(sqlite3_stmt *s);
/* Reset s and clear its bindings, for its next use. */
void stmt_finish(sqlite3_stmt *s);
/* End a one-row read whose step returned rc (the row already read): reset
 * s; STORE_OK for a row, STORE_NOT_FOUND for none, else the error. */
int row_end(sqlite3_stmt *s, int rc);
/* End a loop over rows whose last step returned rc (SQLITE_ROW when the
 * loop stopped early): reset s; STORE_OK or the error. */
int rows_end(sqlite3_stmt *s, int rc);
/* The count (column 0) of s's one row into *n (0 when none); resets s. */
int row_count(sqlite3_stmt *s, long *n);
/* Rows the last INSERT, UPDATE or DELETE of this connection changed. */
int rows_changed(struct store *st);
/* A copy of column i (caller frees), NULL for NULL. */
char *col_dup(sqlite3_stmt *s, int i);
/* Column i as text ("" for NULL), valid until the next step or reset. */
const char *col_text(sqlite3_stmt *s, int i);
/* Run SQL text without a prepared statement (pragmas, BEGIN ...). */
int db_exec(struct store *st, const char *sql);

/* ---- tx.c ---- */

/* Hand the committed audit rows to the hook and forget them. */
void audit_flush(struct store *st);
/* End a write: commit when rc is STORE_OK, else roll back; returns the final status. */
int tx_end(struct store *st, int rc);

/* ---- migrate.c ---- */

/* Copy the database at version old into dir (NULL: the directory of path)
 * before migrating it; see migrate.c. 0, or -1 with the reason in *why. */
int backup_before_migrating(struct store *st, const char *path, const char *dir, int old,
                            struct buf *backup, const char **why);
/* Apply the migrations the database lacks, in one write transaction;
 * *version receives the version found. */
int schema_migrate(struct store *st, int *version);

/* ---- files.c ---- */

/* Fill k from a row of KNOWLEDGE_COLUMNS; the document only with with_document. */
void knowledge_from_row(sqlite3_stmt *s, struct knowledge *k, int with_document);
/* Pass every row of s (bound, of KNOWLEDGE_COLUMNS; NULL when it did not
 * prepare) to each as an entry, until each returns non-zero; resets s. */
int knowledge_rows(sqlite3_stmt *s, int with_document,
                   int (*each)(const struct knowledge *, void *), void *ctx);
/* The one row of s (bound, of KNOWLEDGE_COLUMNS; NULL when it did not
 * prepare) into out, document included (caller releases); STORE_NOT_FOUND
 * when there is none. Resets s. */
int knowledge_row(sqlite3_stmt *s, struct knowledge *out);
/* STORE_CONFLICT when the active entry id, at (category, path), shares its
 * name with a folder (or, a folder of its, with a file) of space. */
int place_clash_at(struct store *st, const char *space, const char *id, const char *category,
                   const char *path);
/* place_clash_at for entry id where it now is (nothing when it is not active). */
int place_clash(struct store *st, const char *space, const char *id);

/* ---- ledger.c ---- */

/* Append an audit row with time now (inside the caller's transaction if any). */
int audit_at(struct store *st, const char *now, const char *space, const char *actor,
             const char *action, const char *target);

#endif
