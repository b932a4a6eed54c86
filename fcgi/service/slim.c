/* slim: grouping near-duplicates and merging them. */
#include "service/slim.h"
#include "base/buf.h"
#include "base/config.h"
#include "base/jfield.h"
#include "domain/document.h"
#include "domain/knowledge_limits.h"
#include "domain/screen.h"
#include "domain/simset.h"
#include "llm/llm.h"
#include "service/conflicts.h"
#include "service/llmcall.h"
#include "service/reviewgate.h"
#include "store/store.h"
#include "base/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MINHASH 32
#define BANDS 16
#define ROWS (MINHASH / BANDS)
#define BUCKET_CAP 64 /* compare at most this many entries sharing one band value */
#define SHINGLE 3     /* words per shingle when the order of words counts */

struct item {
    char *id, *title, *path, *category, *updated_at;
    double quality;
    struct simset tokens; /* token set or word 3-shingles */
    uint64_t sig[MINHASH];
};

struct items {
    struct item *v;
    size_t n, cap;
    int with_rules;
    int shingles; /* compare word 3-shingles (order-aware), not token sets */
};

static int collect(const struct knowledge *k, void *ctx)
{
    struct items *it = ctx;
    const char *fields[] = {k->title, k->tags, k->scenario, k->content};
    struct item *e;
    if (!it->with_rules && strcmp(k->category, "rules") == 0)
        return 0;
    if (it->n == it->cap) {
        it->cap = it->cap ? it->cap * 2 : 256;
        it->v = xrealloc(it->v, it->cap * sizeof *it->v);
    }
    e = &it->v[it->n++];
    memset(e, 0, sizeof *e);
    e->id = xstrdup(k->id);
    e->title = xstrdup(k->title);
    e->path = xstrdup(k->path);
    e->category = xstrdup(k->category);
    e->updated_at = xstrdup(k->updated_at);
    e->quality = k->score + (double)k->helpful - 2.0 * (double)k->harmful;
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
        if (it->shingles)
            simset_add_words(&e->tokens, fields[f]);
        else
            simset_add_tokens(&e->tokens, fields[f]);
    }
    if (it->shingles)
        simset_shingle(&e->tokens, SHINGLE);
    simset_finish(&e->tokens);
    for (int j = 0; j < MINHASH; j++) {
        uint64_t best = UINT64_MAX, seed = simset_mix((uint64_t)j + 1);
        for (size_t i = 0; i < e->tokens.n; i++) {
            uint64_t v = simset_mix(e->tokens.h[i] ^ seed);
            if (v < best)
                best = v;
        }
        e->sig[j] = best;
    }
    return 0;
}

static double jaccard(const struct item *a, const struct item *b)
{
    return simset_jaccard(&a->tokens, &b->tokens);
}

/* Union-find over item indexes. */
static size_t find(size_t *parent, size_t x)
{
    while (parent[x] != x)
        x = parent[x] = parent[parent[x]];
    return x;
}

/* Item indexes ordered by their group (root), then by index. */
struct member_key {
    size_t root, item;
};

static int cmp_member(const void *a, const void *b)
{
    const struct member_key *x = a, *y = b;
    if (x->root != y->root)
        return x->root < y->root ? -1 : 1;
    return x->item < y->item ? -1 : x->item > y->item;
}

struct band_key {
    uint64_t key;
    size_t item;
};

/* Whether a candidate pair needs its exact Jaccard: not when their MinHash
 * values agree far less often than the threshold asks (the estimate's
 * error at 32 values is about 0.07; 0.3 below is over 4 times that). */
static int worth_measuring(const struct item *a, const struct item *b, double least)
{
    int agree = 0;
    for (int j = 0; j < MINHASH; j++)
        agree += a->sig[j] == b->sig[j];
    return (double)agree / MINHASH >= least - 0.3;
}

static int cmp_band(const void *a, const void *b)
{
    const struct band_key *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->item < y->item ? -1 : x->item > y->item;
}

/* The better survivor: quality, then the newest, then the smaller id. */
static int better(const struct item *a, const struct item *b)
{
    int c;
    if (a->quality != b->quality)
        return a->quality > b->quality;
    if ((c = strcmp(a->updated_at, b->updated_at)))
        return c > 0;
    return strcmp(a->id, b->id) < 0;
}

