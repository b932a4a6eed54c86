/* test_document: documents of the file view (fcgi/domain/document.c, the
 * format of docs/knowledge-files.md): document_fill's field coercion (title defaulting to
 * the stem, tags list/scalar/null, source "manual", description "",
 * alwaysApply defaulting to true with false/"false"/no/null/0 false),
 * document_prepare's auto header (rules and experiences) and its limit
 * messages (rule description 100, rules body 350, experiences 2000 characters,
 * exactly-at-limit passing, Unicode characters counted, not bytes), and the
 * helpers document_body, document_with_body, document_for_entry. */
#include "harness.h"
#include "base/buf.h"
#include "domain/document.h"
#include "domain/frontmatter.h"
#include "domain/knowledge.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* ---- helpers ---- */

static void fill(struct knowledge *k, const char *category, const char *path, const char *text)
{
    knowledge_init(k);
    document_fill(k, category, path, text, strlen(text));
}

/* always_apply of a rule whose front matter has the line `alwaysApply: <v>` (or none). */
static int rule_always(const char *value)
{
    struct knowledge k;
    char text[256];
    int v;
    if (value)
        snprintf(text, sizeof text, "---\ntitle: r\nalwaysApply: %s\n---\nbody\n", value);
    else
        snprintf(text, sizeof text, "---\ntitle: r\n---\nbody\n");
    fill(&k, "rules", "r.md", text);
    v = k.always_apply;
    knowledge_release(&k);
    return v;
}

static char today[11];

/* s repeated to n characters' worth (s is one character). */
static char *repeat(const char *s, size_t n)
{
    size_t len = strlen(s);
    char *out = xmalloc(len * n + 1);
    for (size_t i = 0; i < n; i++)
        memcpy(out + i * len, s, len);
    out[len * n] = '\0';
    return out;
}

/* document_prepare of text; returns its status, with the output and the
 * error's message (empty on success). */
static int prepare(const char *category, const char *path, const char *text, struct buf *out,
                   struct buf *err)
{
    struct error e;
    int rc;
    error_init(&e);
    rc = document_prepare(category, path, text, strlen(text), out, &e);
    buf_reset(err);
    if (rc)
        buf_add(err, e.message.data, e.message.len);
    error_release(&e);
    return rc;
}

/* ---- document_fill ---- */

static void test_fill_fields(void)
{
    struct knowledge k;
    fill(&k, "rules", "roi.md",
         "---\ntitle: ROI Calculation\ntags: [finance, computation]\ncreated: 2026-04-26\n"
         "updated: 2026-04-26\nsource: manual\ndescription: How ROI is computed\n"
         "alwaysApply: false\n---\n\nROI = (revenue - cost) / cost\n");
    CHECK_STR(k.title, "ROI Calculation");
    CHECK_STR(k.tags, "[\"finance\",\"computation\"]");
    CHECK_STR(k.source, "manual");
    CHECK_STR(k.description, "How ROI is computed");
    CHECK_INT(k.always_apply, 0);
    /* the body without the blank line after the front matter and trailing whitespace */
    CHECK_STR(k.content, "ROI = (revenue - cost) / cost");
    /* the scenario defaults to the description */
    CHECK_STR(k.scenario, "How ROI is computed");
    /* the document is kept byte for byte; the front matter as JSON, dates as text */
    CHECK(strncmp(k.document, "---\ntitle: ROI Calculation\n", 27) == 0);
    CHECK(strstr(k.meta, "\"created\":\"2026-04-26\"") != NULL);
    knowledge_release(&k);

    /* no front matter: title is the stem, defaults everywhere, the whole text is body */
    fill(&k, "experiences", "cleaning/handle-missing.md", "Just content, no front matter.");
    CHECK_STR(k.title, "handle-missing");
    CHECK_STR(k.tags, "[]");
    CHECK_STR(k.source, "manual");
    CHECK_STR(k.description, "");
    CHECK_INT(k.always_apply, 0); /* only rules apply always */
    CHECK_STR(k.content, "Just content, no front matter.");
    CHECK_STR(k.scenario, "handle-missing"); /* no description: the title */
    CHECK_STR(k.meta, "{}");
    CHECK_STR(k.urls, "[]");
    CHECK_INT(k.types, 0);
    knowledge_release(&k);

    /* invalid YAML: as if there were none, and the whole text is body */
    fill(&k, "experiences", "bad.md", "---\n: invalid: yaml: [\n---\nContent.");
    CHECK_STR(k.title, "bad");
    CHECK_STR(k.content, "---\n: invalid: yaml: [\n---\nContent.");
    CHECK_STR(k.meta, "{}");
    knowledge_release(&k);

    /* a front matter that is not a mapping: the same */
    fill(&k, "rules", "list.md", "---\n- a\n- b\n---\nbody");
    CHECK_STR(k.title, "list");
    CHECK_INT(k.always_apply, 1);
    CHECK_STR(k.content, "---\n- a\n- b\n---\nbody");
    knowledge_release(&k);
}

