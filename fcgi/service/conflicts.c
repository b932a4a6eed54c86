/* conflicts (service): the conflict check of a write. */
#include "service/conflicts.h"
#include "base/buf.h"
#include "base/config.h"
#include "base/util.h"
#include "domain/conflict.h"
#include "service/conflictitems.h"
#include "service/ctx.h"
#include "service/llmcall.h"
#include "service/search.h"
#include "service/timing.h"
#include "service/vindex.h"
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

/* The query a check searches with: the entry's title, scenario and the
 * beginning of its body (the words a replacement would share). */
#define QUERY_BODY_CHARS 300
/* What an LLM reads of each entry. */
#define LLM_ENTRY_CHARS 4000

/* A candidate, copied out of the search (the judging, an LLM call maybe,
 * runs after it). */
struct candidate {
    char *id, *title, *path, *category, *scenario, *content;
    int against_rule;
};

struct candidates {
    struct candidate *c;
    size_t n, max;
    const char *self;
    int rules_only; /* keep always-apply rules only (the rule flag) */
};

/* The actor of the links the check makes (the audit trail tells them from
 * a person's). */
#define CHECK_ACTOR "conflict-check"

static void collect(const struct search_hit *h, void *ctx)
{
    struct candidates *cs = ctx;
    const struct knowledge *o = h->k;
    struct candidate *c;
    if (strcmp(o->id, cs->self) == 0 || cs->n >= cs->max || (cs->rules_only && !o->always_apply))
        return;
    for (size_t i = 0; i < cs->n; i++)
        if (strcmp(cs->c[i].id, o->id) == 0)
            return;
    c = &cs->c[cs->n++];
    c->id = xstrdup(o->id);
    c->title = xstrdup(o->title ? o->title : "");
    c->path = xstrdup(o->path ? o->path : "");
    c->category = xstrdup(o->category);
    c->scenario = xstrdup(o->scenario ? o->scenario : "");
    c->content = xstrdup(o->content ? o->content : "");
    c->against_rule = cs->rules_only;
}

/* ---- the LLM's verdict ---- */

/* Add an entry, its title on its own line, its texts cut to what the LLM reads. */
static void prompt_entry(struct buf *b, const char *name, const char *title, const char *scenario,
                         const char *content)
{
    buf_addf(b, "%s: ", name);
    buf_add_one_line(b, title ? title : "");
    buf_adds(b, "\nScenario: ");
    buf_add_one_line(b, scenario ? scenario : "");
    buf_adds(b, "\nContent:\n");
    content = content ? content : "";
    buf_add(b, content, utf8_prefix(content, strlen(content), LLM_ENTRY_CHARS));
    buf_adds(b, "\n\n");
}

/* Ask the LLM for the verdict of the pair: 0 with *verdict and reason, -1
 * when it failed, timed out or answered something else (the caller falls
 * back to the local detector). */
static int llm_judge(const struct svc_ctx *c, const struct knowledge *k, const struct candidate *o,
                     enum conflict_verdict *verdict, struct buf *reason)
{
    struct json_object *messages = json_object_new_array();
    struct llm_request lr;
    struct llm_reply r;
    struct buf user;
    int rc = -1;
    buf_init(&user, 64 * 1024);
    llm_reply_init(&r);
    prompt_entry(&user, "Entry A", o->title, o->scenario, o->content);
    prompt_entry(&user, "Entry B", k->title, k->scenario, k->content);
    json_object_array_add(
        messages,
        llm_message("system",
                    "You judge whether two entries of a knowledge base that AI agents read "
                    "conflict. duplicate: they say the same; contradiction: following one "
                    "means not following the other in the same situation; refinement: one "
                    "narrows or details the other and both hold; unrelated: anything else. "
                    "Answer with JSON only: {\"verdict\": \"duplicate\" | \"contradiction\" | "
                    "\"refinement\" | \"unrelated\", \"reason\": \"one short sentence\"}."));
    json_object_array_add(messages, llm_message("user", user.data));
    lr = svc_llm_request(c, CONFLICTS_LLM_PURPOSE, messages);
    /* the write waits for it: the server's timeout, at most CONFLICTS_LLM_TIMEOUT_MS */
    lr.timeout_ms = c->cfg->llm_timeout_ms > 0 && c->cfg->llm_timeout_ms < CONFLICTS_LLM_TIMEOUT_MS
                        ? c->cfg->llm_timeout_ms
                        : CONFLICTS_LLM_TIMEOUT_MS;
    lr.max_tokens = 300;
    if (svc_llm_chat(c, &lr, &r) == 0)
        rc = conflict_llm_answer_parse(r.text.data, r.text.len, verdict, reason);
    json_object_put(messages);
    llm_reply_release(&r);
    buf_release(&user);
    return rc;
}

