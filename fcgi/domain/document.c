/* document: Markdown + YAML front matter documents of the file view. */
#include "domain/document.h"
#include "domain/frontmatter.h"
#include "base/jfield.h"
#include "domain/knowledge_limits.h"
#include "domain/paths.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The text of a scalar the way Python's str() shows it; NULL for null. */
static char *scalar_text(struct json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_null:
        return NULL;
    case json_type_string:
        return xstrdup(json_object_get_string(v));
    case json_type_boolean:
        return xstrdup(json_object_get_boolean(v) ? "True" : "False");
    default:
        return xstrdup(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
    }
}

/* meta[key] as text, or dflt (copied) when absent, null or empty. */
static char *field_text(struct json_object *meta, const char *key, const char *dflt)
{
    struct json_object *v = NULL;
    char *s = NULL;
    if (meta && json_object_object_get_ex(meta, key, &v))
        s = scalar_text(v);
    if (!s || !*s) {
        free(s);
        s = xstrdup(dflt);
    }
    return s;
}

int document_always_apply(struct json_object *v)
{
    static const char *const falsy[] = {"false", "no", "off", "0", "n", ""};
    if (!v)
        return 1;
    switch (json_object_get_type(v)) {
    case json_type_boolean:
        return json_object_get_boolean(v);
    case json_type_int:
        return json_object_get_int64(v) != 0;
    case json_type_string:
        for (size_t i = 0; i < sizeof falsy / sizeof *falsy; i++)
            if (strcasecmp(json_object_get_string(v), falsy[i]) == 0)
                return 0;
        return 1;
    case json_type_null:
        return 0;
    default:
        return 1;
    }
}

/* A JSON array text of strings from meta[key]: a list, or one scalar. */
static char *string_list_text(struct json_object *meta, const char *key)
{
    struct json_object *v = NULL, *out = json_object_new_array();
    char *text;
    if (meta && json_object_object_get_ex(meta, key, &v) && v) {
        if (json_object_is_type(v, json_type_array)) {
            for (size_t i = 0; i < json_object_array_length(v); i++) {
                char *s = scalar_text(json_object_array_get_idx(v, i));
                if (s)
                    json_object_array_add(out, json_object_new_string(s));
                free(s);
            }
        } else if (!json_object_is_type(v, json_type_object)) {
            char *s = scalar_text(v);
            if (s)
                json_object_array_add(out, json_object_new_string(s));
            free(s);
        }
    }
    text = xstrdup(json_text(out));
    json_object_put(out);
    return text;
}

static unsigned types_of(struct json_object *meta)
{
    struct json_object *v = NULL;
    unsigned types = 0;
    if (meta && json_object_object_get_ex(meta, "types", &v) &&
        json_object_is_type(v, json_type_array))
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            const char *name = json_object_get_string(json_object_array_get_idx(v, i));
            types |= name ? knowledge_type_bit(name) : 0;
        }
    return types;
}

/* Body without leading blank lines and trailing whitespace. */
static char *trimmed_body(const char *body, size_t len)
{
    size_t start = 0, end = len;
    while (start < len && (body[start] == '\n' || body[start] == '\r'))
        start++;
    while (end > start && strchr(" \t\r\n", body[end - 1]))
        end--;
    return xstrndup(body + start, end - start);
}

void document_fill(struct knowledge *k, const char *category, const char *path, const char *text,
                   size_t len)
{
    size_t body_off = 0;
    struct json_object *meta = frontmatter_parse(text, len, &body_off), *v = NULL;
    struct buf stem;
    char **owned[] = {&k->title,      &k->tags,    &k->description, &k->source,
                      &k->scenario,   &k->content, &k->urls,        &k->agent_id,
                      &k->message_id, &k->meta,    &k->document};
    for (size_t i = 0; i < sizeof owned / sizeof *owned; i++) {
        free(*owned[i]);
        *owned[i] = NULL;
    }
    buf_init(&stem, 1024);
    path_stem(path, &stem);
    k->title = field_text(meta, "title", stem.data);
    k->tags = string_list_text(meta, "tags");
    k->description = field_text(meta, "description", "");
    k->source = field_text(meta, "source", "manual");
    if (strcmp(category, "rules") == 0) {
        /* Absent means true; an explicit null is false, as bool(None). */
        int present = meta && json_object_object_get_ex(meta, "alwaysApply", &v);
        k->always_apply = present ? (v ? document_always_apply(v) : 0) : 1;
    } else {
        k->always_apply = 0;
    }
    k->scenario = field_text(meta, "scenario", *k->description ? k->description : k->title);
    k->content = trimmed_body(text + body_off, len - body_off);
    k->types = types_of(meta);
    k->urls = string_list_text(meta, "urls");
    k->agent_id = field_text(meta, "agent_id", "");
    k->message_id = field_text(meta, "message_id", "");
    k->meta = xstrdup(meta ? json_text(meta) : "{}");
    k->document = xstrndup(text, len);
    json_object_put(meta);
    buf_release(&stem);
}

