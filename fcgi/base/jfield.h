/* jfield: typed fields of a JSON value (a request body, MCP arguments, a
 * stored document). Each jf_ getter either fills its out-parameter and
 * returns 0, or sets err to INVALID_REQUEST (or LIMIT_EXCEEDED) naming the
 * field (key field_required, field_not_string, ...) and returns -1, so
 * caller code reads top to bottom; http.h's jf_*_or_400 reply with it. An
 * absent field and a JSON null are the same. */
#ifndef KNOWHUB_JFIELD_H
#define KNOWHUB_JFIELD_H

#include <stddef.h>
#include <json-c/json.h>

struct buf;
struct error;

/* String of at most max_chars Unicode characters, without NUL bytes.
 * *out is NULL when absent; required rejects absent and blank strings. */
int jf_string(struct error *err, struct json_object *obj, const char *key, int required,
              size_t max_chars, const char **out);
/* Integer in [min, max]; dflt when absent. */
int jf_long(struct error *err, struct json_object *obj, const char *key, long min, long max,
            long dflt, long *out);
/* Boolean; dflt when absent. */
int jf_bool(struct error *err, struct json_object *obj, const char *key, int dflt, int *out);
/* Object; *out borrowed, NULL when absent. */
int jf_object(struct error *err, struct json_object *obj, const char *key,
              struct json_object **out);
/* Array of at most max_items strings of at most max_chars each; *out is
 * borrowed, NULL when absent. A lone string is accepted as a one-item list
 * when scalar_ok. */
int jf_string_list(struct error *err, struct json_object *obj, const char *key, size_t max_items,
                   size_t max_chars, int scalar_ok, struct json_object **out);

/* Parse text[0..len) as exactly one JSON value: json-c's strict mode, valid
 * UTF-8, at most 64 levels, no single quotes or bare words (NaN, Infinity),
 * whitespace around it allowed, no key twice in one object. 0 with *out
 * (caller puts it; NULL for a JSON null), or -1 with the reason in *why (a
 * static string). */
int json_parse_whole(const char *text, size_t len, struct json_object **out, const char **why);
/* As json_parse_whole, which also refuses an object with a duplicate key
 * (json-c would keep the last value silently); here the key, decoded, is
 * also written to dup_key (left empty for any other error). */
int json_parse_whole_ex(const char *text, size_t len, struct json_object **out, const char **why,
                        struct buf *dup_key);

/* JSON that KnowHub stored itself (meta, tags, revisions, sessions, jobs) or
 * got from a peer (the LLM's answer, a handler's reply), parsed by
 * json_parse_whole: the same strictness and depth (64) as request bodies, so
 * whatever a body could hold reads back whole. The value (caller puts it),
 * or NULL when text is NULL, not one JSON value, or a JSON null. It does not
 * look for duplicate keys: the text json-c writes never has one. */
struct json_object *json_parse_stored(const char *text);

/* A JSON value as compact text, the way every response, document and log
 * line writes it (no slash escaping); valid until o changes or is put. */
const char *json_text(struct json_object *o);

/* The string of a JSON string value, NULL when it is not a string. */
const char *jf_str(struct json_object *v);
/* The string of member key of obj, NULL when obj is NULL or has no such
 * member or it is not a string: the one quiet getter (jf_string reports). */
const char *jf_member_str(struct json_object *obj, const char *key);

#endif