static void test_fill_coercion(void)
{
    struct knowledge k;
    /* title -> str (Python's str(): True, 42); null -> the stem */
    fill(&k, "experiences", "x/stem-name.md", "---\ntitle: 42\n---\nb");
    CHECK_STR(k.title, "42");
    knowledge_release(&k);
    fill(&k, "experiences", "stem-name.md", "---\ntitle: yes\n---\nb");
    CHECK_STR(k.title, "True");
    knowledge_release(&k);
    fill(&k, "experiences", "stem-name.md", "---\ntitle: null\n---\nb");
    CHECK_STR(k.title, "stem-name");
    knowledge_release(&k);
    fill(&k, "experiences", "stem-name.md", "---\ntitle: '2026-04-27'\n---\nb");
    CHECK_STR(k.title, "2026-04-27");
    knowledge_release(&k);
    /* an empty title falls back to the stem (never an empty title) */
    fill(&k, "experiences", "stem-name.md", "---\ntitle: ''\n---\nb");
    CHECK_STR(k.title, "stem-name");
    knowledge_release(&k);

    /* tags: a list of strings, a scalar as [str], null as [] */
    fill(&k, "experiences", "t.md", "---\ntags: [finance, 42, true, 计算]\n---\nb");
    CHECK_STR(k.tags, "[\"finance\",\"42\",\"True\",\"计算\"]");
    knowledge_release(&k);
    fill(&k, "experiences", "t.md", "---\ntags: finance\n---\nb");
    CHECK_STR(k.tags, "[\"finance\"]");
    knowledge_release(&k);
    fill(&k, "experiences", "t.md", "---\ntags: 7\n---\nb");
    CHECK_STR(k.tags, "[\"7\"]");
    knowledge_release(&k);
    fill(&k, "experiences", "t.md", "---\ntags:\n---\nb");
    CHECK_STR(k.tags, "[]");
    knowledge_release(&k);
    fill(&k, "experiences", "t.md", "---\ntags:\n  - a/b\n  - c d\n---\nb");
    CHECK_STR(k.tags, "[\"a/b\",\"c d\"]"); /* no escaped slashes */
    knowledge_release(&k);

    /* source: default manual, also for null and "" */
    fill(&k, "experiences", "s.md", "---\nsource: agent_summarized\n---\nb");
    CHECK_STR(k.source, "agent_summarized");
    knowledge_release(&k);
    fill(&k, "experiences", "s.md", "---\nsource:\n---\nb");
    CHECK_STR(k.source, "manual");
    knowledge_release(&k);
    fill(&k, "experiences", "s.md", "---\nsource: ''\n---\nb");
    CHECK_STR(k.source, "manual");
    knowledge_release(&k);

    /* description: "" by default, str() otherwise */
    fill(&k, "rules", "d.md", "---\ndescription: 12\n---\nb");
    CHECK_STR(k.description, "12");
    knowledge_release(&k);
    fill(&k, "rules", "d.md", "---\ndescription:\n---\nb");
    CHECK_STR(k.description, "");
    knowledge_release(&k);

    /* entry-view fields kept in the front matter */
    fill(&k, "experiences", "e.md",
         "---\nscenario: when sales drop\ntypes: [tool, strategy, bogus]\n"
         "urls: [https://example.com]\nagent_id: research_agent\nmessage_id: msg-1\n---\nbody");
    CHECK_STR(k.scenario, "when sales drop");
    CHECK_INT(k.types, KTYPE_TOOL | KTYPE_STRATEGY);
    CHECK_STR(k.urls, "[\"https://example.com\"]");
    CHECK_STR(k.agent_id, "research_agent");
    CHECK_STR(k.message_id, "msg-1");
    knowledge_release(&k);

    /* CRLF documents */
    fill(&k, "experiences", "crlf.md", "---\r\ntitle: CRLF\r\ntags: [a]\r\n---\r\n\r\nbody\r\n");
    CHECK_STR(k.title, "CRLF");
    CHECK_STR(k.tags, "[\"a\"]");
    CHECK_STR(k.content, "body");
    knowledge_release(&k);

    /* refilling an entry replaces every document field */
    fill(&k, "rules", "a.md", "---\ntitle: First\ntags: [x]\nalwaysApply: false\n---\none");
    document_fill(&k, "rules", "b.md", "two", 3);
    CHECK_STR(k.title, "b");
    CHECK_STR(k.tags, "[]");
    CHECK_INT(k.always_apply, 1);
    CHECK_STR(k.content, "two");
    knowledge_release(&k);
}

