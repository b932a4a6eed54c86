/* store/sql_parts.h: the pieces of SQL both dialects share word for word
 * (no parameters in them), for statements.c (SQLite) and pg_sql.c
 * (PostgreSQL) only. */
#ifndef KNOWHUB_SQL_PARTS_H
#define KNOWHUB_SQL_PARTS_H

/* The columns of an entry row (store_knowledge_from_row). */
#define KNOWLEDGE_COLUMNS                                                                          \
    "id, space, category, path, title, description, tags, types, scenario, content,"               \
    " always_apply, source, urls, agent_id, message_id, source_ts, score, helpful,"                \
    " harmful, irrelevant, unused, neutral, status, merged_into, version, created_at,"             \
    " updated_at, meta, document"

/* A trace's injections: all, pending, then by eval status (struct trace_info). */
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

/* A knowledge log row (struct log_entry). */
#define LOG_COLUMNS                                                                                \
    "id, trace_id, knowledge_id, goal_id, injected_at_sequence, injected_at, task, content,"       \
    " eval_status, eval_reason, evaluated_at, evaluated_at_trigger"

/* Migration 11 (both backends): at most one queued or running job per space
 * and kind (a second request answers with it: service/jobs.c). Extra ones an
 * older knowhub queued fail, merged into the oldest; then the index that
 * keeps it so, which also settles two requests at once (STORE_CONFLICT). */
#define JOBS_ONE_OPEN_SQL                                                                          \
    "UPDATE jobs SET status = 'failed', lease_until = NULL, error = '{\"code\":\"CONFLICT\","      \
    "\"message\":\"Merged into an earlier job of the same space and kind\"}'"                      \
    " WHERE status IN ('queued', 'running') AND EXISTS (SELECT 1 FROM jobs o"                      \
    "  WHERE o.space = jobs.space AND o.kind = jobs.kind AND o.status IN ('queued', 'running')"    \
    "  AND (o.created_at < jobs.created_at OR (o.created_at = jobs.created_at AND o.id < "         \
    "jobs.id)));"                                                                                  \
    "CREATE UNIQUE INDEX IF NOT EXISTS jobs_open ON jobs(space, kind) WHERE status IN ('queued', " \
    "'running');"

/* Migration 12 (both backends, the text types PostgreSQL's T): the
 * Idempotency-Keys of creates, per space, with a digest of the request
 * and the entry it made; kept a day (IDEMPOTENCY_HOURS). */
#define IDEMPOTENCY_SQL(T)                                                                         \
    "CREATE TABLE IF NOT EXISTS idempotency_keys(space" T " NOT NULL, key" T " NOT NULL,"          \
    " digest" T " NOT NULL, knowledge_id" T " NOT NULL, created_at" T " NOT NULL,"                 \
    " PRIMARY KEY(space, key));"                                                                   \
    "CREATE INDEX IF NOT EXISTS idempotency_keys_created ON idempotency_keys(created_at);"

/* A job row (struct job_info). */
#define JOB_COLUMNS                                                                                \
    "id, space, kind, status, progress, total, params, result, error, actor, created_at,"          \
    " updated_at"

/* The columns of a search candidate (S_MATCH*, struct match_row), from its
 * search row d: only what scoring and ordering need. */
#define MATCH_COLUMNS "d.seq, " MATCH_ROW_COLUMNS
/* ... after its seq, in this order (store_match_row_read) */
#define MATCH_ROW_COLUMNS                                                                          \
    "d.id, d.category, d.path, d.title, d.tags, d.body_head, d.source, d.updated_at,"              \
    " d.always_apply, d.scenario_head, d.terms"
/* An entry's search row made from its knowledge row, with its terms record. */
#define SEARCH_DOC_COLUMNS                                                                         \
    "seq, space, id, category, types, path, title, tags, source, updated_at, always_apply,"        \
    " body_head, scenario_head, terms"
#define SEARCH_DOC_UPDATE                                                                          \
    " ON CONFLICT(seq) DO UPDATE SET space = excluded.space, id = excluded.id,"                    \
    " category = excluded.category, types = excluded.types, path = excluded.path,"                 \
    " title = excluded.title, tags = excluded.tags, source = excluded.source,"                     \
    " updated_at = excluded.updated_at, always_apply = excluded.always_apply,"                     \
    " body_head = excluded.body_head, scenario_head = excluded.scenario_head,"                     \
    " terms = excluded.terms"
#define SEARCH_DOC_FROM_ENTRY                                                                      \
    "seq, space, id, category, types, path, title, tags, source, updated_at, always_apply,"        \
    " substr(content, 1, 200), substr(scenario, 1, 200)"

