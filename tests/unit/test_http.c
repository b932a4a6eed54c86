/* test_http: percent-decoding, the query string, JSON bodies and the
 * response envelopes (success, error with retry, store status mapping). */
#include "harness.h"
#include "http/http.h"
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

/* ---- helpers ---- */

static struct buf dec;

/* url_decode of a C string; the decoded text is in dec. */
static int decode(const char *s, int plus_space)
{
    return url_decode(s, strlen(s), plus_space, &dec);
}

/* The parsed body of a response (caller puts), NULL when it is not JSON. */
static struct json_object *body_of(const struct response *res)
{
    return json_tokener_parse(res->body.data);
}

/* A string member at a dotted path ("error.code"), NULL when absent. */
static const char *member(struct json_object *o, const char *path)
{
    char key[64];
    while (o) {
        size_t n = strcspn(path, ".");
        struct json_object *v;
        if (n >= sizeof key)
            return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        if (!json_object_object_get_ex(o, key, &v))
            return NULL;
        if (!path[n])
            return json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                            : json_object_to_json_string(v);
        o = v;
        path += n + 1;
    }
    return NULL;
}

/* Check an error envelope: HTTP status, code, and retry flag. */
static void expect_error(const struct response *res, int http_status, const char *code, int retry,
                         int line)
{
    struct json_object *o = body_of(res);
    harness_check(o != NULL, "body is JSON", __FILE__, line);
    harness_check_int(res->done, 1, "res.done", "1", __FILE__, line);
    harness_check_int(res->status, http_status, "res.status", "http_status", __FILE__, line);
    harness_check_str(member(o, "status"), "error", "status", "\"error\"", __FILE__, line);
    harness_check_str(member(o, "error.code"), code, "error.code", "code", __FILE__, line);
    harness_check_str(member(o, "error.retry"), retry ? "true" : "false", "error.retry", "retry",
                      __FILE__, line);
    json_object_put(o);
}
#define EXPECT_ERROR(res, st, code, retry) expect_error((res), (st), (code), (retry), __LINE__)

/* ---- url_decode ---- */

static void test_url_decode(void)
{
    buf_init(&dec, 4096);
    CHECK_INT(decode("", 1), 0);
    CHECK_STR(dec.data, "");
    CHECK_INT(decode("abc", 1), 0);
    CHECK_STR(dec.data, "abc");
    CHECK_INT(decode("a+b", 1), 0);
    CHECK_STR(dec.data, "a b");
    CHECK_INT(decode("a+b", 0), 0); /* '+' is a space only in query strings */
    CHECK_STR(dec.data, "a+b");
    CHECK_INT(decode("%2B", 1), 0); /* an escaped '+' stays a '+' */
    CHECK_STR(dec.data, "+");
    CHECK_INT(decode("%41%62%2f", 1), 0);
    CHECK_STR(dec.data, "Ab/");
    CHECK_INT(decode("100%25", 1), 0);
    CHECK_STR(dec.data, "100%");
    CHECK_INT(decode("%20x%20", 0), 0);
    CHECK_STR(dec.data, " x ");
    CHECK_INT(decode("%e4%b8%ad%E6%96%87", 1), 0);
    CHECK_STR(dec.data, "\xe4\xb8\xad\xe6\x96\x87");
    CHECK_INT(decode("\xe4\xb8\xad", 1), 0); /* raw UTF-8 passes */
    CHECK_STR(dec.data, "\xe4\xb8\xad");
    CHECK_INT(decode("x%41", 1), 0); /* an escape at the very end */
    CHECK_STR(dec.data, "xA");
    /* n bounds the input */
    CHECK_INT(url_decode("ab%41", 2, 1, &dec), 0);
    CHECK_STR(dec.data, "ab");
    CHECK_INT(url_decode("%41%", 3, 1, &dec), 0);
    CHECK_STR(dec.data, "A");

    /* bad escapes */
    CHECK_INT(decode("%", 1), -1);
    CHECK_INT(decode("%4", 1), -1);
    CHECK_INT(decode("a%4", 1), -1);
    CHECK_INT(decode("%zz", 1), -1);
    CHECK_INT(decode("%4g", 1), -1);
    CHECK_INT(decode("%g4", 1), -1);
    CHECK_INT(decode("%%41", 1), -1);
    CHECK_INT(decode("% 41", 1), -1);
    CHECK_INT(url_decode("%41", 2, 1, &dec), -1); /* escape cut by n */
    /* invalid UTF-8 and NUL, escaped or raw */
    CHECK_INT(decode("%ff", 1), -1);
    CHECK_INT(decode("%c0%af", 1), -1);
    CHECK_INT(decode("%ed%a0%80", 1), -1);
    CHECK_INT(decode("%e4%b8", 1), -1);
    CHECK_INT(decode("\xff", 1), -1);
    CHECK_INT(decode("%00", 1), -1);
    CHECK_INT(decode("a%00b", 0), -1);
    CHECK_INT(url_decode("a\0b", 3, 1, &dec), -1);

    /* the output is bounded by the buffer's maximum */
    {
        struct buf small;
        buf_init(&small, 3);
        CHECK_INT(url_decode("abc", 3, 1, &small), 0);
        CHECK_INT(url_decode("abcd", 4, 1, &small), -1);
        CHECK_INT(url_decode("%41%41%41%41", 12, 1, &small), -1);
        buf_release(&small);
    }
    buf_release(&dec);
}

