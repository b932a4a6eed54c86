/* test_frontmatter: YAML front matter (fcgi/frontmatter.c). Splitting follows
 * the reference's regex \A---[ \t]*\r?\n(.*?\r?\n)---[ \t]*\r?\n? (DOTALL):
 * CRLF, trailing blanks, "----" closing, no closing, closing at the end.
 * Parsing resolves plain scalars as PyYAML safe_load does (yes/no/on/off,
 * null/~, integers; dates stay text); invalid YAML and non-mappings give
 * NULL. Rendering quotes strings that would read back as another type, writes
 * lists in flow style and Unicode unescaped; parse(render(x)) == x. */
#include "harness.h"
#include "base/buf.h"
#include "domain/frontmatter.h"

#include <stdlib.h>
#include <string.h>

/* ---- helpers ---- */

/* Split s; returns "yaml|body" or "none" (static). */
static const char *split(const char *s)
{
    static char out[4096];
    size_t yo = 99, yl = 99, bo = 99;
    if (!frontmatter_split(s, strlen(s), &yo, &yl, &bo)) {
        snprintf(out, sizeof out, "none(body_off=%zu)", bo);
        return out;
    }
    snprintf(out, sizeof out, "%.*s|%s", (int)yl, s + yo, s + bo);
    return out;
}

/* Parse s; the compact JSON of the front matter or "NULL", and the body. */
static const char *parse(const char *s, const char **body)
{
    static char out[4096];
    size_t bo = 12345;
    struct json_object *o = frontmatter_parse(s, strlen(s), &bo);
    snprintf(out, sizeof out, "%s",
             o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                       JSON_C_TO_STRING_NOSLASHESCAPE)
               : "NULL");
    if (body)
        *body = s + bo;
    json_object_put(o);
    return out;
}

/* Render the JSON object text j; the YAML (static). */
static const char *render(const char *j)
{
    static char out[4096];
    struct json_object *o = json_tokener_parse(j);
    struct buf b;
    buf_init(&b, 1 << 20);
    if (!o || frontmatter_render(o, &b) != 0)
        snprintf(out, sizeof out, "RENDER FAILED");
    else
        snprintf(out, sizeof out, "%s", b.data);
    json_object_put(o);
    buf_release(&b);
    return out;
}

/* ---- splitting ---- */

static void test_split(void)
{
    CHECK_STR(split("---\ntitle: x\n---\nbody"), "title: x\n|body");
    /* the body keeps what follows the closing line, leading blank line included */
    CHECK_STR(split("---\ntitle: x\n---\n\nbody\n"), "title: x\n|\nbody\n");
    /* CRLF everywhere */
    CHECK_STR(split("---\r\ntitle: x\r\ntags: [a]\r\n---\r\nbody\r\n"),
              "title: x\r\ntags: [a]\r\n|body\r\n");
    /* blanks after the markers */
    CHECK_STR(split("--- \t\ntitle: x\n---  \nbody"), "title: x\n|body");
    /* the closing newline is optional: closing at the very end, or text right after */
    CHECK_STR(split("---\ntitle: x\n---"), "title: x\n|");
    CHECK_STR(split("---\ntitle: x\n---body"), "title: x\n|body");
    /* "----" closes after three dashes: the fourth belongs to the body */
    CHECK_STR(split("---\ntitle: x\n----\nbody"), "title: x\n|-\nbody");
    /* ...but "----" does not open */
    CHECK_STR(split("----\ntitle: x\n---\nbody"), "none(body_off=0)");
    /* no closing line */
    CHECK_STR(split("---\ntitle: x\nbody"), "none(body_off=0)");
    CHECK_STR(split("---\ntitle: x\n"), "none(body_off=0)");
    /* the opening must be the very first bytes */
    CHECK_STR(split(" ---\ntitle: x\n---\nbody"), "none(body_off=0)");
    CHECK_STR(split("\n---\ntitle: x\n---\nbody"), "none(body_off=0)");
    CHECK_STR(split("---title\n---\n"), "none(body_off=0)");
    /* the YAML group needs at least a newline: "---\n---\n" is not a block */
    CHECK_STR(split("---\n---\nbody"), "none(body_off=0)");
    CHECK_STR(split("---\n\n---\nbody"), "\n|body");
    /* the shortest block wins */
    CHECK_STR(split("---\na: 1\n---\nb: 2\n---\nbody"), "a: 1\n|b: 2\n---\nbody");
    /* "---" inside a line does not close */
    CHECK_STR(split("---\na: x---y\n---\nbody"), "a: x---y\n|body");
    CHECK_STR(split(""), "none(body_off=0)");
    CHECK_STR(split("--"), "none(body_off=0)");
}

