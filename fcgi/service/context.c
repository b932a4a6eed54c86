/* context: the rules block and the question's context (service/context.h). */
#include "service/context.h"
#include "base/buf.h"
#include "base/jfield.h"
#include "base/util.h"
#include "domain/simset.h"
#include "domain/tokcount.h"
#include "service/search.h"
#include "service/timing.h"
#include "store/store.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RULES_HEADER                                                                               \
    "\n\n## \xe2\x9a\xa0 User Rules (MANDATORY \xe2\x80\x94 override defaults)\n\n"                \
    "The following rules are set by the user and MUST be followed.\n"                              \
    "When a user rule conflicts with other guidelines, the user rule takes priority.\n"

struct rules_ctx {
    struct json_object *rules;
    struct buf block;
    struct timing_expired expired; /* expired rules are left out */
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
    if (timing_expired_has(&c->expired, k->id))
        return 0;
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
    int rc;
    r->rules = json_object_new_array();
    buf_init(&r->block, 8 * 1024 * 1024);
    if ((rc = timing_expired_load(c->st, c->space, &r->expired)) == STORE_OK)
        rc = store_knowledge_scan(c->st, c->space, SCAN_ALWAYS_RULES, NULL, 0, rule_add, r);
    timing_expired_release(&r->expired);
    return rc;
}

/* The answer's budget fields: tokens_used, budget_tokens, over_budget and
 * omitted (taken). */
static void budget_fields_add(struct json_object *data, size_t used, long budget,
                              struct json_object *omitted)
{
    json_object_object_add(data, "tokens_used", json_object_new_int64((int64_t)used));
    json_object_object_add(data, "budget_tokens", json_object_new_int64(budget));
    json_object_object_add(data, "over_budget", json_object_new_boolean(used > (size_t)budget));
    json_object_object_add(data, "omitted", omitted);
}

int svc_context_rules(const struct svc_ctx *c, long budget_tokens, struct json_object **data,
                      struct error *err)
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
        /* The rules are never cut: over the budget, they all stay and say so. */
        if (budget_tokens)
            budget_fields_add(*data, tokcount_estimate(r.block.data, r.block.len), budget_tokens,
                              json_object_new_array());
    }
    buf_release(&r.block);
    return rc ? -1 : 0;
}

/* One search hit, copied: the search's entry lives only during its call. */
struct ctx_hit {
    char *id, *category, *title, *path, *content, *description;
};

struct knowledge_ctx {
    struct ctx_hit *hits;
    size_t n, cap;
};

static char *dup_or_empty(const char *s)
{
    return xstrdup(s ? s : "");
}

static void knowledge_collect(const struct search_hit *h, void *arg)
{
    struct knowledge_ctx *c = arg;
    struct ctx_hit *x;
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 8;
        c->hits = xrealloc(c->hits, c->cap * sizeof *c->hits);
    }
    x = &c->hits[c->n++];
    x->id = dup_or_empty(h->k->id);
    x->category = dup_or_empty(h->k->category);
    x->title = dup_or_empty(h->k->title);
    x->path = dup_or_empty(h->k->path);
    x->content = dup_or_empty(h->k->content);
    x->description = dup_or_empty(h->k->description);
}

static void hits_release(struct knowledge_ctx *c)
{
    for (size_t i = 0; i < c->n; i++) {
        struct ctx_hit *x = &c->hits[i];
        free(x->id);
        free(x->category);
        free(x->title);
        free(x->path);
        free(x->content);
        free(x->description);
    }
    free(c->hits);
    c->hits = NULL;
    c->n = c->cap = 0;
}

#define KNOWLEDGE_HEADER "[RELEVANT KNOWLEDGE]\n"

/* One hit's part of the knowledge block: its heading, then text. */
static void block_piece(struct buf *b, const struct ctx_hit *h, const char *text)
{
    buf_addf(b, "\n### [%s] ", strcmp(h->category, "rules") == 0 ? "rule" : "knowledge");
    buf_add_one_line(b, h->title);
    buf_addf(b, "\n%s\n", text);
}

/* A knowledge item of the answer: {category, title, path, snippet}. */
static struct json_object *knowledge_item(const struct ctx_hit *h, const char *snippet)
{
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "category", json_object_new_string(h->category));
    json_object_object_add(o, "title", json_object_new_string(h->title));
    json_object_object_add(o, "path", json_object_new_string(h->path));
    json_object_object_add(o, "snippet", json_object_new_string(snippet));
    return o;
}

