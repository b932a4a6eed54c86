/* test_jfield: the typed JSON body fields (each _or_400 helper): absent,
 * null, wrong type, too long (in Unicode characters), required and blank,
 * embedded NUL, integer bounds, doubles refused as integers. */
#include "base/buf.h"
#include "harness.h"
#include "http/http.h"
#include "base/jfield.h"

#include <string.h>

/* The body of the test, parsed by json-c exactly as a request body would be. */
static const char *const BODY =
    "{"
    "\"s\":\"hello\", \"blank\":\"  \\t\\n \", \"empty\":\"\", \"nul\":\"a\\u0000b\","
    "\"cjk\":\"\xe4\xb8\xad\xe6\x96\x87\xe5\xad\x97\", \"emoji\":\"\\ud83d\\ude00\\ud83d\\ude01\","
    "\"null\":null, \"n\":3, \"neg\":-7, \"zero\":0, \"d\":3.0, \"d2\":2.5, "
    "\"big\":99999999999999999999,"
    "\"int64max\":9223372036854775807, \"t\":true, \"f\":false, \"str5\":\"5\", \"obj\":{\"k\":1},"
    "\"arr\":[\"x\",\"y\"], \"arr_empty\":[], \"arr_mixed\":[\"x\",1], \"arr_null\":[\"x\",null],"
    "\"arr_nul\":[\"a\\u0000\"], \"arr_long\":[\"ok\",\"toolong\"], "
    "\"arr_cjk\":[\"\xe4\xb8\xad\xe6\x96\x87\"],"
    "\"arr3\":[\"a\",\"b\",\"c\"], \"arr_nested\":[[\"a\"]], \"lone\":\"solo\""
    "}";

static struct json_object *body;

/* Check the reply written to res: HTTP 200, the error code, and (when not
 * NULL) a fragment of the message; then reset res for the next call. */
static void expect_reply(struct response *res, const char *code, const char *fragment, int line)
{
    struct json_object *o = json_tokener_parse(res->body.data), *e = NULL, *v;
    harness_check_int(res->done, 1, "res.done", "1", __FILE__, line);
    harness_check_int(res->status, 200, "res.status", "200", __FILE__, line);
    harness_check(o && json_object_object_get_ex(o, "error", &e), "an error envelope", __FILE__,
                  line);
    if (e && json_object_object_get_ex(e, "code", &v))
        harness_check_str(json_object_get_string(v), code, "error.code", "code", __FILE__, line);
    else
        harness_check(0, "error.code present", __FILE__, line);
    if (fragment && e && json_object_object_get_ex(e, "message", &v)) {
        if (!harness_check(strstr(json_object_get_string(v), fragment) != NULL,
                           "message has fragment", __FILE__, line))
            fprintf(stderr, "    message: %s\n    fragment: %s\n", json_object_get_string(v),
                    fragment);
    }
    json_object_put(o);
    response_release(res);
    response_init(res, "r");
}

/* Nothing was written to res. */
static void expect_no_reply(struct response *res, int line)
{
    harness_check_int(res->done, 0, "res.done", "0", __FILE__, line);
    harness_check_int(res->body.len, 0, "res.body.len", "0", __FILE__, line);
}

#define REPLY(res, code, frag) expect_reply((res), (code), (frag), __LINE__)
#define NO_REPLY(res) expect_no_reply((res), __LINE__)