static size_t stripped_length(const char *s, size_t n)
{
    size_t start = 0, end = n;
    while (start < n && strchr(" \t\r\n\f\v", s[start]))
        start++;
    while (end > start && strchr(" \t\r\n\f\v", s[end - 1]))
        end--;
    return utf8_length(s + start, end - start);
}

/* Check a JSON list text (tags, urls) against the entry view's limits. */
static int list_within(const char *json_text, const char *key, const char *item, size_t max_items,
                       size_t max_chars, struct error *err)
{
    struct json_object *list = json_parse_stored(json_text);
    size_t n = list ? json_object_array_length(list) : 0;
    int rc = 0;
    if (n > max_items) {
        error_set(err, E_INVALID_REQUEST, "front_matter_too_many",
                  "Front matter '%s' has more than %zu items (got %zu)", key, max_items, n);
        error_str(err, "field", key);
        error_int(err, "max", (long long)max_items);
        error_int(err, "got", (long long)n);
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        struct json_object *v = json_object_array_get_idx(list, i);
        size_t chars =
            utf8_length(json_object_get_string(v), (size_t)json_object_get_string_len(v));
        if (chars > max_chars) {
            error_set(err, E_INVALID_REQUEST, "front_matter_item_too_long",
                      "A %s in front matter '%s' exceeds %zu characters (got %zu)", item, key,
                      max_chars, chars);
            error_str(err, "field", key);
            error_int(err, "max", (long long)max_chars);
            error_int(err, "got", (long long)chars);
            rc = -1;
        }
    }
    json_object_put(list);
    return rc;
}

static int text_within(const char *text, const char *key, size_t max_chars, struct error *err)
{
    size_t chars = utf8_length(text, strlen(text));
    if (chars <= max_chars)
        return 0;
    error_set(err, E_INVALID_REQUEST, "front_matter_too_long",
              "Front matter '%s' exceeds %zu characters (got %zu)", key, max_chars, chars);
    error_str(err, "field", key);
    error_int(err, "max", (long long)max_chars);
    error_int(err, "got", (long long)chars);
    return -1;
}

/* The entry view's limits on what document_fill makes of a front matter, so
 * every way in (write, rename, import, distill) stores what POST
 * /api/knowledge would accept: title (one line), scenario, tags, urls, ids
 * and, for rules, the description as it is stored (a YAML list too). */
static int fields_within_limits(const char *category, const char *path, const char *doc, size_t len,
                                struct error *err)
{
    struct knowledge k;
    struct buf stem;
    int rc = 0;
    knowledge_init(&k);
    document_fill(&k, category, path, doc, len);
    /* A title that is the file's stem is bounded by the path (255). */
    buf_init(&stem, 1024);
    path_stem(path, &stem);
    if (strcmp(category, "rules") == 0 &&
        utf8_length(k.description, strlen(k.description)) > LIMIT_RULE_DESCRIPTION) {
        size_t chars = utf8_length(k.description, strlen(k.description));
        error_set(err, E_INVALID_REQUEST, "front_matter_too_long",
                  "Rule description exceeds %d characters (got %zu)", LIMIT_RULE_DESCRIPTION,
                  chars);
        error_str(err, "field", "description");
        error_int(err, "max", LIMIT_RULE_DESCRIPTION);
        error_int(err, "got", (long long)chars);
        rc = -1;
    } else if (has_line_break(k.title)) {
        error_set(err, E_INVALID_REQUEST, "title_one_line",
                  "Front matter 'title' must be one line (no line breaks)");
        rc = -1;
    } else if ((strcmp(k.title, stem.data) != 0 &&
                text_within(k.title, "title", LIMIT_TITLE, err)) ||
               text_within(k.scenario, "scenario", LIMIT_SCENARIO, err) ||
               list_within(k.tags, "tags", "tag", LIMIT_TAGS, LIMIT_TAG, err) ||
               list_within(k.urls, "urls", "url", LIMIT_URLS, LIMIT_URL, err) ||
               text_within(k.agent_id, "agent_id", LIMIT_SHORT_TEXT, err) ||
               text_within(k.message_id, "message_id", LIMIT_SHORT_TEXT, err)) {
        rc = -1;
    }
    knowledge_release(&k);
    buf_release(&stem);
    return rc;
}

int document_prepare(const char *category, const char *path, const char *text, size_t len,
                     struct buf *out, struct error *err)
{
    size_t body_off = 0;
    struct json_object *meta = NULL;
    const char *why;
    int rules = strcmp(category, "rules") == 0, rc = 0;

