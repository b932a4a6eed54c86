/* knowledge: the entry value, its seed-003 JSON form, and creation with a
 * fresh id (the constraint in the store decides; a collision is retried). */
#include "domain/knowledge.h"
#include "domain/document.h"
#include "http/http.h"
#include "base/jfield.h"
#include "domain/paths.h"
#include "store/store.h"
#include "base/buf.h"
#include "base/util.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const type_names[KTYPE_COUNT] = {"tool", "usecase", "definition", "plan",
                                                    "strategy"};

unsigned knowledge_type_bit(const char *name)
{
    for (int i = 0; i < KTYPE_COUNT; i++)
        if (strcmp(name, type_names[i]) == 0)
            return 1u << i;
    return 0;
}

const char *knowledge_type_name(int i)
{
    return i >= 0 && i < KTYPE_COUNT ? type_names[i] : "";
}

void knowledge_init(struct knowledge *k)
{
    memset(k, 0, sizeof *k);
}

void knowledge_release(struct knowledge *k)
{
    char **fields[] = {&k->id,         &k->space,       &k->category, &k->path,
                       &k->title,      &k->description, &k->tags,     &k->scenario,
                       &k->content,    &k->source,      &k->urls,     &k->agent_id,
                       &k->message_id, &k->source_ts,   &k->status,   &k->merged_into,
                       &k->created_at, &k->updated_at,  &k->meta,     &k->document};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        free(*fields[i]);
    knowledge_init(k);
}

void knowledge_new_id(char out[static 36])
{
    char date[9];
    unsigned char rnd[4];
    time_utc_compact_date(date);
    randombytes_buf(rnd, sizeof rnd);
    snprintf(out, 36, "knowledge-%s-%02x%02x%02x%02x", date, rnd[0], rnd[1], rnd[2], rnd[3]);
}

static struct json_object *str(const char *s)
{
    return json_object_new_string(s ? s : "");
}

/* Parse stored JSON array text; a broken value degrades to []. */
static struct json_object *json_array_text(const char *text)
{
    struct json_object *v = text ? json_parse_stored(text) : NULL;
    if (!v || !json_object_is_type(v, json_type_array)) {
        json_object_put(v);
        v = json_object_new_array();
    }
    return v;
}

int knowledge_case_to_json(const struct knowledge_case *c, void *ctx)
{
    struct json_object *arr = ctx, *o = json_object_new_object();
    json_object_object_add(o, "case_id", str(c->case_id));
    json_object_object_add(o, "scenario", str(c->scenario));
    json_object_object_add(o, "result", str(c->result));
    if (c->agent_id && *c->agent_id)
        json_object_object_add(o, "agent_id", str(c->agent_id));
    if (c->trace_id && *c->trace_id)
        json_object_object_add(o, "trace_id", str(c->trace_id));
    if (c->goal_id && *c->goal_id)
        json_object_object_add(o, "goal_id", str(c->goal_id));
    json_object_object_add(o, "created_at", str(c->created_at));
    json_object_array_add(arr, o);
    return 0;
}

static void add_injection(const struct log_entry *e, void *ctx)
{
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "trace_id", str(e->trace_id));
    json_object_object_add(o, "goal_id", str(e->goal_id));
    json_object_object_add(o, "injected_at_sequence",
                           json_object_new_int64(e->injected_at_sequence));
    json_object_object_add(o, "injected_at", str(e->injected_at));
    json_object_object_add(o, "eval_status", e->eval_status ? str(e->eval_status) : NULL);
    json_object_object_add(o, "eval_reason", e->eval_reason ? str(e->eval_reason) : NULL);
    json_object_object_add(o, "evaluated_at", e->evaluated_at ? str(e->evaluated_at) : NULL);
    json_object_object_add(o, "evaluated_at_trigger",
                           e->evaluated_at_trigger ? str(e->evaluated_at_trigger) : NULL);
    json_object_array_add(ctx, o);
}

static struct json_object *history(struct store *st, const char *id, const char *kind)
{
    struct json_object *arr = json_object_new_array();
    /* A view: cases that cannot be read are not shown. */
    store_ignore(store_knowledge_cases_each(st, id, kind, KNOWLEDGE_HISTORY_SHOWN,
                                            knowledge_case_to_json, arr));
    return arr;
}

struct json_object *knowledge_to_json(const struct knowledge *k, struct store *st)
{
    struct json_object *o = json_object_new_object();
    struct json_object *tags = json_object_new_object(), *types = json_object_new_array();
    struct json_object *source = json_object_new_object(), *eval = json_object_new_object();
    struct json_object *metrics = json_object_new_object();

    for (int i = 0; i < KTYPE_COUNT; i++)
        if (k->types & (1u << i))
            json_object_array_add(types, str(type_names[i]));
    json_object_object_add(tags, "type", types);
    json_object_object_add(tags, "labels", json_array_text(k->tags));

    json_object_object_add(source, "urls", json_array_text(k->urls));
    json_object_object_add(source, "agent_id", str(k->agent_id));
    json_object_object_add(source, "timestamp", str(k->source_ts));
    json_object_object_add(source, "kind", str(k->source));

    json_object_object_add(eval, "score", json_object_new_int(k->score));
    json_object_object_add(eval, "helpful", json_object_new_int64(k->helpful));
    json_object_object_add(eval, "harmful", json_object_new_int64(k->harmful));
    if (st) {
        json_object_object_add(eval, "helpful_history", history(st, k->id, "helpful"));
        json_object_object_add(eval, "harmful_history", history(st, k->id, "harmful"));
    }
    json_object_object_add(metrics, "helpful", json_object_new_int64(k->helpful));
    json_object_object_add(metrics, "harmful", json_object_new_int64(k->harmful));
    json_object_object_add(metrics, "irrelevant", json_object_new_int64(k->irrelevant));
    json_object_object_add(metrics, "unused", json_object_new_int64(k->unused));
    json_object_object_add(metrics, "neutral", json_object_new_int64(k->neutral));

