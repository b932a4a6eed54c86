/* catalog: pages, completion values and agent-written documents of a
 * space (service/catalog.h), over one scan of its active entries. */
#include "service/catalog.h"
#include "base/jfield.h"
#include "base/util.h"
#include "domain/knowledge.h"
#include "service/traces.h"
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

/* What a catalog keeps of an entry (owned copies). */
struct row {
    char *id, *category, *path, *title, *description, *tags, *scenario, *source;
    char *created_at, *updated_at;
    int score;
    long helpful, harmful;
};

struct rows {
    struct row *v;
    size_t n, cap;
};

static char *dup_or_empty(const char *s)
{
    return xstrdup(s ? s : "");
}

static int row_add(const struct knowledge *k, void *arg)
{
    struct rows *r = arg;
    struct row *w;
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 64;
        r->v = xrealloc(r->v, r->cap * sizeof *r->v);
    }
    w = &r->v[r->n++];
    w->id = dup_or_empty(k->id);
    w->category = dup_or_empty(k->category);
    w->path = dup_or_empty(k->path);
    w->title = dup_or_empty(k->title);
    w->description = dup_or_empty(k->description);
    w->tags = dup_or_empty(k->tags);
    w->scenario = dup_or_empty(k->scenario);
    w->source = dup_or_empty(k->source);
    w->created_at = dup_or_empty(k->created_at);
    w->updated_at = dup_or_empty(k->updated_at);
    w->score = k->score;
    w->helpful = k->helpful;
    w->harmful = k->harmful;
    return 0;
}

static void rows_release(struct rows *r)
{
    for (size_t i = 0; i < r->n; i++) {
        struct row *w = &r->v[i];
        char *owned[] = {w->id,   w->category, w->path,   w->title,      w->description,
                         w->tags, w->scenario, w->source, w->created_at, w->updated_at};
        for (size_t j = 0; j < sizeof owned / sizeof *owned; j++)
            free(owned[j]);
    }
    free(r->v);
    memset(r, 0, sizeof *r);
}

/* Every active entry of the space into r (the caller releases it). */
static int rows_load(const struct svc_ctx *c, struct rows *r, struct error *err)
{
    int rc;
    memset(r, 0, sizeof *r);
    rc = store_knowledge_scan(c->st, c->space, SCAN_ACTIVE, NULL, 0, row_add, r);
    if (rc) {
        store_status_error(rc, "Knowledge", err);
        return -1;
    }
    return 0;
}

/* Rules come first, then experiences. */
static int category_rank(const char *category)
{
    return strcmp(category, "rules") == 0 ? 0 : 1;
}

static int key_cmp(const char *cat_a, const char *path_a, const char *cat_b, const char *path_b)
{
    int a = category_rank(cat_a), b = category_rank(cat_b);
    return a != b ? a - b : strcmp(path_a, path_b);
}

static int row_order(const void *pa, const void *pb)
{
    const struct row *a = pa, *b = pb;
    return key_cmp(a->category, a->path, b->category, b->path);
}

/* The string field name of w ("id", "category", "path", ...). */
static const char *row_field(const struct row *w, const char *name)
{
    const struct {
        const char *name, *value;
    } fields[] = {
        {"id", w->id},         {"category", w->category},       {"path", w->path},
        {"title", w->title},   {"description", w->description}, {"scenario", w->scenario},
        {"source", w->source}, {"created_at", w->created_at},   {"updated_at", w->updated_at}};
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        if (strcmp(fields[i].name, name) == 0)
            return fields[i].value;
    return "";
}

/* An object of the string fields names (NULL-ended) of w. */
static struct json_object *row_json(const struct row *w, const char *const *names)
{
    struct json_object *o = json_object_new_object();
    for (; *names; names++)
        json_object_object_add(o, *names, json_object_new_string(row_field(w, *names)));
    return o;
}

/* Check a page's limit and load the rows (the caller releases them). */
static int rows_for_page(const struct svc_ctx *c, long limit, struct rows *r, struct error *err)
{
    if (limit < 1 || limit > CATALOG_PAGE_MAX) {
        error_set(err, E_INVALID_REQUEST, NULL, "limit must be 1 to %d", CATALOG_PAGE_MAX);
        return -1;
    }
    return rows_load(c, r, err);
}

int svc_catalog_page(const struct svc_ctx *c, const char *after_category, const char *after_path,
                     long limit, struct json_object **items, int *more, struct error *err)
{
    static const char *const fields[] = {"id",          "category",   "path", "title",
                                         "description", "updated_at", NULL};
    struct rows r;
    long listed = 0;
    *items = NULL;
    *more = 0;
    if (rows_for_page(c, limit, &r, err))
        return -1;
    if (r.n)
        qsort(r.v, r.n, sizeof *r.v, row_order);
    *items = json_object_new_array();
    for (size_t i = 0; i < r.n; i++) {
        struct row *w = &r.v[i];
        if (after_category && after_path &&
            key_cmp(w->category, w->path, after_category, after_path) <= 0)
            continue;
        if (listed == limit) {
            *more = 1;
            break;
        }
        json_object_array_add(*items, row_json(w, fields));
        listed++;
    }
    rows_release(&r);
    return 0;
}

/* ---- completion values ---- */

struct values {
    char **v;
    size_t n, cap;
};

static void value_add(struct values *vs, const char *s, const char *prefix)
{
    if (!s || !*s || (prefix && strncmp(s, prefix, strlen(prefix)) != 0))
        return;
    if (vs->n == vs->cap) {
        vs->cap = vs->cap ? vs->cap * 2 : 64;
        vs->v = xrealloc(vs->v, vs->cap * sizeof *vs->v);
    }
    vs->v[vs->n++] = xstrdup(s);
}

