/* knowledge: the entry value, its types and its JSON form. */
#include "domain/knowledge.h"
#include "base/error.h"
#include "base/jfield.h"
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

int knowledge_types_add(const char *name, unsigned *types, struct error *err)
{
    unsigned bit = knowledge_type_bit(name ? name : "");
    if (!bit) {
        error_set(err, E_INVALID_REQUEST, NULL,
                  "Unknown tags_type '%s' (expected tool, usecase, definition, plan, strategy)",
                  name ? name : "");
        return -1;
    }
    *types |= bit;
    return 0;
}

int knowledge_types_add_list(const char *list, unsigned *types, struct error *err)
{
    for (const char *v = list; *v;) {
        size_t n = strcspn(v, ",");
        if (n) {
            char *name = xstrndup(v, n);
            int rc = knowledge_types_add(name, types, err);
            free(name);
            if (rc)
                return -1;
        }
        v += n + (v[n] == ',');
    }
    return 0;
}

int knowledge_types_add_json(struct json_object *names, unsigned *types, struct error *err)
{
    for (size_t i = 0; names && i < json_object_array_length(names); i++)
        if (knowledge_types_add(json_object_get_string(json_object_array_get_idx(names, i)), types,
                                err))
            return -1;
    return 0;
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

/* {type: [...], labels: [...]} */
static struct json_object *tags_json(const struct knowledge *k)
{
    struct json_object *tags = json_object_new_object(), *types = json_object_new_array();
    for (int i = 0; i < KTYPE_COUNT; i++)
        if (k->types & (1u << i))
            json_object_array_add(types, str(type_names[i]));
    json_object_object_add(tags, "type", types);
    json_object_object_add(tags, "labels", json_array_text(k->tags));
    return tags;
}

struct json_object *knowledge_metrics_json(const struct knowledge *k)
{
    struct json_object *metrics = json_object_new_object();
    json_object_object_add(metrics, "helpful", json_object_new_int64(k->helpful));
    json_object_object_add(metrics, "harmful", json_object_new_int64(k->harmful));
    json_object_object_add(metrics, "irrelevant", json_object_new_int64(k->irrelevant));
    json_object_object_add(metrics, "unused", json_object_new_int64(k->unused));
    json_object_object_add(metrics, "neutral", json_object_new_int64(k->neutral));
    return metrics;
}

struct json_object *knowledge_card_json(const struct knowledge *k)
{
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "id", str(k->id));
    json_object_object_add(o, "title", str(k->title));
    json_object_object_add(o, "scenario", str(k->scenario));
    json_object_object_add(o, "content", str(k->content));
    json_object_object_add(o, "tags", tags_json(k));
    json_object_object_add(o, "category", str(k->category));
    json_object_object_add(o, "path", str(k->path));
    return o;
}

struct json_object *knowledge_to_json(const struct knowledge *k,
                                      struct json_object *helpful_history,
                                      struct json_object *harmful_history,
                                      struct json_object *injections)
{
    struct json_object *o = json_object_new_object(), *tags = tags_json(k);
    struct json_object *source = json_object_new_object(), *eval = json_object_new_object();
    struct json_object *metrics = knowledge_metrics_json(k);

    json_object_object_add(source, "urls", json_array_text(k->urls));
    json_object_object_add(source, "agent_id", str(k->agent_id));
    json_object_object_add(source, "timestamp", str(k->source_ts));
    json_object_object_add(source, "kind", str(k->source));

    json_object_object_add(eval, "score", json_object_new_int(k->score));
    json_object_object_add(eval, "helpful", json_object_new_int64(k->helpful));
    json_object_object_add(eval, "harmful", json_object_new_int64(k->harmful));
    if (helpful_history)
        json_object_object_add(eval, "helpful_history", helpful_history);
    if (harmful_history)
        json_object_object_add(eval, "harmful_history", harmful_history);

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
    if (injections)
        json_object_object_add(o, "injections", injections);
    return o;
}
