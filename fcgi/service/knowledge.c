/* knowledge (service): the entry view's operations, with their rules:
 * rules are changed by admins only (checked on the entry as it is inside
 * the writing transaction), a case counts once per case_id, evolve asks the
 * LLM outside any transaction and applies its rewrite atomically. */
#include "service/knowledge.h"
#include "service/auth.h"
#include "base/config.h"
#include "base/error.h"
#include "base/jfield.h"
#include "base/util.h"
#include "domain/document.h"
#include "domain/knowledge.h"
#include "domain/knowledge_limits.h"
#include "domain/paths.h"
#include "llm/llm.h"
#include "service/conflicts.h"
#include "service/ctx.h"
#include "service/evolve.h"
#include "service/idempotency.h"
#include "service/linkdoc.h"
#include "service/reviewgate.h"
#include "service/timing.h"
#include "service/writerate.h"
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

#define WHAT "Knowledge entry"

/* ---- shared pieces ---- */

/* The path of an entry saved without one, into out: its title's slug
 * (paths.h) at the top of its category, "-n" added from n = 2 on; the
 * entry's id when the title has no letter or digit or 100 names are taken. */
static void derived_path(const struct knowledge *k, int n, struct buf *out)
{
    buf_reset(out);
    if (n >= 100 || path_slug(k->title, out))
        buf_adds(out, k->id);
    else if (n > 1)
        buf_addf(out, "-%d", n);
    buf_adds(out, ".md");
}

/* The names a slug has taken, as read: taken[n] for "slug.md" (n 1) and
 * "slug-n.md" (n 2 .. 99). */
struct slug_names {
    const char *slug;
    size_t len;
    unsigned char taken[100];
};

static void slug_name(const char *path, void *ctx)
{
    struct slug_names *sn = ctx;
    const char *p = path + sn->len, *end;
    long n = 1;
    if (strncmp(path, sn->slug, sn->len) != 0)
        return;
    if (*p == '-') {
        n = strtol(p + 1, (char **)&end, 10);
        if (end == p + 1 || p[1] == '0' || n < 2 || n > 99)
            return;
        p = end;
    }
    if (strcmp(p, ".md") == 0)
        sn->taken[n] = 1;
}

/* The first "-n" (1: none) free for k's title in its category, read in one
 * query, so a common title costs one insert, not one per name taken; 1
 * when the title has no slug or the names cannot be read (the insert's
 * retries find the free one then), 100 when 1 .. 99 are all taken (the
 * entry's id names it). */
static int first_free_name(struct store *st, const struct knowledge *k)
{
    struct slug_names sn = {0};
    struct buf slug, from, to;
    int n = 1;
    buf_init(&slug, 256);
    buf_init(&from, 256);
    buf_init(&to, 256);
    if (path_slug(k->title, &slug) == 0) {
        /* "slug-..." and "slug.md": every name from "slug-" (0x2d) to
         * before "slug/" (0x2f), "." (0x2e) between */
        buf_addf(&from, "%s-", slug.data);
        buf_addf(&to, "%s/", slug.data);
        sn.slug = slug.data;
        sn.len = slug.len;
        if (store_knowledge_paths_range(st, k->space, k->category, from.data, to.data, 1000,
                                        slug_name, &sn) == STORE_OK)
            while (n < 100 && sn.taken[n])
                n++;
    }
    buf_release(&slug);
    buf_release(&from);
    buf_release(&to);
    return n;
}

int knowledge_create(struct store *st, struct knowledge *k, const char *actor)
{
    char id[36];
    int rc = STORE_ERROR, derive_path = k->path == NULL, derive_document = 0, id_tries = 0;
    int n = derive_path ? first_free_name(st, k) : 1;
    /* 32 random bits a day: collisions are rare but real at scale, so retry;
     * a derived path taken (or clashing with a folder) tries the next "-n". */
    while (id_tries < 8 && n <= 100) {
        int id_taken = 0;
        knowledge_new_id(id);
        free(k->id);
        k->id = xstrdup(id);
        if (derive_path) {
            struct buf path;
            buf_init(&path, 256);
            derived_path(k, n, &path);
            free(k->path);
            k->path = buf_detach(&path, NULL);
        }
        if (!k->document || derive_document) {
            struct buf doc;
            buf_init(&doc, 1 << 20);
            derive_document = 1;
            document_for_entry(k, &doc);
            document_fill(k, k->category, k->path, doc.data, doc.len);
            buf_release(&doc);
        }
        rc = store_knowledge_insert(st, k, actor, &id_taken);
        if (rc != STORE_CONFLICT || !(id_taken || derive_path))
            return rc;
        if (id_taken)
            id_tries++;
        else
            n++;
    }
    return rc;
}