/* Without a budget: every hit with its snippet, as always. */
static void knowledge_unbudgeted(const struct knowledge_ctx *kn, struct json_object *items,
                                 struct buf *block)
{
    struct buf snippet;
    buf_init(&snippet, 1 << 20);
    for (size_t i = 0; i < kn->n; i++) {
        search_snippet(kn->hits[i].content, &snippet);
        json_object_array_add(items, knowledge_item(&kn->hits[i], snippet.data));
        if (block->len == 0)
            buf_adds(block, KNOWLEDGE_HEADER);
        block_piece(block, &kn->hits[i], snippet.data);
    }
    buf_release(&snippet);
}

/* The characters of a summary, at most. */
#define SUMMARY_CHARS 200

/* The one-line summary of a hit: its description, else the first line of
 * its content with text, without Markdown's leading marks (#, >, -, *),
 * cut at SUMMARY_CHARS characters ("..." then), then where to read it all. */
static void summary_of(const struct ctx_hit *h, struct buf *out)
{
    const char *s = *h->description ? h->description : h->content, *line = s;
    struct buf text;
    buf_init(&text, 1 << 16);
    while (*line) {
        size_t skip = strspn(line, " \t#>*-");
        size_t n = strcspn(line + skip, "\r\n");
        if (n) {
            size_t cut = utf8_prefix(line + skip, n, SUMMARY_CHARS);
            buf_add(&text, line + skip, cut);
            while (text.len && strchr(" \t", text.data[text.len - 1]))
                buf_truncate(&text, text.len - 1);
            if (cut < n)
                buf_adds(&text, "...");
            break;
        }
        line += skip + n;
        line += strspn(line, "\r\n");
    }
    buf_reset(out);
    buf_add_one_line(out, text.data);
    buf_addf(out, "%s(read in full: knowhub://entries/%s)", out->len ? " " : "", h->id);
    buf_release(&text);
}

/* The title with ASCII letters in lower case and every run of ASCII
 * punctuation and space as one space (none at the ends): two hits with the
 * same non-empty key are duplicates. Other characters count as they are. */
static void title_key(const char *title, struct buf *key)
{
    int gap = 0;
    buf_reset(key);
    for (const unsigned char *p = (const unsigned char *)title; *p; p++) {
        if (*p < 0x80 && !isalnum(*p)) {
            gap = 1;
            continue;
        }
        if (gap && key->len)
            buf_addch(key, ' ');
        gap = 0;
        buf_addch(key, (char)(*p < 0x80 ? tolower(*p) : *p));
    }
}

enum form { FORM_WHOLE, FORM_SUMMARY, FORM_OMITTED };

static void omitted_add(struct json_object *omitted, const char *id, const char *reason)
{
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "id", json_object_new_string(id));
    json_object_object_add(o, "reason", json_object_new_string(reason));
    json_object_array_add(omitted, o);
}

/* Two hits whose bodies (every word in order, as word 3-shingles: slim's
 * rule without an LLM) agree at least this much say the same thing, under
 * whatever titles: the later one is a near-duplicate. Order and "not"
 * count, so opposite advice in the same words never collapses. */
#define NEAR_DUPLICATE 0.9

/* The hit's body as word 3-shingles into *s (finished; empty: no body). */
static void shingles_of(const struct ctx_hit *h, struct simset *s)
{
    simset_add_words(s, h->content);
    simset_shingle(s, 3);
    simset_finish(s);
}

/* With a budget: the hits in the search's order, duplicates (same title
 * key as an earlier hit, or near-identical text: NEAR_DUPLICATE) omitted; then each whole while it
 * fits, from the first that does not each as its summary while it fits, from the first that does
 * not the rest omitted. rules_tokens are already spent; the sum of the pieces' estimates bounds the
 * block's (the pieces meet at newlines). */
