/* h_search: the two searches. POST /api/knowledge/search is the file view's
 * weighted search (seed 004); GET /api/knowledge/search is the entry view's
 * two-stage search (seed 003): stage 1 picks 2*top_k relevant candidates
 * (lexically), stage 2 drops score < min_score and quality_score < 0, where
 * quality_score = score + helpful - 2*harmful, and keeps the best top_k. */
#include "api/handlers.h"
#include "api/params.h"
#include "base/jfield.h"
#include "domain/knowledge.h"
#include "base/config.h"
#include "domain/paths.h"
#include "service/shortlist.h"
#include "service/search.h"
#include "store/store.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* ---- POST /api/knowledge/search ---- */

static void file_hit(const struct search_hit *h, void *ctx)
{
    struct json_object *o = json_object_new_object();
    struct json_object *tags = json_parse_stored(h->k->tags ? h->k->tags : "[]");
    struct buf snippet;
    buf_init(&snippet, 1 << 20);
    search_snippet(h->k->content, &snippet);
    json_object_object_add(o, "category", json_object_new_string(h->k->category));
    json_object_object_add(o, "title", json_object_new_string(h->k->title));
    json_object_object_add(o, "tags", tags ? tags : json_object_new_array());
    json_object_object_add(o, "path", json_object_new_string(h->k->path));
    json_object_object_add(o, "snippet",
                           json_object_new_string_len(snippet.data, (int)snippet.len));
    buf_release(&snippet);
    json_object_object_add(o, "source", json_object_new_string(h->k->source));
    json_object_object_add(o, "score", json_object_new_double(h->score));
    json_object_object_add(o, "id", json_object_new_string(h->k->id));
    json_object_array_add(ctx, o);
}

/* categories: null or [] = both; else a list of known names. */
static int categories_or_400(struct response *res, struct json_object *body, unsigned *out)
{
    struct json_object *v;
    struct buf bad;
    *out = 0;
    if (!json_object_object_get_ex(body, "categories", &v) || !v)
        return 0;
    if (!json_object_is_type(v, json_type_array)) {
        reply_error(res, 200, E_INVALID_REQUEST, "'categories' must be a list");
        return -1;
    }
    buf_init(&bad, 4096);
    for (size_t i = 0; i < json_object_array_length(v); i++) {
        const char *c = jf_str(json_object_array_get_idx(v, i));
        if (c && strcmp(c, "rules") == 0)
            *out |= SEARCH_RULES;
        else if (c && strcmp(c, "experiences") == 0)
            *out |= SEARCH_EXPERIENCES;
        else
            buf_addf(&bad, "%s'%s'", bad.len ? ", " : "",
                     c ? c : json_object_to_json_string(json_object_array_get_idx(v, i)));
    }
    if (bad.len) {
        reply_error(res, 200, E_INVALID_REQUEST, "Invalid categories: {%s}", bad.data);
        buf_release(&bad);
        return -1;
    }
    buf_release(&bad);
    return 0;
}

void h_search_files(struct request *req, struct response *res)
{
    struct json_object *body = http_body_json_or_400(req, res), *tables, *results;
    const char *query;
    unsigned categories;
    long max_results;
    int rc;
    if (!body)
        return;
    if (jf_string_or_400(res, body, "query", 0, 2000, &query) ||
        categories_or_400(res, body, &categories) ||
        jf_long_or_400(res, body, "max_results", 1, 50, 10, &max_results) ||
        jf_string_list_or_400(res, body, "table_names", 100, 256, 0, &tables))
        goto out;
    results = json_object_new_array();
    rc = search_files(req->store, req->who.space, query, categories, (size_t)max_results, tables,
                      file_hit, results);
    if (rc) {
        json_object_put(results);
        reply_store_error(res, rc, "Knowledge");
    } else {
        struct json_object *data = json_object_new_object();
        json_object_object_add(data, "results", results);
        reply_data(res, data);
    }
out:
    json_object_put(body);
}

/* ---- GET /api/knowledge/search ---- */

struct ranked {
    struct json_object *item; /* the result object */
    double quality, relevance;
    int score;
    char *updated_at, *id;
    struct shortlist_candidate route; /* what the LLM router sees (owned strings) */
};

struct stage1 {
    struct ranked *r;
    size_t n;
};