int knowledge_path_free(const struct svc_ctx *c, const char *category, const char *path,
                        const char *except_id, struct error *err)
{
    enum path_clash clash;
    const char *slash = strchr(path, '/');
    int rc = store_knowledge_path_clash(c->st, c->space, category, path, except_id, &clash);
    if (rc) {
        store_status_error(rc, "Knowledge file", err);
        return -1;
    }
    if (clash == PATH_CLASH_FOLDER) {
        error_set(err, E_CONFLICT, "path_is_folder",
                  "%s/%s is a folder that holds other documents; a name is a file or a "
                  "folder, never both",
                  category, path);
        error_str(err, "category", category);
        error_str(err, "path", path);
        return -1;
    }
    if (clash == PATH_CLASH_FILE) {
        char *folder = xstrndup(path, (size_t)(slash - path));
        error_set(err, E_CONFLICT, "path_is_document",
                  "%s/%.*s is a document; a name is a file or a folder, never both", category,
                  (int)(slash - path), path);
        error_str(err, "category", category);
        error_str(err, "path", folder);
        free(folder);
        return -1;
    }
    return 0;
}

int knowledge_may_change(const struct svc_ctx *c, const char *category, struct error *err)
{
    if (auth_may_change(c->role, category))
        return 0;
    error_set(err, E_FORBIDDEN, "rules_admin_only", "Only admins may change rules");
    return -1;
}

static const char *str_or_empty(const char *s)
{
    return s ? s : "";
}

static void add_injection(const struct log_entry *e, void *ctx)
{
    struct json_object *o = json_object_new_object();
#define S(x) json_object_new_string(str_or_empty(x))
    json_object_object_add(o, "trace_id", S(e->trace_id));
    json_object_object_add(o, "goal_id", S(e->goal_id));
    json_object_object_add(o, "injected_at_sequence",
                           json_object_new_int64(e->injected_at_sequence));
    json_object_object_add(o, "injected_at", S(e->injected_at));
    json_object_object_add(o, "eval_status", e->eval_status ? S(e->eval_status) : NULL);
    json_object_object_add(o, "eval_reason", e->eval_reason ? S(e->eval_reason) : NULL);
    json_object_object_add(o, "evaluated_at", e->evaluated_at ? S(e->evaluated_at) : NULL);
    json_object_object_add(o, "evaluated_at_trigger",
                           e->evaluated_at_trigger ? S(e->evaluated_at_trigger) : NULL);
#undef S
    json_object_array_add(ctx, o);
}

/* The injections an entry shows: where it was injected and how it was
 * judged, newest first. */
#define KNOWLEDGE_LOG_SHOWN 50

/* What an entry's answer shows beside its fields, to be read into. */
static void entry_parts_init(struct knowledge_parts *p)
{
    memset(p, 0, sizeof *p);
    p->cases_limit = KNOWLEDGE_HISTORY_SHOWN;
    p->log_limit = KNOWLEDGE_LOG_SHOWN;
    p->each_case = knowledge_case_to_json;
    p->helpful = json_object_new_array();
    p->harmful = json_object_new_array();
    p->each_log = add_injection;
    p->log = json_object_new_array();
}

/* k's answer from its parts into *out (taking the parts' arrays) when rc is
 * STORE_OK; never an entry whose history looks empty because it was not
 * read. Returns rc. */
static int entry_parts_json(int rc, const struct knowledge *k, struct knowledge_parts *p,
                            struct json_object **out)
{
    *out = NULL;
    if (rc == STORE_OK) {
        *out = knowledge_to_json(k, p->helpful, p->harmful, p->log);
        timing_json_of(&p->time, *out);
    } else {
        json_object_put(p->helpful);
        json_object_put(p->harmful);
        json_object_put(p->log);
    }
    knowledge_time_release(&p->time);
    return rc;
}