static struct json_object *item_json(const struct item *e)
{
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "id", json_object_new_string(e->id));
    json_object_object_add(o, "title", json_object_new_string(e->title));
    json_object_object_add(o, "path", json_object_new_string(e->path));
    json_object_object_add(o, "category", json_object_new_string(e->category));
    json_object_object_add(o, "quality", json_object_new_double(e->quality));
    return o;
}

/* Free what collect gathered. */
static void items_release(struct items *it)
{
    for (size_t i = 0; i < it->n; i++) {
        free(it->v[i].id);
        free(it->v[i].title);
        free(it->v[i].path);
        free(it->v[i].category);
        free(it->v[i].updated_at);
        simset_release(&it->v[i].tokens);
    }
    free(it->v);
}

/* Union the items at least least alike (one category only) into trees:
 * the parent array (caller frees), find() gives an item's group. Only
 * entries sharing a MinHash band value are measured. */
static size_t *similar_groups(const struct items *it, double least)
{
    size_t *parent = xcalloc(it->n + 1, sizeof *parent), nkeys = 0;
    struct band_key *keys = xcalloc(it->n * BANDS + 1, sizeof *keys);
    for (size_t i = 0; i < it->n; i++)
        parent[i] = i;
    for (size_t i = 0; i < it->n; i++) {
        if (!it->v[i].tokens.n)
            continue;
        for (int b = 0; b < BANDS; b++) {
            uint64_t h = simset_mix((uint64_t)b * 0x51ED27ULL) ^
                         hash_fnv1a(it->v[i].category, strlen(it->v[i].category));
            for (int r = 0; r < ROWS; r++)
                h = simset_mix(h ^ it->v[i].sig[b * ROWS + r]);
            keys[nkeys].key = h;
            keys[nkeys++].item = i;
        }
    }
    if (nkeys > 1)
        qsort(keys, nkeys, sizeof *keys, cmp_band);
    /* Entries sharing a band value are candidates; the exact Jaccard decides. */
    for (size_t s = 0; s < nkeys;) {
        size_t e = s + 1;
        while (e < nkeys && keys[e].key == keys[s].key)
            e++;
        for (size_t a = s; a < e && a < s + BUCKET_CAP; a++)
            for (size_t b = a + 1; b < e && b < s + BUCKET_CAP; b++) {
                size_t x = keys[a].item, y = keys[b].item;
                if (find(parent, x) != find(parent, y) &&
                    worth_measuring(&it->v[x], &it->v[y], least) &&
                    strcmp(it->v[x].category, it->v[y].category) == 0 &&
                    jaccard(&it->v[x], &it->v[y]) >= least)
                    parent[find(parent, x)] = find(parent, y);
            }
        s = e;
    }
    free(keys);
    return parent;
}

/* One group's JSON: its survivor (the better entry) and the members with
 * their similarity to it; members are items order[s..e). */
static struct json_object *group_json(const struct items *it, const struct member_key *order,
                                      size_t s, size_t e)
{
    struct json_object *g = json_object_new_object(), *members = json_object_new_array();
    size_t survivor = order[s].item;
    for (size_t i = s + 1; i < e; i++)
        if (better(&it->v[order[i].item], &it->v[survivor]))
            survivor = order[i].item;
    json_object_object_add(g, "survivor", item_json(&it->v[survivor]));
    for (size_t i = s; i < e; i++) {
        size_t m = order[i].item;
        if (m == survivor)
            continue;
        struct json_object *mj = item_json(&it->v[m]);
        json_object_object_add(mj, "similarity",
                               json_object_new_double(jaccard(&it->v[m], &it->v[survivor])));
        json_object_array_add(members, mj);
    }
    json_object_object_add(g, "members", members);
    return g;
}

/* The groups of two or more items as a JSON array. */
static struct json_object *groups_json(const struct items *it, size_t *parent)
{
    struct json_object *groups = json_object_new_array();
    /* Groups in one sort by root (never a scan of all items per root). */
    struct member_key *order = xcalloc(it->n + 1, sizeof *order);
    for (size_t i = 0; i < it->n; i++) {
        order[i].root = find(parent, i);
        order[i].item = i;
    }
    if (it->n > 1)
        qsort(order, it->n, sizeof *order, cmp_member);
    for (size_t s = 0; s < it->n;) {
        size_t e = s + 1;
        while (e < it->n && order[e].root == order[s].root)
            e++;
        if (e - s >= 2)
            json_object_array_add(groups, group_json(it, order, s, e));
        s = e;
    }
    free(order);
    return groups;
}

