/* store/migrate.c: the numbered schema migrations (tracked by user_version)
 * and the copy made before an older database is migrated. */
#include "store/store_int.h"
#include "store/sql_parts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- schema: numbered migrations, applied in order, tracked by user_version ---- */

/* A row trigger that raises the cache generation when `table` changes by
 * `event` (SQLite has no statement triggers; the row is hot in the
 * writer's transaction, a raise costs about a microsecond). */
#define GENERATION_TRIGGER(table, event, tag)                                                      \
    "CREATE TRIGGER IF NOT EXISTS " table "_generation_" tag " AFTER " event " ON " table          \
    " BEGIN UPDATE generation SET n = n + 1; END;"
#define GENERATION_TRIGGERS(table)                                                                 \
    GENERATION_TRIGGER(table, "INSERT", "i")                                                       \
    GENERATION_TRIGGER(table, "UPDATE", "u") GENERATION_TRIGGER(table, "DELETE", "d")

/* Migration 15: a row of changes for each change of an entry a reader
 * sees (sql_parts.h's CHANGE_WHEN), in commit order (SQLite has one writer
 * at a time); category and path before and after, for a rename. The table
 * keeps the last CHANGES_KEPT rows whatever runs (a stream thread trims by
 * age too; an import with no server running leaves no more than these): a
 * reader that fell further behind finds a gap and reads everything again
 * (store_changes_read). */
#define CHANGES_KEPT "10000"
// clang-format off
#define CHANGE_ROW(space, id, cat, path, ocat, opath, action)                                      \
    " BEGIN INSERT INTO changes(space, knowledge_id, category, path, old_category, old_path,"     \
    " action, at) VALUES(" space ", " id ", " cat ", " path ", " ocat ", " opath ", " action       \
    ", strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));"                                                    \
    " DELETE FROM changes WHERE seq <= last_insert_rowid() - " CHANGES_KEPT "; END;"
#define CHANGES_TRIGGERS_SQL                                                                       \
    "CREATE TABLE IF NOT EXISTS changes(seq INTEGER PRIMARY KEY AUTOINCREMENT,"                   \
    " space TEXT NOT NULL, knowledge_id TEXT NOT NULL, category TEXT NOT NULL,"                   \
    " path TEXT NOT NULL, old_category TEXT NOT NULL, old_path TEXT NOT NULL,"                    \
    " action TEXT NOT NULL, at TEXT NOT NULL);"                                                   \
    "CREATE TRIGGER IF NOT EXISTS knowledge_changes_i AFTER INSERT ON knowledge"                  \
    " WHEN NEW.status = 'active'"                                                                  \
    CHANGE_ROW("NEW.space", "NEW.id", "NEW.category", "NEW.path", "NEW.category", "NEW.path",     \
               "'created'")                                                                        \
    "CREATE TRIGGER IF NOT EXISTS knowledge_changes_u AFTER UPDATE ON knowledge"                  \
    " WHEN " CHANGE_WHEN("OLD", "NEW")                                                           \
    CHANGE_ROW("NEW.space", "NEW.id", "NEW.category", "NEW.path", "OLD.category", "OLD.path",     \
               CHANGE_ACTION("OLD", "NEW"))                                                        \
    "CREATE TRIGGER IF NOT EXISTS knowledge_changes_d AFTER DELETE ON knowledge"                  \
    " WHEN OLD.status = 'active'"                                                                  \
    CHANGE_ROW("OLD.space", "OLD.id", "OLD.category", "OLD.path", "OLD.category", "OLD.path",     \
               "'deleted'")
// clang-format on

// clang-format off
#define PROPOSAL_CHANGES_SQL                                                                       \
    "CREATE TRIGGER IF NOT EXISTS proposals_changes_i AFTER INSERT ON proposals"                  \
    CHANGE_ROW("NEW.space", "NEW.id", "NEW.category", "NEW.path", "NEW.category", "NEW.path",     \
               "'proposed'")                                                                       \
    "CREATE TRIGGER IF NOT EXISTS proposals_changes_u AFTER UPDATE OF state ON proposals"         \
    " WHEN OLD.state <> NEW.state"                                                                 \
    CHANGE_ROW("NEW.space", "NEW.id", "NEW.category", "NEW.path", "NEW.category", "NEW.path",     \
               "'decided'")
// clang-format on