static void test_string(void)
{
    struct response res;
    const char *s = "sentinel";
    response_init(&res, "r");

    /* present */
    CHECK_INT(jf_string_or_400(&res, body, "s", 0, 10, &s), 0);
    CHECK_STR(s, "hello");
    CHECK_INT(jf_string_or_400(&res, body, "s", 1, 10, &s), 0);
    CHECK_STR(s, "hello");
    NO_REPLY(&res);
    /* absent and null are the same: NULL when optional */
    s = "sentinel";
    CHECK_INT(jf_string_or_400(&res, body, "missing", 0, 10, &s), 0);
    CHECK(s == NULL);
    s = "sentinel";
    CHECK_INT(jf_string_or_400(&res, body, "null", 0, 10, &s), 0);
    CHECK(s == NULL);
    NO_REPLY(&res);
    /* ... and refused when required */
    CHECK_INT(jf_string_or_400(&res, body, "missing", 1, 10, &s), -1);
    REPLY(&res, E_INVALID_REQUEST, "'missing' is required");
    CHECK_INT(jf_string_or_400(&res, body, "null", 1, 10, &s), -1);
    REPLY(&res, E_INVALID_REQUEST, "'null' is required");
    /* required and blank or empty */
    CHECK_INT(jf_string_or_400(&res, body, "blank", 1, 10, &s), -1);
    REPLY(&res, E_INVALID_REQUEST, "'blank' is required");
    CHECK_INT(jf_string_or_400(&res, body, "empty", 1, 10, &s), -1);
    REPLY(&res, E_INVALID_REQUEST, "'empty' is required");
    /* blank is fine when optional */
    CHECK_INT(jf_string_or_400(&res, body, "blank", 0, 10, &s), 0);
    CHECK_STR(s, "  \t\n ");
    CHECK_INT(jf_string_or_400(&res, body, "empty", 0, 10, &s), 0);
    CHECK_STR(s, "");
    NO_REPLY(&res);
    /* wrong types */
    CHECK_INT(jf_string_or_400(&res, body, "n", 0, 10, &s), -1);
    REPLY(&res, E_INVALID_REQUEST, "'n' must be a string");
    CHECK_INT(jf_string_or_400(&res, body, "t", 0, 10, &s), -1);
    REPLY(&res, E_INVALID_REQUEST, "'t' must be a string");
    CHECK_INT(jf_string_or_400(&res, body, "obj", 0, 10, &s), -1);
    REPLY(&res, E_INVALID_REQUEST, "'obj' must be a string");
    CHECK_INT(jf_string_or_400(&res, body, "arr", 1, 10, &s), -1);
    REPLY(&res, E_INVALID_REQUEST, "'arr' must be a string");
    CHECK_INT(jf_string_or_400(&res, body, "d", 0, 10, &s), -1);
    REPLY(&res, E_INVALID_REQUEST, "'d' must be a string");
    /* too long: LIMIT_EXCEEDED, counted in characters */
    CHECK_INT(jf_string_or_400(&res, body, "s", 0, 5, &s), 0); /* exactly 5 */
    CHECK_INT(jf_string_or_400(&res, body, "s", 0, 4, &s), -1);
    REPLY(&res, E_LIMIT_EXCEEDED, "'s' exceeds 4 characters (got 5)");
    /* 3 CJK characters are 9 bytes but 3 characters */
    CHECK_INT(jf_string_or_400(&res, body, "cjk", 1, 3, &s), 0);
    CHECK_STR(s, "\xe4\xb8\xad\xe6\x96\x87\xe5\xad\x97");
    NO_REPLY(&res);
    CHECK_INT(jf_string_or_400(&res, body, "cjk", 1, 2, &s), -1);
    REPLY(&res, E_LIMIT_EXCEEDED, "(got 3)");
    /* two emoji from surrogate-pair escapes are two characters */
    CHECK_INT(jf_string_or_400(&res, body, "emoji", 1, 2, &s), 0);
    CHECK_STR(s, "\xf0\x9f\x98\x80\xf0\x9f\x98\x81");
    CHECK_INT(jf_string_or_400(&res, body, "emoji", 1, 1, &s), -1);
    REPLY(&res, E_LIMIT_EXCEEDED, "(got 2)");
    /* embedded NUL ("a\u0000b"), optional or not */
    s = "sentinel";
    CHECK_INT(jf_string_or_400(&res, body, "nul", 0, 100, &s), -1);
    REPLY(&res, E_INVALID_REQUEST, "'nul' must be valid UTF-8 text without NUL");
    CHECK(s == NULL); /* never a half-checked value */
    CHECK_INT(jf_string_or_400(&res, body, "nul", 1, 100, &s), -1);
    REPLY(&res, E_INVALID_REQUEST, "without NUL");
    response_release(&res);
}