/* "a, b" from a JSON array text. */
static char *joined(struct json_object *arr)
{
    struct buf b;
    buf_init(&b, 1 << 16);
    for (size_t i = 0; arr && i < json_object_array_length(arr); i++)
        buf_addf(&b, "%s%s", i ? ", " : "",
                 json_object_get_string(json_object_array_get_idx(arr, i)));
    return buf_detach(&b, NULL);
}

static void entry_hit(const struct search_hit *h, void *ctx)
{
    struct stage1 *s1 = ctx;
    const struct knowledge *k = h->k;
    double quality = k->score + (double)k->helpful - 2.0 * (double)k->harmful;
    struct json_object *full, *o, *v, *tags;
    struct ranked *r;
    full = knowledge_to_json(k, NULL, NULL, NULL);
    o = json_object_new_object();
    const char *keys[] = {"id", "title", "scenario", "content", "tags", "category", "path"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (json_object_object_get_ex(full, keys[i], &v))
            json_object_object_add(o, keys[i], json_object_get(v));
    json_object_object_add(o, "score", json_object_new_int(k->score));
    json_object_object_add(o, "quality_score", json_object_new_double(quality));
    if (json_object_object_get_ex(full, "metrics", &v))
        json_object_object_add(o, "metrics", json_object_get(v));
    json_object_object_add(o, "relevance", json_object_new_double(h->score));
    s1->r = xrealloc(s1->r, (s1->n + 1) * sizeof *s1->r);
    r = &s1->r[s1->n++];
    r->item = o;
    r->quality = quality;
    r->relevance = h->score;
    r->score = k->score;
    r->updated_at = xstrdup(k->updated_at);
    r->id = xstrdup(k->id);
    json_object_object_get_ex(full, "tags", &tags);
    r->route.types = joined(json_object_object_get(tags, "type"));
    r->route.tags = joined(json_object_object_get(tags, "labels"));
    r->route.scenario = xstrdup(k->scenario);
    json_object_put(full);
}

static void ranked_release(struct ranked *r)
{
    json_object_put(r->item);
    free(r->updated_at);
    free(r->id);
    free((char *)r->route.types);
    free((char *)r->route.tags);
    free((char *)r->route.scenario);
}

/* Stage 1's candidates for stage 2: the router's choice, or the lexical top. */
static size_t route_stage(struct request *req, const char *q, struct stage1 *s1, size_t want,
                          size_t *chosen, const char **routing)
{
    struct svc_ctx sc;
    size_t n = 0;
    http_svc_ctx(req, &sc);
    *routing = "lexical";
    if (config_llm_configured(req->cfg) && s1->n > 0) {
        struct shortlist_candidate *c = xcalloc(s1->n, sizeof *c);
        for (size_t i = 0; i < s1->n; i++)
            c[i] = s1->r[i].route;
        if (shortlist_candidates(&sc, q, c, s1->n, want, chosen, &n) == 0) {
            *routing = "llm";
            free(c);
            return n;
        }
        free(c);
        *routing = "lexical_fallback";
    }
    for (n = 0; n < s1->n && n < want; n++)
        chosen[n] = n;
    return n;
}

static int quality_order(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    int c;
    if (x->quality != y->quality)
        return x->quality < y->quality ? 1 : -1;
    if (x->relevance != y->relevance)
        return x->relevance < y->relevance ? 1 : -1;
    if ((c = strcmp(y->updated_at, x->updated_at)))
        return c;
    return strcmp(x->id, y->id);
}

/* Log the returned entries as injections into a trace (goal focus, seed 000);
 * a task, when given, becomes the trace's mission. */
static int log_injections(struct request *req, const char *trace_id, const char *goal_id,
                          long sequence, const char *task, struct json_object *results)
{
    int rc = store_begin(req->store);
    if (rc == STORE_OK && task && *task)
        rc = store_trace_put(req->store, req->who.space, trace_id, task, NULL);
    for (size_t i = 0; rc == STORE_OK && i < json_object_array_length(results); i++) {
        struct json_object *id;
        long log_id;
        if (json_object_object_get_ex(json_object_array_get_idx(results, i), "id", &id))
            rc = store_log_add(req->store, req->who.space, trace_id, json_object_get_string(id),
                               goal_id, sequence, &log_id);
    }
    if (rc == STORE_OK)
        return store_commit(req->store);
    store_rollback(req->store);
    return rc;
}

void h_search_entries(struct request *req, struct response *res)
{
    struct knowledge_filter f = {0};
    struct stage1 s1 = {0};
    const char *q = http_query(req, "q"), *trace_id = http_query(req, "trace_id");
    const char *goal_id = http_query(req, "goal_id");
    long top_k, sequence, s1_min_score;
    int rc;

    if (http_query_long_or_400(req, res, "top_k", 5, 1, 50, &top_k) ||
        http_query_long_or_400(req, res, "min_score", 3, 1, 5, &s1_min_score) ||
        http_query_long_or_400(req, res, "sequence", 0, 0, 1L << 50, &sequence))
        return;
    if (trace_id && *trace_id && !id_text_valid(trace_id, 128)) {
        reply_error(res, 200, E_INVALID_REQUEST,
                    "Invalid trace_id: 1 to 128 of A-Z a-z 0-9 . _ : -, not . or ..");
        return;
    }
    if (http_query(req, "task") &&
        utf8_length(http_query(req, "task"), strlen(http_query(req, "task"))) > 4000) {
        reply_error(res, 200, E_LIMIT_EXCEEDED, "'task' exceeds 4000 characters");
        return;
    }
    if (goal_id && utf8_length(goal_id, strlen(goal_id)) > 256) {
        reply_error(res, 200, E_LIMIT_EXCEEDED, "'goal_id' exceeds 256 characters");
        return;
    }
    if (trace_id && *trace_id && req->who.role < ROLE_AGENT) {
        reply_error(res, 403, E_FORBIDDEN, "Logging an injection (trace_id) needs the agent role");
        return;
    }
    if (q && utf8_length(q, strlen(q)) > 2000) {
        reply_error(res, 200, E_LIMIT_EXCEEDED, "'q' exceeds 2000 characters");
        return;
    }
    if (knowledge_filter_from_query_or_400(req, res, &f))
        return;
    /* Stage 1: 2*top_k relevant candidates, from the lexical top 50 when the
     * LLM router is configured, else the lexical top 2*top_k. */
    size_t want = (size_t)(2 * top_k);
    size_t pool = config_llm_configured(req->cfg) ? (want > 50 ? want : 50) : want;
    rc = search_entries(req->store, req->who.space, q, &f, pool, entry_hit, &s1);
    if (rc == STORE_OK) {
        struct json_object *results = json_object_new_array(), *data = json_object_new_object();
        size_t *chosen = xcalloc(want + 1, sizeof *chosen), n_chosen;
        struct ranked *stage2 = xcalloc(want + 1, sizeof *stage2);
        const char *routing;
        size_t n2 = 0;
        n_chosen = route_stage(req, q, &s1, want, chosen, &routing);
        /* Stage 2: drop too low a score and more harm than good, rank by quality. */
        for (size_t i = 0; i < n_chosen; i++) {
            struct ranked *r = &s1.r[chosen[i]];
            if (r->score >= s1_min_score && r->quality >= 0)
                stage2[n2++] = *r;
        }
        if (n2 > 1)
            qsort(stage2, n2, sizeof *stage2, quality_order);
        for (size_t i = 0; i < n2 && i < (size_t)top_k; i++)
            json_object_array_add(results, json_object_get(stage2[i].item));
        free(stage2);
        free(chosen);
        json_object_object_add(data, "count",
                               json_object_new_int64((int64_t)json_object_array_length(results)));
        json_object_object_add(data, "results", results);
        json_object_object_add(data, "routing", json_object_new_string(routing));
        if (trace_id && *trace_id) {
            /* Goal focus: every returned entry is logged as injected. */
            rc = log_injections(req, trace_id, goal_id, sequence, http_query(req, "task"), results);
            json_object_object_add(data, "trace_id", json_object_new_string(trace_id));
            json_object_object_add(data, "logged", json_object_new_boolean(rc == STORE_OK));
        }
        if (rc) {
            json_object_put(data);
            reply_store_error(res, rc, "Trace");
        } else {
            reply_data(res, data);
        }
    } else {
        reply_store_error(res, rc, "Knowledge");
    }
    for (size_t i = 0; i < s1.n; i++)
        ranked_release(&s1.r[i]);
    free(s1.r);
}