int knowledge_entry_json(struct store *st, const struct knowledge *k, struct json_object **out)
{
    struct knowledge_parts p;
    int rc;
    entry_parts_init(&p);
    rc = store_knowledge_cases_each(st, k->id, "helpful", p.cases_limit, p.each_case, p.helpful);
    if (rc == STORE_OK)
        rc =
            store_knowledge_cases_each(st, k->id, "harmful", p.cases_limit, p.each_case, p.harmful);
    if (rc == STORE_OK)
        rc = store_log_of_entry(st, k->id, p.log_limit, p.each_log, p.log);
    if (rc == STORE_OK)
        rc = store_time_get(st, k->space, k->id, &p.time);
    return entry_parts_json(rc, k, &p, out);
}

int knowledge_entry_data(const struct svc_ctx *c, const char *id, struct json_object *extra,
                         struct json_object **data, struct error *err)
{
    struct knowledge k;
    struct knowledge_parts p;
    int rc;
    /* One statement: one snapshot, one round trip on PostgreSQL. */
    entry_parts_init(&p);
    rc = entry_parts_json(store_knowledge_read(c->st, c->space, id, 0, &k, &p), &k, &p, data);
    if (rc) {
        knowledge_release(&k);
        json_object_put(extra);
        store_status_error(rc, WHAT, err);
        return -1;
    }
    if (extra) {
        json_object_object_foreach(extra, key, val)
            json_object_object_add(*data, key, json_object_get(val));
        json_object_put(extra);
    }
    knowledge_release(&k);
    return 0;
}

/* A store status other than STORE_OK as err; -1. */
static int store_fail(int rc, struct error *err)
{
    store_status_error(rc, WHAT, err);
    return -1;
}

/* ---- list ---- */

static int list_add(const struct knowledge *k, void *ctx)
{
    json_object_array_add(ctx, knowledge_to_json(k, NULL, NULL, NULL));
    return 0;
}

int svc_knowledge_list(const struct svc_ctx *c, const struct knowledge_filter *f,
                       struct json_object **data, struct error *err)
{
    struct json_object *items = json_object_new_array();
    long total = 0;
    int rc = store_knowledge_list(c->st, c->space, f, list_add, items, &total);
    for (size_t i = 0; rc == STORE_OK && i < json_object_array_length(items); i++) {
        struct json_object *o = json_object_array_get_idx(items, i), *id;
        if (json_object_object_get_ex(o, "id", &id))
            rc = timing_json_add(c->st, c->space, json_object_get_string(id), o);
    }
    if (rc) {
        json_object_put(items);
        return store_fail(rc, err);
    }
    *data = json_object_new_object();
    json_object_object_add(*data, "items", items);
    json_object_object_add(*data, "total", json_object_new_int64(total));
    json_object_object_add(*data, "limit", json_object_new_int64(f->limit));
    json_object_object_add(*data, "offset", json_object_new_int64(f->offset));
    return 0;
}

/* ---- create ---- */

/* JSON array text of a validated list of strings (a lone string is one item). */
static char *list_text(struct json_object *list)
{
    struct json_object *arr;
    char *text;
    if (!list)
        return xstrdup("[]");
    if (json_object_is_type(list, json_type_string)) {
        arr = json_object_new_array();
        json_object_array_add(arr, json_object_get(list));
    } else {
        arr = json_object_get(list);
    }
    text = xstrdup(json_text(arr));
    json_object_put(arr);
    return text;
}

/* A title from the first line of the scenario, at most 80 characters. */
static char *title_from(const char *scenario)
{
    const char *s = scenario + strspn(scenario, " \t\r\n");
    size_t n = strcspn(s, "\r\n");
    n = utf8_prefix(s, n, 80);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    return xstrndup(s, n);
}

static int body_limit(const char *category, const char *content, struct error *err)
{
    size_t max = strcmp(category, "rules") == 0 ? LIMIT_RULES_BODY : LIMIT_EXPERIENCES_BODY;
    size_t chars = utf8_length(content, strlen(content));
    if (chars > max) {
        error_set(err, E_LIMIT_EXCEEDED, "body_too_long",
                  "%s body exceeds %zu characters (got %zu)", category, max, chars);
        error_str(err, "category", category);
        error_int(err, "max", (long long)max);
        error_int(err, "got", (long long)chars);
        return -1;
    }
    return 0;
}

/* A key seen before (idem_find): 1 with the entry it made as *data,
 * "replayed": true; -1 with err; 0 when the key is new. */
