/* evalparse: tolerant parsing of an evaluator's raw reply. */
#include "domain/evalparse.h"
#include "base/jfield.h"
#include "base/util.h"

#include <string.h>
#include <strings.h>

const char *eval_strategy_name(enum eval_strategy s)
{
    switch (s) {
    case EVAL_WHOLE:
        return "whole";
    case EVAL_FENCED:
        return "fenced";
    case EVAL_BARE:
        return "bare";
    default:
        return "none";
    }
}

/* Parse exactly text[0..len) (surrounding whitespace allowed) as JSON. */
static struct json_object *parse_exact(const char *text, size_t len)
{
    struct json_object *v;
    const char *why;
    while (len && strchr(" \t\r\n", *text)) {
        text++;
        len--;
    }
    return json_parse_whole(text, len, &v, &why) == 0 ? v : NULL;
}

/* The list under key of a parsed value (a new reference), or NULL; a bare
 * list counts as that list. */
static struct json_object *list_of(struct json_object *v, const char *key)
{
    struct json_object *list;
    if (json_object_is_type(v, json_type_array))
        return json_object_get(v);
    if (json_object_is_type(v, json_type_object) && json_object_object_get_ex(v, key, &list) &&
        json_object_is_type(list, json_type_array))
        return json_object_get(list);
    return NULL;
}

/* Take the list out of text[0..len) parsed whole. */
static struct json_object *try_text(const char *text, size_t len, const char *key)
{
    struct json_object *v = parse_exact(text, len), *list = v ? list_of(v, key) : NULL;
    json_object_put(v);
    return list;
}

/* The end (one past the closing brace) of the balanced object starting at
 * text[start] == '{', or 0 when it never closes. */
static size_t object_end(const char *text, size_t len, size_t start)
{
    int depth = 0, in_string = 0;
    for (size_t i = start; i < len; i++) {
        char c = text[i];
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = 0;
        } else if (c == '"') {
            in_string = 1;
        } else if (c == '{') {
            depth++;
        } else if (c == '}' && --depth == 0) {
            return i + 1;
        }
    }
    return 0;
}

enum eval_strategy eval_parse(const char *text, size_t len, struct json_object **out)
{
    return reply_find_list(text, len, "evaluations", out);
}

enum eval_strategy reply_find_list(const char *text, size_t len, const char *key,
                                   struct json_object **out)
{
    const char *fence;
    *out = NULL;
    if (!text)
        return EVAL_NONE;
    if ((*out = try_text(text, len, key)))
        return EVAL_WHOLE;
    /* ```json ... ``` (the language tag in any case). */
    for (const char *p = text; (fence = fence_find(p, len - (size_t)(p - text))); p = fence + 3) {
        const char *body = fence + 3, *close;
        size_t rest = len - (size_t)(body - text);
        if (rest < 4 || strncasecmp(body, "json", 4) != 0)
            continue;
        body += 4;
        rest -= 4;
        close = fence_find(body, rest);
        if (!close)
            break;
        if ((*out = try_text(body, (size_t)(close - body), key)))
            return EVAL_FENCED;
        fence = close; /* continue after this block */
    }
    /* Bounded: a reply of nothing but braces must not cost n^2. */
    for (size_t i = 0, tries = 0; i < len && tries < 64; i++) {
        size_t end;
        if (text[i] != '{')
            continue;
        tries++;
        if (!(end = object_end(text, len, i)))
            continue;
        if ((*out = try_text(text + i, end - i, key)))
            return EVAL_BARE;
    }
    return EVAL_NONE;
}
