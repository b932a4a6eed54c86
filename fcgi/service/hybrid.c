/* hybrid: convex fusion of the lexical and vector candidates' scores (hybrid.h). */
#include "service/hybrid.h"
#include "base/config.h"
#include "base/util.h"
#include "service/embed.h"
#include "service/timing.h"
#include "service/vindex.h"
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

/* A lexical match counts fully from this score up: every query word in the
 * title (domain/score.h); a weaker one (a word in the body) in proportion. */
#define LEXICAL_FULL 100.0

int search_mode_of(const struct svc_ctx *c, const char *text, enum search_mode *mode,
                   struct error *err)
{
    if (!text || !*text)
        *mode = config_embed_configured(c->cfg) ? MODE_HYBRID : MODE_LEXICAL;
    else if (strcmp(text, "lexical") == 0)
        *mode = MODE_LEXICAL;
    else if (strcmp(text, "vector") == 0)
        *mode = MODE_VECTOR;
    else if (strcmp(text, "hybrid") == 0)
        *mode = MODE_HYBRID;
    else {
        error_set(err, E_INVALID_REQUEST, NULL,
                  "Invalid mode '%.*s' (expected lexical, vector or hybrid)",
                  (int)utf8_prefix(text, strlen(text), 64), text);
        return -1;
    }
    return 0;
}

const char *search_mode_name(enum search_mode mode)
{
    return mode == MODE_VECTOR ? "vector" : mode == MODE_HYBRID ? "hybrid" : "lexical";
}

struct json_object *hybrid_found_by(unsigned found)
{
    struct json_object *a = json_object_new_array();
    if (found & FOUND_LEXICAL)
        json_object_array_add(a, json_object_new_string("lexical"));
    if (found & FOUND_VECTOR)
        json_object_array_add(a, json_object_new_string("vector"));
    return a;
}

struct cand {
    const char *id; /* borrowed from lex or the vector hits */
    double lexical, vector, fused;
    size_t rank; /* in the lexical list, then in the vector list (after every lexical one) */
    unsigned found;
    int weak;     /* the words found it weakly */
    double match; /* the reference match score */
};