static int idem_replay(const struct svc_ctx *c, const struct idem *idem, struct json_object **data,
                       struct error *err)
{
    char *id = NULL;
    int rc = idem_find(c, idem, &id, err);
    if (rc == 1) {
        /* a key of a held save names its proposal (entry_held) */
        rc = (strncmp(id, "prop-", 5) == 0 ? review_held_data(c, id, data, err)
                                           : knowledge_entry_data(c, id, NULL, data, err))
                 ? -1
                 : 1;
        if (rc == 1)
            json_object_object_add(*data, "replayed", json_object_new_boolean(1));
    }
    free(id);
    return rc;
}

/* knowledge_create and the Idempotency-Key's row in one transaction, so a
 * committed entry always has its key (a retry after a crash finds it);
 * *raced when a request with the same key committed first. */
static int create_keyed(const struct svc_ctx *c, struct knowledge *k, const struct idem *idem,
                        int *raced)
{
    int rc = store_begin(c->st);
    *raced = 0;
    if (rc)
        return rc;
    rc = knowledge_create(c->st, k, c->actor);
    if (rc == STORE_OK) {
        rc = store_idempotency_put(c->st, c->space, idem->key, idem->digest, k->id);
        *raced = rc == STORE_CONFLICT;
    }
    if (rc == STORE_OK)
        return store_commit(c->st);
    store_rollback(c->st);
    return rc;
}

/* The review gate (service/reviewgate.h) for a new entry k of the entry
 * view: 1 with *data when it is held as a proposal, 0 to write it, -1 with
 * err. With an Idempotency-Key the proposal and the key are stored in one
 * transaction, so a retry gets the same proposal (idem_replay), never a
 * second one; *raced when a request with the same key committed first. */
static int entry_held(const struct svc_ctx *c, const struct knowledge *k,
                      const struct timing_change *when, const struct idem *idem,
                      struct json_object **data, int *raced, struct error *err)
{
    struct buf doc;
    struct review_write w = {0};
    int rc, tx;
    *raced = 0;
    if (idem->key && (tx = store_begin(c->st)))
        return store_fail(tx, err);
    buf_init(&doc, 1 << 20);
    document_for_entry(k, &doc);
    timing_change_document(&doc, when); /* its time in it: an approval sets it */
    w.write_path = "entry";
    w.kind = "create";
    w.category = k->category;
    w.path = k->path ? k->path : "";
    w.document = doc.data;
    w.agent_id = k->agent_id;
    w.source = k->source;
    rc = review_gate(c, &w, data, err);
    buf_release(&doc);
    if (!idem->key)
        return rc;
    if (rc < 0) {
        store_rollback(c->st);
        return -1;
    }
    tx = rc > 0 ? store_idempotency_put(c->st, c->space, idem->key, idem->digest,
                                        jf_member_str(*data, "proposal_id"))
                : STORE_OK;
    if (tx != STORE_OK)
        store_rollback(c->st);
    else if ((tx = store_commit(c->st)) == STORE_OK)
        return rc;
    if (rc > 0) { /* not kept: no answer of it */
        json_object_put(*data);
        *data = NULL;
    }
    *raced = tx == STORE_CONFLICT;
    return *raced ? 1 : store_fail(tx, err);
}

int svc_knowledge_create(const struct svc_ctx *c, struct json_object *body,
                         struct json_object **data, struct error *err)
{
    struct json_object *tags_type = NULL, *urls = NULL, *tags = NULL;
    const char *scenario, *content, *agent_id, *message_id, *title, *category, *path, *description;
    long score;
    int always_apply, rc = 0, result = -1;
    struct knowledge k;
    struct buf norm;
    struct idem idem;
    struct timing_change when;
    int raced = 0;

