/* frontmatter: YAML front matter read and written with libyaml. */
#include "frontmatter.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* ---- splitting ---- */

/* Skip [ \t]* then \r?\n at p; return the position after, or NULL. */
static const char *line_end(const char *p, const char *end, int newline_optional)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p < end && *p == '\r' && p + 1 < end && p[1] == '\n')
        return p + 2;
    if (p < end && *p == '\n')
        return p + 1;
    return newline_optional ? p : NULL;
}

int frontmatter_split(const char *text, size_t len, size_t *yaml_off, size_t *yaml_len,
                      size_t *body_off)
{
    const char *end = text + len, *p, *start;
    *body_off = 0;
    if (len < 3 || memcmp(text, "---", 3) != 0)
        return 0;
    if (!(start = line_end(text + 3, end, 0)))
        return 0;
    /* (.*?\r?\n)---: the shortest run ending in a newline that a "---" follows. */
    for (p = start; p < end; p++) {
        if (*p != '\n' || (size_t)(end - (p + 1)) < 3 || memcmp(p + 1, "---", 3) != 0)
            continue;
        *yaml_off = (size_t)(start - text);
        *yaml_len = (size_t)(p + 1 - start);
        *body_off = (size_t)(line_end(p + 4, end, 1) - text);
        return 1;
    }
    return 0;
}

/* ---- scalar resolution (YAML 1.1 core as PyYAML resolves it) ---- */

enum scalar_kind { SC_STRING, SC_NULL, SC_TRUE, SC_FALSE, SC_INT };

static enum scalar_kind resolve_plain(const char *s, size_t n)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};
    /* PyYAML's bool resolver: unlike YAML 1.1 it leaves y/Y/n/N as strings. */
    static const char *const trues[] = {"true", "True", "TRUE", "yes", "Yes",
                                        "YES",  "on",   "On",   "ON"};
    static const char *const falses[] = {"false", "False", "FALSE", "no", "No",
                                         "NO",    "off",   "Off",   "OFF"};
    size_t i;
    for (i = 0; i < sizeof nulls / sizeof *nulls; i++)
        if (strlen(nulls[i]) == n && memcmp(s, nulls[i], n) == 0)
            return SC_NULL;
    for (i = 0; i < sizeof trues / sizeof *trues; i++)
        if (strlen(trues[i]) == n && memcmp(s, trues[i], n) == 0)
            return SC_TRUE;
    for (i = 0; i < sizeof falses / sizeof *falses; i++)
        if (strlen(falses[i]) == n && memcmp(s, falses[i], n) == 0)
            return SC_FALSE;
    i = (n && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
    if (i < n && n - i <= 18) {
        size_t j = i;
        while (j < n && s[j] >= '0' && s[j] <= '9')
            j++;
        if (j == n)
            return SC_INT;
    }
    return SC_STRING;
}

static struct json_object *scalar_json(const yaml_node_t *node)
{
    const char *s = (const char *)node->data.scalar.value;
    size_t n = node->data.scalar.length;
    if (node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
        switch (resolve_plain(s, n)) {
        case SC_NULL:
            return NULL;
        case SC_TRUE:
            return json_object_new_boolean(1);
        case SC_FALSE:
            return json_object_new_boolean(0);
        case SC_INT: {
            char *copy = xstrndup(s, n);
            long v = 0;
            struct json_object *o =
                parse_long(copy[0] == '+' ? copy + 1 : copy, -(1L << 53), 1L << 53, &v) == 0
                    ? json_object_new_int64(v)
                    : json_object_new_string_len(s, (int)n);
            free(copy);
            return o;
        }
        case SC_STRING:
            break;
        }
    }
    return json_object_new_string_len(s, (int)n);
}

/* Convert a node to JSON; depth-bounded. Sets *ok = 0 on something unusable. */
static struct json_object *node_json(yaml_document_t *doc, yaml_node_t *node, int depth, int *ok)
{
    struct json_object *o;
    if (!node || depth > 32) {
        *ok = 0;
        return NULL;
    }
    switch (node->type) {
    case YAML_SCALAR_NODE:
        return scalar_json(node);
    case YAML_SEQUENCE_NODE:
        o = json_object_new_array();
        for (yaml_node_item_t *it = node->data.sequence.items.start;
             it < node->data.sequence.items.top && *ok; it++)
            json_object_array_add(o,
                                  node_json(doc, yaml_document_get_node(doc, *it), depth + 1, ok));
        return o;
    case YAML_MAPPING_NODE:
        o = json_object_new_object();
        for (yaml_node_pair_t *pair = node->data.mapping.pairs.start;
             pair < node->data.mapping.pairs.top && *ok; pair++) {
            yaml_node_t *key = yaml_document_get_node(doc, pair->key);
            if (!key || key->type != YAML_SCALAR_NODE) {
                *ok = 0;
                break;
            }
            char *k = xstrndup((const char *)key->data.scalar.value, key->data.scalar.length);
            json_object_object_add(
                o, k, node_json(doc, yaml_document_get_node(doc, pair->value), depth + 1, ok));
            free(k);
        }
        return o;
    default:
        *ok = 0;
        return NULL;
    }
}