static void test_always_apply(void)
{
    /* absent: true (the default) */
    CHECK_INT(rule_always(NULL), 1);
    CHECK_INT(rule_always("true"), 1);
    CHECK_INT(rule_always("yes"), 1);
    CHECK_INT(rule_always("on"), 1);
    CHECK_INT(rule_always("1"), 1);
    CHECK_INT(rule_always("\"true\""), 1);
    CHECK_INT(rule_always("anything"), 1);
    CHECK_INT(rule_always("[a]"), 1);
    /* false in every spelling; quoted "false" too (a plain truth test of the
     * string "false" would say true: KnowHub does not) */
    CHECK_INT(rule_always("false"), 0);
    CHECK_INT(rule_always("False"), 0);
    CHECK_INT(rule_always("\"false\""), 0);
    CHECK_INT(rule_always("'FALSE'"), 0);
    CHECK_INT(rule_always("no"), 0);
    CHECK_INT(rule_always("\"no\""), 0);
    CHECK_INT(rule_always("off"), 0);
    CHECK_INT(rule_always("\"off\""), 0);
    CHECK_INT(rule_always("0"), 0);
    CHECK_INT(rule_always("\"0\""), 0);
    CHECK_INT(rule_always("''"), 0);
    /* null: bool(None) is False */
    CHECK_INT(rule_always("null"), 0);
    CHECK_INT(rule_always("~"), 0);
    CHECK_INT(rule_always(""), 0);

    /* document_always_apply on its own */
    CHECK_INT(document_always_apply(NULL), 1);
    {
        struct json_object *v = json_object_new_boolean(0);
        CHECK_INT(document_always_apply(v), 0);
        json_object_put(v);
        v = json_object_new_int(2);
        CHECK_INT(document_always_apply(v), 1);
        json_object_put(v);
        v = json_object_new_string("No");
        CHECK_INT(document_always_apply(v), 0);
        json_object_put(v);
        v = json_object_new_string("yes please");
        CHECK_INT(document_always_apply(v), 1);
        json_object_put(v);
    }

    /* experiences never apply always, whatever they say */
    {
        struct knowledge k;
        fill(&k, "experiences", "e.md", "---\nalwaysApply: true\n---\nb");
        CHECK_INT(k.always_apply, 0);
        knowledge_release(&k);
    }
}

/* ---- document_prepare ---- */

