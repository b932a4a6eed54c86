/* store: the only module that speaks SQL. One struct store is one SQLite
 * connection (WAL, FTS5) owned by one thread; every statement is prepared once
 * per connection with bound parameters. Every call is scoped to a space. */
#ifndef KNOWHUB_STORE_H
#define KNOWHUB_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"
#include "domain/bm25.h"
#include "domain/knowledge.h"

struct store;

/* On every call that returns a store status: the compiler flags a caller
 * that drops it (cast to (void), with a comment why, where that is right). */
#define STORE_MUST_CHECK __attribute__((warn_unused_result))
/* Drop a status on purpose, where a failure changes nothing the caller
 * answers (a best-effort write, a view that shows less): GCC does not let
 * a (void) cast silence STORE_MUST_CHECK. Say why at the call. */
static inline void store_ignore(int status)
{
    (void)status;
}

enum store_status {
    STORE_OK = 0,
    STORE_NOT_FOUND,     /* no such row in this space */
    STORE_CONFLICT,      /* a unique constraint (path taken, duplicate id) */
    STORE_BUSY,          /* the database stayed locked past the busy timeout */
    STORE_FULL,          /* disk or quota full */
    STORE_READONLY,      /* the database cannot be written */
    STORE_ERROR,         /* anything else; see store_errmsg() */
    STORE_TOO_NEW,       /* the database comes from a newer knowhub (left untouched) */
    STORE_BACKUP_FAILED, /* the copy before a migration failed: nothing migrated */
    STORE_UNAVAILABLE,   /* the database server cannot be reached (PostgreSQL): retry */
    STORE_QUOTA,         /* the write would put a space over its entries (nothing written) */
};

/* The error of a store status other than STORE_OK, for callers' callers:
 * NOT_FOUND "<what> not found", CONFLICT, SERVICE_UNAVAILABLE when busy,
 * full, read-only (nothing was written) or unreachable, LIMIT_EXCEEDED
 * "space_full" for a space at its entries, else INTERNAL_ERROR. */
void store_status_error(int status, const char *what, struct error *e);

/* Process-wide SQLite settings; call once before any other store call
 * (turns memory statistics off: they cost a global mutex per malloc). */
void store_global_init(void);

/* Whether where names a PostgreSQL database (a postgres:// or postgresql://
 * URL, or libpq key=value pairs) rather than an SQLite file. */
int store_is_postgres(const char *where);

/* The backend st runs on: "sqlite" or "postgresql". */
const char *store_backend(const struct store *st);
/* Which database st is: SQLite's file name, or PostgreSQL's connection
 * string (what a process-wide cache of it is keyed by). */
const char *store_identity(struct store *st);
/* The round trips this connection has made to its server so far: every
 * statement, prepare, BEGIN and COMMIT on PostgreSQL (each waits for an
 * answer); always 0 on SQLite, which runs in the process. */
unsigned long long store_round_trips(const struct store *st);

/* A PostgreSQL connection string (URL or key=value pairs) fit to be shown:
 * the key=value pairs it sets, with the password (in the URL's user info,
 * its query or a password= pair) written as ***. "(not a valid connection
 * string)" when libpq cannot read it. */
void store_pg_redacted(const char *where, struct buf *out);

/* The libpq this binary runs with ("15.10"). */
void store_libpq_version(struct buf *out);

/* Open (creating if needed) the database at path, or ":memory:", or the
 * PostgreSQL database path names (store_is_postgres), apply the
 * migrations and prepare the connection. *out is NULL on failure. Same
 * rules as store_open_upgrade, backups going to the database's directory. */
STORE_MUST_CHECK int store_open(const char *path, struct store **out);

/* The schema version (user_version) this build creates and migrates to. */
int store_schema_latest(void);

/* What store_open_upgrade found and did. */
struct store_upgrade {
    int from_version;  /* user_version found: 0 for a new database, -1 unread */
    int to_version;    /* user_version after the open (from_version when none ran) */
    struct buf backup; /* the copy made before migrating (or attempted), or empty */
    const char *why;   /* STORE_BACKUP_FAILED: why, in words (static) */
};
/* Init and release up->backup. */
void store_upgrade_init(struct store_upgrade *up);
void store_upgrade_release(struct store_upgrade *up);

/* store_open with the upgrade rules. A database from a newer knowhub
 * (user_version above store_schema_latest()) is refused, STORE_TOO_NEW,
 * and not written to. Before migrating an older one (user_version above 0)
 * it is copied with store_backup to backup_dir/knowhub-v<old>-<UTC time>.db
 * (backup_dir is created if missing; NULL: the database's directory); when
 * that copy fails nothing is migrated: STORE_BACKUP_FAILED. up (may be NULL)
 * says what happened, for the caller's log. postgres: path is a PostgreSQL
 * URL or conninfo (the caller knows which it was given), else an SQLite
 * file whatever characters its name holds. */
STORE_MUST_CHECK int store_open_upgrade(const char *path, int postgres, const char *backup_dir,
                                        struct store_upgrade *up, struct store **out);
/* Close the connection and finalize every statement. NULL is allowed. */
void store_close(struct store *st);
/* The last error message of this connection (for server logs only). */
const char *store_errmsg(struct store *st);
/* Schema version (PRAGMA user_version) of the open database. */
int store_schema_version(struct store *st);
/* The same as this connection last read it, when at most max_age_ms ago
 * (PostgreSQL; SQLite reads it each time, in the process): a health check
 * that says the database answered within that time, without a round trip
 * per call. -1 when it cannot be read (and nothing is kept then). */
int store_schema_version_recent(struct store *st, long max_age_ms);

/* Prepare every statement now (they are otherwise prepared on first use):
 * a self-check for tests and `knowhub check`. On failure *failed_sql names
 * the statement and store_errmsg() says why. */
STORE_MUST_CHECK int store_prepare_all(struct store *st, const char **failed_sql);

/* Copy the database to path with SQLite's online backup, while it serves. */
STORE_MUST_CHECK int store_backup(struct store *st, const char *path);

/* Called during store_copy_to: rows of table copied so far, every 10,000
 * rows and once more with done = 1 at the end of the table. */
typedef void (*store_copy_progress)(void *ctx, const char *table, long long rows, int done);
/* Copy every row of every table of the SQLite database from into the empty
 * PostgreSQL database to (opened with store_open: its schema exists), in
 * one transaction on to; then its sequences, vector stamp and search terms.
 * Each table is hashed as it is read from SQLite and again read back from
 * PostgreSQL: report gets a line per table ("knowledge: 12 rows, checksum
 * a = b ok"), and any difference rolls everything back (STORE_ERROR,
 * store_errmsg(to) says so). STORE_CONFLICT, nothing written, when to
 * already holds rows (a token, an entry...). */
STORE_MUST_CHECK int store_copy_to(struct store *from, struct store *to,
                                   store_copy_progress progress, void *ctx, struct buf *report);

