/* context: the rules block and the question's context (service/context.h). */
#include "service/context.h"
#include "base/buf.h"
#include "base/jfield.h"
#include "base/util.h"
#include "service/search.h"
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

#define RULES_HEADER                                                                               \
    "\n\n## \xe2\x9a\xa0 User Rules (MANDATORY \xe2\x80\x94 override defaults)\n\n"                \
    "The following rules are set by the user and MUST be followed.\n"                              \
    "When a user rule conflicts with other guidelines, the user rule takes priority.\n"

struct rules_ctx {
    struct json_object *rules;
    struct buf block;
};

/* s without surrounding whitespace, into out. */
static void stripped(const char *s, struct buf *out)
{
    size_t start = strspn(s, " \t\r\n\f\v"), end = strlen(s);
    while (end > start && strchr(" \t\r\n\f\v", s[end - 1]))
        end--;
    buf_reset(out);
    buf_add(out, s + start, end - start);
}

static int rule_add(const struct knowledge *k, void *arg)
{
    struct rules_ctx *c = arg;
    struct json_object *o;
    struct buf body;
    buf_init(&body, 1 << 20);
    stripped(k->content, &body);
    if (body.len) {
        o = json_object_new_object();
        json_object_object_add(o, "title", json_object_new_string(k->title));
        json_object_object_add(o, "body", json_object_new_string(body.data));
        json_object_array_add(c->rules, o);
        if (c->block.len == 0)
            buf_adds(&c->block, RULES_HEADER);
        /* The title stays on its heading line, whatever was stored. */
        buf_adds(&c->block, "\n### ");
        buf_add_one_line(&c->block, k->title);
        buf_addf(&c->block, "\n%s\n", body.data);
    }
    buf_release(&body);
    return 0;
}

/* The always-apply rules and their block (empty when none): r->rules and
 * r->block are set either way (the caller releases them). A store status. */
static int load_rules(const struct svc_ctx *c, struct rules_ctx *r)
{
    r->rules = json_object_new_array();
    buf_init(&r->block, 8 * 1024 * 1024);
    return store_knowledge_scan(c->st, c->space, SCAN_ALWAYS_RULES, NULL, 0, rule_add, r);
}

int svc_context_rules(const struct svc_ctx *c, struct json_object **data, struct error *err)
{
    struct rules_ctx r;
    int rc = load_rules(c, &r);
    *data = NULL;
    if (rc) {
        json_object_put(r.rules);
        store_status_error(rc, "Rules", err);
    } else {
        *data = json_object_new_object();
        json_object_object_add(*data, "rules", r.rules);
        json_object_object_add(*data, "block", json_object_new_string(r.block.data));
    }
    buf_release(&r.block);
    return rc ? -1 : 0;
}

struct knowledge_ctx {
    struct json_object *items;
    struct buf block;
};

static void knowledge_add(const struct search_hit *h, void *arg)
{
    struct knowledge_ctx *c = arg;
    struct json_object *o = json_object_new_object();
    struct buf snippet;
    const struct knowledge *k = h->k;
    buf_init(&snippet, 1 << 20);
    search_snippet(k->content, &snippet);
    json_object_object_add(o, "category", json_object_new_string(k->category));
    json_object_object_add(o, "title", json_object_new_string(k->title));
    json_object_object_add(o, "path", json_object_new_string(k->path));
    json_object_object_add(o, "snippet", json_object_new_string(snippet.data));
    json_object_array_add(c->items, o);
    if (c->block.len == 0)
        buf_adds(&c->block, "[RELEVANT KNOWLEDGE]\n");
    buf_addf(&c->block, "\n### [%s] ", strcmp(k->category, "rules") == 0 ? "rule" : "knowledge");
    buf_add_one_line(&c->block, k->title);
    buf_addf(&c->block, "\n%s\n", snippet.data);
    buf_release(&snippet);
}

int svc_context_question(const struct svc_ctx *c, struct json_object *body,
                         struct json_object **data, struct error *err)
{
    struct json_object *tables = NULL, *first = NULL;
    struct rules_ctx rules = {0};
    struct knowledge_ctx kn = {0};
    struct search_opts opts;
    const char *question;
    long max_results;
    int rc, ret = -1;

    *data = NULL;
    buf_init(&rules.block, 1);
    buf_init(&kn.block, 8 * 1024 * 1024);
    if (jf_string(err, body, "question", 1, 4000, &question) ||
        jf_string_list(err, body, "table_names", 1000, 256, 0, &tables) ||
        jf_long(err, body, "max_results", 1, 50, 5, &max_results))
        goto out;
    /* Only the first five table names count. */
    first = json_object_new_array();
    for (size_t i = 0; tables && i < json_object_array_length(tables) && i < 5; i++)
        json_object_array_add(first, json_object_get(json_object_array_get_idx(tables, i)));
    buf_release(&rules.block);
    if ((rc = load_rules(c, &rules))) {
        store_status_error(rc, "Rules", err);
        goto out;
    }
    kn.items = json_object_new_array();
    opts = search_opts_of(c->cfg, 0); /* weak hits never reach a prompt */
    rc = search_files(c->st, c->space, question, SEARCH_RULES | SEARCH_EXPERIENCES,
                      (size_t)max_results, first, &opts, knowledge_add, &kn);
    if (rc) {
        store_status_error(rc, "Knowledge", err);
        goto out;
    }
    *data = json_object_new_object();
    json_object_object_add(*data, "rules_block", json_object_new_string(rules.block.data));
    json_object_object_add(*data, "rules", json_object_get(rules.rules));
    json_object_object_add(*data, "knowledge", json_object_get(kn.items));
    json_object_object_add(*data, "knowledge_block", json_object_new_string(kn.block.data));
    ret = 0;
out:
    json_object_put(rules.rules);
    json_object_put(kn.items);
    json_object_put(first);
    buf_release(&rules.block);
    buf_release(&kn.block);
    return ret;
}
