/* h_health: GET /api/health, the one public endpoint. */
#include "api/handlers.h"
#include "store/store.h"

#define KNOWHUB_VERSION "0.1.0"

void h_health(struct request *req, struct response *res)
{
    struct json_object *data = json_object_new_object();
    int schema = store_schema_version(req->store);
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
    reply_data(res, data);
}