    knowledge_init(&k);
    buf_init(&norm, 1024);
    /* a key seen before: the entry it made, nothing new */
    if (idem_begin(c, body, &idem, err) || (idem.key && (rc = idem_replay(c, &idem, data, err)))) {
        result = idem.key && rc > 0 ? 0 : -1;
        goto out;
    }
    if (jf_string(err, body, "scenario", 1, LIMIT_SCENARIO, &scenario) ||
        jf_string(err, body, "content", 1, LIMIT_EXPERIENCES_BODY * 4, &content) ||
        jf_string_list(err, body, "tags_type", KTYPE_COUNT * 2, 32, 0, &tags_type) ||
        jf_string_list(err, body, "urls", LIMIT_URLS, LIMIT_URL, 0, &urls) ||
        jf_string(err, body, "agent_id", 0, LIMIT_SHORT_TEXT, &agent_id) ||
        jf_long(err, body, "score", 1, 5, 3, &score) ||
        jf_string(err, body, "message_id", 0, LIMIT_SHORT_TEXT, &message_id) ||
        jf_string(err, body, "title", 0, LIMIT_TITLE, &title) ||
        jf_string_list(err, body, "tags", LIMIT_TAGS, LIMIT_TAG, 1, &tags) ||
        jf_string(err, body, "category", 0, 32, &category) ||
        jf_string(err, body, "path", 0, 1024, &path) ||
        jf_string(err, body, "description", 0, LIMIT_RULE_DESCRIPTION, &description) ||
        jf_bool(err, body, "always_apply", 1, &always_apply) ||
        knowledge_types_add_json(tags_type, &k.types, err) || timing_change_of(body, &when, err))
        goto out;
    /* A title is one line: it heads a section in the blocks agents paste. */
    if (title && has_line_break(title)) {
        error_set(err, E_INVALID_REQUEST, "title_one_line",
                  "'title' must be one line (no line breaks)");
        goto out;
    }
    if (!category)
        category = "experiences";
    if (!category_valid(category)) {
        error_set(err, E_INVALID_REQUEST, "invalid_category", "Invalid category: %s", category);
        error_str(err, "category", category);
        goto out;
    }
    if (knowledge_may_change(c, category, err) || body_limit(category, content, err))
        goto out;
    if (path) {
        if (path_check(category, path, &norm, err))
            goto out;
        k.path = xstrndup(norm.data, norm.len);
        if (knowledge_path_free(c, category, k.path, NULL, err))
            goto out;
    } else if (strcmp(category, "rules") == 0) {
        error_set(err, E_INVALID_REQUEST, "rule_path_required", "'path' is required for a rule");
        goto out;
    }
    if (write_admit(c, 1, err))
        goto out;
    k.space = xstrdup(c->space);
    k.category = xstrdup(category);
    k.title = title && *title ? xstrdup(title) : title_from(scenario);
    k.description = xstrdup(description ? description : "");
    k.tags = list_text(tags);
    k.urls = list_text(urls);
    k.scenario = xstrdup(scenario);
    k.content = xstrdup(content);
    k.always_apply = always_apply;
    k.source = xstrdup("agent");
    k.agent_id = xstrdup(agent_id ? agent_id : "");
    k.message_id = xstrdup(message_id ? message_id : "");
    k.score = (int)score;
    {
        char now[20];
        time_utc_text(now);
        now[10] = 'T';
        k.source_ts = xstrdup(now);
    }
    if ((rc = entry_held(c, &k, &when, &idem, data, &raced, err))) {
        if (raced) /* the same key, committed first: its answer */
            rc = idem_replay(c, &idem, data, err);
        result = rc > 0 ? 0 : -1;
        if (raced && rc == 0)
            error_set(err, E_CONFLICT, "idempotency_key_reused",
                      "This Idempotency-Key is being used by another request");
        goto out;
    }
    /* the entry and its time in one transaction */
    if ((rc = store_begin(c->st)) == STORE_OK) {
        rc = idem.key ? create_keyed(c, &k, &idem, &raced) : knowledge_create(c->st, &k, c->actor);
        rc = store_tx_end(c->st, rc ? rc : timing_apply(c->st, c->space, k.id, &when));
    }
    if (raced) {
        rc = idem_replay(c, &idem, data, err);
        result = rc > 0 ? 0 : -1;
        if (rc == 0) /* ended between the two reads (a day passed): a plain conflict */
            error_set(err, E_CONFLICT, "idempotency_key_reused",
                      "This Idempotency-Key is being used by another request");
    } else if (rc == STORE_CONFLICT) {
        error_set(err, E_CONFLICT, "path_taken", "An entry already exists at %s/%s", k.category,
                  k.path);
        error_str(err, "category", k.category);
        error_str(err, "path", k.path);
    } else if (rc) {
        store_fail(rc, err);
    } else if ((result = knowledge_entry_data(c, k.id, NULL, data, err)) == 0) {
        json_object_object_add(*data, "conflicts", conflicts_check(c, &k));
    }
out:
    knowledge_release(&k);
    buf_release(&norm);
    return result;
}

/* ---- get ---- */

int svc_knowledge_get(const struct svc_ctx *c, const char *id, struct json_object **data,
                      struct error *err)
{
    return knowledge_entry_data(c, id, NULL, data, err);
}

/* ---- update ---- */

