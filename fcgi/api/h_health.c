/* h_health: GET /api/health, the one public endpoint. */
#include "api/handlers.h"
#include "base/config.h"
#include "base/metrics.h"
#include "service/auth.h"
#include "service/review.h"
#include "store/store.h"

#define KNOWHUB_VERSION "0.1.0"

/* The caller's space, when it came with a valid token: its name and role,
 * and for editors and admins the review queue's counts (docs/review.md).
 * NULL without a token or with a bad one: the endpoint stays public and
 * says nothing of any space then. */
static struct json_object *space_summary(struct request *req)
{
    struct json_object *o, *counts = NULL;
    struct svc_ctx c;
    struct error err;
    if (!req->authorization || auth_check(req->store, req->authorization, &req->who) != AUTH_OK)
        return NULL;
    o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string(req->who.space));
    json_object_object_add(o, "role", json_object_new_string(role_name(req->who.role)));
    http_svc_ctx(req, &c);
    error_init(&err);
    if (c.role >= ROLE_EDITOR && svc_review_counts(&c, &counts, &err) == 0)
        json_object_object_add(o, "review", counts);
    error_release(&err);
    return o;
}

void h_health(struct request *req, struct response *res)
{
    struct json_object *data = json_object_new_object(), *space;
    /* the database answered within the token bound (no round trip per call) */
    int schema = store_schema_version_recent(req->store, auth_cache_bound_ms());
    if (schema < 0) {
        json_object_put(data);
        reply_error_key(res, 503, E_SERVICE_UNAVAILABLE, "db_unavailable",
                        "The database is not available");
        return;
    }
    json_object_object_add(data, "ok", json_object_new_boolean(1));
    json_object_object_add(data, "version", json_object_new_string(KNOWHUB_VERSION));
    json_object_object_add(data, "schema", json_object_new_int(schema));
    /* the backend's name only: never a path or a connection string */
    json_object_object_add(data, "store", json_object_new_string(store_backend(req->store)));
    if ((space = space_summary(req)))
        json_object_object_add(data, "space", space);
    /* The node's name, as X-KnowHub-Node: to an authenticated caller, or to
     * loopback through this node's nginx (/metrics' rule); never to anyone
     * else, since by default it is the host's name. */
    if (space || (req->proxy_key_ok &&
                  metrics_loopback_request(req->remote_addr, req->forwarded_for, req->forwarded)))
        json_object_object_add(data, "node", json_object_new_string(req->cfg->node));
    reply_data(res, data);
}
