/* handlers: every endpoint's handler, one file per resource (h_<resource>.c).
 * Each sees only struct request / struct response (http.h). */
#ifndef KNOWHUB_HANDLERS_H
#define KNOWHUB_HANDLERS_H

#include "http.h"

/* h_health.c */
void h_health(struct request *req, struct response *res);

/* h_auth.c */
void h_auth_me(struct request *req, struct response *res);

/* h_knowledge.c: the entry view (seed 003) */
void h_knowledge_list(struct request *req, struct response *res);
void h_knowledge_create(struct request *req, struct response *res);
void h_knowledge_get(struct request *req, struct response *res);
void h_knowledge_update(struct request *req, struct response *res);
void h_knowledge_delete(struct request *req, struct response *res);
void h_knowledge_batch_update(struct request *req, struct response *res);
void h_knowledge_revisions(struct request *req, struct response *res);
void h_knowledge_revert(struct request *req, struct response *res);

#endif