/* Check the database: integrity, foreign keys, the full-text index and its
 * agreement with the table, every entry's history, every statement. A line
 * per check goes to report; returns the number of problems found. */
int store_check(struct store *st, struct buf *report);

/* At most max writers of this process wait the whole busy timeout for the
 * write lock (0: no cap); the others wait a second at most, then
 * STORE_BUSY, so a lock held long leaves threads for readers while a burst
 * of short writes still goes through. knowhub serve sets half its threads. */
void store_set_writers_waiting(int max);

/* A write may not leave a space with more than max active entries (0: no
 * limit; the trash does not count, a restore from it does): the
 * transaction that would is rolled back with STORE_QUOTA. Only a write that
 * adds entries is refused, so a space over a lowered limit can still change
 * and shrink. knowhub serve sets KNOWHUB_SPACE_ENTRIES; the CLI none. */
void store_set_space_entries(long max);
long store_space_entries(void);

/* A number that changes whenever anything in the database may have changed
 * (a commit by any connection), into *gen: what a cached answer is tagged
 * with. A store status: when it cannot be read, nothing may be cached or
 * answered from the cache. */
STORE_MUST_CHECK int store_generation(struct store *st, uint64_t *gen);
/* Forget the generation the last token lookup read with it (PostgreSQL):
 * the next store_generation reads it. Each token check begins with it, so
 * a request whose token comes from memory never tags answers with an
 * earlier request's generation. */
void store_generation_forget(struct store *st);
/* store_generation, moved on as well when an entry's expires_at passes
 * (the searches, the context and the rules then answer differently without
 * a commit): what the answer cache tags answers with. This connection reads
 * the next expiry again only when the generation moves or it passes. */
STORE_MUST_CHECK int store_answer_generation(struct store *st, uint64_t *gen);

/* Transactions nest: the outermost is BEGIN IMMEDIATE, inner ones savepoints.
 * Every write call below is atomic on its own and composes inside one. */
STORE_MUST_CHECK int store_begin(struct store *st);
STORE_MUST_CHECK int store_commit(struct store *st);
void store_rollback(struct store *st);
/* End a write: commit when rc is STORE_OK, else roll back; returns the final status. */
STORE_MUST_CHECK int store_tx_end(struct store *st, int rc);

/* Run the reads up to store_read_end() in one snapshot: one read transaction
 * instead of one per statement (each takes file locks and a WAL lookup). Pairs
 * nest; inside a write transaction they do nothing. No writes in between.
 * Should BEGIN fail, the reads run on their own as before. */
void store_read_begin(struct store *st);
void store_read_end(struct store *st);
/* 1 inside a write transaction (store_begin .. store_tx_end). */
int store_in_transaction(const struct store *st);

/* ---- spaces and tokens ---- */

/* Create the space if it does not exist. */
STORE_MUST_CHECK int store_space_ensure(struct store *st, const char *space);
/* Number of tokens ever created (revoked included); -1 on error. */
long store_token_count(struct store *st);

struct token_record {
    char *id;
    char *space;
    char *role;
    char *label;
    char *created_at;
    char *last_used_at; /* NULL when never used */
    char *revoked_at;   /* NULL when valid */
    unsigned char hash[32];
};
void store_token_record_release(struct token_record *t);

/* Store a token's public id, secret hash, space (created if needed), role,
 * label, with an audit row "token.create" by actor ("operator" for the CLI). */
STORE_MUST_CHECK int store_token_insert(struct store *st, const char *id,
                                        const unsigned char hash[32], const char *space,
                                        const char *role, const char *label, const char *actor);
/* Fetch a token by public id (revoked ones included). */
STORE_MUST_CHECK int store_token_get(struct store *st, const char *id, struct token_record *out);
/* Record use now, at most once a minute per token. */
STORE_MUST_CHECK int store_token_touch(struct store *st, const char *id);
/* Mark revoked, with an audit row "token.revoke" by actor; STORE_NOT_FOUND
 * when unknown, already revoked, or (space not NULL) of another space. */
STORE_MUST_CHECK int store_token_revoke(struct store *st, const char *id, const char *space,
                                        const char *actor);
/* Call each(t, ctx) for every token, oldest first; stops early when it returns non-zero. */
STORE_MUST_CHECK int store_token_each(struct store *st,
                                      int (*each)(const struct token_record *, void *), void *ctx);

/* ---- knowledge entries ---- */

struct knowledge_filter {
    unsigned types;       /* entries having any of these types; 0 = all */
    const char *category; /* NULL = all */
    long limit;
    long offset;
};

/* Insert k (k->id set by the caller) with revision 1 and an audit row.
 * STORE_CONFLICT with *id_taken = 1 when the id exists, 0 when the path is
 * taken or clashes (store_knowledge_path_clash). */
STORE_MUST_CHECK int store_knowledge_insert(struct store *st, const struct knowledge *k,
                                            const char *actor, int *id_taken);
/* Fetch an entry of the space into out (caller releases): only an active
 * one, or one in any status (deleted, merged) with any_status. */
STORE_MUST_CHECK int store_knowledge_get(struct store *st, const char *space, const char *id,
                                         int any_status, struct knowledge *out);
/* The active entries of the space among ids[0..n), read in one statement
 * (one round trip on PostgreSQL, one snapshot, no transaction), handed to
 * each(k, i, ctx) in the order of ids (i: k's place in ids; each may take
 * k's fields over) until it returns non-zero; an id not found is left out. */
STORE_MUST_CHECK int store_knowledge_get_many(struct store *st, const char *space,
                                              const char *const *ids, size_t n,
                                              int (*each)(struct knowledge *, size_t, void *),
                                              void *ctx);
/* Active entries matching f, newest first; *total counts every match. */
STORE_MUST_CHECK int store_knowledge_list(struct store *st, const char *space,
                                          const struct knowledge_filter *f,
                                          int (*each)(const struct knowledge *, void *), void *ctx,
                                          long *total);
/* Add a helpful/harmful case; when (kind, case_id) is new the counter goes up
 * by one and *added = 1, else nothing changes and *added = 0. */
STORE_MUST_CHECK int store_knowledge_add_case(struct store *st, const char *space, const char *id,
                                              const struct knowledge_case *c, const char *actor,
                                              int *added);
/* The latest `limit` cases of one kind for an entry, oldest first. */
STORE_MUST_CHECK int store_knowledge_cases_each(struct store *st, const char *id, const char *kind,
                                                long limit,
                                                int (*each)(const struct knowledge_case *, void *),
                                                void *ctx);
/* One page of an entry's cases of a kind (any status of the entry), oldest
 * first; *total counts them all. */
STORE_MUST_CHECK int store_knowledge_cases_page(struct store *st, const char *space, const char *id,
                                                const char *kind, long limit, long offset,
                                                int (*each)(const struct knowledge_case *, void *),
                                                void *ctx, long *total);