    buf_reset(out);
    error_set(err, E_INVALID_REQUEST, NULL, "%s", "");
    if (frontmatter_read(text, len, &meta, &body_off, &why) == FRONTMATTER_REFUSED) {
        error_set(err, E_INVALID_REQUEST, "front_matter_refused", "Front matter refused: %s", why);
        error_str(err, "reason", why);
        return -1;
    }
    /* An empty mapping counts as missing: the header is added. */
    if (!meta || json_object_object_length(meta) == 0) {
        struct json_object *h = json_object_new_object();
        struct buf stem;
        char today[20];
        buf_init(&stem, 1024);
        path_stem(path, &stem);
        time_utc_text(today);
        today[10] = '\0';
        json_object_object_add(h, "title", json_object_new_string(stem.data));
        if (rules) {
            json_object_object_add(h, "description", json_object_new_string(""));
            json_object_object_add(h, "alwaysApply", json_object_new_boolean(1));
        }
        json_object_object_add(h, "created", json_object_new_string(today));
        json_object_object_add(h, "updated", json_object_new_string(today));
        json_object_object_add(h, "source", json_object_new_string("manual"));
        frontmatter_render(h, out);
        buf_addch(out, '\n');
        json_object_put(h);
        buf_release(&stem);
    }
    json_object_put(meta);
    meta = NULL;
    if (buf_add(out, text, len)) {
        error_set(err, E_INVALID_REQUEST, "document_too_large", "Document too large");
        return -1;
    }
    if (frontmatter_read(out->data, out->len, &meta, &body_off, &why) == FRONTMATTER_REFUSED) {
        error_set(err, E_INVALID_REQUEST, "front_matter_refused", "Front matter refused: %s", why);
        error_str(err, "reason", why);
        return -1;
    }
    json_object_put(meta);
    if (fields_within_limits(category, path, out->data, out->len, err))
        return -1;
    {
        size_t limit = rules ? LIMIT_RULES_BODY : LIMIT_EXPERIENCES_BODY;
        size_t n = stripped_length(out->data + body_off, out->len - body_off);
        if (n > limit) {
            error_set(err, E_INVALID_REQUEST, "body_too_long",
                      "%s body exceeds %zu characters (got %zu)", category, limit, n);
            error_str(err, "category", category);
            error_int(err, "max", (long long)limit);
            error_int(err, "got", (long long)n);
            rc = -1;
        }
    }
    return rc;
}

static void add_list(struct json_object *o, const char *key, const char *json_text)
{
    struct json_object *v = json_text ? json_parse_stored(json_text) : NULL;
    if (v && json_object_is_type(v, json_type_array) && json_object_array_length(v) > 0)
        json_object_object_add(o, key, v);
    else
        json_object_put(v);
}

void document_for_entry(const struct knowledge *k, struct buf *out)
{
    struct json_object *fm = json_object_new_object();
    char today[20];
    time_utc_text(today);
    today[10] = '\0';
    json_object_object_add(fm, "title", json_object_new_string(k->title ? k->title : ""));
    {
        struct json_object *tags = k->tags ? json_parse_stored(k->tags) : NULL;
        json_object_object_add(fm, "tags", tags ? tags : json_object_new_array());
    }
    if (k->category && strcmp(k->category, "rules") == 0) {
        json_object_object_add(fm, "description",
                               json_object_new_string(k->description ? k->description : ""));
        json_object_object_add(fm, "alwaysApply", json_object_new_boolean(k->always_apply));
    }
    if (k->scenario && *k->scenario)
        json_object_object_add(fm, "scenario", json_object_new_string(k->scenario));
    if (k->types) {
        struct json_object *types = json_object_new_array();
        for (int i = 0; i < KTYPE_COUNT; i++)
            if (k->types & (1u << i))
                json_object_array_add(types, json_object_new_string(knowledge_type_name(i)));
        json_object_object_add(fm, "types", types);
    }
    add_list(fm, "urls", k->urls);
    if (k->agent_id && *k->agent_id)
        json_object_object_add(fm, "agent_id", json_object_new_string(k->agent_id));
    if (k->message_id && *k->message_id)
        json_object_object_add(fm, "message_id", json_object_new_string(k->message_id));
    json_object_object_add(fm, "created", json_object_new_string(today));
    json_object_object_add(fm, "updated", json_object_new_string(today));
    json_object_object_add(fm, "source", json_object_new_string(k->source ? k->source : "agent"));
    buf_reset(out);
    frontmatter_render(fm, out);
    buf_addch(out, '\n');
    buf_adds(out, k->content ? k->content : "");
    buf_addch(out, '\n');
    json_object_put(fm);
}

const char *document_body(const char *document)
{
    size_t body_off = 0;
    struct json_object *meta = frontmatter_parse(document, strlen(document), &body_off);
    json_object_put(meta);
    return document + body_off;
}

void document_with_body(const char *document, const char *body, struct buf *out)
{
    const char *old = document_body(document);
    buf_reset(out);
    buf_add(out, document, (size_t)(old - document));
    if (old != document)
        buf_addch(out, '\n');
    buf_adds(out, body);
    buf_addch(out, '\n');
}