/* ---- parsing ---- */

static void test_parse_scalars(void)
{
    const char *body;
    CHECK_STR(parse("---\ntitle: ROI Calculation\ntags: [finance, computation]\n"
                    "created: 2026-04-26\nsource: manual\n---\n\nROI = (revenue - cost) / cost\n",
                    &body),
              "{\"title\":\"ROI Calculation\",\"tags\":[\"finance\",\"computation\"],"
              "\"created\":\"2026-04-26\",\"source\":\"manual\"}");
    CHECK_STR(body, "\nROI = (revenue - cost) / cost\n");
    /* YAML 1.1 booleans as PyYAML resolves them */
    CHECK_STR(
        parse("---\na: yes\nb: no\nc: on\nd: off\ne: true\nf: False\ng: YES\nh: Off\n---\n", NULL),
        "{\"a\":true,\"b\":false,\"c\":true,\"d\":false,\"e\":true,\"f\":false,"
        "\"g\":true,\"h\":false}");
    /* y / n stay strings in PyYAML */
    CHECK_STR(parse("---\na: y\nb: n\nc: Y\n---\n", NULL), "{\"a\":\"y\",\"b\":\"n\",\"c\":\"Y\"}");
    /* null forms */
    CHECK_STR(parse("---\na: null\nb: ~\nc:\nd: NULL\ne: Null\n---\n", NULL),
              "{\"a\":null,\"b\":null,\"c\":null,\"d\":null,\"e\":null}");
    /* integers */
    CHECK_STR(parse("---\na: 42\nb: -7\nc: +3\nd: 0\n---\n", NULL),
              "{\"a\":42,\"b\":-7,\"c\":3,\"d\":0}");
    /* dates stay text, as str(date) gives YYYY-MM-DD */
    CHECK_STR(parse("---\ncreated: 2026-04-27\n---\n", NULL), "{\"created\":\"2026-04-27\"}");
    /* quoted scalars are always strings */
    CHECK_STR(parse("---\na: \"yes\"\nb: 'null'\nc: \"42\"\nd: ''\n---\n", NULL),
              "{\"a\":\"yes\",\"b\":\"null\",\"c\":\"42\",\"d\":\"\"}");
    /* not resolvable: plain text */
    CHECK_STR(parse("---\na: 4 2\nb: 42abc\nc: '-'\n---\n", NULL),
              "{\"a\":\"4 2\",\"b\":\"42abc\",\"c\":\"-\"}");
    /* nested lists and mappings */
    CHECK_STR(parse("---\ntags:\n  - a\n  - 1\n  - true\nm: {k: v}\n---\n", NULL),
              "{\"tags\":[\"a\",1,true],\"m\":{\"k\":\"v\"}}");
    /* Unicode and CRLF */
    CHECK_STR(parse("---\r\ntitle: ROI 计算标准\r\ntags: [财务, 计算]\r\n---\r\n正文", &body),
              "{\"title\":\"ROI 计算标准\",\"tags\":[\"财务\",\"计算\"]}");
    CHECK_STR(body, "正文");
    /* "----" closing: the body starts with the fourth dash */
    CHECK_STR(parse("---\ntitle: x\n----\nbody", &body), "{\"title\":\"x\"}");
    CHECK_STR(body, "-\nbody");
}

