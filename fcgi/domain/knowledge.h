/* knowledge: the knowledge entry as one value (seen both as an entry of
 * /api/knowledge and as a Markdown file of the file view), its types and its
 * JSON form (docs/api.md). No store, no HTTP: services fill and read it. */
#ifndef KNOWHUB_KNOWLEDGE_H
#define KNOWHUB_KNOWLEDGE_H

#include <json-c/json.h>

struct error;

/* The tags.type values an entry may have, stored as a bitmask. */
enum knowledge_type {
    KTYPE_TOOL = 1 << 0,
    KTYPE_USECASE = 1 << 1,
    KTYPE_DEFINITION = 1 << 2,
    KTYPE_PLAN = 1 << 3,
    KTYPE_STRATEGY = 1 << 4,
};
#define KTYPE_COUNT 5

/* Bit of a type name, 0 when the name is not a type. */
unsigned knowledge_type_bit(const char *name);
/* Name of the i-th type (0 <= i < KTYPE_COUNT). */
const char *knowledge_type_name(int i);
/* The one parser of tags_type. OR the bit of one type name (NULL counts as
 * "") into *types, or set err to INVALID_REQUEST ("Unknown tags_type ...")
 * and return -1. */
int knowledge_types_add(const char *name, unsigned *types, struct error *err);
/* The same for each name of a comma-separated list (empty names skipped). */
int knowledge_types_add_list(const char *list, unsigned *types, struct error *err);
/* The same for each element of a JSON array of names (NULL: none). */
int knowledge_types_add_json(struct json_object *names, unsigned *types, struct error *err);

/* One entry. Strings are owned by the struct (knowledge_release frees them);
 * tags and urls hold JSON array text. */
struct knowledge {
    char *id;
    char *space;
    char *category; /* "rules" or "experiences" */
    char *path;
    char *title;
    char *description;
    char *tags; /* JSON array of strings */
    unsigned types;
    char *scenario;
    char *content;
    int always_apply;
    char *source; /* manual, agent, distill, import ... */
    char *urls;   /* JSON array of strings */
    char *agent_id;
    char *message_id;
    char *source_ts;
    int score;
    long helpful;
    long harmful;
    long irrelevant; /* trace evaluations that judged it so, once per trace */
    long unused;
    long neutral;
    char *status; /* active, deleted, merged */
    char *merged_into;
    long version;
    char *created_at;
    char *updated_at;
    char *meta;     /* the front matter as JSON object text */
    char *document; /* the full Markdown document; NULL when not loaded */
};

/* One helpful or harmful case (an element of eval.*_history). Borrowed strings. */
struct knowledge_case {
    const char *kind; /* "helpful" or "harmful" */
    const char *case_id;
    const char *scenario;
    const char *result;
    const char *agent_id;
    const char *trace_id;
    const char *goal_id;
    const char *created_at;
};

/* Zero every field. */
void knowledge_init(struct knowledge *k);
/* Free every owned string and zero the struct. */
void knowledge_release(struct knowledge *k);

/* A fresh id "knowledge-YYYYMMDD-<8 hex>" (27 bytes + NUL). */
void knowledge_new_id(char out[static 36]);

/* How many of the latest helpful (and harmful) cases an entry's JSON shows;
 * eval.helpful and eval.harmful count them all. */
#define KNOWLEDGE_HISTORY_SHOWN 50

/* The JSON of k (docs/api.md: the entry with category, path, title,
 * description, source, status, version). helpful_history, harmful_history
 * (eval.*_history) and injections (where it was injected and how it was
 * judged) are the caller's reads, taken over; each may be NULL: omitted.
 * Caller owns the result. */
struct json_object *knowledge_to_json(const struct knowledge *k,
                                      struct json_object *helpful_history,
                                      struct json_object *harmful_history,
                                      struct json_object *injections);

/* What a search result shows of an entry: {id, title, scenario, content,
 * tags, category, path}, as knowledge_to_json() has them. */
struct json_object *knowledge_card_json(const struct knowledge *k);

/* The entry's feedback counters: {helpful, harmful, irrelevant, unused, neutral}. */
struct json_object *knowledge_metrics_json(const struct knowledge *k);

/* Append the JSON of a case to the JSON array ctx (a store iteration callback). */
int knowledge_case_to_json(const struct knowledge_case *c, void *ctx);

#endif
