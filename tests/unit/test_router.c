/* test_router: router_dispatch with hand-filled requests against a
 * ":memory:" store: 404, 405 + Allow, 401, 403, a malformed query, and the
 * entry view round trip (create, get, PUT helpful and score, list, delete,
 * revisions, revert) through the real handlers. */
#include "service/auth.h"
#include "base/config.h"
#include "harness.h"
#include "app/routes.h"
#include "http/router.h"
#include "store/store.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

static struct store *st;
static struct config cfg;

/* Tokens ("Bearer kh_...") of space "main" per role, and one of space "other". */
static struct buf reader, agent, editor, admin, stranger;

/* Dispatch one request; the response is left in res (caller releases) and
 * its body returned parsed (caller puts; NULL when not JSON). */
static struct json_object *call(struct response *res, const char *method, const char *path,
                                const char *query, const char *auth, const char *body)
{
    struct request req;
    request_init(&req);
    req.method = method;
    req.path = path;
    req.query = query ? query : "";
    req.body = body ? body : "";
    req.body_len = body ? strlen(body) : 0;
    req.authorization = auth;
    req.request_id = "rid-1";
    req.store = st;
    req.cfg = &cfg;
    response_init(res, "rid-1");
    router_dispatch(&req, res);
    request_release(&req);
    return json_tokener_parse(res->body.data);
}

/* The value at a dotted path ("data.eval.helpful"); NULL when absent. */
static struct json_object *jget(struct json_object *o, const char *path)
{
    char key[64];
    while (o && *path) {
        size_t n = strcspn(path, ".");
        if (n >= sizeof key)
            return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &o))
            return NULL;
        path += n + (path[n] == '.');
    }
    return o;
}