/* ---- query string ---- */

static void test_parse_query(void)
{
    struct request req;

    request_init(&req);
    CHECK_STR(req.query, "");
    CHECK_STR(req.body, "");
    CHECK_INT(req.who.role, ROLE_NONE);
    CHECK_INT(http_parse_query(&req), 0);
    CHECK_INT(req.n_qp, 0);
    CHECK(http_query(&req, "a") == NULL);
    request_release(&req);

    request_init(&req);
    req.query = NULL;
    CHECK_INT(http_parse_query(&req), 0);
    CHECK_INT(req.n_qp, 0);
    request_release(&req);

    request_init(&req);
    req.query = "a=1&a=2&b=&c&=x&&d=%20z+y&e=%E4%B8%AD&f=a=b";
    CHECK_INT(http_parse_query(&req), 0);
    CHECK_INT(req.n_qp, 7);                /* "=x" (no name) and the empty pair are skipped */
    CHECK_STR(http_query(&req, "a"), "1"); /* the first of repeated names */
    CHECK_STR(req.qp[0].name, "a");
    CHECK_STR(req.qp[1].name, "a");
    CHECK_STR(req.qp[1].value, "2");
    CHECK_STR(http_query(&req, "b"), ""); /* empty value */
    CHECK_STR(http_query(&req, "c"), ""); /* no '=' */
    CHECK_STR(http_query(&req, "d"), " z y");
    CHECK_STR(http_query(&req, "e"), "\xe4\xb8\xad");
    CHECK_STR(http_query(&req, "f"), "a=b"); /* only the first '=' splits */
    CHECK(http_query(&req, "") == NULL);
    CHECK(http_query(&req, "x") == NULL);
    CHECK(http_query(&req, "A") == NULL); /* names are case-sensitive */
    request_release(&req);
    CHECK_INT(req.n_qp, 0);
    CHECK(req.qp == NULL);

    /* names are decoded too */
    request_init(&req);
    req.query = "tags%5Ftype=tool&x+y=1";
    CHECK_INT(http_parse_query(&req), 0);
    CHECK_STR(http_query(&req, "tags_type"), "tool");
    CHECK_STR(http_query(&req, "x y"), "1");
    request_release(&req);

    /* many parameters grow the array */
    request_init(&req);
    req.query = "p=0&p=1&p=2&p=3&p=4&p=5&p=6&p=7&p=8&p=9&q=last";
    CHECK_INT(http_parse_query(&req), 0);
    CHECK_INT(req.n_qp, 11);
    CHECK_STR(http_query(&req, "q"), "last");
    CHECK_STR(req.qp[9].value, "9");
    request_release(&req);

    /* bad escapes, invalid UTF-8 and NUL are refused (in names and values) */
    {
        static const char *const bad[] = {"a=%",           "a=%4",  "a=%zz", "a=%ff", "a=%00",
                                          "ok=1&a=%c0%af", "%zz=1", "%00=1", "a=\xff"};
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            request_init(&req);
            req.query = bad[i];
            if (!CHECK_INT(http_parse_query(&req), -1))
                fprintf(stderr, "    query: %s\n", bad[i]);
            request_release(&req); /* frees what was parsed before the error */
        }
    }
}