static void test_auto_header(void)
{
    struct buf out, err, want;
    buf_init(&out, 1 << 20);
    buf_init(&err, 4096);
    buf_init(&want, 4096);

    /* rules: title, description "", alwaysApply true, created, updated, source, blank line */
    CHECK_INT(prepare("rules", "bare.md", "No front matter here.", &out, &err), 0);
    buf_addf(&want,
             "---\ntitle: bare\ndescription: \"\"\nalwaysApply: true\ncreated: %s\n"
             "updated: %s\nsource: manual\n---\n\nNo front matter here.",
             today, today);
    CHECK_STR(out.data, want.data);
    CHECK_STR(err.data, "");

    /* experiences: no description, no alwaysApply; the stem of a nested path */
    buf_reset(&want);
    CHECK_INT(prepare("experiences", "cleaning/handle-missing.md", "text", &out, &err), 0);
    buf_addf(&want,
             "---\ntitle: handle-missing\ncreated: %s\nupdated: %s\nsource: manual\n---\n\ntext",
             today, today);
    CHECK_STR(out.data, want.data);

    /* the header reads back as the same fields */
    {
        struct knowledge k;
        fill(&k, "rules", "bare.md", (prepare("rules", "bare.md", "Body.", &out, &err), out.data));
        CHECK_STR(k.title, "bare");
        CHECK_STR(k.description, "");
        CHECK_INT(k.always_apply, 1);
        CHECK_STR(k.source, "manual");
        CHECK_STR(k.content, "Body.");
        knowledge_release(&k);
    }

    /* a stem that YAML would read as something else is quoted (unquoted,
     * `title: yes` would read back as a boolean) */
    CHECK_INT(prepare("experiences", "yes.md", "b", &out, &err), 0);
    CHECK(strncmp(out.data, "---\ntitle: \"yes\"\n", 17) == 0);
    CHECK_INT(prepare("experiences", "2024.md", "b", &out, &err), 0);
    CHECK(strncmp(out.data, "---\ntitle: \"2024\"\n", 18) == 0);
    {
        struct knowledge k;
        fill(&k, "experiences", "null.md",
             (prepare("experiences", "null.md", "b", &out, &err), out.data));
        CHECK_STR(k.title, "null");
        knowledge_release(&k);
    }
    /* Unicode stems are written as they are */
    CHECK_INT(prepare("experiences", "财务/库存周转.md", "b", &out, &err), 0);
    CHECK(strncmp(out.data, "---\ntitle: 库存周转\n", strlen("---\ntitle: 库存周转\n")) == 0);

    /* an existing front matter is kept as is */
    {
        const char *doc = "---\ntitle: ROI\ntags: [finance]\n---\n\nROI = x\n";
        CHECK_INT(prepare("rules", "roi.md", doc, &out, &err), 0);
        CHECK_STR(out.data, doc);
    }
    /* an empty mapping counts as missing: header added */
    CHECK_INT(prepare("experiences", "e.md", "---\n{}\n---\nbody", &out, &err), 0);
    CHECK(strncmp(out.data, "---\ntitle: e\n", 13) == 0);
    CHECK(strstr(out.data, "---\n\n---\n{}\n---\nbody") != NULL);
    /* invalid YAML also gets a header, and the old block becomes body */
    CHECK_INT(prepare("experiences", "bad.md", "---\n: x: [\n---\nbody", &out, &err), 0);
    CHECK(strncmp(out.data, "---\ntitle: bad\n", 15) == 0);
    /* CRLF front matter is recognised (no header added) */
    CHECK_INT(prepare("rules", "c.md", "---\r\ntitle: C\r\n---\r\nbody\r\n", &out, &err), 0);
    CHECK_STR(out.data, "---\r\ntitle: C\r\n---\r\nbody\r\n");
    /* the empty document: header and nothing else */
    CHECK_INT(prepare("experiences", "empty.md", "", &out, &err), 0);
    CHECK(out.len > 0 && out.data[out.len - 1] == '\n');

    buf_release(&out);
    buf_release(&err);
    buf_release(&want);
}