/* The BM25F statistics (search_index.c): a space's totals, the marked
 * entries, how many are marked, the tokenizer the indexes were made by. */
#define SEARCH_SPACE_COLUMNS "docs, len_title, len_tags, len_stem, len_scenario, len_body"
/* A search's statistics in one statement (store_search_stats): the space's
 * row (term NULL: its entries and field lengths), then each of the terms
 * with its document frequency. terms: the condition on term; on PostgreSQL
 * "= ANY(ARRAY(subquery))", an index probe per term, where "IN (SELECT
 * json...)" is planned as a hash join over every term of the table (a JSON
 * list is guessed at 100 rows): 0.45 -> 0.05 ms at 2,047 terms. */
#define SEARCH_STATS_GET(space, terms)                                                             \
    "SELECT NULL AS term, " SEARCH_SPACE_COLUMNS " FROM search_spaces WHERE space = " space        \
    " UNION ALL SELECT term, df, 0, 0, 0, 0, 0 FROM search_terms WHERE space = " space             \
    " AND term " terms
#define SEARCH_DIRTY_SQL "SELECT seq FROM search_dirty ORDER BY seq LIMIT 256"
#define SEARCH_DIRTY_COUNT_SQL "SELECT count(*) FROM search_dirty"
#define SEARCH_META_GET_SQL "SELECT value FROM search_meta WHERE key = 'tokenizer'"

/* The MCP sessions' resource subscriptions (store/changes.c): a session is
 * its token's, kept while a stream of it is open somewhere (seen_at moves)
 * and for an hour after. */
// clang-format off
#define MCP_SUBSCRIPTIONS_SQL(T)                                                                   \
    "CREATE TABLE IF NOT EXISTS mcp_subscriptions(space" T " NOT NULL, token_id" T " NOT NULL,"    \
    " session" T " NOT NULL, uri" T " NOT NULL, seen_at" T " NOT NULL,"                             \
    " PRIMARY KEY(token_id, session, uri));"                                                      \
    "CREATE INDEX IF NOT EXISTS mcp_subscriptions_uri ON mcp_subscriptions(space, uri);"

/* 16: the review queue (service/review.c): a space's review policy, and
 * the proposals of writes held for review, with their whole document, the
 * live document they change (base_document, base_version; the reader diffs
 * the two), their provenance and their state (pending, approved, rejected,
 * quarantined); a token's own policy, set at its creation (token_reviews).
 * T is the text type, I the integer type. */
#define REVIEW_SQL(T, I)                                                                           \
    "CREATE TABLE IF NOT EXISTS review_policies(space" T " PRIMARY KEY, policy" T " NOT NULL,"    \
    " actor" T " NOT NULL, updated_at" T " NOT NULL);"                                            \
    "CREATE TABLE IF NOT EXISTS proposals(id" T " PRIMARY KEY, space" T " NOT NULL,"              \
    " kind" T " NOT NULL, state" T " NOT NULL, write_path" T " NOT NULL, knowledge_id" T ","      \
    " base_version" I ", category" T " NOT NULL, path" T " NOT NULL, document" T " NOT NULL,"     \
    " base_document" T ", token_id" T ", actor" T " NOT NULL, agent_id" T " NOT NULL,"            \
    " trace_id" T " NOT NULL, source" T " NOT NULL, reasons" T " NOT NULL, created_at" T          \
    " NOT NULL, decision" T ", decision_reason" T ", decided_by" T ", decided_at" T ","           \
    " result_id" T ");"                                                                           \
    "CREATE INDEX IF NOT EXISTS proposals_queue ON proposals(space, state, created_at);"          \
    "CREATE TABLE IF NOT EXISTS token_reviews(token_id" T " PRIMARY KEY, policy" T " NOT NULL);"

/* 18: how many helpful verdicts of distinct traces approve a pending
 * proposal of the space (service/promote.c); 0: evidence approves nothing;
 * no row: REVIEW_PROMOTE_DEFAULT. */
#define PROMOTE_SQL(T, I)                                                                          \
    "CREATE TABLE IF NOT EXISTS review_promotion(space" T " PRIMARY KEY, promote_after" I          \
    " NOT NULL, actor" T " NOT NULL, updated_at" T " NOT NULL);"

/* 19: the entries a held slim merge (kind slim_merge) merges into its
 * survivor (the proposal's knowledge_id), each at the version it was read
 * at. Written with its proposal in one transaction and never changed: the
 * proposal's generation trigger covers what answers read of it. */
