/* entries: the file view's search and the entry view's two-stage search
 * with its trace logging (service/entries.h). */
#include "service/entries.h"
#include "base/buf.h"
#include "base/config.h"
#include "base/jfield.h"
#include "base/util.h"
#include "domain/ageing.h"
#include "domain/knowledge.h"
#include "domain/paths.h"
#include "service/evidence.h"
#include "service/explain.h"
#include "service/hybrid.h"
#include "service/links.h"
#include "service/promote.h"
#include "service/search.h"
#include "service/shortlist.h"
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

/* ---- the file view ---- */

struct file_hits {
    struct json_object *results;
    enum search_mode mode;
    struct search_query q;        /* the query's terms, for the passages */
    const struct search_opts *eo; /* explain=true: the search's options; else NULL */
};

static void file_hit(const struct fused_hit *h, void *ctx)
{
    struct file_hits *fh = ctx;
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
    json_object_object_add(o, "passage", search_passage(&fh->q, h->k->content));
    /* score: the reference's match score; relevance: what ordered the hit */
    json_object_object_add(o, "score", json_object_new_double(h->match));
    json_object_object_add(
        o, "relevance", json_object_new_double(fh->mode == MODE_LEXICAL ? h->lexical : h->fused));
    json_object_object_add(o, "id", json_object_new_string(h->k->id));
    if (h->weak)
        json_object_object_add(o, "weak", json_object_new_boolean(1));
    if (fh->mode != MODE_LEXICAL) {
        json_object_object_add(o, "vector_score", json_object_new_double(h->vector));
        json_object_object_add(o, "found_by", hybrid_found_by(h->found));
    }
    if (fh->eo) {
        struct json_object *e = json_object_new_object();
        json_object_object_add(e, "relevance", explain_relevance(fh->eo, fh->mode, h));
        json_object_object_add(o, "explain", e);
    }
    json_object_array_add(fh->results, o);
}

/* The file view's filter for an entry found only by meaning: its category
 * asked for, and no always-apply rule (those are in every context). */
static int file_accept(const struct knowledge *k, void *ctx)
{
    unsigned categories = *(const unsigned *)ctx;
    unsigned bit = strcmp(k->category, "rules") == 0 ? SEARCH_RULES : SEARCH_EXPERIENCES;
    return (!categories || (categories & bit)) && !(bit == SEARCH_RULES && k->always_apply);
}

/* The search's answer: its results, mode, any warnings and, with explain,
 * left_out (taken over). */
static struct json_object *answer(struct json_object *results, enum search_mode mode,
                                  struct json_object *warnings, struct json_object *left_out)
{
    struct json_object *data = json_object_new_object();
    json_object_object_add(data, "results", results);
    if (left_out)
        json_object_object_add(data, "left_out", left_out);
    if (mode != MODE_LEXICAL) /* a lexical answer keeps the reference's shape */
        json_object_object_add(data, "mode", json_object_new_string(search_mode_name(mode)));
    if (json_object_array_length(warnings))
        json_object_object_add(data, "warnings", json_object_get(warnings));
    return data;
}