static void test_limits(void)
{
    struct buf out, err, doc;
    char *s;
    buf_init(&out, 1 << 22);
    buf_init(&err, 4096);
    buf_init(&doc, 1 << 22);

    /* rules body: exactly 350 passes, 351 fails with the limit's message */
    s = repeat("x", 350);
    CHECK_INT(prepare("rules", "r.md", s, &out, &err), 0);
    CHECK_STR(err.data, "");
    free(s);
    s = repeat("x", 351);
    CHECK_INT(prepare("rules", "r.md", s, &out, &err), -1);
    CHECK_STR(err.data, "rules body exceeds 350 characters (got 351)");
    free(s);
    /* characters, not bytes: 350 Chinese characters (1050 bytes) pass, 351 fail */
    s = repeat("库", 350);
    CHECK_INT(prepare("rules", "r.md", s, &out, &err), 0);
    free(s);
    s = repeat("库", 351);
    CHECK_INT(prepare("rules", "r.md", s, &out, &err), -1);
    CHECK_STR(err.data, "rules body exceeds 350 characters (got 351)");
    free(s);
    /* four-byte characters count once too */
    s = repeat("\xf0\x9f\x98\x80", 351);
    CHECK_INT(prepare("rules", "r.md", s, &out, &err), -1);
    CHECK_STR(err.data, "rules body exceeds 350 characters (got 351)");
    free(s);
    /* the body is stripped before counting (body.strip()) */
    s = repeat("y", 350);
    buf_reset(&doc);
    buf_addf(&doc, "---\ntitle: r\n---\n\n \t %s \n\n\n", s);
    CHECK_INT(prepare("rules", "r.md", doc.data, &out, &err), 0);
    free(s);
    /* inner whitespace counts */
    s = repeat("z", 349);
    buf_reset(&doc);
    buf_addf(&doc, "%s  z", s);
    CHECK_INT(prepare("rules", "r.md", doc.data, &out, &err), -1);
    CHECK_STR(err.data, "rules body exceeds 350 characters (got 352)");
    free(s);

    /* experiences: 2000 / 2001 */
    s = repeat("e", 2000);
    CHECK_INT(prepare("experiences", "a/e.md", s, &out, &err), 0);
    free(s);
    s = repeat("经", 2001);
    CHECK_INT(prepare("experiences", "a/e.md", s, &out, &err), -1);
    CHECK_STR(err.data, "experiences body exceeds 2000 characters (got 2001)");
    free(s);
    /* a rules-sized limit does not apply to experiences */
    s = repeat("x", 351);
    CHECK_INT(prepare("experiences", "e.md", s, &out, &err), 0);
    free(s);

    /* rule description: 100 passes, 101 fails; characters, not bytes */
    s = repeat("d", 100);
    buf_reset(&doc);
    buf_addf(&doc, "---\ntitle: r\ndescription: %s\n---\nbody", s);
    CHECK_INT(prepare("rules", "r.md", doc.data, &out, &err), 0);
    free(s);
    s = repeat("描", 101);
    buf_reset(&doc);
    buf_addf(&doc, "---\ntitle: r\ndescription: %s\n---\nbody", s);
    CHECK_INT(prepare("rules", "r.md", doc.data, &out, &err), -1);
    CHECK_STR(err.data, "Rule description exceeds 100 characters (got 101)");
    free(s);
    s = repeat("描", 100);
    buf_reset(&doc);
    buf_addf(&doc, "---\ntitle: r\ndescription: %s\n---\nbody", s);
    CHECK_INT(prepare("rules", "r.md", doc.data, &out, &err), 0);
    free(s);
    /* Not only a string description: a list description is
     * checked too, as the text it is stored as (issue 12). */
    s = repeat("d", 150);
    buf_reset(&doc);
    buf_addf(&doc, "---\ntitle: r\ndescription: [%s]\n---\nbody", s);
    CHECK_INT(prepare("rules", "r.md", doc.data, &out, &err), -1);
    free(s);
    /* experiences' descriptions are not limited */
    s = repeat("d", 300);
    buf_reset(&doc);
    buf_addf(&doc, "---\ntitle: e\ndescription: %s\n---\nbody", s);
    CHECK_INT(prepare("experiences", "e.md", doc.data, &out, &err), 0);
    free(s);
    /* the description is checked before the body */
    {
        char *d = repeat("d", 101), *b = repeat("b", 400);
        buf_reset(&doc);
        buf_addf(&doc, "---\ntitle: r\ndescription: %s\n---\n%s", d, b);
        CHECK_INT(prepare("rules", "r.md", doc.data, &out, &err), -1);
        CHECK_STR(err.data, "Rule description exceeds 100 characters (got 101)");
        free(d);
        free(b);
    }
    /* the limits apply after the auto header: the header is not body */
    s = repeat("h", 350);
    CHECK_INT(prepare("rules", "no-header.md", s, &out, &err), 0);
    CHECK(out.len > 350 + 60);
    free(s);
    /* a document larger than the output buffer's maximum */
    {
        struct buf tiny;
        buf_init(&tiny, 64);
        s = repeat("x", 100);
        CHECK_INT(prepare("experiences", "e.md", s, &tiny, &err), -1);
        CHECK_STR(err.data, "Document too large");
        free(s);
        buf_release(&tiny);
    }

    buf_release(&out);
    buf_release(&err);
    buf_release(&doc);
}

