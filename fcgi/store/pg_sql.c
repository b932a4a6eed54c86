/* store/pg_sql.c: the PostgreSQL text of every statement (pg_stmt_sql, by
 * stmt_id, the same parameters and result columns as stmt_sql[]), the whole
 * schema at the latest version (pg_schema_sql) and the self-checks of
 * `knowhub check` on PostgreSQL (pg_checks).
 *
 * Parameters go as text (integers as decimals), 'h' and 'b' ones as binary
 * bytea; their types are inferred, so wherever PostgreSQL cannot infer one
 * (IS NULL, a boolean, `||`, one parameter in two roles) it is cast, the same
 * way at each use. Results come back as text: integer columns are bigint or
 * int (never boolean), sums cast to bigint. Every text column of the schema
 * has COLLATE "C": comparisons and ORDER BY are by bytes, as SQLite's BINARY,
 * whatever the database's locale (the folder test `path > p || '/' AND
 * path < p || '0'` needs it). */
#include "store/store_int.h"
#include "store/sql_parts.h"

/* The JSON snapshot of an entry row kept in knowledge_revisions.document:
 * the keys of statements.c's SNAPSHOT_JSON in the same order (json, not
 * jsonb, keeps the order and the embedded tags/urls/meta text as stored). */
#define PG_SNAPSHOT_JSON                                                                           \
    "json_build_object('id',id,'category',category,'path',path,'title',title,"                     \
    "'description',description,'tags',tags::json,'types',types,'scenario',scenario,"               \
    "'content',content,'always_apply',always_apply,'source',source,'urls',urls::json,"             \
    "'agent_id',agent_id,'message_id',message_id,'source_ts',source_ts,'score',score,"             \
    "'status',status,'merged_into',merged_into,'updated_at',updated_at,'meta',meta::json,"         \
    "'document',document)::text"

/* A search candidate: knowledge_terms holds a row per active entry only;
 * column is head (title, tags, stem: small, kept in the row) or tsv (every
 * field, as FTS5's knowledge_head and knowledge_fts); the candidate's
 * columns come from its search row d (one per row of knowledge_terms, written
 * in the same transaction). The newest $5 matches are chosen first, alone,
 * then their search rows read by the primary key: joined in one query, the
 * planner merged the two tables, reading search_docs backwards over every
 * row down to the oldest match (docs/performance.md "Search on PostgreSQL"). */
#define PG_MATCH(column)                                                                           \
    "SELECT " MATCH_COLUMNS " FROM search_docs d WHERE d.seq = ANY(ARRAY("                         \
    "SELECT f.seq FROM knowledge_terms f WHERE f." column " @@ $1::tsquery AND f.space = $2"       \
    " AND ($3::int = 0 OR (f.types & $3::int) <> 0)"                                               \
    " AND ($4::text IS NULL OR f.category = $4::text) AND f.seq < $6::bigint"                      \
    " ORDER BY f.seq DESC LIMIT $5)) ORDER BY d.seq DESC"

/* 9: the BM25F statistics (migrate.c's migration 9, search_index.c). */
#define PG_SEARCH_STATS                                                                            \
    "CREATE TABLE search_docs(seq bigint PRIMARY KEY, space" PG_T " NOT NULL, id" PG_T             \
    " NOT NULL,"                                                                                   \
    "  category" PG_T " NOT NULL, types bigint NOT NULL, path" PG_T " NOT NULL,"                   \
    "  title" PG_T " NOT NULL, tags" PG_T " NOT NULL, source" PG_T " NOT NULL,"                    \
    "  updated_at" PG_T " NOT NULL, always_apply bigint NOT NULL, body_head" PG_T " NOT NULL,"     \
    "  scenario_head" PG_T " NOT NULL, terms" PG_T " NOT NULL);"                                   \
    "CREATE TABLE search_terms(space" PG_T " NOT NULL, term" PG_T " NOT NULL,"                     \
    "  df bigint NOT NULL, PRIMARY KEY(space, term));"                                             \
    "CREATE TABLE search_spaces(space" PG_T " PRIMARY KEY, docs bigint NOT NULL,"                  \
    "  len_title bigint NOT NULL, len_tags bigint NOT NULL, len_stem bigint NOT NULL,"             \
    "  len_scenario bigint NOT NULL, len_body bigint NOT NULL);"                                   \
    "CREATE TABLE search_dirty(seq bigint PRIMARY KEY);"                                           \
    "CREATE TABLE search_meta(key" PG_T " PRIMARY KEY, value bigint NOT NULL);"                    \
    "INSERT INTO search_meta(key, value) VALUES('tokenizer', 0);"                                  \
    "CREATE FUNCTION search_dirty_mark() RETURNS trigger LANGUAGE plpgsql AS $$"                   \
    " BEGIN INSERT INTO search_dirty(seq)"                                                         \
    "  VALUES(CASE WHEN TG_OP = 'DELETE' THEN old.seq ELSE new.seq END) ON CONFLICT DO NOTHING;"   \
    " RETURN NULL; END $$;"                                                                        \
    "CREATE TRIGGER search_dirty_insert AFTER INSERT OR DELETE ON knowledge FOR EACH ROW"          \
    "  EXECUTE FUNCTION search_dirty_mark();"                                                      \
    "CREATE TRIGGER search_dirty_update"                                                           \
    "  AFTER UPDATE OF space, category, types, path, title, tags, scenario, content, status,"      \
    "  source, always_apply, updated_at ON knowledge"                                              \
    "  FOR EACH ROW EXECUTE FUNCTION search_dirty_mark();"

/* 13: the embedding turn (S_EMBED_TURN_*): at most one row, the node that
 * embeds and until when; none until a node first takes it. */
#define PG_EMBED_TURN                                                                              \
    "CREATE TABLE IF NOT EXISTS embed_turn(id int PRIMARY KEY CHECK(id = 1),"                      \
    "  node" PG_T " NOT NULL, expires_at timestamptz NOT NULL);"

/* 15: each change of an entry a reader sees, as a notification on channel
 * knowhub_changes to every node's stream thread (store/changes.c), sent at
 * commit and in commit order: space, id, category, path, old category,
 * old path and action, what SQLite's changes rows hold, joined by the unit
 * separator (0x1f: no name or path holds a control character). */
// clang-format off
#define PG_KNOWLEDGE_NOTIFY                                                                        \
    "CREATE OR REPLACE FUNCTION knowledge_notify() RETURNS trigger LANGUAGE plpgsql AS $$"        \
    " BEGIN"                                                                                       \
    "  IF tg_op = 'INSERT' THEN"                                                                   \
    "   IF new.status = 'active' THEN PERFORM pg_notify('knowhub_changes', concat_ws(chr(31), "    \
    "    new.space, new.id, new.category, new.path, new.category, new.path, 'created'));"  \
    "   END IF;"                                                                                   \
    "  ELSIF tg_op = 'DELETE' THEN"                                                                \
    "   IF old.status = 'active' THEN PERFORM pg_notify('knowhub_changes', concat_ws(chr(31), "    \
    "    old.space, old.id, old.category, old.path, old.category, old.path, 'deleted'));"  \
    "   END IF;"                                                                                   \
    "  ELSIF " CHANGE_WHEN("old", "new") " THEN"                                                  \
    "   PERFORM pg_notify('knowhub_changes', concat_ws(chr(31), new.space, new.id, new.category,"  \
    "    new.path, old.category, old.path, " CHANGE_ACTION("old", "new") "));"             \
    "  END IF;"                                                                                    \
    "  RETURN NULL;"                                                                               \
    " END $$;"                                                                                     \
    "DROP TRIGGER IF EXISTS knowledge_notify ON knowledge;"                                        \
    "CREATE TRIGGER knowledge_notify AFTER INSERT OR UPDATE OR DELETE ON knowledge"               \
    "  FOR EACH ROW EXECUTE FUNCTION knowledge_notify();"
// clang-format on

/* 17: a proposal made or decided, on the same channel (action proposed or
 * decided; the proposal's id in the id field). */
// clang-format off
#define PG_PROPOSALS_NOTIFY                                                                        \
    "CREATE OR REPLACE FUNCTION proposals_notify() RETURNS trigger LANGUAGE plpgsql AS $$"         \
    " BEGIN"                                                                                       \
    "  IF tg_op = 'INSERT' OR old.state <> new.state THEN"                                         \
    "   PERFORM pg_notify('knowhub_changes', concat_ws(chr(31), new.space, new.id, new.category,"  \
    "    new.path, new.category, new.path,"                                                        \
    "    CASE WHEN tg_op = 'INSERT' THEN 'proposed' ELSE 'decided' END));"                         \
    "  END IF;"                                                                                    \
    "  RETURN NULL;"                                                                               \
    " END $$;"                                                                                     \
    "DROP TRIGGER IF EXISTS proposals_notify ON proposals;"                                        \
    "CREATE TRIGGER proposals_notify AFTER INSERT OR UPDATE OF state ON proposals"                 \
    "  FOR EACH ROW EXECUTE FUNCTION proposals_notify();"
// clang-format on

/* The cache generation, read in the same round trip as a token lookup. */
#define PG_GENERATION "(SELECT coalesce(sum(n), 0) FROM generation)::bigint"

