/* jfield: typed fields of a JSON value, with their errors. */
#include "base/jfield.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *json_text(struct json_object *o)
{
    return json_object_to_json_string_ext(o,
                                          JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

const char *jf_str(struct json_object *v)
{
    return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

const char *jf_member_str(struct json_object *obj, const char *key)
{
    struct json_object *v = NULL;
    return obj && json_object_object_get_ex(obj, key, &v) ? jf_str(v) : NULL;
}

static struct json_object *field(struct json_object *obj, const char *key)
{
    struct json_object *v = NULL;
    if (!json_object_object_get_ex(obj, key, &v) || json_object_is_type(v, json_type_null))
        return NULL;
    return v;
}

/* Check one string value; -1 with err set. */
static int check_text(struct error *err, const char *key, struct json_object *v, size_t max_chars)
{
    const char *s = json_object_get_string(v);
    size_t len = (size_t)json_object_get_string_len(v), chars;
    if (strlen(s) != len || !utf8_valid(s, len)) {
        error_set(err, E_INVALID_REQUEST, "field_not_text",
                  "'%s' must be valid UTF-8 text without NUL", key);
        error_str(err, "field", key);
        return -1;
    }
    chars = utf8_length(s, len);
    if (chars > max_chars) {
        error_set(err, E_LIMIT_EXCEEDED, "field_too_long", "'%s' exceeds %zu characters (got %zu)",
                  key, max_chars, chars);
        error_str(err, "field", key);
        error_int(err, "max", (long long)max_chars);
        error_int(err, "got", (long long)chars);
        return -1;
    }
    return 0;
}

static int blank(const char *s)
{
    return s[strspn(s, " \t\r\n")] == '\0';
}

int jf_string(struct error *err, struct json_object *obj, const char *key, int required,
              size_t max_chars, const char **out)
{
    struct json_object *v = field(obj, key);
    *out = NULL;
    if (!v) {
        if (required) {
            error_set(err, E_INVALID_REQUEST, "field_required", "'%s' is required", key);
            error_str(err, "field", key);
            return -1;
        }
        return 0;
    }
    if (!json_object_is_type(v, json_type_string)) {
        error_set(err, E_INVALID_REQUEST, "field_not_string", "'%s' must be a string", key);
        error_str(err, "field", key);
        return -1;
    }
    if (check_text(err, key, v, max_chars))
        return -1;
    if (required && blank(json_object_get_string(v))) {
        error_set(err, E_INVALID_REQUEST, "field_required", "'%s' is required", key);
        error_str(err, "field", key);
        return -1;
    }
    *out = json_object_get_string(v);
    return 0;
}

int jf_long(struct error *err, struct json_object *obj, const char *key, long min, long max,
            long dflt, long *out)
{
    struct json_object *v = field(obj, key);
    int64_t n;
    *out = dflt;
    if (!v)
        return 0;
    if (!json_object_is_type(v, json_type_int))
        goto bad;
    n = json_object_get_int64(v);
    if (n < min || n > max)
        goto bad;
    *out = (long)n;
    return 0;
bad:
    error_set(err, E_INVALID_REQUEST, "field_not_integer",
              "'%s' must be an integer between %ld and %ld", key, min, max);
    error_str(err, "field", key);
    error_int(err, "min", min);
    error_int(err, "max", max);
    return -1;
}

int jf_bool(struct error *err, struct json_object *obj, const char *key, int dflt, int *out)
{
    struct json_object *v = field(obj, key);
    *out = dflt;
    if (!v)
        return 0;
    if (!json_object_is_type(v, json_type_boolean)) {
        error_set(err, E_INVALID_REQUEST, "field_not_boolean", "'%s' must be true or false", key);
        error_str(err, "field", key);
        return -1;
    }
    *out = json_object_get_boolean(v);
    return 0;
}

int jf_object(struct error *err, struct json_object *obj, const char *key, struct json_object **out)
{
    struct json_object *v = field(obj, key);
    *out = NULL;
    if (!v)
        return 0;
    if (!json_object_is_type(v, json_type_object)) {
        error_set(err, E_INVALID_REQUEST, "field_not_object", "'%s' must be an object", key);
        error_str(err, "field", key);
        return -1;
    }
    *out = v;
    return 0;
}

int jf_string_list(struct error *err, struct json_object *obj, const char *key, size_t max_items,
                   size_t max_chars, int scalar_ok, struct json_object **out)
{
    struct json_object *v = field(obj, key);
    size_t n;
    *out = NULL;
    if (!v)
        return 0;
    if (scalar_ok && json_object_is_type(v, json_type_string)) {
        if (check_text(err, key, v, max_chars))
            return -1;
        *out = v;
        return 0;
    }
    if (!json_object_is_type(v, json_type_array)) {
        error_set(err, E_INVALID_REQUEST, "field_not_string_list", "'%s' must be a list of strings",
                  key);
        error_str(err, "field", key);
        return -1;
    }
    n = json_object_array_length(v);
    if (n > max_items) {
        error_set(err, E_LIMIT_EXCEEDED, "field_too_many", "'%s' has more than %zu items (got %zu)",
                  key, max_items, n);
        error_str(err, "field", key);
        error_int(err, "max", (long long)max_items);
        error_int(err, "got", (long long)n);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        struct json_object *item = json_object_array_get_idx(v, i);
        if (!item || !json_object_is_type(item, json_type_string)) {
            error_set(err, E_INVALID_REQUEST, "field_not_string_list",
                      "'%s' must be a list of strings", key);
            error_str(err, "field", key);
            return -1;
        }
        if (check_text(err, key, item, max_chars))
            return -1;
    }
    *out = v;
    return 0;
}

/* The objects of a text in the order of their opening braces: where each
 * opens and how many members it has (its ':' outside strings). */
struct object_shapes {
    size_t *at, *members;
    size_t n, cap;
};

#define JSON_MAX_DEPTH 64

/* What json-c lets through even in strict mode but JSON (RFC 8259) does not:
 * single quotes, and bare words other than true, false and null (NaN,
 * Infinity, unquoted keys). A lexical scan outside strings; 1 when clean.
 * The same pass records the objects' shapes when shapes is given (members
 * counted to JSON_MAX_DEPTH levels: a deeper text fails to parse anyway). */
static int lexically_strict(const char *s, size_t n, struct object_shapes *shapes)
{
    /* open containers: an object's index in shapes, or SIZE_MAX for an array */
    size_t open[JSON_MAX_DEPTH], depth = 0;
    int in_string = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = 0;
        } else if (c == '"') {
            in_string = 1;
        } else if (c == '{' || c == '[') {
            size_t slot = SIZE_MAX;
            if (c == '{' && shapes) {
                if (shapes->n == shapes->cap) {
                    shapes->cap = shapes->cap ? 2 * shapes->cap : 16;
                    shapes->at = xrealloc(shapes->at, shapes->cap * sizeof *shapes->at);
                    shapes->members =
                        xrealloc(shapes->members, shapes->cap * sizeof *shapes->members);
                }
                shapes->at[shapes->n] = i;
                shapes->members[shapes->n] = 0;
                slot = shapes->n++;
            }
            if (depth < JSON_MAX_DEPTH)
                open[depth] = slot;
            depth++;
        } else if (c == '}' || c == ']') {
            if (depth)
                depth--;
        } else if (c == ':') {
            if (shapes && depth && depth <= JSON_MAX_DEPTH && open[depth - 1] != SIZE_MAX)
                shapes->members[open[depth - 1]]++;
        } else if (c == '\'') {
            return 0;
        } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
            size_t start = i;
            while (i + 1 < n &&
                   ((s[i + 1] >= 'a' && s[i + 1] <= 'z') || (s[i + 1] >= 'A' && s[i + 1] <= 'Z')))
                i++;
            size_t len = i - start + 1;
            /* e/E inside a number (1e5) is part of it */
            if (len == 1 && (c == 'e' || c == 'E') && start > 0 && s[start - 1] >= '0' &&
                s[start - 1] <= '9')
                continue;
            if (!((len == 4 &&
                   (memcmp(s + start, "true", 4) == 0 || memcmp(s + start, "null", 4) == 0)) ||
                  (len == 5 && memcmp(s + start, "false", 5) == 0)))
                return 0;
        }
    }
    return 1;
}