static int str_order(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void row_values(const struct row *w, enum catalog_field field, const char *prefix,
                       struct values *vs)
{
    struct json_object *tags;
    switch (field) {
    case CATALOG_PATHS:
        value_add(vs, w->path, prefix);
        break;
    case CATALOG_IDS:
        value_add(vs, w->id, prefix);
        break;
    case CATALOG_TAGS:
        tags = json_parse_stored(w->tags);
        for (size_t i = 0; tags && json_object_is_type(tags, json_type_array) &&
                           i < json_object_array_length(tags);
             i++)
            value_add(vs, jf_str(json_object_array_get_idx(tags, i)), prefix);
        json_object_put(tags);
        break;
    case CATALOG_TRACES:
        break;
    }
}

/* The ids of the newest traces that begin with prefix, into vs. */
static int trace_values(const struct svc_ctx *c, const char *prefix, struct values *vs,
                        struct error *err)
{
    for (long offset = 0; offset < CATALOG_TRACES_SCANNED; offset += TRACE_LOG_PAGE_DEFAULT) {
        struct json_object *items = NULL;
        long total = 0;
        size_t n;
        if (svc_trace_list(c, TRACE_LOG_PAGE_DEFAULT, offset, &items, &total, err))
            return -1;
        n = json_object_array_length(items);
        for (size_t i = 0; i < n; i++)
            value_add(vs, jf_member_str(json_object_array_get_idx(items, i), "trace_id"), prefix);
        json_object_put(items);
        if (n < TRACE_LOG_PAGE_DEFAULT)
            break;
    }
    return 0;
}

int svc_catalog_values(const struct svc_ctx *c, enum catalog_field field, const char *category,
                       const char *prefix, size_t max, struct json_object **values, long *total,
                       struct error *err)
{
    struct values vs = {0};
    size_t distinct = 0;
    int rc = 0;
    *values = NULL;
    *total = 0;
    if (prefix && !*prefix)
        prefix = NULL;
    if (max > CATALOG_VALUES_MAX)
        max = CATALOG_VALUES_MAX;
    if (field == CATALOG_TRACES) {
        rc = trace_values(c, prefix, &vs, err);
    } else {
        struct rows r;
        if ((rc = rows_load(c, &r, err)) == 0) {
            for (size_t i = 0; i < r.n; i++)
                if (!category || strcmp(r.v[i].category, category) == 0)
                    row_values(&r.v[i], field, prefix, &vs);
            rows_release(&r);
        }
    }
    if (rc == 0) {
        if (vs.n) /* qsort may not be given NULL, even for no item */
            qsort(vs.v, vs.n, sizeof *vs.v, str_order);
        *values = json_object_new_array();
        for (size_t i = 0; i < vs.n; i++) {
            if (i > 0 && strcmp(vs.v[i], vs.v[i - 1]) == 0)
                continue;
            if (distinct++ < max)
                json_object_array_add(*values, json_object_new_string(vs.v[i]));
        }
        *total = (long)distinct;
    }
    for (size_t i = 0; i < vs.n; i++)
        free(vs.v[i]);
    free(vs.v);
    return rc ? -1 : 0;
}

/* ---- what agents wrote ---- */

static int agent_written(const char *source)
{
    return strcmp(source, "agent") == 0 || strcmp(source, "distill") == 0 ||
           strcmp(source, "distill-local") == 0;
}

static int has_tag(const char *tags_json, const char *tag)
{
    struct json_object *tags = json_parse_stored(tags_json);
    int found = 0;
    for (size_t i = 0;
         tags && json_object_is_type(tags, json_type_array) && i < json_object_array_length(tags);
         i++) {
        const char *t = jf_str(json_object_array_get_idx(tags, i));
        found |= t && strcmp(t, tag) == 0;
    }
    json_object_put(tags);
    return found;
}

static int newest_first(const void *pa, const void *pb)
{
    const struct row *a = *(const struct row *const *)pa, *b = *(const struct row *const *)pb;
    int by_time = strcmp(b->created_at, a->created_at);
    return by_time ? by_time : strcmp(b->id, a->id);
}

int svc_catalog_agent_written(const struct svc_ctx *c, const char *category, const char *tag,
                              long limit, struct json_object **items, long *total,
                              struct error *err)
{
    static const char *const fields[] = {"id",     "category",   "path",       "title", "scenario",
                                         "source", "created_at", "updated_at", NULL};
    struct rows r;
    const struct row **picked;
    size_t n = 0;
    *items = NULL;
    *total = 0;
    if (rows_for_page(c, limit, &r, err))
        return -1;
    picked = xcalloc(r.n + 1, sizeof *picked);
    for (size_t i = 0; i < r.n; i++)
        if (agent_written(r.v[i].source) && (!category || strcmp(r.v[i].category, category) == 0) &&
            (!tag || has_tag(r.v[i].tags, tag)))
            picked[n++] = &r.v[i];
    qsort(picked, n, sizeof *picked, newest_first);
    *items = json_object_new_array();
    for (size_t i = 0; i < n && i < (size_t)limit; i++) {
        const struct row *w = picked[i];
        struct json_object *o = row_json(w, fields);
        json_object_object_add(o, "score", json_object_new_int(w->score));
        json_object_object_add(o, "helpful", json_object_new_int64(w->helpful));
        json_object_object_add(o, "harmful", json_object_new_int64(w->harmful));
        json_object_array_add(*items, o);
    }
    *total = (long)n;
    free(picked);
    rows_release(&r);
    return 0;
}
