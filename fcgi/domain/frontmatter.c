/* frontmatter: YAML front matter read and written with libyaml. */
#include "domain/frontmatter.h"
#include "base/util.h"
#include "base/jfield.h"

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

static struct json_object *scalar_json(const yaml_event_t *ev)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
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

/* ---- conversion, event by event, within the budget ---- */

#define STR_(x) #x
#define STR(x) STR_(x)
static const char why_alias[] = "YAML anchors and aliases (&name, *name) are not accepted";
static const char why_nodes[] = "more than " STR(FRONTMATTER_MAX_NODES) " values";
static const char why_bytes[] = "larger than " STR(FRONTMATTER_MAX_BYTES) " bytes as JSON";
static const char why_depth[] = "nested deeper than " STR(FRONTMATTER_MAX_DEPTH) " levels";

/* The converter reads libyaml's events, not its document tree, so an alias
 * is seen (and refused) before anything is expanded. */
struct conv {
    yaml_parser_t parser;
    size_t nodes, bytes; /* so far; bytes is an estimate, checked exactly at the end */
    const char *why;     /* set when the front matter is refused */
};

/* The next event, or -1 on a YAML error (the front matter is then not usable). */
static int next_event(struct conv *c, yaml_event_t *ev)
{
    return yaml_parser_parse(&c->parser, ev) ? 0 : -1;
}

static int anchored(const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_ALIAS_EVENT:
        return 1;
    case YAML_SCALAR_EVENT:
        return ev->data.scalar.anchor != NULL;
    case YAML_SEQUENCE_START_EVENT:
        return ev->data.sequence_start.anchor != NULL;
    case YAML_MAPPING_START_EVENT:
        return ev->data.mapping_start.anchor != NULL;
    default:
        return 0;
    }
}

/* Count one value of about `bytes` bytes; -1 (refused) past the budget. */
static int spend(struct conv *c, size_t bytes)
{
    c->nodes++;
    c->bytes += bytes + 4;
    if (c->nodes > FRONTMATTER_MAX_NODES)
        c->why = why_nodes;
    else if (c->bytes > FRONTMATTER_MAX_BYTES)
        c->why = why_bytes;
    return c->why ? -1 : 0;
}

/* Convert the value that ev starts into *out (NULL for a YAML null); 0, or
 * -1 with c->why set (refused) or not (a YAML error, a non-scalar key). */
static int value_json(struct conv *c, const yaml_event_t *ev, int depth, struct json_object **out)
{
    yaml_event_t item;
    int rc = 0;
    *out = NULL;
    if (anchored(ev)) {
        c->why = why_alias;
        return -1;
    }
    if (depth > FRONTMATTER_MAX_DEPTH) {
        c->why = why_depth;
        return -1;
    }
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        if (spend(c, ev->data.scalar.length))
            return -1;
        *out = scalar_json(ev);
        return 0;
    case YAML_SEQUENCE_START_EVENT:
        if (spend(c, 2))
            return -1;
        *out = json_object_new_array();
        while (rc == 0 && (rc = next_event(c, &item)) == 0) {
            struct json_object *v;
            if (item.type == YAML_SEQUENCE_END_EVENT) {
                yaml_event_delete(&item);
                return 0;
            }
            rc = value_json(c, &item, depth + 1, &v);
            yaml_event_delete(&item);
            if (rc == 0)
                json_object_array_add(*out, v);
        }
        break;
    case YAML_MAPPING_START_EVENT:
        if (spend(c, 2))
            return -1;
        *out = json_object_new_object();
        while (rc == 0 && (rc = next_event(c, &item)) == 0) {
            struct json_object *v;
            yaml_event_t value;
            char *key;
            if (item.type == YAML_MAPPING_END_EVENT) {
                yaml_event_delete(&item);
                return 0;
            }
            if (anchored(&item)) {
                c->why = why_alias;
                rc = -1;
            } else if (item.type != YAML_SCALAR_EVENT) {
                rc = -1; /* a key that is not text: not usable, as before */
            } else {
                c->bytes += item.data.scalar.length + 4;
                key = xstrndup((const char *)item.data.scalar.value, item.data.scalar.length);
                if ((rc = next_event(c, &value)) == 0) {
                    rc = value_json(c, &value, depth + 1, &v);
                    yaml_event_delete(&value);
                    if (rc == 0)
                        json_object_object_add(*out, key, v);
                }
                free(key);
            }
            yaml_event_delete(&item);
        }
        break;
    default:
        rc = -1;
        break;
    }
    json_object_put(*out);
    *out = NULL;
    return -1;
}

