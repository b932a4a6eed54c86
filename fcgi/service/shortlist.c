/* route: the LLM router of the entry view's search. */
#include "service/shortlist.h"
#include "base/buf.h"
#include "base/config.h"
#include "domain/evalparse.h"
#include "base/error.h"
#include "service/ctx.h"
#include "service/llmcall.h"
#include "llm/llm.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

#define ROUTE_TIMEOUT_MS 8000L

int shortlist_candidates(const struct svc_ctx *sc, const char *query,
                         const struct shortlist_candidate *c, size_t n, size_t want, size_t *chosen,
                         size_t *n_chosen)
{
    struct buf system, user;
    struct json_object *messages = json_object_new_array(), *handles = NULL;
    struct llm_reply r;
    struct llm_request lr;
    int rc = -1;

    *n_chosen = 0;
    buf_init(&system, 8192);
    buf_init(&user, 1 << 20);
    buf_addf(&system,
             "You route searches in a knowledge base for AI agents. Pick the candidates that "
             "are semantically relevant to the query, most relevant first, at most %zu. "
             "Answer with JSON only, no prose: {\"handles\": [<candidate numbers>]}. "
             "Answer {\"handles\": []} when none is relevant.",
             want);
    buf_addf(&user, "Query: %s\n\nCandidates:\n", query);
    for (size_t i = 0; i < n; i++) {
        const char *s = c[i].scenario ? c[i].scenario : "";
        buf_addf(&user, "[%zu] types: %s | tags: %s | scenario: %.*s\n", i + 1,
                 *c[i].types ? c[i].types : "-", *c[i].tags ? c[i].tags : "-",
                 (int)utf8_prefix(s, strlen(s), 100), s);
    }
    json_object_array_add(messages, llm_message("system", system.data));
    json_object_array_add(messages, llm_message("user", user.data));
    lr = svc_llm_request(sc, "route", messages);
    lr.model = sc->cfg->llm_router_model;
    /* At most 8 s, and never past the operator's KNOWHUB_LLM_TIMEOUT. */
    lr.timeout_ms =
        sc->cfg->llm_timeout_ms < ROUTE_TIMEOUT_MS ? sc->cfg->llm_timeout_ms : ROUTE_TIMEOUT_MS;
    lr.max_tokens = 200;
    llm_reply_init(&r);
    if (svc_llm_chat(sc, &lr, &r) == 0 &&
        reply_find_list(r.text.data, r.text.len, "handles", &handles) != EVAL_NONE) {
        size_t valid = 0, given = json_object_array_length(handles);
        for (size_t i = 0; i < given && *n_chosen < want; i++) {
            struct json_object *h = json_object_array_get_idx(handles, i);
            long v = 0;
            if (json_object_is_type(h, json_type_int))
                v = (long)json_object_get_int64(h);
            else if (json_object_is_type(h, json_type_string))
                parse_long(json_object_get_string(h), 1, (long)n, &v);
            if (v < 1 || (size_t)v > n)
                continue; /* a handle it made up */
            valid++;
            int dup = 0;
            for (size_t k = 0; k < *n_chosen; k++)
                dup |= chosen[k] == (size_t)(v - 1);
            if (!dup)
                chosen[(*n_chosen)++] = (size_t)(v - 1);
        }
        /* Only made-up handles: the answer is not to be trusted. */
        rc = given > 0 && valid == 0 ? -1 : 0;
    }
    json_object_put(handles);
    json_object_put(messages);
    llm_reply_release(&r);
    buf_release(&system);
    buf_release(&user);
    return rc;
}