/* ---- the check ---- */

/* A contradiction: queued as a conflict item (unless one of the pair is
 * pending, or dismissed at these versions) and linked, k contradicts it
 * (kept as it is when the link exists). Best effort, like the whole check. */
static void contradiction_record(const struct svc_ctx *c, const struct knowledge *k,
                                 const struct candidate *o, const char *judge,
                                 struct json_object *item)
{
    struct conflict_pair pair = {
        k->id, o->id,   json_object_get_string(json_object_object_get(item, "reason")),
        judge, "check", 1};
    struct link_key key = {k->id, o->id, "contradicts"};
    char now[20], *id = NULL;
    int added = 0, queued = conflict_item_queue(c, &pair, &id);
    if (queued == 2) { /* dismissed by an editor while neither side changed */
        json_object_object_add(item, "dismissed", json_object_new_string(id));
        free(id);
        return;
    }
    time_utc_text(now);
    /* a write like any other: in its turn (store_begin), not beside it */
    if (store_begin(c->st) == STORE_OK &&
        store_tx_end(c->st, store_link_add(c->st, c->space, &key, CHECK_ACTOR, pair.reason, now,
                                           &added)) == STORE_OK)
        json_object_object_add(item, "link", json_object_new_string("contradicts"));
    if (id)
        json_object_object_add(item, "review_id", json_object_new_string(id));
    free(id);
}

static struct json_object *judged_item(const struct candidate *o, const char *verdict,
                                       const char *reason, double similarity, const char *judge)
{
    struct json_object *item = json_object_new_object();
    json_object_object_add(item, "id", json_object_new_string(o->id));
    json_object_object_add(item, "title", json_object_new_string(o->title));
    json_object_object_add(item, "path", json_object_new_string(o->path));
    json_object_object_add(item, "category", json_object_new_string(o->category));
    json_object_object_add(item, "verdict", json_object_new_string(verdict));
    json_object_object_add(item, "reason", json_object_new_string(reason));
    json_object_object_add(item, "similarity", json_object_new_double(similarity));
    json_object_object_add(item, "judge", json_object_new_string(judge));
    json_object_object_add(item, "against_rule", json_object_new_boolean(o->against_rule));
    return item;
}

/* The LLM's turn in one check: a failed call ends it, so a dead LLM costs
 * one timeout, not one per candidate. */
struct llm_turn {
    int on, calls;
    int llm_only; /* a pair the LLM does not judge is left unjudged */
    long until;
    struct buf reason, llm_reason;
};

static void llm_turn_init(struct llm_turn *t, const struct svc_ctx *c)
{
    t->on = config_llm_configured(c->cfg) && c->cfg->conflict_llm_calls > 0;
    t->llm_only = 0;
    t->calls = 0;
    t->until = 0;
    buf_init(&t->reason, 1024);
    buf_init(&t->llm_reason, 2048);
}

static void llm_turn_release(struct llm_turn *t)
{
    buf_release(&t->reason);
    buf_release(&t->llm_reason);
}

/* o judged against k: the item (a new object), or NULL when unrelated. The
 * LLM's verdict when one is configured and its turn lasts, the local one
 * its fallback; a contradiction is recorded (linked, queued). */