/* Count the values of v (itself included). */
static size_t json_nodes(struct json_object *v)
{
    size_t n = 1;
    if (json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++)
            n += json_nodes(json_object_array_get_idx(v, i));
    } else if (json_object_is_type(v, json_type_object)) {
        json_object_object_foreach(v, key, val)
        {
            (void)key;
            n += json_nodes(val);
        }
    }
    return n;
}

int frontmatter_within_budget(struct json_object *meta)
{
    const char *text = json_text(meta);
    return json_nodes(meta) <= FRONTMATTER_MAX_NODES && strlen(text) <= FRONTMATTER_MAX_BYTES;
}

/* The root mapping of the first document of the YAML text. */
static enum frontmatter_status convert(struct conv *c, struct json_object **meta)
{
    yaml_event_t ev;
    int rc;
    *meta = NULL;
    if (next_event(c, &ev))
        return FRONTMATTER_NONE;
    yaml_event_delete(&ev); /* the stream start */
    if (next_event(c, &ev))
        return FRONTMATTER_NONE;
    if (ev.type != YAML_DOCUMENT_START_EVENT) { /* an empty stream */
        yaml_event_delete(&ev);
        return FRONTMATTER_NONE;
    }
    yaml_event_delete(&ev);
    if (next_event(c, &ev))
        return FRONTMATTER_NONE;
    if (ev.type != YAML_MAPPING_START_EVENT) { /* not a mapping: no front matter */
        yaml_event_delete(&ev);
        return FRONTMATTER_NONE;
    }
    rc = value_json(c, &ev, 0, meta);
    yaml_event_delete(&ev);
    if (rc == 0) {
        /* The document must end cleanly, as yaml_parser_load requires. */
        rc = next_event(c, &ev);
        if (rc == 0) {
            if (ev.type != YAML_DOCUMENT_END_EVENT)
                rc = -1;
            yaml_event_delete(&ev);
        }
    }
    if (rc == 0 && !frontmatter_within_budget(*meta))
        c->why = why_bytes; /* escapes made it larger than its estimate */
    if (rc == 0 && !c->why)
        return FRONTMATTER_OK;
    json_object_put(*meta);
    *meta = NULL;
    return c->why ? FRONTMATTER_REFUSED : FRONTMATTER_NONE;
}

enum frontmatter_status frontmatter_read(const char *text, size_t len, struct json_object **meta,
                                         size_t *body_off, const char **why)
{
    size_t yoff, ylen, boff;
    struct conv c = {0};
    enum frontmatter_status st;

    *meta = NULL;
    *body_off = 0;
    *why = NULL;
    if (!frontmatter_split(text, len, &yoff, &ylen, &boff))
        return FRONTMATTER_NONE;
    if (!yaml_parser_initialize(&c.parser))
        return FRONTMATTER_NONE;
    yaml_parser_set_input_string(&c.parser, (const unsigned char *)text + yoff, ylen);
    st = convert(&c, meta);
    yaml_parser_delete(&c.parser);
    if (st != FRONTMATTER_NONE)
        *body_off = boff;
    if (st == FRONTMATTER_REFUSED)
        *why = c.why;
    return st;
}

struct json_object *frontmatter_parse(const char *text, size_t len, size_t *body_off)
{
    struct json_object *meta;
    const char *why;
    if (frontmatter_read(text, len, &meta, body_off, &why) != FRONTMATTER_OK)
        *body_off = 0;
    return meta;
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

const char *frontmatter_yaml_version(void)
{
    return yaml_get_version_string();
}