static const char *jstr(struct json_object *o, const char *path)
{
    struct json_object *v = jget(o, path);
    return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static long jint(struct json_object *o, const char *path)
{
    struct json_object *v = jget(o, path);
    return v && json_object_is_type(v, json_type_int) ? (long)json_object_get_int64(v) : -999;
}

static long jlen(struct json_object *o, const char *path)
{
    struct json_object *v = jget(o, path);
    return v && json_object_is_type(v, json_type_array) ? (long)json_object_array_length(v) : -1;
}

/* An error reply: HTTP status and code. */
static void expect_error(struct json_object *o, const struct response *res, int http_status,
                         const char *code, int line)
{
    harness_check(o != NULL, "body is JSON", __FILE__, line);
    harness_check_int(res->status, http_status, "res.status", "http_status", __FILE__, line);
    harness_check_str(jstr(o, "status"), "error", "status", "\"error\"", __FILE__, line);
    harness_check_str(jstr(o, "error.code"), code, "error.code", "code", __FILE__, line);
    harness_check_str(jstr(o, "error.request_id"), "rid-1", "error.request_id", "\"rid-1\"",
                      __FILE__, line);
}
#define EXPECT_ERROR(o, res, st_, code) expect_error((o), (res), (st_), (code), __LINE__)

/* A success reply. */
static void expect_success(struct json_object *o, const struct response *res, int line)
{
    harness_check_int(res->status, 200, "res.status", "200", __FILE__, line);
    if (!harness_check_str(jstr(o, "status"), "success", "status", "\"success\"", __FILE__, line))
        fprintf(stderr, "    body: %s\n", res->body.data);
    harness_check(jget(o, "data") != NULL, "data present", __FILE__, line);
}
#define EXPECT_SUCCESS(o, res) expect_success((o), (res), __LINE__)

static void make_token(struct buf *out, const char *space, enum role role, const char *label)
{
    struct buf tok;
    buf_init(&tok, 512);
    CHECK_INT(auth_token_create(st, space, role, label, "operator", &tok), STORE_OK);
    buf_init(out, 600);
    buf_addf(out, "Bearer %s", tok.data);
    buf_release(&tok);
}

/* ---- routing ---- */

static void test_not_found(void)
{
    struct response res;
    struct json_object *o;
    static const char *const paths[] = {"/",
                                        "",
                                        "/api",
                                        "/api/",
                                        "/api/nope",
                                        "/api/healthz",
                                        "/api/health/",
                                        "/api/knowledge/",
                                        "/API/health",
                                        "/api/knowledge/a/b",
                                        "/api/knowledge//revisions",
                                        "/api/knowledge/x/revisions/y",
                                        "api/health"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        o = call(&res, "GET", paths[i], NULL, NULL, NULL);
        if (!CHECK_INT(res.status, 404))
            fprintf(stderr, "    path: \"%s\"\n", paths[i]);
        EXPECT_ERROR(o, &res, 404, E_NOT_FOUND);
        CHECK_INT(res.done, 1);
        json_object_put(o);
        response_release(&res);
    }
}

static void test_method_not_allowed(void)
{
    struct response res;
    struct json_object *o;

    o = call(&res, "DELETE", "/api/health", NULL, NULL, NULL);
    EXPECT_ERROR(o, &res, 405, E_METHOD_NOT_ALLOWED);
    CHECK(strstr(res.headers.data, "Allow: GET, HEAD\r\n") != NULL);
    json_object_put(o);
    response_release(&res);

    o = call(&res, "PATCH", "/api/knowledge", NULL, reader.data, NULL);
    EXPECT_ERROR(o, &res, 405, E_METHOD_NOT_ALLOWED);
    CHECK(strstr(res.headers.data, "Allow: GET, HEAD, POST\r\n") != NULL);
    json_object_put(o);
    response_release(&res);

    o = call(&res, "POST", "/api/knowledge/some-id", NULL, admin.data, NULL);
    EXPECT_ERROR(o, &res, 405, E_METHOD_NOT_ALLOWED);
    CHECK(strstr(res.headers.data, "Allow: GET, HEAD, PUT, DELETE\r\n") != NULL);
    json_object_put(o);
    response_release(&res);

    /* 405 comes before authentication: no token needed to learn Allow */
    o = call(&res, "PUT", "/api/knowledge/x/revisions", NULL, NULL, NULL);
    EXPECT_ERROR(o, &res, 405, E_METHOD_NOT_ALLOWED);
    CHECK(strstr(res.headers.data, "Allow: GET, HEAD\r\n") != NULL);
    CHECK(strstr(res.headers.data, "WWW-Authenticate") == NULL);
    json_object_put(o);
    response_release(&res);

    /* HEAD is GET without the body; where there is no GET it is 405 */
    o = call(&res, "HEAD", "/api/health", NULL, NULL, NULL);
    CHECK_INT(res.status, 200);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "HEAD", "/api/auth/login", NULL, NULL, NULL);
    EXPECT_ERROR(o, &res, 405, E_METHOD_NOT_ALLOWED);
    CHECK(strstr(res.headers.data, "Allow: POST\r\n") != NULL);
    json_object_put(o);
    response_release(&res);

    /* methods are case-sensitive */
    o = call(&res, "get", "/api/health", NULL, NULL, NULL);
    CHECK_INT(res.status, 405);
    json_object_put(o);
    response_release(&res);
}

