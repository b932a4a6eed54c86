/* fuzz_api: JSON bodies and query strings through the router and every
 * handler, against an in-memory store with an admin token. The first byte
 * picks the endpoint; the rest is the body (POST/PUT) or the query (GET). */
#include "service/auth.h"
#include "base/config.h"
#include "http/http.h"
#include "app/routes.h"
#include "http/router.h"
#include "store/store.h"
#include "base/util.h"

#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct store *st;
static struct buf auth_header;
static struct config cfg;
static char entry_path[64];

static const struct {
    const char *method, *path;
} endpoints[] = {
    {"POST", "/api/knowledge"},
    {"GET", "/api/knowledge"},
    {"PUT", NULL}, /* the seeded entry */
    {"POST", "/api/knowledge/batch_update"},
    {"POST", "/api/knowledge/write"},
    {"POST", "/api/knowledge/read"},
    {"POST", "/api/knowledge/list"},
    {"POST", "/api/knowledge/rename"},
    {"POST", "/api/knowledge/delete"},
    {"POST", "/api/knowledge/search"},
    {"GET", "/api/knowledge/search"},
    {"POST", "/api/knowledge/context"},
    {"POST", "/api/traces"},
    {"POST", "/api/traces/fuzz/knowledge_log"},
    {"POST", "/api/traces/fuzz/evaluations"},
    {"GET", "/api/traces"},
    {"POST", "/api/knowledge/trash"},
    {"GET", "/api/traces/fuzz/eval_prompt"},
};

static void setup(void)
{
    routes_install();
    struct buf t;
    struct request req;
    struct response res;
    struct json_object *reply, *data, *id;
    if (sodium_init() < 0)
        abort();
    store_global_init();
    if (store_open(":memory:", &st))
        abort();
    buf_init(&t, 256);
    if (auth_token_create(st, "fuzz", ROLE_ADMIN, "fuzz", &t))
        abort();
    buf_init(&auth_header, 256);
    buf_addf(&auth_header, "Bearer %s", t.data);
    buf_release(&t);
    /* One entry and one trace to act on. */
    request_init(&req);
    response_init(&res, "seed");
    req.method = "POST";
    req.path = "/api/knowledge";
    req.body = "{\"scenario\":\"fuzz seed\",\"content\":\"seed body\"}";
    req.body_len = strlen(req.body);
    req.authorization = auth_header.data;
    req.store = st;
    req.cfg = &cfg;
    router_dispatch(&req, &res);
    reply = json_tokener_parse(res.body.data);
    if (!reply || !json_object_object_get_ex(reply, "data", &data) ||
        !json_object_object_get_ex(data, "id", &id))
        abort();
    snprintf(entry_path, sizeof entry_path, "/api/knowledge/%s", json_object_get_string(id));
    json_object_put(reply);
    request_release(&req);
    response_release(&res);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct request req;
    struct response res;
    char *text;
    size_t which;
    if (!st)
        setup();
    if (size == 0)
        return 0;
    which = data[0] % (sizeof endpoints / sizeof endpoints[0]);
    text = xstrndup((const char *)data + 1, size - 1);
    request_init(&req);
    response_init(&res, "fuzz");
    req.method = endpoints[which].method;
    req.path = endpoints[which].path ? endpoints[which].path : entry_path;
    if (strcmp(req.method, "GET") == 0) {
        req.query = text;
    } else {
        req.body = text;
        req.body_len = size - 1;
    }
    req.authorization = auth_header.data;
    req.store = st;
    req.cfg = &cfg;
    router_dispatch(&req, &res);
    /* Every answer is a JSON envelope; a 500 is a bug. */
    if (!res.done || res.status == 500)
        __builtin_trap();
    if (!res.streamed) {
        struct json_object *reply = json_tokener_parse(res.body.data);
        if (!reply)
            __builtin_trap();
        json_object_put(reply);
    }
    request_release(&req);
    response_release(&res);
    free(text);
    return 0;
}