static void test_parse_unusable(void)
{
    const char *body;
    const char *bad = "---\n: invalid: yaml: [\n---\nContent.";
    /* invalid YAML: NULL and the whole text is body */
    CHECK_STR(parse(bad, &body), "NULL");
    CHECK_STR(body, bad);
    CHECK_STR(parse("---\ntitle: [unclosed\n---\nbody", &body), "NULL");
    CHECK_STR(parse("---\na: 1\n  b: 2\n---\nbody", &body), "NULL");
    /* not a mapping: a list, a scalar, empty */
    const char *list = "---\n- a\n- b\n---\nbody";
    CHECK_STR(parse(list, &body), "NULL");
    CHECK_STR(body, list);
    CHECK_STR(parse("---\njust text\n---\nbody", NULL), "NULL");
    CHECK_STR(parse("---\n42\n---\nbody", NULL), "NULL");
    CHECK_STR(parse("---\n\n---\nbody", NULL), "NULL");
    CHECK_STR(parse("---\n# only a comment\n---\nbody", NULL), "NULL");
    /* no front matter at all */
    CHECK_STR(parse("Just plain text.", &body), "NULL");
    CHECK_STR(body, "Just plain text.");
    CHECK_STR(parse("", &body), "NULL");
    /* an empty mapping is a mapping */
    CHECK_STR(parse("---\n{}\n---\nbody", &body), "{}");
    CHECK_STR(body, "body");
    /* a complex key cannot become JSON: unusable */
    CHECK_STR(parse("---\n? [a, b]\n: v\n---\nbody", NULL), "NULL");
    /* deep nesting is refused rather than recursed into */
    {
        struct buf deep;
        buf_init(&deep, 1 << 20);
        buf_adds(&deep, "---\na: ");
        for (int i = 0; i < 100; i++)
            buf_addch(&deep, '[');
        for (int i = 0; i < 100; i++)
            buf_addch(&deep, ']');
        buf_adds(&deep, "\n---\nbody");
        CHECK_STR(parse(deep.data, NULL), "NULL");
        buf_release(&deep);
    }
}

/* ---- rendering ---- */

static void test_render(void)
{
    CHECK_STR(render("{\"title\":\"ROI Calculation\",\"tags\":[\"finance\",\"computation\"],"
                     "\"source\":\"manual\"}"),
              "---\ntitle: ROI Calculation\ntags: [finance, computation]\nsource: manual\n---\n");
    /* keys in the object's order; booleans, ints, null plain */
    CHECK_STR(render("{\"b\":true,\"a\":false,\"n\":42,\"z\":null}"),
              "---\nb: true\na: false\nn: 42\nz: null\n---\n");
    /* strings that would resolve to another type are quoted */
    CHECK_STR(render("{\"a\":\"yes\",\"b\":\"No\",\"c\":\"on\",\"d\":\"null\",\"e\":\"~\","
                     "\"f\":\"42\",\"g\":\"-7\",\"h\":\"\",\"i\":\"true\"}"),
              "---\na: \"yes\"\nb: \"No\"\nc: \"on\"\nd: \"null\"\ne: \"~\"\nf: \"42\"\n"
              "g: \"-7\"\nh: \"\"\ni: \"true\"\n---\n");
    /* ...but strings that stay strings are not */
    CHECK_STR(render("{\"a\":\"y\",\"b\":\"2026-04-27\",\"c\":\"42abc\"}"),
              "---\na: y\nb: 2026-04-27\nc: 42abc\n---\n");
    /* Unicode is written as is, not escaped */
    CHECK_STR(render("{\"title\":\"ROI 计算标准\",\"tags\":[\"财务\",\"café\"]}"),
              "---\ntitle: ROI 计算标准\ntags: [财务, café]\n---\n");
    /* flow lists: empty, and elements a flow list would split are quoted */
    CHECK_STR(render("{\"tags\":[]}"), "---\ntags: []\n---\n");
    CHECK_STR(render("{\"tags\":[\"a,b\",\"[x]\",\"yes\",\"7\",\"plain\"]}"),
              "---\ntags: [\"a,b\", \"[x]\", \"yes\", \"7\", plain]\n---\n");
    /* YAML indicators are left to libyaml: the result must still parse back */
    {
        const char *r = render("{\"a\":\"key: value\",\"b\":\"#hash\",\"c\":\"- dash\"}");
        CHECK(strstr(r, "a: key: value") == NULL);
        CHECK_STR(parse(r, NULL), "{\"a\":\"key: value\",\"b\":\"#hash\",\"c\":\"- dash\"}");
    }
    /* a full output buffer is reported */
    {
        struct json_object *o = json_tokener_parse("{\"title\":\"a long enough title\"}");
        struct buf small;
        buf_init(&small, 10);
        CHECK_INT(frontmatter_render(o, &small), -1);
        buf_release(&small);
        json_object_put(o);
    }
}

