/* promote (service): pending proposals served to the traces that opt in,
 * and decided by the verdicts those traces give (promote.h). */
#include "service/promote.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/util.h"
#include "service/ctx.h"
#include "service/review.h"
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

int promote_is_proposal(const char *id)
{
    return id && strncmp(id, "prop-", 5) == 0;
}

/* ---- serving ---- */

struct docs {
    const struct svc_ctx *c;
    struct pending_hit *h;
    size_t n;
    int (*accept)(const struct knowledge *, void *);
    void *actx;
};

static void take_doc(const struct proposal *p, void *arg)
{
    struct docs *d = arg;
    struct pending_hit *h = &d->h[d->n];
    knowledge_init(&h->k);
    review_entry_of(d->c, p->category, p->path, p->document, &h->k);
    if (!h->k.path)
        h->k.path = xstrdup(""); /* a create's path is named at approval */
    free(h->k.id);
    h->k.id = xstrdup(p->id);
    h->knowledge_id = p->knowledge_id ? xstrdup(p->knowledge_id) : NULL;
    if (d->accept && !d->accept(&h->k, d->actx)) {
        knowledge_release(&h->k);
        free(h->knowledge_id);
        return;
    }
    d->n++;
}

static int by_score(const void *a, const void *b)
{
    const struct pending_hit *x = a, *y = b;
    if (x->r.score != y->r.score)
        return x->r.score < y->r.score ? 1 : -1;
    return strcmp(x->k.id, y->k.id);
}

void promote_hits_free(struct pending_hit *h, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        knowledge_release(&h[i].k);
        free(h[i].knowledge_id);
        free(h[i].r.id);
    }
    free(h);
}

int promote_pending_hits(const struct svc_ctx *c, const char *query,
                         int (*accept)(const struct knowledge *, void *), void *actx,
                         const struct search_opts *opts, size_t max, struct pending_hit **out,
                         size_t *n)
{
    struct docs d = {c, xcalloc(PROMOTE_SCAN_MAX + 1, sizeof *d.h), 0, accept, actx};
    struct knowledge *ks;
    struct ranked_id *r;
    size_t kept = 0;
    int rc;
    *out = NULL;
    *n = 0;
    rc = store_proposal_pending_docs(c->st, c->space, PROMOTE_SCAN_MAX, take_doc, &d);
    if (rc || d.n == 0 || max == 0) {
        promote_hits_free(d.h, d.n);
        return rc;
    }
    ks = xcalloc(d.n, sizeof *ks);
    r = xcalloc(d.n, sizeof *r);
    for (size_t i = 0; i < d.n; i++)
        ks[i] = d.h[i].k; /* borrowed for the scoring */
    rc = search_score_entries(c->st, c->space, query, ks, d.n, opts, r);
    /* the matched ones first, best first; the rest released */
    for (size_t i = 0; i < d.n; i++) {
        if (rc == STORE_OK && r[i].id) {
            d.h[i].r = r[i];
            d.h[kept++] = d.h[i];
        } else {
            free(r[i].id);
            knowledge_release(&d.h[i].k);
            free(d.h[i].knowledge_id);
        }
    }
    free(ks);
    free(r);
    if (rc) {
        promote_hits_free(d.h, kept);
        return rc;
    }
    qsort(d.h, kept, sizeof *d.h, by_score);
    for (size_t i = max; i < kept; i++) {
        knowledge_release(&d.h[i].k);
        free(d.h[i].knowledge_id);
        free(d.h[i].r.id);
    }
    *out = d.h;
    *n = kept < max ? kept : max;
    return STORE_OK;
}

int promote_log(const struct svc_ctx *c, const char *trace_id, const char *goal_id, long sequence,
                const struct pending_hit *h)
{
    const char *content = h->k.content ? h->k.content : "";
    size_t cut = utf8_prefix(content, strlen(content), 500);
    char *head = xstrndup(content, cut);
    long log_id;
    int rc = store_log_add_proposal(c->st, c->space, trace_id, h->k.id, goal_id, sequence,
                                    h->k.scenario ? h->k.scenario : "", head, &log_id);
    free(head);
    return rc;
}

/* ---- deciding ---- */

struct tally {
    const char *trace_id, *status; /* the verdict just given (may be NULL) */
    long mine;                     /* verdicts of that status from that trace */
    struct buf helpful;            /* the distinct helpful traces, "\n"-separated */
    long n_helpful;
    char *harmful_trace, *harmful_reason; /* the first harmful verdict */
    long n_harmful;
};

/* Whether trace is among the "\n"-separated names of list. */
static int listed(const struct buf *list, const char *trace)
{
    size_t n = strlen(trace);
    for (const char *p = list->len ? list->data : ""; *p;) {
        const char *e = strchr(p, '\n');
        if ((size_t)(e - p) == n && memcmp(p, trace, n) == 0)
            return 1;
        p = e + 1;
    }
    return 0;
}

