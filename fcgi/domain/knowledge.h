/* knowledge: the knowledge entry as one value (both views of DESIGN.md), its
 * types, its JSON form (seed 003) and the operations REST and MCP share. */
#ifndef KNOWHUB_KNOWLEDGE_H
#define KNOWHUB_KNOWLEDGE_H

#include <json-c/json.h>

struct store;

/* tags.type values of seed 003, stored as a bitmask. */
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
    long irrelevant; /* evaluations that judged it so (seed 000), once per trace */
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

struct request;
struct response;
/* The tags_type query parameters (comma-separated and/or repeated) as a
 * bitmask, or INVALID_REQUEST written to res and -1 for an unknown type. */
int knowledge_types_from_query_or_400(const struct request *req, struct response *res,
                                      unsigned *out);

struct knowledge_filter;
/* The tags_type and category query parameters into f (types, category: a
 * pointer into the query), or INVALID_REQUEST written to res and -1. */
int knowledge_filter_from_query_or_400(const struct request *req, struct response *res,
                                       struct knowledge_filter *f);

/* Zero every field. */
void knowledge_init(struct knowledge *k);
/* Free every owned string and zero the struct. */
void knowledge_release(struct knowledge *k);

/* A fresh id "knowledge-YYYYMMDD-<8 hex>" (27 bytes + NUL). */
void knowledge_new_id(char out[static 36]);

/* How many of the latest helpful (and harmful) cases an entry's JSON shows;
 * eval.helpful and eval.harmful count them all. */
#define KNOWLEDGE_HISTORY_SHOWN 50

/* The seed-003 JSON of k (plus category, path, title, description, source,
 * status, version). With a store, eval.helpful_history and harmful_history
 * are filled from it; without, they are omitted. Caller owns the result. */
struct json_object *knowledge_to_json(const struct knowledge *k, struct store *st);

/* Append the JSON of a case to the JSON array ctx (a store iteration callback). */
int knowledge_case_to_json(const struct knowledge_case *c, void *ctx);

/* Insert k (id assigned here, retried on the rare collision), with its first
 * revision and an audit row. Without a document (an entry-view save) one is
 * built from the fields (document.h) and the fields re-read from it; without
 * a path it is "<agent>/<id>.md". Returns a store status (store.h). */
int knowledge_create(struct store *st, struct knowledge *k, const char *actor);

/* 0 when a document at (category, path) of the caller's space would clash
 * with no other active one (except_id, may be NULL, not counted); else a
 * CONFLICT naming the file or folder it would clash with (or the store
 * error) is written to res and -1 returned. */
int knowledge_path_free_or_409(const struct request *req, struct response *res,
                               const char *category, const char *path, const char *except_id);

#endif
