/* h_context: what an agent loads before it works (seed 004 modes A and B):
 * the always-apply rules with the reference's formatted block, and the rules
 * block plus the knowledge relevant to a question. */
#include "base/buf.h"
#include "api/handlers.h"
#include "base/jfield.h"
#include "service/search.h"
#include "store/store.h"
#include "base/util.h"

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

/* Body without surrounding whitespace, as the reference's body.strip(). */
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

/* The always-apply rules and their block (empty when none). */
static int load_rules(struct request *req, struct rules_ctx *c)
{
    c->rules = json_object_new_array();
    buf_init(&c->block, 8 * 1024 * 1024);
    return store_knowledge_scan(req->store, req->who.space, SCAN_ALWAYS_RULES, NULL, 0, rule_add,
                                c);
}

void h_context_rules(struct request *req, struct response *res)
{
    struct rules_ctx c;
    int rc = load_rules(req, &c);
    if (rc) {
        json_object_put(c.rules);
        reply_store_error(res, rc, "Rules");
    } else {
        struct json_object *data = json_object_new_object();
        json_object_object_add(data, "rules", c.rules);
        json_object_object_add(data, "block", json_object_new_string(c.block.data));
        reply_data(res, data);
    }
    buf_release(&c.block);
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

void h_context_question(struct request *req, struct response *res)
{
    struct json_object *body = http_body_json_or_400(req, res), *tables = NULL, *first = NULL;
    struct rules_ctx rules = {0};
    struct knowledge_ctx kn = {0};
    const char *question;
    long max_results;
    int rc;

    if (!body)
        return;
    buf_init(&rules.block, 1);
    buf_init(&kn.block, 8 * 1024 * 1024);
    if (jf_string_or_400(res, body, "question", 1, 4000, &question) ||
        jf_string_list_or_400(res, body, "table_names", 1000, 256, 0, &tables) ||
        jf_long_or_400(res, body, "max_results", 1, 50, 5, &max_results))
        goto out;
    /* The reference passes the first five table names. */
    first = json_object_new_array();
    for (size_t i = 0; tables && i < json_object_array_length(tables) && i < 5; i++)
        json_object_array_add(first, json_object_get(json_object_array_get_idx(tables, i)));
    buf_release(&rules.block);
    if ((rc = load_rules(req, &rules))) {
        reply_store_error(res, rc, "Rules");
        goto out;
    }
    kn.items = json_object_new_array();
    rc = search_files(req->store, req->who.space, question, SEARCH_RULES | SEARCH_EXPERIENCES,
                      (size_t)max_results, first, knowledge_add, &kn);
    if (rc) {
        reply_store_error(res, rc, "Knowledge");
        goto out;
    }
    {
        struct json_object *data = json_object_new_object();
        json_object_object_add(data, "rules_block", json_object_new_string(rules.block.data));
        json_object_object_add(data, "rules", json_object_get(rules.rules));
        json_object_object_add(data, "knowledge", json_object_get(kn.items));
        json_object_object_add(data, "knowledge_block", json_object_new_string(kn.block.data));
        reply_data(res, data);
    }
out:
    json_object_put(rules.rules);
    json_object_put(kn.items);
    json_object_put(first);
    buf_release(&rules.block);
    buf_release(&kn.block);
    json_object_put(body);
}
