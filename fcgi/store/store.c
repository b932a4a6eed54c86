/* store: the only module that speaks SQL (SQLite, WAL). Statements live in one
 * table below, are prepared lazily once per connection and reset after use. */
#include "store/store.h"
#include "base/buf.h"
#include "base/metrics.h"
#include "domain/tokenize.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How long a writer waits for the database (SQLite's busy timeout) or for
 * another thread's write transaction (writer_lock) before STORE_BUSY. */
#define BUSY_TIMEOUT_MS 10000

/* The file stem of a path with at most one folder: "a/b.md" -> "b". */
#define STEM_SQL(p)                                                                                \
    "substr(substr(" p ", instr(" p ", '/') + 1), 1,"                                              \
    " length(substr(" p ", instr(" p ", '/') + 1)) - 3)"

/* ---- schema: numbered migrations, applied in order, tracked by user_version ---- */

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

    /* 3: traces and their knowledge log (seed 000). */
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

    /* 4: browser logins (cookie sessions) and analysis sessions (seed 004). */
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
};
#define MIGRATION_COUNT ((int)(sizeof migrations / sizeof migrations[0]))

/* The JSON snapshot of an entry row kept in knowledge_revisions.document. */
#define SNAPSHOT_JSON                                                                              \
    "json_object('id',id,'category',category,'path',path,'title',title,"                           \
    "'description',description,'tags',json(tags),'types',types,'scenario',scenario,"               \
    "'content',content,'always_apply',always_apply,'source',source,'urls',json(urls),"             \
    "'agent_id',agent_id,'message_id',message_id,'source_ts',source_ts,'score',score,"             \
    "'status',status,'merged_into',merged_into,'updated_at',updated_at,'meta',json(meta),"         \
    "'document',document)"

#define KNOWLEDGE_COLUMNS                                                                          \
    "id, space, category, path, title, description, tags, types, scenario, content,"               \
    " always_apply, source, urls, agent_id, message_id, source_ts, score, helpful,"                \
    " harmful, irrelevant, unused, neutral, status, merged_into, version, created_at,"             \
    " updated_at, meta, document"

/* The columns of a search candidate (S_MATCH*, struct match_row): only what
 * scoring needs, the content cut to its first 200 characters. */
#define MATCH_COLUMNS                                                                              \
    "f.rowid, k.id, k.category, k.path, k.title, k.tags, substr(k.content, 1, 200),"               \
    " k.source, k.updated_at, k.always_apply, substr(k.scenario, 1, 200)"

#define TRACE_COUNTS                                                                               \
    "(SELECT count(*) FROM knowledge_log l WHERE l.space = t.space AND l.trace_id = t.trace_id),"  \
    " (SELECT count(*) FROM knowledge_log l WHERE l.space = t.space"                               \
    "  AND l.trace_id = t.trace_id AND l.eval_status IS NULL),"                                    \
    " (SELECT count(*) FROM knowledge_log l WHERE l.space = t.space"                               \
    "  AND l.trace_id = t.trace_id AND l.eval_status = 'irrelevant'),"                             \
    " (SELECT count(*) FROM knowledge_log l WHERE l.space = t.space"                               \
    "  AND l.trace_id = t.trace_id AND l.eval_status = 'unused'),"                                 \
    " (SELECT count(*) FROM knowledge_log l WHERE l.space = t.space"                               \
    "  AND l.trace_id = t.trace_id AND l.eval_status = 'helpful'),"                                \
    " (SELECT count(*) FROM knowledge_log l WHERE l.space = t.space"                               \
    "  AND l.trace_id = t.trace_id AND l.eval_status = 'harmful'),"                                \
    " (SELECT count(*) FROM knowledge_log l WHERE l.space = t.space"                               \
    "  AND l.trace_id = t.trace_id AND l.eval_status = 'neutral')"

#define LOG_COLUMNS                                                                                \
    "id, trace_id, knowledge_id, goal_id, injected_at_sequence, injected_at, task, content,"       \
    " eval_status, eval_reason, evaluated_at, evaluated_at_trigger"

#define JOB_COLUMNS                                                                                \
    "id, space, kind, status, progress, total, params, result, error, actor, created_at,"          \
    " updated_at"

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
    S_COUNT
};