static void test_query_long(void)
{
    struct request req;
    struct response res;
    long v = -99;

    request_init(&req);
    req.query = "limit=20&offset=&bad=1x&big=1000&neg=-1";
    CHECK_INT(http_parse_query(&req), 0);

    response_init(&res, "rq");
    CHECK_INT(http_query_long_or_400(&req, &res, "limit", 10, 1, 100, &v), 0);
    CHECK_INT(v, 20);
    CHECK_INT(http_query_long_or_400(&req, &res, "absent", 10, 1, 100, &v), 0);
    CHECK_INT(v, 10);
    CHECK_INT(http_query_long_or_400(&req, &res, "offset", 7, 0, 100, &v), 0); /* empty */
    CHECK_INT(v, 7);
    CHECK_INT(res.done, 0);
    CHECK_INT(http_query_long_or_400(&req, &res, "bad", 10, 1, 100, &v), -1);
    EXPECT_ERROR(&res, 200, E_INVALID_REQUEST, 0);
    CHECK(strstr(res.body.data, "'bad' must be an integer between 1 and 100") != NULL);
    response_release(&res);

    response_init(&res, "rq");
    CHECK_INT(http_query_long_or_400(&req, &res, "big", 10, 1, 100, &v), -1);
    EXPECT_ERROR(&res, 200, E_INVALID_REQUEST, 0);
    response_release(&res);
    response_init(&res, "rq");
    CHECK_INT(http_query_long_or_400(&req, &res, "neg", 10, 0, 100, &v), -1);
    EXPECT_ERROR(&res, 200, E_INVALID_REQUEST, 0);
    response_release(&res);
    request_release(&req);
}

/* ---- JSON bodies ---- */

/* Run http_body_json_or_400 on body[0..n). */
static struct json_object *parse_body(const char *body, size_t n, struct response *res)
{
    struct request req;
    struct json_object *o;
    request_init(&req);
    req.body = body;
    req.body_len = n;
    o = http_body_json_or_400(&req, res);
    request_release(&req);
    return o;
}

/* Expect body[0..n) to be refused with INVALID_REQUEST. */
static void body_refused(const char *body, size_t n, int line)
{
    struct response res;
    struct json_object *o;
    response_init(&res, "req-7");
    o = parse_body(body, n, &res);
    if (!harness_check(o == NULL, "body refused", __FILE__, line))
        json_object_put(o);
    expect_error(&res, 200, E_INVALID_REQUEST, 0, line);
    {
        struct json_object *b = body_of(&res);
        harness_check_str(member(b, "error.request_id"), "req-7", "request_id", "\"req-7\"",
                          __FILE__, line);
        json_object_put(b);
    }
    response_release(&res);
}
#define BODY_REFUSED(lit) body_refused((lit), sizeof(lit) - 1, __LINE__)