/* Over the 4095 characters C requires of a string literal (migration 14):
 * compilers that take it (gcc, clang) warn under -Wpedantic, as in pg_sql.c. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
static const char *const migrations[] = {
    /* 1: foundation */
    "CREATE TABLE spaces(name TEXT PRIMARY KEY, created_at TEXT NOT NULL);"
    "CREATE TABLE tokens("
    "  id TEXT PRIMARY KEY, hash BLOB NOT NULL, space TEXT NOT NULL REFERENCES spaces(name),"
    "  role TEXT NOT NULL CHECK(role IN ('admin','editor','agent','reader')),"
    "  label TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL, last_used_at TEXT,"
    "  revoked_at TEXT);"
    "CREATE TABLE knowledge("
    "  seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, space TEXT NOT NULL,"
    "  category TEXT NOT NULL CHECK(category IN ('rules','experiences')),"
    "  path TEXT NOT NULL, title TEXT NOT NULL, description TEXT NOT NULL DEFAULT '',"
    "  tags TEXT NOT NULL DEFAULT '[]', types INTEGER NOT NULL DEFAULT 0,"
    "  scenario TEXT NOT NULL DEFAULT '', content TEXT NOT NULL DEFAULT '',"
    "  always_apply INTEGER NOT NULL DEFAULT 1, source TEXT NOT NULL DEFAULT 'manual',"
    "  urls TEXT NOT NULL DEFAULT '[]', agent_id TEXT NOT NULL DEFAULT '',"
    "  message_id TEXT NOT NULL DEFAULT '', source_ts TEXT NOT NULL DEFAULT '',"
    "  score INTEGER NOT NULL DEFAULT 3 CHECK(score BETWEEN 1 AND 5),"
    "  helpful INTEGER NOT NULL DEFAULT 0, harmful INTEGER NOT NULL DEFAULT 0,"
    "  irrelevant INTEGER NOT NULL DEFAULT 0, unused INTEGER NOT NULL DEFAULT 0,"
    "  neutral INTEGER NOT NULL DEFAULT 0,"
    "  status TEXT NOT NULL DEFAULT 'active' CHECK(status IN ('active','deleted','merged')),"
    "  merged_into TEXT, version INTEGER NOT NULL DEFAULT 1,"
    "  created_at TEXT NOT NULL, updated_at TEXT NOT NULL,"
    "  meta TEXT NOT NULL DEFAULT '{}', document TEXT NOT NULL DEFAULT '');"
    "CREATE UNIQUE INDEX knowledge_active_path ON knowledge(space, category, path)"
    "  WHERE status = 'active';"
    "CREATE INDEX knowledge_space_status ON knowledge(space, status, seq);"
    "CREATE TABLE knowledge_cases("
    "  seq INTEGER PRIMARY KEY, space TEXT NOT NULL, knowledge_id TEXT NOT NULL,"
    "  kind TEXT NOT NULL CHECK(kind IN ('helpful','harmful')), case_id TEXT NOT NULL,"
    "  scenario TEXT NOT NULL DEFAULT '', result TEXT NOT NULL DEFAULT '',"
    "  agent_id TEXT NOT NULL DEFAULT '', trace_id TEXT NOT NULL DEFAULT '',"
    "  goal_id TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL,"
    "  UNIQUE(knowledge_id, kind, case_id));"
    "CREATE TABLE knowledge_revisions("
    "  space TEXT NOT NULL, knowledge_id TEXT NOT NULL, version INTEGER NOT NULL,"
    "  document TEXT NOT NULL, actor TEXT NOT NULL, reason TEXT NOT NULL,"
    "  created_at TEXT NOT NULL, PRIMARY KEY(knowledge_id, version)) WITHOUT ROWID;"
    "CREATE TABLE knowledge_feedback("
    "  seq INTEGER PRIMARY KEY, space TEXT NOT NULL, knowledge_id TEXT NOT NULL,"
    "  feedback TEXT NOT NULL, actor TEXT NOT NULL,"
    "  status TEXT NOT NULL DEFAULT 'pending', created_at TEXT NOT NULL);"
    "CREATE INDEX knowledge_feedback_entry ON knowledge_feedback(knowledge_id);"
    "CREATE TABLE audit("
    "  seq INTEGER PRIMARY KEY, ts TEXT NOT NULL, space TEXT NOT NULL,"
    "  actor TEXT NOT NULL, action TEXT NOT NULL, target TEXT NOT NULL DEFAULT '');",

    /* 2: the full-text index of active entries, kept in step by triggers. It
     * is contentless (the text lives in knowledge) and uses the "knowhub"
     * tokenizer registered at open, the same one queries use. Counter and
     * score updates do not touch it (UPDATE OF lists the indexed columns). */
    "CREATE VIRTUAL TABLE knowledge_fts USING fts5("
    "  title, tags, stem, scenario, body, content='', tokenize='knowhub');"
    "CREATE TRIGGER knowledge_fts_insert AFTER INSERT ON knowledge"
    "  WHEN new.status = 'active' BEGIN"
    "  INSERT INTO knowledge_fts(rowid, title, tags, stem, scenario, body)"
    "    VALUES(new.seq, new.title, new.tags, " STEM_SQL(
        "new.path") ", new.scenario, new.content);"
                    "END;"
                    "CREATE TRIGGER knowledge_fts_update"
                    "  AFTER UPDATE OF title, tags, path, scenario, content, status ON knowledge "
                    "BEGIN"
                    "  INSERT INTO knowledge_fts(knowledge_fts, rowid, title, tags, stem, "
                    "scenario, body)"
                    "    SELECT 'delete', old.seq, old.title, old.tags, " STEM_SQL(
                        "old.path") ","
                                    "      old.scenario, old.content WHERE old.status = 'active';"
                                    "  INSERT INTO knowledge_fts(rowid, title, tags, stem, "
                                    "scenario, body)"
                                    "    SELECT new.seq, new.title, new.tags, " STEM_SQL(
                                        "new.path") ", new.scenario,"
                                                    "      new.content WHERE new.status = 'active';"
                                                    "END;"
                                                    "INSERT INTO knowledge_fts(rowid, title, tags, "
                                                    "stem, scenario, body)"
                                                    "  SELECT seq, title, tags, " STEM_SQL(
                                                        "path") ", scenario, content FROM knowledge"
                                                                "  WHERE status = 'active';",

    /* 3: traces and their knowledge log. */
    "CREATE TABLE traces("
    "  space TEXT NOT NULL, trace_id TEXT NOT NULL, task TEXT NOT NULL DEFAULT '',"
    "  created_at TEXT NOT NULL, PRIMARY KEY(space, trace_id)) WITHOUT ROWID;"
    "CREATE INDEX traces_created ON traces(space, created_at);"
    "CREATE TABLE knowledge_log("
    "  id INTEGER PRIMARY KEY, space TEXT NOT NULL, trace_id TEXT NOT NULL,"
    "  knowledge_id TEXT NOT NULL, goal_id TEXT NOT NULL DEFAULT '',"
    "  injected_at_sequence INTEGER NOT NULL DEFAULT 0, injected_at TEXT NOT NULL,"
    "  task TEXT NOT NULL DEFAULT '', content TEXT NOT NULL DEFAULT '',"
    "  eval_status TEXT CHECK(eval_status IN"
    "    ('irrelevant','unused','helpful','harmful','neutral')),"
    "  eval_reason TEXT, evaluated_at TEXT, evaluated_at_trigger TEXT);"
    "CREATE INDEX knowledge_log_trace ON knowledge_log(space, trace_id, id);"
    "CREATE INDEX knowledge_log_entry ON knowledge_log(knowledge_id, id);"
    "CREATE TABLE trace_rollups("
    "  space TEXT NOT NULL, trace_id TEXT NOT NULL, knowledge_id TEXT NOT NULL,"
    "  status TEXT NOT NULL, created_at TEXT NOT NULL,"
    "  PRIMARY KEY(space, trace_id, knowledge_id, status)) WITHOUT ROWID;",

    /* 4: browser logins (cookie sessions) and analysis sessions. */
    "CREATE TABLE logins("
    "  hash BLOB PRIMARY KEY, token_id TEXT NOT NULL REFERENCES tokens(id),"
    "  csrf TEXT NOT NULL, created_at TEXT NOT NULL, expires_at TEXT NOT NULL) WITHOUT ROWID;"
    "CREATE TABLE sessions("
    "  space TEXT NOT NULL, id TEXT NOT NULL, title TEXT NOT NULL DEFAULT '',"
    "  document TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,"
    "  PRIMARY KEY(space, id)) WITHOUT ROWID;",

    /* 5: the LLM usage ledger and background jobs. */
    "CREATE TABLE llm_calls("
    "  id INTEGER PRIMARY KEY, space TEXT NOT NULL, purpose TEXT NOT NULL, model TEXT NOT NULL,"
    "  prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0,"
    "  latency_ms INTEGER NOT NULL DEFAULT 0, outcome TEXT NOT NULL, created_at TEXT NOT NULL);"
    "CREATE INDEX llm_calls_space ON llm_calls(space, created_at);"
    "CREATE TABLE jobs("
    "  id TEXT PRIMARY KEY, space TEXT NOT NULL, kind TEXT NOT NULL,"
    "  status TEXT NOT NULL CHECK(status IN ('queued','running','done','failed')),"
    "  progress INTEGER NOT NULL DEFAULT 0, total INTEGER NOT NULL DEFAULT 0,"
    "  params TEXT NOT NULL DEFAULT '{}', result TEXT, error TEXT, actor TEXT NOT NULL,"
    "  created_at TEXT NOT NULL, updated_at TEXT NOT NULL);"
    "CREATE INDEX jobs_status ON jobs(status, created_at);"
    "CREATE INDEX jobs_space ON jobs(space, created_at);",

    /* 6: a second, small full-text index over the head fields (title, tags,
     * stem) that searches visit first: its doclists hold only entries with
     * the word in their head, so the common queries read a fraction of
     * knowledge_fts; prefix indexes serve 1-character (a lone Han character)
     * and 3-character ("qua") prefixes without merging doclists. */
    "CREATE VIRTUAL TABLE knowledge_head USING fts5("
    "  title, tags, stem, content='', tokenize='knowhub', prefix='1 3');"
    "CREATE TRIGGER knowledge_head_insert AFTER INSERT ON knowledge"
    "  WHEN new.status = 'active' BEGIN"
    "  INSERT INTO knowledge_head(rowid, title, tags, stem)"
    "    VALUES(new.seq, new.title, new.tags, " STEM_SQL(
        "new.path") ");"
                    "END;"
                    "CREATE TRIGGER knowledge_head_update AFTER UPDATE OF title, tags, path, "
                    "status ON knowledge"
                    "  BEGIN"
                    "  INSERT INTO knowledge_head(knowledge_head, rowid, title, tags, stem)"
                    "    SELECT 'delete', old.seq, old.title, old.tags, " STEM_SQL(
                        "old.path") "    WHERE old.status = 'active';"
                                    "  INSERT INTO knowledge_head(rowid, title, tags, stem)"
                                    "    SELECT new.seq, new.title, new.tags, " STEM_SQL(
                                        "new.path") "    WHERE new.status = 'active';"
                                                    "END;"
                                                    "INSERT INTO knowledge_head(rowid, title, "
                                                    "tags, stem)"
                                                    "  SELECT seq, title, tags, " STEM_SQL(
                                                        "path") " FROM knowledge WHERE status = "
                                                                "'active';",

    /* 7: embeddings (docs/search.md "By meaning"). One vector per entry, of
     * the model that made it, with the entry version and a digest of the
     * text it was made from; `stamp` grows with every change (and with the
     * entry's status) so a process's in-memory index loads only what
     * changed. embed_queue holds the entries whose text changed since. */
    "CREATE TABLE vectors("
    "  knowledge_seq INTEGER PRIMARY KEY, space TEXT NOT NULL, model TEXT NOT NULL,"
    "  version INTEGER NOT NULL, digest TEXT NOT NULL, dim INTEGER NOT NULL,"
    "  vec BLOB NOT NULL, stamp INTEGER NOT NULL, updated_at TEXT NOT NULL);"
    "CREATE INDEX vectors_stamp ON vectors(stamp);"
    "CREATE INDEX vectors_space ON vectors(space, model);"
    "CREATE TABLE embed_queue(knowledge_seq INTEGER PRIMARY KEY);"
    "CREATE TRIGGER embed_queue_insert AFTER INSERT ON knowledge WHEN new.status = 'active'"
    "  BEGIN INSERT OR IGNORE INTO embed_queue(knowledge_seq) VALUES(new.seq); END;"
    "CREATE TRIGGER embed_queue_update AFTER UPDATE OF title, scenario, content, status"
    "  ON knowledge WHEN new.status = 'active'"
    "  BEGIN INSERT OR IGNORE INTO embed_queue(knowledge_seq) VALUES(new.seq); END;"
    "CREATE TRIGGER vectors_status AFTER UPDATE OF status ON knowledge"
    "  WHEN old.status != new.status BEGIN"
    "  UPDATE vectors SET stamp = (SELECT coalesce(max(stamp), 0) + 1 FROM vectors)"
    "    WHERE knowledge_seq = new.seq;"
    "END;"
    "INSERT INTO embed_queue(knowledge_seq) SELECT seq FROM knowledge WHERE status = 'active';",

    /* 8: jobs claimed by a node for a lease (docs/operations.md "Several
     * processes"): another node takes a running job over only once its lease
     * has run out, and a restart requeues only its own node's jobs. */
    ("ALTER TABLE jobs ADD COLUMN node TEXT;"
     "ALTER TABLE jobs ADD COLUMN lease_until TEXT;"),

    /* 9: the BM25F statistics (docs/search.md "Relevance"): each active
     * entry's search row (what a candidate is scored and ordered by, with its
     * terms record), and per space the entries, the total length of
     * each field and each term's document frequency. Triggers mark what
     * changed; search_index.c brings it up to date before each commit.
     * search_meta's tokenizer 0 makes the first open rebuild every index
     * with the stemming tokenizer. */
    ("CREATE TABLE search_docs(seq INTEGER PRIMARY KEY, space TEXT NOT NULL, id TEXT NOT NULL,"
     "  category TEXT NOT NULL, types INTEGER NOT NULL, path TEXT NOT NULL, title TEXT NOT NULL,"
     "  tags TEXT NOT NULL, source TEXT NOT NULL, updated_at TEXT NOT NULL,"
     "  always_apply INTEGER NOT NULL, body_head TEXT NOT NULL, scenario_head TEXT NOT NULL,"
     "  terms TEXT NOT NULL);"
     "CREATE TABLE search_terms(space TEXT NOT NULL, term TEXT NOT NULL,"
     "  df INTEGER NOT NULL, PRIMARY KEY(space, term)) WITHOUT ROWID;"
     "CREATE TABLE search_spaces(space TEXT PRIMARY KEY, docs INTEGER NOT NULL,"
     "  len_title INTEGER NOT NULL, len_tags INTEGER NOT NULL, len_stem INTEGER NOT NULL,"
     "  len_scenario INTEGER NOT NULL, len_body INTEGER NOT NULL) WITHOUT ROWID;"
     "CREATE TABLE search_dirty(seq INTEGER PRIMARY KEY);"
     "CREATE TABLE search_meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;"
     "INSERT INTO search_meta(key, value) VALUES('tokenizer', 0);"
     "CREATE TRIGGER search_dirty_insert AFTER INSERT ON knowledge"
     "  BEGIN INSERT OR IGNORE INTO search_dirty(seq) VALUES(new.seq); END;"
     "CREATE TRIGGER search_dirty_update AFTER UPDATE OF space, category, types, path, title,"
     "  tags, scenario, content, status, source, always_apply, updated_at ON knowledge"
     "  BEGIN INSERT OR IGNORE INTO search_dirty(seq) VALUES(new.seq); END;"
     "CREATE TRIGGER search_dirty_delete AFTER DELETE ON knowledge"
     "  BEGIN INSERT OR IGNORE INTO search_dirty(seq) VALUES(old.seq); END;"),

    /* 10: the full-text rowids are -seq. Searches take entries newest first;
     * FTS5 reads a doclist lazily in ascending rowid order only, and a
     * descending scan read a term's whole doclist before its first row (a
     * pass at 100,000 entries took twice as long). The triggers of 2 and 6
     * again, with -seq, and both indexes filled anew. */
    // clang-format off
    "DROP TRIGGER knowledge_fts_insert; DROP TRIGGER knowledge_fts_update;"
    "DROP TRIGGER knowledge_head_insert; DROP TRIGGER knowledge_head_update;"
    "CREATE TRIGGER knowledge_fts_insert AFTER INSERT ON knowledge WHEN new.status = 'active' BEGIN"
    "  INSERT INTO knowledge_fts(rowid, title, tags, stem, scenario, body)"
    "    VALUES(-new.seq, new.title, new.tags, " STEM_SQL("new.path") ", new.scenario, new.content);"
    "END;"
    "CREATE TRIGGER knowledge_fts_update"
    "  AFTER UPDATE OF title, tags, path, scenario, content, status ON knowledge BEGIN"
    "  INSERT INTO knowledge_fts(knowledge_fts, rowid, title, tags, stem, scenario, body)"
    "    SELECT 'delete', -old.seq, old.title, old.tags, " STEM_SQL("old.path") ","
    "      old.scenario, old.content WHERE old.status = 'active';"
    "  INSERT INTO knowledge_fts(rowid, title, tags, stem, scenario, body)"
    "    SELECT -new.seq, new.title, new.tags, " STEM_SQL("new.path") ", new.scenario,"
    "      new.content WHERE new.status = 'active';"
    "END;"
    "CREATE TRIGGER knowledge_head_insert AFTER INSERT ON knowledge WHEN new.status = 'active' BEGIN"
    "  INSERT INTO knowledge_head(rowid, title, tags, stem)"
    "    VALUES(-new.seq, new.title, new.tags, " STEM_SQL("new.path") ");"
    "END;"
    "CREATE TRIGGER knowledge_head_update AFTER UPDATE OF title, tags, path, status ON knowledge BEGIN"
    "  INSERT INTO knowledge_head(knowledge_head, rowid, title, tags, stem)"
    "    SELECT 'delete', -old.seq, old.title, old.tags, " STEM_SQL("old.path")
    "    WHERE old.status = 'active';"
    "  INSERT INTO knowledge_head(rowid, title, tags, stem)"
    "    SELECT -new.seq, new.title, new.tags, " STEM_SQL("new.path")
    "    WHERE new.status = 'active';"
    "END;"
    FTS_FILL_SQL,
    // clang-format on

    /* 11: at most one queued or running job per space and kind. */
    JOBS_ONE_OPEN_SQL,

    /* 12: the Idempotency-Keys of creates. */
    IDEMPOTENCY_SQL(" TEXT"),

    /* 13: PostgreSQL's embedding turn, a lease row (pg_sql.c's embed_turn):
     * nothing on SQLite, whose processes share one host and take no turn. */
    "",

    /* 14: the cache generation as on PostgreSQL (tx.c store_generation): a
     * count that every write to a table an answer is read from raises in
     * its own transaction. Not the LLM ledger, the audit, logins, a token's
     * last use: PRAGMA data_version, read before, moved with those too.
     * Safe to run again (a database put back to an older version by hand). */
    // clang-format off
    "CREATE TABLE IF NOT EXISTS generation(n INTEGER NOT NULL);"
    "INSERT INTO generation(n) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM generation);"
    GENERATION_TRIGGERS("knowledge")
    GENERATION_TRIGGERS("knowledge_cases")
    GENERATION_TRIGGERS("knowledge_revisions")
    GENERATION_TRIGGERS("knowledge_feedback")
    GENERATION_TRIGGERS("traces")
    GENERATION_TRIGGERS("knowledge_log")
    GENERATION_TRIGGERS("trace_rollups")
    GENERATION_TRIGGERS("sessions")
    GENERATION_TRIGGERS("jobs")
    GENERATION_TRIGGERS("spaces")
    GENERATION_TRIGGERS("vectors")
    GENERATION_TRIGGERS("embed_queue")
    GENERATION_TRIGGER("tokens", "INSERT", "i")
    GENERATION_TRIGGER("tokens", "DELETE", "d")
    GENERATION_TRIGGER("tokens", "UPDATE OF revoked_at, role, space, label, hash", "u"),
    // clang-format on

    /* 15: what changed in the knowledge, for the live streams (app/streams.c
     * reads the rows after the last it saw; PostgreSQL sends the same rows as
     * notifications: pg_sql.c's knowledge_notify), and the MCP sessions'
     * resource subscriptions. Neither is read by an answer: no generation
     * trigger, and neither is copied by migrate-to. */
    CHANGES_TRIGGERS_SQL MCP_SUBSCRIPTIONS_SQL(" TEXT"),

    /* 16: the review queue: a space's policy and the proposals held for
     * review (service/review.c); both are read by answers. */
    // clang-format off
    REVIEW_SQL(" TEXT", " INTEGER")
    GENERATION_TRIGGERS("review_policies")
    GENERATION_TRIGGERS("proposals"),
    // clang-format on

    /* 17: a proposal made or decided is a change the editors' live streams
     * tell (app/live.c: "review" events, never to readers); PostgreSQL
     * notifies it (pg_sql.c's proposals_notify). */
    PROPOSAL_CHANGES_SQL,

    /* 18: promotion on evidence: the helpful verdicts that approve a
     * pending proposal served to traces (service/promote.c). */
    // clang-format off
    PROMOTE_SQL(" TEXT", " INTEGER")
    GENERATION_TRIGGERS("review_promotion"),
    // clang-format on

    /* 19: slim's merges held for review: the members of a slim_merge
     * proposal (service/slim.c, service/review.c). */
    PROPOSAL_MEMBERS_SQL(" TEXT", " INTEGER"),

    /* 20: typed links between entries (service/links.c), read by answers
     * (an entry's links, a search's conflicts_with). */
    // clang-format off
    LINKS_SQL(" TEXT", " INTEGER")
    GENERATION_TRIGGERS("knowledge_links"),
    // clang-format on

    /* 21: a space's evidence ageing
     * (service/evidence.c), read by the entry search. */
    // clang-format off
    EVIDENCE_SQL(" TEXT", " INTEGER")
    GENERATION_TRIGGERS("evidence_policy"),
    // clang-format on

    /* 22: an entry's expiry, review-by date and pin (service/timing.c). */
    // clang-format off
    TIME_SQL(" TEXT", " INTEGER")
    GENERATION_TRIGGERS("knowledge_time"),
    // clang-format on

    /* 23: the search index's changes, for the in-memory index
     * (service/lindex.c). */
    SEARCH_LOG_SQL(" TEXT", " INTEGER", " WITHOUT ROWID"),
};
#pragma GCC diagnostic pop
#define MIGRATION_COUNT ((int)(sizeof migrations / sizeof migrations[0]))