static const char *const stmt_sql[S_COUNT] = {
    [S_READ_BEGIN] = "BEGIN",
    [S_READ_END] = "COMMIT",
    [S_SPACE_ENSURE] = "INSERT OR IGNORE INTO spaces(name, created_at) VALUES(?1, ?2)",
    [S_TOKEN_COUNT] = "SELECT count(*) FROM tokens",
    [S_TOKEN_INSERT] = "INSERT INTO tokens(id, hash, space, role, label, created_at)"
                       " VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
    [S_TOKEN_GET] = "SELECT id, space, role, label, created_at, last_used_at, revoked_at, hash"
                    " FROM tokens WHERE id = ?1",
    [S_TOKEN_TOUCH] = "UPDATE tokens SET last_used_at = ?2 WHERE id = ?1 AND"
                      " (last_used_at IS NULL OR last_used_at < datetime(?2, '-60 seconds'))",
    [S_TOKEN_REVOKE] = "UPDATE tokens SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL",
    [S_TOKEN_ALL] = "SELECT id, space, role, label, created_at, last_used_at, revoked_at, hash"
                    " FROM tokens ORDER BY created_at, id",
    [S_K_ID_EXISTS] = "SELECT 1 FROM knowledge WHERE id = ?1",
    /* ?4..?18 are the document's fields, as in S_K_UPDATE (bind_document). */
    [S_K_INSERT] = "INSERT INTO knowledge(id, space, created_at, updated_at, category, path,"
                   " title, description, tags, types, scenario, content, always_apply, source,"
                   " urls, agent_id, message_id, meta, document, source_ts, score, helpful,"
                   " harmful, irrelevant, unused, neutral, status, merged_into, version)"
                   " VALUES(?1, ?2, ?3, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
                   " ?15, ?16, ?17, ?18, ?19, ?20, 0, 0, 0, 0, 0, 'active', NULL, 1)",
    [S_K_GET] = "SELECT " KNOWLEDGE_COLUMNS " FROM knowledge"
                " WHERE id = ?1 AND space = ?2 AND (?3 OR status = 'active')",
    [S_K_ACTIVE] = "SELECT 1 FROM knowledge WHERE id = ?1 AND space = ?2 AND status = 'active'",
    [S_K_LIST] = "SELECT " KNOWLEDGE_COLUMNS " FROM knowledge"
                 " WHERE space = ?1 AND status = 'active' AND (?2 = 0 OR types & ?2 != 0)"
                 " AND (?3 IS NULL OR category = ?3) ORDER BY seq DESC LIMIT ?4 OFFSET ?5",
    [S_K_COUNT] = "SELECT count(*) FROM knowledge"
                  " WHERE space = ?1 AND status = 'active' AND (?2 = 0 OR types & ?2 != 0)"
                  " AND (?3 IS NULL OR category = ?3)",
    [S_K_SPACE_OF] = "SELECT 1 FROM knowledge WHERE id = ?1 AND space = ?2",
    [S_CASE_INSERT] = "INSERT OR IGNORE INTO knowledge_cases(space, knowledge_id, kind, case_id,"
                      " scenario, result, agent_id, trace_id, goal_id, created_at)"
                      " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    [S_CASE_BUMP_HELPFUL] = "UPDATE knowledge SET helpful = helpful + 1 WHERE id = ?1",
    [S_CASE_BUMP_HARMFUL] = "UPDATE knowledge SET harmful = harmful + 1 WHERE id = ?1",
    [S_CASES] = "SELECT kind, case_id, scenario, result, agent_id, trace_id, goal_id,"
                " created_at FROM (SELECT * FROM knowledge_cases WHERE knowledge_id = ?1"
                " AND kind = ?2 ORDER BY seq DESC LIMIT ?3) ORDER BY seq",
    [S_K_SET_SCORE] = "UPDATE knowledge SET score = ?3, version = version + 1, updated_at = ?4"
                      " WHERE id = ?1 AND space = ?2 AND status = 'active' AND score != ?3",
    [S_FEEDBACK_INSERT] = "INSERT INTO knowledge_feedback(space, knowledge_id, feedback, actor,"
                          " created_at) VALUES(?1, ?2, ?3, ?4, ?5)",
    [S_K_DELETE] = "UPDATE knowledge SET status = 'deleted', version = version + 1,"
                   " updated_at = ?3 WHERE id = ?1 AND space = ?2 AND status = 'active'",
    [S_REVISION_ADD] = "INSERT INTO knowledge_revisions(space, knowledge_id, version, document,"
                       " actor, reason, created_at) SELECT space, id, version, " SNAPSHOT_JSON
                       ", ?2, ?3, ?4 FROM knowledge WHERE id = ?1",
    [S_REVISIONS] = "SELECT version, document, actor, reason, created_at"
                    " FROM knowledge_revisions WHERE knowledge_id = ?1 AND space = ?2"
                    " ORDER BY version DESC",
    [S_REVISION_DOC] = "SELECT document FROM knowledge_revisions"
                       " WHERE knowledge_id = ?1 AND space = ?2 AND version = ?3",
    [S_K_RESTORE] =
        "UPDATE knowledge SET category = json_extract(?3, '$.category'),"
        " path = json_extract(?3, '$.path'), title = json_extract(?3, '$.title'),"
        " description = json_extract(?3, '$.description'),"
        " tags = json_extract(?3, '$.tags'), types = json_extract(?3, '$.types'),"
        " scenario = json_extract(?3, '$.scenario'), content = json_extract(?3, '$.content'),"
        " always_apply = json_extract(?3, '$.always_apply'),"
        " source = json_extract(?3, '$.source'), urls = json_extract(?3, '$.urls'),"
        " agent_id = json_extract(?3, '$.agent_id'),"
        " message_id = json_extract(?3, '$.message_id'),"
        " source_ts = json_extract(?3, '$.source_ts'), score = json_extract(?3, '$.score'),"
        " meta = coalesce(json_extract(?3, '$.meta'), '{}'),"
        " document = coalesce(json_extract(?3, '$.document'), ''),"
        " status = 'active', merged_into = NULL, version = version + 1, updated_at = ?4"
        " WHERE id = ?1 AND space = ?2",
    [S_AUDIT] = "INSERT INTO audit(ts, space, actor, action, target) VALUES(?1, ?2, ?3, ?4, ?5)",
    [S_K_BY_PATH] = "SELECT " KNOWLEDGE_COLUMNS " FROM knowledge"
                    " WHERE space = ?1 AND category = ?2 AND path = ?3 AND status = 'active'",
    [S_K_UPDATE] = "UPDATE knowledge SET category = ?4, path = ?5, title = ?6, description = ?7,"
                   " tags = ?8, types = ?9, scenario = ?10, content = ?11, always_apply = ?12,"
                   " source = ?13, urls = ?14, agent_id = ?15, message_id = ?16, meta = ?17,"
                   " document = ?18, version = version + 1, updated_at = ?19"
                   " WHERE id = ?1 AND space = ?2 AND status = 'active'"
                   " AND (?3 <= 0 OR version = ?3)",
    [S_SCAN_CATEGORY] = "SELECT " KNOWLEDGE_COLUMNS " FROM knowledge"
                        " WHERE space = ?1 AND category = ?2 AND status = 'active' ORDER BY path",
    [S_SCAN_ALWAYS_RULES] = "SELECT " KNOWLEDGE_COLUMNS " FROM knowledge"
                            " WHERE space = ?1 AND category = 'rules' AND status = 'active'"
                            " AND always_apply = 1 ORDER BY path",
    [S_SCAN_ACTIVE] = "SELECT " KNOWLEDGE_COLUMNS " FROM knowledge"
                      " WHERE space = ?1 AND status = 'active' ORDER BY category, path",
    [S_MATCH] = "SELECT " MATCH_COLUMNS " FROM knowledge_fts f JOIN knowledge k"
                " ON k.seq = f.rowid WHERE knowledge_fts MATCH ?1 AND k.space = ?2"
                " AND k.status = 'active' AND (?3 = 0 OR k.types & ?3 != 0)"
                " AND (?4 IS NULL OR k.category = ?4) AND f.rowid < ?6"
                " ORDER BY f.rowid DESC LIMIT ?5",
    [S_MATCH_HEAD] = "SELECT " MATCH_COLUMNS " FROM knowledge_head f"
                     " JOIN knowledge k ON k.seq = f.rowid WHERE knowledge_head MATCH ?1"
                     " AND k.space = ?2 AND k.status = 'active'"
                     " AND (?3 = 0 OR k.types & ?3 != 0) AND (?4 IS NULL OR k.category = ?4)"
                     " AND f.rowid < ?6 ORDER BY f.rowid DESC LIMIT ?5",
    [S_TRACE_UPSERT] =
        "INSERT INTO traces(space, trace_id, task, created_at) VALUES(?1, ?2, ?3, ?4)"
        " ON CONFLICT(space, trace_id) DO UPDATE SET task = excluded.task",
    [S_TRACE_INSERT] = "INSERT OR IGNORE INTO traces(space, trace_id, task, created_at)"
                       " VALUES(?1, ?2, '', ?3)",
    [S_TRACE_GET] = "SELECT t.trace_id, t.task, t.created_at, " TRACE_COUNTS
                    " FROM traces t WHERE t.space = ?1 AND t.trace_id = ?2",
    [S_TRACE_LIST] =
        "SELECT t.trace_id, t.task, t.created_at, " TRACE_COUNTS " FROM traces t WHERE t.space = ?1"
        " ORDER BY t.created_at DESC, t.trace_id LIMIT ?2 OFFSET ?3",
    [S_TRACE_COUNT] = "SELECT count(*) FROM traces WHERE space = ?1",
    [S_LOG_ADD] = "INSERT INTO knowledge_log(space, trace_id, knowledge_id, goal_id,"
                  " injected_at_sequence, injected_at, task, content)"
                  " SELECT ?1, ?2, id, ?4, ?5, ?6, scenario, substr(content, 1, 500)"
                  " FROM knowledge WHERE id = ?3 AND space = ?1 AND status = 'active'",
    [S_LOG_ALL] = "SELECT " LOG_COLUMNS " FROM knowledge_log WHERE space = ?1 AND trace_id = ?2"
                  " ORDER BY id LIMIT ?3 OFFSET ?4",
    [S_LOG_PENDING] = "SELECT " LOG_COLUMNS " FROM knowledge_log WHERE space = ?1"
                      " AND trace_id = ?2 AND eval_status IS NULL ORDER BY id LIMIT ?3 OFFSET ?4",
    [S_LOG_COUNT] = "SELECT count(*) FROM knowledge_log WHERE space = ?1 AND trace_id = ?2"
                    " AND (?3 = 0 OR eval_status IS NULL)",
    [S_LOG_ENTRY] = "SELECT " LOG_COLUMNS " FROM knowledge_log WHERE knowledge_id = ?1"
                    " ORDER BY id DESC LIMIT ?2",
    [S_LOG_FIND_PENDING] = "SELECT id, goal_id FROM knowledge_log WHERE space = ?1"
                           " AND trace_id = ?2 AND knowledge_id = ?3 AND eval_status IS NULL"
                           " ORDER BY injected_at_sequence DESC, id DESC LIMIT 1",
    [S_LOG_SET_EVAL] = "UPDATE knowledge_log SET eval_status = ?2, eval_reason = ?3,"
                       " evaluated_at = ?4, evaluated_at_trigger = ?5"
                       " WHERE id = ?1 AND eval_status IS NULL",
    [S_ROLLUP_INSERT] = "INSERT OR IGNORE INTO trace_rollups(space, trace_id, knowledge_id,"
                        " status, created_at) VALUES(?1, ?2, ?3, ?4, ?5)",
    [S_BUMP_IRRELEVANT] = "UPDATE knowledge SET irrelevant = irrelevant + 1 WHERE id = ?1",
    [S_BUMP_UNUSED] = "UPDATE knowledge SET unused = unused + 1 WHERE id = ?1",
    [S_BUMP_NEUTRAL] = "UPDATE knowledge SET neutral = neutral + 1 WHERE id = ?1",
    [S_TRACE_TASK] = "SELECT task FROM traces WHERE space = ?1 AND trace_id = ?2",
    [S_LOGIN_INSERT] = "INSERT INTO logins(hash, token_id, csrf, created_at, expires_at)"
                       " VALUES(?1, ?2, ?3, ?4, ?5)",
    [S_LOGIN_GET] = "SELECT t.id, t.space, t.role, t.label, t.created_at, t.last_used_at,"
                    " t.revoked_at, t.hash, l.csrf FROM logins l JOIN tokens t ON t.id = l.token_id"
                    " WHERE l.hash = ?1 AND l.expires_at > ?2",
    [S_LOGIN_DELETE] = "DELETE FROM logins WHERE hash = ?1",
    [S_LOGIN_EXPIRE] = "DELETE FROM logins WHERE expires_at <= ?1",
    [S_SESSION_PUT] = "INSERT INTO sessions(space, id, title, document, created_at, updated_at)"
                      " VALUES(?1, ?2, ?3, ?4, ?5, ?5) ON CONFLICT(space, id) DO UPDATE SET"
                      " title = excluded.title, document = excluded.document,"
                      " updated_at = excluded.updated_at",
    [S_SESSION_GET] = "SELECT id, title, document, created_at, updated_at FROM sessions"
                      " WHERE space = ?1 AND id = ?2",
    [S_SESSION_LIST] = "SELECT id, title, NULL, created_at, updated_at FROM sessions"
                       " WHERE space = ?1 ORDER BY updated_at DESC, id",
    [S_SESSION_DELETE] = "DELETE FROM sessions WHERE space = ?1 AND id = ?2",
    [S_LLM_CALL_ADD] = "INSERT INTO llm_calls(space, purpose, model, prompt_tokens,"
                       " completion_tokens, latency_ms, outcome, created_at)"
                       " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    [S_LLM_USAGE] = "SELECT purpose, model, count(*), sum(outcome != 'ok'), sum(prompt_tokens),"
                    " sum(completion_tokens), sum(latency_ms) FROM llm_calls"
                    " WHERE space = ?1 AND created_at >= ?2 GROUP BY purpose, model"
                    " ORDER BY purpose, model",
    [S_JOB_CREATE] = "INSERT INTO jobs(id, space, kind, status, params, actor, created_at,"
                     " updated_at) VALUES(?1, ?2, ?3, 'queued', ?4, ?5, ?6, ?6)",
    [S_JOB_GET] = "SELECT " JOB_COLUMNS " FROM jobs WHERE space = ?1 AND id = ?2",
    [S_JOB_COUNTS] = "SELECT kind, status, count(*) FROM jobs GROUP BY kind, status"
                     " ORDER BY kind, status",
    /* Both counts walk an index range per space (knowledge_space_status, the
     * traces' primary key); the largest spaces first. */
    [S_SPACE_COUNTS] = "SELECT name,"
                       " (SELECT count(*) FROM knowledge k WHERE k.space = s.name"
                       "  AND k.status = 'active'),"
                       " (SELECT count(*) FROM traces t WHERE t.space = s.name)"
                       " FROM spaces s ORDER BY 2 DESC, 3 DESC, name",
    [S_JOB_LIST] = "SELECT " JOB_COLUMNS " FROM jobs WHERE space = ?1"
                   " ORDER BY created_at DESC, id LIMIT ?2",
    [S_JOB_CLAIM] = "UPDATE jobs SET status = 'running', updated_at = ?1 WHERE id ="
                    " (SELECT id FROM jobs WHERE status = 'queued' ORDER BY created_at, id LIMIT 1)"
                    " RETURNING " JOB_COLUMNS,
    [S_JOB_PROGRESS] = "UPDATE jobs SET progress = ?2, total = ?3, updated_at = ?4 WHERE id = ?1",
    [S_JOB_FINISH] = "UPDATE jobs SET status = ?2, result = ?3, error = ?4, updated_at = ?5"
                     " WHERE id = ?1",
    [S_JOB_REQUEUE] = "UPDATE jobs SET status = 'queued', updated_at = ?1 WHERE status = 'running'",
    [S_MERGE_COUNTERS] =
        "UPDATE knowledge SET helpful = knowledge.helpful + m.helpful,"
        " harmful = knowledge.harmful + m.harmful,"
        " irrelevant = knowledge.irrelevant + m.irrelevant,"
        " unused = knowledge.unused + m.unused, neutral = knowledge.neutral + m.neutral"
        " FROM (SELECT helpful, harmful, irrelevant, unused, neutral"
        " FROM knowledge WHERE id = ?2) AS m WHERE knowledge.id = ?1",
    [S_MERGE_CASES] =
        "INSERT OR IGNORE INTO knowledge_cases(space, knowledge_id, kind, case_id,"
        " scenario, result, agent_id, trace_id, goal_id, created_at)"
        " SELECT space, ?1, kind, case_id, scenario, result, agent_id, trace_id,"
        " goal_id, created_at FROM knowledge_cases WHERE knowledge_id = ?2 ORDER BY seq",
    [S_MERGE_TOMBSTONE] = "UPDATE knowledge SET status = 'merged', merged_into = ?1,"
                          " version = version + 1, updated_at = ?3"
                          " WHERE id = ?2 AND space = ?4 AND status = 'active'"
                          " AND (?5 <= 0 OR version = ?5)",
    [S_FEEDBACK_MARK] = "UPDATE knowledge_feedback SET status = ?2 WHERE seq = ?1",
    [S_DATA_VERSION] = "PRAGMA data_version",
    [S_CASES_PAGE] = "SELECT kind, case_id, scenario, result, agent_id, trace_id, goal_id,"
                     " created_at FROM knowledge_cases WHERE knowledge_id = ?1 AND kind = ?2"
                     " ORDER BY seq LIMIT ?3 OFFSET ?4",
    [S_CASES_COUNT] = "SELECT count(*) FROM knowledge_cases WHERE knowledge_id = ?1 AND kind = ?2",
    [S_SCAN_DELETED] = "SELECT " KNOWLEDGE_COLUMNS " FROM knowledge"
                       " WHERE space = ?1 AND status IN ('deleted', 'merged')"
                       " AND (?2 IS NULL OR category = ?2)"
                       " ORDER BY updated_at DESC, seq DESC LIMIT 200",
    /* Only where the document is: category, path and what they decide
     * (the title and scenario a stem gives, a rule's alwaysApply). */
    [S_K_MOVE] = "UPDATE knowledge SET category = ?4, path = ?5, title = ?6, scenario = ?7,"
                 " always_apply = ?8, version = version + 1, updated_at = ?9"
                 " WHERE id = ?1 AND space = ?2 AND status = 'active' AND version = ?3",
    /* Another active entry inside the folder ?3 ("?3/..."): '0' follows '/'. */
    [S_K_FOLDER_TAKEN] = "SELECT 1 FROM knowledge WHERE space = ?1 AND category = ?2"
                         " AND status = 'active' AND path > ?3 || '/' AND path < ?3 || '0'"
                         " AND id != ?4 LIMIT 1",
    [S_K_FILE_TAKEN] = "SELECT 1 FROM knowledge WHERE space = ?1 AND category = ?2"
                       " AND status = 'active' AND path = ?3 AND id != ?4",
    [S_K_PLACE] = "SELECT category, path FROM knowledge WHERE id = ?1 AND status = 'active'",
    [S_SESSION_PUT_IF] = "UPDATE sessions SET title = ?3, document = ?4, updated_at = ?5"
                         " WHERE space = ?1 AND id = ?2 AND updated_at = ?6",
    [S_REVISION_TIME] = "SELECT created_at FROM knowledge_revisions"
                        " WHERE knowledge_id = ?1 AND space = ?2 AND version = ?3",
};

struct store {
    sqlite3 *db;
    sqlite3_stmt *stmt[S_COUNT];
    int tx_depth;
    int read_depth;          /* store_read_begin() calls not yet ended */
    int read_open;           /* the outermost of them opened a read transaction */
    struct metrics *metrics; /* this connection's thread's counters, or NULL */
    /* Audit rows of the open transaction (five NUL-ended fields each), handed
     * to audit_hook at the outermost commit; audit_mark[d]: the length when
     * savepoint depth d began, so a savepoint's rollback drops its rows. */
    struct buf audit_pending;
    size_t audit_mark[8];
    store_audit_fn audit_hook;
    void *audit_ctx;
};