int slim_plan(struct store *st, const char *space, double threshold, int with_rules, int by_llm,
              struct json_object **plan)
{
    struct items it = {.with_rules = with_rules, .shingles = !by_llm};
    size_t *parent;
    double least =
        by_llm ? threshold
               : (threshold > SLIM_LOCAL_MIN_SIMILARITY ? threshold : SLIM_LOCAL_MIN_SIMILARITY);
    int rc = store_knowledge_scan(st, space, SCAN_ACTIVE, NULL, 0, collect, &it);
    *plan = NULL;
    if (rc) {
        items_release(&it);
        return rc;
    }
    parent = similar_groups(&it, least);
    *plan = json_object_new_object();
    json_object_object_add(*plan, "threshold", json_object_new_double(threshold));
    json_object_object_add(*plan, "similarity",
                           json_object_new_string(by_llm ? "token-set" : "word-3-shingles"));
    json_object_object_add(*plan, "min_similarity", json_object_new_double(least));
    json_object_object_add(*plan, "entries", json_object_new_int64((int64_t)it.n));
    json_object_object_add(*plan, "groups", groups_json(&it, parent));
    free(parent);
    items_release(&it);
    return rc;
}

/* ---- merging ---- */

/* The LLM's merged text of the survivor and members; 0, or -1 with error. */
static int merged_text(const struct slim_ctx *c, const struct knowledge *survivor,
                       struct knowledge *members, size_t n, struct buf *out,
                       struct json_object **error)
{
    size_t limit =
        strcmp(survivor->category, "rules") == 0 ? LIMIT_RULES_BODY : LIMIT_EXPERIENCES_BODY;
    struct json_object *messages = json_object_new_array();
    struct llm_request lr = {0};
    struct llm_reply r;
    struct screen_result screened;
    struct buf system, user;
    int rc = -1;
    buf_init(&system, 4096);
    buf_init(&user, 4 << 20);
    llm_reply_init(&r);
    buf_addf(&system,
             "You merge near-duplicate entries of a knowledge base that AI agents read into one "
             "entry: keep every distinct method, condition and pitfall, drop repetition, no raw "
             "data or secrets. Answer with the merged content only, in Markdown, at most %zu "
             "characters, in the entries' language.",
             limit);
    /* Titles on their entry's line, whatever was stored. */
    buf_adds(&user, "Entry 1 (");
    buf_add_one_line(&user, survivor->title);
    buf_addf(&user, "):\n%s\n\n", survivor->content);
    for (size_t i = 0; i < n; i++) {
        buf_addf(&user, "Entry %zu (", i + 2);
        buf_add_one_line(&user, members[i].title);
        buf_addf(&user, "):\n%s\n\n", members[i].content);
    }
    json_object_array_add(messages, llm_message("system", system.data));
    json_object_array_add(messages, llm_message("user", user.data));
    lr = svc_llm_request(&c->svc, "slim", messages);
    lr.model = c->model;
    if (svc_llm_chat(&c->svc, &lr, &r)) {
        *error = error_json(&r.err);
    } else if (utf8_length(r.text.data, r.text.len) > limit) {
        *error = error_json_text("LIMIT_EXCEEDED", "The LLM's merged text is over the limit");
    } else if (screen_text(r.text.data, r.text.len, &screened) != 0) {
        /* The poisoning screen, as on every write (docs/review.md): a merged
         * text that tries to steer its reader is not written. */
        buf_reset(out);
        buf_adds(out, "The poisoning screen found");
        for (size_t i = 0; i < screened.count; i++)
            buf_addf(out, "%s %s", i ? "," : "", screened.findings[i].code);
        buf_adds(out, " in the LLM's merged text; the group was left as it was");
        *error = error_json_text("LLM_CONTENT_FILTERED", out->data);
        buf_reset(out);
    } else {
        buf_reset(out);
        buf_add(out, r.text.data, r.text.len);
        rc = 0;
    }
    json_object_put(messages);
    llm_reply_release(&r);
    buf_release(&system);
    buf_release(&user);
    return rc;
}

/* The group's survivor and its members as stored now: *members (caller
 * releases the *n read and frees it) holds those still there. -1 with
 * *error when the survivor is gone. */