/* Set the score (1..5); a new revision when it changes. */
STORE_MUST_CHECK int store_knowledge_set_score(struct store *st, const char *space, const char *id,
                                               int score, const char *actor);
/* Keep a free-text feedback for a later evolve; *feedback_id receives its row id. */
STORE_MUST_CHECK int store_knowledge_add_feedback(struct store *st, const char *space,
                                                  const char *id, const char *text,
                                                  const char *actor, long *feedback_id);
/* Merge member into survivor (both active in space): counters summed, cases
 * copied, the member a tombstone (status merged, merged_into) with revision
 * "merge". Reverting the member brings it back (the counters stay summed).
 * With member_version > 0 the member must still be at that version, else
 * STORE_CONFLICT and nothing changes. */
STORE_MUST_CHECK int store_knowledge_merge(struct store *st, const char *space,
                                           const char *survivor, const char *member,
                                           long member_version, const char *actor);
/* Mark a stored feedback "applied" (an evolve used it) or "failed". */
STORE_MUST_CHECK int store_knowledge_feedback_mark(struct store *st, long feedback_id,
                                                   const char *status);
/* Soft delete: status "deleted", a new revision. */
STORE_MUST_CHECK int store_knowledge_delete(struct store *st, const char *space, const char *id,
                                            const char *actor);

/* Call each with the paths of the space's active entries of category from
 * `from` up to `to` (by bytes), in order, at most limit. */
STORE_MUST_CHECK int store_knowledge_paths_range(struct store *st, const char *space,
                                                 const char *category, const char *from,
                                                 const char *to, long limit,
                                                 void (*each)(const char *path, void *), void *ctx);

/* The active entry at (category, path) of the space, document included. */
STORE_MUST_CHECK int store_knowledge_get_by_path(struct store *st, const char *space,
                                                 const char *category, const char *path,
                                                 struct knowledge *out);

/* Replace the document of an active entry: category, path, title, description,
 * tags, types, scenario, content, always_apply, source, urls, agent_id,
 * message_id, meta and document from k; a new version and revision with
 * reason ("write", "rename", "evolve" ...). With expected_version > 0 the
 * entry must still be at that version, else STORE_CONFLICT and nothing
 * changes; a taken or clashing (category, path) is STORE_CONFLICT too. */
STORE_MUST_CHECK int store_knowledge_update(struct store *st, const char *space, const char *id,
                                            const struct knowledge *k, long expected_version,
                                            const char *actor, const char *reason);

/* Move an active entry to k's category and path, changing nothing but them
 * and what they decide (k's title, scenario and always_apply, as
 * document_fill derives them): a new version and revision "rename". It must
 * still be at expected_version (> 0, required), else STORE_CONFLICT and
 * nothing changes; a taken (category, path), or a file beside a folder of
 * the same name, is STORE_CONFLICT too. */
STORE_MUST_CHECK int store_knowledge_move(struct store *st, const char *space, const char *id,
                                          long expected_version, const struct knowledge *k,
                                          const char *actor);

enum path_clash {
    PATH_CLASH_NONE,
    PATH_CLASH_FOLDER, /* the path names a folder that holds other documents */
    PATH_CLASH_FILE,   /* the path's folder is the name of another document */
};
/* Whether a document at (category, path) of the space would clash with
 * another active one (except_id, which may be NULL, is not counted): on
 * disk a name is a file or a folder, never both. Every write (insert,
 * update, move, revert) refuses a clash with STORE_CONFLICT; this tells a
 * handler which one, for its message. Returns a store status. */
STORE_MUST_CHECK int store_knowledge_path_clash(struct store *st, const char *space,
                                                const char *category, const char *path,
                                                const char *except_id, enum path_clash *clash);

/* The time ("YYYY-MM-DD HH:MM:SS") of revision `version` of an entry of
 * the space into out; STORE_NOT_FOUND when there is no such revision. */
STORE_MUST_CHECK int store_knowledge_revision_time(struct store *st, const char *space,
                                                   const char *id, long version,
                                                   char out[static 20]);

enum knowledge_scan {
    SCAN_CATEGORY,     /* active entries of one category, by path */
    SCAN_ALWAYS_RULES, /* active rules with alwaysApply, by path */
    SCAN_ACTIVE,       /* every active entry, by category then path */
    SCAN_DELETED,      /* deleted and merged entries (of one category, or all), newest first */
};
/* Call each(k, ctx) for the entries of a scan (document loaded only with
 * with_document); stops early when each returns non-zero. */
STORE_MUST_CHECK int store_knowledge_scan(struct store *st, const char *space,
                                          enum knowledge_scan what, const char *category,
                                          int with_document,
                                          int (*each)(const struct knowledge *, void *), void *ctx);

/* One full-text candidate, with what the search scores and orders by.
 * Strings are borrowed: valid during the callback only. */
struct match_row {
    long long seq;
    const char *id, *category, *path, *title, *tags; /* tags: JSON array text */
    const char *body;                                /* the content's first 200 characters */
    const char *scenario;                            /* the scenario's first 200 characters */
    const char *source, *updated_at;
    const char *terms; /* the terms record (domain/bm25.h) */
    int always_apply;
    unsigned types; /* store_search_docs only */
};

enum match_index {
    MATCH_ALL,  /* knowledge_fts: title, tags, stem, scenario, body */
    MATCH_HEAD, /* knowledge_head: title, tags, stem only (far smaller) */
};

enum match_op {
    MATCH_AND, /* every term */
    MATCH_OR,  /* any term */
};

/* The fields a query may name (struct store_match_query.fields). */
enum match_field {
    MATCH_TITLE = 1u << 0,
    MATCH_TAGS = 1u << 1,
    MATCH_STEM = 1u << 2, /* the file name without folder and ".md" */
};

/* What full-text candidates to find: words, never query syntax (the
 * backend quotes each term, so no client text becomes an operator). */
struct store_match_query {
    enum match_index index;           /* which index to look in */
    const char *const *terms;         /* n_terms words (tokenizer output), borrowed */
    size_t n_terms;                   /* 1 or more */
    enum match_op op;                 /* how the terms combine */
    int prefix;                       /* 1: each term matches words it begins */
    unsigned fields;                  /* 0: anywhere; else MATCH_* bits: in each of them */
    const struct knowledge_filter *f; /* types and category (may be NULL); its limit is unused */
    long limit;                       /* at most this many rows */
    long long below;                  /* > 0: only seq below it */
};

/* Full-text candidates: active entries of the space matching q (in its
 * index, with its filter's types and category), newest first (by seq), at
 * most q->limit, only those with seq below q->below when it is > 0. *last
 * (may be NULL) receives the seq of the last row, 0 when none. each()
 * returning non-zero stops the scan. */
STORE_MUST_CHECK int store_knowledge_match(struct store *st, const char *space,
                                           const struct store_match_query *q, long long *last,
                                           int (*each)(const struct match_row *, void *),
                                           void *ctx);

