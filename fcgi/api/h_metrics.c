/* h_metrics: GET /metrics, the Prometheus text exposition of every thread's
 * counters. They cover every space, so they are the operator's: open from
 * loopback through knowhub's own nginx (REMOTE_ADDR loopback, no proxy
 * header, and the proxy key nginx adds: another process on the socket can
 * claim any REMOTE_ADDR, not the key), from anywhere else only with
 * KNOWHUB_METRICS_TOKEN; a space's token, even an admin's, is refused
 * (docs/operations.md). */
#include "service/auth.h"
#include "api/handlers.h"
#include "base/config.h"
#include "base/metrics.h"
#include "service/lindex.h"
#include "service/vindex.h"
#include "store/store.h"

#define METRICS_MAX_TEXT (4 * 1024 * 1024)

/* The in-memory indexes' figures (vectors, words), every space's, against their budgets. */
static void vector_gauges(struct metrics_gauges *g)
{
    struct vindex_figures f;
    vindex_figures(NULL, &f);
    g->index_vectors = f.vectors;
    g->index_bytes = f.bytes;
    g->index_budget = f.total_budget;
    g->index_space_cap = f.space_cap;
    g->index_spaces_over = f.over;
    g->index_evictions = f.evictions;
    lindex_usage(&g->search_spaces, &g->search_entries, &g->search_bytes);
    g->search_budget = lindex_budget();
}

void h_metrics(struct request *req, struct response *res)
{
    struct buf text;
    struct metrics_gauges gauges;
    int loopback = req->proxy_key_ok &&
                   metrics_loopback_request(req->remote_addr, req->forwarded_for, req->forwarded);
    if (!loopback && !auth_bearer_is(req->authorization, req->cfg->metrics_token)) {
        int rc = auth_check(req->store, req->authorization, &req->who);
        if (rc == AUTH_UNAVAILABLE) {
            reply_error(res, 503, E_SERVICE_UNAVAILABLE, "The database is busy; try again");
            return;
        }
        if (rc == AUTH_OK) {
            reply_error(res, 403, E_FORBIDDEN,
                        "Metrics cover every space: they need the operator's "
                        "KNOWHUB_METRICS_TOKEN, not a space's token");
            return;
        }
        buf_adds(&res->headers, "WWW-Authenticate: Bearer realm=\"knowhub\"\r\n");
        reply_error(res, 401, E_UNAUTHORIZED,
                    "Metrics are open to loopback through knowhub's nginx; elsewhere "
                    "KNOWHUB_METRICS_TOKEN is required");
        return;
    }
    buf_init(&text, METRICS_MAX_TEXT);
    /* The store's gauges at this moment, read on this thread's connection. */
    metrics_gauges_init(&gauges, store_sqlite_version());
    gauges.node = req->cfg->node;
    gauges.store = store_backend(req->store);
    store_ignore(
        store_space_counts(req->store, metrics_gauges_space, &gauges));      /* unread: no rows */
    store_ignore(store_job_counts(req->store, metrics_gauges_job, &gauges)); /* unread: no rows */
    store_ignore(store_proposal_totals(req->store, &gauges.review_pending,
                                       &gauges.review_quarantined)); /* unread: 0 */
    vector_gauges(&gauges);
    if (!req->metrics || metrics_render(req->metrics, &gauges, &text)) {
        reply_error(res, 500, E_INTERNAL, "The metrics could not be rendered");
    } else {
        buf_reset(&res->body);
        buf_add(&res->body, text.data, text.len);
        res->content_type = "text/plain; version=0.0.4; charset=utf-8";
        res->status = 200;
        res->done = 1;
    }
    metrics_gauges_release(&gauges);
    buf_release(&text);
}