const char *const pg_stmt_sql[S_COUNT] = {
    [S_READ_BEGIN] = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY",
    [S_READ_END] = "COMMIT",
    [S_SPACE_ENSURE] = "INSERT INTO spaces(name, created_at) VALUES($1, $2) ON CONFLICT DO NOTHING",
    [S_TOKEN_COUNT] = "SELECT count(*) FROM tokens",
    [S_TOKEN_INSERT] = "INSERT INTO tokens(id, hash, space, role, label, created_at)"
                       " VALUES($1, $2, $3, $4, $5, $6)",
    [S_TOKEN_GET] =
        "SELECT id, space, role, label, created_at, last_used_at, revoked_at, hash, " PG_GENERATION
        " FROM tokens WHERE id = $1",
    /* SQLite's datetime(?2, '-60 seconds'): the same "YYYY-MM-DD HH:MM:SS"
     * text (time_utc_text), so the text comparison stays a time comparison. */
    [S_TOKEN_TOUCH] = "UPDATE tokens SET last_used_at = $2::text WHERE id = $1 AND"
                      " (last_used_at IS NULL OR last_used_at < to_char($2::text::timestamp"
                      " - interval '60 seconds', 'YYYY-MM-DD HH24:MI:SS'))",
    [S_TOKEN_REVOKE] = "UPDATE tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL",
    [S_TOKEN_ALL] = "SELECT id, space, role, label, created_at, last_used_at, revoked_at, hash"
                    " FROM tokens ORDER BY created_at, id",
    [S_K_ID_EXISTS] = "SELECT 1 FROM knowledge WHERE id = $1",
    [S_K_INSERT] = "INSERT INTO knowledge(id, space, created_at, updated_at, category, path,"
                   " title, description, tags, types, scenario, content, always_apply, source,"
                   " urls, agent_id, message_id, meta, document, source_ts, score, helpful,"
                   " harmful, irrelevant, unused, neutral, status, merged_into, version)"
                   " VALUES($1, $2, $3, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,"
                   " $15, $16, $17, $18, $19, $20, 0, 0, 0, 0, 0, 'active', NULL, 1)",
    [S_K_GET] = "SELECT " KNOWLEDGE_COLUMNS " FROM knowledge"
                " WHERE id = $1 AND space = $2 AND ($3::int <> 0 OR status = 'active')",
    /* $2 an array: the generic plan probes the id index for each (with a
     * JSON list's 100 rows guessed it scanned the table) */
    [S_K_GET_MANY] = "SELECT " KNOWLEDGE_COLUMNS " FROM knowledge"
                     " WHERE id = ANY($2::text::text[]) AND space = $1 AND status = 'active'",
    [S_K_ACTIVE] = "SELECT 1 FROM knowledge WHERE id = $1 AND space = $2 AND status = 'active'",
    [S_K_LIST] = "SELECT " KNOWLEDGE_COLUMNS " FROM knowledge"
                 " WHERE space = $1 AND status = 'active'"
                 " AND ($2::bigint = 0 OR (types & $2::bigint) <> 0)"
                 " AND ($3::text IS NULL OR category = $3::text)"
                 " ORDER BY seq DESC LIMIT $4 OFFSET $5",
    [S_K_COUNT] = "SELECT count(*) FROM knowledge WHERE space = $1 AND status = 'active'"
                  " AND ($2::bigint = 0 OR (types & $2::bigint) <> 0)"
                  " AND ($3::text IS NULL OR category = $3::text)",
    [S_K_SPACE_OF] = "SELECT 1 FROM knowledge WHERE id = $1 AND space = $2",
    [S_CASE_INSERT] = "INSERT INTO knowledge_cases(space, knowledge_id, kind, case_id,"
                      " scenario, result, agent_id, trace_id, goal_id, created_at)"
                      " VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING",
    [S_CASE_BUMP_HELPFUL] = "UPDATE knowledge SET helpful = helpful + 1 WHERE id = $1",
    [S_CASE_BUMP_HARMFUL] = "UPDATE knowledge SET harmful = harmful + 1 WHERE id = $1",
    [S_CASES] = "SELECT kind, case_id, scenario, result, agent_id, trace_id, goal_id,"
                " created_at FROM (SELECT * FROM knowledge_cases WHERE knowledge_id = $1"
                " AND kind = $2 ORDER BY seq DESC LIMIT $3) AS c ORDER BY seq",
    [S_K_SET_SCORE] = "UPDATE knowledge SET score = $3::bigint, version = version + 1,"
                      " updated_at = $4 WHERE id = $1 AND space = $2 AND status = 'active'"
                      " AND score <> $3::bigint",
    [S_FEEDBACK_INSERT] = "INSERT INTO knowledge_feedback(space, knowledge_id, feedback, actor,"
                          " created_at) VALUES($1, $2, $3, $4, $5) RETURNING seq",
    [S_K_DELETE] = "UPDATE knowledge SET status = 'deleted', version = version + 1,"
                   " updated_at = $3 WHERE id = $1 AND space = $2 AND status = 'active'",
    [S_REVISION_ADD] = "INSERT INTO knowledge_revisions(space, knowledge_id, version, document,"
                       " actor, reason, created_at) SELECT space, id, version, " PG_SNAPSHOT_JSON
                       ", $2::text, $3::text, $4::text FROM knowledge WHERE id = $1::text",
    [S_REVISIONS] = "SELECT version, document, actor, reason, created_at"
                    " FROM knowledge_revisions WHERE knowledge_id = $1 AND space = $2"
                    " ORDER BY version DESC",
    [S_REVISION_DOC] = "SELECT document FROM knowledge_revisions"
                       " WHERE knowledge_id = $1 AND space = $2 AND version = $3",
    /* json_extract: ->> for a string or a number (cast back to the column's
     * type), -> for tags/urls/meta (the JSON text itself). A missing key is
     * NULL, as in SQLite (and fails the same NOT NULL constraints). */
    [S_K_RESTORE] =
        "UPDATE knowledge SET category = $3::json ->> 'category', path = $3::json ->> 'path',"
        " title = $3::json ->> 'title', description = $3::json ->> 'description',"
        " tags = ($3::json -> 'tags')::text, types = ($3::json ->> 'types')::bigint,"
        " scenario = $3::json ->> 'scenario', content = $3::json ->> 'content',"
        " always_apply = ($3::json ->> 'always_apply')::bigint,"
        " source = $3::json ->> 'source', urls = ($3::json -> 'urls')::text,"
        " agent_id = $3::json ->> 'agent_id', message_id = $3::json ->> 'message_id',"
        " source_ts = $3::json ->> 'source_ts', score = ($3::json ->> 'score')::bigint,"
        " meta = coalesce(nullif(($3::json -> 'meta')::text, 'null'), '{}'),"
        " document = coalesce($3::json ->> 'document', ''),"
        " status = 'active', merged_into = NULL, version = version + 1, updated_at = $4"
        " WHERE id = $1 AND space = $2",
    [S_AUDIT] = "INSERT INTO audit(ts, space, actor, action, target) VALUES($1, $2, $3, $4, $5)",
    [S_K_BY_PATH] = "SELECT " KNOWLEDGE_COLUMNS " FROM knowledge"
                    " WHERE space = $1 AND category = $2 AND path = $3 AND status = 'active'",
    [S_K_UPDATE] = "UPDATE knowledge SET category = $4, path = $5, title = $6, description = $7,"
                   " tags = $8, types = $9, scenario = $10, content = $11, always_apply = $12,"
                   " source = $13, urls = $14, agent_id = $15, message_id = $16, meta = $17,"
                   " document = $18, version = version + 1, updated_at = $19"
                   " WHERE id = $1 AND space = $2 AND status = 'active'"
                   " AND ($3::bigint <= 0 OR version = $3::bigint)",
    [S_SCAN_CATEGORY] = "SELECT " KNOWLEDGE_COLUMNS " FROM knowledge"
                        " WHERE space = $1 AND category = $2 AND status = 'active'"
                        " AND path > $3::text ORDER BY path LIMIT $4",
    [S_SCAN_ALWAYS_RULES] = "SELECT " KNOWLEDGE_COLUMNS " FROM knowledge"
                            " WHERE space = $1 AND category = 'rules' AND status = 'active'"
                            " AND always_apply = 1 ORDER BY path",
    [S_SCAN_ACTIVE] = "SELECT " KNOWLEDGE_COLUMNS " FROM knowledge"
                      " WHERE space = $1 AND status = 'active'"
                      " AND (category, path) > ($2::text, $3::text)"
                      " ORDER BY category, path LIMIT $4",
    /* $1 is a tsquery the C code builds; MATCH_HEAD's restricts the weights. */
    [S_MATCH] = PG_MATCH("tsv"),
    [S_MATCH_HEAD] = PG_MATCH("head"),
    [S_TRACE_UPSERT] =
        "INSERT INTO traces(space, trace_id, task, created_at) VALUES($1, $2, $3, $4)"
        " ON CONFLICT(space, trace_id) DO UPDATE SET task = excluded.task",
    [S_TRACE_INSERT] = "INSERT INTO traces(space, trace_id, task, created_at)"
                       " VALUES($1, $2, '', $3) ON CONFLICT DO NOTHING",
    [S_TRACE_GET] = "SELECT t.trace_id, t.task, t.created_at, " TRACE_COUNTS
                    " FROM traces t WHERE t.space = $1 AND t.trace_id = $2",
    [S_TRACE_LIST] =
        "SELECT t.trace_id, t.task, t.created_at, " TRACE_COUNTS " FROM traces t WHERE t.space = $1"
        " ORDER BY t.created_at DESC, t.trace_id LIMIT $2 OFFSET $3",
    [S_TRACE_COUNT] = "SELECT count(*) FROM traces WHERE space = $1",
    [S_LOG_ADD] = "INSERT INTO knowledge_log(space, trace_id, knowledge_id, goal_id,"
                  " injected_at_sequence, injected_at, task, content)"
                  " SELECT $1::text, $2::text, id, $4::text, $5::bigint, $6::text, scenario,"
                  " substr(content, 1, 500) FROM knowledge WHERE id = $3::text"
                  " AND space = $1::text AND status = 'active' RETURNING id",
    [S_LOG_ALL] = "SELECT " LOG_COLUMNS " FROM knowledge_log WHERE space = $1"
                  " AND trace_id = $2 ORDER BY id LIMIT $3 OFFSET $4",
    [S_LOG_PENDING] = "SELECT " LOG_COLUMNS " FROM knowledge_log WHERE space = $1"
                      " AND trace_id = $2 AND eval_status IS NULL ORDER BY id LIMIT $3 OFFSET $4",
    [S_LOG_COUNT] = "SELECT count(*) FROM knowledge_log WHERE space = $1 AND trace_id = $2"
                    " AND ($3::int = 0 OR eval_status IS NULL)",
    [S_LOG_ENTRY] = "SELECT " LOG_COLUMNS " FROM knowledge_log WHERE knowledge_id = $1"
                    " ORDER BY id DESC LIMIT $2",
    [S_LOG_FIND_PENDING] = "SELECT id, goal_id FROM knowledge_log WHERE space = $1"
                           " AND trace_id = $2 AND knowledge_id = $3 AND eval_status IS NULL"
                           " ORDER BY injected_at_sequence DESC, id DESC LIMIT 1",
    [S_LOG_SET_EVAL] = "UPDATE knowledge_log SET eval_status = $2, eval_reason = $3,"
                       " evaluated_at = $4, evaluated_at_trigger = $5"
                       " WHERE id = $1 AND eval_status IS NULL",
    [S_ROLLUP_INSERT] = "INSERT INTO trace_rollups(space, trace_id, knowledge_id, status,"
                        " created_at) VALUES($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
    [S_BUMP_IRRELEVANT] = "UPDATE knowledge SET irrelevant = irrelevant + 1 WHERE id = $1",
    [S_BUMP_UNUSED] = "UPDATE knowledge SET unused = unused + 1 WHERE id = $1",
    [S_BUMP_NEUTRAL] = "UPDATE knowledge SET neutral = neutral + 1 WHERE id = $1",
    [S_TRACE_TASK] = "SELECT task FROM traces WHERE space = $1 AND trace_id = $2",
    [S_LOGIN_INSERT] = "INSERT INTO logins(hash, token_id, csrf, created_at, expires_at)"
                       " VALUES($1, $2, $3, $4, $5)",
    [S_LOGIN_GET] = "SELECT t.id, t.space, t.role, t.label, t.created_at, t.last_used_at,"
                    " t.revoked_at, t.hash, l.csrf, " PG_GENERATION
                    " FROM logins l JOIN tokens t ON t.id = l.token_id"
                    " WHERE l.hash = $1 AND l.expires_at > $2",
    [S_LOGIN_DELETE] = "DELETE FROM logins WHERE hash = $1",
    [S_LOGIN_EXPIRE] = "DELETE FROM logins WHERE expires_at <= $1",
    [S_SESSION_PUT] = "INSERT INTO sessions(space, id, title, document, created_at, updated_at)"
                      " VALUES($1, $2, $3, $4, $5, $5) ON CONFLICT(space, id) DO UPDATE SET"
                      " title = excluded.title, document = excluded.document,"
                      " updated_at = excluded.updated_at",
    [S_SESSION_GET] = "SELECT id, title, document, created_at, updated_at FROM sessions"
                      " WHERE space = $1 AND id = $2",
    [S_SESSION_LIST] = "SELECT id, title, NULL::text, created_at, updated_at FROM sessions"
                       " WHERE space = $1 ORDER BY updated_at DESC, id",
    [S_SESSION_DELETE] = "DELETE FROM sessions WHERE space = $1 AND id = $2",
    [S_LLM_CALL_ADD] = "INSERT INTO llm_calls(space, purpose, model, prompt_tokens,"
                       " completion_tokens, latency_ms, outcome, created_at)"
                       " VALUES($1, $2, $3, $4, $5, $6, $7, $8)",
    [S_LLM_USAGE] = "SELECT purpose, model, count(*), sum((outcome <> 'ok')::int)::bigint,"
                    " sum(prompt_tokens)::bigint, sum(completion_tokens)::bigint,"
                    " sum(latency_ms)::bigint FROM llm_calls"
                    " WHERE space = $1 AND created_at >= $2 GROUP BY purpose, model"
                    " ORDER BY purpose, model",
    [S_JOB_CREATE] = "INSERT INTO jobs(id, space, kind, status, params, actor, created_at,"
                     " updated_at) VALUES($1, $2, $3, 'queued', $4, $5, $6, $6)",
    [S_JOB_GET] = "SELECT " JOB_COLUMNS " FROM jobs WHERE space = $1 AND id = $2",
    [S_IDEM_GET] = "SELECT digest, knowledge_id FROM idempotency_keys"
                   " WHERE space = $1 AND key = $2 AND created_at >= $3",
    [S_IDEM_PUT] = "INSERT INTO idempotency_keys(space, key, digest, knowledge_id, created_at)"
                   " VALUES($1, $2, $3, $4, $5)",
    [S_IDEM_EXPIRE] = "DELETE FROM idempotency_keys WHERE created_at < $1",
    [S_JOB_OPEN] = "SELECT " JOB_COLUMNS " FROM jobs WHERE space = $1 AND kind = $2"
                   " AND status IN ('queued', 'running')",
    [S_JOB_MERGE] =
        "UPDATE jobs SET params = $2, updated_at = $3 WHERE id = $1 AND status = 'queued'",
    [S_JOB_COUNTS] = "SELECT kind, status, count(*) FROM jobs GROUP BY kind, status"
                     " ORDER BY kind, status",
    [S_SPACE_COUNTS] = "SELECT name,"
                       " (SELECT count(*) FROM knowledge k WHERE k.space = s.name"
                       "  AND k.status = 'active'),"
                       " (SELECT count(*) FROM traces t WHERE t.space = s.name)"
                       " FROM spaces s ORDER BY 2 DESC, 3 DESC, name",
    [S_JOB_LIST] = "SELECT " JOB_COLUMNS " FROM jobs WHERE space = $1"
                   " ORDER BY created_at DESC, id LIMIT $2",
    /* A queued job, or a running one whose node's lease ran out. Several
     * nodes claim at once: SKIP LOCKED passes over a row another claim holds,
     * and a row another claim changed since this one's snapshot is checked
     * again (READ COMMITTED) before it is taken, so no job goes twice. */
    [S_JOB_CLAIM] = "UPDATE jobs SET status = 'running', node = $2, lease_until = $3,"
                    " updated_at = $1 WHERE id = (SELECT id FROM jobs WHERE status = 'queued'"
                    " OR (status = 'running' AND lease_until < $1) ORDER BY created_at, id"
                    " LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING " JOB_COLUMNS,
    [S_JOB_WAITING] = "SELECT 1 FROM jobs WHERE status = 'queued'"
                      " OR (status = 'running' AND lease_until < $1::text) LIMIT 1",
    [S_JOB_PROGRESS] = "UPDATE jobs SET progress = $2, total = $3, updated_at = $4,"
                       " lease_until = $5 WHERE id = $1 AND status = 'running'"
                       " AND node IS NOT DISTINCT FROM $6::text",
    [S_JOB_FINISH] = "UPDATE jobs SET status = $2, result = $3, error = $4, updated_at = $5,"
                     " lease_until = NULL WHERE id = $1 AND status = 'running'"
                     " AND node IS NOT DISTINCT FROM $6::text",
    [S_JOB_REQUEUE] = "UPDATE jobs SET status = 'queued', node = NULL, lease_until = NULL,"
                      " updated_at = $1 WHERE status = 'running' AND (node IS NULL"
                      " OR node IS NOT DISTINCT FROM $2::text OR lease_until < $1)",
    [S_MERGE_COUNTERS] =
        "UPDATE knowledge SET helpful = knowledge.helpful + m.helpful,"
        " harmful = knowledge.harmful + m.harmful,"
        " irrelevant = knowledge.irrelevant + m.irrelevant,"
        " unused = knowledge.unused + m.unused, neutral = knowledge.neutral + m.neutral"
        " FROM (SELECT helpful, harmful, irrelevant, unused, neutral"
        " FROM knowledge WHERE id = $2) AS m WHERE knowledge.id = $1",
    [S_MERGE_CASES] =
        "INSERT INTO knowledge_cases(space, knowledge_id, kind, case_id,"
        " scenario, result, agent_id, trace_id, goal_id, created_at)"
        " SELECT space, $1::text, kind, case_id, scenario, result, agent_id, trace_id,"
        " goal_id, created_at FROM knowledge_cases WHERE knowledge_id = $2::text ORDER BY seq"
        " ON CONFLICT DO NOTHING",
    [S_MERGE_TOMBSTONE] = "UPDATE knowledge SET status = 'merged', merged_into = $1,"
                          " version = version + 1, updated_at = $3"
                          " WHERE id = $2 AND space = $4 AND status = 'active'"
                          " AND ($5::bigint <= 0 OR version = $5::bigint)",
    [S_FEEDBACK_MARK] = "UPDATE knowledge_feedback SET status = $2 WHERE seq = $1",
    /* Grows with every committed write that can change an answer (the
     * generation triggers); never with a token's last_used_at or a row of
     * the LLM ledger. (S_DATA_VERSION: SQLite only, for its compaction.) */
    [S_GENERATION] = "SELECT coalesce(sum(n), 0)::bigint FROM generation",
    [S_CASES_PAGE] = "SELECT kind, case_id, scenario, result, agent_id, trace_id, goal_id,"
                     " created_at FROM knowledge_cases WHERE knowledge_id = $1 AND kind = $2"
                     " ORDER BY seq LIMIT $3 OFFSET $4",
    [S_K_WHOLE] = KNOWLEDGE_WHOLE_SQL("$1", "$2", "$3::int", "$4", "$5"),
    [S_CASES_COUNT] = "SELECT count(*) FROM knowledge_cases WHERE knowledge_id = $1 AND kind = $2",
    [S_SCAN_DELETED] = "SELECT " KNOWLEDGE_COLUMNS " FROM knowledge"
                       " WHERE space = $1 AND status IN ('deleted', 'merged')"
                       " AND ($2::text IS NULL OR category = $2::text)"
                       " ORDER BY updated_at DESC, seq DESC LIMIT 200",
    [S_K_MOVE] = "UPDATE knowledge SET category = $4, path = $5, title = $6, scenario = $7,"
                 " always_apply = $8, version = version + 1, updated_at = $9"
                 " WHERE id = $1 AND space = $2 AND status = 'active' AND version = $3",
    /* Another active entry inside the folder $3 ("$3/..."): '0' follows '/'
     * in byte order, the path column's collation ("C"). */
    [S_K_FOLDER_TAKEN] = "SELECT 1 FROM knowledge WHERE space = $1 AND category = $2"
                         " AND status = 'active' AND path > ($3::text || '/')"
                         " AND path < ($3::text || '0') AND id <> $4 LIMIT 1",
    /* The active paths of category from ?3 up to ?4 (by bytes), at most ?5:
     * the names a title's slug has taken ("slug.md", "slug-2.md" ...). */
    [S_K_PATHS_RANGE] = "SELECT path FROM knowledge WHERE space = $1 AND category = $2"
                        " AND status = 'active' AND path >= $3 AND path < $4"
                        " ORDER BY path LIMIT $5",
    /* the conflict item of an unordered pair of entries: a pending one
     * first, else one dismissed while both sides are still at the versions
     * it was made at; no row: none */
    [S_CONFLICT_ITEM_FIND] =
        "SELECT p.id, p.state FROM proposals p JOIN proposal_members m"
        " ON m.space = p.space AND m.proposal_id = p.id"
        " WHERE p.space = $1 AND p.kind = 'conflict' AND m.knowledge_id IN ($2, $3)"
        " AND ((p.knowledge_id = $2 AND m.knowledge_id = $3)"
        " OR (p.knowledge_id = $3 AND m.knowledge_id = $2))"
        " AND (p.state = 'pending' OR (p.decision = 'dismiss'"
        " AND p.base_version = (SELECT ka.version FROM knowledge ka"
        " WHERE ka.space = p.space AND ka.id = p.knowledge_id)"
        " AND m.base_version = (SELECT kb.version FROM knowledge kb"
        " WHERE kb.space = m.space AND kb.id = m.knowledge_id)))"
        " ORDER BY CASE WHEN p.state = 'pending' THEN 0 ELSE 1 END, p.created_at DESC LIMIT 1",
    [S_K_FILE_TAKEN] = "SELECT 1 FROM knowledge WHERE space = $1 AND category = $2"
                       " AND status = 'active' AND path = $3 AND id <> $4",
    [S_K_PLACE] = "SELECT category, path FROM knowledge WHERE id = $1 AND status = 'active'",
    [S_SESSION_PUT_IF] = "UPDATE sessions SET title = $3, document = $4, updated_at = $5"
                         " WHERE space = $1 AND id = $2 AND updated_at = $6",
    [S_REVISION_TIME] = "SELECT created_at FROM knowledge_revisions"
                        " WHERE knowledge_id = $1 AND space = $2 AND version = $3",
    /* vector_stamp_next(): nextval('vector_stamp') under a transaction
     * advisory lock, so stamps are handed out in commit order (see the schema). */
    [S_VEC_PUT] = "INSERT INTO vectors(knowledge_seq, space, model, version, digest, dim, vec,"
                  " stamp, updated_at) VALUES($1, $2, $3, $4, $5, $6, $7,"
                  " vector_stamp_next(), $8)"
                  " ON CONFLICT(knowledge_seq) DO UPDATE SET space = excluded.space,"
                  " model = excluded.model, version = excluded.version,"
                  " digest = excluded.digest, dim = excluded.dim, vec = excluded.vec,"
                  " stamp = excluded.stamp, updated_at = excluded.updated_at",
    [S_VEC_TOUCH] = "UPDATE vectors SET version = $2 WHERE knowledge_seq = $1",
    [S_VEC_DEQUEUE] = "DELETE FROM embed_queue WHERE knowledge_seq = $1::bigint AND NOT EXISTS"
                      " (SELECT 1 FROM knowledge WHERE seq = $1::bigint AND status = 'active'"
                      " AND version <> $2::bigint)",
    [S_VEC_TAKE] = "SELECT q.knowledge_seq, k.id, k.space, k.version, k.status, k.title,"
                   " k.scenario, substr(k.content, 1, $2::int), v.model, v.version, v.digest"
                   " FROM embed_queue q LEFT JOIN knowledge k ON k.seq = q.knowledge_seq"
                   " LEFT JOIN vectors v ON v.knowledge_seq = q.knowledge_seq"
                   " WHERE $3::text IS NULL OR k.space = $3::text"
                   " ORDER BY q.knowledge_seq LIMIT $1",
    /* The queue's next space: the first after $1 in name order, else the first. */
    [S_VEC_NEXT] = "SELECT coalesce(min(k.space) FILTER (WHERE k.space > $1::text), min(k.space))"
                   " FROM embed_queue q JOIN knowledge k ON k.seq = q.knowledge_seq",
    [S_VEC_FILL] = "INSERT INTO embed_queue(knowledge_seq) SELECT k.seq FROM knowledge k"
                   " LEFT JOIN vectors v ON v.knowledge_seq = k.seq WHERE k.status = 'active'"
                   " AND ($1::text IS NULL OR k.space = $1::text) AND (v.knowledge_seq IS NULL"
                   " OR v.model <> $2::text OR v.version <> k.version OR v.digest = '')"
                   " ON CONFLICT DO NOTHING",
    [S_VEC_FORGET_DIGESTS] = "UPDATE vectors SET digest = '' WHERE space = $1",
    [S_VEC_QUEUED] = "SELECT count(*) FROM embed_queue q JOIN knowledge k"
                     " ON k.seq = q.knowledge_seq WHERE k.space = $1 AND k.status = 'active'",
    [S_VEC_COUNTS] = "SELECT count(*), coalesce(sum((v.dim > 0)::int), 0)::bigint,"
                     " coalesce(max(v.dim), 0),"
                     " (SELECT count(*) FROM knowledge WHERE space = $1 AND status = 'active')"
                     " FROM vectors v JOIN knowledge k ON k.seq = v.knowledge_seq"
                     " WHERE v.space = $1 AND v.model = $2 AND k.status = 'active'",
    [S_VEC_SINCE] = "SELECT v.knowledge_seq, k.id, k.status, v.dim, v.vec, v.stamp"
                    " FROM vectors v JOIN knowledge k ON k.seq = v.knowledge_seq"
                    " WHERE v.stamp > $3 AND v.space = $1 AND v.model = $2 ORDER BY v.stamp"
                    " LIMIT $4",
    [S_VEC_STAMP] = "SELECT coalesce(max(stamp), 0) FROM vectors",
    [S_VEC_DIM] =
        "SELECT dim FROM vectors WHERE model = $1 AND dim > 0 ORDER BY stamp DESC LIMIT 1",
    /* PostgreSQL only (stmt_sql[] has NULL): what the C code makes an
     * entry's tsvector from, and the upsert of it. The upsert writes
     * nothing for an entry that is not active (knowledge_terms holds active
     * entries only; the trigger on knowledge removes the row of one that
     * stops being active). */
    [S_K_TERMS_SOURCE] = "SELECT seq, space, status, types, category, title, tags, path,"
                         " scenario, content FROM knowledge WHERE id = $1",
    [S_K_TERMS_PUT] = "INSERT INTO knowledge_terms(seq, space, types, category, head, tsv)"
                      " SELECT $1::bigint, $2::text, $3::bigint, $4::text, $5::text::tsvector,"
                      " $6::text::tsvector"
                      " WHERE EXISTS (SELECT 1 FROM knowledge WHERE seq = $1::bigint"
                      " AND status = 'active')"
                      " ON CONFLICT (seq) DO UPDATE SET space = excluded.space,"
                      " types = excluded.types, category = excluded.category,"
                      " head = excluded.head, tsv = excluded.tsv",
    [S_SX_DIRTY] = SEARCH_DIRTY_SQL,
    [S_SX_DIRTY_COUNT] = SEARCH_DIRTY_COUNT_SQL,
    [S_SX_UNDIRTY] = "DELETE FROM search_dirty WHERE seq = $1",
    [S_SX_SOURCE] = "SELECT id, space, status, title, tags, path, scenario, content FROM knowledge"
                    " WHERE seq = $1",
    [S_SX_DOC_GET] = "SELECT space, terms FROM search_docs WHERE seq = $1",
    [S_SX_DOC_PUT] = "INSERT INTO search_docs(" SEARCH_DOC_COLUMNS ") SELECT " SEARCH_DOC_FROM_ENTRY
                     ", $2 FROM knowledge WHERE seq = $1" SEARCH_DOC_UPDATE,
    [S_SX_DOC_DELETE] = "DELETE FROM search_docs WHERE seq = $1",
    [S_SX_DF_ADD] = "INSERT INTO search_terms(space, term, df) SELECT $1::text, key, value::bigint"
                    " FROM json_each_text($2::json)"
                    " ON CONFLICT(space, term) DO UPDATE SET df = search_terms.df + excluded.df",
    [S_SX_DF_PRUNE] = "DELETE FROM search_terms WHERE space = $1 AND df <= 0"
                      " AND term = ANY(ARRAY(SELECT json_object_keys($2::json)))",
    [S_SX_SPACE_ADD] = "INSERT INTO search_spaces(space, " SEARCH_SPACE_COLUMNS
                       ") VALUES($1, $2, $3, $4, $5, $6, $7) ON CONFLICT(space) DO UPDATE SET"
                       " docs = search_spaces.docs + excluded.docs,"
                       " len_title = search_spaces.len_title + excluded.len_title,"
                       " len_tags = search_spaces.len_tags + excluded.len_tags,"
                       " len_stem = search_spaces.len_stem + excluded.len_stem,"
                       " len_scenario = search_spaces.len_scenario + excluded.len_scenario,"
                       " len_body = search_spaces.len_body + excluded.len_body RETURNING docs",
    [S_SX_STATS_GET] =
        SEARCH_STATS_GET("$1::text", "= ANY(ARRAY(SELECT json_array_elements_text($2::json)))"),
    [S_SX_META_GET] = SEARCH_META_GET_SQL,
    [S_SX_META_SET] = "UPDATE search_meta SET value = $1 WHERE key = 'tokenizer'",
    [S_SX_LOG_ADD] = "INSERT INTO search_log(space, stamp, seq) SELECT $1, $2, x::bigint"
                     " FROM json_array_elements_text($3::json) x ON CONFLICT DO NOTHING",
    [S_SX_STAMP_NEXT] = "INSERT INTO search_stamps(space, stamp) VALUES($1, 1)"
                        " ON CONFLICT(space) DO UPDATE SET stamp = search_stamps.stamp + 1"
                        " RETURNING stamp",
    [S_SX_LOG_FLOOR] = "UPDATE search_stamps SET log_floor = $2 WHERE space = $1",
    [S_SX_LOG_PRUNE] = "DELETE FROM search_log WHERE space = $1 AND stamp <= $2",
    [S_SX_STAMP] = "SELECT stamp, log_floor FROM search_stamps WHERE space = $1",
    [S_SX_DOCS] = "SELECT d.seq, 0, " LINDEX_COLUMNS " FROM search_docs d WHERE d.space = $1",
    [S_SX_LOG_SINCE] = "SELECT l.seq, l.stamp, " LINDEX_COLUMNS " FROM search_log l"
                       " LEFT JOIN search_docs d ON d.seq = l.seq AND d.space = l.space"
                       " WHERE l.space = $1 AND l.stamp > $2 ORDER BY l.stamp, l.seq",
    [S_OVERVIEW_CATEGORIES] = "SELECT category, count(*) FROM knowledge WHERE space = $1"
                              " AND status = 'active' GROUP BY category",
    [S_OVERVIEW_TRACES] = "SELECT count(*), coalesce(sum(CASE WHEN created_at >= $2 THEN 1 END), 0)"
                          " FROM traces WHERE space = $1",
    [S_OVERVIEW_RECENT] = "SELECT id, category, path, title, updated_at, 0 FROM knowledge"
                          " WHERE space = $1 AND status = 'active'"
                          " ORDER BY updated_at DESC, seq DESC LIMIT $2",
    [S_OVERVIEW_INJECTED] = "SELECT k.id, k.category, k.path, k.title, k.updated_at, count(*) AS n"
                            " FROM knowledge_log l JOIN knowledge k ON k.id = l.knowledge_id"
                            " WHERE l.space = $1 AND k.space = $1 AND k.status = 'active'"
                            " GROUP BY k.id, k.category, k.path, k.title, k.updated_at"
                            " ORDER BY n DESC, k.id LIMIT $2",
    [S_OVERVIEW_HARMFUL] = "SELECT id, category, path, title, updated_at, harmful FROM knowledge"
                           " WHERE space = $1 AND status = 'active' AND harmful > 0"
                           " ORDER BY harmful DESC, helpful, id LIMIT $2",
    /* The MCP sessions' subscriptions (changes.c); no S_CHANGES_*: the
     * changes come as notifications (knowledge_notify). */
    [S_SUB_PUT] = "INSERT INTO mcp_subscriptions(space, token_id, session, uri, seen_at)"
                  " VALUES($1, $2, $3, $4, $5) ON CONFLICT(token_id, session, uri)"
                  " DO UPDATE SET seen_at = excluded.seen_at",
    [S_SUB_DELETE] =
        "DELETE FROM mcp_subscriptions WHERE token_id = $1 AND session = $2 AND uri = $3",
    [S_SUB_END] = "DELETE FROM mcp_subscriptions WHERE token_id = $1 AND session = $2",
    [S_SUB_COUNT] = "SELECT count(*) FROM mcp_subscriptions WHERE token_id = $1",
    [S_SUB_MATCH] = "SELECT token_id, session FROM mcp_subscriptions WHERE space = $1 AND uri = $2"
                    " LIMIT 10000",
    [S_SUB_TOUCH] =
        "UPDATE mcp_subscriptions SET seen_at = $3 WHERE token_id = $1 AND session = $2",
    [S_SUB_EXPIRE] = "DELETE FROM mcp_subscriptions WHERE seen_at < $1",
    /* 16: the review queue (store/review.c) */
    [S_REVIEW_POLICY_GET] = "SELECT coalesce((SELECT policy FROM token_reviews"
                            " WHERE token_id = $2::text), (SELECT policy FROM review_policies"
                            " WHERE space = $1), 'off')",
    [S_TOKEN_REVIEW_SET] = "INSERT INTO token_reviews(token_id, policy) VALUES($1, $2)"
                           " ON CONFLICT(token_id) DO UPDATE SET policy = excluded.policy",
    [S_REVIEW_POLICY_SET] = "INSERT INTO review_policies(space, policy, actor, updated_at)"
                            " VALUES($1, $2, $3, $4) ON CONFLICT(space) DO UPDATE SET"
                            " policy = excluded.policy, actor = excluded.actor,"
                            " updated_at = excluded.updated_at",
    [S_PROPOSAL_INSERT] = "INSERT INTO proposals(id, space, kind, state, write_path, knowledge_id,"
                          " base_version, category, path, document, base_document, token_id,"
                          " actor, agent_id, trace_id, source, reasons, created_at)"
                          " VALUES($1, $2, $3, $4, $5, $6, $7::bigint, $8, $9, $10, $11, $12,"
                          " $13, $14, $15, $16, $17, $18)",
    [S_PROPOSAL_GET] = "SELECT " PROPOSAL_COLUMNS " FROM proposals WHERE id = $1 AND space = $2",
    [S_PROPOSAL_LIST] = "SELECT " PROPOSAL_COLUMNS " FROM proposals WHERE space = $1"
                        " AND ($2::text IS NULL OR state = $2::text) ORDER BY created_at, id"
                        " LIMIT $3 OFFSET $4",
    [S_PROPOSAL_COUNT] = "SELECT count(*) FROM proposals WHERE space = $1"
                         " AND ($2::text IS NULL OR state = $2::text)",
    [S_PROPOSAL_DECIDE] = "UPDATE proposals SET state = $3, decision = $4, decision_reason = $5,"
                          " decided_by = $6, decided_at = $7, result_id = $8"
                          " WHERE id = $1 AND space = $2 AND state = $9",
    [S_PROPOSAL_COUNTS] = "SELECT count(*) FILTER (WHERE state = 'pending'),"
                          " count(*) FILTER (WHERE state = 'quarantined')"
                          " FROM proposals WHERE space = $1",
    [S_PROPOSAL_TOTALS] = "SELECT count(*) FILTER (WHERE state = 'pending'),"
                          " count(*) FILTER (WHERE state = 'quarantined') FROM proposals",
    /* The embedding turn: a lease row, never a lock held across the
     * embeddings call (a frozen holder's lease runs out; vectors.c). $1 the
     * node, $2 the lease in ms, in the server's clock (no two nodes' clocks
     * compared). Taken when free or run out, renewed when $1 holds it: one
     * statement, so two nodes never both take it. One row: taken (1 or 0),
     * the holder before and the ms its lease had left. */
    [S_EMBED_TURN_TAKE] =
        "WITH took AS (INSERT INTO embed_turn AS t(id, node, expires_at)"
        " VALUES(1, $1::text, clock_timestamp() + $2::bigint * interval '1 millisecond')"
        " ON CONFLICT(id) DO UPDATE SET node = excluded.node, expires_at = excluded.expires_at"
        " WHERE t.node = excluded.node OR t.expires_at < clock_timestamp() RETURNING 1)"
        " SELECT (SELECT count(*) FROM took)::int AS taken,"
        " (SELECT node FROM embed_turn WHERE id = 1) AS holder,"
        " (SELECT greatest(0, extract(epoch FROM expires_at - clock_timestamp()) * 1000)::bigint"
        " FROM embed_turn WHERE id = 1) AS left_ms",
    /* Given back: run out now, if $1 still holds it. */
    [S_EMBED_TURN_GIVE] = "UPDATE embed_turn SET expires_at = clock_timestamp()"
                          " WHERE id = 1 AND node = $1::text",
    [S_REVIEW_PROMOTE_GET] = "SELECT promote_after FROM review_promotion WHERE space = $1",
    [S_REVIEW_PROMOTE_SET] = "INSERT INTO review_promotion(space, promote_after, actor, updated_at)"
                             " VALUES($1, $4::bigint, $2, $3) ON CONFLICT(space) DO UPDATE SET"
                             " promote_after = excluded.promote_after, actor = excluded.actor,"
                             " updated_at = excluded.updated_at",
    [S_PROPOSAL_PENDING_DOCS] = "SELECT id, kind, knowledge_id, category, path, document"
                                " FROM proposals WHERE space = $1 AND state = 'pending'"
                                " AND kind IN ('create', 'update')"
                                " ORDER BY created_at DESC, id DESC LIMIT $2",
    [S_LOG_ADD_PROPOSAL] = "INSERT INTO knowledge_log(space, trace_id, knowledge_id, goal_id,"
                           " injected_at_sequence, injected_at, task, content)"
                           " SELECT $1::text, $2::text, id, $4::text, $5::bigint, $6::text,"
                           " $7::text, $8::text FROM proposals WHERE id = $3::text"
                           " AND space = $1::text AND state = 'pending' RETURNING id",
    [S_PROPOSAL_VERDICTS] = "SELECT trace_id, eval_status, coalesce(eval_reason, '')"
                            " FROM knowledge_log WHERE space = $1 AND knowledge_id = $2"
                            " AND eval_status IN ('helpful', 'harmful') ORDER BY id LIMIT $3",
    /* 19: held slim merges (service/slim.c, service/review.c) */
    [S_PROPOSAL_MEMBER_ADD] = "INSERT INTO proposal_members(space, proposal_id, knowledge_id,"
                              " base_version) VALUES($1, $2, $3, $4::bigint)",
    /* with what the entry is now: NULL columns when it is gone */
    [S_PROPOSAL_MEMBERS] = "SELECT m.knowledge_id, m.base_version, k.title, k.path, k.status,"
                           " k.version FROM proposal_members m LEFT JOIN knowledge k"
                           " ON k.id = m.knowledge_id AND k.space = m.space"
                           " WHERE m.space = $1 AND m.proposal_id = $2 ORDER BY m.knowledge_id",
    /* a held slim merge (pending or quarantined) of the entry, as survivor
     * or as member; no row: none */
    [S_PROPOSAL_MEMBER_HELD] =
        "SELECT p.id FROM proposals p WHERE p.space = $1"
        " AND p.kind = 'slim_merge' AND p.state IN ('pending', 'quarantined')"
        " AND (p.knowledge_id = $2 OR EXISTS (SELECT 1 FROM proposal_members m"
        " WHERE m.space = p.space AND m.proposal_id = p.id"
        " AND m.knowledge_id = $2)) LIMIT 1",
    /* 20: typed links (service/links.c); adding one again changes nothing */
    [S_LINK_ADD] = "INSERT INTO knowledge_links(space, from_id, to_id, type, actor, reason,"
                   " created_at) VALUES($1, $2, $3, $4, $5, $6, $7)"
                   " ON CONFLICT DO NOTHING",
    [S_LINK_GET] = "SELECT actor, reason, created_at FROM knowledge_links"
                   " WHERE space = $1 AND from_id = $2 AND to_id = $3 AND type = $4",
    [S_LINK_REMOVE] = "DELETE FROM knowledge_links"
                      " WHERE space = $1 AND from_id = $2 AND to_id = $3 AND type = $4",
    /* an entry's links both ways, with the other entry as it is now (any
     * status): by the primary key out, by knowledge_links_to in */
    [S_LINKS_OF] =
        "SELECT l.from_id, l.to_id, l.type, l.actor, l.reason, l.created_at, l.dir, k.id,"
        " k.title, k.path, k.category, k.status FROM (SELECT from_id, to_id, type, actor,"
        " reason, created_at, 'out' AS dir, to_id AS other FROM knowledge_links"
        " WHERE space = $1 AND from_id = $2 UNION ALL SELECT from_id, to_id, type, actor,"
        " reason, created_at, 'in' AS dir, from_id AS other FROM knowledge_links"
        " WHERE space = $1 AND to_id = $2) l JOIN knowledge k ON k.id = l.other"
        " AND k.space = $1 ORDER BY l.created_at, l.type, l.dir DESC, k.id LIMIT $3",
    /* whether the space has any contradicts link: a search asks once */
    /* for each of the ids of $2 (a JSON array), the active entries linked to
     * it by contradicts, either way */
    [S_LINKS_CONTRADICTS_OF] =
        "SELECT q.id AS of_id, k.id FROM json_array_elements_text($2::json) AS q(id)"
        " JOIN knowledge_links l ON l.space = $1 AND l.from_id = q.id AND l.type = 'contradicts'"
        " JOIN knowledge k ON k.space = l.space AND k.id = l.to_id WHERE k.status = 'active'"
        " UNION SELECT q.id, k.id FROM json_array_elements_text($2::json) AS q(id)"
        " JOIN knowledge_links l ON l.space = $1 AND l.to_id = q.id AND l.type = 'contradicts'"
        " JOIN knowledge k ON k.space = l.space AND k.id = l.from_id WHERE k.status = 'active'"
        " ORDER BY 1, 2",
    /* a revert of a superseded entry undoes the supersede */
    [S_LINKS_DROP_SUPERSEDES] = "DELETE FROM knowledge_links WHERE space = $1 AND to_id = $2"
                                " AND type = 'supersedes'",
    /* 21: evidence ageing (service/evidence.c) */
    [S_EVIDENCE_POLICY_GET] = "SELECT half_life_days FROM evidence_policy WHERE space = $1",
    [S_EVIDENCE_POLICY_SET] =
        "INSERT INTO evidence_policy(space, half_life_days, actor, updated_at)"
        " VALUES($1, $4, $2, $3) ON CONFLICT(space) DO UPDATE SET"
        " half_life_days = excluded.half_life_days, actor = excluded.actor,"
        " updated_at = excluded.updated_at",
    [S_EVIDENCE_VERDICTS] =
        "SELECT knowledge_id, kind, substr(created_at, 1, 13), count(*)"
        " FROM knowledge_cases WHERE knowledge_id"
        " = ANY(ARRAY(SELECT json_array_elements_text($2::json)))"
        " AND space = $1 GROUP BY knowledge_id, kind, substr(created_at, 1, 13)",
    /* 22: an entry's time (service/timing.c); all NULL/0 deletes the row */
    [S_TIME_SET] = "INSERT INTO knowledge_time(space, knowledge_id, expires_at, review_after,"
                   " pinned) VALUES($1, $2, $3, $4, $5) ON CONFLICT(space, knowledge_id)"
                   " DO UPDATE SET expires_at = excluded.expires_at,"
                   " review_after = excluded.review_after, pinned = excluded.pinned",
    [S_TIME_CLEAR] = "DELETE FROM knowledge_time WHERE space = $1 AND knowledge_id = $2",
    [S_TIME_GET] = "SELECT expires_at, review_after, pinned FROM knowledge_time"
                   " WHERE space = $1 AND knowledge_id = $2",
    /* the space's expired entries at $2 (a search reads them once; usually none) */
    [S_TIME_EXPIRED] = "SELECT knowledge_id FROM knowledge_time"
                       " WHERE space = $1 AND expires_at <= $2",
    /* the first expiry after $1 in any space (the answer cache's horizon) */
    [S_TIME_NEXT_EXPIRY] = "SELECT min(expires_at) FROM knowledge_time WHERE expires_at > $1",
    /* the stale view: active entries expired or due for review at $2 */
    [S_TIME_STALE] =
        "SELECT k.id, k.title, k.category, k.path, t.expires_at, t.review_after, t.pinned"
        " FROM knowledge_time t JOIN knowledge k ON k.space = t.space AND k.id = t.knowledge_id"
        " WHERE t.space = $1 AND k.status = 'active' AND (t.expires_at <= $2"
        " OR t.review_after <= $2) ORDER BY CASE WHEN t.expires_at <= $2 THEN 0 ELSE 1 END,"
        " coalesce(t.expires_at, t.review_after), k.id LIMIT $3 OFFSET $4",
    [S_TIME_STALE_COUNT] =
        "SELECT count(*) FROM knowledge_time t JOIN knowledge k ON k.space = t.space"
        " AND k.id = t.knowledge_id WHERE t.space = $1 AND k.status = 'active'"
        " AND (t.expires_at <= $2 OR t.review_after <= $2)",
    /* active, unexpired entries past review_after at $2 with no pending
     * review_due proposal (the sweep proposes one each) */
    /* the spaces with an entry past review_after at $1 (the job thread's sweep) */
    [S_TIME_DUE_SPACES] = "SELECT DISTINCT space FROM knowledge_time WHERE review_after <= $1"
                          " ORDER BY space LIMIT 50",
    [S_TIME_REVIEW_DUE] =
        "SELECT t.knowledge_id FROM knowledge_time t JOIN knowledge k ON k.space = t.space"
        " AND k.id = t.knowledge_id WHERE t.space = $1 AND k.status = 'active'"
        " AND t.review_after <= $2 AND (t.expires_at IS NULL OR t.expires_at > $2)"
        " AND NOT EXISTS (SELECT 1 FROM proposals p WHERE p.space = t.space"
        " AND p.knowledge_id = t.knowledge_id AND p.kind = 'review_due'"
        " AND p.state IN ('pending', 'quarantined')) ORDER BY t.review_after, t.knowledge_id"
        " LIMIT $3",
};