/* ---- errors ---- */

static int status_of(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_OK:
    case SQLITE_DONE:
    case SQLITE_ROW:
        return STORE_OK;
    case SQLITE_CONSTRAINT:
        /* Only uniqueness is a conflict; a CHECK or NOT NULL failure is a bug. */
        return rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY ? STORE_CONFLICT
                                                                                    : STORE_ERROR;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return STORE_BUSY;
    case SQLITE_FULL:
        return STORE_FULL;
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
        return STORE_READONLY;
    case SQLITE_IOERR:
        /* A file that cannot be written any more (made immutable, a
         * read-only remount, EPERM/EROFS on write): SQLite rolled back,
         * nothing was written; the caller may retry once it is writable. */
        return rc == SQLITE_IOERR_WRITE || rc == SQLITE_IOERR_FSYNC ||
                       rc == SQLITE_IOERR_DIR_FSYNC || rc == SQLITE_IOERR_TRUNCATE
                   ? STORE_READONLY
                   : STORE_ERROR;
    default:
        return STORE_ERROR;
    }
}

void store_global_init(void)
{
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

void store_status_error(int status, const char *what, struct error *e)
{
    switch (status) {
    case STORE_NOT_FOUND:
        error_set(e, E_NOT_FOUND, "not_found", "%s not found", what);
        break;
    case STORE_CONFLICT:
        error_set(e, E_CONFLICT, "conflict", "%s conflicts with an existing one", what);
        break;
    case STORE_BUSY:
        error_set(e, E_SERVICE_UNAVAILABLE, "db_busy", "The database is busy; try again");
        break;
    case STORE_FULL:
        error_set(e, E_SERVICE_UNAVAILABLE, "db_full", "The database is full; nothing was written");
        break;
    case STORE_READONLY:
        error_set(e, E_SERVICE_UNAVAILABLE, "db_readonly",
                  "The database is read-only; nothing was written");
        break;
    default:
        error_set(e, E_INTERNAL, "internal_error", "An unexpected error occurred");
        break;
    }
}

const char *store_errmsg(struct store *st)
{
    return st && st->db ? sqlite3_errmsg(st->db) : "no database";
}

/* ---- statements ---- */

static sqlite3_stmt *stmt_get(struct store *st, enum stmt_id id)
{
    if (!st->stmt[id]) {
        if (sqlite3_prepare_v3(st->db, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT, &st->stmt[id],
                               NULL) != SQLITE_OK)
            return NULL;
    }
    return st->stmt[id];
}

static void bind_text(sqlite3_stmt *s, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(s, i);
}

/* Step a statement that returns no row we need; reset it; return a store status. */
static int step_done(sqlite3_stmt *s)
{
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? STORE_OK : status_of(rc);
}

static void finish(sqlite3_stmt *s)
{
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
}

static char *col_dup(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    return t ? xstrndup((const char *)t, (size_t)sqlite3_column_bytes(s, i)) : NULL;
}

static const char *col_text(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    return t ? (const char *)t : "";
}

/* ---- open, migrate, close ---- */

static int exec(struct store *st, const char *sql)
{
    return status_of(sqlite3_exec(st->db, sql, NULL, NULL, NULL));
}

int store_schema_version(struct store *st)
{
    sqlite3_stmt *s;
    int v = -1;
    if (sqlite3_prepare_v2(st->db, "PRAGMA user_version", -1, &s, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    return v;
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
static int backup_before_migrating(struct store *st, const char *path, const char *dir, int old,
                                   struct buf *backup, const char **why)
{
    char stamp[20];
    time_t now = time(NULL);
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

static int migrate(struct store *st, int *version)
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
        if ((rc = exec(st, migrations[v])))
            goto out;
        snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d", v + 1);
        if ((rc = exec(st, pragma)))
            goto out;
    }
out:
    if (rc) {
        store_rollback(st);
        return rc;
    }
    return store_commit(st);
}

/* ---- the FTS5 tokenizer "knowhub": tokenize.c behind FTS5's interface ---- */

struct fts_emit_ctx {
    void *fts_ctx;
    int (*token)(void *, int, const char *, int, int, int);
};

static int fts_emit(void *arg, const char *token, size_t n, size_t start, size_t end)
{
    struct fts_emit_ctx *c = arg;
    return c->token(c->fts_ctx, 0, token, (int)n, (int)start, (int)end);
}

static const char fts_instance; /* the tokenizer keeps no state */

static int fts_create(void *unused, const char **args, int nargs, Fts5Tokenizer **out)
{
    (void)unused;
    (void)args;
    (void)nargs;
    *out = (Fts5Tokenizer *)(uintptr_t)&fts_instance;
    return SQLITE_OK;
}

static void fts_delete(Fts5Tokenizer *t)
{
    (void)t;
}

static int fts_tokenize(Fts5Tokenizer *t, void *fts_ctx, int flags, const char *text, int n,
                        int (*token)(void *, int, const char *, int, int, int))
{
    struct fts_emit_ctx c = {fts_ctx, token};
    (void)t;
    (void)flags;
    return tokenize(text, n > 0 ? (size_t)n : 0, fts_emit, &c);
}

/* Register the tokenizer on this connection (before any FTS5 table is used). */
static int register_tokenizer(sqlite3 *db)
{
    fts5_api *api = NULL;
    sqlite3_stmt *s;
    fts5_tokenizer tok = {fts_create, fts_delete, fts_tokenize};
    if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &s, NULL) != SQLITE_OK)
        return STORE_ERROR;
    sqlite3_bind_pointer(s, 1, (void *)&api, "fts5_api_ptr", NULL);
    sqlite3_step(s);
    sqlite3_finalize(s);
    if (!api || api->xCreateTokenizer(api, "knowhub", NULL, &tok, NULL) != SQLITE_OK)
        return STORE_ERROR;
    return STORE_OK;
}

/* SQLite's busy handler: what sqlite3_busy_timeout does (sleeps of 1 to 100
 * ms until BUSY_TIMEOUT_MS have passed), counted for the metrics. */
static int busy_wait(void *arg, int count)
{
    static const int delays[] = {1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100};
    enum { N_DELAYS = sizeof delays / sizeof delays[0] };
    struct store *st = arg;
    int spent = 0, delay;
    if (count < N_DELAYS) {
        delay = delays[count];
        for (int i = 0; i < count; i++)
            spent += delays[i];
    } else {
        delay = delays[N_DELAYS - 1];
        spent = 328 + (count - N_DELAYS) * delay; /* 328: the sum of delays */
    }
    if (spent >= BUSY_TIMEOUT_MS) {
        metrics_store_event(st->metrics, METRICS_SQLITE_TIMEOUT);
        return 0;
    }
    if (spent + delay > BUSY_TIMEOUT_MS)
        delay = BUSY_TIMEOUT_MS - spent;
    metrics_store_event(st->metrics, METRICS_SQLITE_RETRY);
    sqlite3_sleep(delay);
    return 1;
}

int store_open(const char *path, struct store **out)
{
    return store_open_upgrade(path, NULL, NULL, out);
}

int store_open_upgrade(const char *path, const char *backup_dir, struct store_upgrade *up,
                       struct store **out)
{
    struct store *st = xcalloc(1, sizeof *st);
    struct store_upgrade local;
    int rc, found;
    *out = NULL;
    buf_init(&st->audit_pending, 1024 * 1024);
    if (!up) {
        store_upgrade_init(&local);
        up = &local;
    }
    rc = sqlite3_open_v2(path, &st->db,
                         SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        rc = status_of(rc);
        goto fail;
    }
    sqlite3_extended_result_codes(st->db, 1);
    sqlite3_busy_handler(st->db, busy_wait, st);
    /* Before anything writes (even the journal mode): a newer schema is
     * left exactly as it is. */
    found = up->from_version = up->to_version = store_schema_version(st);
    if (found > MIGRATION_COUNT) {
        rc = STORE_TOO_NEW;
        goto fail;
    }
    if ((rc = exec(st, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                       "PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY;")))
        goto fail;
    if ((rc = register_tokenizer(st->db)))
        goto fail;
    /* Outside the migration's write transaction: SQLite's backup cannot
     * read a source connection that holds one. */
    if (found > 0 && found < MIGRATION_COUNT &&
        backup_before_migrating(st, path, backup_dir, found, &up->backup, &up->why)) {
        rc = STORE_BACKUP_FAILED;
        goto fail;
    }
    if ((rc = migrate(st, &up->from_version)))
        goto fail;
    up->to_version = MIGRATION_COUNT;
    *out = st;
    if (up == &local)
        store_upgrade_release(&local);
    return STORE_OK;
fail:
    store_close(st);
    if (up == &local)
        store_upgrade_release(&local);
    return rc ? rc : STORE_ERROR;
}

void store_close(struct store *st)
{
    if (!st)
        return;
    while (st->tx_depth)
        store_rollback(st); /* also releases writer_lock */
    for (int i = 0; i < S_COUNT; i++)
        sqlite3_finalize(st->stmt[i]);
    sqlite3_close(st->db);
    buf_release(&st->audit_pending);
    free(st);
}

void store_set_metrics(struct store *st, struct metrics *m)
{
    st->metrics = m;
}

void store_set_audit_hook(struct store *st, store_audit_fn hook, void *ctx)
{
    st->audit_hook = hook;
    st->audit_ctx = ctx;
}

const char *store_sqlite_version(void)
{
    return sqlite3_libversion();
}

/* Hand the committed audit rows to the hook and forget them. */
static void audit_flush(struct store *st)
{
    const char *p = st->audit_pending.data, *end = p + st->audit_pending.len;
    while (st->audit_hook && p < end) {
        const char *f[5];
        for (int i = 0; i < 5; i++) {
            f[i] = p;
            p += strlen(p) + 1;
        }
        st->audit_hook(st->audit_ctx, f[0], f[1], f[2], f[3], f[4]);
    }
    buf_reset(&st->audit_pending);
}

/* ---- transactions ---- */

/* One write transaction at a time in this process: a waiting writer sleeps on
 * this mutex and wakes as soon as it is free, where SQLite's busy handler would
 * retry in 1-100 ms sleeps. Initialised before any thread starts; other
 * processes (the CLI) still meet SQLite's busy timeout. */
static pthread_mutex_t writer_lock = PTHREAD_MUTEX_INITIALIZER;

static int writer_lock_take(struct store *st)
{
    struct timespec deadline;
    if (pthread_mutex_trylock(&writer_lock) == 0)
        return STORE_OK;
    metrics_store_event(st->metrics, METRICS_WRITER_WAIT);
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += BUSY_TIMEOUT_MS / 1000;
    if (pthread_mutex_timedlock(&writer_lock, &deadline) == 0)
        return STORE_OK;
    metrics_store_event(st->metrics, METRICS_WRITER_TIMEOUT);
    return STORE_BUSY;
}

int store_begin(struct store *st)
{
    int rc;
    if (st->tx_depth == 0 && (rc = writer_lock_take(st)))
        return rc;
    rc = exec(st, st->tx_depth ? "SAVEPOINT nested" : "BEGIN IMMEDIATE");
    if (rc == STORE_OK) {
        if (st->tx_depth == 0)
            buf_reset(&st->audit_pending);
        if (st->tx_depth < 8)
            st->audit_mark[st->tx_depth] = st->audit_pending.len;
        st->tx_depth++;
    } else if (st->tx_depth == 0)
        pthread_mutex_unlock(&writer_lock);
    return rc;
}

int store_commit(struct store *st)
{
    int rc;
    if (st->tx_depth == 0)
        return STORE_ERROR;
    rc = exec(st, st->tx_depth > 1 ? "RELEASE nested" : "COMMIT");
    if (rc == STORE_OK) {
        if (--st->tx_depth == 0) {
            pthread_mutex_unlock(&writer_lock);
            audit_flush(st);
        }
    } else {
        store_rollback(st);
    }
    return rc;
}

void store_rollback(struct store *st)
{
    if (st->tx_depth == 0)
        return;
    if (st->tx_depth > 1)
        exec(st, "ROLLBACK TO nested; RELEASE nested");
    else
        exec(st, "ROLLBACK");
    if (--st->tx_depth < 8)
        st->audit_pending.len = st->audit_mark[st->tx_depth];
    st->audit_pending.data[st->audit_pending.len] = '\0';
    if (st->tx_depth == 0)
        pthread_mutex_unlock(&writer_lock);
}

void store_read_begin(struct store *st)
{
    sqlite3_stmt *s;
    if (st->read_depth++ || st->tx_depth)
        return; /* already inside one snapshot */
    s = stmt_get(st, S_READ_BEGIN);
    st->read_open = s && step_done(s) == STORE_OK;
}

void store_read_end(struct store *st)
{
    sqlite3_stmt *s;
    if (st->read_depth == 0 || --st->read_depth || !st->read_open)
        return;
    st->read_open = 0;
    s = stmt_get(st, S_READ_END);
    if (!s || step_done(s) != STORE_OK)
        exec(st, "ROLLBACK");
}

/* End a write: commit when rc is STORE_OK, else roll back; returns the final status. */
static int tx_end(struct store *st, int rc)
{
    if (rc == STORE_OK)
        return store_commit(st);
    store_rollback(st);
    return rc;
}

/* ---- spaces and tokens ---- */

int store_space_ensure(struct store *st, const char *space)
{
    char now[20];
    sqlite3_stmt *s = stmt_get(st, S_SPACE_ENSURE);
    if (!s)
        return STORE_ERROR;
    time_utc_text(now);
    bind_text(s, 1, space);
    bind_text(s, 2, now);
    return step_done(s);
}

long store_token_count(struct store *st)
{
    sqlite3_stmt *s = stmt_get(st, S_TOKEN_COUNT);
    long n = -1;
    if (!s)
        return -1;
    if (sqlite3_step(s) == SQLITE_ROW)
        n = sqlite3_column_int64(s, 0);
    finish(s);
    return n;
}

void token_record_release(struct token_record *t)
{
    free(t->id);
    free(t->space);
    free(t->role);
    free(t->label);
    free(t->created_at);
    free(t->last_used_at);
    free(t->revoked_at);
    memset(t, 0, sizeof *t);
}

int store_token_insert(struct store *st, const char *id, const unsigned char hash[32],
                       const char *space, const char *role, const char *label)
{
    char now[20];
    int rc;
    sqlite3_stmt *s = stmt_get(st, S_TOKEN_INSERT);
    if (!s)
        return STORE_ERROR;
    if ((rc = store_begin(st)))
        return rc;
    if ((rc = store_space_ensure(st, space)))
        return tx_end(st, rc);
    time_utc_text(now);
    bind_text(s, 1, id);
    sqlite3_bind_blob(s, 2, hash, 32, SQLITE_STATIC);
    bind_text(s, 3, space);
    bind_text(s, 4, role);
    bind_text(s, 5, label ? label : "");
    bind_text(s, 6, now);
    rc = step_done(s);
    if (rc == STORE_OK)
        rc = store_audit(st, space, "operator", "token.create", id);
    return tx_end(st, rc);
}

static void token_from_row(sqlite3_stmt *s, struct token_record *t)
{
    const void *hash = sqlite3_column_blob(s, 7);
    t->id = col_dup(s, 0);
    t->space = col_dup(s, 1);
    t->role = col_dup(s, 2);
    t->label = col_dup(s, 3);
    t->created_at = col_dup(s, 4);
    t->last_used_at = col_dup(s, 5);
    t->revoked_at = col_dup(s, 6);
    memset(t->hash, 0, sizeof t->hash);
    if (hash && sqlite3_column_bytes(s, 7) == 32)
        memcpy(t->hash, hash, 32);
}

int store_token_get(struct store *st, const char *id, struct token_record *out)
{
    sqlite3_stmt *s = stmt_get(st, S_TOKEN_GET);
    int rc;
    memset(out, 0, sizeof *out);
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, id);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        token_from_row(s, out);
        rc = STORE_OK;
    } else {
        rc = rc == SQLITE_DONE ? STORE_NOT_FOUND : status_of(rc);
    }
    finish(s);
    return rc;
}

