/* hybrid: search by words and by meaning together (docs/search.md "By
 * meaning"). The candidates are the lexical top (service/search.c) and the
 * nearest vectors (service/vindex.c); each gets the fused score
 *   alpha x min(1, lexical score / 100) + (1 - alpha) x cosine similarity
 * (100 = every query word in the title; a missing side counts 0; alpha is
 * KNOWHUB_HYBRID_ALPHA, 0.3), the similarity exact for every candidate,
 * lexical ones included; then the entries are loaded in fused order. A
 * failing embeddings server never fails the search: it answers from the
 * words alone, with a warning. */
#ifndef KNOWHUB_HYBRID_H
#define KNOWHUB_HYBRID_H

#include <stddef.h>
#include <json-c/json.h>

#include "base/error.h"
#include "domain/knowledge.h"
#include "service/ctx.h"
#include "service/search.h"

enum search_mode { MODE_LEXICAL, MODE_VECTOR, MODE_HYBRID };

/* The mode a request asks for (NULL or "": hybrid when embeddings are
 * configured, else lexical), or -1 with INVALID_REQUEST. */
int search_mode_of(const struct svc_ctx *c, const char *text, enum search_mode *mode,
                   struct error *err);
const char *search_mode_name(enum search_mode mode);

#define FOUND_LEXICAL 1u
#define FOUND_VECTOR 2u

struct fused_hit {
    struct knowledge *k; /* the whole entry; each() may take it over (and knowledge_init it) */
    double lexical;      /* its lexical relevance (0 when the words did not find it) */
    double vector;       /* its cosine similarity (when found by meaning) */
    double fused;        /* the fused score that ordered it */
    unsigned found;      /* FOUND_* */
    int weak;            /* the words found it only weakly (service/search.h) */
    double match;        /* its reference match score (0 when not found by words) */
};

/* The entries of the lexical ranking lex[0..nlex) (already filtered) and, in
 * vector and hybrid modes, of the query's nearest vectors, fused, loaded in
 * fused order and passed to each until n were; an entry found only by
 * meaning is passed when accept(k, actx) says so (NULL: always). In
 * lexical mode the order is lex's. A failure of the vector side adds
 * {code, message} to warnings and answers from lex alone; so does a space
 * whose vectors are not held for memory (the warning's semantic:
 * "over_budget", or "no_room" for now), and a search while the space's
 * index loads adds {code, message, semantic: "loading"} (an answer with
 * warnings is not cached). Returns a store status. */
int hybrid_run(const struct svc_ctx *c, enum search_mode mode, const char *q,
               const struct ranked_id *lex, size_t nlex, size_t n,
               int (*accept)(const struct knowledge *, void *), void *actx,
               void (*each)(const struct fused_hit *, void *), void *ctx,
               struct json_object *warnings);

/* The JSON list of how a hit was found: ["lexical"], ["vector"] or both. */
struct json_object *hybrid_found_by(unsigned found);

#endif