/* ---- the schema at version 8 (migrate.c's migrations 1..8) ---- */

/* Every text column: byte order, as SQLite's BINARY. */
#define PG_T " text COLLATE \"C\""
/* A rowid alias (seq/id INTEGER PRIMARY KEY) with its sequence named, so a
 * copy from SQLite can setval() it and pg_checks can read it. */
#define PG_ROWID(seqname)                                                                          \
    " bigint GENERATED BY DEFAULT AS IDENTITY (SEQUENCE NAME " seqname ") PRIMARY KEY"
/* The statement-level trigger that moves the cache generation on a table. */
#define PG_GENERATION_TRIGGER(table)                                                               \
    "CREATE TRIGGER " table "_generation AFTER INSERT OR UPDATE OR DELETE ON " table               \
    " FOR EACH STATEMENT EXECUTE FUNCTION generation_bump();"

/* Over the 4095 characters C requires of a string literal: compilers that
 * take it (gcc, clang) warn under -Wpedantic, which says nothing here. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
/* Unformatted: clang-format would scatter the lines around PG_T and PG_ROWID. */
// clang-format off
const char pg_schema_sql[] =
    "CREATE TABLE schema_version(version int NOT NULL);"
    "INSERT INTO schema_version(version) VALUES(23);"
    /* 1: foundation */
    "CREATE TABLE spaces(name" PG_T " PRIMARY KEY, created_at" PG_T " NOT NULL);"
    "CREATE TABLE tokens("
    "  id" PG_T " PRIMARY KEY, hash bytea NOT NULL, space" PG_T " NOT NULL REFERENCES spaces(name),"
    "  role" PG_T " NOT NULL CHECK(role IN ('admin','editor','agent','reader')),"
    "  label" PG_T " NOT NULL DEFAULT '', created_at" PG_T " NOT NULL, last_used_at" PG_T ","
    "  revoked_at" PG_T ");"
    "CREATE TABLE knowledge("
    "  seq" PG_ROWID("knowledge_seq_seq") ", id" PG_T " NOT NULL UNIQUE, space" PG_T " NOT NULL,"
    "  category" PG_T " NOT NULL CHECK(category IN ('rules','experiences')),"
    "  path" PG_T " NOT NULL, title" PG_T " NOT NULL, description" PG_T " NOT NULL DEFAULT '',"
    "  tags" PG_T " NOT NULL DEFAULT '[]', types bigint NOT NULL DEFAULT 0,"
    "  scenario" PG_T " NOT NULL DEFAULT '', content" PG_T " NOT NULL DEFAULT '',"
    "  always_apply bigint NOT NULL DEFAULT 1, source" PG_T " NOT NULL DEFAULT 'manual',"
    "  urls" PG_T " NOT NULL DEFAULT '[]', agent_id" PG_T " NOT NULL DEFAULT '',"
    "  message_id" PG_T " NOT NULL DEFAULT '', source_ts" PG_T " NOT NULL DEFAULT '',"
    "  score bigint NOT NULL DEFAULT 3 CHECK(score BETWEEN 1 AND 5),"
    "  helpful bigint NOT NULL DEFAULT 0, harmful bigint NOT NULL DEFAULT 0,"
    "  irrelevant bigint NOT NULL DEFAULT 0, unused bigint NOT NULL DEFAULT 0,"
    "  neutral bigint NOT NULL DEFAULT 0,"
    "  status" PG_T " NOT NULL DEFAULT 'active' CHECK(status IN ('active','deleted','merged')),"
    "  merged_into" PG_T ", version bigint NOT NULL DEFAULT 1,"
    "  created_at" PG_T " NOT NULL, updated_at" PG_T " NOT NULL,"
    "  meta" PG_T " NOT NULL DEFAULT '{}', document" PG_T " NOT NULL DEFAULT '');"
    "CREATE UNIQUE INDEX knowledge_active_path ON knowledge(space, category, path)"
    "  WHERE status = 'active';"
    "CREATE INDEX knowledge_space_status ON knowledge(space, status, seq);"
    "CREATE TABLE knowledge_cases("
    "  seq" PG_ROWID("knowledge_cases_seq_seq") ", space" PG_T " NOT NULL,"
    "  knowledge_id" PG_T " NOT NULL,"
    "  kind" PG_T " NOT NULL CHECK(kind IN ('helpful','harmful')), case_id" PG_T " NOT NULL,"
    "  scenario" PG_T " NOT NULL DEFAULT '', result" PG_T " NOT NULL DEFAULT '',"
    "  agent_id" PG_T " NOT NULL DEFAULT '', trace_id" PG_T " NOT NULL DEFAULT '',"
    "  goal_id" PG_T " NOT NULL DEFAULT '', created_at" PG_T " NOT NULL,"
    "  UNIQUE(knowledge_id, kind, case_id));"
    "CREATE TABLE knowledge_revisions("
    "  space" PG_T " NOT NULL, knowledge_id" PG_T " NOT NULL, version bigint NOT NULL,"
    "  document" PG_T " NOT NULL, actor" PG_T " NOT NULL, reason" PG_T " NOT NULL,"
    "  created_at" PG_T " NOT NULL, PRIMARY KEY(knowledge_id, version));"
    "CREATE TABLE knowledge_feedback("
    "  seq" PG_ROWID("knowledge_feedback_seq_seq") ", space" PG_T " NOT NULL,"
    "  knowledge_id" PG_T " NOT NULL, feedback" PG_T " NOT NULL, actor" PG_T " NOT NULL,"
    "  status" PG_T " NOT NULL DEFAULT 'pending', created_at" PG_T " NOT NULL);"
    "CREATE INDEX knowledge_feedback_entry ON knowledge_feedback(knowledge_id);"
    "CREATE TABLE audit("
    "  seq" PG_ROWID("audit_seq_seq") ", ts" PG_T " NOT NULL, space" PG_T " NOT NULL,"
    "  actor" PG_T " NOT NULL, action" PG_T " NOT NULL, target" PG_T " NOT NULL DEFAULT '');"
    /* 3: traces and their knowledge log */
    "CREATE TABLE traces("
    "  space" PG_T " NOT NULL, trace_id" PG_T " NOT NULL, task" PG_T " NOT NULL DEFAULT '',"
    "  created_at" PG_T " NOT NULL, PRIMARY KEY(space, trace_id));"
    "CREATE INDEX traces_created ON traces(space, created_at);"
    "CREATE TABLE knowledge_log("
    "  id" PG_ROWID("knowledge_log_id_seq") ", space" PG_T " NOT NULL, trace_id" PG_T " NOT NULL,"
    "  knowledge_id" PG_T " NOT NULL, goal_id" PG_T " NOT NULL DEFAULT '',"
    "  injected_at_sequence bigint NOT NULL DEFAULT 0, injected_at" PG_T " NOT NULL,"
    "  task" PG_T " NOT NULL DEFAULT '', content" PG_T " NOT NULL DEFAULT '',"
    "  eval_status" PG_T " CHECK(eval_status IN"
    "    ('irrelevant','unused','helpful','harmful','neutral')),"
    "  eval_reason" PG_T ", evaluated_at" PG_T ", evaluated_at_trigger" PG_T ");"
    "CREATE INDEX knowledge_log_trace ON knowledge_log(space, trace_id, id);"
    "CREATE INDEX knowledge_log_entry ON knowledge_log(knowledge_id, id);"
    "CREATE TABLE trace_rollups("
    "  space" PG_T " NOT NULL, trace_id" PG_T " NOT NULL, knowledge_id" PG_T " NOT NULL,"
    "  status" PG_T " NOT NULL, created_at" PG_T " NOT NULL,"
    "  PRIMARY KEY(space, trace_id, knowledge_id, status));"
    /* 4: browser logins and analysis sessions */
    "CREATE TABLE logins("
    "  hash bytea PRIMARY KEY, token_id" PG_T " NOT NULL REFERENCES tokens(id),"
    "  csrf" PG_T " NOT NULL, created_at" PG_T " NOT NULL, expires_at" PG_T " NOT NULL);"
    "CREATE TABLE sessions("
    "  space" PG_T " NOT NULL, id" PG_T " NOT NULL, title" PG_T " NOT NULL DEFAULT '',"
    "  document" PG_T " NOT NULL, created_at" PG_T " NOT NULL, updated_at" PG_T " NOT NULL,"
    "  PRIMARY KEY(space, id));"
    /* 5: the LLM usage ledger and background jobs; 8: their node and lease */
    "CREATE TABLE llm_calls("
    "  id" PG_ROWID("llm_calls_id_seq") ", space" PG_T " NOT NULL, purpose" PG_T " NOT NULL,"
    "  model" PG_T " NOT NULL,"
    "  prompt_tokens bigint NOT NULL DEFAULT 0, completion_tokens bigint NOT NULL DEFAULT 0,"
    "  latency_ms bigint NOT NULL DEFAULT 0, outcome" PG_T " NOT NULL,"
    "  created_at" PG_T " NOT NULL);"
    "CREATE INDEX llm_calls_space ON llm_calls(space, created_at);"
    "CREATE TABLE jobs("
    "  id" PG_T " PRIMARY KEY, space" PG_T " NOT NULL, kind" PG_T " NOT NULL,"
    "  status" PG_T " NOT NULL CHECK(status IN ('queued','running','done','failed')),"
    "  progress bigint NOT NULL DEFAULT 0, total bigint NOT NULL DEFAULT 0,"
    "  params" PG_T " NOT NULL DEFAULT '{}', result" PG_T ", error" PG_T ","
    "  actor" PG_T " NOT NULL, created_at" PG_T " NOT NULL, updated_at" PG_T " NOT NULL,"
    "  node" PG_T ", lease_until" PG_T ");"
    "CREATE INDEX jobs_status ON jobs(status, created_at);"
    "CREATE INDEX jobs_space ON jobs(space, created_at);"
    JOBS_ONE_OPEN_SQL
    IDEMPOTENCY_SQL(PG_T)
    /* 7: embeddings. stamp comes from the sequence vector_stamp through
     * vector_stamp_next(), which first takes a transaction advisory lock:
     * the next writer waits for this one's commit, so a reader that has seen
     * stamp s never later sees a smaller stamp commit (with bare nextval two
     * writers could commit out of order and a `stamp > last` reader would
     * miss the earlier one for good). */
    "CREATE TABLE vectors("
    "  knowledge_seq bigint PRIMARY KEY, space" PG_T " NOT NULL, model" PG_T " NOT NULL,"
    "  version bigint NOT NULL, digest" PG_T " NOT NULL, dim bigint NOT NULL,"
    "  vec bytea NOT NULL, stamp bigint NOT NULL, updated_at" PG_T " NOT NULL);"
    "CREATE INDEX vectors_stamp ON vectors(stamp);"
    "CREATE INDEX vectors_space ON vectors(space, model);"
    "CREATE TABLE embed_queue(knowledge_seq bigint PRIMARY KEY);"
    "CREATE SEQUENCE vector_stamp;"
    "CREATE FUNCTION vector_stamp_next() RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$"
    " BEGIN PERFORM pg_advisory_xact_lock(4860386412275099648);"
    " RETURN nextval('vector_stamp'); END $$;"
    "CREATE FUNCTION embed_queue_add() RETURNS trigger LANGUAGE plpgsql AS $$"
    " BEGIN INSERT INTO embed_queue(knowledge_seq) VALUES(new.seq) ON CONFLICT DO NOTHING;"
    " RETURN NULL; END $$;"
    "CREATE TRIGGER embed_queue_insert AFTER INSERT ON knowledge FOR EACH ROW"
    "  WHEN (new.status = 'active') EXECUTE FUNCTION embed_queue_add();"
    "CREATE TRIGGER embed_queue_update AFTER UPDATE OF title, scenario, content, status"
    "  ON knowledge FOR EACH ROW WHEN (new.status = 'active') EXECUTE FUNCTION embed_queue_add();"
    "CREATE FUNCTION vectors_status() RETURNS trigger LANGUAGE plpgsql AS $$"
    " BEGIN UPDATE vectors SET stamp = vector_stamp_next() WHERE knowledge_seq = new.seq;"
    " RETURN NULL; END $$;"
    "CREATE TRIGGER vectors_status AFTER UPDATE OF status ON knowledge FOR EACH ROW"
    "  WHEN (old.status IS DISTINCT FROM new.status) EXECUTE FUNCTION vectors_status();"
    /* The full-text terms of active entries (instead of 2 and 6's FTS5
     * tables, pg_terms.c): head holds the words of the title, tags and stem
     * (small: it stays in the row, as knowledge_head is small), tsv those of
     * every field. The C code upserts both after each insert, update, move
     * and revert; the trigger drops the row of an entry that stops being
     * active and keeps types and category (the search filters) in step. */
    "CREATE TABLE knowledge_terms("
    "  seq bigint PRIMARY KEY REFERENCES knowledge(seq) ON DELETE CASCADE,"
    "  space" PG_T " NOT NULL, types bigint NOT NULL, category" PG_T " NOT NULL,"
    "  head tsvector NOT NULL, tsv tsvector NOT NULL);"
    "CREATE INDEX knowledge_terms_head ON knowledge_terms USING gin(head);"
    "CREATE INDEX knowledge_terms_tsv ON knowledge_terms USING gin(tsv);"
    "CREATE INDEX knowledge_terms_space ON knowledge_terms(space, seq);"
    "CREATE FUNCTION knowledge_terms_sync() RETURNS trigger LANGUAGE plpgsql AS $$"
    " BEGIN"
    "  IF new.status <> 'active' THEN"
    "   DELETE FROM knowledge_terms WHERE seq = new.seq;"
    "  ELSE"
    "   UPDATE knowledge_terms SET types = new.types, category = new.category"
    "    WHERE seq = new.seq AND (types IS DISTINCT FROM new.types"
    "     OR category IS DISTINCT FROM new.category);"
    "  END IF;"
    "  RETURN NULL;"
    " END $$;"
    "CREATE TRIGGER knowledge_terms_sync AFTER UPDATE OF status, types, category ON knowledge"
    "  FOR EACH ROW EXECUTE FUNCTION knowledge_terms_sync();"
    /* The cache generation: sum(n) grows with every write statement on a
     * table an answer is read from; each backend bumps its own slot of 8 so
     * concurrent writers do not queue on one row. */
    "CREATE TABLE generation(slot int PRIMARY KEY, n bigint NOT NULL);"
    "INSERT INTO generation(slot, n) SELECT s, 0 FROM generate_series(0, 7) AS s;"
    "CREATE FUNCTION generation_bump() RETURNS trigger LANGUAGE plpgsql AS $$"
    " BEGIN UPDATE generation SET n = n + 1 WHERE slot = pg_backend_pid() % 8;"
    " RETURN NULL; END $$;"
    PG_GENERATION_TRIGGER("knowledge")
    PG_GENERATION_TRIGGER("knowledge_cases")
    PG_GENERATION_TRIGGER("knowledge_revisions")
    PG_GENERATION_TRIGGER("knowledge_feedback")
    PG_GENERATION_TRIGGER("traces")
    PG_GENERATION_TRIGGER("knowledge_log")
    PG_GENERATION_TRIGGER("trace_rollups")
    PG_GENERATION_TRIGGER("sessions")
    PG_GENERATION_TRIGGER("jobs")
    PG_GENERATION_TRIGGER("spaces")
    PG_GENERATION_TRIGGER("vectors")
    PG_GENERATION_TRIGGER("embed_queue")
    PG_GENERATION_TRIGGER("knowledge_terms")
    /* 13: the embedding turn's lease (PostgreSQL only: no generation
     * trigger, a turn changes no answer) */
    PG_EMBED_TURN
    /* A token's use (last_used_at) must not invalidate every cached answer. */
    PG_SEARCH_STATS
    "CREATE TRIGGER tokens_generation"
    "  AFTER INSERT OR DELETE OR UPDATE OF revoked_at, role, space, label, hash ON tokens"
    "  FOR EACH STATEMENT EXECUTE FUNCTION generation_bump();"
    PG_KNOWLEDGE_NOTIFY
    MCP_SUBSCRIPTIONS_SQL(PG_T)
    REVIEW_SQL(PG_T, " bigint")
    PG_GENERATION_TRIGGER("review_policies")
    PG_GENERATION_TRIGGER("proposals")
    PG_PROPOSALS_NOTIFY
    PROMOTE_SQL(PG_T, " bigint")
    PG_GENERATION_TRIGGER("review_promotion")
    PROPOSAL_MEMBERS_SQL(PG_T, " bigint")
    LINKS_SQL(PG_T, " bigint")
    PG_GENERATION_TRIGGER("knowledge_links")
    EVIDENCE_SQL(PG_T, " bigint")
    PG_GENERATION_TRIGGER("evidence_policy")
    TIME_SQL(PG_T, " bigint")
    PG_GENERATION_TRIGGER("knowledge_time")
    SEARCH_LOG_SQL(PG_T, " bigint", "");