static void test_body_json(void)
{
    struct response res;
    struct json_object *o, *v;
    struct buf deep;

    /* empty (or blank) body: an empty object, no reply written */
    response_init(&res, "r");
    o = parse_body("", 0, &res);
    CHECK(o != NULL && json_object_is_type(o, json_type_object));
    CHECK_INT(json_object_object_length(o), 0);
    CHECK_INT(res.done, 0);
    CHECK_INT(res.body.len, 0);
    json_object_put(o);
    o = parse_body(" \r\n\t", 4, &res);
    CHECK(o != NULL && json_object_object_length(o) == 0);
    json_object_put(o);
    CHECK_INT(res.done, 0);

    /* a good object, with whitespace around it */
    {
        const char *good = "{\"a\":1,\"s\":\"\xe4\xb8\xad\"}";
        o = parse_body(good, strlen(good), &res);
    }
    CHECK(o != NULL);
    CHECK(json_object_object_get_ex(o, "a", &v) && json_object_get_int(v) == 1);
    CHECK(json_object_object_get_ex(o, "s", &v));
    CHECK_STR(json_object_get_string(v), "\xe4\xb8\xad");
    json_object_put(o);
    {
        const char *spaced = "\n {\"a\":[1,2]} \r\n";
        o = parse_body(spaced, strlen(spaced), &res);
    }
    CHECK(o != NULL && json_object_object_get_ex(o, "a", &v));
    json_object_put(o);
    /* body_len is honoured: the text after it is not read */
    o = parse_body("{\"a\":1}garbage", 7, &res);
    CHECK(o != NULL);
    json_object_put(o);
    CHECK_INT(res.done, 0);
    response_release(&res);

    /* malformed */
    BODY_REFUSED("{");
    BODY_REFUSED("{\"a\":}");
    BODY_REFUSED("{\"a\" 1}");
    /* exponents, literals and quotes inside strings stay valid */
    {
        static const char ok_body[] = "{\"a\":1e5,\"b\":-2.5E-3,\"c\":true,\"d\":null,\"e\":false,"
                                      "\"f\":\"it's NaN, \\\"Infinity\\\" {'x'}\"}";
        response_init(&res, "rid");
        o = parse_body(ok_body, sizeof ok_body - 1, &res);
        CHECK(o != NULL);
        CHECK_INT(res.done, 0);
        json_object_put(o);
        response_release(&res);
    }
    /* json-c 0.16 accepts these even in strict mode; KnowHub refuses them */
    BODY_REFUSED("{'a':1}");
    BODY_REFUSED("{\"a\":NaN}");
    BODY_REFUSED("{\"a\":-Infinity}");
    BODY_REFUSED("{\"a\":'x'}");
    BODY_REFUSED("{\"a\":1,}");
    BODY_REFUSED("{a:1}");
    BODY_REFUSED("nul");
    /* trailing garbage */
    BODY_REFUSED("{} x");
    BODY_REFUSED("{}{}");
    BODY_REFUSED("{\"a\":1}]");
    BODY_REFUSED("{\"a\":1} {\"b\":2}");
    /* not an object */
    BODY_REFUSED("[]");
    BODY_REFUSED("[1,2]");
    BODY_REFUSED("1");
    BODY_REFUSED("\"text\"");
    BODY_REFUSED("true");
    BODY_REFUSED("null");
    /* invalid UTF-8, raw or hidden in a string; NUL bytes */
    BODY_REFUSED("{\"a\":\"\xff\"}");
    BODY_REFUSED("{\"a\":\"\xc0\xaf\"}");
    BODY_REFUSED("{\"a\":\"\xed\xa0\x80\"}");
    BODY_REFUSED("{\"\xe4\xb8\":1}");
    BODY_REFUSED("{\"a\":1}\0");
    BODY_REFUSED("\0");
    BODY_REFUSED(" \0 ");

    /* nesting depth: 20 levels are fine, 100 are refused */
    buf_init(&deep, 4096);
    buf_adds(&deep, "{\"a\":");
    for (int i = 0; i < 20; i++)
        buf_addch(&deep, '[');
    for (int i = 0; i < 20; i++)
        buf_addch(&deep, ']');
    buf_addch(&deep, '}');
    response_init(&res, "r");
    o = parse_body(deep.data, deep.len, &res);
    CHECK(o != NULL);
    CHECK_INT(res.done, 0);
    json_object_put(o);
    response_release(&res);
    buf_reset(&deep);
    buf_adds(&deep, "{\"a\":");
    for (int i = 0; i < 100; i++)
        buf_addch(&deep, '[');
    for (int i = 0; i < 100; i++)
        buf_addch(&deep, ']');
    buf_addch(&deep, '}');
    body_refused(deep.data, deep.len, __LINE__);
    buf_release(&deep);
}