static void test_long(void)
{
    struct response res;
    long v = 0;
    response_init(&res, "r");

    CHECK_INT(jf_long_or_400(&res, body, "n", 1, 5, 9, &v), 0);
    CHECK_INT(v, 3);
    CHECK_INT(jf_long_or_400(&res, body, "neg", -10, 10, 9, &v), 0);
    CHECK_INT(v, -7);
    CHECK_INT(jf_long_or_400(&res, body, "zero", 0, 0, 9, &v), 0);
    CHECK_INT(v, 0);
    /* absent and null: the default */
    v = 0;
    CHECK_INT(jf_long_or_400(&res, body, "missing", 1, 5, 4, &v), 0);
    CHECK_INT(v, 4);
    v = 0;
    CHECK_INT(jf_long_or_400(&res, body, "null", 1, 5, 4, &v), 0);
    CHECK_INT(v, 4);
    NO_REPLY(&res);
    /* bounds are inclusive */
    CHECK_INT(jf_long_or_400(&res, body, "n", 3, 3, 0, &v), 0);
    CHECK_INT(v, 3);
    CHECK_INT(jf_long_or_400(&res, body, "n", 4, 5, 0, &v), -1);
    REPLY(&res, E_INVALID_REQUEST, "'n' must be an integer between 4 and 5");
    CHECK_INT(jf_long_or_400(&res, body, "n", 1, 2, 0, &v), -1);
    REPLY(&res, E_INVALID_REQUEST, "between 1 and 2");
    CHECK_INT(jf_long_or_400(&res, body, "neg", 0, 10, 0, &v), -1);
    REPLY(&res, E_INVALID_REQUEST, NULL);
    /* integers beyond int64 and at its limit are refused by the bound */
    CHECK_INT(jf_long_or_400(&res, body, "big", 1, 1000000000L, 0, &v), -1);
    REPLY(&res, E_INVALID_REQUEST, NULL);
    CHECK_INT(jf_long_or_400(&res, body, "int64max", 1, 1000000000L, 0, &v), -1);
    REPLY(&res, E_INVALID_REQUEST, NULL);
    /* doubles are not integers, even 3.0 */
    CHECK_INT(jf_long_or_400(&res, body, "d", 1, 5, 0, &v), -1);
    REPLY(&res, E_INVALID_REQUEST, "'d' must be an integer");
    CHECK_INT(jf_long_or_400(&res, body, "d2", 1, 5, 0, &v), -1);
    REPLY(&res, E_INVALID_REQUEST, NULL);
    /* nor are strings, booleans, objects */
    CHECK_INT(jf_long_or_400(&res, body, "str5", 1, 5, 0, &v), -1);
    REPLY(&res, E_INVALID_REQUEST, "'str5' must be an integer");
    CHECK_INT(jf_long_or_400(&res, body, "t", 0, 5, 0, &v), -1);
    REPLY(&res, E_INVALID_REQUEST, NULL);
    CHECK_INT(jf_long_or_400(&res, body, "obj", 0, 5, 0, &v), -1);
    REPLY(&res, E_INVALID_REQUEST, NULL);
    response_release(&res);
}

static void test_bool(void)
{
    struct response res;
    int b = -1;
    response_init(&res, "r");
    CHECK_INT(jf_bool_or_400(&res, body, "t", 0, &b), 0);
    CHECK_INT(b, 1);
    CHECK_INT(jf_bool_or_400(&res, body, "f", 1, &b), 0);
    CHECK_INT(b, 0);
    CHECK_INT(jf_bool_or_400(&res, body, "missing", 1, &b), 0);
    CHECK_INT(b, 1);
    CHECK_INT(jf_bool_or_400(&res, body, "null", 0, &b), 0);
    CHECK_INT(b, 0);
    NO_REPLY(&res);
    /* 1, "true", 0 are not booleans */
    CHECK_INT(jf_bool_or_400(&res, body, "n", 0, &b), -1);
    REPLY(&res, E_INVALID_REQUEST, "'n' must be true or false");
    CHECK_INT(jf_bool_or_400(&res, body, "zero", 0, &b), -1);
    REPLY(&res, E_INVALID_REQUEST, NULL);
    CHECK_INT(jf_bool_or_400(&res, body, "s", 0, &b), -1);
    REPLY(&res, E_INVALID_REQUEST, NULL);
    response_release(&res);
}

static void test_object(void)
{
    struct response res;
    struct json_object *o = (struct json_object *)&res; /* any non-NULL sentinel */
    response_init(&res, "r");
    CHECK_INT(jf_object_or_400(&res, body, "obj", &o), 0);
    CHECK(o != NULL && json_object_is_type(o, json_type_object));
    CHECK_INT(jf_object_or_400(&res, body, "missing", &o), 0);
    CHECK(o == NULL);
    o = (struct json_object *)&res;
    CHECK_INT(jf_object_or_400(&res, body, "null", &o), 0);
    CHECK(o == NULL);
    NO_REPLY(&res);
    CHECK_INT(jf_object_or_400(&res, body, "arr", &o), -1);
    REPLY(&res, E_INVALID_REQUEST, "'arr' must be an object");
    CHECK(o == NULL);
    CHECK_INT(jf_object_or_400(&res, body, "s", &o), -1);
    REPLY(&res, E_INVALID_REQUEST, NULL);
    CHECK_INT(jf_object_or_400(&res, body, "n", &o), -1);
    REPLY(&res, E_INVALID_REQUEST, NULL);
    response_release(&res);
}