/* parse(render(x)) == x for values front matter holds. */
static void test_round_trip(void)
{
    static const char *const cases[] = {
        "{\"title\":\"ROI Calculation\",\"tags\":[\"finance\",\"computation\"],"
        "\"created\":\"2026-04-26\",\"updated\":\"2026-04-26\",\"source\":\"manual\"}",
        "{\"title\":\"bare\",\"description\":\"\",\"alwaysApply\":true}",
        "{\"a\":\"yes\",\"b\":\"no\",\"c\":\"on\",\"d\":\"off\",\"e\":\"null\",\"f\":\"~\","
        "\"g\":\"42\",\"h\":\"-7\",\"i\":\"+3\",\"j\":\"\",\"k\":\"True\",\"l\":\"NULL\"}",
        "{\"title\":\"ROI 计算标准\",\"tags\":[\"财务\",\"café\",\"Москва\"],\"n\":0}",
        "{\"tags\":[\"a,b\",\"[x]\",\"{y}\",\"yes\",\"7\",\"\",\"plain words\"]}",
        "{\"q\":\"He said \\\"hi\\\"\",\"s\":\"it's\",\"colon\":\"key: value\","
        "\"hash\":\"#tag\",\"dash\":\"- item\",\"star\":\"*ref\",\"amp\":\"&anchor\","
        "\"pct\":\"%TAG\",\"at\":\"@user\",\"tick\":\"`x`\",\"bang\":\"!tag\","
        "\"pipe\":\"|\",\"gt\":\">\",\"q2\":\"?\",\"dash3\":\"---\"}",
        "{\"multi\":\"line one\\nline two\",\"tab\":\"a\\tb\",\"lead\":\" padded \"}",
        "{\"alwaysApply\":false,\"score\":5,\"none\":null,\"nested\":{\"k\":[1,\"2\",true]}}",
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *r = render(cases[i]);
        struct json_object *want = json_tokener_parse(cases[i]);
        size_t bo = 0;
        char *text = malloc(strlen(r) + 8);
        struct json_object *got;
        sprintf(text, "%sbody", r);
        got = frontmatter_parse(text, strlen(text), &bo);
        if (!CHECK(got && json_object_equal(got, want)))
            fprintf(stderr, "    case %zu rendered as:\n%s    parsed back: %s\n", i, r,
                    got ? json_object_to_json_string(got) : "NULL");
        CHECK_STR(text + bo, "body");
        json_object_put(got);
        json_object_put(want);
        free(text);
    }
}

/* ---- the budget: aliases refused, values, bytes and depth bounded ---- */

/* frontmatter_read of s: its status, with the reason (or "") and the body. */
static enum frontmatter_status read_fm(const char *s, const char **why, const char **body)
{
    struct json_object *meta = NULL;
    size_t bo = 12345;
    enum frontmatter_status st = frontmatter_read(s, strlen(s), &meta, &bo, why);
    if (!*why)
        *why = "";
    *body = s + bo;
    CHECK((st == FRONTMATTER_OK) == (meta != NULL));
    json_object_put(meta);
    return st;
}

/* "---\n<head><n items of item, joined by sep><tail>\n---\nbody\n" (caller frees). */
static char *repeated_fm(const char *head, const char *item, const char *sep, size_t n,
                         const char *tail)
{
    struct buf b;
    buf_init(&b, 1 << 26);
    buf_adds(&b, "---\n");
    buf_adds(&b, head);
    for (size_t i = 0; i < n; i++) {
        if (i)
            buf_adds(&b, sep);
        buf_adds(&b, item);
    }
    buf_adds(&b, tail);
    buf_adds(&b, "\n---\nbody\n");
    return buf_detach(&b, NULL);
}

