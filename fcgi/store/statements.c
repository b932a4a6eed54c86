/* store/statements.c: the SQL of every prepared statement, by stmt_id. */
#include "store/store_int.h"
#include "store/sql_parts.h"

/* The JSON snapshot of an entry row kept in knowledge_revisions.document. */
#define SNAPSHOT_JSON                                                                              \
    "json_object('id',id,'category',category,'path',path,'title',title,"                           \
    "'description',description,'tags',json(tags),'types',types,'scenario',scenario,"               \
    "'content',content,'always_apply',always_apply,'source',source,'urls',json(urls),"             \
    "'agent_id',agent_id,'message_id',message_id,'source_ts',source_ts,'score',score,"             \
    "'status',status,'merged_into',merged_into,'updated_at',updated_at,'meta',json(meta),"         \
    "'document',document)"

const char *const stmt_sql[S_COUNT] = {
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
    /* by the id index: +space and +status keep SQLite off the index on
     * (space, status), which read every active entry (pg_sql.c: an array) */
    [S_K_GET_MANY] = "SELECT " KNOWLEDGE_COLUMNS " FROM knowledge"
                     " WHERE id IN (SELECT value FROM json_each(?2))"
                     " AND +space = ?1 AND +status = 'active'",
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
                          " created_at) VALUES(?1, ?2, ?3, ?4, ?5) RETURNING seq",
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
    /* The two whole-space scans come in pages after a (category, path) key
     * (files.c), by the unique index of active paths. */
    [S_SCAN_CATEGORY] = "SELECT " KNOWLEDGE_COLUMNS " FROM knowledge"
                        " WHERE space = ?1 AND category = ?2 AND status = 'active'"
                        " AND path > ?3 ORDER BY path LIMIT ?4",
    [S_SCAN_ALWAYS_RULES] = "SELECT " KNOWLEDGE_COLUMNS " FROM knowledge"
                            " WHERE space = ?1 AND category = 'rules' AND status = 'active'"
                            " AND always_apply = 1 ORDER BY path",
    [S_SCAN_ACTIVE] = "SELECT " KNOWLEDGE_COLUMNS " FROM knowledge"
                      " WHERE space = ?1 AND status = 'active' AND (category, path) > (?2, ?3)"
                      " ORDER BY category, path LIMIT ?4",
    [S_MATCH] = "SELECT " MATCH_COLUMNS " FROM knowledge_fts f JOIN search_docs d"
                " ON d.seq = -f.rowid WHERE knowledge_fts MATCH ?1 AND d.space = ?2"
                " AND (?3 = 0 OR d.types & ?3 != 0) AND (?4 IS NULL OR d.category = ?4)"
                " AND f.rowid > -?6 ORDER BY f.rowid LIMIT ?5",
    [S_MATCH_HEAD] = "SELECT " MATCH_COLUMNS " FROM knowledge_head f JOIN search_docs d"
                     " ON d.seq = -f.rowid WHERE knowledge_head MATCH ?1 AND d.space = ?2"
                     " AND (?3 = 0 OR d.types & ?3 != 0) AND (?4 IS NULL OR d.category = ?4)"
                     " AND f.rowid > -?6 ORDER BY f.rowid LIMIT ?5",
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
                  " FROM knowledge WHERE id = ?3 AND space = ?1 AND status = 'active' RETURNING id",
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
    [S_IDEM_GET] = "SELECT digest, knowledge_id FROM idempotency_keys"
                   " WHERE space = ?1 AND key = ?2 AND created_at >= ?3",
    [S_IDEM_PUT] = "INSERT INTO idempotency_keys(space, key, digest, knowledge_id, created_at)"
                   " VALUES(?1, ?2, ?3, ?4, ?5)",
    [S_IDEM_EXPIRE] = "DELETE FROM idempotency_keys WHERE created_at < ?1",
    [S_JOB_OPEN] = "SELECT " JOB_COLUMNS " FROM jobs WHERE space = ?1 AND kind = ?2"
                   " AND status IN ('queued', 'running')",
    [S_JOB_MERGE] =
        "UPDATE jobs SET params = ?2, updated_at = ?3 WHERE id = ?1 AND status = 'queued'",
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
    /* A queued job, or a running one whose node's lease ran out. */
    [S_JOB_CLAIM] = "UPDATE jobs SET status = 'running', node = ?2, lease_until = ?3,"
                    " updated_at = ?1 WHERE id = (SELECT id FROM jobs WHERE status = 'queued'"
                    " OR (status = 'running' AND lease_until < ?1) ORDER BY created_at, id LIMIT 1)"
                    " RETURNING " JOB_COLUMNS,
    /* Whether a job waits for S_JOB_CLAIM: the idle poll reads, not writes. */
    [S_JOB_WAITING] = "SELECT 1 FROM jobs WHERE status = 'queued'"
                      " OR (status = 'running' AND lease_until < ?1) LIMIT 1",
    /* Progress renews the lease, for the node holding it only. */
    [S_JOB_PROGRESS] = "UPDATE jobs SET progress = ?2, total = ?3, updated_at = ?4,"
                       " lease_until = ?5 WHERE id = ?1 AND status = 'running' AND node IS ?6",
    [S_JOB_FINISH] = "UPDATE jobs SET status = ?2, result = ?3, error = ?4, updated_at = ?5,"
                     " lease_until = NULL WHERE id = ?1 AND status = 'running' AND node IS ?6",
    /* At start: this node's running jobs (it was stopped), those of no node
     * (before leases), and any whose lease ran out; never another live node's. */
    [S_JOB_REQUEUE] = "UPDATE jobs SET status = 'queued', node = NULL, lease_until = NULL,"
                      " updated_at = ?1 WHERE status = 'running'"
                      " AND (node IS NULL OR node IS ?2 OR lease_until < ?1)",
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
    /* Raised by the generation triggers (migration 14), in the writer's
     * transaction: any process's commit that can change an answer. */
    [S_GENERATION] = "SELECT n FROM generation",
    [S_CASES_PAGE] = "SELECT kind, case_id, scenario, result, agent_id, trace_id, goal_id,"
                     " created_at FROM knowledge_cases WHERE knowledge_id = ?1 AND kind = ?2"
                     " ORDER BY seq LIMIT ?3 OFFSET ?4",
    [S_K_WHOLE] = KNOWLEDGE_WHOLE_SQL("?1", "?2", "?3", "?4", "?5"),
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
    /* The active paths of category from ?3 up to ?4 (by bytes), at most ?5:
     * the names a title's slug has taken ("slug.md", "slug-2.md" ...). */
    [S_K_PATHS_RANGE] = "SELECT path FROM knowledge WHERE space = ?1 AND category = ?2"
                        " AND status = 'active' AND path >= ?3 AND path < ?4"
                        " ORDER BY path LIMIT ?5",
    /* the conflict item of an unordered pair of entries: a pending one
     * first, else one dismissed while both sides are still at the versions
     * it was made at; no row: none */
    [S_CONFLICT_ITEM_FIND] =
        "SELECT p.id, p.state FROM proposals p JOIN proposal_members m"
        " ON m.space = p.space AND m.proposal_id = p.id"
        " WHERE p.space = ?1 AND p.kind = 'conflict' AND m.knowledge_id IN (?2, ?3)"
        " AND ((p.knowledge_id = ?2 AND m.knowledge_id = ?3)"
        " OR (p.knowledge_id = ?3 AND m.knowledge_id = ?2))"
        " AND (p.state = 'pending' OR (p.decision = 'dismiss'"
        " AND p.base_version = (SELECT ka.version FROM knowledge ka"
        " WHERE ka.space = p.space AND ka.id = p.knowledge_id)"
        " AND m.base_version = (SELECT kb.version FROM knowledge kb"
        " WHERE kb.space = m.space AND kb.id = m.knowledge_id)))"
        " ORDER BY CASE WHEN p.state = 'pending' THEN 0 ELSE 1 END, p.created_at DESC LIMIT 1",
    [S_K_FILE_TAKEN] = "SELECT 1 FROM knowledge WHERE space = ?1 AND category = ?2"
                       " AND status = 'active' AND path = ?3 AND id != ?4",
    [S_K_PLACE] = "SELECT category, path FROM knowledge WHERE id = ?1 AND status = 'active'",
    [S_SESSION_PUT_IF] = "UPDATE sessions SET title = ?3, document = ?4, updated_at = ?5"
                         " WHERE space = ?1 AND id = ?2 AND updated_at = ?6",
    [S_REVISION_TIME] = "SELECT created_at FROM knowledge_revisions"
                        " WHERE knowledge_id = ?1 AND space = ?2 AND version = ?3",
    [S_VEC_PUT] = "INSERT INTO vectors(knowledge_seq, space, model, version, digest, dim, vec,"
                  " stamp, updated_at) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7,"
                  " (SELECT coalesce(max(stamp), 0) + 1 FROM vectors), ?8)"
                  " ON CONFLICT(knowledge_seq) DO UPDATE SET space = excluded.space,"
                  " model = excluded.model, version = excluded.version,"
                  " digest = excluded.digest, dim = excluded.dim, vec = excluded.vec,"
                  " stamp = excluded.stamp, updated_at = excluded.updated_at",
    [S_VEC_TOUCH] = "UPDATE vectors SET version = ?2 WHERE knowledge_seq = ?1",
    [S_VEC_DEQUEUE] = "DELETE FROM embed_queue WHERE knowledge_seq = ?1 AND NOT EXISTS"
                      " (SELECT 1 FROM knowledge WHERE seq = ?1 AND status = 'active'"
                      " AND version != ?2)",
    [S_VEC_TAKE] = "SELECT q.knowledge_seq, k.id, k.space, k.version, k.status, k.title,"
                   " k.scenario, substr(k.content, 1, ?2), v.model, v.version, v.digest"
                   " FROM embed_queue q LEFT JOIN knowledge k ON k.seq = q.knowledge_seq"
                   " LEFT JOIN vectors v ON v.knowledge_seq = q.knowledge_seq"
                   " WHERE ?3 IS NULL OR k.space = ?3 ORDER BY q.knowledge_seq LIMIT ?1",
    /* The queue's next space: the first after ?1 in name order, else the
     * first. By the queue (small), not the entries: CROSS JOIN keeps it outer. */
    [S_VEC_NEXT] = "SELECT coalesce(min(CASE WHEN k.space > ?1 THEN k.space END), min(k.space))"
                   " FROM embed_queue q CROSS JOIN knowledge k ON k.seq = q.knowledge_seq",
    [S_VEC_FILL] = "INSERT OR IGNORE INTO embed_queue(knowledge_seq) SELECT k.seq FROM knowledge k"
                   " LEFT JOIN vectors v ON v.knowledge_seq = k.seq WHERE k.status = 'active'"
                   " AND (?1 IS NULL OR k.space = ?1) AND (v.knowledge_seq IS NULL"
                   " OR v.model != ?2 OR v.version != k.version OR v.digest = '')",
    [S_VEC_FORGET_DIGESTS] = "UPDATE vectors SET digest = '' WHERE space = ?1",
    [S_VEC_QUEUED] = "SELECT count(*) FROM embed_queue q JOIN knowledge k"
                     " ON k.seq = q.knowledge_seq WHERE k.space = ?1 AND k.status = 'active'",
    [S_VEC_COUNTS] = "SELECT count(*), coalesce(sum(v.dim > 0), 0), coalesce(max(v.dim), 0),"
                     " (SELECT count(*) FROM knowledge WHERE space = ?1 AND status = 'active')"
                     " FROM vectors v JOIN knowledge k ON k.seq = v.knowledge_seq"
                     " WHERE v.space = ?1 AND v.model = ?2 AND k.status = 'active'",
    [S_VEC_SINCE] = "SELECT v.knowledge_seq, k.id, k.status, v.dim, v.vec, v.stamp"
                    " FROM vectors v JOIN knowledge k ON k.seq = v.knowledge_seq"
                    " WHERE v.stamp > ?3 AND +v.space = ?1 AND +v.model = ?2 ORDER BY v.stamp"
                    " LIMIT ?4", /* by the stamp index: + keeps the planner off vectors_space */
    [S_VEC_STAMP] = "SELECT coalesce(max(stamp), 0) FROM vectors",
    [S_VEC_DIM] =
        "SELECT dim FROM vectors WHERE model = ?1 AND dim > 0 ORDER BY stamp DESC LIMIT 1",
    [S_SX_DIRTY] = SEARCH_DIRTY_SQL,
    [S_SX_DIRTY_COUNT] = SEARCH_DIRTY_COUNT_SQL,
    [S_SX_UNDIRTY] = "DELETE FROM search_dirty WHERE seq = ?1",
    [S_SX_SOURCE] = "SELECT id, space, status, title, tags, path, scenario, content FROM knowledge"
                    " WHERE seq = ?1",
    [S_SX_DOC_GET] = "SELECT space, terms FROM search_docs WHERE seq = ?1",
    [S_SX_DOC_PUT] = "INSERT INTO search_docs(" SEARCH_DOC_COLUMNS ") SELECT " SEARCH_DOC_FROM_ENTRY
                     ", ?2 FROM knowledge WHERE seq = ?1" SEARCH_DOC_UPDATE,
    [S_SX_DOC_DELETE] = "DELETE FROM search_docs WHERE seq = ?1",
    [S_SX_DF_ADD] = "INSERT INTO search_terms(space, term, df) SELECT ?1, key, value"
                    " FROM json_each(?2) WHERE true"
                    " ON CONFLICT(space, term) DO UPDATE SET df = df + excluded.df",
    [S_SX_DF_PRUNE] = "DELETE FROM search_terms WHERE space = ?1 AND df <= 0"
                      " AND term IN (SELECT key FROM json_each(?2))",
    [S_SX_SPACE_ADD] =
        "INSERT INTO search_spaces(space, " SEARCH_SPACE_COLUMNS
        ") VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT(space) DO UPDATE SET"
        " docs = docs + excluded.docs, len_title = len_title + excluded.len_title,"
        " len_tags = len_tags + excluded.len_tags, len_stem = len_stem + excluded.len_stem,"
        " len_scenario = len_scenario + excluded.len_scenario,"
        " len_body = len_body + excluded.len_body RETURNING docs",
    [S_SX_STATS_GET] = SEARCH_STATS_GET("?1", "IN (SELECT value FROM json_each(?2))"),
    [S_SX_META_GET] = SEARCH_META_GET_SQL,
    [S_SX_META_SET] = "UPDATE search_meta SET value = ?1 WHERE key = 'tokenizer'",
    [S_SX_LOG_ADD] = "INSERT OR IGNORE INTO search_log(space, stamp, seq)"
                     " SELECT ?1, ?2, value FROM json_each(?3)",
    [S_SX_STAMP_NEXT] = "INSERT INTO search_stamps(space, stamp) VALUES(?1, 1)"
                        " ON CONFLICT(space) DO UPDATE SET stamp = stamp + 1 RETURNING stamp",
    [S_SX_LOG_FLOOR] = "UPDATE search_stamps SET log_floor = ?2 WHERE space = ?1",
    [S_SX_LOG_PRUNE] = "DELETE FROM search_log WHERE space = ?1 AND stamp <= ?2",
    [S_SX_STAMP] = "SELECT stamp, log_floor FROM search_stamps WHERE space = ?1",
    [S_SX_DOCS] = "SELECT d.seq, 0, " LINDEX_COLUMNS " FROM search_docs d WHERE d.space = ?1",
    [S_SX_LOG_SINCE] = "SELECT l.seq, l.stamp, " LINDEX_COLUMNS " FROM search_log l"
                       " LEFT JOIN search_docs d ON d.seq = l.seq AND d.space = l.space"
                       " WHERE l.space = ?1 AND l.stamp > ?2 ORDER BY l.stamp, l.seq",
    [S_OVERVIEW_CATEGORIES] = "SELECT category, count(*) FROM knowledge WHERE space = ?1"
                              " AND status = 'active' GROUP BY category",
    [S_OVERVIEW_TRACES] = "SELECT count(*), coalesce(sum(CASE WHEN created_at >= ?2 THEN 1 END), 0)"
                          " FROM traces WHERE space = ?1",
    [S_OVERVIEW_RECENT] = "SELECT id, category, path, title, updated_at, 0 FROM knowledge"
                          " WHERE space = ?1 AND status = 'active'"
                          " ORDER BY updated_at DESC, seq DESC LIMIT ?2",
    [S_OVERVIEW_INJECTED] = "SELECT k.id, k.category, k.path, k.title, k.updated_at, count(*) AS n"
                            " FROM knowledge_log l JOIN knowledge k ON k.id = l.knowledge_id"
                            " WHERE l.space = ?1 AND k.space = ?1 AND k.status = 'active'"
                            " GROUP BY k.id, k.category, k.path, k.title, k.updated_at"
                            " ORDER BY n DESC, k.id LIMIT ?2",
    [S_OVERVIEW_HARMFUL] = "SELECT id, category, path, title, updated_at, harmful FROM knowledge"
                           " WHERE space = ?1 AND status = 'active' AND harmful > 0"
                           " ORDER BY harmful DESC, helpful, id LIMIT ?2",
    /* The knowledge's changes (migration 15), read by the stream thread. */
    [S_CHANGES_LAST] = "SELECT coalesce(max(seq), 0) FROM changes",
    [S_CHANGES_SINCE] = "SELECT seq, space, knowledge_id, category, path, old_category, old_path,"
                        " action FROM changes WHERE seq > ?1 ORDER BY seq LIMIT 256",
    [S_CHANGES_TRIM] = "DELETE FROM changes WHERE at < ?1",
    /* The MCP sessions' subscriptions (changes.c). */
    [S_SUB_PUT] = "INSERT INTO mcp_subscriptions(space, token_id, session, uri, seen_at)"
                  " VALUES(?1, ?2, ?3, ?4, ?5) ON CONFLICT(token_id, session, uri)"
                  " DO UPDATE SET seen_at = excluded.seen_at",
    [S_SUB_DELETE] =
        "DELETE FROM mcp_subscriptions WHERE token_id = ?1 AND session = ?2 AND uri = ?3",
    [S_SUB_END] = "DELETE FROM mcp_subscriptions WHERE token_id = ?1 AND session = ?2",
    [S_SUB_COUNT] = "SELECT count(*) FROM mcp_subscriptions WHERE token_id = ?1",
    [S_SUB_MATCH] = "SELECT token_id, session FROM mcp_subscriptions WHERE space = ?1 AND uri = ?2"
                    " LIMIT 10000",
    [S_SUB_TOUCH] =
        "UPDATE mcp_subscriptions SET seen_at = ?3 WHERE token_id = ?1 AND session = ?2",
    [S_SUB_EXPIRE] = "DELETE FROM mcp_subscriptions WHERE seen_at < ?1",
    /* 16: the review queue (store/review.c) */
    /* the token's own policy (?2, may be NULL) first, then the space's */
    [S_REVIEW_POLICY_GET] =
        "SELECT coalesce((SELECT policy FROM token_reviews WHERE token_id = ?2),"
        " (SELECT policy FROM review_policies WHERE space = ?1), 'off')",
    [S_TOKEN_REVIEW_SET] = "INSERT INTO token_reviews(token_id, policy) VALUES(?1, ?2)"
                           " ON CONFLICT(token_id) DO UPDATE SET policy = excluded.policy",
    [S_REVIEW_POLICY_SET] = "INSERT INTO review_policies(space, policy, actor, updated_at)"
                            " VALUES(?1, ?2, ?3, ?4) ON CONFLICT(space) DO UPDATE SET"
                            " policy = excluded.policy, actor = excluded.actor,"
                            " updated_at = excluded.updated_at",
    [S_PROPOSAL_INSERT] = "INSERT INTO proposals(id, space, kind, state, write_path, knowledge_id,"
                          " base_version, category, path, document, base_document, token_id,"
                          " actor, agent_id, trace_id, source, reasons, created_at)"
                          " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
                          " ?15, ?16, ?17, ?18)",
    [S_PROPOSAL_GET] = "SELECT " PROPOSAL_COLUMNS " FROM proposals WHERE id = ?1 AND space = ?2",
    [S_PROPOSAL_LIST] = "SELECT " PROPOSAL_COLUMNS " FROM proposals WHERE space = ?1"
                        " AND (?2 IS NULL OR state = ?2) ORDER BY created_at, id"
                        " LIMIT ?3 OFFSET ?4",
    [S_PROPOSAL_COUNT] = "SELECT count(*) FROM proposals WHERE space = ?1"
                         " AND (?2 IS NULL OR state = ?2)",
    /* Exactly one decision wins: the row changes only from the state read. */
    [S_PROPOSAL_DECIDE] = "UPDATE proposals SET state = ?3, decision = ?4, decision_reason = ?5,"
                          " decided_by = ?6, decided_at = ?7, result_id = ?8"
                          " WHERE id = ?1 AND space = ?2 AND state = ?9",
    [S_PROPOSAL_COUNTS] = "SELECT coalesce(sum(CASE WHEN state = 'pending' THEN 1 ELSE 0 END), 0),"
                          " coalesce(sum(CASE WHEN state = 'quarantined' THEN 1 ELSE 0 END), 0)"
                          " FROM proposals WHERE space = ?1",
    [S_PROPOSAL_TOTALS] = "SELECT coalesce(sum(CASE WHEN state = 'pending' THEN 1 ELSE 0 END), 0),"
                          " coalesce(sum(CASE WHEN state = 'quarantined' THEN 1 ELSE 0 END), 0)"
                          " FROM proposals",
    /* 18: promotion on evidence (service/promote.c) */
    [S_REVIEW_PROMOTE_GET] = "SELECT promote_after FROM review_promotion WHERE space = ?1",
    [S_REVIEW_PROMOTE_SET] = "INSERT INTO review_promotion(space, promote_after, actor, updated_at)"
                             " VALUES(?1, ?4, ?2, ?3) ON CONFLICT(space) DO UPDATE SET"
                             " promote_after = excluded.promote_after, actor = excluded.actor,"
                             " updated_at = excluded.updated_at",
    [S_PROPOSAL_PENDING_DOCS] = "SELECT id, kind, knowledge_id, category, path, document"
                                " FROM proposals WHERE space = ?1 AND state = 'pending'"
                                " AND kind IN ('create', 'update')"
                                " ORDER BY created_at DESC, id DESC LIMIT ?2",
    /* No row: the proposal is not a pending one of the space. */
    [S_LOG_ADD_PROPOSAL] = "INSERT INTO knowledge_log(space, trace_id, knowledge_id, goal_id,"
                           " injected_at_sequence, injected_at, task, content)"
                           " SELECT ?1, ?2, id, ?4, ?5, ?6, ?7, ?8 FROM proposals"
                           " WHERE id = ?3 AND space = ?1 AND state = 'pending' RETURNING id",
    [S_PROPOSAL_VERDICTS] = "SELECT trace_id, eval_status, coalesce(eval_reason, '')"
                            " FROM knowledge_log WHERE space = ?1 AND knowledge_id = ?2"
                            " AND eval_status IN ('helpful', 'harmful') ORDER BY id LIMIT ?3",
    /* 19: held slim merges (service/slim.c, service/review.c) */
    [S_PROPOSAL_MEMBER_ADD] = "INSERT INTO proposal_members(space, proposal_id, knowledge_id,"
                              " base_version) VALUES(?1, ?2, ?3, ?4)",
    /* with what the entry is now: NULL columns when it is gone */
    [S_PROPOSAL_MEMBERS] = "SELECT m.knowledge_id, m.base_version, k.title, k.path, k.status,"
                           " k.version FROM proposal_members m LEFT JOIN knowledge k"
                           " ON k.id = m.knowledge_id AND k.space = m.space"
                           " WHERE m.space = ?1 AND m.proposal_id = ?2 ORDER BY m.knowledge_id",
    /* a held slim merge (pending or quarantined) of the entry, as survivor
     * or as member; no row: none */
    [S_PROPOSAL_MEMBER_HELD] =
        "SELECT p.id FROM proposals p WHERE p.space = ?1"
        " AND p.kind = 'slim_merge' AND p.state IN ('pending', 'quarantined')"
        " AND (p.knowledge_id = ?2 OR EXISTS (SELECT 1 FROM proposal_members m"
        " WHERE m.space = p.space AND m.proposal_id = p.id"
        " AND m.knowledge_id = ?2)) LIMIT 1",
    /* 20: typed links (service/links.c); adding one again changes nothing */
    [S_LINK_ADD] = "INSERT INTO knowledge_links(space, from_id, to_id, type, actor, reason,"
                   " created_at) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)"
                   " ON CONFLICT DO NOTHING",
    [S_LINK_GET] = "SELECT actor, reason, created_at FROM knowledge_links"
                   " WHERE space = ?1 AND from_id = ?2 AND to_id = ?3 AND type = ?4",
    [S_LINK_REMOVE] = "DELETE FROM knowledge_links"
                      " WHERE space = ?1 AND from_id = ?2 AND to_id = ?3 AND type = ?4",
    /* an entry's links both ways, with the other entry as it is now (any
     * status): by the primary key out, by knowledge_links_to in */
    [S_LINKS_OF] =
        "SELECT l.from_id, l.to_id, l.type, l.actor, l.reason, l.created_at, l.dir, k.id,"
        " k.title, k.path, k.category, k.status FROM (SELECT from_id, to_id, type, actor,"
        " reason, created_at, 'out' AS dir, to_id AS other FROM knowledge_links"
        " WHERE space = ?1 AND from_id = ?2 UNION ALL SELECT from_id, to_id, type, actor,"
        " reason, created_at, 'in' AS dir, from_id AS other FROM knowledge_links"
        " WHERE space = ?1 AND to_id = ?2) l JOIN knowledge k ON k.id = l.other"
        " AND k.space = ?1 ORDER BY l.created_at, l.type, l.dir DESC, k.id LIMIT ?3",
    /* whether the space has any contradicts link: a search asks once */
    /* for each of the ids of ?2 (a JSON array), the active entries linked to
     * it by contradicts, either way: each way by its own index, the ids first
     * (with an OR, or the ids inside, every link of the space was read) */
    [S_LINKS_CONTRADICTS_OF] =
        "SELECT q.value AS of_id, k.id FROM json_each(?2) AS q CROSS JOIN knowledge_links l"
        " ON l.space = ?1 AND l.from_id = q.value AND l.type = 'contradicts'"
        " JOIN knowledge k ON k.space = l.space AND k.id = l.to_id WHERE k.status = 'active'"
        " UNION SELECT q.value, k.id FROM json_each(?2) AS q CROSS JOIN"
        " knowledge_links l INDEXED BY knowledge_links_to"
        " ON l.space = ?1 AND l.to_id = q.value AND l.type = 'contradicts'"
        " JOIN knowledge k ON k.space = l.space AND k.id = l.from_id WHERE k.status = 'active'"
        " ORDER BY 1, 2",
    /* a revert of a superseded entry undoes the supersede */
    [S_LINKS_DROP_SUPERSEDES] = "DELETE FROM knowledge_links WHERE space = ?1 AND to_id = ?2"
                                " AND type = 'supersedes'",
    /* 21: evidence ageing (service/evidence.c) */
    [S_EVIDENCE_POLICY_GET] = "SELECT half_life_days FROM evidence_policy WHERE space = ?1",
    [S_EVIDENCE_POLICY_SET] =
        "INSERT INTO evidence_policy(space, half_life_days, actor, updated_at)"
        " VALUES(?1, ?4, ?2, ?3) ON CONFLICT(space) DO UPDATE SET"
        " half_life_days = excluded.half_life_days, actor = excluded.actor,"
        " updated_at = excluded.updated_at",
    /* the counted verdicts of the entries ?2 (a JSON list of ids) by the
     * hour they were counted in: by knowledge_cases' unique index */
    [S_EVIDENCE_VERDICTS] = "SELECT knowledge_id, kind, substr(created_at, 1, 13), count(*)"
                            " FROM knowledge_cases WHERE knowledge_id IN"
                            " (SELECT value FROM json_each(?2)) AND space = ?1"
                            " GROUP BY knowledge_id, kind, substr(created_at, 1, 13)",
    /* 22: an entry's time (service/timing.c); all NULL/0 deletes the row */
    [S_TIME_SET] = "INSERT INTO knowledge_time(space, knowledge_id, expires_at, review_after,"
                   " pinned) VALUES(?1, ?2, ?3, ?4, ?5) ON CONFLICT(space, knowledge_id)"
                   " DO UPDATE SET expires_at = excluded.expires_at,"
                   " review_after = excluded.review_after, pinned = excluded.pinned",
    [S_TIME_CLEAR] = "DELETE FROM knowledge_time WHERE space = ?1 AND knowledge_id = ?2",
    [S_TIME_GET] = "SELECT expires_at, review_after, pinned FROM knowledge_time"
                   " WHERE space = ?1 AND knowledge_id = ?2",
    /* the space's expired entries at ?2 (a search reads them once; usually none) */
    [S_TIME_EXPIRED] = "SELECT knowledge_id FROM knowledge_time"
                       " WHERE space = ?1 AND expires_at <= ?2",
    /* the first expiry after ?1 in any space (the answer cache's horizon) */
    [S_TIME_NEXT_EXPIRY] = "SELECT min(expires_at) FROM knowledge_time WHERE expires_at > ?1",
    /* the stale view: active entries expired or due for review at ?2 */
    [S_TIME_STALE] =
        "SELECT k.id, k.title, k.category, k.path, t.expires_at, t.review_after, t.pinned"
        " FROM knowledge_time t JOIN knowledge k ON k.space = t.space AND k.id = t.knowledge_id"
        " WHERE t.space = ?1 AND k.status = 'active' AND (t.expires_at <= ?2"
        " OR t.review_after <= ?2) ORDER BY CASE WHEN t.expires_at <= ?2 THEN 0 ELSE 1 END,"
        " coalesce(t.expires_at, t.review_after), k.id LIMIT ?3 OFFSET ?4",
    [S_TIME_STALE_COUNT] =
        "SELECT count(*) FROM knowledge_time t JOIN knowledge k ON k.space = t.space"
        " AND k.id = t.knowledge_id WHERE t.space = ?1 AND k.status = 'active'"
        " AND (t.expires_at <= ?2 OR t.review_after <= ?2)",
    /* active, unexpired entries past review_after at ?2 with no pending
     * review_due proposal (the sweep proposes one each) */
    /* the spaces with an entry past review_after at ?1 (the job thread's sweep) */
    [S_TIME_DUE_SPACES] = "SELECT DISTINCT space FROM knowledge_time WHERE review_after <= ?1"
                          " ORDER BY space LIMIT 50",
    [S_TIME_REVIEW_DUE] =
        "SELECT t.knowledge_id FROM knowledge_time t JOIN knowledge k ON k.space = t.space"
        " AND k.id = t.knowledge_id WHERE t.space = ?1 AND k.status = 'active'"
        " AND t.review_after <= ?2 AND (t.expires_at IS NULL OR t.expires_at > ?2)"
        " AND NOT EXISTS (SELECT 1 FROM proposals p WHERE p.space = t.space"
        " AND p.knowledge_id = t.knowledge_id AND p.kind = 'review_due'"
        " AND p.state IN ('pending', 'quarantined')) ORDER BY t.review_after, t.knowledge_id"
        " LIMIT ?3",
};