static void test_string_list(void)
{
    struct response res;
    struct json_object *l = NULL;
    response_init(&res, "r");

    CHECK_INT(jf_string_list_or_400(&res, body, "arr", 5, 10, 0, &l), 0);
    CHECK(l != NULL && json_object_array_length(l) == 2);
    CHECK_INT(jf_string_list_or_400(&res, body, "arr_empty", 5, 10, 0, &l), 0);
    CHECK(l != NULL && json_object_array_length(l) == 0);
    CHECK_INT(jf_string_list_or_400(&res, body, "missing", 5, 10, 0, &l), 0);
    CHECK(l == NULL);
    CHECK_INT(jf_string_list_or_400(&res, body, "null", 5, 10, 0, &l), 0);
    CHECK(l == NULL);
    NO_REPLY(&res);
    /* item count: exactly max passes, one more is LIMIT_EXCEEDED */
    CHECK_INT(jf_string_list_or_400(&res, body, "arr3", 3, 10, 0, &l), 0);
    CHECK_INT(jf_string_list_or_400(&res, body, "arr3", 2, 10, 0, &l), -1);
    REPLY(&res, E_LIMIT_EXCEEDED, "'arr3' has more than 2 items (got 3)");
    /* item length, in characters */
    CHECK_INT(jf_string_list_or_400(&res, body, "arr_long", 5, 7, 0, &l), 0);
    CHECK_INT(jf_string_list_or_400(&res, body, "arr_long", 5, 6, 0, &l), -1);
    REPLY(&res, E_LIMIT_EXCEEDED, "exceeds 6 characters (got 7)");
    CHECK_INT(jf_string_list_or_400(&res, body, "arr_cjk", 5, 2, 0, &l), 0);
    CHECK_INT(jf_string_list_or_400(&res, body, "arr_cjk", 5, 1, 0, &l), -1);
    REPLY(&res, E_LIMIT_EXCEEDED, NULL);
    /* items must be strings without NUL */
    CHECK_INT(jf_string_list_or_400(&res, body, "arr_mixed", 5, 10, 0, &l), -1);
    REPLY(&res, E_INVALID_REQUEST, "'arr_mixed' must be a list of strings");
    CHECK_INT(jf_string_list_or_400(&res, body, "arr_null", 5, 10, 0, &l), -1);
    REPLY(&res, E_INVALID_REQUEST, "must be a list of strings");
    CHECK_INT(jf_string_list_or_400(&res, body, "arr_nested", 5, 10, 0, &l), -1);
    REPLY(&res, E_INVALID_REQUEST, "must be a list of strings");
    CHECK_INT(jf_string_list_or_400(&res, body, "arr_nul", 5, 10, 0, &l), -1);
    REPLY(&res, E_INVALID_REQUEST, "without NUL");
    /* a lone string: only when scalar_ok, and checked like an item */
    l = NULL;
    CHECK_INT(jf_string_list_or_400(&res, body, "lone", 5, 10, 1, &l), 0);
    CHECK(l != NULL && json_object_is_type(l, json_type_string));
    NO_REPLY(&res);
    CHECK_INT(jf_string_list_or_400(&res, body, "lone", 5, 3, 1, &l), -1);
    REPLY(&res, E_LIMIT_EXCEEDED, NULL);
    CHECK_INT(jf_string_list_or_400(&res, body, "nul", 5, 10, 1, &l), -1);
    REPLY(&res, E_INVALID_REQUEST, "without NUL");
    CHECK_INT(jf_string_list_or_400(&res, body, "lone", 5, 10, 0, &l), -1);
    REPLY(&res, E_INVALID_REQUEST, "'lone' must be a list of strings");
    /* other types */
    CHECK_INT(jf_string_list_or_400(&res, body, "n", 5, 10, 1, &l), -1);
    REPLY(&res, E_INVALID_REQUEST, NULL);
    CHECK_INT(jf_string_list_or_400(&res, body, "obj", 5, 10, 1, &l), -1);
    REPLY(&res, E_INVALID_REQUEST, NULL);
    response_release(&res);
}