static void test_budget(void)
{
    const char *why, *body;
    char *s;
    size_t bo = 99;
    /* A six-level "billion laughs" (10^6 leaves) is refused at its first anchor. */
    const char *bomb = "---\na0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
                       "a1: &a1 [*a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0]\n"
                       "a2: &a2 [*a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1]\n"
                       "a3: &a3 [*a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2]\n"
                       "a4: &a4 [*a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3]\n"
                       "a5: &a5 [*a4, *a4, *a4, *a4, *a4, *a4, *a4, *a4, *a4, *a4]\n"
                       "a6: &a6 [*a5, *a5, *a5, *a5, *a5, *a5, *a5, *a5, *a5, *a5]\n"
                       "---\nbody\n";
    CHECK_INT(read_fm(bomb, &why, &body), FRONTMATTER_REFUSED);
    CHECK(strstr(why, "anchors and aliases") != NULL);
    CHECK_STR(body, "body\n");
    /* frontmatter_parse treats it as no front matter: all of it is body */
    CHECK(frontmatter_parse(bomb, strlen(bomb), &bo) == NULL);
    CHECK_INT((int)bo, 0);
    /* every anchor or alias, however small: on a value, a list, a key, a merge */
    CHECK_INT(read_fm("---\na: &x 1\n---\nb", &why, &body), FRONTMATTER_REFUSED);
    CHECK_INT(read_fm("---\na: &x [1]\n---\nb", &why, &body), FRONTMATTER_REFUSED);
    CHECK_INT(read_fm("---\n&k a: 1\n---\nb", &why, &body), FRONTMATTER_REFUSED);
    CHECK_INT(read_fm("---\na: &x {b: 1}\nc:\n  <<: *x\n---\nb", &why, &body), FRONTMATTER_REFUSED);
    CHECK_INT(read_fm("---\na: &x [*x]\n---\nb", &why, &body), FRONTMATTER_REFUSED);
    CHECK_STR(why, "YAML anchors and aliases (&name, *name) are not accepted");
    /* '&' and '*' inside text are just text */
    CHECK_INT(read_fm("---\na: \"&x *y\"\nb: x & y\n---\nb", &why, &body), FRONTMATTER_OK);

    /* values: root + list + 4094 items = 4096 pass, one more is refused */
    s = repeated_fm("a: [", "1", ",", FRONTMATTER_MAX_NODES - 2, "]");
    CHECK_INT(read_fm(s, &why, &body), FRONTMATTER_OK);
    free(s);
    s = repeated_fm("a: [", "1", ",", FRONTMATTER_MAX_NODES - 1, "]");
    CHECK_INT(read_fm(s, &why, &body), FRONTMATTER_REFUSED);
    CHECK_STR(why, "more than 4096 values");
    free(s);
    /* bytes: one long text, and escapes that grow in JSON (\x01 is \u0001) */
    s = repeated_fm("a: \"", "x", "", FRONTMATTER_MAX_BYTES, "\"");
    CHECK_INT(read_fm(s, &why, &body), FRONTMATTER_REFUSED);
    CHECK_STR(why, "larger than 262144 bytes as JSON");
    free(s);
    s = repeated_fm("a: \"", "\\x01", "", FRONTMATTER_MAX_BYTES / 5, "\"");
    CHECK_INT(read_fm(s, &why, &body), FRONTMATTER_REFUSED);
    CHECK_STR(why, "larger than 262144 bytes as JSON");
    free(s);
    s = repeated_fm("a: \"", "x", "", FRONTMATTER_MAX_BYTES / 2, "\"");
    CHECK_INT(read_fm(s, &why, &body), FRONTMATTER_OK);
    free(s);
    /* depth: 32 levels below the root pass, 33 are refused */
    {
        char deep[256];
        snprintf(deep, sizeof deep, "---\na: %.31s1%.31s\n---\nb",
                 "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
                 "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]");
        CHECK_INT(read_fm(deep, &why, &body), FRONTMATTER_OK);
        snprintf(deep, sizeof deep, "---\na: %.32s1%.32s\n---\nb",
                 "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
                 "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]");
        CHECK_INT(read_fm(deep, &why, &body), FRONTMATTER_REFUSED);
        CHECK_STR(why, "nested deeper than 32 levels");
    }
    /* what is not front matter stays so: no block, bad YAML, not a mapping */
    CHECK_INT(read_fm("no block", &why, &body), FRONTMATTER_NONE);
    CHECK_INT(read_fm("---\na: [\n---\nb", &why, &body), FRONTMATTER_NONE);
    CHECK_STR(body, "---\na: [\n---\nb");
    CHECK_INT(read_fm("---\n- a\n---\nb", &why, &body), FRONTMATTER_NONE);
    CHECK_INT(read_fm("---\n---\nb", &why, &body), FRONTMATTER_NONE);
}

int main(void)
{
    test_split();
    test_parse_scalars();
    test_parse_unusable();
    test_render();
    test_round_trip();
    test_budget();
    return test_summary();
}
