/* search: finding knowledge (docs/search.md). Candidates come from the
 * full-text indexes (tokenize_terms on both sides), never from a scan; each
 * is scored exactly by its relevance:
 *   relevance = 0.5 x reference match score (domain/score.h) + 100 x BM25F coverage (domain/bm25.h)
 *   - file view: always-apply rules skipped; ties by updated time (newest
 *     first), then category and path;
 *   - entry view stage 1 uses the same relevance.
 * A hit below SEARCH_WEAK_FLOOR is weak: left out unless asked for. */
#ifndef KNOWHUB_SEARCH_H
#define KNOWHUB_SEARCH_H

#include <stddef.h>
#include <json-c/json.h>

#include "base/buf.h"
#include "domain/knowledge.h"
#include "domain/score.h"

struct store;
struct knowledge_filter;

struct search_hit {
    const struct knowledge *k; /* the whole entry */
    double score;              /* its relevance, what orders the hits */
    double match;              /* its reference match score (domain/score.h) */
    int weak;                  /* below SEARCH_WEAK_FLOOR */
};

/* How hits are ranked (KNOWHUB_RANKING, config.h): the fused relevance
 * (default), the reference score alone, or BM25F alone (100 x coverage). */
enum search_ranking { RANKING_FUSED, RANKING_REFERENCE, RANKING_BM25F };

/* The relevance under which a hit is weak: nothing the space holds matches
 * the query well (calibrated on unanswerable questions, docs/search.md). The
 * reference ranking has no floor. */
#define SEARCH_WEAK_FLOOR 10.0

/* The reference score's share of the fused relevance (docs/search.md:
 * measured on the long-text and the short-document benchmarks). */
#define SEARCH_REF_WEIGHT 0.5

/* How a search runs; NULL: the defaults (fused, weak hits left out). */
struct search_opts {
    enum search_ranking ranking;
    int include_weak; /* 1: weak hits too, flagged */
};
struct config;
/* The options of a search on this server (cfg: KNOWHUB_RANKING, may be NULL). */
struct search_opts search_opts_of(const struct config *cfg, int include_weak);

#define SEARCH_RULES 1u
#define SEARCH_EXPERIENCES 2u

/* File-view search: categories is a bitmask of SEARCH_* (0 = both); at most
 * max_results hits, best first, passed to each(hit, ctx). A blank query finds
 * nothing. Returns a store status. */
int search_files(struct store *st, const char *space, const char *query, unsigned categories,
                 size_t max_results, struct json_object *table_names,
                 const struct search_opts *opts, void (*each)(const struct search_hit *, void *),
                 void *ctx);

/* An entry id with its match score, for a caller that loads the entries
 * itself (the fusion with vector hits, service/hybrid.c). */
struct ranked_id {
    char *id;     /* owned */
    double score; /* relevance */
    double match; /* reference match score */
    int weak;
};
void ranked_ids_free(struct ranked_id *r, size_t n);

/* search_files as ids and scores, best first, into *out (caller frees). */
int search_files_ids(struct store *st, const char *space, const char *query, unsigned categories,
                     size_t max_results, struct json_object *table_names,
                     const struct search_opts *opts, struct ranked_id **out, size_t *n);

/* Entry-view stage 1 (lexical): the n most relevant active entries matching
 * the filter's types and category, best first. */
int search_entries(struct store *st, const char *space, const char *query,
                   const struct knowledge_filter *f, size_t n, const struct search_opts *opts,
                   void (*each)(const struct search_hit *, void *), void *ctx);
/* search_entries as ids and scores into *out
 * (caller frees). */
int search_entries_ids(struct store *st, const char *space, const char *query,
                       const struct knowledge_filter *f, size_t n, const struct search_opts *opts,
                       struct ranked_id **out, size_t *nout);

/* The entry-view relevance of entries the index does not hold (pending
 * proposals, service/promote.c), scored as an indexed one would be with
 * the space's statistics: out[i] (n of them, caller's) the score of ks[i],
 * its id (owned, free with free) NULL when it matches nothing (or only
 * weakly, unless opts ask for weak hits). ks[i].id must be distinct. */
int search_score_entries(struct store *st, const char *space, const char *query,
                         const struct knowledge *ks, size_t n, const struct search_opts *opts,
                         struct ranked_id *out);

/* The passage of text where q's terms stand densest (domain/passage.h):
 * {text, offset, highlights: [[start, length], ...]}, offsets in characters
 * (offset: in text; highlights: in the passage). */
struct json_object *search_passage(const struct search_query *q, const char *text);

#endif