/* categories: null or [] = both; else a list of known names. */
static int categories_of(struct json_object *body, unsigned *out, struct error *err)
{
    struct json_object *v;
    struct buf bad;
    *out = 0;
    if (!json_object_object_get_ex(body, "categories", &v) || !v)
        return 0;
    if (!json_object_is_type(v, json_type_array)) {
        error_set(err, E_INVALID_REQUEST, NULL, "'categories' must be a list");
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
    if (bad.len)
        error_set(err, E_INVALID_REQUEST, NULL, "Invalid categories: {%s}", bad.data);
    buf_release(&bad);
    return err->code ? -1 : 0;
}

int svc_search_files(const struct svc_ctx *c, struct json_object *body, struct json_object **data,
                     struct error *err)
{
    struct json_object *tables, *warnings;
    struct file_hits fh;
    struct ranked_id *lex = NULL;
    const char *query, *mode_text;
    unsigned categories;
    long max_results;
    size_t nlex = 0, pool;
    int rc, include_weak, explain;
    struct search_opts opts;
    struct json_object *left_out = NULL;
    *data = NULL;
    if (jf_string(err, body, "query", 0, 2000, &query) || categories_of(body, &categories, err) ||
        jf_long(err, body, "max_results", 1, 50, 10, &max_results) ||
        jf_string_list(err, body, "table_names", 100, 256, 0, &tables) ||
        jf_string(err, body, "mode", 0, 64, &mode_text) ||
        jf_bool(err, body, "include_weak", 0, &include_weak) ||
        jf_bool(err, body, "explain", 0, &explain) || search_mode_of(c, mode_text, &fh.mode, err))
        return -1;
    opts = search_opts_of(c->cfg, include_weak);
    fh.eo = explain ? &opts : NULL;
    /* Fusion looks further down the lexical list than it answers. */
    pool = fh.mode == MODE_LEXICAL || max_results >= 20 ? (size_t)max_results : 20;
    rc = search_files_ids(c->st, c->space, query, categories, pool, tables, &opts, &lex, &nlex);
    search_query_init(&fh.q, query);
    fh.results = json_object_new_array();
    warnings = json_object_new_array();
    if (rc == STORE_OK)
        rc = hybrid_run(c, fh.mode, query, lex, nlex, (size_t)max_results, file_accept, &categories,
                        file_hit, &fh, warnings);
    ranked_ids_free(lex, nlex);
    search_query_release(&fh.q);
    if (rc == STORE_OK && explain) {
        struct search_opts weak_opts = search_opts_of(c->cfg, 1);
        left_out = json_object_new_array();
        lex = NULL;
        nlex = 0;
        if (!include_weak)
            rc = search_files_ids(c->st, c->space, query, categories, pool, tables, &weak_opts,
                                  &lex, &nlex);
        if (rc == STORE_OK)
            rc = explain_left_out_rest(c, query, include_weak ? NULL : lex, nlex, fh.results,
                                       left_out);
        ranked_ids_free(lex, nlex);
    }
    if (rc == STORE_OK) {
        *data = answer(fh.results, fh.mode, warnings, left_out);
    } else {
        json_object_put(fh.results);
        json_object_put(left_out);
    }
    json_object_put(warnings);
    if (rc)
        store_status_error(rc, "Knowledge", err);
    return rc ? -1 : 0;
}

/* ---- the entry view ---- */

struct ranked {
    struct knowledge k;   /* the entry, taken over from hybrid_run */
    struct fused_hit hit; /* how it was found (hit.k unused) */
    double quality;       /* what stage 2 ranks by: from the aged counts when ageing is on */
    double counted;       /* the quality from the counters as they are */
    double relevance;
    struct evidence_aged aged; /* the counts stage 2 used (the counters when ageing is off) */
    const char *exempt;        /* why they are not aged, or NULL (evidence_exempt) */
    int kept;                  /* 1: kept in top_k as the most relevant (rerank) */
    struct shortlist_candidate route; /* what the LLM router sees (owned strings) */
};

struct stage1 {
    struct ranked *r;
    size_t n;
    enum search_mode mode;
    struct search_query q;   /* the query's terms, for the passages */
    long half_life;          /* the space's evidence half-life in days, 0: off */
    int explain;             /* 1: each result says how it was ranked */
    struct search_opts opts; /* the lexical search's options (explain's components) */
};

/* "a, b" from a JSON array. */
static char *joined(struct json_object *arr)
{
    struct buf b;
    buf_init(&b, 1 << 16);
    for (size_t i = 0; arr && i < json_object_array_length(arr); i++)
        buf_addf(&b, "%s%s", i ? ", " : "",
                 json_object_get_string(json_object_array_get_idx(arr, i)));
    return buf_detach(&b, NULL);
}

/* Stage 1 keeps each candidate's entry and scores; the result objects are
 * made in stage 2 for the ones returned only. */
static void entry_hit(const struct fused_hit *h, void *ctx)
{
    struct stage1 *s1 = ctx;
    struct ranked *r;
    s1->r = xrealloc(s1->r, (s1->n + 1) * sizeof *s1->r);
    r = &s1->r[s1->n++];
    memset(r, 0, sizeof *r);
    r->k = *h->k; /* taken over: hybrid_run releases what it leaves */
    knowledge_init(h->k);
    r->hit = *h;
    r->hit.k = NULL;
    r->aged.helpful = (double)r->k.helpful;
    r->aged.harmful = (double)r->k.harmful;
    r->quality = r->counted = ageing_quality(r->k.score, r->aged.helpful, r->aged.harmful);
    r->exempt = evidence_exempt(&r->k);
    /* relevance: the match score, or with vectors the fused score that ordered it */
    r->relevance = s1->mode == MODE_LEXICAL ? h->lexical : h->fused;
}

/* A returned candidate's result object, with its passage. */
/* The result item of k: its fields, score, quality, metrics, relevance and
 * passage (flagged weak when it is). */
static struct json_object *hit_item(const struct stage1 *s1, const struct knowledge *k,
                                    double quality, double relevance, int weak)
{
    struct json_object *o = knowledge_card_json(k);
    json_object_object_add(o, "score", json_object_new_int(k->score));
    json_object_object_add(o, "quality_score", json_object_new_double(quality));
    json_object_object_add(o, "metrics", knowledge_metrics_json(k));
    json_object_object_add(o, "relevance", json_object_new_double(relevance));
    json_object_object_add(o, "passage", search_passage(&s1->q, k->content));
    if (weak)
        json_object_object_add(o, "weak", json_object_new_boolean(1));
    return o;
}

/* explain of a result: how relevant (explain.h) and its quality's parts. */
static struct json_object *entry_explain(const struct stage1 *s1, const struct ranked *r)
{
    struct json_object *e = json_object_new_object(), *q = json_object_new_object();
    json_object_object_add(e, "relevance", explain_relevance(&s1->opts, s1->mode, &r->hit));
    json_object_object_add(q, "score", json_object_new_int(r->k.score));
    json_object_object_add(q, "helpful", json_object_new_int64(r->k.helpful));
    json_object_object_add(q, "harmful", json_object_new_int64(r->k.harmful));
    json_object_object_add(q, "helpful_aged", json_object_new_double(r->aged.helpful));
    json_object_object_add(q, "harmful_aged", json_object_new_double(r->aged.harmful));
    json_object_object_add(q, "half_life_days", json_object_new_int64(s1->half_life));
    json_object_object_add(q, "counted", json_object_new_double(r->counted));
    json_object_object_add(q, "value", json_object_new_double(r->quality));
    if (r->exempt)
        json_object_object_add(q, "exempt", json_object_new_string(r->exempt));
    json_object_object_add(e, "quality", q);
    if (r->kept)
        json_object_object_add(e, "kept", json_object_new_string("most_relevant"));
    return e;
}

static struct json_object *entry_item(const struct stage1 *s1, const struct ranked *r)
{
    const struct fused_hit *h = &r->hit;
    struct json_object *o = hit_item(s1, &r->k, r->quality, r->relevance, h->weak);
    if (s1->mode != MODE_LEXICAL) {
        json_object_object_add(o, "lexical_score", json_object_new_double(h->lexical));
        json_object_object_add(o, "vector_score", json_object_new_double(h->vector));
        json_object_object_add(o, "found_by", hybrid_found_by(h->found));
    }
    if (s1->explain)
        json_object_object_add(o, "explain", entry_explain(s1, r));
    return o;
}

/* A pending proposal served to a trace that opted in: marked pending, its
 * id the proposal's (what the trace's verdicts name), the entry a change
 * would change in knowledge_id; found by words only. */
static struct json_object *pending_item(const struct stage1 *s1, const struct pending_hit *h)
{
    struct json_object *o = hit_item(s1, &h->k, h->k.score, h->r.score, h->r.weak);
    json_object_object_add(o, "pending", json_object_new_boolean(1));
    json_object_object_add(o, "proposal_id", json_object_new_string(h->k.id));
    json_object_object_add(o, "knowledge_id",
                           h->knowledge_id ? json_object_new_string(h->knowledge_id) : NULL);
    if (s1->mode != MODE_LEXICAL)
        json_object_object_add(o, "found_by", hybrid_found_by(FOUND_LEXICAL));
    return o;
}

/* What the LLM router sees of a candidate: its types, labels and scenario. */
static void entry_route(struct ranked *r)
{
    struct json_object *full = knowledge_to_json(&r->k, NULL, NULL, NULL), *tags = NULL;
    json_object_object_get_ex(full, "tags", &tags);
    r->route.types = joined(json_object_object_get(tags, "type"));
    r->route.tags = joined(json_object_object_get(tags, "labels"));
    r->route.scenario = xstrdup(r->k.scenario);
    json_object_put(full);
}

static void ranked_release(struct ranked *r)
{
    knowledge_release(&r->k);
    free((char *)r->route.types);
    free((char *)r->route.tags);
    free((char *)r->route.scenario);
}

/* Stage 1's candidates for stage 2: the router's choice, or the lexical top. */
static size_t route_stage(const struct svc_ctx *sc, const char *q, struct stage1 *s1, size_t want,
                          size_t *chosen, const char **routing)
{
    size_t n = 0;
    *routing = "lexical";
    if (config_llm_configured(sc->cfg) && s1->n > 0) {
        struct shortlist_candidate *c = xcalloc(s1->n, sizeof *c);
        for (size_t i = 0; i < s1->n; i++) {
            entry_route(&s1->r[i]);
            c[i] = s1->r[i].route;
        }
        if (shortlist_candidates(sc, q, c, s1->n, want, chosen, &n) == 0) {
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

/* Stage 2's order by the quality ranked by (aged) or counted. */
static int ranked_order(const struct ranked *x, const struct ranked *y, int aged)
{
    double qx = aged ? x->quality : x->counted, qy = aged ? y->quality : y->counted;
    int c;
    if (qx != qy)
        return qx < qy ? 1 : -1;
    if (x->relevance != y->relevance)
        return x->relevance < y->relevance ? 1 : -1;
    if ((c = strcmp(y->k.updated_at, x->k.updated_at)))
        return c;
    return strcmp(x->k.id, y->k.id);
}

static int quality_order(const void *a, const void *b)
{
    return ranked_order(a, b, 1);
}

/* Log the returned entries as injections into a trace (goal focus); a task,
 * when given, becomes the trace's mission. A store status. */
static int log_injections(const struct svc_ctx *c, const char *trace_id, const char *goal_id,
                          long sequence, const char *task, struct json_object *results,
                          const struct pending_hit *pending, size_t n_pending)
{
    int rc = store_begin(c->st);
    if (rc == STORE_OK && task && *task)
        rc = store_trace_put(c->st, c->space, trace_id, task, NULL);
    for (size_t i = 0; rc == STORE_OK && i < json_object_array_length(results); i++) {
        struct json_object *item = json_object_array_get_idx(results, i), *id;
        long log_id;
        if (json_object_object_get_ex(item, "pending", NULL))
            continue; /* logged below, from its proposal */
        if (json_object_object_get_ex(item, "id", &id))
            rc = store_log_add(c->st, c->space, trace_id, json_object_get_string(id), goal_id,
                               sequence, &log_id);
    }
    /* one decided meanwhile is not logged (nothing to evaluate) */
    for (size_t i = 0; rc == STORE_OK && i < n_pending; i++)
        if ((rc = promote_log(c, trace_id, goal_id, sequence, &pending[i])) == STORE_NOT_FOUND)
            rc = STORE_OK;
    if (rc == STORE_OK)
        return store_commit(c->st);
    store_rollback(c->st);
    return rc;
}

/* The tags_type values (comma-separated names, empty ones skipped) and the
 * category into f, or INVALID_REQUEST. */
static int filter_of(const struct entry_query *eq, struct knowledge_filter *f, struct error *err)
{
    f->types = 0;
    for (size_t i = 0; i < eq->n_types; i++)
        if (knowledge_types_add_list(eq->types[i], &f->types, err))
            return -1;
    f->category = eq->category && *eq->category ? eq->category : NULL;
    if (f->category && !category_valid(f->category)) {
        error_set(err, E_INVALID_REQUEST, "invalid_category", "Invalid category: %s", f->category);
        error_str(err, "category", f->category);
        return -1;
    }
    return 0;
}

/* The entry view's filter for an entry found only by meaning. */
static int entry_accept(const struct knowledge *k, void *ctx)
{
    const struct knowledge_filter *f = ctx;
    return (!f->types || (k->types & f->types)) &&
           (!f->category || strcmp(k->category, f->category) == 0);
}

/* The checks of svc_search_entries before any search, in their order. */
static int entry_query_check(const struct svc_ctx *c, const struct entry_query *eq,
                             struct knowledge_filter *f, struct error *err)
{
    const char *trace_id = eq->trace_id;
    if (trace_id && *trace_id && !id_text_valid(trace_id, 128)) {
        error_set(err, E_INVALID_REQUEST, NULL,
                  "Invalid trace_id: 1 to 128 of A-Z a-z 0-9 . _ : -, not . or ..");
        return -1;
    }
    if (eq->task && utf8_length(eq->task, strlen(eq->task)) > 4000) {
        error_set(err, E_LIMIT_EXCEEDED, NULL, "'task' exceeds 4000 characters");
        return -1;
    }
    if (eq->goal_id && utf8_length(eq->goal_id, strlen(eq->goal_id)) > 256) {
        error_set(err, E_LIMIT_EXCEEDED, NULL, "'goal_id' exceeds 256 characters");
        return -1;
    }
    if (eq->include_pending && !(trace_id && *trace_id)) {
        error_set(err, E_INVALID_REQUEST, "include_pending_needs_trace",
                  "'include_pending' needs a trace_id: pending knowledge is served to a trace "
                  "that evaluates it");
        error_str(err, "field", "include_pending");
        return -1;
    }
    if (trace_id && *trace_id && c->role < ROLE_AGENT) {
        error_set(err, E_FORBIDDEN, NULL, "Logging an injection (trace_id) needs the agent role");
        return -1;
    }
    if (eq->q && utf8_length(eq->q, strlen(eq->q)) > 2000) {
        error_set(err, E_LIMIT_EXCEEDED, NULL, "'q' exceeds 2000 characters");
        return -1;
    }
    return filter_of(eq, f, err);
}

/* Age the chosen candidates' evidence (when the space's half-life is on):
 * their aged counts and the quality stage 2 ranks by. A store status. */
static int age_chosen(const struct svc_ctx *c, struct stage1 *s1, const size_t *chosen,
                      size_t n_chosen)
{
    const struct knowledge **ks;
    struct evidence_aged *aged;
    int rc;
    if (s1->half_life <= 0 || n_chosen == 0)
        return STORE_OK;
    ks = xcalloc(n_chosen, sizeof *ks);
    aged = xcalloc(n_chosen, sizeof *aged);
    for (size_t i = 0; i < n_chosen; i++)
        ks[i] = &s1->r[chosen[i]].k;
    rc = evidence_age(c, s1->half_life, ks, n_chosen, aged);
    for (size_t i = 0; rc == STORE_OK && i < n_chosen; i++) {
        struct ranked *r = &s1->r[chosen[i]];
        r->aged = aged[i];
        r->exempt = aged[i].exempt;
        r->quality = ageing_quality(r->k.score, aged[i].helpful, aged[i].harmful);
    }
    free(ks);
    free(aged);
    return rc;
}

/* The most relevant chosen candidate is never pushed out of the top_k by
 * age alone: when it would be in the top_k with the counters as they are
 * (score >= min_score, counted quality >= 0, fewer than top_k such
 * candidates before it in that order) but is not in stage2[0..top_k) (aged
 * order), it takes the top_k-th place and what stood there moves down.
 * stage2 has room for one more; *n2 may grow. */
static void keep_most_relevant(struct stage1 *s1, const size_t *chosen, size_t n_chosen,
                               long min_score, long top_k, struct ranked *stage2, size_t *n2)
{
    struct ranked *m = NULL;
    size_t before = 0, at;
    for (size_t i = 0; i < n_chosen; i++) {
        struct ranked *r = &s1->r[chosen[i]];
        if (!m || r->relevance > m->relevance)
            m = r;
    }
    if (!m || m->k.score < min_score || m->counted < 0)
        return;
    for (size_t i = 0; i < n_chosen; i++) {
        const struct ranked *r = &s1->r[chosen[i]];
        if (r != m && r->k.score >= min_score && r->counted >= 0 && ranked_order(r, m, 0) < 0)
            before++;
    }
    if (before >= (size_t)top_k)
        return;
    for (at = 0; at < *n2 && strcmp(stage2[at].k.id, m->k.id) != 0; at++)
        ;
    if (at < *n2 && at < (size_t)top_k)
        return; /* in the top_k already */
    m->kept = 1;
    if (at == *n2 && *n2 < (size_t)top_k) {
        stage2[(*n2)++] = *m; /* dropped by its aged quality, with room after the rest */
        return;
    }
    if (at == *n2)
        (*n2)++;
    memmove(&stage2[top_k], &stage2[top_k - 1], (at - (size_t)(top_k - 1)) * sizeof *stage2);
    stage2[top_k - 1] = *m;
}

/* Stage 2 over the chosen candidates: drop too low a score and more harm
 * than good, rank by quality, keep top_k (and the most relevant, when
 * ageing is on); into results, each with its passage (found for the kept
 * ones only). What it drops goes to left_out when that is not NULL. */
static void rerank(struct stage1 *s1, const size_t *chosen, size_t n_chosen, long min_score,
                   long top_k, struct json_object *results, struct json_object *left_out)
{
    struct ranked *stage2 = xcalloc(n_chosen + 1, sizeof *stage2);
    size_t n2 = 0;
    for (size_t i = 0; i < n_chosen; i++) {
        struct ranked *r = &s1->r[chosen[i]];
        if (r->k.score >= min_score && r->quality >= 0)
            stage2[n2++] = *r;
    }
    if (n2 > 1)
        qsort(stage2, n2, sizeof *stage2, quality_order);
    if (s1->half_life > 0)
        keep_most_relevant(s1, chosen, n_chosen, min_score, top_k, stage2, &n2);
    for (size_t i = 0; i < n2 && i < (size_t)top_k; i++)
        json_object_array_add(results, entry_item(s1, &stage2[i]));
    for (size_t i = 0; left_out && i < n_chosen; i++) {
        const struct ranked *r = &s1->r[chosen[i]];
        if (!r->kept && (r->k.score < min_score || r->quality < 0))
            explain_left_out_add(left_out, r->k.id, r->k.title,
                                 r->k.score < min_score ? "min_score" : "negative_quality");
    }
    free(stage2);
}

/* explain's left_out of the entry search: what stage 2 dropped (in it
 * already), then the weak hits (a second lexical read, with them), the
 * entries the results supersede and the expired ones. A store status. */
static int entry_left_out(const struct svc_ctx *c, const struct entry_query *eq,
                          const struct knowledge_filter *f, size_t depth,
                          struct json_object *results, struct json_object *left_out)
{
    struct search_opts weak_opts = search_opts_of(c->cfg, 1);
    struct ranked_id *lex = NULL;
    size_t nlex = 0;
    int rc = STORE_OK;
    if (!eq->include_weak)
        rc = search_entries_ids(c->st, c->space, eq->q, f, depth, &weak_opts, &lex, &nlex);
    if (rc == STORE_OK)
        rc =
            explain_left_out_rest(c, eq->q, eq->include_weak ? NULL : lex, nlex, results, left_out);
    ranked_ids_free(lex, nlex);
    return rc;
}

int svc_search_entries(const struct svc_ctx *c, const struct entry_query *eq,
                       struct json_object **data, struct error *err)
{
    struct knowledge_filter f = {0};
    struct stage1 s1 = {0};
    const char *trace_id = eq->trace_id;
    int rc;

    *data = NULL;
    if (entry_query_check(c, eq, &f, err) || search_mode_of(c, eq->mode, &s1.mode, err))
        return -1;
    /* Stage 1: 2*top_k relevant candidates, from the top 50 when the LLM
     * router is configured, else the top 2*top_k: lexical, or fused with the
     * nearest vectors (looking at least 20 down each list). */
    size_t want = (size_t)(2 * eq->top_k);
    size_t pool = config_llm_configured(c->cfg) ? (want > 50 ? want : 50) : want;
    size_t depth = s1.mode == MODE_LEXICAL || pool >= 20 ? pool : 20, nlex = 0;
    struct ranked_id *lex = NULL;
    struct pending_hit *pending = NULL;
    size_t n_pending = 0;
    struct json_object *warnings = json_object_new_array();
    struct search_opts opts = search_opts_of(c->cfg, eq->include_weak);
    s1.opts = opts;
    s1.explain = eq->explain;
    rc = evidence_half_life(c, &s1.half_life);
    /* aged answers move with the clock: never served from the cache */
    if (eq->uncacheable)
        *eq->uncacheable = s1.half_life > 0;
    if (rc == STORE_OK)
        rc = search_entries_ids(c->st, c->space, eq->q, &f, depth, &opts, &lex, &nlex);
    search_query_init(&s1.q, eq->q);
    if (rc == STORE_OK)
        rc = hybrid_run(c, s1.mode, eq->q, lex, nlex, pool, entry_accept, &f, entry_hit, &s1,
                        warnings);
    ranked_ids_free(lex, nlex);
    if (rc == STORE_OK) {
        struct json_object *results = json_object_new_array();
        struct json_object *left_out = eq->explain ? json_object_new_array() : NULL;
        size_t *chosen = xcalloc(want + 1, sizeof *chosen), n_chosen;
        const char *routing;
        n_chosen = route_stage(c, eq->q, &s1, want, chosen, &routing);
        rc = age_chosen(c, &s1, chosen, n_chosen);
        rerank(&s1, chosen, n_chosen, eq->min_score, eq->top_k, results, left_out);
        free(chosen);
        if (rc == STORE_OK && left_out)
            rc = entry_left_out(c, eq, &f, depth, results, left_out);
        /* Both sides of a known contradiction: before the pending hits,
         * which are no entries yet. */
        rc = links_conflicts_annotate(c, results);
        /* A trace that opted in: the pending proposals the query matches
         * after the live results, at most top_k, marked pending. */
        if (rc == STORE_OK && eq->include_pending) {
            rc = promote_pending_hits(c, eq->q, entry_accept, &f, &opts, (size_t)eq->top_k,
                                      &pending, &n_pending);
            for (size_t i = 0; rc == STORE_OK && i < n_pending; i++)
                json_object_array_add(results, pending_item(&s1, &pending[i]));
        }
        *data = json_object_new_object();
        json_object_object_add(*data, "count",
                               json_object_new_int64((int64_t)json_object_array_length(results)));
        if (eq->include_pending)
            json_object_object_add(*data, "pending_count",
                                   json_object_new_int64((int64_t)n_pending));
        json_object_object_add(*data, "results", results);
        json_object_object_add(*data, "routing", json_object_new_string(routing));
        if (left_out)
            json_object_object_add(*data, "left_out", left_out);
        if (s1.mode != MODE_LEXICAL)
            json_object_object_add(*data, "mode",
                                   json_object_new_string(search_mode_name(s1.mode)));
        if (json_object_array_length(warnings))
            json_object_object_add(*data, "warnings", json_object_get(warnings));
        if (trace_id && *trace_id) {
            /* Goal focus: every returned entry is logged as injected. */
            if (rc == STORE_OK)
                rc = log_injections(c, trace_id, eq->goal_id, eq->sequence, eq->task, results,
                                    pending, n_pending);
            json_object_object_add(*data, "trace_id", json_object_new_string(trace_id));
            json_object_object_add(*data, "logged", json_object_new_boolean(rc == STORE_OK));
        }
        if (rc) {
            json_object_put(*data);
            *data = NULL;
            store_status_error(rc, "Trace", err);
        }
    } else {
        store_status_error(rc, "Knowledge", err);
    }
    promote_hits_free(pending, n_pending);
    for (size_t i = 0; i < s1.n; i++)
        ranked_release(&s1.r[i]);
    free(s1.r);
    search_query_release(&s1.q);
    json_object_put(warnings);
    return rc ? -1 : 0;
}