int store_token_touch(struct store *st, const char *id)
{
    char now[20];
    sqlite3_stmt *s = stmt_get(st, S_TOKEN_TOUCH);
    if (!s)
        return STORE_ERROR;
    time_utc_text(now);
    bind_text(s, 1, id);
    bind_text(s, 2, now);
    return step_done(s);
}

int store_token_revoke(struct store *st, const char *id)
{
    char now[20];
    int rc;
    sqlite3_stmt *s = stmt_get(st, S_TOKEN_REVOKE);
    if (!s)
        return STORE_ERROR;
    time_utc_text(now);
    bind_text(s, 1, id);
    bind_text(s, 2, now);
    rc = step_done(s);
    if (rc == STORE_OK && sqlite3_changes(st->db) == 0)
        rc = STORE_NOT_FOUND;
    return rc;
}

int store_token_each(struct store *st, int (*each)(const struct token_record *, void *), void *ctx)
{
    sqlite3_stmt *s = stmt_get(st, S_TOKEN_ALL);
    int rc;
    if (!s)
        return STORE_ERROR;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct token_record t;
        int stop;
        token_from_row(s, &t);
        stop = each(&t, ctx);
        token_record_release(&t);
        if (stop)
            break;
    }
    rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? STORE_OK : status_of(rc);
    finish(s);
    return rc;
}

/* ---- knowledge ---- */

/* Fill k from a row of KNOWLEDGE_COLUMNS; the document (last, and so never
 * read from its overflow pages unless asked) only with with_document. */
static void knowledge_from_row(sqlite3_stmt *s, struct knowledge *k, int with_document)
{
    k->id = col_dup(s, 0);
    k->space = col_dup(s, 1);
    k->category = col_dup(s, 2);
    k->path = col_dup(s, 3);
    k->title = col_dup(s, 4);
    k->description = col_dup(s, 5);
    k->tags = col_dup(s, 6);
    k->types = (unsigned)sqlite3_column_int(s, 7);
    k->scenario = col_dup(s, 8);
    k->content = col_dup(s, 9);
    k->always_apply = sqlite3_column_int(s, 10);
    k->source = col_dup(s, 11);
    k->urls = col_dup(s, 12);
    k->agent_id = col_dup(s, 13);
    k->message_id = col_dup(s, 14);
    k->source_ts = col_dup(s, 15);
    k->score = sqlite3_column_int(s, 16);
    k->helpful = (long)sqlite3_column_int64(s, 17);
    k->harmful = (long)sqlite3_column_int64(s, 18);
    k->irrelevant = (long)sqlite3_column_int64(s, 19);
    k->unused = (long)sqlite3_column_int64(s, 20);
    k->neutral = (long)sqlite3_column_int64(s, 21);
    k->status = col_dup(s, 22);
    k->merged_into = col_dup(s, 23);
    k->version = (long)sqlite3_column_int64(s, 24);
    k->created_at = col_dup(s, 25);
    k->updated_at = col_dup(s, 26);
    k->meta = col_dup(s, 27);
    if (with_document)
        k->document = col_dup(s, 28);
}

/* Bind ?4..?18 of S_K_INSERT and S_K_UPDATE: the fields a document sets. */
static void bind_document(sqlite3_stmt *s, const struct knowledge *k)
{
    bind_text(s, 4, k->category);
    bind_text(s, 5, k->path);
    bind_text(s, 6, k->title);
    bind_text(s, 7, k->description ? k->description : "");
    bind_text(s, 8, k->tags ? k->tags : "[]");
    sqlite3_bind_int(s, 9, (int)k->types);
    bind_text(s, 10, k->scenario ? k->scenario : "");
    bind_text(s, 11, k->content ? k->content : "");
    sqlite3_bind_int(s, 12, k->always_apply);
    bind_text(s, 13, k->source ? k->source : "manual");
    bind_text(s, 14, k->urls ? k->urls : "[]");
    bind_text(s, 15, k->agent_id ? k->agent_id : "");
    bind_text(s, 16, k->message_id ? k->message_id : "");
    bind_text(s, 17, k->meta ? k->meta : "{}");
    bind_text(s, 18, k->document ? k->document : "");
}

/* Record the current row of entry id as a revision. */
static int revision_add(struct store *st, const char *id, const char *actor, const char *reason,
                        const char *now)
{
    sqlite3_stmt *s = stmt_get(st, S_REVISION_ADD);
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, id);
    bind_text(s, 2, actor);
    bind_text(s, 3, reason);
    bind_text(s, 4, now);
    return step_done(s);
}

static int audit_at(struct store *st, const char *now, const char *space, const char *actor,
                    const char *action, const char *target)
{
    sqlite3_stmt *s = stmt_get(st, S_AUDIT);
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, now);
    bind_text(s, 2, space);
    bind_text(s, 3, actor);
    bind_text(s, 4, action);
    bind_text(s, 5, target ? target : "");
    int rc = step_done(s);
    if (rc == STORE_OK && st->audit_hook) {
        const char *fields[] = {now, space, actor, action, target ? target : ""};
        size_t len = st->audit_pending.len;
        for (int i = 0; i < 5; i++)
            if (buf_add(&st->audit_pending, fields[i], strlen(fields[i]) + 1)) {
                st->audit_pending.len = len; /* too many rows: the log misses these */
                st->audit_pending.data[len] = '\0';
                break;
            }
        if (st->tx_depth == 0)
            audit_flush(st);
    }
    return rc;
}

int store_audit(struct store *st, const char *space, const char *actor, const char *action,
                const char *target)
{
    char now[20];
    time_utc_text(now);
    return audit_at(st, now, space, actor, action, target);
}

static int entry_in_space(struct store *st, const char *space, const char *id);

/* STORE_OK when id is an active entry of space, STORE_NOT_FOUND when not. */
static int entry_active(struct store *st, const char *space, const char *id)
{
    sqlite3_stmt *s = stmt_get(st, S_K_ACTIVE);
    int rc;
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, id);
    bind_text(s, 2, space);
    rc = sqlite3_step(s);
    finish(s);
    if (rc == SQLITE_ROW)
        return STORE_OK;
    return rc == SQLITE_DONE ? STORE_NOT_FOUND : status_of(rc);
}

/* Begin a write transaction on the active entry id of space, with the
 * transaction's time in now; on any error nothing is left open. */
static int begin_on_entry(struct store *st, const char *space, const char *id, char now[static 20])
{
    int rc;
    if ((rc = store_begin(st)))
        return rc;
    if ((rc = entry_active(st, space, id)))
        return tx_end(st, rc);
    time_utc_text(now);
    return STORE_OK;
}

/* STORE_CONFLICT when s (bound) returns a row, STORE_OK when none; s is reset. */
static int row_means_conflict(sqlite3_stmt *s)
{
    int rc = sqlite3_step(s);
    finish(s);
    if (rc == SQLITE_ROW)
        return STORE_CONFLICT;
    return rc == SQLITE_DONE ? STORE_OK : status_of(rc);
}

int store_knowledge_path_clash(struct store *st, const char *space, const char *category,
                               const char *path, const char *except_id, enum path_clash *clash)
{
    sqlite3_stmt *folder = stmt_get(st, S_K_FOLDER_TAKEN), *file = stmt_get(st, S_K_FILE_TAKEN);
    const char *slash = strchr(path, '/');
    int rc;
    *clash = PATH_CLASH_NONE;
    if (!folder || !file)
        return STORE_ERROR;
    bind_text(folder, 1, space);
    bind_text(folder, 2, category);
    bind_text(folder, 3, path);
    bind_text(folder, 4, except_id ? except_id : "");
    rc = row_means_conflict(folder);
    if (rc == STORE_CONFLICT)
        *clash = PATH_CLASH_FOLDER;
    if (rc != STORE_OK || !slash)
        return rc == STORE_CONFLICT ? STORE_OK : rc;
    bind_text(file, 1, space);
    bind_text(file, 2, category);
    sqlite3_bind_text(file, 3, path, (int)(slash - path), SQLITE_STATIC);
    bind_text(file, 4, except_id ? except_id : "");
    rc = row_means_conflict(file);
    if (rc == STORE_CONFLICT)
        *clash = PATH_CLASH_FILE;
    return rc == STORE_CONFLICT ? STORE_OK : rc;
}

/* Inside a write: STORE_CONFLICT when the active entry id now sits where a
 * file and a folder would share a name (export could not write both). */
