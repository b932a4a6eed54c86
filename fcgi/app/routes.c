/* routes: KnowHub's route table, every REST handler (api/) and the MCP
 * endpoint (mcp/) with its method, pattern, least role and whether its
 * answers may be cached; http/router.c dispatches over it. */
#include "app/routes.h"
#include "api/handlers.h"
#include "mcp/mcp.h"

static const struct route table[] = {
    {"GET", "/api/health", ROLE_NONE, h_health, 0},
    {"GET", "/api/auth/me", ROLE_READER, h_auth_me, 0},
    {"POST", "/api/auth/login", ROLE_NONE, h_auth_login, 0},
    {"POST", "/api/auth/logout", ROLE_READER, h_auth_logout, 0},
    {"GET", "/api/knowledge", ROLE_READER, h_knowledge_list, 1},
    {"POST", "/api/knowledge", ROLE_AGENT, h_knowledge_create, 0},
    {"POST", "/api/knowledge/batch_update", ROLE_AGENT, h_knowledge_batch_update, 0},
    {"POST", "/api/knowledge/limits", ROLE_READER, h_files_limits, 0},
    {"POST", "/api/knowledge/list", ROLE_READER, h_files_list, 0},
    {"POST", "/api/knowledge/read", ROLE_READER, h_files_read, 0},
    {"POST", "/api/knowledge/write", ROLE_AGENT, h_files_write, 0},
    {"POST", "/api/knowledge/rename", ROLE_AGENT, h_files_rename, 0},
    {"POST", "/api/knowledge/delete", ROLE_AGENT, h_files_delete, 0},
    {"POST", "/api/knowledge/trash", ROLE_READER, h_files_trash, 0},
    {"POST", "/api/knowledge/preview", ROLE_READER, h_files_preview, 0},
    {"GET", "/api/knowledge/rules", ROLE_READER, h_context_rules, 1},
    {"GET", "/api/knowledge/export", ROLE_READER, h_knowledge_export, 0},
    {"POST", "/api/knowledge/context", ROLE_READER, h_context_question, 1},
    {"POST", "/api/knowledge/search", ROLE_READER, h_search_files, 1},
    {"POST", "/api/knowledge/distill-experience", ROLE_AGENT, h_distill_experience, 0},
    {"POST", "/api/knowledge/slim", ROLE_AGENT, h_knowledge_slim, 0},
    {"GET", "/api/knowledge/search", ROLE_READER, h_search_entries, 1},
    {"GET", "/api/knowledge/{id}", ROLE_READER, h_knowledge_get, 1},
    {"PUT", "/api/knowledge/{id}", ROLE_AGENT, h_knowledge_update, 0},
    {"DELETE", "/api/knowledge/{id}", ROLE_AGENT, h_knowledge_delete, 0},
    {"GET", "/api/knowledge/{id}/revisions", ROLE_READER, h_knowledge_revisions, 0},
    {"GET", "/api/knowledge/{id}/cases", ROLE_READER, h_knowledge_cases, 0},
    {"POST", "/api/knowledge/{id}/revert", ROLE_AGENT, h_knowledge_revert, 0},
    {"POST", "/api/traces", ROLE_AGENT, h_traces_create, 0},
    {"GET", "/api/traces", ROLE_READER, h_traces_list, 0},
    {"GET", "/api/traces/{trace_id}", ROLE_READER, h_traces_get, 0},
    {"GET", "/api/traces/{trace_id}/knowledge_log", ROLE_READER, h_traces_log, 0},
    {"POST", "/api/traces/{trace_id}/knowledge_log", ROLE_AGENT, h_traces_inject, 0},
    {"GET", "/api/traces/{trace_id}/knowledge_log/pending", ROLE_READER, h_traces_pending, 0},
    {"GET", "/api/traces/{trace_id}/eval_prompt", ROLE_READER, h_traces_eval_prompt, 0},
    {"POST", "/api/traces/{trace_id}/evaluations", ROLE_AGENT, h_traces_evaluate, 0},
    {"GET", "/api/sessions", ROLE_READER, h_sessions_list, 0},
    {"POST", "/api/sessions", ROLE_AGENT, h_sessions_put, 0},
    {"GET", "/api/sessions/{id}", ROLE_READER, h_sessions_get, 0},
    {"DELETE", "/api/sessions/{id}", ROLE_AGENT, h_sessions_delete, 0},
    {"DELETE", "/api/sessions/{id}/tables/{table_id}", ROLE_AGENT, h_sessions_delete_table, 0},
    {"GET", "/api/jobs", ROLE_READER, h_jobs_list, 0},
    {"GET", "/api/jobs/{id}", ROLE_READER, h_jobs_get, 0},
    {"GET", "/api/llm/usage", ROLE_READER, h_llm_usage, 0},
    {"GET", "/api/embeddings", ROLE_READER, h_embeddings_status, 0},
    {"POST", "/api/embeddings/backfill", ROLE_EDITOR, h_embeddings_backfill, 0},
    {"GET", "/api/tools", ROLE_READER, h_tools, 0},
    {"POST", "/mcp", ROLE_READER, h_mcp, 0},
    /* Loopback, or KNOWHUB_METRICS_TOKEN: the handler decides (docs/operations.md). */
    {"GET", "/metrics", ROLE_NONE, h_metrics, 0},
    /* Appended, not sorted in: a fuzz seed's first byte is its route's index. */
    {"GET", "/api/spaces", ROLE_READER, h_spaces_list, 0},
    {"GET", "/api/tokens", ROLE_ADMIN, h_tokens_list, 0},
    {"POST", "/api/tokens", ROLE_ADMIN, h_tokens_create, 0},
    {"DELETE", "/api/tokens/{id}", ROLE_ADMIN, h_tokens_revoke, 0},
    {"GET", "/api/overview", ROLE_READER, h_overview, 1},
    {"GET", "/mcp", ROLE_READER, h_mcp_stream, 0},
    {"DELETE", "/mcp", ROLE_READER, h_mcp_end, 0},
    {"GET", "/api/events", ROLE_READER, h_events, 0},
    /* Interop formats in (docs/agents.md); rules in it need an admin. */
    {"POST", "/api/knowledge/import", ROLE_EDITOR, h_knowledge_import, 0},
    /* The review queue (docs/review.md): the policy before {id}. */
    {"GET", "/api/review/policy", ROLE_EDITOR, h_review_policy_get, 0},
    {"PUT", "/api/review/policy", ROLE_ADMIN, h_review_policy_set, 0},
    {"GET", "/api/review", ROLE_EDITOR, h_review_list, 0},
    {"GET", "/api/review/{id}", ROLE_EDITOR, h_review_get, 0},
    {"POST", "/api/review/{id}/decide", ROLE_EDITOR, h_review_decide, 0},
    /* Typed links (docs/conflicts.md); supersedes needs an editor: the service decides. */
    {"GET", "/api/knowledge/{id}/links", ROLE_READER, h_links_list, 1},
    {"POST", "/api/knowledge/{id}/links", ROLE_AGENT, h_links_add, 0},
    {"DELETE", "/api/knowledge/{id}/links/{to}/{type}", ROLE_AGENT, h_links_remove, 0},
    /* Evidence ageing (docs/conflicts.md#evidence-that-ages). */
    {"GET", "/api/evidence/policy", ROLE_READER, h_evidence_policy_get, 0},
    {"PUT", "/api/evidence/policy", ROLE_ADMIN, h_evidence_policy_set, 0},
    /* Expired and review-due entries (docs/conflicts.md "Time"). */
    {"GET", "/api/knowledge/stale", ROLE_READER, h_knowledge_stale, 0},
};

void routes_install(void)
{
    router_use(table, sizeof table / sizeof table[0]);
}