static struct json_object *judge_candidate(const struct svc_ctx *c, const struct knowledge *k,
                                           const struct candidate *o, struct llm_turn *t)
{
    struct conflict_entry a = {o->title, o->scenario, o->content};
    struct conflict_entry b = {k->title, k->scenario, k->content};
    struct conflict_result r;
    enum conflict_verdict verdict;
    const char *judge = "local", *why;
    struct json_object *item;
    conflict_check(&a, &b, &r, &t->reason);
    verdict = r.verdict;
    why = t->reason.data;
    if (t->on && t->calls < c->cfg->conflict_llm_calls &&
        (!t->until || monotonic_ms() < t->until)) {
        if (!t->calls++)
            t->until = monotonic_ms() + CONFLICTS_LLM_BUDGET_MS;
        if (llm_judge(c, k, o, &verdict, &t->llm_reason) == 0) {
            judge = "llm";
            why = t->llm_reason.data;
        } else {
            verdict = r.verdict;
            t->on = 0;
        }
    }
    if (verdict == CONFLICT_UNRELATED || (t->llm_only && strcmp(judge, "llm") != 0))
        return NULL;
    item = judged_item(o, conflict_verdict_name(verdict), why, r.jaccard, judge);
    if (verdict == CONFLICT_CONTRADICTION)
        contradiction_record(c, k, o, judge, item);
    return item;
}

/* The search for candidates of k in category (rules_only: always-apply
 * rules), appended to cs up to max: by words (by meaning, it would cost
 * every write an embeddings call: those come after, conflicts_by_meaning). */
static void candidates_find(const struct svc_ctx *c, const char *query, const char *category,
                            int rules_only, size_t max, struct candidates *cs)
{
    struct knowledge_filter f = {0};
    struct search_opts opts = search_opts_of(c->cfg, 0);
    f.category = category;
    cs->rules_only = rules_only;
    cs->max = cs->n + max < cs->max ? cs->n + max : cs->max;
    /* one more than asked: the entry itself is found too; twice as many
     * rules, as some are not always applied */
    store_ignore(search_entries(c->st, c->space, query, &f, (rules_only ? 2 * max : max) + 1, &opts,
                                collect, cs));
}

static int rule_seen(const struct knowledge *r, void *ctx)
{
    (void)r;
    *(int *)ctx = 1;
    return 1; /* one is enough */
}

/* Whether the space has an active always-apply rule (one read that stops
 * at the first). */
static int always_rules_any(const struct svc_ctx *c)
{
    int any = 0;
    store_ignore(
        store_knowledge_scan(c->st, c->space, SCAN_ALWAYS_RULES, NULL, 0, rule_seen, &any));
    return any;
}

struct json_object *conflicts_check(const struct svc_ctx *c, const struct knowledge *k)
{
    struct candidate found[CONFLICTS_CANDIDATES + CONFLICTS_RULE_CANDIDATES];
    struct candidates cs = {found, 0, 0, k->id, 0};
    struct json_object *list = json_object_new_array();
    struct buf q;
    struct llm_turn turn;
    const char *body = k->content ? k->content : "";
    buf_init(&q, 4096);
    llm_turn_init(&turn, c);
    buf_add_one_line(&q, k->title ? k->title : "");
    buf_addch(&q, ' ');
    buf_add_one_line(&q, k->scenario ? k->scenario : "");
    buf_addch(&q, ' ');
    buf_add(&q, body, utf8_prefix(body, strlen(body), QUERY_BODY_CHARS));
    cs.max = CONFLICTS_CANDIDATES;
    candidates_find(c, q.data, k->category, 0, CONFLICTS_CANDIDATES, &cs);
    /* an experience against the space's always-apply rules, too (a search
     * that finds nothing costs more than one that does: only when there is
     * such a rule at all) */
    if (k->category && strcmp(k->category, "experiences") == 0 && always_rules_any(c)) {
        cs.max = CONFLICTS_CANDIDATES + CONFLICTS_RULE_CANDIDATES;
        candidates_find(c, q.data, "rules", 1, CONFLICTS_RULE_CANDIDATES, &cs);
    }
    for (size_t i = 0; i < cs.n; i++) {
        struct json_object *item = judge_candidate(c, k, &found[i], &turn);
        if (item)
            json_object_array_add(list, item);
    }
    for (size_t i = 0; i < cs.n; i++) {
        free(found[i].id);
        free(found[i].title);
        free(found[i].path);
        free(found[i].category);
        free(found[i].scenario);
        free(found[i].content);
    }
    buf_release(&q);
    llm_turn_release(&turn);
    return list;
}