/* ---- the other helpers ---- */

static void test_body_helpers(void)
{
    struct buf out;
    buf_init(&out, 1 << 20);
    CHECK_STR(document_body("---\ntitle: x\n---\n\nbody\n"), "\nbody\n");
    CHECK_STR(document_body("no front matter"), "no front matter");
    CHECK_STR(document_body("---\n- list\n---\nbody"), "---\n- list\n---\nbody");

    document_with_body("---\ntitle: x\n---\n\nold body\n", "new body", &out);
    CHECK_STR(out.data, "---\ntitle: x\n---\n\nnew body\n");
    document_with_body("plain old", "new", &out);
    CHECK_STR(out.data, "new\n");

    /* an entry-view entry's document reads back as the entry */
    {
        struct knowledge k, back;
        knowledge_init(&k);
        k.category = xstrdup("experiences");
        k.title = xstrdup("yes");
        k.tags = xstrdup("[\"finance\",\"42\"]");
        k.scenario = xstrdup("当销售下降时");
        k.content = xstrdup("Check the ROI first.");
        k.types = KTYPE_TOOL | KTYPE_PLAN;
        k.urls = xstrdup("[\"https://example.com/a\"]");
        k.agent_id = xstrdup("research_agent");
        k.source = xstrdup("agent");
        document_for_entry(&k, &out);
        fill(&back, "experiences", "research_agent/x.md", out.data);
        CHECK_STR(back.title, "yes");
        CHECK_STR(back.tags, "[\"finance\",\"42\"]");
        CHECK_STR(back.scenario, "当销售下降时");
        CHECK_STR(back.content, "Check the ROI first.");
        CHECK_INT(back.types, KTYPE_TOOL | KTYPE_PLAN);
        CHECK_STR(back.urls, "[\"https://example.com/a\"]");
        CHECK_STR(back.agent_id, "research_agent");
        CHECK_STR(back.source, "agent");
        knowledge_release(&back);
        knowledge_release(&k);
    }
    buf_release(&out);
}

/* Front matter: refused when it has aliases, and held to the entry view's
 * limits as document_fill reads it (a list description counts as its text). */
