/* store/sql_parts.h: the pieces of SQL both dialects share word for word
 * (no parameters in them), for statements.c (SQLite) and pg_sql.c
 * (PostgreSQL) only. */
#ifndef KNOWHUB_SQL_PARTS_H
#define KNOWHUB_SQL_PARTS_H

/* The columns of an entry row (knowledge_from_row). */
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

/* A job row (struct job_info). */
#define JOB_COLUMNS                                                                                \
    "id, space, kind, status, progress, total, params, result, error, actor, created_at,"          \
    " updated_at"

/* The columns of a search candidate (S_MATCH*, struct match_row), from its
 * search row d: only what scoring and ordering need. */
#define MATCH_COLUMNS                                                                              \
    "d.seq, d.id, d.category, d.path, d.title, d.tags, d.body_head, d.source, d.updated_at,"       \
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
#define SEARCH_DIRTY_SQL "SELECT seq FROM search_dirty ORDER BY seq LIMIT 256"
#define SEARCH_DIRTY_COUNT_SQL "SELECT count(*) FROM search_dirty"
#define SEARCH_META_GET_SQL "SELECT value FROM search_meta WHERE key = 'tokenizer'"

#endif