/* CONFLICT when the active entry id, at (category, path), shares its name
 * with a folder (or, a folder of its, with a file) of space. */
static int place_clash_at(struct store *st, const char *space, const char *id, const char *category,
                          const char *path)
{
    enum path_clash clash = PATH_CLASH_NONE;
    int rc = store_knowledge_path_clash(st, space, category, path, id, &clash);
    if (rc == STORE_OK && clash != PATH_CLASH_NONE)
        rc = STORE_CONFLICT;
    return rc;
}

/* place_clash_at for entry id where it now is (nothing when it is not active). */
static int place_clash(struct store *st, const char *space, const char *id)
{
    sqlite3_stmt *s = stmt_get(st, S_K_PLACE);
    char *category = NULL, *path = NULL;
    int rc;
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, id);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        category = col_dup(s, 0);
        path = col_dup(s, 1);
    }
    finish(s);
    if (rc != SQLITE_ROW)
        return rc == SQLITE_DONE ? STORE_OK : status_of(rc); /* not active: nothing to place */
    rc = place_clash_at(st, space, id, category, path);
    free(category);
    free(path);
    return rc;
}

int store_knowledge_insert(struct store *st, const struct knowledge *k, const char *actor,
                           int *id_taken)
{
    char now[20];
    int rc;
    sqlite3_stmt *s = stmt_get(st, S_K_INSERT), *exists = stmt_get(st, S_K_ID_EXISTS);
    *id_taken = 0;
    if (!s || !exists)
        return STORE_ERROR;
    if ((rc = store_begin(st)))
        return rc;
    bind_text(exists, 1, k->id);
    rc = sqlite3_step(exists);
    finish(exists);
    if (rc == SQLITE_ROW) {
        *id_taken = 1;
        return tx_end(st, STORE_CONFLICT);
    }
    time_utc_text(now);
    bind_text(s, 1, k->id);
    bind_text(s, 2, k->space);
    bind_text(s, 3, now);
    bind_document(s, k);
    bind_text(s, 19, k->source_ts ? k->source_ts : "");
    sqlite3_bind_int(s, 20, k->score);
    rc = step_done(s);
    if (rc == STORE_OK)
        rc = place_clash(st, k->space, k->id);
    if (rc == STORE_OK)
        rc = revision_add(st, k->id, actor, "create", now);
    if (rc == STORE_OK)
        rc = audit_at(st, now, k->space, actor, "knowledge.create", k->id);
    return tx_end(st, rc);
}

int store_knowledge_get(struct store *st, const char *space, const char *id, int any_status,
                        struct knowledge *out)
{
    sqlite3_stmt *s = stmt_get(st, S_K_GET);
    int rc;
    knowledge_init(out);
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, id);
    bind_text(s, 2, space);
    sqlite3_bind_int(s, 3, any_status != 0);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        knowledge_from_row(s, out, 1);
        rc = STORE_OK;
    } else {
        rc = rc == SQLITE_DONE ? STORE_NOT_FOUND : status_of(rc);
    }
    finish(s);
    return rc;
}

static void bind_filter(sqlite3_stmt *s, const char *space, const struct knowledge_filter *f)
{
    bind_text(s, 1, space);
    sqlite3_bind_int(s, 2, (int)f->types);
    bind_text(s, 3, f->category);
}

int store_knowledge_list(struct store *st, const char *space, const struct knowledge_filter *f,
                         int (*each)(const struct knowledge *, void *), void *ctx, long *total)
{
    sqlite3_stmt *count = stmt_get(st, S_K_COUNT), *s = stmt_get(st, S_K_LIST);
    int rc;
    if (!count || !s)
        return STORE_ERROR;
    /* One read transaction so the count and the page agree; inside the
     * caller's transaction (BEGIN would fail there), that one serves. */
    int own_tx = st->tx_depth == 0;
    if (own_tx && (rc = exec(st, "BEGIN")))
        return rc;
    bind_filter(count, space, f);
    rc = sqlite3_step(count);
    *total = rc == SQLITE_ROW ? (long)sqlite3_column_int64(count, 0) : 0;
    finish(count);
    if (rc != SQLITE_ROW) {
        if (own_tx)
            exec(st, "ROLLBACK");
        return status_of(rc);
    }
    bind_filter(s, space, f);
    sqlite3_bind_int64(s, 4, f->limit);
    sqlite3_bind_int64(s, 5, f->offset);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct knowledge k;
        int stop;
        knowledge_init(&k);
        knowledge_from_row(s, &k, 0);
        stop = each(&k, ctx);
        knowledge_release(&k);
        if (stop)
            break;
    }
    rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? STORE_OK : status_of(rc);
    finish(s);
    if (own_tx)
        exec(st, "COMMIT");
    return rc;
}

int store_knowledge_add_case(struct store *st, const char *space, const char *id,
                             const struct knowledge_case *c, const char *actor, int *added)
{
    char now[20];
    int rc, helpful = strcmp(c->kind, "helpful") == 0;
    sqlite3_stmt *ins = stmt_get(st, S_CASE_INSERT);
    sqlite3_stmt *bump = stmt_get(st, helpful ? S_CASE_BUMP_HELPFUL : S_CASE_BUMP_HARMFUL);
    *added = 0;
    if (!ins || !bump)
        return STORE_ERROR;
    if ((rc = begin_on_entry(st, space, id, now)))
        return rc;
    bind_text(ins, 1, space);
    bind_text(ins, 2, id);
    bind_text(ins, 3, helpful ? "helpful" : "harmful");
    bind_text(ins, 4, c->case_id);
    bind_text(ins, 5, c->scenario ? c->scenario : "");
    bind_text(ins, 6, c->result ? c->result : "");
    bind_text(ins, 7, c->agent_id ? c->agent_id : "");
    bind_text(ins, 8, c->trace_id ? c->trace_id : "");
    bind_text(ins, 9, c->goal_id ? c->goal_id : "");
    bind_text(ins, 10, now);
    if ((rc = step_done(ins)))
        return tx_end(st, rc);
    if (sqlite3_changes(st->db) == 1) {
        bind_text(bump, 1, id);
        rc = step_done(bump);
        if (rc == STORE_OK)
            rc = audit_at(st, now, space, actor,
                          helpful ? "knowledge.helpful" : "knowledge.harmful", id);
        if (rc == STORE_OK)
            *added = 1;
    }
    return tx_end(st, rc);
}

/* Pass every row of a cases statement to each, then reset it. */
static int case_rows(sqlite3_stmt *s, int (*each)(const struct knowledge_case *, void *), void *ctx)
{
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct knowledge_case c = {
            .kind = col_text(s, 0),
            .case_id = col_text(s, 1),
            .scenario = col_text(s, 2),
            .result = col_text(s, 3),
            .agent_id = col_text(s, 4),
            .trace_id = col_text(s, 5),
            .goal_id = col_text(s, 6),
            .created_at = col_text(s, 7),
        };
        if (each(&c, ctx))
            break;
    }
    rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? STORE_OK : status_of(rc);
    finish(s);
    return rc;
}

int store_knowledge_cases_each(struct store *st, const char *id, const char *kind, long limit,
                               int (*each)(const struct knowledge_case *, void *), void *ctx)
{
    sqlite3_stmt *s = stmt_get(st, S_CASES);
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, id);
    bind_text(s, 2, kind);
    sqlite3_bind_int64(s, 3, limit);
    return case_rows(s, each, ctx);
}

int store_knowledge_cases_page(struct store *st, const char *space, const char *id,
                               const char *kind, long limit, long offset,
                               int (*each)(const struct knowledge_case *, void *), void *ctx,
                               long *total)
{
    sqlite3_stmt *count = stmt_get(st, S_CASES_COUNT), *s = stmt_get(st, S_CASES_PAGE);
    int rc;
    if (!count || !s)
        return STORE_ERROR;
    if ((rc = entry_in_space(st, space, id)))
        return rc;
    bind_text(count, 1, id);
    bind_text(count, 2, kind);
    rc = sqlite3_step(count);
    *total = rc == SQLITE_ROW ? (long)sqlite3_column_int64(count, 0) : 0;
    finish(count);
    if (rc != SQLITE_ROW)
        return status_of(rc);
    bind_text(s, 1, id);
    bind_text(s, 2, kind);
    sqlite3_bind_int64(s, 3, limit);
    sqlite3_bind_int64(s, 4, offset);
    return case_rows(s, each, ctx);
}

int store_knowledge_set_score(struct store *st, const char *space, const char *id, int score,
                              const char *actor)
{
    char now[20];
    int rc;
    sqlite3_stmt *s = stmt_get(st, S_K_SET_SCORE);
    if (!s)
        return STORE_ERROR;
    if ((rc = begin_on_entry(st, space, id, now)))
        return rc;
    bind_text(s, 1, id);
    bind_text(s, 2, space);
    sqlite3_bind_int(s, 3, score);
    bind_text(s, 4, now);
    rc = step_done(s);
    if (rc == STORE_OK && sqlite3_changes(st->db) == 1) {
        rc = revision_add(st, id, actor, "score", now);
        if (rc == STORE_OK)
            rc = audit_at(st, now, space, actor, "knowledge.score", id);
    }
    return tx_end(st, rc);
}

int store_knowledge_add_feedback(struct store *st, const char *space, const char *id,
                                 const char *text, const char *actor, long *feedback_id)
{
    char now[20];
    int rc;
    sqlite3_stmt *s = stmt_get(st, S_FEEDBACK_INSERT);
    if (!s)
        return STORE_ERROR;
    if ((rc = begin_on_entry(st, space, id, now)))
        return rc;
    bind_text(s, 1, space);
    bind_text(s, 2, id);
    bind_text(s, 3, text);
    bind_text(s, 4, actor);
    bind_text(s, 5, now);
    rc = step_done(s);
    if (rc == STORE_OK) {
        *feedback_id = (long)sqlite3_last_insert_rowid(st->db);
        rc = audit_at(st, now, space, actor, "knowledge.feedback", id);
    }
    return tx_end(st, rc);
}

int store_knowledge_delete(struct store *st, const char *space, const char *id, const char *actor)
{
    char now[20];
    int rc;
    sqlite3_stmt *s = stmt_get(st, S_K_DELETE);
    if (!s)
        return STORE_ERROR;
    if ((rc = store_begin(st)))
        return rc;
    time_utc_text(now);
    bind_text(s, 1, id);
    bind_text(s, 2, space);
    bind_text(s, 3, now);
    rc = step_done(s);
    if (rc == STORE_OK && sqlite3_changes(st->db) == 0)
        rc = STORE_NOT_FOUND;
    if (rc == STORE_OK)
        rc = revision_add(st, id, actor, "delete", now);
    if (rc == STORE_OK)
        rc = audit_at(st, now, space, actor, "knowledge.delete", id);
    return tx_end(st, rc);
}

/* STORE_OK when id belongs to space in any status. */
static int entry_in_space(struct store *st, const char *space, const char *id)
{
    sqlite3_stmt *s = stmt_get(st, S_K_SPACE_OF);
    int rc;
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, id);
    bind_text(s, 2, space);
    rc = sqlite3_step(s);
    finish(s);
    if (rc == SQLITE_ROW)
        return STORE_OK;
    return rc == SQLITE_DONE ? STORE_NOT_FOUND : status_of(rc);
}

int store_knowledge_revisions_each(struct store *st, const char *space, const char *id,
                                   int (*each)(const struct knowledge_revision *, void *),
                                   void *ctx)
{
    sqlite3_stmt *s = stmt_get(st, S_REVISIONS);
    int rc;
    if (!s)
        return STORE_ERROR;
    if ((rc = entry_in_space(st, space, id)))
        return rc;
    bind_text(s, 1, id);
    bind_text(s, 2, space);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct knowledge_revision r = {
            .version = (long)sqlite3_column_int64(s, 0),
            .document = col_text(s, 1),
            .actor = col_text(s, 2),
            .reason = col_text(s, 3),
            .created_at = col_text(s, 4),
        };
        if (each(&r, ctx))
            break;
    }
    rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? STORE_OK : status_of(rc);
    finish(s);
    return rc;
}