// clang-format on
#pragma GCC diagnostic pop

const char pg_migration_9[] = PG_SEARCH_STATS "UPDATE schema_version SET version = 9;";
const char pg_migration_11[] = JOBS_ONE_OPEN_SQL "UPDATE schema_version SET version = 11;";
const char pg_migration_12[] = IDEMPOTENCY_SQL(PG_T) "UPDATE schema_version SET version = 12;";
const char pg_migration_13[] = PG_EMBED_TURN "UPDATE schema_version SET version = 13;";
/* 14: a row of the LLM ledger changes no cached answer (tx.c store_generation). */
const char pg_migration_14[] = "DROP TRIGGER IF EXISTS llm_calls_generation ON llm_calls;"
                               "UPDATE schema_version SET version = 14;";
/* 15: the knowledge's changes as notifications; the MCP subscriptions. */
const char pg_migration_15[] =
    PG_KNOWLEDGE_NOTIFY MCP_SUBSCRIPTIONS_SQL(PG_T) "UPDATE schema_version SET version = 15;";
/* 16: the review queue (safe to run again, as from a version put back by hand). */
const char pg_migration_16[] = REVIEW_SQL(
    PG_T,
    " bigint") "DROP TRIGGER IF EXISTS review_policies_generation ON review_policies;"
               "DROP TRIGGER IF EXISTS proposals_generation ON proposals;" PG_GENERATION_TRIGGER(
                   "review_policies")
                   PG_GENERATION_TRIGGER("proposals") "UPDATE schema_version SET version = 16;";