static int by_fused(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (x->fused != y->fused)
        return x->fused < y->fused ? 1 : -1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* A warning {code, message} in the answer (which is then not cached),
 * with semantic: why the vector side was not used whole (NULL: it failed). */
static void warn(struct json_object *warnings, const struct error *e, const char *semantic)
{
    struct json_object *w = json_object_new_object();
    json_object_object_add(w, "code", json_object_new_string(e->code));
    json_object_object_add(w, "message", json_object_new_string(e->message.data));
    if (semantic)
        json_object_object_add(w, "semantic", json_object_new_string(semantic));
    json_object_array_add(warnings, w);
}

/* The warning's semantic for an index state (NULL when it was whole). */
static const char *state_semantic(enum vindex_state state)
{
    switch (state) {
    case VINDEX_READY:
        break;
    case VINDEX_LOADING:
        return "loading";
    case VINDEX_OVER_BUDGET:
        return "over_budget";
    case VINDEX_NO_ROOM:
        return "no_room";
    }
    return NULL;
}

/* Why the space's index was not searched whole, into err. */
static void index_partial(const struct svc_ctx *c, enum vindex_state state, struct error *err)
{
    struct vindex_figures f;
    vindex_figures(c->space, &f);
    if (state == VINDEX_OVER_BUDGET) {
        int own = f.space_cap && f.needed > f.space_cap;
        error_set(err, E_LIMIT_EXCEEDED, NULL,
                  "This space's vectors would take %zu bytes of memory, over the vector index's "
                  "cap of %zu bytes (%s): searched by words only",
                  f.needed, own ? f.space_cap : f.total_budget,
                  own ? "KNOWHUB_VECTOR_SPACE_BYTES, per space" : "KNOWHUB_VECTOR_BYTES, in all");
    } else if (state == VINDEX_NO_ROOM) {
        error_set(err, E_SERVICE_UNAVAILABLE, NULL,
                  "The vector index's memory (KNOWHUB_VECTOR_BYTES) is held by spaces being "
                  "searched right now: searched by words only; try again");
    } else {
        error_set(err, E_SERVICE_UNAVAILABLE, NULL,
                  "This space's vector index is loading: only the vectors loaded so far were "
                  "searched; try again");
    }
}

/* The query's nearest k vectors in the space's index and the similarity
 * of each lexical candidate, or err; *state says what the index held
 * (nothing over its cap or without room: then the query's vector is not
 * asked for). */
static void search_index(const struct svc_ctx *c, const char *q, size_t k,
                         const struct ranked_id *lex, size_t nlex, float *sims,
                         struct vindex_hit **hits, size_t *n, enum vindex_state *state,
                         struct error *err)
{
    struct vindex_space *v;
    float *qv;
    int dim, rc = vindex_open(c->st, c->space, c->cfg->embed_model, &v, state);
    if (rc != STORE_OK) {
        store_status_error(rc, "Vectors", err);
    } else if (*state == VINDEX_OVER_BUDGET || *state == VINDEX_NO_ROOM) {
        /* nothing held: the caller says why */
    } else if (embed_query(c, q, &qv, &dim, err) == 0) {
        const char **ids = xcalloc(nlex + 1, sizeof *ids);
        for (size_t i = 0; i < nlex; i++)
            ids[i] = lex[i].id;
        vindex_scan(v, qv, dim, k, hits, n, ids, nlex, sims);
        free(ids);
        free(qv);
    }
    vindex_close(v);
}

/* The query's nearest k vectors and the similarity of each lexical
 * candidate (sims[i] for lex[i]), or none with a warning (-1). Vectors
 * searched while the index loads come with a warning too (0). */
static int nearest(const struct svc_ctx *c, const char *q, size_t k, const struct ranked_id *lex,
                   size_t nlex, float *sims, struct vindex_hit **hits, size_t *n,
                   struct json_object *warnings)
{
    enum vindex_state state = VINDEX_READY;
    const char *semantic = NULL;
    struct error err;
    float *qv;
    int dim, rc;
    *hits = NULL;
    *n = 0;
    for (size_t i = 0; i < nlex; i++)
        sims[i] = VINDEX_NONE;
    if (!q || !q[strspn(q, " \t\r\n\f\v")])
        return 0; /* a blank query finds nothing, by meaning either */
    error_init(&err);
    if (config_embed_configured(c->cfg))
        search_index(c, q, k, lex, nlex, sims, hits, n, &state, &err);
    else if (embed_query(c, q, &qv, &dim, &err) == 0) /* LLM_NOT_CONFIGURED */
        free(qv);
    if (!err.code && state != VINDEX_READY) {
        index_partial(c, state, &err);
        semantic = state_semantic(state);
    }
    /* What is in while it loads is searched; nothing held is words only. */
    rc = err.code && !(semantic && state == VINDEX_LOADING) ? -1 : 0;
    if (err.code)
        warn(warnings, &err, semantic);
    error_release(&err);
    return rc;
}

/* The fused score: alpha x lexical + (1 - alpha) x similarity, the lexical
 * score read as min(1, score / 100) and a missing similarity as 0. */
static double fuse(double alpha, double lexical, double sim)
{
    double l = lexical < LEXICAL_FULL ? lexical / LEXICAL_FULL : 1.0;
    return alpha * l + (1.0 - alpha) * (sim > VINDEX_NONE ? sim : 0.0);
}

/* Candidates being loaded (hybrid_run): cand[i] is the i-th id read. */
struct load {
    const struct cand *cand;
    int (*accept)(const struct knowledge *, void *);
    void *actx;
    void (*each)(const struct fused_hit *, void *);
    void *ctx;
    size_t *emitted;
};

static int load_one(struct knowledge *k, size_t i, void *arg)
{
    const struct load *ld = arg;
    const struct cand *x = &ld->cand[i];
    if ((x->found & FOUND_LEXICAL) || !ld->accept || ld->accept(k, ld->actx)) {
        struct fused_hit h = {k,        x->lexical, x->vector,
                              x->fused, x->found,   x->weak && !(x->found & FOUND_VECTOR),
                              x->match};
        ld->each(&h, ld->ctx);
        (*ld->emitted)++;
    }
    return 0;
}

int hybrid_run(const struct svc_ctx *c, enum search_mode mode, const char *q,
               const struct ranked_id *lex, size_t nlex, size_t n,
               int (*accept)(const struct knowledge *, void *), void *actx,
               void (*each)(const struct fused_hit *, void *), void *ctx,
               struct json_object *warnings)
{
    struct vindex_hit *vh = NULL;
    size_t nv = 0, nc = 0, emitted = 0;
    float *sims = xcalloc(nlex + 1, sizeof *sims);
    double alpha = mode == MODE_VECTOR ? 0.0 : c->cfg->hybrid_alpha;
    struct cand *cand;
    struct timing_expired expired = {0};
    int rc = STORE_OK;

    /* With the vector side failed, the answer is the words' alone. */
    if (mode != MODE_LEXICAL &&
        nearest(c, q, nlex > n ? nlex : n, lex, nlex, sims, &vh, &nv, warnings))
        mode = MODE_LEXICAL;
    /* The vector side knows nothing of expiry: its expired hits are left out. */
    if (nv)
        rc = timing_expired_load(c->st, c->space, &expired);
    cand = xcalloc(nlex + nv + 1, sizeof *cand);
    if (mode != MODE_VECTOR)
        for (size_t i = 0; i < nlex; i++) {
            cand[nc].id = lex[i].id;
            cand[nc].lexical = lex[i].score;
            cand[nc].vector = sims[i] > VINDEX_NONE ? sims[i] : 0.0;
            /* Lexical (asked, or the vector side failed): the match score itself. */
            cand[nc].fused =
                mode == MODE_LEXICAL ? lex[i].score : fuse(alpha, lex[i].score, sims[i]);
            cand[nc].rank = i;
            cand[nc].weak = lex[i].weak;
            cand[nc].match = lex[i].match;
            cand[nc++].found = FOUND_LEXICAL;
        }
    for (size_t i = 0; i < nv; i++) {
        struct cand *x = NULL;
        for (size_t j = 0; j < nc && !x; j++) /* nc is at most a few hundred */
            if (strcmp(cand[j].id, vh[i].id) == 0)
                x = &cand[j];
        if (!x &&
            (vh[i].score < c->cfg->embed_min_similarity || timing_expired_has(&expired, vh[i].id)))
            continue; /* found by meaning alone, and not near enough, or expired */
        if (!x) {
            x = &cand[nc++];
            x->id = vh[i].id;
            x->fused = fuse(alpha, 0.0, vh[i].score);
            x->rank = nlex + i;
        }
        x->vector = vh[i].score;
        x->found |= FOUND_VECTOR;
    }
    if (mode != MODE_LEXICAL && nc > 1)
        qsort(cand, nc, sizeof *cand, by_fused);
    /* The hits, the next candidates still wanted read in one statement (in
     * lexical mode the first n: all it takes, unless an entry went meanwhile) */
    for (size_t next = 0; rc == STORE_OK && next < nc && emitted < n;) {
        struct load ld = {cand + next, accept, actx, each, ctx, &emitted};
        size_t take = n - emitted < nc - next ? n - emitted : nc - next;
        const char **ids = xcalloc(take, sizeof *ids);
        for (size_t i = 0; i < take; i++)
            ids[i] = cand[next + i].id;
        rc = store_knowledge_get_many(c->st, c->space, ids, take, load_one, &ld);
        free(ids);
        next += take;
    }
    free(cand);
    free(sims);
    timing_expired_release(&expired);
    vindex_hits_free(vh, nv);
    return rc;
}