int store_knowledge_revert(struct store *st, const char *space, const char *id, long version,
                           const char *actor)
{
    char now[20];
    char *doc = NULL;
    int rc;
    sqlite3_stmt *get = stmt_get(st, S_REVISION_DOC), *upd = stmt_get(st, S_K_RESTORE);
    if (!get || !upd)
        return STORE_ERROR;
    if ((rc = store_begin(st)))
        return rc;
    bind_text(get, 1, id);
    bind_text(get, 2, space);
    sqlite3_bind_int64(get, 3, version);
    rc = sqlite3_step(get);
    if (rc == SQLITE_ROW)
        doc = col_dup(get, 0);
    finish(get);
    if (!doc)
        return tx_end(st, rc == SQLITE_DONE ? STORE_NOT_FOUND : status_of(rc));
    time_utc_text(now);
    bind_text(upd, 1, id);
    bind_text(upd, 2, space);
    bind_text(upd, 3, doc);
    bind_text(upd, 4, now);
    rc = step_done(upd); /* the partial unique index answers CONFLICT for a taken path */
    free(doc);
    if (rc == STORE_OK)
        rc = place_clash(st, space, id);
    if (rc == STORE_OK)
        rc = revision_add(st, id, actor, "revert", now);
    if (rc == STORE_OK)
        rc = audit_at(st, now, space, actor, "knowledge.revert", id);
    return tx_end(st, rc);
}

int store_knowledge_get_by_path(struct store *st, const char *space, const char *category,
                                const char *path, struct knowledge *out)
{
    sqlite3_stmt *s = stmt_get(st, S_K_BY_PATH);
    int rc;
    knowledge_init(out);
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, space);
    bind_text(s, 2, category);
    bind_text(s, 3, path);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        knowledge_from_row(s, out, 1);
        rc = STORE_OK;
    } else {
        rc = rc == SQLITE_DONE ? STORE_NOT_FOUND : status_of(rc);
    }
    finish(s);
    return rc;
}

int store_knowledge_update(struct store *st, const char *space, const char *id,
                           const struct knowledge *k, long expected_version, const char *actor,
                           const char *reason)
{
    char now[20], action[64];
    int rc;
    sqlite3_stmt *s = stmt_get(st, S_K_UPDATE);
    if (!s)
        return STORE_ERROR;
    if ((rc = begin_on_entry(st, space, id, now)))
        return rc;
    bind_text(s, 1, id);
    bind_text(s, 2, space);
    sqlite3_bind_int64(s, 3, expected_version);
    bind_document(s, k);
    bind_text(s, 19, now);
    rc = step_done(s);
    if (rc == STORE_OK && sqlite3_changes(st->db) == 0)
        rc = STORE_CONFLICT; /* it exists (checked above), so the version moved on */
    if (rc == STORE_OK)
        rc = place_clash_at(st, space, id, k->category, k->path);
    if (rc == STORE_OK)
        rc = revision_add(st, id, actor, reason, now);
    snprintf(action, sizeof action, "knowledge.%s", reason);
    if (rc == STORE_OK)
        rc = audit_at(st, now, space, actor, action, id);
    return tx_end(st, rc);
}

int store_knowledge_move(struct store *st, const char *space, const char *id, long expected_version,
                         const struct knowledge *k, const char *actor)
{
    char now[20];
    int rc;
    sqlite3_stmt *s = stmt_get(st, S_K_MOVE);
    if (!s || expected_version <= 0)
        return STORE_ERROR;
    if ((rc = begin_on_entry(st, space, id, now)))
        return rc;
    bind_text(s, 1, id);
    bind_text(s, 2, space);
    sqlite3_bind_int64(s, 3, expected_version);
    bind_text(s, 4, k->category);
    bind_text(s, 5, k->path);
    bind_text(s, 6, k->title);
    bind_text(s, 7, k->scenario ? k->scenario : "");
    sqlite3_bind_int(s, 8, k->always_apply);
    bind_text(s, 9, now);
    rc = step_done(s); /* the partial unique index answers CONFLICT for a taken path */
    if (rc == STORE_OK && sqlite3_changes(st->db) == 0)
        rc = STORE_CONFLICT; /* it is active (checked above), so the version moved on */
    if (rc == STORE_OK)
        rc = place_clash_at(st, space, id, k->category, k->path);
    if (rc == STORE_OK)
        rc = revision_add(st, id, actor, "rename", now);
    if (rc == STORE_OK)
        rc = audit_at(st, now, space, actor, "knowledge.rename", id);
    return tx_end(st, rc);
}

int store_knowledge_revision_time(struct store *st, const char *space, const char *id, long version,
                                  char out[static 20])
{
    sqlite3_stmt *s = stmt_get(st, S_REVISION_TIME);
    int rc;
    out[0] = '\0';
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, id);
    bind_text(s, 2, space);
    sqlite3_bind_int64(s, 3, version);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        snprintf(out, 20, "%s", col_text(s, 0));
    finish(s);
    if (rc == SQLITE_ROW)
        return STORE_OK;
    return rc == SQLITE_DONE ? STORE_NOT_FOUND : status_of(rc);
}

int store_knowledge_scan(struct store *st, const char *space, enum knowledge_scan what,
                         const char *category, int with_document,
                         int (*each)(const struct knowledge *, void *), void *ctx)
{
    static const enum stmt_id ids[] = {[SCAN_CATEGORY] = S_SCAN_CATEGORY,
                                       [SCAN_ALWAYS_RULES] = S_SCAN_ALWAYS_RULES,
                                       [SCAN_ACTIVE] = S_SCAN_ACTIVE,
                                       [SCAN_DELETED] = S_SCAN_DELETED};
    sqlite3_stmt *s = stmt_get(st, ids[what]);
    int rc;
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, space);
    if (what == SCAN_CATEGORY || what == SCAN_DELETED)
        bind_text(s, 2, category);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct knowledge k;
        int stop;
        knowledge_init(&k);
        knowledge_from_row(s, &k, with_document);
        stop = each(&k, ctx);
        knowledge_release(&k);
        if (stop)
            break;
    }
    rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? STORE_OK : status_of(rc);
    finish(s);
    return rc;
}

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

/* ---- traces and the knowledge log ---- */

const char *const store_eval_statuses[5] = {"irrelevant", "unused", "helpful", "harmful",
                                            "neutral"};

int store_trace_put(struct store *st, const char *space, const char *trace_id, const char *task,
                    int *created)
{
    char now[27];
    int rc;
    sqlite3_stmt *s = stmt_get(st, task ? S_TRACE_UPSERT : S_TRACE_INSERT);
    sqlite3_stmt *exists = stmt_get(st, S_TRACE_TASK);
    if (!s || !exists)
        return STORE_ERROR;
    if ((rc = store_begin(st)))
        return rc;
    bind_text(exists, 1, space);
    bind_text(exists, 2, trace_id);
    rc = sqlite3_step(exists);
    finish(exists);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return tx_end(st, status_of(rc));
    if (created)
        *created = rc == SQLITE_DONE;
    if (rc == SQLITE_ROW && !task)
        return tx_end(st, STORE_OK);
    time_utc_iso_micro(now);
    bind_text(s, 1, space);
    bind_text(s, 2, trace_id);
    if (task) {
        bind_text(s, 3, task);
        bind_text(s, 4, now);
    } else {
        bind_text(s, 3, now);
    }
    return tx_end(st, step_done(s));
}

static void trace_from_row(sqlite3_stmt *s, struct trace_info *t)
{
    t->trace_id = col_text(s, 0);
    t->task = col_text(s, 1);
    t->created_at = col_text(s, 2);
    t->injections = (long)sqlite3_column_int64(s, 3);
    t->pending = (long)sqlite3_column_int64(s, 4);
    for (int i = 0; i < 5; i++)
        t->counts[i] = (long)sqlite3_column_int64(s, 5 + i);
}

int store_trace_get(struct store *st, const char *space, const char *trace_id,
                    void (*each)(const struct trace_info *, void *), void *ctx)
{
    sqlite3_stmt *s = stmt_get(st, S_TRACE_GET);
    int rc;
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, space);
    bind_text(s, 2, trace_id);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        struct trace_info t;
        trace_from_row(s, &t);
        each(&t, ctx);
        rc = STORE_OK;
    } else {
        rc = rc == SQLITE_DONE ? STORE_NOT_FOUND : status_of(rc);
    }
    finish(s);
    return rc;
}

int store_traces_list(struct store *st, const char *space, long limit, long offset,
                      void (*each)(const struct trace_info *, void *), void *ctx, long *total)
{
    sqlite3_stmt *count = stmt_get(st, S_TRACE_COUNT), *s = stmt_get(st, S_TRACE_LIST);
    int rc;
    if (!count || !s)
        return STORE_ERROR;
    bind_text(count, 1, space);
    rc = sqlite3_step(count);
    *total = rc == SQLITE_ROW ? (long)sqlite3_column_int64(count, 0) : 0;
    finish(count);
    if (rc != SQLITE_ROW)
        return status_of(rc);
    bind_text(s, 1, space);
    sqlite3_bind_int64(s, 2, limit);
    sqlite3_bind_int64(s, 3, offset);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct trace_info t;
        trace_from_row(s, &t);
        each(&t, ctx);
    }
    rc = rc == SQLITE_DONE ? STORE_OK : status_of(rc);
    finish(s);
    return rc;
}

int store_log_add(struct store *st, const char *space, const char *trace_id,
                  const char *knowledge_id, const char *goal_id, long sequence, long *log_id)
{
    char now[27];
    int rc;
    sqlite3_stmt *s = stmt_get(st, S_LOG_ADD);
    if (!s)
        return STORE_ERROR;
    if ((rc = store_begin(st)))
        return rc;
    if ((rc = store_trace_put(st, space, trace_id, NULL, NULL)))
        return tx_end(st, rc);
    time_utc_iso_micro(now);
    bind_text(s, 1, space);
    bind_text(s, 2, trace_id);
    bind_text(s, 3, knowledge_id);
    bind_text(s, 4, goal_id ? goal_id : "");
    sqlite3_bind_int64(s, 5, sequence);
    bind_text(s, 6, now);
    rc = step_done(s);
    if (rc == STORE_OK && sqlite3_changes(st->db) == 0)
        rc = STORE_NOT_FOUND;
    if (rc == STORE_OK)
        *log_id = (long)sqlite3_last_insert_rowid(st->db);
    return tx_end(st, rc);
}

static void log_from_row(sqlite3_stmt *s, struct log_entry *e)
{
    e->id = (long)sqlite3_column_int64(s, 0);
    e->trace_id = col_text(s, 1);
    e->knowledge_id = col_text(s, 2);
    e->goal_id = col_text(s, 3);
    e->injected_at_sequence = (long)sqlite3_column_int64(s, 4);
    e->injected_at = col_text(s, 5);
    e->task = col_text(s, 6);
    e->content = col_text(s, 7);
    e->eval_status = (const char *)sqlite3_column_text(s, 8);
    e->eval_reason = (const char *)sqlite3_column_text(s, 9);
    e->evaluated_at = (const char *)sqlite3_column_text(s, 10);
    e->evaluated_at_trigger = (const char *)sqlite3_column_text(s, 11);
}

static int log_rows(sqlite3_stmt *s, void (*each)(const struct log_entry *, void *), void *ctx)
{
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct log_entry e;
        log_from_row(s, &e);
        each(&e, ctx);
    }
    rc = rc == SQLITE_DONE ? STORE_OK : status_of(rc);
    finish(s);
    return rc;
}

int store_log_each(struct store *st, const char *space, const char *trace_id, int pending_only,
                   long limit, long offset, void (*each)(const struct log_entry *, void *),
                   void *ctx, long *total)
{
    sqlite3_stmt *exists = stmt_get(st, S_TRACE_TASK);
    sqlite3_stmt *s = stmt_get(st, pending_only ? S_LOG_PENDING : S_LOG_ALL);
    sqlite3_stmt *count = stmt_get(st, S_LOG_COUNT);
    int rc;
    if (!s || !exists || !count)
        return STORE_ERROR;
    /* One read transaction: the trace and its log agree. */
    int own_tx = st->tx_depth == 0;
    if (own_tx && (rc = exec(st, "BEGIN")))
        return rc;
    bind_text(exists, 1, space);
    bind_text(exists, 2, trace_id);
    rc = sqlite3_step(exists);
    finish(exists);
    if (rc == SQLITE_ROW) {
        bind_text(count, 1, space);
        bind_text(count, 2, trace_id);
        sqlite3_bind_int(count, 3, pending_only);
        rc = sqlite3_step(count);
        if (total)
            *total = rc == SQLITE_ROW ? (long)sqlite3_column_int64(count, 0) : 0;
        finish(count);
        if (rc != SQLITE_ROW) {
            rc = status_of(rc);
        } else {
            bind_text(s, 1, space);
            bind_text(s, 2, trace_id);
            sqlite3_bind_int64(s, 3, limit);
            sqlite3_bind_int64(s, 4, offset);
            rc = log_rows(s, each, ctx);
        }
    } else {
        rc = rc == SQLITE_DONE ? STORE_NOT_FOUND : status_of(rc);
    }
    if (own_tx)
        exec(st, "COMMIT");
    return rc;
}