/* 17: proposals made and decided notified. */
const char pg_migration_17[] = PG_PROPOSALS_NOTIFY "UPDATE schema_version SET version = 17;";

/* 18: promotion on evidence. */
// clang-format off
const char pg_migration_18[] =
    PROMOTE_SQL(PG_T, " bigint")
    "DROP TRIGGER IF EXISTS review_promotion_generation ON review_promotion;"
    PG_GENERATION_TRIGGER("review_promotion")
    "UPDATE schema_version SET version = 18;";
// clang-format on

/* 19: the members of held slim merges. */
const char pg_migration_19[] =
    PROPOSAL_MEMBERS_SQL(PG_T, " bigint") "UPDATE schema_version SET version = 19;";

/* 20: typed links between entries. */
// clang-format off
const char pg_migration_20[] =
    LINKS_SQL(PG_T, " bigint")
    "DROP TRIGGER IF EXISTS knowledge_links_generation ON knowledge_links;"
    PG_GENERATION_TRIGGER("knowledge_links")
    "UPDATE schema_version SET version = 20;";
// clang-format on

/* 21: a space's evidence ageing. */
// clang-format off
const char pg_migration_21[] =
    EVIDENCE_SQL(PG_T, " bigint")
    "DROP TRIGGER IF EXISTS evidence_policy_generation ON evidence_policy;"
    PG_GENERATION_TRIGGER("evidence_policy")
    "UPDATE schema_version SET version = 21;";