static void test_public_and_auth(void)
{
    struct response res;
    struct json_object *o;

    /* /api/health is public */
    o = call(&res, "GET", "/api/health", NULL, NULL, NULL);
    EXPECT_SUCCESS(o, &res);
    CHECK(jget(o, "data.ok") && json_object_get_boolean(jget(o, "data.ok")));
    CHECK(jint(o, "data.schema") >= 1);
    json_object_put(o);
    response_release(&res);

    /* 401 without or with a bad token, with WWW-Authenticate */
    o = call(&res, "GET", "/api/knowledge", NULL, NULL, NULL);
    EXPECT_ERROR(o, &res, 401, E_UNAUTHORIZED);
    CHECK(strstr(res.headers.data, "WWW-Authenticate: Bearer") != NULL);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "GET", "/api/auth/me", NULL, "Bearer kh_0000000000000000_nope", NULL);
    EXPECT_ERROR(o, &res, 401, E_UNAUTHORIZED);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "POST", "/api/knowledge", NULL, "Basic dXNlcjpwYXNz", "{}");
    EXPECT_ERROR(o, &res, 401, E_UNAUTHORIZED);
    json_object_put(o);
    response_release(&res);

    /* who am I */
    o = call(&res, "GET", "/api/auth/me", NULL, editor.data, NULL);
    EXPECT_SUCCESS(o, &res);
    CHECK_STR(jstr(o, "data.space"), "main");
    CHECK_STR(jstr(o, "data.role"), "editor");
    CHECK(jstr(o, "data.token_id") && strlen(jstr(o, "data.token_id")) == 16);
    json_object_put(o);
    response_release(&res);

    /* 403: a reader may not create, delete or revert */
    o = call(&res, "POST", "/api/knowledge", NULL, reader.data,
             "{\"scenario\":\"s\",\"content\":\"c\"}");
    EXPECT_ERROR(o, &res, 403, E_FORBIDDEN);
    CHECK(strstr(res.headers.data, "WWW-Authenticate") == NULL);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "DELETE", "/api/knowledge/whatever", NULL, reader.data, NULL);
    EXPECT_ERROR(o, &res, 403, E_FORBIDDEN);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "POST", "/api/knowledge/whatever/revert", NULL, reader.data, "{\"version\":1}");
    EXPECT_ERROR(o, &res, 403, E_FORBIDDEN);
    json_object_put(o);
    response_release(&res);
    /* ... nothing was created by the refused request */
    o = call(&res, "GET", "/api/knowledge", NULL, reader.data, NULL);
    EXPECT_SUCCESS(o, &res);
    CHECK_INT(jint(o, "data.total"), 0);
    json_object_put(o);
    response_release(&res);

    /* a malformed query string, after authentication */
    o = call(&res, "GET", "/api/knowledge", "limit=%zz", reader.data, NULL);
    EXPECT_ERROR(o, &res, 200, E_INVALID_REQUEST);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "GET", "/api/knowledge", "limit=%zz", NULL, NULL);
    EXPECT_ERROR(o, &res, 401, E_UNAUTHORIZED);
    json_object_put(o);
    response_release(&res);

    /* a malformed {id} segment is refused, never handed over as NULL */
    o = call(&res, "GET", "/api/knowledge/%zz", NULL, reader.data, NULL);
    EXPECT_ERROR(o, &res, 200, E_INVALID_REQUEST);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "GET", "/api/knowledge/%ff/revisions", NULL, reader.data, NULL);
    EXPECT_ERROR(o, &res, 200, E_INVALID_REQUEST);
    json_object_put(o);
    response_release(&res);
}

/* ---- rules: admins only ---- */

static void test_rules(void)
{
    struct response res;
    struct json_object *o;
    char path[160], revert[200];

    o = call(&res, "POST", "/api/knowledge", NULL, admin.data,
             "{\"scenario\":\"Answering with numbers\",\"content\":\"Always cite the table.\","
             "\"category\":\"rules\",\"path\":\"cite.md\",\"description\":\"cite\"}");
    EXPECT_SUCCESS(o, &res);
    CHECK_STR(jstr(o, "data.category"), "rules");
    CHECK_STR(jstr(o, "data.path"), "cite.md");
    snprintf(path, sizeof path, "/api/knowledge/%s", jstr(o, "data.id") ? jstr(o, "data.id") : "x");
    snprintf(revert, sizeof revert, "%s/revert", path);
    json_object_put(o);
    response_release(&res);
    /* a rule needs a path */
    o = call(&res, "POST", "/api/knowledge", NULL, admin.data,
             "{\"scenario\":\"s\",\"content\":\"c\",\"category\":\"rules\"}");
    EXPECT_ERROR(o, &res, 200, E_INVALID_REQUEST);
    json_object_put(o);
    response_release(&res);
    /* rules are flat */
    o = call(&res, "POST", "/api/knowledge", NULL, admin.data,
             "{\"scenario\":\"s\",\"content\":\"c\",\"category\":\"rules\",\"path\":\"a/b.md\"}");
    EXPECT_ERROR(o, &res, 200, E_INVALID_REQUEST);
    CHECK_STR(jstr(o, "error.message"), "rules does not allow sub-directories");
    json_object_put(o);
    response_release(&res);
    /* agents and editors may not delete or revert a rule */
    o = call(&res, "DELETE", path, NULL, agent.data, NULL);
    EXPECT_ERROR(o, &res, 403, E_FORBIDDEN);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "DELETE", path, NULL, editor.data, NULL);
    EXPECT_ERROR(o, &res, 403, E_FORBIDDEN);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "GET", path, NULL, reader.data, NULL);
    EXPECT_SUCCESS(o, &res); /* still there */
    json_object_put(o);
    response_release(&res);
    o = call(&res, "DELETE", path, NULL, admin.data, NULL);
    EXPECT_SUCCESS(o, &res);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "POST", revert, NULL, agent.data, "{\"version\":1}");
    EXPECT_ERROR(o, &res, 403, E_FORBIDDEN);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "POST", revert, NULL, admin.data, "{\"version\":1}");
    EXPECT_SUCCESS(o, &res);
    CHECK_STR(jstr(o, "data.status"), "active");
    json_object_put(o);
    response_release(&res);
    /* leave the space as the round trip expects it: no entries */
    o = call(&res, "DELETE", path, NULL, admin.data, NULL);
    EXPECT_SUCCESS(o, &res);
    json_object_put(o);
    response_release(&res);
}