/* Visit v in pre-order against the shapes from the text: json-c replaces a
 * duplicate key's value in place, so the object that has one keeps fewer
 * members than the text gave it. A parent is visited before its children,
 * so the first object that differs is the one with the duplicate: its index
 * in *found, and 1. Objects before it match the text one to one. */
static int shape_differs(struct json_object *v, const struct object_shapes *shapes, size_t *next,
                         size_t *found)
{
    if (json_object_is_type(v, json_type_object)) {
        size_t i = (*next)++;
        if (i >= shapes->n || shapes->members[i] != (size_t)json_object_object_length(v)) {
            *found = i;
            return 1;
        }
        json_object_object_foreach(v, key, member)
        {
            (void)key;
            if (shape_differs(member, shapes, next, found))
                return 1;
        }
    } else if (json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++)
            if (shape_differs(json_object_array_get_idx(v, i), shapes, next, found))
                return 1;
    }
    return 0;
}

/* The first key of the object opening at s[0] (valid JSON) that repeats an
 * earlier one, decoded, into dup_key. Runs only on the error path. */
static void name_duplicate(const char *s, size_t n, struct buf *dup_key)
{
    struct json_object *seen = json_object_new_object();
    size_t depth = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (--depth == 0)
                break;
        } else if (c == '"') {
            size_t start = i, j;
            struct json_tokener *tok;
            struct json_object *key;
            for (i++; i < n && s[i] != '"'; i++)
                if (s[i] == '\\')
                    i++;
            j = i + 1;
            while (j < n && strchr(" \t\r\n", s[j]) && s[j])
                j++;
            if (depth != 1 || j >= n || s[j] != ':')
                continue; /* a value, or a key of a nested object */
            tok = json_tokener_new();
            key = json_tokener_parse_ex(tok, s + start, (int)(i + 1 - start));
            json_tokener_free(tok);
            if (key && json_object_object_get_ex(seen, json_object_get_string(key), NULL)) {
                buf_adds(dup_key, json_object_get_string(key));
                json_object_put(key);
                break;
            }
            if (key)
                json_object_object_add(seen, json_object_get_string(key), NULL);
            json_object_put(key);
        }
    }
    json_object_put(seen);
}