// clang-format on

/* 22: an entry's expiry, review-by date and pin. */
// clang-format off
const char pg_migration_22[] =
    TIME_SQL(PG_T, " bigint")
    "DROP TRIGGER IF EXISTS knowledge_time_generation ON knowledge_time;"
    PG_GENERATION_TRIGGER("knowledge_time")
    "UPDATE schema_version SET version = 22;";
// clang-format on

/* 23: the search index's changes (service/lindex.c). */
const char pg_migration_23[] =
    SEARCH_LOG_SQL(PG_T, " bigint", "") "UPDATE schema_version SET version = 23;";

/* ---- knowhub check on PostgreSQL: one row, one integer, the problems ---- */

const struct pg_check pg_checks[] = {
    /* check.c's "revisions": every active entry has its history. */
    {"revisions", "SELECT count(*) FROM knowledge k WHERE status = 'active' AND NOT EXISTS"
                  " (SELECT 1 FROM knowledge_revisions r WHERE r.knowledge_id = k.id)"},
    /* check.c's "paths": what export cannot write: a name over 255 bytes,
     * or a file beside a folder of its name. */
    {"paths", "SELECT count(*) FROM knowledge k WHERE status = 'active' AND ("
              " octet_length(substr(path, strpos(path, '/') + 1)) > 255 OR"
              " (strpos(path, '/') > 0 AND"
              "  octet_length(substr(path, 1, strpos(path, '/') - 1)) > 255) OR"
              " EXISTS(SELECT 1 FROM knowledge o WHERE o.space = k.space"
              "  AND o.category = k.category AND o.status = 'active'"
              "  AND o.path > (k.path || '/') AND o.path < (k.path || '0')))"},
    /* check.c's knowledge_fts/knowledge_head counts: every active entry is
     * searchable, and nothing else is. */
    {"knowledge_terms", "SELECT count(*) FROM knowledge k WHERE status = 'active' AND NOT EXISTS"
                        " (SELECT 1 FROM knowledge_terms f WHERE f.seq = k.seq)"},
    {"knowledge_terms_stale", "SELECT count(*) FROM knowledge_terms f JOIN knowledge k"
                              " ON k.seq = f.seq WHERE k.status <> 'active'"},
    /* The search filters copied into knowledge_terms match the entry. */
    {"knowledge_terms_fields", "SELECT count(*) FROM knowledge_terms f JOIN knowledge k"
                               " ON k.seq = f.seq WHERE f.space <> k.space"
                               " OR f.types <> k.types OR f.category <> k.category"},
    /* check.c's search statistics */
    {"search_docs", CHECK_SEARCH_DOCS},
    {"search_stats", CHECK_SEARCH_STATS("chr(10)")},
    /* A vector of dim floats is dim * 4 bytes. */
    {"vectors", "SELECT count(*) FROM vectors WHERE dim > 0 AND dim * 4 <> octet_length(vec)"},
    /* The stamp sequence ahead of every stamp handed out. */
    {"vector_stamp", "SELECT (coalesce(max(stamp), 0) > (SELECT last_value"
                     " - (NOT is_called)::int FROM vector_stamp))::int FROM vectors"},
    /* The identity sequences behind the largest key of their table (a copy
     * that inserted explicit keys and forgot setval): the next insert would
     * collide. The last value handed out: last_value, less one when the
     * sequence was not called since setval(..., false). */
    {"sequences",
     "SELECT ((SELECT coalesce(max(seq), 0) FROM knowledge)"
     "  > (SELECT last_value - (NOT is_called)::int FROM knowledge_seq_seq))::int"
     " + ((SELECT coalesce(max(seq), 0) FROM knowledge_cases)"
     "  > (SELECT last_value - (NOT is_called)::int FROM knowledge_cases_seq_seq))::int"
     " + ((SELECT coalesce(max(seq), 0) FROM knowledge_feedback)"
     "  > (SELECT last_value - (NOT is_called)::int FROM knowledge_feedback_seq_seq))::int"
     " + ((SELECT coalesce(max(seq), 0) FROM audit)"
     "  > (SELECT last_value - (NOT is_called)::int FROM audit_seq_seq))::int"
     " + ((SELECT coalesce(max(id), 0) FROM knowledge_log)"
     "  > (SELECT last_value - (NOT is_called)::int FROM knowledge_log_id_seq))::int"
     " + ((SELECT coalesce(max(id), 0) FROM llm_calls)"
     "  > (SELECT last_value - (NOT is_called)::int FROM llm_calls_id_seq))::int"},
    /* The cache generation's 8 slots, and one schema version row. */
    {"generation", "SELECT abs(count(*) - 8) + count(*) FILTER (WHERE slot NOT BETWEEN 0 AND 7)"
                   " FROM generation"},
    {"schema_version", "SELECT abs(count(*) - 1) FROM schema_version"},
    {NULL, NULL},
};