static void test_front_matter_limits(void)
{
    struct buf out, err;
    char *s, *doc;
    buf_init(&out, 1 << 22);
    buf_init(&err, 4096);
    CHECK_INT(prepare("experiences", "e.md", "---\ntitle: &t T\nscenario: *t\n---\nb", &out, &err),
              -1);
    CHECK_STR(err.data, "Front matter refused: YAML anchors and aliases (&name, *name) are not "
                        "accepted");
    /* title: 200 characters pass, 201 fail; one line only */
    s = repeat("题", 200);
    doc = malloc(strlen(s) + 64);
    sprintf(doc, "---\ntitle: %s\n---\nb", s);
    CHECK_INT(prepare("experiences", "e.md", doc, &out, &err), 0);
    free(s);
    free(doc);
    s = repeat("题", 201);
    doc = malloc(strlen(s) + 64);
    sprintf(doc, "---\ntitle: %s\n---\nb", s);
    CHECK_INT(prepare("experiences", "e.md", doc, &out, &err), -1);
    CHECK_STR(err.data, "Front matter 'title' exceeds 200 characters (got 201)");
    free(s);
    free(doc);
    const char *one_line[] = {"---\ntitle: \"a\\nb\"\n---\nb", "---\ntitle: \"a\\rb\"\n---\nb",
                              "---\ntitle: \"a\\u2028b\"\n---\nb",
                              "---\ntitle: \"a\\x85b\"\n---\nb", "---\ntitle: |\n  a\n  b\n---\nb"};
    for (size_t i = 0; i < sizeof one_line / sizeof *one_line; i++) {
        CHECK_INT(prepare("rules", "r.md", one_line[i], &out, &err), -1);
        CHECK_STR(err.data, "Front matter 'title' must be one line (no line breaks)");
    }
    /* a folded title (>) is one line: accepted */
    CHECK_INT(prepare("rules", "r.md", "---\ntitle: >-\n  a\n  b\n---\nb", &out, &err), 0);
    /* scenario, tags, urls, ids */
    s = repeat("s", 2001);
    doc = malloc(strlen(s) + 64);
    sprintf(doc, "---\ntitle: t\nscenario: %s\n---\nb", s);
    CHECK_INT(prepare("experiences", "e.md", doc, &out, &err), -1);
    CHECK_STR(err.data, "Front matter 'scenario' exceeds 2000 characters (got 2001)");
    free(s);
    free(doc);
    s = repeat("t, ", 33);
    doc = malloc(strlen(s) + 64);
    sprintf(doc, "---\ntitle: t\ntags: [%s]\n---\nb", s);
    CHECK_INT(prepare("experiences", "e.md", doc, &out, &err), -1);
    CHECK_STR(err.data, "Front matter 'tags' has more than 32 items (got 33)");
    free(s);
    free(doc);
    s = repeat("g", 65);
    doc = malloc(strlen(s) + 64);
    sprintf(doc, "---\ntitle: t\ntags: %s\n---\nb", s);
    CHECK_INT(prepare("experiences", "e.md", doc, &out, &err), -1);
    CHECK_STR(err.data, "A tag in front matter 'tags' exceeds 64 characters (got 65)");
    free(s);
    free(doc);
    s = repeat("u, ", 33);
    doc = malloc(strlen(s) + 64);
    sprintf(doc, "---\ntitle: t\nurls: [%s]\n---\nb", s);
    CHECK_INT(prepare("experiences", "e.md", doc, &out, &err), -1);
    CHECK_STR(err.data, "Front matter 'urls' has more than 32 items (got 33)");
    free(s);
    free(doc);
    s = repeat("a", 257);
    doc = malloc(strlen(s) + 64);
    sprintf(doc, "---\ntitle: t\nagent_id: %s\n---\nb", s);
    CHECK_INT(prepare("experiences", "e.md", doc, &out, &err), -1);
    CHECK_STR(err.data, "Front matter 'agent_id' exceeds 256 characters (got 257)");
    free(s);
    free(doc);
    /* a rule description as a YAML list is stored as its JSON text: counted so */
    s = repeat("word, ", 20);
    doc = malloc(strlen(s) + 64);
    sprintf(doc, "---\ntitle: t\ndescription: [%s]\n---\nb", s);
    CHECK_INT(prepare("rules", "r.md", doc, &out, &err), -1);
    CHECK(strncmp(err.data, "Rule description exceeds 100 characters", 39) == 0);
    free(s);
    free(doc);
    buf_release(&out);
    buf_release(&err);
}

int main(void)
{
    char now[20];
    time_utc_text(now);
    memcpy(today, now, 10);
    today[10] = '\0';
    test_fill_fields();
    test_fill_coercion();
    test_always_apply();
    test_auto_header();
    test_limits();
    test_front_matter_limits();
    test_body_helpers();
    return test_summary();
}