struct json_object *frontmatter_parse(const char *text, size_t len, size_t *body_off)
{
    size_t yoff, ylen, boff;
    yaml_parser_t parser;
    yaml_document_t doc;
    struct json_object *out = NULL;
    int ok = 1;

    *body_off = 0;
    if (!frontmatter_split(text, len, &yoff, &ylen, &boff))
        return NULL;
    if (!yaml_parser_initialize(&parser))
        return NULL;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text + yoff, ylen);
    if (yaml_parser_load(&parser, &doc)) {
        yaml_node_t *root = yaml_document_get_root_node(&doc);
        if (root && root->type == YAML_MAPPING_NODE) {
            out = node_json(&doc, root, 0, &ok);
            if (!ok) {
                json_object_put(out);
                out = NULL;
            }
        }
        yaml_document_delete(&doc);
    }
    yaml_parser_delete(&parser);
    if (out)
        *body_off = boff;
    return out;
}

/* ---- rendering ---- */

static int write_to_buf(void *data, unsigned char *bytes, size_t size)
{
    return buf_add(data, bytes, size) == 0;
}

static int emit_string(yaml_emitter_t *e, const char *s, size_t n, int in_flow)
{
    yaml_event_t ev;
    yaml_scalar_style_t style = YAML_ANY_SCALAR_STYLE;
    /* A plain scalar that would read back as null, bool or int must be quoted,
     * and so must anything a flow list would split. */
    if (n == 0 || resolve_plain(s, n) != SC_STRING || (in_flow && strpbrk(s, ",[]{}") != NULL))
        style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)n, 1, 1, style);
    return yaml_emitter_emit(e, &ev);
}

static int emit_value(yaml_emitter_t *e, struct json_object *v, int in_flow)
{
    yaml_event_t ev;
    char num[32];
    switch (json_object_get_type(v)) {
    case json_type_null:
        yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)"null", 4, 1, 1,
                                     YAML_PLAIN_SCALAR_STYLE);
        return yaml_emitter_emit(e, &ev);
    case json_type_boolean:
    case json_type_int:
    case json_type_double:
        snprintf(num, sizeof num, "%s", json_object_to_json_string(v));
        yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)num, (int)strlen(num), 1, 1,
                                     YAML_PLAIN_SCALAR_STYLE);
        return yaml_emitter_emit(e, &ev);
    case json_type_string:
        return emit_string(e, json_object_get_string(v), (size_t)json_object_get_string_len(v),
                           in_flow);
    case json_type_array:
        yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_FLOW_SEQUENCE_STYLE);
        if (!yaml_emitter_emit(e, &ev))
            return 0;
        for (size_t i = 0; i < json_object_array_length(v); i++)
            if (!emit_value(e, json_object_array_get_idx(v, i), 1))
                return 0;
        yaml_sequence_end_event_initialize(&ev);
        return yaml_emitter_emit(e, &ev);
    case json_type_object:
        yaml_mapping_start_event_initialize(
            &ev, NULL, NULL, 1, in_flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE);
        if (!yaml_emitter_emit(e, &ev))
            return 0;
        {
            json_object_object_foreach(v, key, val)
            {
                if (!emit_string(e, key, strlen(key), in_flow) || !emit_value(e, val, in_flow))
                    return 0;
            }
        }
        yaml_mapping_end_event_initialize(&ev);
        return yaml_emitter_emit(e, &ev);
    }
    return 0;
}

int frontmatter_render(struct json_object *fields, struct buf *out)
{
    yaml_emitter_t e;
    yaml_event_t ev;
    int ok;
    if (buf_adds(out, "---\n"))
        return -1;
    if (!yaml_emitter_initialize(&e))
        return -1;
    yaml_emitter_set_output(&e, write_to_buf, out);
    yaml_emitter_set_unicode(&e, 1);
    yaml_emitter_set_width(&e, -1);
    yaml_emitter_set_break(&e, YAML_LN_BREAK);
    yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
    ok = yaml_emitter_emit(&e, &ev);
    yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
    ok = ok && yaml_emitter_emit(&e, &ev);
    ok = ok && emit_value(&e, fields, 0);
    yaml_document_end_event_initialize(&ev, 1);
    ok = ok && yaml_emitter_emit(&e, &ev);
    yaml_stream_end_event_initialize(&ev);
    ok = ok && yaml_emitter_emit(&e, &ev);
    ok = ok && yaml_emitter_flush(&e);
    yaml_emitter_delete(&e);
    if (!ok || buf_adds(out, "---\n"))
        return -1;
    return 0;
}