/* SQLite's full-text indexes kept in few segments (fts_compact.c), from the
 * job thread: one merge step (one short write transaction) when an index
 * holds more than one segment, no other connection wrote for a second and
 * the time share allows; 1 when it did a step, 0 when there was nothing to
 * do yet. PostgreSQL: always 0. */
int store_fts_compact(struct store *st);
/* The segments of full-text index ("knowledge_fts", "knowledge_head"): -1
 * when it cannot tell, 0 on PostgreSQL. */
long store_fts_segments(struct store *st, const char *index);

/* The BM25F statistics of a space (search_index.c): its active entries and
 * field lengths into *stats, and the document frequency of each of
 * terms[0..n) into df[0..n) (0 when no entry holds it). */
STORE_MUST_CHECK int store_search_stats(struct store *st, const char *space,
                                        const char *const *terms, size_t n,
                                        struct bm25_stats *stats, long long *df);

/* The search index's changes (search_index.c), for a process that holds a
 * space's index in memory (service/lindex.c): the space's stamp (0: it
 * never changed) and the floor of its log (a reader behind it loads anew). */
STORE_MUST_CHECK int store_search_stamp(struct store *st, const char *space, long long *stamp,
                                        long long *floor);
/* Each search row of the space (after < 0), or each entry logged at a stamp
 * above `after`, in stamp order, to each(seq, stamp, row, ctx): row NULL
 * when the entry is no longer in the space's index; the row's seq is seq,
 * its stamp 0 in a whole load. A non-zero return stops. */
STORE_MUST_CHECK int store_search_docs(struct store *st, const char *space, long long after,
                                       int (*each)(long long seq, long long stamp,
                                                   const struct match_row *row, void *ctx),
                                       void *ctx);

struct knowledge_revision {
    long version;
    const char *document; /* JSON snapshot of the entry at that version */
    const char *actor;
    const char *reason;
    const char *created_at;
};
/* Revisions of an entry of the space (deleted entries included), newest first. */
STORE_MUST_CHECK int
store_knowledge_revisions_each(struct store *st, const char *space, const char *id,
                               int (*each)(const struct knowledge_revision *, void *), void *ctx);
/* Restore the entry to the snapshot of `version` (a deleted entry comes back),
 * as a new revision. STORE_CONFLICT when its path is now taken or clashes. */
STORE_MUST_CHECK int store_knowledge_revert(struct store *st, const char *space, const char *id,
                                            long version, const char *actor);

/* ---- traces and the knowledge log ---- */

struct trace_info {
    const char *trace_id;
    const char *task;
    const char *created_at;
    long injections, pending;
    long counts[5]; /* by eval status: irrelevant, unused, helpful, harmful, neutral */
};

/* The five eval statuses, in the order of trace_info.counts. */
extern const char *const store_eval_statuses[5];

/* Create the trace if missing; a non-NULL task replaces the stored one.
 * *created says whether it is new. */
STORE_MUST_CHECK int store_trace_put(struct store *st, const char *space, const char *trace_id,
                                     const char *task, int *created);
/* One trace with its counts, passed to each; STORE_NOT_FOUND when unknown. */
STORE_MUST_CHECK int store_trace_get(struct store *st, const char *space, const char *trace_id,
                                     void (*each)(const struct trace_info *, void *), void *ctx);
/* Traces of the space, newest first, with counts; *total counts them all. */
STORE_MUST_CHECK int store_traces_list(struct store *st, const char *space, long limit, long offset,
                                       void (*each)(const struct trace_info *, void *), void *ctx,
                                       long *total);

struct log_entry {
    long id;
    const char *trace_id;
    const char *knowledge_id;
    const char *goal_id;
    long injected_at_sequence;
    const char *injected_at;
    const char *task;
    const char *content;
    const char *eval_status; /* NULL while pending */
    const char *eval_reason;
    const char *evaluated_at;
    const char *evaluated_at_trigger;
};

/* Log the pending proposal id as injected into the trace (an opted-in
 * search: include_pending), with its task and content as the reader was
 * given them; STORE_NOT_FOUND when it is not a pending proposal of space. */
STORE_MUST_CHECK int store_log_add_proposal(struct store *st, const char *space,
                                            const char *trace_id, const char *id,
                                            const char *goal_id, long sequence, const char *task,
                                            const char *content, long *log_id);
/* Log an injection of an active entry into a trace (created if missing):
 * task is the entry's scenario, content its first 500 characters.
 * STORE_NOT_FOUND when the entry is not an active one of the space. */
STORE_MUST_CHECK int store_log_add(struct store *st, const char *space, const char *trace_id,
                                   const char *knowledge_id, const char *goal_id, long sequence,
                                   long *log_id);
/* The log of a trace in injection order (only pending entries with
 * pending_only): at most limit entries (-1: all) after the first offset,
 * and in *total (when not NULL) how many there are in all.
 * STORE_NOT_FOUND when the trace is unknown. */
STORE_MUST_CHECK int store_log_each(struct store *st, const char *space, const char *trace_id,
                                    int pending_only, long limit, long offset,
                                    void (*each)(const struct log_entry *, void *), void *ctx,
                                    long *total);
/* The latest injections of one entry (newest first, at most limit). */
STORE_MUST_CHECK int store_log_of_entry(struct store *st, const char *knowledge_id, long limit,
                                        void (*each)(const struct log_entry *, void *), void *ctx);
/* Record an evaluation on the most recent pending injection of knowledge_id
 * in the trace (largest sequence, then latest), and roll it up into the entry
 * at most once per trace and status: helpful/harmful add a case (and count),
 * irrelevant/unused/neutral count in metrics. *log_id receives the entry
 * updated; STORE_NOT_FOUND when no pending injection matches. */
STORE_MUST_CHECK int store_log_evaluate(struct store *st, const char *space, const char *trace_id,
                                        const char *knowledge_id, const char *status,
                                        const char *reason, const char *trigger, long *log_id,
                                        int *rolled_up);

/* ---- browser logins (cookie sessions) ---- */

/* Remember a login: the hash of its cookie value, the token it came from,
 * its CSRF token; it expires after lifetime_seconds. */
STORE_MUST_CHECK int store_login_insert(struct store *st, const unsigned char hash[32],
                                        const char *token_id, const char *csrf,
                                        long lifetime_seconds);
/* The token (revoked ones included) and CSRF token of an unexpired login. */
STORE_MUST_CHECK int store_login_get(struct store *st, const unsigned char hash[32],
                                     struct token_record *token, char **csrf);
STORE_MUST_CHECK int store_login_delete(struct store *st, const unsigned char hash[32]);

/* ---- analysis sessions (the save-experience flow) ---- */

struct session_info {
    const char *id;
    const char *title;
    const char *document; /* JSON text; NULL in lists */
    const char *created_at;
    const char *updated_at;
};
/* Create or replace a session of the space. */
STORE_MUST_CHECK int store_session_put(struct store *st, const char *space, const char *id,
                                       const char *title, const char *document);
