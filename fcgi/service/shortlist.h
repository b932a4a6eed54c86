/* shortlist: stage 1 of the entry view's search by the LLM router:
 * the router model sees the lexical top candidates as small integer handles
 * with their types, tags and first 100 characters of scenario — never ids —
 * and answers the handles it finds relevant; every answer is validated. */
#ifndef KNOWHUB_SHORTLIST_H
#define KNOWHUB_SHORTLIST_H

#include <stddef.h>

struct svc_ctx;

struct shortlist_candidate {
    const char *types;    /* "tool, plan" */
    const char *tags;     /* "pandas, csv" */
    const char *scenario; /* the full scenario; the first 100 characters are shown */
};

/* Ask the router to pick at most `want` of the n candidates for query. On
 * success chosen[0..*n_chosen) holds distinct candidate indexes (0-based), most
 * relevant first, and 0 is returned; -1 when the LLM failed, timed out or
 * answered nothing usable (the caller falls back to the lexical order). */
int shortlist_candidates(const struct svc_ctx *sc, const char *query,
                         const struct shortlist_candidate *c, size_t n, size_t want, size_t *chosen,
                         size_t *n_chosen);

#endif