    json_object_object_add(o, "id", str(k->id));
    json_object_object_add(o, "message_id", str(k->message_id));
    json_object_object_add(o, "title", str(k->title));
    json_object_object_add(o, "category", str(k->category));
    json_object_object_add(o, "path", str(k->path));
    json_object_object_add(o, "tags", tags);
    json_object_object_add(o, "scenario", str(k->scenario));
    json_object_object_add(o, "content", str(k->content));
    if (k->category && strcmp(k->category, "rules") == 0) {
        json_object_object_add(o, "description", str(k->description));
        json_object_object_add(o, "always_apply", json_object_new_boolean(k->always_apply));
    }
    json_object_object_add(o, "source", source);
    json_object_object_add(o, "eval", eval);
    json_object_object_add(o, "metrics", metrics);
    json_object_object_add(o, "status", str(k->status));
    json_object_object_add(o, "version", json_object_new_int64(k->version));
    json_object_object_add(o, "created_at", str(k->created_at));
    json_object_object_add(o, "updated_at", str(k->updated_at));
    if (st) {
        /* Where it was injected and how it was judged (seed 000), newest first. */
        struct json_object *injections = json_object_new_array();
        store_ignore(store_log_of_entry(st, k->id, 50, add_injection, injections)); /* a view */
        json_object_object_add(o, "injections", injections);
    }
    return o;
}

/* The folder of an agent's entries: its id with unsafe characters replaced. */
static void agent_folder(const char *agent_id, struct buf *out)
{
    for (const char *p = agent_id ? agent_id : ""; *p && out->len < 64; p++) {
        char c = *p;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '_' || c == '-' || (c == '.' && out->len > 0);
        buf_addch(out, ok ? c : '-');
    }
    if (out->len == 0)
        buf_adds(out, "agent");
    /* Never "x.md": a folder must not share its name with a document. */
    if (out->len >= 3 && strcmp(out->data + out->len - 3, ".md") == 0)
        out->data[out->len - 3] = '-';
}

int knowledge_path_free_or_409(const struct request *req, struct response *res,
                               const char *category, const char *path, const char *except_id)
{
    enum path_clash clash;
    const char *slash = strchr(path, '/');
    int rc =
        store_knowledge_path_clash(req->store, req->who.space, category, path, except_id, &clash);
    if (rc) {
        reply_store_error(res, rc, "Knowledge file");
        return -1;
    }
    if (clash == PATH_CLASH_FOLDER) {
        error_param_str(res, "category", category);
        error_param_str(res, "path", path);
        reply_error_key(res, 200, E_CONFLICT, "path_is_folder",
                        "%s/%s is a folder that holds other documents; a name is a file or a "
                        "folder, never both",
                        category, path);
        return -1;
    }
    if (clash == PATH_CLASH_FILE) {
        char *folder = xstrndup(path, (size_t)(slash - path));
        error_param_str(res, "category", category);
        error_param_str(res, "path", folder);
        free(folder);
        reply_error_key(res, 200, E_CONFLICT, "path_is_document",
                        "%s/%.*s is a document; a name is a file or a folder, never both", category,
                        (int)(slash - path), path);
        return -1;
    }
    return 0;
}

int knowledge_create(struct store *st, struct knowledge *k, const char *actor)
{
    char id[36];
    int rc = STORE_ERROR, derive_path = k->path == NULL, derive_document = 0;
    /* 32 random bits a day: collisions are rare but real at scale, so retry. */
    for (int attempt = 0; attempt < 8; attempt++) {
        int id_taken = 0;
        knowledge_new_id(id);
        free(k->id);
        k->id = xstrdup(id);
        if (derive_path) {
            struct buf path;
            buf_init(&path, 256);
            agent_folder(k->agent_id, &path);
            buf_addf(&path, "/%s.md", id);
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
        if (!(rc == STORE_CONFLICT && id_taken))
            return rc;
    }
    return rc;
}

/* tags_type from the query: comma-separated and/or repeated. */
int knowledge_types_from_query_or_400(const struct request *req, struct response *res,
                                      unsigned *out)
{
    *out = 0;
    for (size_t i = 0; i < req->n_qp; i++) {
        const char *v = req->qp[i].value;
        if (strcmp(req->qp[i].name, "tags_type") != 0)
            continue;
        while (*v) {
            size_t n = strcspn(v, ",");
            if (n) {
                char *name = xstrndup(v, n);
                unsigned bit = knowledge_type_bit(name);
                if (!bit) {
                    reply_error(res, 200, E_INVALID_REQUEST,
                                "Unknown tags_type '%s' (expected tool, usecase, definition, "
                                "plan, strategy)",
                                name);
                    free(name);
                    return -1;
                }
                free(name);
                *out |= bit;
            }
            v += n + (v[n] == ',');
        }
    }
    return 0;
}

int knowledge_filter_from_query_or_400(const struct request *req, struct response *res,
                                       struct knowledge_filter *f)
{
    if (knowledge_types_from_query_or_400(req, res, &f->types))
        return -1;
    f->category = http_query(req, "category");
    if (f->category && !*f->category)
        f->category = NULL;
    if (f->category && !category_valid(f->category)) {
        error_param_str(res, "category", f->category);
        reply_error_key(res, 200, E_INVALID_REQUEST, "invalid_category", "Invalid category: %s",
                        f->category);
        return -1;
    }
    return 0;
}
