/* revisions (service): an entry's history of revisions, a page of it, and
 * the revert to one of them (or the restore of a deleted entry). */
#ifndef KNOWHUB_SVC_REVISIONS_H
#define KNOWHUB_SVC_REVISIONS_H

#include <json-c/json.h>

struct svc_ctx;
struct error;

/* One page of the entry's revisions, newest first: {id, items, total,
 * limit, offset} in *data (caller puts it) and 0, or -1 with err. */
int svc_knowledge_revisions(const struct svc_ctx *c, const char *id, long limit, long offset,
                            struct json_object **data, struct error *err);

/* Revert the entry id to body's version (or restore a deleted entry to its
 * last active revision), in one write transaction; reverting to a rule, or
 * a rule, is for admins only. The entry in *data and 0, or -1 with err. */
int svc_knowledge_revert(const struct svc_ctx *c, const char *id, struct json_object *body,
                         struct json_object **data, struct error *err);

#endif
