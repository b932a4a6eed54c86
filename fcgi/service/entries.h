/* entries: the two searches as operations. The file view's weighted search
 * (svc_search_files), and the entry view's two-stage search
 * (svc_search_entries): stage 1 picks 2*top_k relevant candidates (the
 * lexical top, or an LLM router's choice from the lexical top 50), stage 2
 * drops score < min_score and quality_score < 0, where quality_score =
 * score + helpful - 2*harmful, and keeps the best top_k. Each gives its
 * answer's data (a new object, the caller's) and 0, or -1 with err set. */
#ifndef KNOWHUB_ENTRIES_H
#define KNOWHUB_ENTRIES_H

#include <stddef.h>
#include <json-c/json.h>

#include "base/error.h"
#include "service/ctx.h"

/* body {query?, categories?, max_results? (1..50, default 10),
 * table_names?}: {results: [{category, title, tags, path, snippet, source,
 * score, id}]}. */
int svc_search_files(const struct svc_ctx *c, struct json_object *body, struct json_object **data,
                     struct error *err);

/* The entry search's parameters, as given (strings borrowed, NULL when
 * absent); the integers already checked against their ranges. */
struct entry_query {
    const char *q; /* at most 2000 characters */
    long top_k;    /* 1..50 */
    long min_score;
    long sequence;
    const char *trace_id;     /* non-empty: log the results as injected (agent role) */
    const char *goal_id;      /* at most 256 characters */
    const char *task;         /* at most 4000 characters: the trace's mission */
    const char *const *types; /* tags_type values, each comma-separated names */
    size_t n_types;
    const char *category; /* "" as NULL */
    const char *mode;     /* lexical, vector, hybrid; NULL: hybrid when embeddings are on */
    int include_weak;     /* 1: weak hits too, flagged (service/search.h) */
    int include_pending;  /* 1: pending proposals too, marked (needs trace_id; promote.h) */
    int explain;          /* 1: each result's explain and the answer's left_out (explain.h) */
    int *uncacheable;     /* when not NULL, set to 1 when the answer moves with the clock
                             (the space ages evidence, service/evidence.h) */
};

/* Checked in this order: trace_id, task, goal_id, include_pending without
 * a trace_id, the role for a trace_id, q, tags_type, category. Data:
 * {count, results, routing[, pending_count][, trace_id, logged]}. */
int svc_search_entries(const struct svc_ctx *c, const struct entry_query *eq,
                       struct json_object **data, struct error *err);

#endif