#define PROPOSAL_MEMBERS_SQL(T, I)                                                                 \
    "CREATE TABLE IF NOT EXISTS proposal_members(space" T " NOT NULL, proposal_id" T " NOT NULL," \
    " knowledge_id" T " NOT NULL, base_version" I " NOT NULL,"                                    \
    " PRIMARY KEY(space, proposal_id, knowledge_id));"                                            \
    "CREATE INDEX IF NOT EXISTS proposal_members_entry ON proposal_members(space, knowledge_id);"

/* 20: typed links between entries (service/links.c): from supersedes,
 * contradicts, refines or is related to to (the type is checked by the
 * service); by whom, why and when. Links of a deleted or retired entry
 * stay (history); readers see the other entry's status. */
#define LINKS_SQL(T, I)                                                                            \
    "CREATE TABLE IF NOT EXISTS knowledge_links(space" T " NOT NULL, from_id" T " NOT NULL,"      \
    " to_id" T " NOT NULL, type" T " NOT NULL, actor" T " NOT NULL, reason" T " NOT NULL,"        \
    " created_at" T " NOT NULL, PRIMARY KEY(space, from_id, to_id, type));"                       \
    "CREATE INDEX IF NOT EXISTS knowledge_links_to ON knowledge_links(space, to_id);"             \
    "CREATE INDEX IF NOT EXISTS knowledge_links_type ON knowledge_links(space, type);"

/* 21: a space's evidence ageing,
 * the half-life in days of a helpful or harmful verdict's weight in stage
 * 2 (service/evidence.c; 0 or no row: off). The verdicts and their times
 * are knowledge_cases' rows. */
#define EVIDENCE_SQL(T, I)                                                                         \
    "CREATE TABLE IF NOT EXISTS evidence_policy(space" T " PRIMARY KEY, half_life_days" I          \
    " NOT NULL, actor" T " NOT NULL, updated_at" T " NOT NULL);"

/* 22: an entry's time (service/timing.c): when it expires (leaves the
 * searches, the context and the rules, listed as stale), when it is due for
 * review (a review_due proposal), whether it is pinned (exempt from ageing).
 * Times are "YYYY-MM-DDTHH:MM:SSZ" (NULL: none), compared as text. */
#define TIME_SQL(T, I)                                                                             \
    "CREATE TABLE IF NOT EXISTS knowledge_time(space" T " NOT NULL, knowledge_id" T " NOT NULL,"  \
    " expires_at" T ", review_after" T ", pinned" I " NOT NULL DEFAULT 0,"                         \
    " PRIMARY KEY(space, knowledge_id));"                                                          \
    "CREATE INDEX IF NOT EXISTS knowledge_time_expires ON knowledge_time(space, expires_at,"      \
    " knowledge_id);"                                                                              \
    "CREATE INDEX IF NOT EXISTS knowledge_time_next ON knowledge_time(expires_at);"               \
    "CREATE INDEX IF NOT EXISTS knowledge_time_review ON knowledge_time(space, review_after);"    \
    "CREATE UNIQUE INDEX IF NOT EXISTS proposals_review_due ON proposals(space, knowledge_id)"    \
    " WHERE kind = 'review_due' AND state IN ('pending', 'quarantined');"

/* 23: the search index's changes, for the processes that hold a space's
 * index in memory (service/lindex.c): each write's flush raises its space's
 * stamp (search_stamps; the row lock hands stamps out in commit order) and
 * logs the entries it changed at that stamp; the rows at or below log_floor
 * are gone (pruned, or a rebuild), so a reader behind it loads anew. W:
 * SQLite's " WITHOUT ROWID". Safe to run again. */
#define SEARCH_LOG_SQL(T, I, W)                                                                    \
    "CREATE TABLE IF NOT EXISTS search_stamps(space" T " PRIMARY KEY, stamp" I " NOT NULL,"        \
    " log_floor" I " NOT NULL DEFAULT 0)" W ";"                                                    \
    "CREATE TABLE IF NOT EXISTS search_log(space" T " NOT NULL, stamp" I " NOT NULL, seq" I        \
    " NOT NULL, PRIMARY KEY(space, stamp, seq))" W ";"
/* A search row as the in-memory index reads it (store_search_docs): the
 * seq, the stamp, then these (NULL when the entry left the index). */
#define LINDEX_COLUMNS MATCH_ROW_COLUMNS ", d.types"

