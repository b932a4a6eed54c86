/* h_auth: who the caller is, and the browser's login: a token exchanged for
 * an HttpOnly, SameSite=Strict cookie plus a CSRF token that every
 * state-changing request made with the cookie must echo (X-CSRF-Token). */
#include "service/auth.h"
#include "api/handlers.h"
#include "base/config.h"
#include "base/jfield.h"
#include "store/store.h"

#include <stdlib.h>

static struct json_object *identity_json(const struct identity *who, const char *csrf)
{
    struct json_object *data = json_object_new_object();
    json_object_object_add(data, "space", json_object_new_string(who->space));
    json_object_object_add(data, "role", json_object_new_string(role_name(who->role)));
    json_object_object_add(data, "token_id", json_object_new_string(who->token_id));
    if (csrf)
        json_object_object_add(data, "csrf_token", json_object_new_string(csrf));
    return data;
}

void h_auth_me(struct request *req, struct response *res)
{
    reply_data(res, identity_json(&req->who, req->who.csrf));
}

void h_auth_login(struct request *req, struct response *res)
{
    struct json_object *body;
    struct identity who = {0};
    struct buf header, cookie, csrf;
    const char *token;
    int rc;
    if (http_browser_request_or_error(req, res, 1))
        return;
    if (!(body = http_body_json_or_400(req, res)))
        return;
    buf_init(&header, 512);
    buf_init(&cookie, 256);
    buf_init(&csrf, 256);
    if (jf_string_or_400(res, body, "token", 1, 256, &token))
        goto out;
    buf_addf(&header, "Bearer %s", token);
    rc = auth_check(req->store, header.data, &who);
    if (rc == AUTH_UNAVAILABLE) {
        reply_error_key(res, 503, E_SERVICE_UNAVAILABLE, "db_busy",
                        "The database is busy; try again");
        goto out;
    }
    if (rc != AUTH_OK) {
        reply_error_key(res, 401, E_UNAUTHORIZED, "token_invalid", "That token is not valid");
        goto out;
    }
    res->node = req->cfg->node; /* the token checked: an authenticated answer */
    if ((rc = auth_login_start(req->store, &who, &cookie, &csrf))) {
        reply_store_error(res, rc, "Login");
        goto out;
    }
    buf_addf(&res->headers,
             "Set-Cookie: %s=%s; Path=/; HttpOnly; SameSite=Strict; Max-Age=%ld%s\r\n",
             auth_cookie_name(req->https), cookie.data, LOGIN_LIFETIME_SECONDS,
             req->https ? "; Secure" : "");
    reply_data(res, identity_json(&who, csrf.data));
out:
    free(who.space);
    free(who.token_id);
    free(who.actor);
    free(who.csrf);
    buf_release(&header);
    buf_release(&cookie);
    buf_release(&csrf);
    json_object_put(body);
}

void h_auth_logout(struct request *req, struct response *res)
{
    if (req->cookie)
        auth_login_end(req->store, req->cookie, auth_cookie_name(req->https));
    buf_addf(&res->headers, "Set-Cookie: %s=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0%s\r\n",
             auth_cookie_name(req->https), req->https ? "; Secure" : "");
    reply_data(res, NULL);
}