/* ---- envelopes ---- */

static void test_reply_data(void)
{
    struct response res;
    struct json_object *o, *d;

    response_init(&res, "r1");
    CHECK_INT(res.status, 200);
    CHECK_INT(res.done, 0);
    d = json_object_new_object();
    json_object_object_add(d, "path", json_object_new_string("a/b.md"));
    reply_data(&res, d);
    CHECK_INT(res.status, 200);
    CHECK_INT(res.done, 1);
    CHECK_STR(res.body.data, "{\"status\":\"success\",\"data\":{\"path\":\"a/b.md\"}}");
    response_release(&res);

    response_init(&res, "r1");
    reply_data(&res, NULL);
    o = body_of(&res);
    CHECK_STR(member(o, "status"), "success");
    CHECK(json_object_object_get_ex(o, "data", &d) && d == NULL);
    json_object_put(o);
    /* a second reply replaces the first (no concatenation) */
    reply_data(&res, json_object_new_int(5));
    CHECK_STR(res.body.data, "{\"status\":\"success\",\"data\":5}");
    response_release(&res);

    /* a response over the body's maximum is LIMIT_EXCEEDED with the request
     * id, not a 500 without one */
    response_init(&res, "r1");
    res.body.max = 200;
    {
        char big[1001];
        memset(big, 'x', 1000);
        big[1000] = '\0';
        reply_data(&res, json_object_new_string(big));
        EXPECT_ERROR(&res, 200, E_LIMIT_EXCEEDED, 0);
        CHECK_INT(res.too_large, 1);
        o = body_of(&res);
        CHECK_STR(member(o, "error.request_id"), "r1");
        json_object_put(o);
        response_release(&res);
        /* under a maximum too small for the error itself, the error still goes out */
        response_init(&res, "r2");
        res.body.max = 20;
        reply_data(&res, json_object_new_string(big));
        EXPECT_ERROR(&res, 200, E_LIMIT_EXCEEDED, 0);
        o = body_of(&res);
        CHECK_STR(member(o, "error.request_id"), "r2");
        json_object_put(o);
        response_release(&res);
        /* a text body a handler built directly failed (buf_failed): the router
         * answers it with reply_too_large, the same LIMIT_EXCEEDED */
        response_init(&res, "r3");
        res.body.max = 400;
        buf_adds(&res.body, "partial ");
        buf_adds(&res.body, big);
        CHECK_INT(buf_failed(&res.body), 1);
        reply_too_large(&res);
        EXPECT_ERROR(&res, 200, E_LIMIT_EXCEEDED, 0);
        CHECK_INT(buf_failed(&res.body), 0);
        o = body_of(&res);
        CHECK_STR(member(o, "error.request_id"), "r3");
        CHECK_STR(member(o, "error.key"), "response_too_large");
        json_object_put(o);
    }
    response_release(&res);
}

