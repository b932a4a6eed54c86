/* handlers: every endpoint's handler, one file per resource (h_<resource>.c).
 * Each sees only struct request / struct response (http.h). */
#ifndef KNOWHUB_HANDLERS_H
#define KNOWHUB_HANDLERS_H

#include "http/http.h"

/* h_health.c */
void h_health(struct request *req, struct response *res);
/* h_metrics.c */
void h_metrics(struct request *req, struct response *res);

/* h_auth.c */
void h_auth_me(struct request *req, struct response *res);
void h_auth_login(struct request *req, struct response *res);
void h_auth_logout(struct request *req, struct response *res);

/* h_knowledge.c: the entry view (/api/knowledge, docs/api.md) */
void h_knowledge_list(struct request *req, struct response *res);
void h_knowledge_create(struct request *req, struct response *res);
void h_knowledge_get(struct request *req, struct response *res);
void h_knowledge_update(struct request *req, struct response *res);
void h_knowledge_delete(struct request *req, struct response *res);
void h_knowledge_batch_update(struct request *req, struct response *res);
void h_knowledge_revisions(struct request *req, struct response *res);
void h_knowledge_cases(struct request *req, struct response *res);
void h_knowledge_revert(struct request *req, struct response *res);

/* h_export.c */
void h_knowledge_export(struct request *req, struct response *res);
void h_knowledge_import(struct request *req, struct response *res);

/* h_files.c: the file view (documents by category and path, docs/knowledge-files.md) */
void h_files_limits(struct request *req, struct response *res);
void h_files_list(struct request *req, struct response *res);
void h_files_read(struct request *req, struct response *res);
void h_files_write(struct request *req, struct response *res);
void h_files_rename(struct request *req, struct response *res);
void h_files_delete(struct request *req, struct response *res);
void h_files_trash(struct request *req, struct response *res);
void h_files_preview(struct request *req, struct response *res);

/* h_search.c: the file view's weighted search and the entry view's two-stage search */
void h_search_files(struct request *req, struct response *res);
void h_search_entries(struct request *req, struct response *res);

/* h_traces.c: the feedback loop (docs/feedback.md) */
void h_traces_create(struct request *req, struct response *res);
void h_traces_list(struct request *req, struct response *res);
void h_traces_get(struct request *req, struct response *res);
void h_traces_log(struct request *req, struct response *res);
void h_traces_inject(struct request *req, struct response *res);
void h_traces_pending(struct request *req, struct response *res);
void h_traces_eval_prompt(struct request *req, struct response *res);
void h_traces_evaluate(struct request *req, struct response *res);

/* h_sessions.c: analysis sessions (the save-experience flow) */
void h_sessions_list(struct request *req, struct response *res);
void h_sessions_get(struct request *req, struct response *res);
void h_sessions_put(struct request *req, struct response *res);
void h_sessions_delete(struct request *req, struct response *res);
void h_sessions_delete_table(struct request *req, struct response *res);

/* h_distill.c: the save-experience flow's end */
void h_distill_experience(struct request *req, struct response *res);

/* h_jobs.c: slim, jobs and the LLM usage ledger */
void h_knowledge_slim(struct request *req, struct response *res);
void h_jobs_get(struct request *req, struct response *res);
void h_embeddings_status(struct request *req, struct response *res);
void h_embeddings_backfill(struct request *req, struct response *res);
void h_jobs_list(struct request *req, struct response *res);
void h_llm_usage(struct request *req, struct response *res);

/* h_tokens.c: the tokens of the caller's space (admins) and the spaces a caller may use */
void h_tokens_list(struct request *req, struct response *res);
void h_tokens_create(struct request *req, struct response *res);
void h_tokens_revoke(struct request *req, struct response *res);
void h_spaces_list(struct request *req, struct response *res);

/* h_overview.c: the home screen's overview of the caller's space */
void h_overview(struct request *req, struct response *res);

/* h_events.c: the panel's live stream of its space's changes */
void h_events(struct request *req, struct response *res);

/* h_context.c: what agents load before they work: the rules, and a question's context */
void h_context_rules(struct request *req, struct response *res);
void h_context_question(struct request *req, struct response *res);

/* h_review.c: the review queue: the space's policy, the proposals, their decisions */
void h_review_policy_get(struct request *req, struct response *res);
void h_review_policy_set(struct request *req, struct response *res);
void h_review_list(struct request *req, struct response *res);
void h_review_get(struct request *req, struct response *res);
void h_review_decide(struct request *req, struct response *res);

/* h_links.c: an entry's typed links (docs/conflicts.md) */
void h_links_list(struct request *req, struct response *res);
void h_links_add(struct request *req, struct response *res);
void h_links_remove(struct request *req, struct response *res);
/* h_evidence.c: a space's evidence ageing (docs/conflicts.md) */
void h_evidence_policy_get(struct request *req, struct response *res);
void h_evidence_policy_set(struct request *req, struct response *res);

/* h_time.c: the stale view: entries expired or due for review (docs/conflicts.md) */
void h_knowledge_stale(struct request *req, struct response *res);

#endif