static void count_verdict(const char *trace, const char *status, const char *reason, void *arg)
{
    struct tally *t = arg;
    if (t->trace_id && strcmp(trace, t->trace_id) == 0 && strcmp(status, t->status) == 0)
        t->mine++;
    if (strcmp(status, "helpful") == 0 && !listed(&t->helpful, trace)) {
        buf_adds(&t->helpful, trace);
        buf_addch(&t->helpful, '\n');
        t->n_helpful++;
    } else if (strcmp(status, "harmful") == 0 && t->n_harmful++ == 0) {
        t->harmful_trace = xstrdup(trace);
        t->harmful_reason = xstrdup(reason);
    }
}

static int tally_of(const struct svc_ctx *c, const char *id, struct tally *t)
{
    buf_init(&t->helpful, 1 << 20);
    return store_proposal_verdicts(c->st, c->space, id, PROMOTE_VERDICTS_MAX, count_verdict, t);
}

static void tally_release(struct tally *t)
{
    buf_release(&t->helpful);
    free(t->harmful_trace);
    free(t->harmful_reason);
}

int promote_counted(const struct svc_ctx *c, const char *trace_id, const char *id,
                    const char *status, int *counted)
{
    struct tally t = {.trace_id = trace_id, .status = status};
    int rc = tally_of(c, id, &t);
    *counted = rc == STORE_OK && (strcmp(status, "helpful") == 0 || strcmp(status, "harmful") == 0)
                   ? t.mine == 1
                   : 0;
    tally_release(&t);
    return rc;
}

/* The reason of an approval: the traces' names, a few of them. */
static void approval_reason(const struct tally *t, long after, struct buf *out)
{
    long shown = 0;
    buf_addf(out, "Promoted on evidence: %ld helpful verdicts from distinct traces (",
             t->n_helpful);
    for (const char *p = t->helpful.data; *p && shown < 5; shown++) {
        const char *e = strchr(p, '\n');
        buf_addf(out, "%s%.*s", shown ? ", " : "", (int)(e - p), p);
        p = e + 1;
    }
    if (t->n_helpful > shown)
        buf_addf(out, ", and %ld more", t->n_helpful - shown);
    buf_addf(out, "), none harmful; the space promotes after %ld", after);
}

int promote_decide(const struct svc_ctx *c, const char *id, struct json_object **outcome,
                   struct error *err)
{
    struct tally t = {0};
    struct proposal p;
    struct json_object *decided = NULL;
    struct buf reason;
    long after = REVIEW_PROMOTE_DEFAULT;
    int rc, approve = -1;
    *outcome = NULL;
    memset(&p, 0, sizeof p);
    buf_init(&reason, 4096);
    if ((rc = store_review_promote_get(c->st, c->space, &after)) || (rc = tally_of(c, id, &t)) ||
        (rc = store_proposal_get(c->st, c->space, id, &p))) {
        store_status_error(rc, "Proposal", err);
        store_proposal_release(&p);
        tally_release(&t);
        buf_release(&reason);
        return -1;
    }
    if (strcmp(p.state, "pending") != 0) {
        /* decided already: a late verdict is in the log only */
    } else if (t.n_harmful) {
        approve = 0;
        buf_addf(&reason, "Rejected on evidence: trace %s found it harmful", t.harmful_trace);
        if (*t.harmful_reason)
            buf_addf(&reason, " (%s)", t.harmful_reason);
    } else if (after > 0 && t.n_helpful >= after) {
        approve = 1;
        approval_reason(&t, after, &reason);
    }
    *outcome = json_object_new_object();
    if (approve >= 0) {
        /* the reason fits a decision's (2000 characters) */
        reason.len = utf8_prefix(reason.data, reason.len, 2000);
        reason.data[reason.len] = '\0';
        struct error why;
        error_init(&why);
        if (review_decide_on_evidence(c, id, approve, reason.data, &decided, &why) == 0) {
            json_object_object_add(*outcome, "decided", json_object_new_boolean(1));
            json_object_object_add(*outcome, "reason", json_object_new_string(reason.data));
            free(p.state);
            p.state = xstrdup(approve ? "approved" : "rejected");
        } else {
            /* decided by a reviewer first, a rule, a moved base: it waits */
            json_object_object_add(*outcome, "decided", json_object_new_boolean(0));
            json_object_object_add(
                *outcome, "error",
                json_object_new_string(why.message.data ? why.message.data : ""));
            store_proposal_release(&p); /* its state now (a reviewer may have won) */
            if (store_proposal_get(c->st, c->space, id, &p) != STORE_OK)
                p.state = xstrdup("pending");
        }
        error_release(&why);
    } else {
        json_object_object_add(*outcome, "decided", json_object_new_boolean(0));
    }
    json_object_put(decided);
    json_object_object_add(*outcome, "state", json_object_new_string(p.state));
    store_proposal_release(&p);
    json_object_object_add(*outcome, "helpful_traces", json_object_new_int64(t.n_helpful));
    json_object_object_add(*outcome, "harmful_traces", json_object_new_int64(t.n_harmful));
    json_object_object_add(*outcome, "promote_after", json_object_new_int64(after));
    tally_release(&t);
    buf_release(&reason);
    return 0;
}