static void test_reply_error(void)
{
    struct response res;
    struct json_object *o;

    response_init(&res, "abc-123");
    reply_error(&res, 200, E_INVALID_REQUEST, "'%s' is bad (%d)", "x", 3);
    EXPECT_ERROR(&res, 200, E_INVALID_REQUEST, 0);
    o = body_of(&res);
    CHECK_STR(member(o, "error.message"), "'x' is bad (3)");
    CHECK_STR(member(o, "error.request_id"), "abc-123");
    json_object_put(o);
    response_release(&res);

    /* retry flag: true only for transient failures */
    response_init(&res, "r");
    reply_error(&res, 503, E_SERVICE_UNAVAILABLE, "busy");
    EXPECT_ERROR(&res, 503, E_SERVICE_UNAVAILABLE, 1);
    reply_error(&res, 200, "LLM_TIMEOUT", "slow");
    EXPECT_ERROR(&res, 200, "LLM_TIMEOUT", 1);
    reply_error(&res, 200, "LLM_RATE_LIMIT", "slow down");
    EXPECT_ERROR(&res, 200, "LLM_RATE_LIMIT", 1);
    reply_error(&res, 200, E_NOT_FOUND, "gone");
    EXPECT_ERROR(&res, 200, E_NOT_FOUND, 0);
    reply_error(&res, 200, E_CONFLICT, "taken");
    EXPECT_ERROR(&res, 200, E_CONFLICT, 0);
    reply_error(&res, 404, E_NOT_FOUND, "No such endpoint");
    EXPECT_ERROR(&res, 404, E_NOT_FOUND, 0);
    reply_error(&res, 500, E_INTERNAL, "oops");
    EXPECT_ERROR(&res, 500, E_INTERNAL, 0);
    response_release(&res);

    /* no request id gives an empty string, never a crash */
    response_init(&res, NULL);
    reply_error(&res, 200, E_FORBIDDEN, "no");
    o = body_of(&res);
    CHECK_STR(member(o, "error.request_id"), "");
    json_object_put(o);
    response_release(&res);

    /* a message too long for its buffer degrades to the code */
    response_init(&res, "r");
    {
        char big[5001];
        memset(big, 'm', 5000);
        big[5000] = '\0';
        reply_error(&res, 200, E_INVALID_REQUEST, "%s", big);
    }
    EXPECT_ERROR(&res, 200, E_INVALID_REQUEST, 0);
    o = body_of(&res);
    CHECK_STR(member(o, "error.message"), E_INVALID_REQUEST);
    json_object_put(o);
    response_release(&res);

    /* quotes and control characters in a message stay valid JSON */
    response_init(&res, "r");
    reply_error(&res, 200, E_INVALID_REQUEST, "say \"%s\"\n\\", "hi/there");
    o = body_of(&res);
    CHECK_STR(member(o, "error.message"), "say \"hi/there\"\n\\");
    json_object_put(o);
    response_release(&res);
}

static void test_reply_store_error(void)
{
    struct response res;
    struct json_object *o;

    response_init(&res, "r");
    reply_store_error(&res, STORE_NOT_FOUND, "Knowledge entry");
    EXPECT_ERROR(&res, 200, E_NOT_FOUND, 0);
    o = body_of(&res);
    CHECK_STR(member(o, "error.message"), "Knowledge entry not found");
    json_object_put(o);
    response_release(&res);

    response_init(&res, "r");
    reply_store_error(&res, STORE_CONFLICT, "Knowledge entry");
    EXPECT_ERROR(&res, 200, E_CONFLICT, 0);
    response_release(&res);

    response_init(&res, "r");
    reply_store_error(&res, STORE_BUSY, "Knowledge entry");
    EXPECT_ERROR(&res, 503, E_SERVICE_UNAVAILABLE, 1);
    response_release(&res);

    response_init(&res, "r");
    reply_store_error(&res, STORE_FULL, "Knowledge entry");
    EXPECT_ERROR(&res, 503, E_SERVICE_UNAVAILABLE, 1);
    response_release(&res);

    response_init(&res, "r");
    reply_store_error(&res, STORE_READONLY, "Knowledge entry");
    EXPECT_ERROR(&res, 503, E_SERVICE_UNAVAILABLE, 1);
    response_release(&res);

    /* anything else: 500 with a fixed message, no internal detail */
    response_init(&res, "r");
    reply_store_error(&res, STORE_ERROR, "Knowledge entry");
    EXPECT_ERROR(&res, 500, E_INTERNAL, 0);
    o = body_of(&res);
    CHECK_STR(member(o, "error.message"), "An unexpected error occurred");
    json_object_put(o);
    CHECK(strstr(res.body.data, "Knowledge entry") == NULL);
    CHECK(strstr(res.body.data, "SQL") == NULL && strstr(res.body.data, "sqlite") == NULL);
    response_release(&res);

    response_init(&res, "r");
    reply_store_error(&res, 12345, "Thing");
    EXPECT_ERROR(&res, 500, E_INTERNAL, 0);
    response_release(&res);
}