static void knowledge_budgeted(const struct knowledge_ctx *kn, size_t rules_tokens, long budget,
                               struct json_object *items, struct json_object *omitted,
                               struct buf *block)
{
    size_t used = rules_tokens, header = tokcount_str(KNOWLEDGE_HEADER);
    enum form form = rules_tokens > (size_t)budget ? FORM_OMITTED : FORM_WHOLE;
    struct buf piece, text, *keys = xcalloc(kn->n ? kn->n : 1, sizeof *keys);
    struct simset *sets = xcalloc(kn->n ? kn->n : 1, sizeof *sets);
    buf_init(&piece, 16 * 1024 * 1024);
    buf_init(&text, 16 * 1024 * 1024);
    for (size_t i = 0; i < kn->n; i++) {
        const struct ctx_hit *h = &kn->hits[i];
        int duplicate = 0;
        size_t extra = block->len ? 0 : header;
        buf_init(&keys[i], 4096);
        title_key(h->title, &keys[i]);
        shingles_of(h, &sets[i]);
        /* against the earlier hits kept (an omitted duplicate's set is empty) */
        for (size_t j = 0; j < i && !duplicate; j++)
            duplicate = (keys[i].len && strcmp(keys[i].data, keys[j].data) == 0) ||
                        simset_jaccard(&sets[i], &sets[j]) >= NEAR_DUPLICATE;
        if (duplicate) {
            omitted_add(omitted, h->id, "duplicate");
            simset_release(&sets[i]);
            continue;
        }
        for (; form != FORM_OMITTED; form++) {
            if (form == FORM_WHOLE)
                stripped(h->content, &text);
            else
                summary_of(h, &text);
            buf_reset(&piece);
            block_piece(&piece, h, text.data);
            if (!buf_failed(&piece) &&
                used + extra + tokcount_estimate(piece.data, piece.len) <= (size_t)budget)
                break;
        }
        if (form == FORM_OMITTED) {
            omitted_add(omitted, h->id, "budget");
            continue;
        }
        struct json_object *o = knowledge_item(h, text.data);
        struct buf uri;
        buf_init(&uri, 4096);
        buf_addf(&uri, "knowhub://entries/%s", h->id);
        json_object_object_add(o, "id", json_object_new_string(h->id));
        json_object_object_add(o, "form",
                               json_object_new_string(form == FORM_WHOLE ? "full" : "summary"));
        json_object_object_add(o, "uri", json_object_new_string(uri.data));
        json_object_array_add(items, o);
        buf_release(&uri);
        if (block->len == 0)
            buf_adds(block, KNOWLEDGE_HEADER);
        buf_add(block, piece.data, piece.len);
        used += extra + tokcount_estimate(piece.data, piece.len);
    }
    for (size_t i = 0; i < kn->n; i++) {
        buf_release(&keys[i]);
        simset_release(&sets[i]);
    }
    free(keys);
    free(sets);
    buf_release(&piece);
    buf_release(&text);
}

int svc_context_question(const struct svc_ctx *c, struct json_object *body,
                         struct json_object **data, struct error *err)
{
    struct json_object *tables = NULL, *first = NULL, *items = NULL, *omitted = NULL;
    struct rules_ctx rules = {0};
    struct knowledge_ctx kn = {0};
    struct search_opts opts;
    struct buf block;
    const char *question;
    long max_results, budget;
    int rc, ret = -1;

    *data = NULL;
    buf_init(&rules.block, 1);
    buf_init(&block, 16 * 1024 * 1024);
    if (jf_string(err, body, "question", 1, 4000, &question) ||
        jf_string_list(err, body, "table_names", 1000, 256, 0, &tables) ||
        jf_long(err, body, "budget_tokens", CONTEXT_BUDGET_MIN, CONTEXT_BUDGET_MAX, 0, &budget) ||
        jf_long(err, body, "max_results", 1, 50, budget ? 50 : 5, &max_results))
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
    opts = search_opts_of(c->cfg, 0); /* weak hits never reach a prompt */
    rc = search_files(c->st, c->space, question, SEARCH_RULES | SEARCH_EXPERIENCES,
                      (size_t)max_results, first, &opts, knowledge_collect, &kn);
    if (rc) {
        store_status_error(rc, "Knowledge", err);
        goto out;
    }
    items = json_object_new_array();
    if (budget) {
        omitted = json_object_new_array();
        knowledge_budgeted(&kn, tokcount_estimate(rules.block.data, rules.block.len), budget, items,
                           omitted, &block);
    } else {
        knowledge_unbudgeted(&kn, items, &block);
    }
    *data = json_object_new_object();
    json_object_object_add(*data, "rules_block", json_object_new_string(rules.block.data));
    json_object_object_add(*data, "rules", json_object_get(rules.rules));
    json_object_object_add(*data, "knowledge", json_object_get(items));
    json_object_object_add(*data, "knowledge_block", json_object_new_string(block.data));
    if (budget) {
        budget_fields_add(*data,
                          tokcount_estimate(rules.block.data, rules.block.len) +
                              tokcount_estimate(block.data, block.len),
                          budget, omitted);
        omitted = NULL;
    }
    ret = 0;
out:
    json_object_put(rules.rules);
    json_object_put(items);
    json_object_put(omitted);
    json_object_put(first);
    hits_release(&kn);
    buf_release(&rules.block);
    buf_release(&block);
    return ret;
}
