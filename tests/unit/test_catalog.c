/* test_catalog: service/catalog.c against store_open(":memory:"), the
 * documents written through the file view's and the entry view's services
 * (svc_files_write, svc_knowledge_create) in two spaces:
 *   - pages: rules before experiences, each by path in byte order (upper
 *     case before lower, UTF-8 after ASCII), continued after a key, *more
 *     exactly when documents follow, limits 1..100, another space unseen;
 *   - completion values: paths of one category or both, ids, tags (distinct,
 *     of one category), a prefix, the cap with the true total;
 *   - what agents wrote: source agent only, newest first, by category and
 *     tag, limit and total. */
#include "harness.h"
#include "base/buf.h"
#include "base/config.h"
#include "base/jfield.h"
#include "base/util.h"
#include "service/catalog.h"
#include "service/files.h"
#include "service/knowledge.h"
#include "store/store.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

static struct config cfg;

static struct svc_ctx ctx_of(struct store *st, const char *space)
{
    struct svc_ctx c = {0};
    c.space = space;
    c.actor = "token:test:catalog";
    c.role = ROLE_ADMIN;
    c.st = st;
    c.cfg = &cfg;
    return c;
}

/* Write a document through the file view's service. */
static void write_doc(const struct svc_ctx *c, const char *category, const char *path,
                      const char *title, const char *tags)
{
    struct json_object *body = json_object_new_object(), *data = NULL;
    struct error err;
    struct buf text;
    buf_init(&text, 4096);
    error_init(&err);
    buf_addf(&text, "---\ntitle: %s\ntags: %s\n%s---\nBody of %s.\n", title, tags,
             strcmp(category, "rules") == 0 ? "alwaysApply: false\n" : "", path);
    json_object_object_add(body, "category", json_object_new_string(category));
    json_object_object_add(body, "path", json_object_new_string(path));
    json_object_object_add(body, "content", json_object_new_string(text.data));
    if (!CHECK_INT(svc_files_write(c, body, &data, &err), 0))
        fprintf(stderr, "    %s: %s\n", path, err.message.data);
    json_object_put(data);
    json_object_put(body);
    error_release(&err);
    buf_release(&text);
}

/* Save an entry as an agent does (knowledge_save): its id, owned. */
static char *save_entry(const struct svc_ctx *c, const char *scenario, const char *tag)
{
    struct json_object *body = json_object_new_object(), *data = NULL, *tags;
    struct error err;
    char *id = NULL;
    error_init(&err);
    json_object_object_add(body, "scenario", json_object_new_string(scenario));
    json_object_object_add(body, "content", json_object_new_string("What worked."));
    tags = json_object_new_array();
    json_object_array_add(tags, json_object_new_string(tag));
    json_object_object_add(body, "tags", tags);
    if (CHECK_INT(svc_knowledge_create(c, body, &data, &err), 0))
        id = xstrdup(jf_member_str(data, "id"));
    else
        fprintf(stderr, "    %s: %s\n", scenario, err.message.data);
    json_object_put(data);
    json_object_put(body);
    error_release(&err);
    return id;
}

/* The "category/path" keys of a page, joined by spaces. */
static void page_keys(struct json_object *items, struct buf *out)
{
    buf_reset(out);
    for (size_t i = 0; i < json_object_array_length(items); i++) {
        struct json_object *it = json_object_array_get_idx(items, i);
        buf_addf(out, "%s%s/%s", i ? " " : "", jf_member_str(it, "category"),
                 jf_member_str(it, "path"));
    }
}

/* The strings of a JSON array, joined by spaces. */
static void joined(struct json_object *values, struct buf *out)
{
    buf_reset(out);
    for (size_t i = 0; i < json_object_array_length(values); i++)
        buf_addf(out, "%s%s", i ? " " : "", jf_str(json_object_array_get_idx(values, i)));
}

static void test_pages(const struct svc_ctx *c, const struct svc_ctx *other)
{
    struct json_object *items = NULL;
    struct error err;
    struct buf keys;
    int more = -1;
    buf_init(&keys, 1 << 16);
    error_init(&err);
    CHECK_INT(svc_catalog_page(c, NULL, NULL, 3, &items, &more, &err), 0);
    page_keys(items, &keys);
    CHECK_STR(keys.data, "rules/Zeta.md rules/alpha.md experiences/a/b.md");
    CHECK_INT(more, 1);
    json_object_put(items);
    CHECK_INT(svc_catalog_page(c, "experiences", "a/b.md", 3, &items, &more, &err), 0);
    page_keys(items, &keys);
    CHECK_STR(keys.data, "experiences/a/c.md experiences/b.md experiences/join-two-tables.md");
    CHECK_INT(more, 1); /* retry-a-call.md and 数据.md follow */
    json_object_put(items);
    /* after a key that is not a document: the next one after it */
    CHECK_INT(svc_catalog_page(c, "rules", "b", 100, &items, &more, &err), 0);
    page_keys(items, &keys);
    CHECK(strncmp(keys.data, "experiences/a/b.md ", 19) == 0);
    CHECK_INT(more, 0);
    json_object_put(items);
    /* the first item has the fields a resource needs */
    CHECK_INT(svc_catalog_page(c, NULL, NULL, 1, &items, &more, &err), 0);
    CHECK_STR(jf_member_str(json_object_array_get_idx(items, 0), "title"), "Zeta rule");
    CHECK(jf_member_str(json_object_array_get_idx(items, 0), "id") != NULL);
    json_object_put(items);
    for (long bad = 0; bad <= 101; bad += 101) {
        CHECK_INT(svc_catalog_page(c, NULL, NULL, bad, &items, &more, &err), -1);
        CHECK_STR(err.code, E_INVALID_REQUEST);
        CHECK(items == NULL);
    }
    CHECK_INT(svc_catalog_page(other, NULL, NULL, 100, &items, &more, &err), 0);
    page_keys(items, &keys);
    CHECK_STR(keys.data, "experiences/theirs.md");
    json_object_put(items);
    error_release(&err);
    buf_release(&keys);
}

