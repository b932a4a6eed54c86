/* explain: what `explain=true` adds to the two searches
 * (docs/conflicts.md#explaintrue): each result's relevance components, and
 * the answer's `left_out`, the entries the search did not return and why
 * (weak, superseded; expired once entries expire), at most
 * EXPLAIN_LEFT_OUT_MAX. Stage 2's own reasons (min_score,
 * negative_quality) and quality components are service/entries.c's. */
#ifndef KNOWHUB_EXPLAIN_H
#define KNOWHUB_EXPLAIN_H

#include <stddef.h>
#include <json-c/json.h>

#include "service/ctx.h"
#include "service/hybrid.h"
#include "service/search.h"

#define EXPLAIN_LEFT_OUT_MAX 50

/* {reference, bm25f, fused[, vector, hybrid]} of a hit: the reference
 * match score, the BM25F coverage in [0, 1) (absent under the reference
 * ranking), the lexical relevance they fuse into, and with vectors the
 * cosine and the fused score that ordered it. */
struct json_object *explain_relevance(const struct search_opts *o, enum search_mode mode,
                                      const struct fused_hit *h);

/* Append {id, title, why} to left_out unless it holds EXPLAIN_LEFT_OUT_MAX
 * or id already; 1 when appended. */
int explain_left_out_add(struct json_object *left_out, const char *id, const char *title,
                         const char *why);

/* The weak hits among lex[0..n) (a search with include_weak) that are not
 * in results, as why "weak" (their titles read from the store). A store
 * status. */
int explain_left_out_weak(const struct svc_ctx *c, const struct ranked_id *lex, size_t n,
                          struct json_object *results, struct json_object *left_out);

/* The entries each result supersedes (its supersedes links), as why
 * "superseded". A store status. */
int explain_left_out_superseded(const struct svc_ctx *c, struct json_object *results,
                                struct json_object *left_out);

/* The space's expired entries (service/timing.h) that hold a search term
 * of query in their title, scenario or content, as why "expired": the
 * first EXPLAIN_EXPIRED_SCAN expired ones are looked at (one read each). A
 * store status. */
#define EXPLAIN_EXPIRED_SCAN 200
int explain_left_out_expired(const struct svc_ctx *c, const char *query,
                             struct json_object *left_out);

/* The left_out of a search after its own reasons: the weak hits of lex
 * (a second read with weak hits, NULL when the search returned them
 * already), the entries results supersede, the expired ones. */
int explain_left_out_rest(const struct svc_ctx *c, const char *query, const struct ranked_id *lex,
                          size_t n, struct json_object *results, struct json_object *left_out);

#endif