/* Replace a session only if its updated_at (microseconds) is still
 * expected_updated_at; STORE_CONFLICT when it changed or is gone. */
STORE_MUST_CHECK int store_session_put_if(struct store *st, const char *space, const char *id,
                                          const char *title, const char *document,
                                          const char *expected_updated_at);
STORE_MUST_CHECK int store_session_get(struct store *st, const char *space, const char *id,
                                       void (*each)(const struct session_info *, void *),
                                       void *ctx);
/* Sessions of the space, most recently updated first (without documents). */
STORE_MUST_CHECK int store_session_list(struct store *st, const char *space,
                                        void (*each)(const struct session_info *, void *),
                                        void *ctx);
STORE_MUST_CHECK int store_session_delete(struct store *st, const char *space, const char *id);

/* ---- the LLM usage ledger ---- */

/* Record one LLM call: outcome is "ok" or its LLM_* error code. */
STORE_MUST_CHECK int store_llm_call_add(struct store *st, const char *space, const char *purpose,
                                        const char *model, long prompt_tokens,
                                        long completion_tokens, long latency_ms,
                                        const char *outcome);

struct llm_usage {
    const char *purpose, *model;
    long calls, errors, prompt_tokens, completion_tokens, latency_ms;
};
/* Sums per purpose and model of the space's calls since a time ("" = all). */
STORE_MUST_CHECK int store_llm_usage(struct store *st, const char *space, const char *since,
                                     void (*each)(const struct llm_usage *, void *), void *ctx);

/* ---- Idempotency-Keys of creates ---- */

/* How long a key holds: a retry within it gets the first answer's entry. */
#define IDEMPOTENCY_HOURS 24
#define IDEMPOTENCY_DIGEST_HEX 65 /* a request digest in hex, with its NUL */
/* The digest of the request a key of the space came with, and the entry it
 * made (*knowledge_id, the caller frees); STORE_NOT_FOUND when the key is
 * unknown or older than IDEMPOTENCY_HOURS. */
STORE_MUST_CHECK int store_idempotency_get(struct store *st, const char *space, const char *key,
                                           char digest[IDEMPOTENCY_DIGEST_HEX],
                                           char **knowledge_id);
/* Remember a key (in the caller's transaction, with the entry it made);
 * STORE_CONFLICT when the space holds it already (a request at the same
 * time). Expired keys of every space are deleted on the way. */
STORE_MUST_CHECK int store_idempotency_put(struct store *st, const char *space, const char *key,
                                           const char *digest, const char *knowledge_id);

/* ---- background jobs ---- */

struct job_info {
    const char *id, *space, *kind, *status; /* queued, running, done, failed */
    long progress, total;
    const char *params, *result, *error; /* JSON texts; result/error NULL until done */
    const char *actor, *created_at, *updated_at;
};
/* Queue a job; STORE_CONFLICT when one of the space and kind is already
 * queued or running (at most one is: a unique index). */
STORE_MUST_CHECK int store_job_create(struct store *st, const char *id, const char *space,
                                      const char *kind, const char *params, const char *actor);
/* The space's queued or running job of kind; STORE_NOT_FOUND when none is. */
STORE_MUST_CHECK int store_job_open(struct store *st, const char *space, const char *kind,
                                    void (*each)(const struct job_info *, void *), void *ctx);
/* Replace a queued job's params; STORE_NOT_FOUND once it left the queue. */
STORE_MUST_CHECK int store_job_merge(struct store *st, const char *id, const char *params);
STORE_MUST_CHECK int store_job_get(struct store *st, const char *space, const char *id,
                                   void (*each)(const struct job_info *, void *), void *ctx);
/* The space's latest jobs, newest first. */
STORE_MUST_CHECK int store_job_list(struct store *st, const char *space, long limit,
                                    void (*each)(const struct job_info *, void *), void *ctx);
/* Jobs are claimed for a lease by a node (store_set_node, on the job
 * thread's connection): a claim and each progress report hold the job for
 * lease_seconds more; another node takes a running job over only once that
 * has run out. NULL node: claims of no node (tests, the CLI). */
void store_set_node(struct store *st, const char *node, long lease_seconds);
/* Take the oldest queued job (any space), or a running one whose lease ran
 * out, and mark it running for this node; STORE_NOT_FOUND when none waits. */
STORE_MUST_CHECK int store_job_claim(struct store *st,
                                     void (*each)(const struct job_info *, void *), void *ctx);
/* Report progress and renew the lease; STORE_NOT_FOUND when the job is no
 * longer this node's (taken over after its lease ran out): stop working on it. */
STORE_MUST_CHECK int store_job_progress(struct store *st, const char *id, long progress,
                                        long total);
/* End a job: status "done" with a result, or "failed" with an error;
 * STORE_NOT_FOUND when it is no longer this node's. A result or error that
 * cannot be stored (not valid UTF-8: no statement binds such text) ends the
 * job "failed" with a generic INTERNAL_ERROR instead of leaving it running. */
STORE_MUST_CHECK int store_job_finish(struct store *st, const char *id, const char *status,
                                      const char *result, const char *error);
/* At start: this node's jobs a crash or stop left running are queued again
 * (their finished steps are committed, so re-running them is safe), with
 * those of no node and any whose lease ran out; never another live node's. */
STORE_MUST_CHECK int store_job_requeue_running(struct store *st);

/* ---- embeddings: vectors and the queue of entries to embed ---- */

/* An entry waiting in the embed queue, with its current vector's model,
 * version and digest (model NULL when it has none). id and space are NULL
 * when the entry no longer exists; status is not "active" when it was
 * deleted or merged. Valid during the callback only. */
struct embed_todo {
    long long seq;
    const char *id, *space, *status;
    long version;
    const char *title, *scenario, *content_head;
    const char *model, *digest;
    long vector_version;
};
/* At most limit queued entries (of space, or of every space when NULL),
 * oldest first, each with the first head_chars characters of its content. */
STORE_MUST_CHECK int store_embed_take(struct store *st, const char *space, long limit,
                                      long head_chars,
                                      void (*each)(const struct embed_todo *, void *), void *ctx);
/* The space the queue's next batch is of, in turn: of the spaces with
 * entries queued, the first after `after` in name order, else (none after
 * it, or after NULL) the first; *space NULL when none is queued. The caller
 * frees *space. */
STORE_MUST_CHECK int store_embed_next_space(struct store *st, const char *after, char **space);
/* Queue every active entry (of space, or every space when NULL) without a
 * current vector of model; with force, every active entry of space (its
 * vectors are made again whatever their digest). */
STORE_MUST_CHECK int store_embed_fill(struct store *st, const char *space, const char *model,
                                      int force);