int store_schema_version(struct store *st)
{
    sqlite3_stmt *s;
    int v = -1;
    if (st->pg)
        return pg_schema_version(st);
    if (sqlite3_prepare_v2(st->db, "PRAGMA user_version", -1, &s, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    return v;
}

int store_schema_version_recent(struct store *st, long max_age_ms)
{
    long now = monotonic_ms();
    if (st->pg && st->schema_read_ms && now - st->schema_read_ms < max_age_ms)
        return st->schema_read_version;
    st->schema_read_version = store_schema_version(st);
    st->schema_read_ms = st->schema_read_version >= 0 ? now : 0;
    return st->schema_read_version;
}

int store_schema_latest(void)
{
    return MIGRATION_COUNT;
}

void store_upgrade_init(struct store_upgrade *up)
{
    up->from_version = -1;
    up->to_version = -1;
    up->why = "";
    buf_init(&up->backup, 4096);
}

void store_upgrade_release(struct store_upgrade *up)
{
    buf_release(&up->backup);
}

/* Copy the database at version old into dir (NULL: the directory of path)
 * as knowhub-v<old>-<UTC time>.db, named in *backup; never over an existing
 * file. 0, or -1 with the reason in *why. */
int store_backup_before_migrating(struct store *st, const char *path, const char *dir, int old,
                                  struct buf *backup, const char **why)
{
    char stamp[20];
    time_t now = time_now();
    struct tm tm;
    int fd, rc;
    buf_reset(backup);
    if (dir) {
        buf_adds(backup, dir);
    } else {
        const char *slash = strrchr(path, '/');
        if (slash)
            buf_add(backup, path, slash == path ? 1 : (size_t)(slash - path));
        else
            buf_adds(backup, ".");
        /* the directory of an existing database exists: nothing to create */
    }
    if (dir && mkdir(dir, 0700) && errno != EEXIST) {
        *why = strerror(errno);
        return -1;
    }
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    if (buf_addf(backup, "/knowhub-v%d-%s.db", old, stamp)) {
        *why = "the path is too long";
        return -1;
    }
    /* A new, empty file of our own: a second start within the same second
     * must not overwrite the first copy. */
    fd = open(backup->data, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        *why = strerror(errno);
        return -1;
    }
    close(fd);
    rc = store_backup(st, backup->data);
    if (rc) {
        *why = rc == STORE_FULL ? "the disk is full" : "the copy failed";
        unlink(backup->data);
    }
    return rc ? -1 : 0;
}

int store_schema_migrate(struct store *st, int *version)
{
    int rc = STORE_OK;
    if ((rc = store_begin(st)))
        return rc;
    /* Read again inside the write lock: another process may have migrated
     * since the caller looked. */
    *version = store_schema_version(st);
    if (*version < 0) {
        rc = STORE_ERROR;
        goto out;
    }
    if (*version > MIGRATION_COUNT) {
        rc = STORE_TOO_NEW;
        goto out;
    }
    for (int v = *version; v < MIGRATION_COUNT; v++) {
        char pragma[48];
        if ((rc = store_db_exec(st, migrations[v])))
            goto out;
        snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d", v + 1);
        if ((rc = store_db_exec(st, pragma)))
            goto out;
    }
out:
    if (rc) {
        store_rollback(st);
        return rc;
    }
    return store_commit(st);
}

/* ---- PostgreSQL: the schema of pg_sql.c, created under an advisory lock ---- */

int pg_schema_version(struct store *st)
{
    static const char version_sql[] = "SELECT max(version) FROM schema_version";
    long long has, v;
    /* Once this connection saw the table, it asks its version only (one
     * round trip: GET /api/health); outside a transaction, so a table gone
     * after all fails nothing else, and is looked for again. */
    if (st->schema_seen && st->tx_depth == 0 && !st->read_open &&
        (v = pg_query_int(st, version_sql)) >= 0)
        return (int)v;
    has = pg_query_int(st, "SELECT (to_regclass('schema_version') IS NOT NULL)::int");
    if (has <= 0)
        return has == 0 ? 0 : -1;
    v = pg_query_int(st, version_sql);
    st->schema_seen = v >= 0;
    return (int)v;
}

int pg_migrate(struct store *st, int *found)
{
    int rc;
    /* Every node migrates at start: the first takes the lock and creates the
     * schema; the others wait, then find it current. */
    if ((rc = pg_exec(st, "BEGIN; SELECT pg_advisory_xact_lock(" PG_MIGRATE_LOCK ")")))
        return rc;
    st->tx_depth++;
    *found = pg_schema_version(st);
    if (*found < 0)
        rc = STORE_ERROR;
    else if (*found > store_schema_latest())
        rc = STORE_TOO_NEW;
    else if (*found == 0)
        rc = pg_exec(st, pg_schema_sql);
    /* 8 -> 9: the BM25F statistics; 9 -> 10: SQLite's full-text rowids,
     * nothing to do here; 10 -> 11: one open job per space and kind;
     * 11 -> 12: the Idempotency-Keys; 12 -> 13: the embedding turn's lease;
     * 13 -> 14: the LLM ledger leaves the cache generation alone;
     * 14 -> 15: the knowledge's changes notified, the MCP subscriptions;
     * 15 -> 16: the review queue; 16 -> 17: proposals notified;
     * 17 -> 18: promotion on evidence; 18 -> 19: held slim merges;
     * 19 -> 20: typed links; 20 -> 21: evidence ageing; 21 -> 22: expiry,
     * review-by dates, pins; 22 -> 23: the search index's changes. */
    else if (*found >= 8 && *found <= 22) {
        rc = *found == 8 ? pg_exec(st, pg_migration_9) : STORE_OK;
        if (rc == STORE_OK && *found <= 9)
            rc = pg_exec(st, "UPDATE schema_version SET version = 10");
        if (rc == STORE_OK && *found <= 10)
            rc = pg_exec(st, pg_migration_11);
        if (rc == STORE_OK && *found <= 11)
            rc = pg_exec(st, pg_migration_12);
        if (rc == STORE_OK && *found <= 12)
            rc = pg_exec(st, pg_migration_13);
        if (rc == STORE_OK && *found <= 13)
            rc = pg_exec(st, pg_migration_14);
        if (rc == STORE_OK && *found <= 14)
            rc = pg_exec(st, pg_migration_15);
        if (rc == STORE_OK && *found <= 15)
            rc = pg_exec(st, pg_migration_16);
        if (rc == STORE_OK && *found <= 16)
            rc = pg_exec(st, pg_migration_17);
        if (rc == STORE_OK && *found <= 17)
            rc = pg_exec(st, pg_migration_18);
        if (rc == STORE_OK && *found <= 18)
            rc = pg_exec(st, pg_migration_19);
        if (rc == STORE_OK && *found <= 19)
            rc = pg_exec(st, pg_migration_20);
        if (rc == STORE_OK && *found <= 20)
            rc = pg_exec(st, pg_migration_21);
        if (rc == STORE_OK && *found <= 21)
            rc = pg_exec(st, pg_migration_22);
        if (rc == STORE_OK)
            rc = pg_exec(st, pg_migration_23);
    } else if (*found < store_schema_latest())
        rc = STORE_ERROR;
    st->tx_depth--;
    if (rc) {
        char why[sizeof st->pg_error];
        memcpy(why, st->pg_error, sizeof why);
        (void)pg_exec(st, "ROLLBACK"); /* the error said, not the rollback's */
        memcpy(st->pg_error, why, sizeof why);
        return rc;
    }
    return pg_exec(st, "COMMIT");
}