/* A candidate viewing other's fields (never freed: they stay other's). */
static struct candidate candidate_view(const struct knowledge *other)
{
    struct candidate o = {(char *)other->id,
                          (char *)(other->title ? other->title : ""),
                          (char *)(other->path ? other->path : ""),
                          (char *)other->category,
                          (char *)(other->scenario ? other->scenario : ""),
                          (char *)(other->content ? other->content : ""),
                          0};
    return o;
}

struct json_object *conflicts_pair(const struct svc_ctx *c, const struct knowledge *k,
                                   const struct knowledge *other)
{
    struct candidate o = candidate_view(other);
    struct llm_turn turn;
    struct json_object *item;
    llm_turn_init(&turn, c);
    item = judge_candidate(c, k, &o, &turn);
    llm_turn_release(&turn);
    return item;
}

/* k's neighbours by meaning (its vector v of dim floats) judged against
 * it; returns the contradictions. */
static int meaning_check(const struct svc_ctx *c, const struct knowledge *k, const float *v,
                         int dim, const struct timing_expired *expired, struct llm_turn *t)
{
    struct vindex_hit *hits = NULL;
    size_t nh = 0;
    double floor = c->cfg->embed_min_similarity > CONFLICTS_MEANING_FLOOR
                       ? c->cfg->embed_min_similarity
                       : CONFLICTS_MEANING_FLOOR;
    int found = 0, judged = 0;
    if (vindex_search(c->st, c->space, c->cfg->embed_model, v, dim, 2 * CONFLICTS_CANDIDATES + 1,
                      &hits, &nh, NULL, 0, NULL) != STORE_OK)
        return 0;
    for (size_t i = 0; i < nh && judged < CONFLICTS_CANDIDATES; i++) {
        struct knowledge other;
        struct candidate o;
        struct json_object *item;
        if (hits[i].score < floor)
            break; /* best first */
        if (strcmp(hits[i].id, k->id) == 0 || timing_expired_has(expired, hits[i].id) ||
            store_knowledge_get(c->st, c->space, hits[i].id, 0, &other) != STORE_OK)
            continue;
        if (strcmp(other.category, k->category) == 0) {
            judged++;
            o = candidate_view(&other);
            if ((item = judge_candidate(c, k, &o, t))) {
                found += json_object_object_get_ex(item, "link", NULL);
                json_object_put(item);
            }
        }
        knowledge_release(&other);
    }
    vindex_hits_free(hits, nh);
    return found;
}

int conflicts_by_meaning(const struct svc_ctx *c, const char *const *ids, const float *vecs,
                         size_t n, int dim)
{
    struct timing_expired expired = {0};
    struct llm_turn turn;
    int found = 0;
    if (timing_expired_load(c->st, c->space, &expired) != STORE_OK)
        return 0;
    llm_turn_init(&turn, c);
    turn.llm_only = turn.on;
    for (size_t i = 0; i < n; i++) {
        struct knowledge k;
        if (store_knowledge_get(c->st, c->space, ids[i], 0, &k) != STORE_OK)
            continue; /* gone since */
        if (!timing_expired_has(&expired, k.id))
            found += meaning_check(c, &k, vecs + i * (size_t)dim, dim, &expired, &turn);
        knowledge_release(&k);
    }
    llm_turn_release(&turn);
    timing_expired_release(&expired);
    return found;
}
