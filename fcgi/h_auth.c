/* h_auth: who the caller is (GET /api/auth/me). */
#include "auth.h"
#include "handlers.h"

void h_auth_me(struct request *req, struct response *res)
{
    struct json_object *data = json_object_new_object();
    json_object_object_add(data, "space", json_object_new_string(req->who.space));
    json_object_object_add(data, "role", json_object_new_string(role_name(req->who.role)));
    json_object_object_add(data, "token_id", json_object_new_string(req->who.token_id));
    reply_data(res, data);
}