/* The queue is not claimed row by row: on PostgreSQL one node at a time
 * embeds, holding the turn, a lease of lease_ms in the server's clock (a
 * row, not a lock: a node frozen with it loses it when the lease runs out),
 * so several nodes never pay twice for one vector. Take it before a batch
 * and renew it (the same call) before each step a lease must cover; give it
 * back after. STORE_OK when this node holds it now; STORE_BUSY while another
 * node's lease runs, with its name in holder (holder_size bytes, cut) and
 * the ms its lease has left in *left_ms. Always STORE_OK on SQLite. */
STORE_MUST_CHECK int store_embed_turn_take(struct store *st, long lease_ms, char *holder,
                                           size_t holder_size, long *left_ms);
/* Give the turn back (its lease runs out now) when this node holds it. */
STORE_MUST_CHECK int store_embed_turn_give(struct store *st);
/* Entries of space waiting in the queue. */
STORE_MUST_CHECK int store_embed_queued(struct store *st, const char *space, long *n);
/* Store entry seq's vector (dim floats, dim 0 for "could not be embedded")
 * made by model from the text of its `version` with that digest, and take
 * the entry off the queue unless it changed since. */
STORE_MUST_CHECK int store_vector_put(struct store *st, long long seq, const char *space,
                                      const char *model, long version, const char *digest,
                                      const float *vec, int dim);
/* The entry's text did not change (same digest): record the version its
 * vector stands for and take it off the queue, unless it changed since. */
STORE_MUST_CHECK int store_vector_touch(struct store *st, long long seq, long version);
/* Take an entry off the queue without a vector (gone, or not active), unless
 * it changed since. */
STORE_MUST_CHECK int store_embed_done(struct store *st, long long seq, long version);
/* A space's active entries, and its vectors of model for them: how many
 * rows, how many of them real (dim > 0) and the dimension (0 when none). */
STORE_MUST_CHECK int store_vector_counts(struct store *st, const char *space, const char *model,
                                         long *entries, long *rows, long *vectors, long *dim);
/* A stored vector, for an in-memory index: vec holds dim floats as stored
 * (possibly unaligned: copy them out); dim 0 or status not "active" means
 * the entry has no vector any more. */
struct vector_row {
    long long seq, stamp;
    const char *id, *status;
    const void *vec;
    int dim;
};
/* The first `limit` of the space's vectors of model changed after stamp,
 * in stamp order. */
STORE_MUST_CHECK int store_vectors_since(struct store *st, const char *space, const char *model,
                                         long long stamp, long limit,
                                         void (*each)(const struct vector_row *, void *),
                                         void *ctx);
/* The dimension of model's stored vectors (0 when there is none). */
STORE_MUST_CHECK int store_vector_dim(struct store *st, const char *model, long *dim);
/* The highest stamp of every vector (0 when none): a change anywhere raises it. */
STORE_MUST_CHECK int store_vector_stamp(struct store *st, long long *stamp);

/* ---- operating: metrics and the audit log ---- */

struct metrics;
/* Count this connection's busy waits and retries in m (its thread's; may be NULL). */
void store_set_metrics(struct store *st, struct metrics *m);
/* Called with each audit row (time, space, actor, action, target) once it is
 * committed: at the outermost commit, or at once outside a transaction. */
typedef void (*store_audit_fn)(void *ctx, const char *ts, const char *space, const char *actor,
                               const char *action, const char *target);
void store_set_audit_hook(struct store *st, store_audit_fn hook, void *ctx);
/* SQLite's version text ("3.40.1"). */
const char *store_sqlite_version(void);
/* Every space with its active entries and traces, the most entries first. */
STORE_MUST_CHECK int store_space_counts(struct store *st,
                                        void (*each)(const char *space, long entries, long traces,
                                                     void *ctx),
                                        void *ctx);
/* Jobs counted by kind and status. */
STORE_MUST_CHECK int store_job_counts(struct store *st,
                                      void (*each)(const char *kind, const char *status, long count,
                                                   void *ctx),
                                      void *ctx);

/* The home screen's numbers for a space: active rules and experiences, its
 * traces, and those created at or after since (an ISO time text). */
struct store_overview_counts {
    long rules, experiences, traces, traces_since;
};
STORE_MUST_CHECK int store_overview_counts(struct store *st, const char *space, const char *since,
                                           struct store_overview_counts *out);
/* The home screen's lists: the latest changed active entries, the most
 * injected ones (knowledge log rows), the most harmful ones (harmful > 0). */
enum store_overview_list { OVERVIEW_RECENT, OVERVIEW_INJECTED, OVERVIEW_HARMFUL };
/* One entry of such a list; n is the injections or harmful verdicts (0 for
 * OVERVIEW_RECENT). Texts valid during the call. */
struct overview_row {
    const char *id, *category, *path, *title, *updated_at;
    long n;
};
STORE_MUST_CHECK int store_overview_list(struct store *st, const char *space,
                                         enum store_overview_list which, long limit,
                                         void (*each)(const struct overview_row *, void *),
                                         void *ctx);

/* Append to the audit trail (inside the caller's transaction if any). */
STORE_MUST_CHECK int store_audit(struct store *st, const char *space, const char *actor,
                                 const char *action, const char *target);

/* ---- changes.c: the knowledge's changes as they commit, and MCP subscriptions ---- */

/* A change of an entry a reader sees: created, updated or deleted (merged
 * away too); category and path before and after (a rename or move). */
struct store_change {
    const char *space, *id, *category, *path, *old_category, *old_path, *action;
};
typedef void (*store_change_fn)(void *arg, const struct store_change *c);

/* Start following the changes on this connection (its own: the stream
 * thread's), from now on: PostgreSQL LISTENs, SQLite notes its last row. */
STORE_MUST_CHECK int store_changes_follow(struct store *st);
/* The descriptor that becomes readable when a change may be waiting
 * (PostgreSQL's socket), or -1: look every few hundred ms (SQLite). */
int store_changes_fd(struct store *st);
/* Pass each change committed since the last call to fn, oldest first.
 * STORE_OK; STORE_UNAVAILABLE when some may have been missed (PostgreSQL's
 * session was lost and is followed anew, or SQLite's last 10,000 rows
 * passed us by: a bulk import) and the caller tells its readers to read
 * everything again. */
STORE_MUST_CHECK int store_changes_read(struct store *st, store_change_fn fn, void *arg);
/* Forget changes older than seconds (SQLite's rows; nothing on PostgreSQL). */
STORE_MUST_CHECK int store_changes_trim(struct store *st, long seconds);

/* A session's subscription to uri (kept for its token); STORE_QUOTA when
 * the token has max already. */
STORE_MUST_CHECK int store_sub_put(struct store *st, const char *space, const char *token_id,
                                   const char *session, const char *uri, long max);
STORE_MUST_CHECK int store_sub_delete(struct store *st, const char *token_id, const char *session,
                                      const char *uri);