static int group_read(const struct slim_ctx *c, struct json_object *group,
                      struct knowledge *survivor, struct knowledge **members, size_t *n,
                      struct json_object **error)
{
    struct json_object *surv_j, *members_j, *id;
    json_object_object_get_ex(group, "survivor", &surv_j);
    json_object_object_get_ex(group, "members", &members_j);
    json_object_object_get_ex(surv_j, "id", &id);
    if (store_knowledge_get(c->svc.st, c->svc.space, json_object_get_string(id), 0, survivor)) {
        *error = error_json_text("NOT_FOUND", "The surviving entry is gone; the group was skipped");
        return -1;
    }
    *members = xcalloc(json_object_array_length(members_j) + 1, sizeof **members);
    for (size_t i = 0; i < json_object_array_length(members_j); i++) {
        json_object_object_get_ex(json_object_array_get_idx(members_j, i), "id", &id);
        knowledge_init(&(*members)[*n]);
        if (store_knowledge_get(c->svc.st, c->svc.space, json_object_get_string(id), 0,
                                &(*members)[*n]) == 0)
            (*n)++;
    }
    return 0;
}

/* Give the survivor a "merge" revision: the merged text, or (without an
 * LLM, text empty) its own, so its history shows the merge. A store status. */
static int survivor_revise(const struct slim_ctx *c, const struct knowledge *survivor,
                           const struct buf *text)
{
    struct knowledge next;
    struct buf doc;
    int rc;
    knowledge_init(&next);
    buf_init(&doc, 4 << 20);
    if (text->len)
        document_with_body(survivor->document, text->data, &doc);
    else
        buf_adds(&doc, survivor->document);
    next.category = xstrdup(survivor->category);
    next.path = xstrdup(survivor->path);
    document_fill(&next, survivor->category, survivor->path, doc.data, doc.len);
    rc = store_knowledge_update(c->svc.st, c->svc.space, survivor->id, &next, survivor->version,
                                c->svc.actor, "merge");
    knowledge_release(&next);
    buf_release(&doc);
    return rc;
}

/* In one transaction, the survivor's revision and every member merged into
 * it; on any failure nothing changes and *error says why. */
static int group_write(const struct slim_ctx *c, const struct knowledge *survivor,
                       const struct knowledge *members, size_t n, const struct buf *text,
                       struct json_object **error)
{
    int urc;
    if (store_begin(c->svc.st))
        goto store_failed;
    if ((urc = survivor_revise(c, survivor, text))) {
        store_rollback(c->svc.st);
        if (urc == STORE_CONFLICT) { /* edited while the LLM merged */
            *error = error_json_text("CONFLICT", "The surviving entry changed meanwhile; the group "
                                                 "was left as it was");
            return -1;
        }
        goto store_failed;
    }
    for (size_t i = 0; i < n; i++) {
        /* A member edited since it was read (and given to the LLM) is not
         * merged over: the whole group is left as it was. */
        int mrc = store_knowledge_merge(c->svc.st, c->svc.space, survivor->id, members[i].id,
                                        members[i].version, c->svc.actor);
        if (mrc == STORE_CONFLICT || mrc == STORE_NOT_FOUND) {
            store_rollback(c->svc.st);
            *error = error_json_text("CONFLICT", "An entry of the group changed meanwhile; the "
                                                 "group was left as it was");
            return -1;
        }
        if (mrc) {
            store_rollback(c->svc.st);
            goto store_failed;
        }
    }
    if (store_commit(c->svc.st))
        goto store_failed;
    return 0;
store_failed:
    *error = error_json_text("SERVICE_UNAVAILABLE", "The database could not be written; the group "
                                                    "was left as it was");
    return -1;
}

/* A held slim merge (pending or quarantined) one of the group is in
 * already: -1 with *error CONFLICT naming it, else 0. */
static int group_held(const struct slim_ctx *c, const struct knowledge *survivor,
                      const struct knowledge *members, size_t n, struct json_object **error)
{
    char *id = NULL;
    int rc = STORE_NOT_FOUND;
    for (size_t i = 0; i <= n && rc == STORE_NOT_FOUND; i++)
        rc = store_proposal_member_held(c->svc.st, c->svc.space,
                                        i == n ? survivor->id : members[i].id, &id);
    if (rc == STORE_NOT_FOUND)
        return 0;
    if (rc == STORE_OK) {
        struct buf msg;
        buf_init(&msg, 256);
        buf_addf(&msg,
                 "An entry of the group is in slim merge %s, held for review; decide it "
                 "first. The group was left as it was",
                 id);
        *error = error_json_text("CONFLICT", msg.data);
        json_object_object_add(*error, "proposal_id", json_object_new_string(id));
        buf_release(&msg);
    } else {
        *error = error_json_text("SERVICE_UNAVAILABLE", "The review queue could not be read; "
                                                        "the group was left as it was");
    }
    free(id);
    return -1;
}