/* A proposal row (struct proposal, store/review.c). */
#define PROPOSAL_COLUMNS                                                                           \
    "id, space, kind, state, write_path, knowledge_id, base_version, category, path, document,"    \
    " base_document, token_id, actor, agent_id, trace_id, source, reasons, created_at,"          \
    " decision, decision_reason, decided_by, decided_at, result_id"

/* What a change of an entry is, from its row before (o) and after (n):
 * created, deleted (or merged away), updated; NULL when nothing a reader
 * of the knowledge sees moved (a vote, a use count). */
#define CHANGE_WHEN(o, n)                                                                          \
    "(" o ".status = 'active' OR " n ".status = 'active') AND (" o ".status <> " n ".status"    \
    " OR " o ".version <> " n ".version OR " o ".path <> " n ".path"                              \
    " OR " o ".category <> " n ".category OR " o ".always_apply <> " n ".always_apply)"
#define CHANGE_ACTION(o, n)                                                                        \
    "CASE WHEN " n ".status <> 'active' THEN 'deleted' WHEN " o ".status <> 'active'"             \
    " THEN 'created' ELSE 'updated' END"
// clang-format on

/* An entry with its last helpful and harmful cases, its last log rows and
 * its time, read by ONE statement (one round trip, one snapshot on
 * PostgreSQL): a row per part, the parts side by side in their own columns
 * (the others NULL), so each part is read by its own row decoder from its
 * first column (struct cursor col_base, KNOWLEDGE_PART_*
 * in store_int.h). Columns: 0 the part (1 entry, 2 helpful, 3 harmful,
 * 4 log, 5 time), 1 the order within it, 2.. the entry (KNOWLEDGE_COLUMNS),
 * 31.. a case, 39.. a log row (LOG_COLUMNS), 51.. the time. The numbers of
 * the later parts are text, so the dialects agree on each column's type.
 * Its parameters: the entry's id, its space, any status, cases, log rows. */
#define SQL_NULLS3 "NULL, NULL, NULL"
#define SQL_NULLS8 SQL_NULLS3 ", " SQL_NULLS3 ", NULL, NULL"
#define SQL_NULLS15 SQL_NULLS8 ", " SQL_NULLS3 ", " SQL_NULLS3 ", NULL"
#define SQL_NULLS23 SQL_NULLS15 ", " SQL_NULLS8
#define SQL_NULLS29 SQL_NULLS23 ", " SQL_NULLS3 ", " SQL_NULLS3
#define KNOWLEDGE_WHOLE_SQL(ID, SPACE, ANY, CASES, LOGS)                                           \
    "SELECT * FROM (SELECT 1 AS part, 0 AS ord, " KNOWLEDGE_COLUMNS ", " SQL_NULLS23               \
    " FROM knowledge WHERE id = " ID " AND space = " SPACE " AND (" ANY " <> 0"                    \
    " OR status = 'active')" KNOWLEDGE_WHOLE_CASES(2, "helpful", ID, CASES) KNOWLEDGE_WHOLE_CASES( \
        3, "harmful", ID,                                                                          \
        CASES) " UNION ALL SELECT 4, -id, " SQL_NULLS29 ", " SQL_NULLS8                            \
               ", CAST(id AS TEXT), trace_id,"                                                     \
               " knowledge_id, goal_id, CAST(injected_at_sequence AS TEXT), injected_at, task, "   \
               "content,"                                                                          \
               " eval_status, eval_reason, evaluated_at, evaluated_at_trigger, " SQL_NULLS3        \
               " FROM (SELECT * FROM knowledge_log WHERE knowledge_id = " ID                       \
               " ORDER BY id DESC LIMIT " LOGS ") AS l UNION ALL SELECT 5, 0, " SQL_NULLS29        \
               ", " SQL_NULLS8 ", " SQL_NULLS8 ", NULL, NULL,"                                     \
               " NULL, NULL, expires_at, review_after, CAST(pinned AS TEXT) FROM knowledge_time"   \
               " WHERE space = " SPACE " AND knowledge_id = " ID ") AS parts ORDER BY part, ord"
#define KNOWLEDGE_WHOLE_CASES(PART, KIND, ID, CASES)                                               \
    " UNION ALL SELECT " #PART ", seq, " SQL_NULLS29                                               \
    ", kind, case_id, scenario, result, agent_id,"                                                 \
    " trace_id, goal_id, created_at, " SQL_NULLS15 " FROM (SELECT * FROM knowledge_cases"          \
    " WHERE knowledge_id = " ID " AND kind = '" KIND "' ORDER BY seq DESC LIMIT " CASES            \
    ") AS c" #PART

#endif