/* Every subscription of the session (its end: DELETE /mcp). */
STORE_MUST_CHECK int store_sub_end(struct store *st, const char *token_id, const char *session);
/* Each (token id, session) subscribed to uri in space. */
STORE_MUST_CHECK int store_sub_match(struct store *st, const char *space, const char *uri,
                                     void (*each)(void *, const char *, const char *), void *arg);
/* The session has a stream open: its subscriptions are kept an hour more. */
STORE_MUST_CHECK int store_sub_touch(struct store *st, const char *token_id, const char *session);
/* Forget subscriptions not touched for seconds. */
STORE_MUST_CHECK int store_sub_expire(struct store *st, long seconds);

/* ---- the review queue (migration 16; service/review.c) ---- */

/* A proposal: a write held for review. Texts borrowed from the row (valid
 * during the callback) or, from store_proposal_get, owned by the caller
 * (store_proposal_release). knowledge_id and base_* are NULL / 0 for a
 * create; reasons is a JSON array text; decision .. result_id NULL while
 * undecided. */
struct proposal {
    char *id, *space, *kind, *state, *write_path, *knowledge_id;
    long base_version;
    char *category, *path, *document, *base_document, *token_id, *actor, *agent_id, *trace_id;
    char *source, *reasons, *created_at, *decision, *decision_reason, *decided_by, *decided_at;
    char *result_id;
};
/* Free what store_proposal_get filled. */
void store_proposal_release(struct proposal *p);
/* The review policy of a write by token_id (NULL: the space's own) into
 * *policy (the caller frees): the token's own when it was given one at its
 * creation, else the space's, else "off". */
STORE_MUST_CHECK int store_review_policy_get(struct store *st, const char *space,
                                             const char *token_id, char **policy);
/* Give the token token_id its own review policy (at its creation). */
STORE_MUST_CHECK int store_token_review_set(struct store *st, const char *token_id,
                                            const char *policy);
/* Set the space's review policy. */
STORE_MUST_CHECK int store_review_policy_set(struct store *st, const char *space,
                                             const char *policy, const char *actor);
/* Insert p (id, created_at and every NOT NULL text set by the caller). */
STORE_MUST_CHECK int store_proposal_insert(struct store *st, const struct proposal *p);
/* The proposal id of space into *p; STORE_NOT_FOUND when there is none. */
STORE_MUST_CHECK int store_proposal_get(struct store *st, const char *space, const char *id,
                                        struct proposal *p);
/* Call each with a page of the space's proposals in state (NULL: all),
 * oldest first, and their *total. */
STORE_MUST_CHECK int store_proposal_list(struct store *st, const char *space, const char *state,
                                         long limit, long offset,
                                         void (*each)(const struct proposal *, void *), void *ctx,
                                         long *total);
/* Decide the proposal id when it is still in state from (and of space):
 * its new state, decision, reason (may be NULL), the deciding actor and
 * the entry it made or changed (may be NULL). STORE_CONFLICT when it is
 * no longer in from (another decision won); STORE_NOT_FOUND when none. */
STORE_MUST_CHECK int store_proposal_decide(struct store *st, const char *space, const char *id,
                                           const char *from, const char *state,
                                           const char *decision, const char *reason,
                                           const char *actor, const char *result_id);
/* The space's pending and quarantined proposals. */
STORE_MUST_CHECK int store_proposal_counts(struct store *st, const char *space, long *pending,
                                           long *quarantined);
/* Every space's pending and quarantined proposals (the /metrics gauges). */
STORE_MUST_CHECK int store_proposal_totals(struct store *st, long *pending, long *quarantined);

/* ---- held slim merges (migration 19; service/slim.c, service/review.c) ---- */

/* A member of a slim_merge proposal: the entry and the version it was read
 * at; title, path, status and version are the entry's now (NULL / 0 when
 * it is gone). Texts borrowed, valid during the callback. */
struct proposal_member {
    const char *knowledge_id;
    long base_version;
    const char *title, *path, *status;
    long version;
};
/* Add a member to the proposal id (in the transaction that inserts it). */
STORE_MUST_CHECK int store_proposal_member_add(struct store *st, const char *space, const char *id,
                                               const char *knowledge_id, long base_version);
/* Call each with the members of the proposal id, by entry id. */
STORE_MUST_CHECK int store_proposal_members(struct store *st, const char *space, const char *id,
                                            void (*each)(const struct proposal_member *, void *),
                                            void *ctx);
/* The held (pending or quarantined) slim merge the entry is in, as survivor
 * or member, into *id (the caller frees); STORE_NOT_FOUND when none. */
STORE_MUST_CHECK int store_proposal_member_held(struct store *st, const char *space,
                                                const char *knowledge_id, char **id);

/* The conflict item (a proposal of kind conflict, service/conflictitems.c)
 * of the unordered pair a, b into *id and *state (the caller frees both):
 * the pending one, else one dismissed while both sides are still at the
 * versions it was made at; STORE_NOT_FOUND when neither. */
STORE_MUST_CHECK int store_conflict_item_find(struct store *st, const char *space, const char *a,
                                              const char *b, char **id, char **state);

/* ---- typed links (migration 20; service/links.c) ---- */

/* A link's key: from_id <type> to_id. Strings borrowed. */
struct link_key {
    const char *from_id, *to_id, *type;
};
/* A stored link's other columns (owned; link_row_release frees them). */
struct link_row {
    char *actor, *reason, *created_at;
};
void link_row_release(struct link_row *r);
/* An entry's link as store_links_of reads it: direction "out" (the entry
 * is from_id) or "in", and the other entry as it is now (any status).
 * Texts borrowed, valid during the callback. */
struct knowledge_link {
    const char *from_id, *to_id, *type, *actor, *reason, *created_at, *direction;
    const char *other_id, *other_title, *other_path, *other_category, *other_status;
};
/* Add the link key of the space (in the caller's transaction; the entries
 * are the caller's to check): *added 0 when it existed, which is left as
 * it was. */
STORE_MUST_CHECK int store_link_add(struct store *st, const char *space, const struct link_key *key,
                                    const char *actor, const char *reason, const char *now,
                                    int *added);
/* The link key into *out (caller releases); STORE_NOT_FOUND when none. */
STORE_MUST_CHECK int store_link_get(struct store *st, const char *space, const struct link_key *key,
                                    struct link_row *out);
/* Remove the link key: *removed 0 when there was none. */
STORE_MUST_CHECK int store_link_remove(struct store *st, const char *space,
                                       const struct link_key *key, int *removed);
/* Call each with at most limit links of entry id, both ways, oldest first
 * (then by type). */
STORE_MUST_CHECK int store_links_of(struct store *st, const char *space, const char *id, long limit,
                                    void (*each)(const struct knowledge_link *, void *), void *ctx);
/* For each of ids[0..n), in one read: call each(i, other_id, ctx) with the
 * ids of the active entries linked to ids[i] by contradicts, either way, by
 * id. */