static void test_values(const struct svc_ctx *c, const char *agent_id)
{
    struct json_object *values = NULL;
    struct error err;
    struct buf got;
    long total = -1;
    buf_init(&got, 1 << 16);
    error_init(&err);
    CHECK_INT(svc_catalog_values(c, CATALOG_PATHS, "experiences", "a/", 100, &values, &total, &err),
              0);
    joined(values, &got);
    CHECK_STR(got.data, "a/b.md a/c.md");
    CHECK_INT(total, 2);
    json_object_put(values);
    CHECK_INT(svc_catalog_values(c, CATALOG_PATHS, "rules", "", 100, &values, &total, &err), 0);
    joined(values, &got);
    CHECK_STR(got.data, "Zeta.md alpha.md");
    json_object_put(values);
    /* the cap keeps the first ones, total counts them all */
    CHECK_INT(svc_catalog_values(c, CATALOG_PATHS, NULL, NULL, 2, &values, &total, &err), 0);
    CHECK_INT((long)json_object_array_length(values), 2);
    CHECK_INT(total, 8);
    json_object_put(values);
    /* tags: distinct, sorted, of one category when asked */
    CHECK_INT(svc_catalog_values(c, CATALOG_TAGS, NULL, NULL, 100, &values, &total, &err), 0);
    joined(values, &got);
    CHECK_STR(got.data, "csv etl http sql 中文");
    json_object_put(values);
    CHECK_INT(svc_catalog_values(c, CATALOG_TAGS, "rules", NULL, 100, &values, &total, &err), 0);
    joined(values, &got);
    CHECK_STR(got.data, "sql");
    json_object_put(values);
    CHECK_INT(svc_catalog_values(c, CATALOG_IDS, NULL, agent_id, 100, &values, &total, &err), 0);
    joined(values, &got);
    CHECK_STR(got.data, agent_id);
    json_object_put(values);
    CHECK_INT(svc_catalog_values(c, CATALOG_TRACES, NULL, NULL, 100, &values, &total, &err), 0);
    CHECK_INT(total, 0);
    json_object_put(values);
    error_release(&err);
    buf_release(&got);
}

static void test_agent_written(const struct svc_ctx *c, const struct svc_ctx *other)
{
    struct json_object *items = NULL;
    struct error err;
    long total = -1;
    error_init(&err);
    CHECK_INT(svc_catalog_agent_written(c, NULL, NULL, 100, &items, &total, &err), 0);
    CHECK_INT(total, 2);
    if (CHECK_INT((long)json_object_array_length(items), 2)) {
        struct json_object *first = json_object_array_get_idx(items, 0);
        CHECK_STR(jf_member_str(first, "source"), "agent");
        CHECK_STR(jf_member_str(first, "category"), "experiences");
        /* same second: newest first falls back to the id, descending */
        CHECK(strcmp(jf_member_str(first, "id"),
                     jf_member_str(json_object_array_get_idx(items, 1), "id")) > 0 ||
              strcmp(jf_member_str(first, "created_at"),
                     jf_member_str(json_object_array_get_idx(items, 1), "created_at")) > 0);
    }
    json_object_put(items);
    CHECK_INT(svc_catalog_agent_written(c, NULL, "http", 1, &items, &total, &err), 0);
    CHECK_INT(total, 1);
    CHECK_STR(jf_member_str(json_object_array_get_idx(items, 0), "scenario"), "Retry a call");
    json_object_put(items);
    CHECK_INT(svc_catalog_agent_written(c, "rules", NULL, 1, &items, &total, &err), 0);
    CHECK_INT(total, 0);
    json_object_put(items);
    CHECK_INT(svc_catalog_agent_written(c, NULL, NULL, 0, &items, &total, &err), -1);
    CHECK_INT(svc_catalog_agent_written(other, NULL, NULL, 5, &items, &total, &err), 0);
    CHECK_INT(total, 0);
    json_object_put(items);
    error_release(&err);
}

int main(void)
{
    struct store *st = NULL;
    struct svc_ctx c, other;
    char *first = NULL, *second = NULL;
    store_global_init();
    if (sodium_init() < 0 || !CHECK_INT(store_open(":memory:", &st), STORE_OK))
        return test_summary();
    config_from_env(&cfg);
    c = ctx_of(st, "s1");
    other = ctx_of(st, "s2");
    write_doc(&c, "rules", "alpha.md", "Alpha rule", "[sql]");
    write_doc(&c, "rules", "Zeta.md", "Zeta rule", "[]");
    write_doc(&c, "experiences", "b.md", "B", "[etl]");
    write_doc(&c, "experiences", "a/c.md", "C", "[csv, etl]");
    write_doc(&c, "experiences", "a/b.md", "AB", "[csv]");
    write_doc(&c, "experiences", "数据.md", "数据", "[中文]");
    write_doc(&other, "experiences", "theirs.md", "Theirs", "[secret]");
    first = save_entry(&c, "Retry a call", "http");
    second = save_entry(&c, "Join two tables", "sql");
    test_pages(&c, &other);
    if (CHECK(first && second)) {
        test_values(&c, first);
        test_agent_written(&c, &other);
    }
    free(first);
    free(second);
    store_close(st);
    return test_summary();
}