/* json_parse_whole_ex; duplicate keys are looked for only when dups is set
 * (text KnowHub wrote itself through json-c cannot hold any). */
static int parse_whole(const char *text, size_t len, struct json_object **out, const char **why,
                       int dups, struct buf *dup_key)
{
    struct object_shapes shapes = {0};
    struct json_tokener *tok;
    enum json_tokener_error jerr;
    size_t end, next = 0, found;
    int rc = -1;
    *out = NULL;
    *why = "empty";
    if (dup_key)
        buf_reset(dup_key);
    if (len == 0 || len > (size_t)1 << 30)
        goto out;
    if (!lexically_strict(text, len, dups ? &shapes : NULL)) {
        *why = "single quotes or a bare word (only true, false and null)";
        goto out;
    }
    tok = json_tokener_new_ex(JSON_MAX_DEPTH);
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    *out = json_tokener_parse_ex(tok, text, (int)len);
    end = json_tokener_get_parse_end(tok);
    if (!*out && json_tokener_get_error(tok) == json_tokener_continue) {
        /* A bare 42, true or null waits for more input: the end of the text ends it. */
        *out = json_tokener_parse_ex(tok, "", 1);
        end = len;
    }
    jerr = json_tokener_get_error(tok);
    /* Only whitespace (not NUL, which strchr would find) may surround the value. */
    while (end < len && text[end] && strchr(" \t\r\n", text[end]))
        end++;
    if (jerr == json_tokener_success && end != len)
        jerr = json_tokener_error_parse_unexpected;
    json_tokener_free(tok);
    if (jerr != json_tokener_success) {
        *why = json_tokener_error_desc(jerr);
        goto out;
    }
    if (dups && shape_differs(*out, &shapes, &next, &found)) {
        *why = "duplicate key";
        if (dup_key)
            name_duplicate(text + shapes.at[found], len - shapes.at[found], dup_key);
        goto out;
    }
    rc = 0;
out:
    if (rc) {
        json_object_put(*out);
        *out = NULL;
    }
    free(shapes.at);
    free(shapes.members);
    return rc;
}

int json_parse_whole(const char *text, size_t len, struct json_object **out, const char **why)
{
    return parse_whole(text, len, out, why, 1, NULL);
}

int json_parse_whole_ex(const char *text, size_t len, struct json_object **out, const char **why,
                        struct buf *dup_key)
{
    return parse_whole(text, len, out, why, 1, dup_key);
}

struct json_object *json_parse_stored(const char *text)
{
    struct json_object *v = NULL;
    const char *why;
    if (!text || parse_whole(text, strlen(text), &v, &why, 0, NULL))
        return NULL;
    return v;
}