STORE_MUST_CHECK int store_links_contradicts_of(struct store *st, const char *space,
                                                const char *const *ids, size_t n,
                                                void (*each)(size_t, const char *other_id, void *),
                                                void *ctx);
/* Retire entry old (active) because entry by (active) supersedes it: old
 * becomes a tombstone (status merged, merged_into by; counters and cases
 * untouched) with revision "supersede" and an audit row, in the caller's
 * transaction or its own. STORE_NOT_FOUND when either is not active,
 * STORE_CONFLICT when old changed since it was checked.
 * Reverting old (store_knowledge_revert) brings it back and drops the
 * supersedes links to it. */
STORE_MUST_CHECK int store_knowledge_supersede(struct store *st, const char *space, const char *by,
                                               const char *old, const char *actor);

/* ---- an entry's time (migration 21; service/timing.c) ---- */

/* An entry's expiry, review-by date ("YYYY-MM-DDTHH:MM:SSZ", NULL: none)
 * and pin. Owned when read (knowledge_time_release frees them). */
struct knowledge_time {
    char *expires_at, *review_after;
    int pinned;
};
void knowledge_time_release(struct knowledge_time *t);
/* Set entry id's time (all NULL and 0 removes its row), in the caller's
 * transaction or its own; the entry is the caller's to check. */
STORE_MUST_CHECK int store_time_set(struct store *st, const char *space, const char *id,
                                    const struct knowledge_time *t);
/* Entry id's time into *out (caller releases); all NULL and 0 when unset. */
STORE_MUST_CHECK int store_time_get(struct store *st, const char *space, const char *id,
                                    struct knowledge_time *out);

/* What store_knowledge_read reads beside the entry: its latest cases_limit
 * cases of each kind (oldest first) to each_case with helpful or harmful, its
 * latest log_limit injections (newest first) to each_log with log, and its
 * time into time (caller releases; all NULL and 0 when unset). A NULL
 * callback skips its rows. */
struct knowledge_parts {
    long cases_limit, log_limit;
    int (*each_case)(const struct knowledge_case *, void *);
    void *helpful, *harmful;
    void (*each_log)(const struct log_entry *, void *);
    void *log;
    struct knowledge_time time;
};
/* Entry id of space (any status when any_status) into *out, with its parts,
 * by one statement: one round trip and one snapshot on PostgreSQL. */
STORE_MUST_CHECK int store_knowledge_read(struct store *st, const char *space, const char *id,
                                          int any_status, struct knowledge *out,
                                          struct knowledge_parts *parts);
/* Call each with the ids of the space's entries expired at now (any status;
 * one indexed read, no rows in a space that expires nothing). This
 * connection keeps the last space's ids while the generation stays and the
 * next expiry has not come: then the read is the generation's only. */
STORE_MUST_CHECK int store_time_expired(struct store *st, const char *space, const char *now,
                                        void (*each)(const char *id, void *), void *ctx);
/* The same ids, sorted (strcmp), as *ids[0..*n): borrowed, valid until the
 * next call of either on this connection; gen: the generation the caller
 * read (store_generation) in this snapshot. */
STORE_MUST_CHECK int store_time_expired_view(struct store *st, const char *space, const char *now,
                                             uint64_t gen, const char *const **ids, size_t *n);
/* The first expiry after now in any space into *next (caller frees; NULL
 * when none): the answer cache's horizon. */
STORE_MUST_CHECK int store_time_next_expiry(struct store *st, const char *now, char **next);
/* A stale entry (active, expired or due for review at now): texts borrowed,
 * valid during the callback. */
struct stale_entry {
    const char *id, *title, *category, *path, *expires_at, *review_after;
    int pinned;
};
/* Call each with a page of the space's stale entries at now, the expired
 * first (oldest expiry first), and their count into *total. */
STORE_MUST_CHECK int store_time_stale(struct store *st, const char *space, const char *now,
                                      long limit, long offset,
                                      void (*each)(const struct stale_entry *, void *), void *ctx,
                                      long *total);
/* Call each with the spaces (at most 50) that have an entry past
 * review_after at now, whatever its state (the sweep checks). */
STORE_MUST_CHECK int store_time_due_spaces(struct store *st, const char *now,
                                           void (*each)(const char *space, void *), void *ctx);
/* Call each with at most limit ids of the space's active, unexpired entries
 * past review_after at now that have no pending review_due proposal. */
STORE_MUST_CHECK int store_time_review_due(struct store *st, const char *space, const char *now,
                                           long limit, void (*each)(const char *id, void *),
                                           void *ctx);

/* ---- promotion on evidence (migration 18; service/promote.c) ---- */

/* The helpful verdicts of distinct traces that approve a pending proposal
 * when the space says nothing. */
#define REVIEW_PROMOTE_DEFAULT 3
/* ---- evidence ageing (migration 21; service/evidence.c) ---- */

/* The space's half-life of a verdict's weight in days (0: ageing off, also
 * when the space never set one). */
STORE_MUST_CHECK int store_evidence_policy_get(struct store *st, const char *space,
                                               long *half_life_days);
/* Set it; actor is who did. */
STORE_MUST_CHECK int store_evidence_policy_set(struct store *st, const char *space,
                                               long half_life_days, const char *actor);
/* Call each with the counted verdicts (knowledge_cases) of the entries
 * named in ids_json (a JSON list of ids, text) of space, by the hour they
 * were counted in: id, kind (helpful or harmful), hour ("YYYY-MM-DD HH" or
 * with a T, as stored) and how many; all borrowed for the call. */
STORE_MUST_CHECK int store_evidence_verdicts(
    struct store *st, const char *space, const char *ids_json,
    void (*each)(const char *id, const char *kind, const char *hour, long n, void *ctx), void *ctx);

/* The most a space may ask for. */
#define REVIEW_PROMOTE_MAX 100
/* The space's number of helpful verdicts that approve (0: none do). */
STORE_MUST_CHECK int store_review_promote_get(struct store *st, const char *space, long *after);
/* Set it (a space without a policy keeps policy off). */
STORE_MUST_CHECK int store_review_promote_set(struct store *st, const char *space, long after,
                                              const char *actor);
/* Call each with the space's newest pending creates and changes, at most
 * limit: id, kind, knowledge_id, category, path and document only (borrowed,
 * valid during the call). */
STORE_MUST_CHECK int store_proposal_pending_docs(struct store *st, const char *space, long limit,
                                                 void (*each)(const struct proposal *, void *),
                                                 void *ctx);
/* Call each with the helpful and harmful verdicts the traces gave the
 * proposal id (its knowledge log rows), oldest first, at most limit. */
STORE_MUST_CHECK int store_proposal_verdicts(struct store *st, const char *space, const char *id,
                                             long limit,
                                             void (*each)(const char *trace_id, const char *status,
                                                          const char *reason, void *ctx),
                                             void *ctx);

#endif
