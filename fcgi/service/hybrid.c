/* hybrid: reciprocal-rank fusion of the lexical and vector candidates (hybrid.h). */
#include "service/hybrid.h"
#include "base/config.h"
#include "base/util.h"
#include "service/embed.h"
#include "service/vindex.h"
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

#define RRF_K 60.0

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
                  "Invalid mode '%.64s' (expected lexical, vector or hybrid)", text);
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
    unsigned found;
};

static int by_fused(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (x->fused != y->fused)
        return x->fused < y->fused ? 1 : -1;
    if (x->lexical != y->lexical)
        return x->lexical < y->lexical ? 1 : -1;
    return strcmp(x->id, y->id);
}

static void warn(struct json_object *warnings, const struct error *e)
{
    struct json_object *w = json_object_new_object();
    json_object_object_add(w, "code", json_object_new_string(e->code));
    json_object_object_add(w, "message", json_object_new_string(e->message.data));
    json_object_array_add(warnings, w);
}

/* The query's nearest k vectors, or none with a warning. */
static void nearest(const struct svc_ctx *c, const char *q, size_t k, struct vindex_hit **hits,
                    size_t *n, struct json_object *warnings)
{
    struct error err;
    float *qv;
    int dim, rc;
    *hits = NULL;
    *n = 0;
    if (!q || !q[strspn(q, " \t\r\n\f\v")])
        return; /* a blank query finds nothing, by meaning either */
    error_init(&err);
    if (embed_query(c, q, &qv, &dim, &err) == 0) {
        rc = vindex_search(c->st, c->space, c->cfg->embed_model, qv, dim, k, hits, n);
        if (rc != STORE_OK)
            store_status_error(rc, "Vectors", &err);
        free(qv);
    }
    if (err.code)
        warn(warnings, &err);
    error_release(&err);
}

int hybrid_run(const struct svc_ctx *c, enum search_mode mode, const char *q,
               const struct ranked_id *lex, size_t nlex, size_t n,
               int (*accept)(const struct knowledge *, void *), void *actx,
               void (*each)(const struct fused_hit *, void *), void *ctx,
               struct json_object *warnings)
{
    struct vindex_hit *vh = NULL;
    size_t nv = 0, nc = 0, emitted = 0;
    struct cand *cand;
    int rc = STORE_OK;

    if (mode != MODE_LEXICAL)
        nearest(c, q, nlex > n ? nlex : n, &vh, &nv, warnings);
    /* Vector mode whose vector side failed answers from the words. */
    if (mode == MODE_VECTOR && nv == 0 && json_object_array_length(warnings) > 0)
        mode = MODE_HYBRID;
    cand = xcalloc(nlex + nv + 1, sizeof *cand);
    if (mode != MODE_VECTOR)
        for (size_t i = 0; i < nlex; i++) {
            cand[nc].id = lex[i].id;
            cand[nc].lexical = lex[i].score;
            cand[nc].fused = 1.0 / (RRF_K + (double)(i + 1));
            cand[nc++].found = FOUND_LEXICAL;
        }
    for (size_t i = 0; i < nv; i++) {
        struct cand *x = NULL;
        for (size_t j = 0; j < nc && !x; j++) /* nc is at most a few hundred */
            if (strcmp(cand[j].id, vh[i].id) == 0)
                x = &cand[j];
        if (!x) {
            x = &cand[nc++];
            x->id = vh[i].id;
        }
        x->vector = vh[i].score;
        x->fused += 1.0 / (RRF_K + (double)(i + 1));
        x->found |= FOUND_VECTOR;
    }
    if (mode != MODE_LEXICAL && nc > 1)
        qsort(cand, nc, sizeof *cand, by_fused);
    for (size_t i = 0; rc == STORE_OK && i < nc && emitted < n; i++) {
        struct knowledge k;
        int got = store_knowledge_get(c->st, c->space, cand[i].id, 0, &k);
        if (got == STORE_OK && ((cand[i].found & FOUND_LEXICAL) || !accept || accept(&k, actx))) {
            struct fused_hit h = {&k, cand[i].lexical, cand[i].vector, cand[i].fused,
                                  cand[i].found};
            each(&h, ctx);
            emitted++;
        } else if (got != STORE_OK && got != STORE_NOT_FOUND) {
            rc = got;
        }
        knowledge_release(&k);
    }
    free(cand);
    vindex_hits_free(vh, nv);
    return rc;
}