/* A validated case object; strings borrowed from the JSON. */
static int case_of(struct json_object *body, const char *key, const char *kind,
                   struct knowledge_case *kc, int *present, struct error *err)
{
    struct json_object *o;
    *present = 0;
    memset(kc, 0, sizeof *kc);
    if (jf_object(err, body, key, &o))
        return -1;
    if (!o)
        return 0;
    kc->kind = kind;
    if (jf_string(err, o, "case_id", 0, LIMIT_SHORT_TEXT, &kc->case_id) ||
        jf_string(err, o, "scenario", 0, LIMIT_CASE_TEXT, &kc->scenario) ||
        jf_string(err, o, "result", 0, LIMIT_CASE_TEXT, &kc->result) ||
        jf_string(err, o, "agent_id", 0, LIMIT_SHORT_TEXT, &kc->agent_id) ||
        jf_string(err, o, "trace_id", 0, LIMIT_SHORT_TEXT, &kc->trace_id) ||
        jf_string(err, o, "goal_id", 0, LIMIT_SHORT_TEXT, &kc->goal_id))
        return -1;
    *present = 1;
    return 0;
}

void knowledge_new_case_id(char out[static 24])
{
    id_random(out, "case-");
}

/* Whether the caller may change the entry id as it is now (read in the
 * caller's transaction, if any): 0, or -1 with err. */
static int may_change_entry(const struct svc_ctx *c, const char *id, struct error *err)
{
    struct knowledge target;
    int rc = store_knowledge_get(c->st, c->space, id, 0, &target), denied;
    if (rc)
        return store_fail(rc, err);
    denied = knowledge_may_change(c, target.category, err);
    knowledge_release(&target);
    return denied;
}

/* Store the feedback and ask the LLM for the entry's rewrite, outside any
 * transaction: 0 with the rewrite in evolved (of current, read here) and
 * the feedback's id in *feedback_id, or -1 with err. */
static int evolve_ask(const struct svc_ctx *c, const char *id, const char *feedback,
                      struct knowledge *current, struct buf *evolved, long *feedback_id,
                      struct error *err)
{
    struct llm_reply reply;
    int rc, result = -1;
    /* The feedback is kept whatever happens. Without an LLM, or when the
     * LLM fails, the request changes nothing else, so the caller can
     * simply send the rest again. A rewrite changes the content: on a
     * rule, admins only. */
    if (may_change_entry(c, id, err))
        return -1;
    rc = store_knowledge_add_feedback(c->st, c->space, id, feedback, c->actor, feedback_id);
    if (rc)
        return store_fail(rc, err);
    if (!config_llm_configured(c->cfg)) {
        error_set(err, E_LLM_NOT_CONFIGURED, NULL,
                  "evolve_feedback needs an LLM (KNOWHUB_LLM_BASE_URL is not set); the "
                  "feedback was stored (#%ld) and nothing else was changed",
                  *feedback_id);
        return -1;
    }
    llm_reply_init(&reply);
    rc = store_knowledge_get(c->st, c->space, id, 0, current);
    if (rc) {
        store_fail(rc, err);
    } else if (evolve_rewrite(c, current, feedback, evolved, &reply)) {
        store_ignore(
            store_knowledge_feedback_mark(c->st, *feedback_id, "failed")); /* best effort */
        error_copy(err, &reply.err,
                   "%s; the feedback was stored (#%ld) and nothing else was changed",
                   reply.err.message.data, *feedback_id);
    } else {
        result = 0;
    }
    llm_reply_release(&reply);
    return result;
}

/* The cases and the score of an update, inside its transaction; their
 * outcome goes to applied. A store status. */
static int apply_cases_and_score(const struct svc_ctx *c, const char *id,
                                 struct knowledge_case *cases[2], long score,
                                 struct json_object *applied)
{
    static const char *const keys[2] = {"add_helpful_case", "add_harmful_case"};
    char case_id[24];
    int added, rc;
    for (int i = 0; i < 2; i++) {
        if (!cases[i])
            continue;
        if (!cases[i]->case_id) {
            knowledge_new_case_id(case_id);
            cases[i]->case_id = case_id;
        }
        if ((rc = store_knowledge_add_case(c->st, c->space, id, cases[i], c->actor, &added)))
            return rc;
        json_object_object_add(applied, keys[i],
                               json_object_new_string(added ? "added" : "duplicate"));
    }
    if (score) {
        if ((rc = store_knowledge_set_score(c->st, c->space, id, (int)score, c->actor)))
            return rc;
        json_object_object_add(applied, "update_score", json_object_new_int(score));
    }
    return STORE_OK;
}