/* Hold the merge for review: one proposal of kind slim_merge, the
 * survivor's new document (the merged text, or its own without an LLM)
 * against its live one, its members at the versions read. 1 with *held,
 * or -1 with *error. */
static int group_propose(const struct slim_ctx *c, const struct knowledge *survivor,
                         const struct knowledge *members, size_t n, const struct buf *text,
                         struct json_object **held, struct json_object **error)
{
    struct review_member *list = xcalloc(n, sizeof *list);
    struct error err;
    struct buf doc;
    int rc;
    buf_init(&doc, 4 << 20);
    if (text->len)
        document_with_body(survivor->document, text->data, &doc);
    else
        buf_adds(&doc, survivor->document);
    for (size_t i = 0; i < n; i++)
        list[i] = (struct review_member){members[i].id, members[i].version};
    struct review_write w = {.write_path = "slim",
                             .kind = "slim_merge",
                             .knowledge_id = survivor->id,
                             .base_version = survivor->version,
                             .category = survivor->category,
                             .path = survivor->path,
                             .document = doc.data,
                             .base_document = survivor->document,
                             .source = "slim",
                             .by_llm = text->len > 0,
                             /* the survivor's own text: nothing new to screen */
                             .was_live = text->len == 0,
                             .members = list,
                             .member_count = n};
    error_init(&err);
    rc = review_propose(&c->svc, &w, held, &err) < 0 ? -1 : 1;
    if (rc < 0)
        *error = error_json(&err);
    error_release(&err);
    buf_release(&doc);
    free(list);
    return rc;
}

/* A member that contradicts the survivor or a member kept before it (the
 * local detector, service/conflicts.h) is split off the group, never merged:
 * it leaves the group's members, goes to the group's conflicts (the
 * detector's item, with member: its id) and is linked (member contradicts
 * the other). Returns how many members are left, compacted in members. */
static size_t split_contradictions(const struct slim_ctx *c, struct json_object *group,
                                   const struct knowledge *survivor, struct knowledge *members,
                                   size_t n)
{
    struct json_object *members_j, *found = NULL;
    size_t kept = 0;
    json_object_object_get_ex(group, "members", &members_j);
    for (size_t i = 0; i < n; i++) {
        struct json_object *item = NULL;
        for (size_t j = 0; j <= kept && !item; j++) {
            const struct knowledge *other = j == 0 ? survivor : &members[j - 1];
            item = conflicts_pair(&c->svc, &members[i], other);
            if (item && strcmp(jf_member_str(item, "verdict"), "contradiction") != 0) {
                json_object_put(item); /* a duplicate or a refinement merges */
                item = NULL;
            }
        }
        if (!item) {
            if (kept != i)
                members[kept] = members[i];
            kept++;
            continue;
        }
        json_object_object_add(item, "member", json_object_new_string(members[i].id));
        if (!found)
            json_object_object_add(group, "conflicts", found = json_object_new_array());
        json_object_array_add(found, item);
        for (size_t m = json_object_array_length(members_j); m-- > 0;)
            if (strcmp(jf_member_str(json_object_array_get_idx(members_j, m), "id"),
                       members[i].id) == 0)
                json_object_array_del_idx(members_j, m, 1);
        knowledge_release(&members[i]);
    }
    return kept;
}

int slim_merge_group(const struct slim_ctx *c, struct json_object *group, struct json_object **held,
                     struct json_object **error)
{
    struct knowledge survivor, *members = NULL;
    struct buf text;
    size_t n = 0;
    int rc = -1;

    *error = NULL;
    knowledge_init(&survivor);
    buf_init(&text, 4 << 20);
    if (group_read(c, group, &survivor, &members, &n, error))
        goto out;
    n = split_contradictions(c, group, &survivor, members, n);
    if (n == 0) {
        rc = 0; /* merged meanwhile: nothing left to do */
        goto out;
    }
    if (c->hold && group_held(c, &survivor, members, n, error))
        goto out;
    /* The LLM first, outside the transaction; a failure leaves all as it was. */
    if (config_llm_configured(c->svc.cfg) && merged_text(c, &survivor, members, n, &text, error))
        goto out;
    rc = c->hold ? group_propose(c, &survivor, members, n, &text, held, error)
                 : group_write(c, &survivor, members, n, &text, error);
out:
    knowledge_release(&survivor);
    for (size_t i = 0; i < n; i++)
        knowledge_release(&members[i]);
    free(members);
    buf_release(&text);
    return rc;
}