/* ---- the entry view, end to end ---- */

static void test_round_trip(void)
{
    struct response res;
    struct json_object *o, *item;
    char id[128], path[256], query[300];

    /* bad bodies first */
    o = call(&res, "POST", "/api/knowledge", NULL, agent.data, "{\"scenario\":");
    EXPECT_ERROR(o, &res, 200, E_INVALID_REQUEST);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "POST", "/api/knowledge", NULL, agent.data, "{\"content\":\"c\"}");
    EXPECT_ERROR(o, &res, 200, E_INVALID_REQUEST); /* scenario is required */
    json_object_put(o);
    response_release(&res);
    o = call(&res, "POST", "/api/knowledge", NULL, agent.data,
             "{\"scenario\":\"s\",\"content\":\"c\",\"tags_type\":[\"nonsense\"]}");
    EXPECT_ERROR(o, &res, 200, E_INVALID_REQUEST);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "POST", "/api/knowledge", NULL, agent.data,
             "{\"scenario\":\"s\",\"content\":\"c\",\"score\":9}");
    EXPECT_ERROR(o, &res, 200, E_INVALID_REQUEST);
    json_object_put(o);
    response_release(&res);
    /* rules are for admins */
    o = call(&res, "POST", "/api/knowledge", NULL, agent.data,
             "{\"scenario\":\"s\",\"content\":\"c\",\"category\":\"rules\",\"path\":\"r.md\"}");
    EXPECT_ERROR(o, &res, 403, E_FORBIDDEN);
    json_object_put(o);
    response_release(&res);

    /* create */
    o = call(&res, "POST", "/api/knowledge", NULL, agent.data,
             "{\"scenario\":\"When parsing CSV files\\nwith quotes\","
             "\"content\":\"Use the csv module, not split(',').\","
             "\"tags_type\":[\"tool\"],\"tags\":[\"csv\"],\"agent_id\":\"agent-1\","
             "\"urls\":[\"https://docs.python.org/3/library/csv.html\"]}");
    EXPECT_SUCCESS(o, &res);
    CHECK(jstr(o, "data.id") != NULL);
    snprintf(id, sizeof id, "%s", jstr(o, "data.id") ? jstr(o, "data.id") : "missing");
    CHECK(strncmp(id, "knowledge-", 10) == 0);
    CHECK_STR(jstr(o, "data.category"), "experiences");
    CHECK_STR(jstr(o, "data.title"), "When parsing CSV files"); /* first line of scenario */
    CHECK_STR(jstr(o, "data.status"), "active");
    CHECK_INT(jint(o, "data.version"), 1);
    CHECK_INT(jint(o, "data.eval.score"), 3);
    CHECK_INT(jint(o, "data.eval.helpful"), 0);
    CHECK_INT(jlen(o, "data.eval.helpful_history"), 0);
    CHECK_INT(jlen(o, "data.tags.type"), 1);
    CHECK_STR(jstr(o, "data.source.agent_id"), "agent-1");
    /* named after the title, no agent folder */
    snprintf(path, sizeof path, "%s", "when-parsing-csv-files.md");
    CHECK_STR(jstr(o, "data.path"), path);
    /* no slash escaping in responses */
    CHECK(strstr(res.body.data, "https://docs.python.org/3/library/csv.html") != NULL);
    json_object_put(o);
    response_release(&res);

    /* get */
    snprintf(path, sizeof path, "/api/knowledge/%s", id);
    o = call(&res, "GET", path, NULL, reader.data, NULL);
    EXPECT_SUCCESS(o, &res);
    CHECK_STR(jstr(o, "data.id"), id);
    CHECK_STR(jstr(o, "data.content"), "Use the csv module, not split(',').");
    CHECK_STR(jstr(o, "data.scenario"), "When parsing CSV files\nwith quotes");
    json_object_put(o);
    response_release(&res);
    /* another space cannot see it */
    o = call(&res, "GET", path, NULL, stranger.data, NULL);
    EXPECT_ERROR(o, &res, 200, E_NOT_FOUND);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "GET", "/api/knowledge/knowledge-19990101-00000000", NULL, reader.data, NULL);
    EXPECT_ERROR(o, &res, 200, E_NOT_FOUND);
    json_object_put(o);
    response_release(&res);

    /* PUT a helpful case: counted once per case id */
    o = call(&res, "PUT", path, NULL, agent.data,
             "{\"add_helpful_case\":{\"case_id\":\"case-1\",\"scenario\":\"import\","
             "\"result\":\"worked\"}}");
    EXPECT_SUCCESS(o, &res);
    CHECK_STR(jstr(o, "data.applied.add_helpful_case"), "added");
    CHECK_INT(jint(o, "data.eval.helpful"), 1);
    CHECK_INT(jint(o, "data.metrics.helpful"), 1);
    CHECK_INT(jlen(o, "data.eval.helpful_history"), 1);
    item = json_object_array_get_idx(jget(o, "data.eval.helpful_history"), 0);
    CHECK_STR(jstr(item, "case_id"), "case-1");
    CHECK_STR(jstr(item, "result"), "worked");
    json_object_put(o);
    response_release(&res);
    o = call(&res, "PUT", path, NULL, agent.data,
             "{\"add_helpful_case\":{\"case_id\":\"case-1\"}}");
    EXPECT_SUCCESS(o, &res);
    CHECK_STR(jstr(o, "data.applied.add_helpful_case"), "duplicate");
    CHECK_INT(jint(o, "data.eval.helpful"), 1);
    json_object_put(o);
    response_release(&res);
    /* score: a new version */
    o = call(&res, "PUT", path, NULL, agent.data, "{\"update_score\":5}");
    EXPECT_SUCCESS(o, &res);
    CHECK_INT(jint(o, "data.applied.update_score"), 5);
    CHECK_INT(jint(o, "data.eval.score"), 5);
    CHECK_INT(jint(o, "data.version"), 2);
    json_object_put(o);
    response_release(&res);
    /* nothing to update; a bad score; a reader may not */
    o = call(&res, "PUT", path, NULL, agent.data, "{}");
    EXPECT_ERROR(o, &res, 200, E_INVALID_REQUEST);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "PUT", path, NULL, agent.data, "{\"update_score\":2.5}");
    EXPECT_ERROR(o, &res, 200, E_INVALID_REQUEST);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "PUT", path, NULL, reader.data, "{\"update_score\":1}");
    EXPECT_ERROR(o, &res, 403, E_FORBIDDEN);
    json_object_put(o);
    response_release(&res);
    /* another space cannot count on it */
    {
        struct buf stranger_agent;
        make_token(&stranger_agent, "other", ROLE_AGENT, "");
        o = call(&res, "PUT", path, NULL, stranger_agent.data,
                 "{\"add_helpful_case\":{\"case_id\":\"x\"}}");
        EXPECT_ERROR(o, &res, 200, E_NOT_FOUND);
        json_object_put(o);
        response_release(&res);
        buf_release(&stranger_agent);
    }

    /* a second entry, then list */
    o = call(&res, "POST", "/api/knowledge", NULL, agent.data,
             "{\"scenario\":\"Planning a migration\",\"content\":\"Do it in steps.\","
             "\"tags_type\":[\"plan\",\"strategy\"],\"path\":\"plans/migration.md\"}");
    EXPECT_SUCCESS(o, &res);
    CHECK_STR(jstr(o, "data.path"), "plans/migration.md");
    json_object_put(o);
    response_release(&res);
    /* the same path again is a CONFLICT */
    o = call(&res, "POST", "/api/knowledge", NULL, agent.data,
             "{\"scenario\":\"x\",\"content\":\"y\",\"path\":\"plans//./migration.md\"}");
    EXPECT_ERROR(o, &res, 200, E_CONFLICT);
    json_object_put(o);
    response_release(&res);
    /* a bad path gets the reference's message */
    o = call(&res, "POST", "/api/knowledge", NULL, agent.data,
             "{\"scenario\":\"x\",\"content\":\"y\",\"path\":\"../x.md\"}");
    EXPECT_ERROR(o, &res, 200, E_INVALID_REQUEST);
    CHECK_STR(jstr(o, "error.message"), "Path traversal segment '..' in: '../x.md'");
    json_object_put(o);
    response_release(&res);

    o = call(&res, "GET", "/api/knowledge", NULL, reader.data, NULL);
    EXPECT_SUCCESS(o, &res);
    CHECK_INT(jint(o, "data.total"), 2);
    CHECK_INT(jint(o, "data.limit"), 10);
    CHECK_INT(jint(o, "data.offset"), 0);
    CHECK_INT(jlen(o, "data.items"), 2);
    item = json_object_array_get_idx(jget(o, "data.items"), 1); /* oldest last */
    CHECK_STR(jstr(item, "id"), id);
    CHECK_INT(jint(item, "eval.helpful"), 1);
    CHECK_INT(jint(item, "eval.score"), 5);
    item = json_object_array_get_idx(jget(o, "data.items"), 0);
    CHECK_STR(jstr(item, "path"), "plans/migration.md");
    json_object_put(o);
    response_release(&res);
    o = call(&res, "GET", "/api/knowledge", "limit=1&offset=1", reader.data, NULL);
    EXPECT_SUCCESS(o, &res);
    CHECK_INT(jint(o, "data.total"), 2);
    CHECK_INT(jlen(o, "data.items"), 1);
    CHECK_STR(jstr(json_object_array_get_idx(jget(o, "data.items"), 0), "id"), id);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "GET", "/api/knowledge", "tags_type=tool", reader.data, NULL);
    EXPECT_SUCCESS(o, &res);
    CHECK_INT(jint(o, "data.total"), 1);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "GET", "/api/knowledge", "tags_type=usecase,plan", reader.data, NULL);
    EXPECT_SUCCESS(o, &res);
    CHECK_INT(jint(o, "data.total"), 1);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "GET", "/api/knowledge", "tags_type=tool&tags_type=plan", reader.data, NULL);
    EXPECT_SUCCESS(o, &res);
    CHECK_INT(jint(o, "data.total"), 2);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "GET", "/api/knowledge", "category=rules", reader.data, NULL);
    EXPECT_SUCCESS(o, &res);
    CHECK_INT(jint(o, "data.total"), 0);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "GET", "/api/knowledge", "category=bogus", reader.data, NULL);
    EXPECT_ERROR(o, &res, 200, E_INVALID_REQUEST);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "GET", "/api/knowledge", "limit=0", reader.data, NULL);
    EXPECT_ERROR(o, &res, 200, E_INVALID_REQUEST);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "GET", "/api/knowledge", "limit=101", reader.data, NULL);
    EXPECT_ERROR(o, &res, 200, E_INVALID_REQUEST);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "GET", "/api/knowledge", "tags_type=bogus", reader.data, NULL);
    EXPECT_ERROR(o, &res, 200, E_INVALID_REQUEST);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "GET", "/api/knowledge", NULL, stranger.data, NULL);
    EXPECT_SUCCESS(o, &res);
    CHECK_INT(jint(o, "data.total"), 0);
    json_object_put(o);
    response_release(&res);

    /* delete (an agent may, for experiences), then it is gone, then
     * revisions and revert */
    o = call(&res, "DELETE", path, NULL, agent.data, NULL);
    EXPECT_SUCCESS(o, &res);
    CHECK_STR(jstr(o, "data.status"), "deleted");
    CHECK_INT(jint(o, "data.version"), 3);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "GET", path, NULL, reader.data, NULL);
    EXPECT_ERROR(o, &res, 200, E_NOT_FOUND);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "DELETE", path, NULL, editor.data, NULL);
    EXPECT_ERROR(o, &res, 200, E_NOT_FOUND);
    json_object_put(o);
    response_release(&res);

    snprintf(query, sizeof query, "%s/revisions", path);
    o = call(&res, "GET", query, NULL, reader.data, NULL);
    EXPECT_SUCCESS(o, &res);
    CHECK_STR(jstr(o, "data.id"), id);
    CHECK_INT(jlen(o, "data.items"), 3);
    item = json_object_array_get_idx(jget(o, "data.items"), 0);
    CHECK_INT(jint(item, "version"), 3);
    CHECK_STR(jstr(item, "reason"), "delete");
    CHECK(jget(item, "document") && json_object_is_type(jget(item, "document"), json_type_object));
    item = json_object_array_get_idx(jget(o, "data.items"), 2);
    CHECK_INT(jint(item, "version"), 1);
    CHECK_STR(jstr(item, "reason"), "create");
    json_object_put(o);
    response_release(&res);
    o = call(&res, "GET", query, NULL, stranger.data, NULL);
    EXPECT_ERROR(o, &res, 200, E_NOT_FOUND);
    json_object_put(o);
    response_release(&res);

    snprintf(query, sizeof query, "%s/revert", path);
    o = call(&res, "POST", query, NULL, reader.data, "{\"version\":2}");
    EXPECT_ERROR(o, &res, 403, E_FORBIDDEN);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "POST", query, NULL, agent.data, "{\"version\":42}");
    EXPECT_ERROR(o, &res, 200, E_NOT_FOUND);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "POST", query, NULL, agent.data, "{\"version\":\"2\"}");
    EXPECT_ERROR(o, &res, 200, E_INVALID_REQUEST);
    json_object_put(o);
    response_release(&res);
    /* without a version a deleted entry comes back as it was before the delete */
    o = call(&res, "POST", query, NULL, editor.data, "{}");
    EXPECT_SUCCESS(o, &res);
    CHECK_STR(jstr(o, "data.status"), "active");
    CHECK_INT(jint(o, "data.version"), 4);
    CHECK_INT(jint(o, "data.eval.score"), 5);
    CHECK_INT(jint(o, "data.eval.helpful"), 1); /* counters are kept */
    json_object_put(o);
    response_release(&res);
    /* ... but an active entry needs one */
    o = call(&res, "POST", query, NULL, editor.data, "{}");
    EXPECT_ERROR(o, &res, 200, E_INVALID_REQUEST);
    json_object_put(o);
    response_release(&res);
    /* an explicit version, on an active entry: a new revision again */
    o = call(&res, "POST", query, NULL, agent.data, "{\"version\":1}");
    EXPECT_SUCCESS(o, &res);
    CHECK_STR(jstr(o, "data.status"), "active");
    CHECK_INT(jint(o, "data.version"), 5);
    CHECK_INT(jint(o, "data.eval.score"), 3); /* version 1's score */
    CHECK_INT(jint(o, "data.eval.helpful"), 1);
    json_object_put(o);
    response_release(&res);
    o = call(&res, "GET", "/api/knowledge", NULL, reader.data, NULL);
    EXPECT_SUCCESS(o, &res);
    CHECK_INT(jint(o, "data.total"), 2);
    json_object_put(o);
    response_release(&res);
}

int main(void)
{
    routes_install();
    if (sodium_init() < 0) {
        CHECK(0);
        return test_summary();
    }
    store_global_init();
    memset(&cfg, 0, sizeof cfg);
    if (!CHECK_INT(store_open(":memory:", &st), STORE_OK))
        return test_summary();
    make_token(&reader, "main", ROLE_READER, "r");
    make_token(&agent, "main", ROLE_AGENT, "a");
    make_token(&editor, "main", ROLE_EDITOR, "e");
    make_token(&admin, "main", ROLE_ADMIN, "adm");
    make_token(&stranger, "other", ROLE_ADMIN, "s");

    test_not_found();
    test_method_not_allowed();
    test_public_and_auth();
    test_rules();
    test_round_trip();

    buf_release(&reader);
    buf_release(&agent);
    buf_release(&editor);
    buf_release(&admin);
    buf_release(&stranger);
    store_close(st);
    return test_summary();
}