static void test_jf_str(void)
{
    struct json_object *v;
    CHECK(json_object_object_get_ex(body, "s", &v));
    CHECK_STR(jf_str(v), "hello");
    CHECK(json_object_object_get_ex(body, "n", &v));
    CHECK(jf_str(v) == NULL);
    CHECK(jf_str(NULL) == NULL);
    CHECK_STR(jf_member_str(body, "s"), "hello");
    CHECK(jf_member_str(body, "n") == NULL);
    CHECK(jf_member_str(body, "null") == NULL);
    CHECK(jf_member_str(body, "missing") == NULL);
    CHECK(jf_member_str(NULL, "s") == NULL);
}

/* Duplicate keys are refused (json-c would keep the last value silently),
 * at any depth, after escapes are decoded, naming the key; distinct keys and
 * the same key in sibling objects are fine. */
static void test_duplicate_keys(void)
{
    static const struct {
        const char *text, *dup; /* dup NULL: accepted */
    } cases[] = {
        {"{\"a\":1,\"b\":2}", NULL},
        {"{\"a\":1,\"a\":2}", "a"},
        {"{\"role\":\"reader\",\"x\":[1,{\"k\":1}],\"role\":\"admin\"}", "role"},
        {"[{\"a\":1},{\"a\":2}]", NULL},
        {"{\"a\":{\"a\":1},\"b\":{\"a\":2}}", NULL},
        {"{\"o\":{\"x\":1,\"y\":{},\"x\":2}}", "x"},
        {"{\"p\":{\"q\":{}},\"r\":[{\"s\":1,\"t\":{\"u\":1,\"u\":1}}]}", "u"},
        {"{\"a\":1,\"\\u0061\":2}", "a"},
        {"{\"k:\":1,\"k\":2}", NULL},
        {"{\"a\":\"{\\\"a\\\":1,\\\"a\\\":2}\"}", NULL},
        {"{\"a\":{\"b\":{\"b\":1,\"b\":2}},\"a\":3}", "a"},
        {"{}", NULL},
        {"[[],{},{\"x\":{}}]", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct json_object *v = NULL;
        const char *why = NULL;
        struct buf key;
        int rc;
        buf_init(&key, 1024);
        rc = json_parse_whole_ex(cases[i].text, strlen(cases[i].text), &v, &why, &key);
        if (cases[i].dup) {
            if (!CHECK(rc == -1))
                fprintf(stderr, "    accepted: %s\n", cases[i].text);
            CHECK(v == NULL);
            CHECK_STR(key.data, cases[i].dup);
            CHECK(why && strstr(why, "duplicate key"));
            /* the plain form refuses it too */
            CHECK(json_parse_whole(cases[i].text, strlen(cases[i].text), &v, &why) == -1);
        } else {
            if (!CHECK(rc == 0))
                fprintf(stderr, "    refused (%s): %s\n", why, cases[i].text);
            CHECK_STR(key.data, "");
        }
        json_object_put(v);
        buf_release(&key);
    }
    {
        /* at the deepest level json-c parses (63), a duplicate is still found */
        struct buf deep;
        struct json_object *v = NULL;
        const char *why;
        struct buf key;
        buf_init(&deep, 4096);
        buf_init(&key, 1024);
        for (int i = 0; i < 62; i++)
            buf_adds(&deep, "{\"k\":");
        buf_adds(&deep, "{\"z\":1,\"z\":2}");
        for (int i = 0; i < 62; i++)
            buf_addch(&deep, '}');
        CHECK(json_parse_whole_ex(deep.data, deep.len, &v, &why, &key) == -1);
        CHECK_STR(key.data, "z");
        buf_release(&deep);
        buf_release(&key);
    }
}

int main(void)
{
    body = json_tokener_parse(BODY);
    if (!CHECK(body != NULL))
        return test_summary();
    {
        /* the fixture really holds a NUL inside "nul" */
        struct json_object *v;
        CHECK(json_object_object_get_ex(body, "nul", &v) && json_object_get_string_len(v) == 3);
    }
    test_string();
    test_long();
    test_bool();
    test_object();
    test_string_list();
    test_jf_str();
    test_duplicate_keys();
    json_object_put(body);
    return test_summary();
}