static void test_json_text(void)
{
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "u", json_object_new_string("http://x/y"));
    json_object_object_add(o, "n", json_object_new_int(1));
    CHECK_STR(json_text(o), "{\"u\":\"http://x/y\",\"n\":1}");
    json_object_put(o);
}

static void test_browser_guard(void)
{
    struct request req;
    struct response res;
    request_init(&req);

    /* the media type, parameters and case aside */
    CHECK_INT(http_content_is_json(&req), 0);
    const char *json_types[] = {"application/json", "Application/JSON; charset=utf-8",
                                " application/json ;charset=UTF-8"};
    for (size_t i = 0; i < sizeof json_types / sizeof *json_types; i++) {
        req.content_type = json_types[i];
        CHECK_INT(http_content_is_json(&req), 1);
    }
    const char *simple[] = {"text/plain",
                            "application/x-www-form-urlencoded",
                            "multipart/form-data; boundary=x",
                            "application/jsonx",
                            "",
                            "json"};
    for (size_t i = 0; i < sizeof simple / sizeof *simple; i++) {
        req.content_type = simple[i];
        CHECK_INT(http_content_is_json(&req), 0);
    }

    /* no Origin, no Sec-Fetch-Site: not a browser, not cross-site */
    req.host = "127.0.0.1:8080";
    CHECK_INT(http_cross_site(&req), 0);
    req.origin = "http://127.0.0.1:8080";
    CHECK_INT(http_cross_site(&req), 0);
    req.origin = "http://LOCALHOST:8080";
    req.host = "localhost:8080";
    CHECK_INT(http_cross_site(&req), 0);
    req.host = "127.0.0.1:8080";
    const char *foreign[] = {"http://127.0.0.1:8081",      "http://evil.example", "null", "",
                             "http://127.0.0.1:8080.evil", "http://127.0.0.1"};
    for (size_t i = 0; i < sizeof foreign / sizeof *foreign; i++) {
        req.origin = foreign[i];
        CHECK_INT(http_cross_site(&req), foreign[i][0] != '\0');
    }
    /* Sec-Fetch-Site, when sent, decides */
    req.origin = NULL;
    req.sec_fetch_site = "same-site";
    CHECK_INT(http_cross_site(&req), 1);
    req.sec_fetch_site = "cross-site";
    CHECK_INT(http_cross_site(&req), 1);
    req.sec_fetch_site = "same-origin";
    CHECK_INT(http_cross_site(&req), 0);
    req.sec_fetch_site = "none";
    CHECK_INT(http_cross_site(&req), 0);

    /* the guard: 403 before 415; a body-less request needs no type unless required */
    req.sec_fetch_site = "cross-site";
    response_init(&res, "rid");
    CHECK_INT(http_browser_request_or_error(&req, &res, 0), -1);
    CHECK_INT(res.status, 403);
    response_release(&res);
    req.sec_fetch_site = "same-origin";
    req.content_type = "text/plain";
    response_init(&res, "rid");
    CHECK_INT(http_browser_request_or_error(&req, &res, 0), 0);
    CHECK_INT(res.done, 0);
    CHECK_INT(http_browser_request_or_error(&req, &res, 1), -1);
    CHECK_INT(res.status, 415);
    CHECK(strstr(res.body.data, "\"UNSUPPORTED_MEDIA_TYPE\"") != NULL);
    response_release(&res);
    req.body = "{}";
    req.body_len = 2;
    response_init(&res, "rid");
    CHECK_INT(http_browser_request_or_error(&req, &res, 0), -1);
    CHECK_INT(res.status, 415);
    response_release(&res);
    req.content_type = "application/json";
    response_init(&res, "rid");
    CHECK_INT(http_browser_request_or_error(&req, &res, 1), 0);
    response_release(&res);
    req.body = NULL;
    request_release(&req);
}

int main(void)
{
    test_url_decode();
    test_parse_query();
    test_query_long();
    test_body_json();
    test_reply_data();
    test_reply_error();
    test_reply_store_error();
    test_json_text();
    test_browser_guard();
    return test_summary();
}
