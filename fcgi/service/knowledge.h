/* knowledge (service): the operations of the entry view (/api/knowledge and
 * the MCP tools knowledge_save, knowledge_update, knowledge_batch_update,
 * knowledge_list): the business rules (rules are for admins, paths, cases
 * counted once, evolve, transactions, audit) for REST and MCP alike. Each
 * operation takes the caller's svc_ctx and gives back the answer's data
 * (caller puts it) and 0, or sets err and returns -1. */
#ifndef KNOWHUB_SVC_KNOWLEDGE_H
#define KNOWHUB_SVC_KNOWLEDGE_H

#include <json-c/json.h>

struct svc_ctx;
struct store;
struct error;
struct knowledge;
struct knowledge_filter;

/* ---- pieces the file view, distill and import share ---- */

/* Insert k (id assigned here, retried on the rare collision), with its first
 * revision and an audit row. Without a document (an entry-view save) one is
 * built from the fields (document.h) and the fields re-read from it; without
 * a path it is "<slug of the title>.md" at the top of the category
 * (path_slug; "-2", "-3" ... when taken; the id when the title has no
 * letter or digit). Returns a store status (store.h). */
int knowledge_create(struct store *st, struct knowledge *k, const char *actor);

/* 0 when a document at (category, path) of the caller's space would clash
 * with no other active one (except_id, may be NULL, not counted); else -1
 * with err a CONFLICT naming the file (key path_is_document) or folder
 * (path_is_folder) it would clash with, or the store's error. */
int knowledge_path_free(const struct svc_ctx *c, const char *category, const char *path,
                        const char *except_id, struct error *err);

/* 0 when the caller may change a document of category; else -1 with err
 * FORBIDDEN (key rules_admin_only): rules are for admins only. */
int knowledge_may_change(const struct svc_ctx *c, const char *category, struct error *err);

/* The JSON of k with its latest cases (eval.*_history) and where it was
 * injected, read from st (the caller holds a snapshot), into *out (the
 * caller puts it). A store status: when a history cannot be read, *out is
 * NULL, never an entry that looks as if it had none. */
int knowledge_entry_json(struct store *st, const struct knowledge *k, struct json_object **out);

/* The entry id of the caller's space, histories included (one snapshot),
 * with the pairs of extra (taken over; may be NULL) added: 0 with *data,
 * or -1 with err. */
int knowledge_entry_data(const struct svc_ctx *c, const char *id, struct json_object *extra,
                         struct json_object **data, struct error *err);

/* A random case id "case-<16 hex>" for a case that names none: every such
 * call counts. */
void knowledge_new_case_id(char out[static 24]);

/* ---- the entry view's operations ---- */

/* One page of entries of f (types, category, limit, offset): {items,
 * total, limit, offset}, items without histories. */
int svc_knowledge_list(const struct svc_ctx *c, const struct knowledge_filter *f,
                       struct json_object **data, struct error *err);

/* Save an entry from a body of the entry view (scenario, content,
 * tags_type, urls, agent_id, score, message_id, title, tags, category,
 * path, description, always_apply): the new entry. */
int svc_knowledge_create(const struct svc_ctx *c, struct json_object *body,
                         struct json_object **data, struct error *err);

/* The entry id, histories included. */
int svc_knowledge_get(const struct svc_ctx *c, const char *id, struct json_object **data,
                      struct error *err);

/* Apply add_helpful_case, add_harmful_case, update_score and
 * evolve_feedback of body to the entry id, atomically (the LLM is asked
 * first, outside the transaction): the entry with "applied". */
int svc_knowledge_update(const struct svc_ctx *c, const char *id, struct json_object *body,
                         struct json_object **data, struct error *err);

/* Delete the entry id: {id, status, version}. */
int svc_knowledge_delete(const struct svc_ctx *c, const char *id, struct json_object **data,
                         struct error *err);

/* One page of the entry's cases of kind (helpful or harmful): the items in
 * *items (caller puts them), their total in *total. */
int svc_knowledge_cases(const struct svc_ctx *c, const char *id, const char *kind, long limit,
                        long offset, struct json_object **items, long *total, struct error *err);

/* Call each with the JSON of every active entry (histories included) plus
 * its full "document", by category then path; each's object is borrowed.
 * A store status (store.h): not STORE_OK when the scan or an entry's
 * histories could not be read (the export stopped short); STORE_OK when it
 * ran to the end or each stopped it (non-zero). */
int svc_knowledge_export(const struct svc_ctx *c, int (*each)(struct json_object *line, void *ctx),
                         void *ctx);

#endif