int store_log_of_entry(struct store *st, const char *knowledge_id, long limit,
                       void (*each)(const struct log_entry *, void *), void *ctx)
{
    sqlite3_stmt *s = stmt_get(st, S_LOG_ENTRY);
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, knowledge_id);
    sqlite3_bind_int64(s, 2, limit);
    return log_rows(s, each, ctx);
}

/* Count an irrelevant/unused/neutral judgement once per trace. */
static int rollup_metric(struct store *st, const char *space, const char *trace_id,
                         const char *knowledge_id, const char *status, const char *now,
                         int *rolled_up)
{
    enum stmt_id bump = strcmp(status, "irrelevant") == 0 ? S_BUMP_IRRELEVANT
                        : strcmp(status, "unused") == 0   ? S_BUMP_UNUSED
                                                          : S_BUMP_NEUTRAL;
    sqlite3_stmt *ins = stmt_get(st, S_ROLLUP_INSERT), *b = stmt_get(st, bump);
    int rc;
    if (!ins || !b)
        return STORE_ERROR;
    bind_text(ins, 1, space);
    bind_text(ins, 2, trace_id);
    bind_text(ins, 3, knowledge_id);
    bind_text(ins, 4, status);
    bind_text(ins, 5, now);
    if ((rc = step_done(ins)) || sqlite3_changes(st->db) == 0)
        return rc;
    bind_text(b, 1, knowledge_id);
    rc = step_done(b);
    if (rc == STORE_OK)
        *rolled_up = 1;
    return rc;
}

int store_log_evaluate(struct store *st, const char *space, const char *trace_id,
                       const char *knowledge_id, const char *status, const char *reason,
                       const char *trigger, long *log_id, int *rolled_up)
{
    sqlite3_stmt *find = stmt_get(st, S_LOG_FIND_PENDING), *set = stmt_get(st, S_LOG_SET_EVAL);
    sqlite3_stmt *task_q = stmt_get(st, S_TRACE_TASK);
    char now[27], *goal_id = NULL, *task = NULL;
    int rc;
    *rolled_up = 0;
    if (!find || !set || !task_q)
        return STORE_ERROR;
    if ((rc = store_begin(st)))
        return rc;
    bind_text(find, 1, space);
    bind_text(find, 2, trace_id);
    bind_text(find, 3, knowledge_id);
    rc = sqlite3_step(find);
    if (rc == SQLITE_ROW) {
        *log_id = (long)sqlite3_column_int64(find, 0);
        goal_id = col_dup(find, 1);
    }
    finish(find);
    if (rc != SQLITE_ROW)
        return tx_end(st, rc == SQLITE_DONE ? STORE_NOT_FOUND : status_of(rc));
    time_utc_iso_micro(now);
    sqlite3_bind_int64(set, 1, *log_id);
    bind_text(set, 2, status);
    bind_text(set, 3, reason ? reason : "");
    bind_text(set, 4, now);
    bind_text(set, 5, trigger);
    rc = step_done(set);
    if (rc == STORE_OK && (strcmp(status, "helpful") == 0 || strcmp(status, "harmful") == 0)) {
        /* A case named after the trace: a second verdict of the same kind from
         * the same trace counts nothing. A deleted entry keeps its log only. */
        struct buf case_id;
        int added = 0;
        bind_text(task_q, 1, space);
        bind_text(task_q, 2, trace_id);
        if (sqlite3_step(task_q) == SQLITE_ROW)
            task = col_dup(task_q, 0);
        finish(task_q);
        buf_init(&case_id, 1024);
        buf_addf(&case_id, "trace:%s", trace_id);
        struct knowledge_case c = {.kind = status,
                                   .case_id = case_id.data,
                                   .scenario = task ? task : "",
                                   .result = reason ? reason : "",
                                   .trace_id = trace_id,
                                   .goal_id = goal_id};
        rc = store_knowledge_add_case(st, space, knowledge_id, &c, "evaluation", &added);
        if (rc == STORE_NOT_FOUND)
            rc = STORE_OK;
        *rolled_up = added;
        buf_release(&case_id);
    } else if (rc == STORE_OK) {
        rc = rollup_metric(st, space, trace_id, knowledge_id, status, now, rolled_up);
    }
    free(goal_id);
    free(task);
    return tx_end(st, rc);
}

/* ---- browser logins ---- */

int store_login_insert(struct store *st, const unsigned char hash[32], const char *token_id,
                       const char *csrf, long lifetime_seconds)
{
    char now[20], expires[20];
    int rc;
    sqlite3_stmt *s = stmt_get(st, S_LOGIN_INSERT), *gc = stmt_get(st, S_LOGIN_EXPIRE);
    if (!s || !gc)
        return STORE_ERROR;
    if ((rc = store_begin(st)))
        return rc;
    time_utc_text(now);
    time_utc_text_offset(expires, lifetime_seconds);
    bind_text(gc, 1, now); /* expired logins go as new ones come */
    if ((rc = step_done(gc)))
        return tx_end(st, rc);
    sqlite3_bind_blob(s, 1, hash, 32, SQLITE_STATIC);
    bind_text(s, 2, token_id);
    bind_text(s, 3, csrf);
    bind_text(s, 4, now);
    bind_text(s, 5, expires);
    return tx_end(st, step_done(s));
}

int store_login_get(struct store *st, const unsigned char hash[32], struct token_record *token,
                    char **csrf)
{
    char now[20];
    int rc;
    sqlite3_stmt *s = stmt_get(st, S_LOGIN_GET);
    memset(token, 0, sizeof *token);
    *csrf = NULL;
    if (!s)
        return STORE_ERROR;
    time_utc_text(now);
    sqlite3_bind_blob(s, 1, hash, 32, SQLITE_STATIC);
    bind_text(s, 2, now);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        token_from_row(s, token);
        *csrf = col_dup(s, 8);
        rc = STORE_OK;
    } else {
        rc = rc == SQLITE_DONE ? STORE_NOT_FOUND : status_of(rc);
    }
    finish(s);
    return rc;
}

int store_login_delete(struct store *st, const unsigned char hash[32])
{
    sqlite3_stmt *s = stmt_get(st, S_LOGIN_DELETE);
    if (!s)
        return STORE_ERROR;
    sqlite3_bind_blob(s, 1, hash, 32, SQLITE_STATIC);
    return step_done(s);
}

/* ---- analysis sessions ---- */

/* Write a session with statement `which`: ?1-?5 are space, id, title,
 * document and now; a guarded statement (guard set) binds it as ?6 and
 * answers STORE_CONFLICT when the guard no longer holds. */
static int session_write(struct store *st, int which, const char *space, const char *id,
                         const char *title, const char *document, const char *guard)
{
    char now[27];
    int rc;
    sqlite3_stmt *s = stmt_get(st, which);
    if (!s)
        return STORE_ERROR;
    time_utc_iso_micro(now);
    bind_text(s, 1, space);
    bind_text(s, 2, id);
    bind_text(s, 3, title ? title : "");
    bind_text(s, 4, document);
    bind_text(s, 5, now);
    if (guard)
        bind_text(s, 6, guard);
    rc = step_done(s);
    if (guard && rc == STORE_OK && sqlite3_changes(st->db) == 0)
        rc = STORE_CONFLICT;
    return rc;
}

int store_session_put(struct store *st, const char *space, const char *id, const char *title,
                      const char *document)
{
    return session_write(st, S_SESSION_PUT, space, id, title, document, NULL);
}

int store_session_put_if(struct store *st, const char *space, const char *id, const char *title,
                         const char *document, const char *expected_updated_at)
{
    return session_write(st, S_SESSION_PUT_IF, space, id, title, document, expected_updated_at);
}

static int session_rows(sqlite3_stmt *s, void (*each)(const struct session_info *, void *),
                        void *ctx, int *found)
{
    int rc;
    *found = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct session_info si = {col_text(s, 0), col_text(s, 1),
                                  (const char *)sqlite3_column_text(s, 2), col_text(s, 3),
                                  col_text(s, 4)};
        *found = 1;
        each(&si, ctx);
    }
    rc = rc == SQLITE_DONE ? STORE_OK : status_of(rc);
    finish(s);
    return rc;
}

int store_session_get(struct store *st, const char *space, const char *id,
                      void (*each)(const struct session_info *, void *), void *ctx)
{
    sqlite3_stmt *s = stmt_get(st, S_SESSION_GET);
    int rc, found;
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, space);
    bind_text(s, 2, id);
    rc = session_rows(s, each, ctx, &found);
    return rc == STORE_OK && !found ? STORE_NOT_FOUND : rc;
}

int store_session_list(struct store *st, const char *space,
                       void (*each)(const struct session_info *, void *), void *ctx)
{
    sqlite3_stmt *s = stmt_get(st, S_SESSION_LIST);
    int found;
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, space);
    return session_rows(s, each, ctx, &found);
}

int store_session_delete(struct store *st, const char *space, const char *id)
{
    int rc;
    sqlite3_stmt *s = stmt_get(st, S_SESSION_DELETE);
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, space);
    bind_text(s, 2, id);
    rc = step_done(s);
    return rc == STORE_OK && sqlite3_changes(st->db) == 0 ? STORE_NOT_FOUND : rc;
}

/* ---- the LLM usage ledger ---- */

int store_llm_call_add(struct store *st, const char *space, const char *purpose, const char *model,
                       long prompt_tokens, long completion_tokens, long latency_ms,
                       const char *outcome)
{
    char now[27];
    sqlite3_stmt *s = stmt_get(st, S_LLM_CALL_ADD);
    if (!s)
        return STORE_ERROR;
    time_utc_iso_micro(now);
    bind_text(s, 1, space ? space : "");
    bind_text(s, 2, purpose);
    bind_text(s, 3, model);
    sqlite3_bind_int64(s, 4, prompt_tokens);
    sqlite3_bind_int64(s, 5, completion_tokens);
    sqlite3_bind_int64(s, 6, latency_ms);
    bind_text(s, 7, outcome);
    bind_text(s, 8, now);
    return step_done(s);
}

int store_llm_usage(struct store *st, const char *space, const char *since,
                    void (*each)(const struct llm_usage *, void *), void *ctx)
{
    sqlite3_stmt *s = stmt_get(st, S_LLM_USAGE);
    int rc;
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, space);
    bind_text(s, 2, since ? since : "");
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct llm_usage u = {col_text(s, 0),
                              col_text(s, 1),
                              (long)sqlite3_column_int64(s, 2),
                              (long)sqlite3_column_int64(s, 3),
                              (long)sqlite3_column_int64(s, 4),
                              (long)sqlite3_column_int64(s, 5),
                              (long)sqlite3_column_int64(s, 6)};
        each(&u, ctx);
    }
    rc = rc == SQLITE_DONE ? STORE_OK : status_of(rc);
    finish(s);
    return rc;
}

/* ---- metrics ---- */

int store_space_counts(struct store *st, void (*each)(const char *, long, long, void *), void *ctx)
{
    sqlite3_stmt *s = stmt_get(st, S_SPACE_COUNTS);
    int rc;
    if (!s)
        return STORE_ERROR;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW)
        each(col_text(s, 0), (long)sqlite3_column_int64(s, 1), (long)sqlite3_column_int64(s, 2),
             ctx);
    rc = rc == SQLITE_DONE ? STORE_OK : status_of(rc);
    finish(s);
    return rc;
}