int svc_knowledge_update(const struct svc_ctx *c, const char *id, struct json_object *body,
                         struct json_object **data, struct error *err)
{
    struct json_object *applied = NULL, *extra;
    struct knowledge_case helpful, harmful;
    struct knowledge current;
    struct buf evolved;
    int has_helpful, has_harmful, rc, result = -1;
    const char *feedback;
    long score, evolve_feedback_id = 0;
    struct timing_change when;

    knowledge_init(&current);
    buf_init(&evolved, 1 << 20);
    if (case_of(body, "add_helpful_case", "helpful", &helpful, &has_helpful, err) ||
        case_of(body, "add_harmful_case", "harmful", &harmful, &has_harmful, err) ||
        jf_long(err, body, "update_score", 1, 5, 0, &score) ||
        jf_string(err, body, "evolve_feedback", 0, LIMIT_CASE_TEXT, &feedback) ||
        timing_change_of(body, &when, err))
        goto out;
    if (!has_helpful && !has_harmful && !score && !feedback && !timing_change_any(&when)) {
        error_set(err, E_INVALID_REQUEST, NULL,
                  "Nothing to update: give add_helpful_case, add_harmful_case, update_score, "
                  "evolve_feedback, expires_at, review_after or pinned");
        goto out;
    }
    if (write_admit(c, 1, err))
        goto out;
    if (feedback) {
        long feedback_id = 0;
        if (evolve_ask(c, id, feedback, &current, &evolved, &feedback_id, err))
            goto out;
        evolve_feedback_id = feedback_id;
    }
    /* The LLM's rewrite is applied with the rest, atomically. */
    applied = json_object_new_object();
    if ((rc = store_begin(c->st)))
        goto fail;
    if (score || evolve_feedback_id || timing_change_any(&when)) {
        /* A score, a rewrite or a time changes the entry: on a rule, admins only.
         * Checked inside the transaction, on the entry as it is now. */
        struct knowledge target;
        int denied;
        if ((rc = store_knowledge_get(c->st, c->space, id, 0, &target)))
            goto fail;
        denied = knowledge_may_change(c, target.category, err);
        knowledge_release(&target);
        if (denied) {
            store_rollback(c->st);
            if (evolve_feedback_id)
                store_ignore(store_knowledge_feedback_mark(c->st, evolve_feedback_id,
                                                           "failed")); /* best effort */
            goto out;
        }
    }
    if (evolve_feedback_id) {
        char *held = NULL;
        if ((rc = evolve_apply(c, &current, evolved.data, &held)) ||
            (rc = store_knowledge_feedback_mark(c->st, evolve_feedback_id, "applied"))) {
            free(held);
            goto fail;
        }
        /* held for review: the rewrite waits in the queue (docs/review.md) */
        json_object_object_add(applied, "evolve_feedback",
                               json_object_new_string(held ? "pending" : "evolved"));
        if (held)
            json_object_object_add(applied, "proposal_id", json_object_new_string(held));
        free(held);
    }
    {
        struct knowledge_case *cases[2] = {has_helpful ? &helpful : NULL,
                                           has_harmful ? &harmful : NULL};
        if ((rc = apply_cases_and_score(c, id, cases, score, applied)) ||
            (rc = timing_apply(c->st, c->space, id, &when)))
            goto fail;
    }
    if ((rc = store_commit(c->st)))
        goto fail_committed;
    extra = json_object_new_object();
    json_object_object_add(extra, "applied", applied);
    applied = NULL;
    result = knowledge_entry_data(c, id, extra, data, err);
    goto out;
fail:
    store_rollback(c->st);
fail_committed:
    if (evolve_feedback_id) /* the rewrite was not applied: the feedback waits no more */
        store_ignore(
            store_knowledge_feedback_mark(c->st, evolve_feedback_id, "failed")); /* best effort */
    if (rc == STORE_CONFLICT && evolve_feedback_id)
        error_set(err, E_CONFLICT, NULL,
                  "The entry changed while the LLM was rewriting it; nothing was changed, "
                  "send the request again");
    else
        store_fail(rc, err);
out:
    json_object_put(applied);
    knowledge_release(&current);
    buf_release(&evolved);
    return result;
}

/* ---- delete ---- */

