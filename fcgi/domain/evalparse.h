/* evalparse: tolerant parsing of an LLM's raw reply, first of all the
 * knowledge evaluator's (docs/feedback.md): the whole text as JSON, else the first ```json fenced
 * block, else the first balanced bare {...} object (braces inside strings handled) that holds an
 * "evaluations" list. Pure: no I/O, no allocation kept on failure. */
#ifndef KNOWHUB_EVALPARSE_H
#define KNOWHUB_EVALPARSE_H

#include <stddef.h>
#include <json-c/json.h>

enum eval_strategy { EVAL_NONE = 0, EVAL_WHOLE, EVAL_FENCED, EVAL_BARE };

/* The name of a strategy: "whole", "fenced", "bare" or "none". */
const char *eval_strategy_name(enum eval_strategy s);

/* Find the evaluations in text[0..len): on success *out is the JSON array of
 * evaluation objects (caller puts it) and the strategy that found it is
 * returned; EVAL_NONE (and *out NULL) when nothing parses. A top-level list
 * counts as the evaluations themselves. */
enum eval_strategy eval_parse(const char *text, size_t len, struct json_object **out);

/* The same three strategies for any LLM reply that should hold an object
 * with a list under key (e.g. the router's {"handles": [...]}). */
enum eval_strategy reply_find_list(const char *text, size_t len, const char *key,
                                   struct json_object **out);

#endif