int store_job_counts(struct store *st, void (*each)(const char *, const char *, long, void *),
                     void *ctx)
{
    sqlite3_stmt *s = stmt_get(st, S_JOB_COUNTS);
    int rc;
    if (!s)
        return STORE_ERROR;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW)
        each(col_text(s, 0), col_text(s, 1), (long)sqlite3_column_int64(s, 2), ctx);
    rc = rc == SQLITE_DONE ? STORE_OK : status_of(rc);
    finish(s);
    return rc;
}

/* ---- jobs ---- */

static void job_from_row(sqlite3_stmt *s, struct job_info *j)
{
    j->id = col_text(s, 0);
    j->space = col_text(s, 1);
    j->kind = col_text(s, 2);
    j->status = col_text(s, 3);
    j->progress = (long)sqlite3_column_int64(s, 4);
    j->total = (long)sqlite3_column_int64(s, 5);
    j->params = col_text(s, 6);
    j->result = (const char *)sqlite3_column_text(s, 7);
    j->error = (const char *)sqlite3_column_text(s, 8);
    j->actor = col_text(s, 9);
    j->created_at = col_text(s, 10);
    j->updated_at = col_text(s, 11);
}

static int job_rows(sqlite3_stmt *s, void (*each)(const struct job_info *, void *), void *ctx,
                    int *found)
{
    int rc;
    *found = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct job_info j;
        job_from_row(s, &j);
        *found = 1;
        each(&j, ctx);
    }
    rc = rc == SQLITE_DONE ? STORE_OK : status_of(rc);
    finish(s);
    return rc;
}

int store_job_create(struct store *st, const char *id, const char *space, const char *kind,
                     const char *params, const char *actor)
{
    char now[27];
    sqlite3_stmt *s = stmt_get(st, S_JOB_CREATE);
    if (!s)
        return STORE_ERROR;
    time_utc_iso_micro(now);
    bind_text(s, 1, id);
    bind_text(s, 2, space);
    bind_text(s, 3, kind);
    bind_text(s, 4, params ? params : "{}");
    bind_text(s, 5, actor);
    bind_text(s, 6, now);
    return step_done(s);
}

int store_job_get(struct store *st, const char *space, const char *id,
                  void (*each)(const struct job_info *, void *), void *ctx)
{
    sqlite3_stmt *s = stmt_get(st, S_JOB_GET);
    int rc, found;
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, space);
    bind_text(s, 2, id);
    rc = job_rows(s, each, ctx, &found);
    return rc == STORE_OK && !found ? STORE_NOT_FOUND : rc;
}

int store_job_list(struct store *st, const char *space, long limit,
                   void (*each)(const struct job_info *, void *), void *ctx)
{
    sqlite3_stmt *s = stmt_get(st, S_JOB_LIST);
    int found;
    if (!s)
        return STORE_ERROR;
    bind_text(s, 1, space);
    sqlite3_bind_int64(s, 2, limit);
    return job_rows(s, each, ctx, &found);
}

int store_job_claim(struct store *st, void (*each)(const struct job_info *, void *), void *ctx)
{
    char now[27];
    sqlite3_stmt *s = stmt_get(st, S_JOB_CLAIM);
    int rc, found;
    if (!s)
        return STORE_ERROR;
    time_utc_iso_micro(now);
    bind_text(s, 1, now);
    rc = job_rows(s, each, ctx, &found);
    return rc == STORE_OK && !found ? STORE_NOT_FOUND : rc;
}

int store_job_progress(struct store *st, const char *id, long progress, long total)
{
    char now[27];
    sqlite3_stmt *s = stmt_get(st, S_JOB_PROGRESS);
    if (!s)
        return STORE_ERROR;
    time_utc_iso_micro(now);
    bind_text(s, 1, id);
    sqlite3_bind_int64(s, 2, progress);
    sqlite3_bind_int64(s, 3, total);
    bind_text(s, 4, now);
    return step_done(s);
}

int store_job_finish(struct store *st, const char *id, const char *status, const char *result,
                     const char *error)
{
    char now[27];
    sqlite3_stmt *s = stmt_get(st, S_JOB_FINISH);
    if (!s)
        return STORE_ERROR;
    time_utc_iso_micro(now);
    bind_text(s, 1, id);
    bind_text(s, 2, status);
    bind_text(s, 3, result);
    bind_text(s, 4, error);
    bind_text(s, 5, now);
    return step_done(s);
}

int store_job_requeue_running(struct store *st)
{
    char now[27];
    sqlite3_stmt *s = stmt_get(st, S_JOB_REQUEUE);
    if (!s)
        return STORE_ERROR;
    time_utc_iso_micro(now);
    bind_text(s, 1, now);
    return step_done(s);
}

int store_knowledge_feedback_mark(struct store *st, long feedback_id, const char *status)
{
    sqlite3_stmt *s = stmt_get(st, S_FEEDBACK_MARK);
    if (!s)
        return STORE_ERROR;
    sqlite3_bind_int64(s, 1, feedback_id);
    bind_text(s, 2, status);
    return step_done(s);
}

int store_knowledge_merge(struct store *st, const char *space, const char *survivor,
                          const char *member, long member_version, const char *actor)
{
    char now[20];
    int rc;
    sqlite3_stmt *counters = stmt_get(st, S_MERGE_COUNTERS), *cases = stmt_get(st, S_MERGE_CASES);
    sqlite3_stmt *tomb = stmt_get(st, S_MERGE_TOMBSTONE);
    if (!counters || !cases || !tomb)
        return STORE_ERROR;
    if ((rc = store_begin(st)))
        return rc;
    if ((rc = entry_active(st, space, survivor)) || (rc = entry_active(st, space, member)))
        return tx_end(st, rc);
    time_utc_text(now);
    bind_text(counters, 1, survivor);
    bind_text(counters, 2, member);
    if ((rc = step_done(counters)))
        return tx_end(st, rc);
    bind_text(cases, 1, survivor);
    bind_text(cases, 2, member);
    if ((rc = step_done(cases)))
        return tx_end(st, rc);
    bind_text(tomb, 1, survivor);
    bind_text(tomb, 2, member);
    bind_text(tomb, 3, now);
    bind_text(tomb, 4, space);
    sqlite3_bind_int64(tomb, 5, member_version);
    if ((rc = step_done(tomb)))
        return tx_end(st, rc);
    if (sqlite3_changes(st->db) == 0) /* active (checked above): it changed since it was read */
        return tx_end(st, STORE_CONFLICT);
    rc = revision_add(st, member, actor, "merge", now);
    if (rc == STORE_OK)
        rc = audit_at(st, now, space, actor, "knowledge.merge", member);
    return tx_end(st, rc);
}

int store_prepare_all(struct store *st, const char **failed_sql)
{
    *failed_sql = NULL;
    for (int i = 0; i < S_COUNT; i++)
        if (!stmt_get(st, (enum stmt_id)i)) {
            *failed_sql = stmt_sql[i];
            return STORE_ERROR;
        }
    return STORE_OK;
}

/* ---- operator checks ---- */

int store_backup(struct store *st, const char *path)
{
    sqlite3 *dest;
    sqlite3_backup *b;
    int rc;
    if (sqlite3_open_v2(path, &dest, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK) {
        sqlite3_close(dest);
        return STORE_READONLY;
    }
    b = sqlite3_backup_init(dest, "main", st->db, "main");
    if (!b) {
        sqlite3_close(dest);
        return STORE_ERROR;
    }
    /* In steps, so writers are never blocked for long while the copy runs. */
    do {
        rc = sqlite3_backup_step(b, 256);
        if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
            sqlite3_sleep(20);
    } while (rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED);
    sqlite3_backup_finish(b);
    rc = rc == SQLITE_DONE ? sqlite3_errcode(dest) : rc;
    sqlite3_close(dest);
    return status_of(rc);
}

/* One text result of a query, into out. */
static int query_text(struct store *st, const char *sql, struct buf *out)
{
    sqlite3_stmt *s;
    int rc;
    buf_reset(out);
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return STORE_ERROR;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (out->len)
            buf_addch(out, '\n');
        buf_adds(out, col_text(s, 0));
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? STORE_OK : status_of(rc);
}

int store_check(struct store *st, struct buf *report)
{
    struct buf r;
    const char *failed;
    int problems = 0;
    buf_init(&r, 1 << 20);
    if (query_text(st, "PRAGMA integrity_check", &r) || strcmp(r.data, "ok") != 0) {
        buf_addf(report, "integrity_check: %s\n", r.data);
        problems++;
    } else {
        buf_adds(report, "integrity_check: ok\n");
    }
    if (query_text(st, "PRAGMA foreign_key_check", &r) || r.len) {
        buf_addf(report, "foreign_key_check: %s\n", r.len ? r.data : store_errmsg(st));
        problems++;
    } else {
        buf_adds(report, "foreign_key_check: ok\n");
    }
    {
        static const char *const indexes[] = {"knowledge_fts", "knowledge_head"};
        struct buf a, b, sql;
        buf_init(&a, 64);
        buf_init(&b, 64);
        buf_init(&sql, 256);
        query_text(st, "SELECT count(*) FROM knowledge WHERE status = 'active'", &a);
        for (size_t i = 0; i < 2; i++) {
            buf_reset(&sql);
            buf_addf(&sql, "INSERT INTO %s(%s) VALUES('integrity-check')", indexes[i], indexes[i]);
            if (exec(st, sql.data)) {
                buf_addf(report, "%s: %s\n", indexes[i], store_errmsg(st));
                problems++;
                continue;
            }
            buf_reset(&sql);
            buf_addf(&sql, "SELECT count(*) FROM %s", indexes[i]);
            query_text(st, sql.data, &b);
            if (strcmp(a.data, b.data) != 0) {
                buf_addf(report, "%s: %s active entries, %s indexed\n", indexes[i], a.data, b.data);
                problems++;
            } else {
                buf_addf(report, "%s: ok, %s active entries all indexed\n", indexes[i], a.data);
            }
        }
        buf_release(&sql);
        query_text(st,
                   "SELECT count(*) FROM knowledge k WHERE status = 'active' AND"
                   " (SELECT count(*) FROM knowledge_revisions r WHERE r.knowledge_id = k.id) = 0",
                   &a);
        if (strcmp(a.data, "0") != 0) {
            buf_addf(report, "revisions: %s active entries have no revision\n", a.data);
            problems++;
        } else {
            buf_adds(report, "revisions: every entry has its history\n");
        }
        /* What export cannot write (kept from before the file view refused
         * it): a name over 255 bytes, or a file beside a folder of its name. */
        query_text(st,
                   "SELECT count(*) FROM knowledge k WHERE status = 'active' AND ("
                   " length(CAST(substr(path, instr(path, '/') + 1) AS BLOB)) > 255 OR"
                   " (instr(path, '/') > 0 AND"
                   "  length(CAST(substr(path, 1, instr(path, '/') - 1) AS BLOB)) > 255) OR"
                   " EXISTS(SELECT 1 FROM knowledge o WHERE o.space = k.space"
                   "  AND o.category = k.category AND o.status = 'active'"
                   "  AND o.path > k.path || '/' AND o.path < k.path || '0'))",
                   &a);
        if (strcmp(a.data, "0") != 0) {
            buf_addf(report,
                     "paths: %s active entries have a name over 255 bytes or a folder of "
                     "their name; export cannot write them: rename them\n",
                     a.data);
            problems++;
        } else {
            buf_adds(report, "paths: every path can be exported\n");
        }
        buf_release(&a);
        buf_release(&b);
    }
    if (store_prepare_all(st, &failed)) {
        buf_addf(report, "statements: %s fails: %s\n", failed, store_errmsg(st));
        problems++;
    } else {
        buf_adds(report, "statements: all prepare\n");
    }
    buf_addf(report, "schema version: %d\n", store_schema_version(st));
    buf_release(&r);
    return problems;
}

uint64_t store_generation(struct store *st)
{
    sqlite3_stmt *s = stmt_get(st, S_DATA_VERSION);
    uint64_t other = 0;
    if (s && sqlite3_step(s) == SQLITE_ROW)
        other = (uint64_t)sqlite3_column_int64(s, 0);
    if (s)
        finish(s);
    /* data_version moves with other connections' commits, total_changes with
     * this connection's own writes: together, any change anywhere. */
    return (other << 32) ^ (uint64_t)sqlite3_total_changes64(st->db);
}