int svc_knowledge_delete(const struct svc_ctx *c, const char *id, struct json_object **data,
                         struct error *err)
{
    struct knowledge k;
    int rc;
    knowledge_init(&k);
    if (write_admit(c, 1, err))
        return -1;
    /* The category that decides who may delete is read in the transaction
     * that deletes, so a move into rules meanwhile cannot slip through. */
    if ((rc = store_begin(c->st)))
        return store_fail(rc, err);
    if ((rc = store_knowledge_get(c->st, c->space, id, 0, &k))) {
        store_rollback(c->st);
        return store_fail(rc, err);
    }
    if (knowledge_may_change(c, k.category, err)) {
        store_rollback(c->st);
        knowledge_release(&k);
        return -1;
    }
    {
        struct review_write w = {"entry",  "delete",   k.id,       k.version,  k.category,
                                 k.path,   k.document, k.document, k.agent_id, NULL,
                                 k.source, 0,          0,          NULL,       0};
        int held = review_gate(c, &w, data, err);
        if (held) { /* the proposal is kept, the entry left as it is */
            rc = held > 0 ? store_commit(c->st) : STORE_ERROR;
            if (held < 0)
                store_rollback(c->st);
            knowledge_release(&k);
            if (held > 0 && rc) {
                json_object_put(*data);
                *data = NULL;
                return store_fail(rc, err);
            }
            return held > 0 ? 0 : -1;
        }
    }
    rc = store_knowledge_delete(c->st, c->space, k.id, c->actor);
    if (rc)
        store_rollback(c->st);
    else
        rc = store_commit(c->st);
    if (rc) {
        knowledge_release(&k);
        return store_fail(rc, err);
    }
    *data = json_object_new_object();
    json_object_object_add(*data, "id", json_object_new_string(k.id));
    json_object_object_add(*data, "status", json_object_new_string("deleted"));
    json_object_object_add(*data, "version", json_object_new_int64(k.version + 1));
    knowledge_release(&k);
    return 0;
}

/* ---- cases ---- */

int svc_knowledge_cases(const struct svc_ctx *c, const char *id, const char *kind, long limit,
                        long offset, struct json_object **items, long *total, struct error *err)
{
    int rc;
    if (!kind || (strcmp(kind, "helpful") != 0 && strcmp(kind, "harmful") != 0)) {
        error_set(err, E_INVALID_REQUEST, NULL, "'kind' must be helpful or harmful");
        return -1;
    }
    *items = json_object_new_array();
    *total = 0;
    rc = store_knowledge_cases_page(c->st, c->space, id, kind, limit, offset,
                                    knowledge_case_to_json, *items, total);
    if (rc) {
        json_object_put(*items);
        *items = NULL;
        return store_fail(rc, err);
    }
    return 0;
}

/* ---- export ---- */

struct export_ctx {
    struct store *st;
    int (*each)(struct json_object *line, void *ctx);
    void *ctx;
    int failed; /* the store status of an entry whose histories could not be read */
    const char *space;
};

static int export_line(const struct knowledge *k, void *ctx)
{
    struct export_ctx *ec = ctx;
    struct json_object *o;
    int rc = knowledge_entry_json(ec->st, k, &o);
    if (rc) {
        /* an export never holds an entry without its history; the scan
         * stops as for a caller's stop, so the status is kept here */
        ec->failed = rc;
        return -1;
    }
    {
        /* its time and outgoing links in the front matter, which import reads back */
        struct buf doc;
        buf_init(&doc, 8 * 1024 * 1024);
        rc = linkdoc_shown(ec->st, ec->space, k, &doc);
        json_object_object_add(o, "document", json_object_new_string_len(doc.data, (int)doc.len));
        buf_release(&doc);
        if (rc) {
            json_object_put(o);
            ec->failed = rc;
            return -1;
        }
    }
    rc = ec->each(o, ec->ctx);
    json_object_put(o);
    /* the entries it superseded, so that an import retires them again */
    if (rc == 0 && (rc = linkdoc_superseded(ec->st, ec->space, k, export_line, ec)) > 0) {
        ec->failed = rc; /* a store status; a write error is the caller's (-1) */
        rc = -1;
    }
    return rc;
}

int svc_knowledge_export(const struct svc_ctx *c, int (*each)(struct json_object *line, void *ctx),
                         void *ctx)
{
    struct export_ctx ec = {c->st, each, ctx, STORE_OK, c->space};
    int rc = store_knowledge_scan(c->st, c->space, SCAN_ACTIVE, NULL, 1, export_line, &ec);
    return rc ? rc : ec.failed;
}
