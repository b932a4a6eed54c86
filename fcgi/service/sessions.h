/* sessions: analysis sessions for the save-experience flow: a chain of
 * tables where a derived table names its parent in derive.trigger.tableId.
 * Agents or the browser store them; the browser shows them and saves a
 * leaf's chain as an experience. Each operation gives its answer's data (a
 * new JSON value, the caller's) and 0, or -1 with err set. */
#ifndef KNOWHUB_SESSIONS_H
#define KNOWHUB_SESSIONS_H

#include <json-c/json.h>

#include "base/error.h"
#include "service/ctx.h"

/* {items: [{id, title, created_at, updated_at}]}. */
int svc_session_list(const struct svc_ctx *c, struct json_object **data, struct error *err);
/* One session: {id, title, tables, created_at, updated_at}. */
int svc_session_get(const struct svc_ctx *c, const char *id, struct json_object **data,
                    struct error *err);
/* Store a session, body {id?, title?, tables, expected_updated_at?}: a
 * missing id gets a random one; with expected_updated_at a save in between
 * is never overwritten (CONFLICT). Data: the session as stored. */
int svc_session_put(const struct svc_ctx *c, struct json_object *body, struct json_object **data,
                    struct error *err);
/* Delete a session (data NULL). */
int svc_session_delete(const struct svc_ctx *c, const char *id, struct error *err);
/* Drop one table of a session; the tables that derived from it now derive
 * from its parent (or start the chain). The session is replaced only if it
 * is still as read, so a save in between is never undone (the drop is made
 * again on what is there, up to three times). Data: the session. */
int svc_session_delete_table(const struct svc_ctx *c, const char *id, const char *table_id,
                             struct json_object **data, struct error *err);

#endif
