/* embed: entry and query vectors, the queue's worker and the breaker (embed.h). */
#include "service/embed.h"
#include "base/buf.h"
#include "base/config.h"
#include "base/jfield.h"
#include "base/util.h"
#include "domain/vector.h"
#include "llm/llm.h"
#include "service/conflicts.h"
#include "service/llmcall.h"
#include "service/vindex.h"
#include "store/store.h"

#include <pthread.h>
#include <sodium.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BACKOFF_MIN_MS 2000
#define BACKOFF_MAX_MS 60000
#define QUERY_TIMEOUT_MS 5000L /* a search waits at most this for its query's vector */
#define QCACHE_SLOTS 256
/* The embedding turn's lease is one embeddings call (KNOWHUB_EMBED_TIMEOUT)
 * and this: the ledger row written after the call, which may wait the
 * database's lock timeout (10 s), and the round trips around it. */
#define TURN_MARGIN_MS 15000L
/* A backfill waits at most this many leases for its turn while no entry of
 * its space is embedded (by it or by the node holding the turn). */
#define TURN_WAIT_LEASES 2
#define TURN_POLL_MS 100
/* A node's name (config.c: 1-64 characters) and its NUL. */
#define HOLDER_SIZE 72

/* What every thread of the process shares about the embeddings server. */
static struct {
    pthread_mutex_t mu;
    int batch;          /* texts per call: the configured size, halved on "too large" */
    int dim;            /* the model's dimension, from the first reply (0 until then) */
    long long retry_at; /* monotonic ms: no call before (the breaker) */
    long backoff_ms;
    char code[48], message[320], at[20]; /* the last failure ("" none) */
} server = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* The queue's rotation: the space the last batch not of a backfill was of.
 * The next is of the next space after it with entries queued, in name order,
 * wrapping (store_embed_next_space), so a space's new entry waits about one
 * batch per space with entries queued, not for another's whole backlog. Per
 * process: each node turns its own (the job thread is its one user). */
static struct {
    pthread_mutex_t mu;
    char *space; /* NULL until the first batch */
} rotation = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* ---- the breaker ---- */

static void server_failed(const struct error *err)
{
    pthread_mutex_lock(&server.mu);
    if (!server.code[0]) /* the operator's log: the first failure, not every retry */
        fprintf(stderr,
                "knowhub: the embeddings server failed (%s: %.*s); searches answer by words "
                "until it is back\n",
                err->code ? err->code : E_INTERNAL,
                (int)utf8_fit(err->message.data, err->message.len, 200), err->message.data);
    server.backoff_ms = server.backoff_ms ? 2 * server.backoff_ms : BACKOFF_MIN_MS;
    if (server.backoff_ms > BACKOFF_MAX_MS)
        server.backoff_ms = BACKOFF_MAX_MS;
    server.retry_at = monotonic_ms() + server.backoff_ms;
    snprintf(server.code, sizeof server.code, "%s", err->code ? err->code : E_INTERNAL);
    utf8_copy(server.message, sizeof server.message, err->message.data);
    time_utc_text(server.at);
    pthread_mutex_unlock(&server.mu);
}

static void server_ok(int dim)
{
    pthread_mutex_lock(&server.mu);
    if (server.code[0])
        fputs("knowhub: the embeddings server is back\n", stderr);
    server.backoff_ms = 0;
    server.retry_at = 0;
    server.code[0] = 0;
    if (!server.dim)
        server.dim = dim;
    pthread_mutex_unlock(&server.mu);
}

/* ms to wait before the next call (0: now). */
static long server_wait(void)
{
    long long left;
    pthread_mutex_lock(&server.mu);
    left = server.retry_at - monotonic_ms();
    pthread_mutex_unlock(&server.mu);
    return left > 0 ? (long)left : 0;
}

static int server_dim(void)
{
    int d;
    pthread_mutex_lock(&server.mu);
    d = server.dim;
    pthread_mutex_unlock(&server.mu);
    return d;
}

static int server_batch(const struct config *cfg)
{
    int b;
    pthread_mutex_lock(&server.mu);
    if (!server.batch)
        server.batch = cfg->embed_batch;
    b = server.batch;
    pthread_mutex_unlock(&server.mu);
    return b;
}

/* The server refused a batch as too large: ask for half as many next time. */
static void server_halve_batch(int tried)
{
    pthread_mutex_lock(&server.mu);
    server.batch = tried / 2 > 0 ? tried / 2 : 1;
    pthread_mutex_unlock(&server.mu);
}

/* ---- entries ---- */

/* The text an entry is embedded from. */
static void entry_text(struct buf *b, const char *scenario, const char *title, const char *head)
{
    buf_reset(b);
    buf_adds(b, scenario);
    buf_addch(b, '\n');
    buf_adds(b, title);
    buf_addch(b, '\n');
    buf_adds(b, head);
}

/* A 16-byte BLAKE2b digest of model and text: what a vector stands for, and
 * a query vector's cache key. */
static void digest_of(const char *model, const char *text, unsigned char out[16])
{
    crypto_generichash_state s;
    crypto_generichash_init(&s, NULL, 0, 16);
    crypto_generichash_update(&s, (const unsigned char *)model, strlen(model) + 1);
    crypto_generichash_update(&s, (const unsigned char *)text, strlen(text));
    crypto_generichash_final(&s, out, 16);
}

/* The same, in hex (stored with a vector). */
static void text_digest(const char *model, const char *text, char out[33])
{
    unsigned char h[16];
    digest_of(model, text, h);
    sodium_bin2hex(out, 33, h, sizeof h);
}

struct todo {
    long long seq;
    long version;
    char *text, *id, digest[33];
    int same;  /* the stored vector already stands for this text */
    int fresh; /* a text not embedded before (not a model change): checked by meaning */
    int gone;  /* no longer an active entry */
};

/* One batch: the queued rows of one space (the first active row's; the
 * others wait for their own call and ledger row), and those gone. */
struct taken {
    struct todo *t;
    size_t n;
    const char *model;
    char *space; /* NULL until an active row is met */
    struct buf text;
};

static void take_row(const struct embed_todo *r, void *ctx)
{
    struct taken *tk = ctx;
    struct todo *t;
    int gone = !r->id || strcmp(r->status, "active") != 0;
    if (!gone && tk->space && strcmp(tk->space, r->space) != 0)
        return; /* another space: next time */
    tk->t = xrealloc(tk->t, (tk->n + 1) * sizeof *tk->t);
    t = &tk->t[tk->n++];
    memset(t, 0, sizeof *t);
    t->seq = r->seq;
    t->version = r->version;
    t->gone = gone;
    if (gone)
        return;
    if (!tk->space)
        tk->space = xstrdup(r->space);
    entry_text(&tk->text, r->scenario, r->title, r->content_head);
    t->text = xstrdup(tk->text.data);
    t->id = xstrdup(r->id);
    t->fresh = !r->model || r->vector_version != r->version;
    text_digest(tk->model, t->text, t->digest);
    t->same = r->model && strcmp(r->model, tk->model) == 0 && strcmp(r->digest, t->digest) == 0;
}

static void taken_release(struct taken *tk)
{
    for (size_t i = 0; i < tk->n; i++) {
        free(tk->t[i].text);
        free(tk->t[i].id);
    }
    free(tk->t);
    free(tk->space);
    buf_release(&tk->text);
}

/* The rotation's last space (the caller frees; NULL: none yet). */
static char *rotation_last(void)
{
    char *s;
    pthread_mutex_lock(&rotation.mu);
    s = rotation.space ? xstrdup(rotation.space) : NULL;
    pthread_mutex_unlock(&rotation.mu);
    return s;
}

static void rotation_served(const char *space)
{
    char *s = xstrdup(space);
    pthread_mutex_lock(&rotation.mu);
    free(rotation.space);
    rotation.space = s;
    pthread_mutex_unlock(&rotation.mu);
}

/* The space the rotation serves next (NULL: none queued; the caller frees). */
static int rotation_next(struct store *st, char **space)
{
    char *last = rotation_last();
    int rc = store_embed_next_space(st, last, space);
    free(last);
    return rc;
}

/* How long the embedding turn is this node's after each take or renewal. */
static long turn_lease_ms(const struct config *cfg)
{
    return cfg->embed_timeout_ms + TURN_MARGIN_MS;
}

/* Another node is embedding (PostgreSQL): this one waits its turn. */
#define EMBED_NOT_OUR_TURN (-2)

/* embed_batch while this node holds the turn: renewed right before the
 * embeddings call (the writes before it may have taken a while) and right
 * after it (for the vectors' writes). */
static long embed_batch_turn(struct store *st, struct llm *llm, const struct config *cfg,
                             const char *space, const char *skip, const char *actor,
                             struct error *err)
{
    struct taken tk = {.model = cfg->embed_model};
    const char **texts = NULL;
    size_t *which = NULL, n = 0;
    char *next = NULL;
    long handled = 0;
    int batch = server_batch(cfg), rc = STORE_OK;
    if (!space && (rc = rotation_next(st, &next)) == STORE_OK && next) {
        rotation_served(next);
        if (skip && strcmp(next, skip) == 0) {
            free(next); /* a backfill's own: its turn comes after this */
            return 0;
        }
        space = next; /* none: the queue's rows of no entry, if any */
    }
    buf_init(&tk.text, 1 << 20);
    if (rc == STORE_OK)
        rc = store_embed_take(st, space, batch, EMBED_CONTENT_HEAD, take_row, &tk);
    free(next); /* tk.space is its own copy */
    if (rc != STORE_OK) {
        store_status_error(rc, "Embedding queue", err);
        taken_release(&tk);
        return -1;
    }
    texts = xcalloc(tk.n + 1, sizeof *texts);
    which = xcalloc(tk.n + 1, sizeof *which);
    for (size_t i = 0; i < tk.n; i++) {
        struct todo *t = &tk.t[i];
        if (t->gone) {
            handled += store_embed_done(st, t->seq, t->version) == STORE_OK;
        } else if (t->same) {
            handled += store_vector_touch(st, t->seq, t->version) == STORE_OK;
        } else {
            texts[n] = t->text;
            which[n++] = i;
        }
    }
    if (n > 0) {
        struct svc_ctx c = {
            .space = tk.space, .actor = actor, .role = ROLE_NONE, .st = st, .llm = llm, .cfg = cfg};
        struct embed_reply r;
        char holder[HOLDER_SIZE];
        long left_ms;
        int call;
        if (store_embed_turn_take(st, turn_lease_ms(cfg), holder, sizeof holder, &left_ms) !=
            STORE_OK) {
            /* the lease ran out meanwhile: another node may be embedding these */
            handled = handled ? handled : EMBED_NOT_OUR_TURN;
            goto out;
        }
        embed_reply_init(&r);
        call = svc_llm_embed(&c, "embed", texts, n, server_dim(), 0, &r);
        /* Renewed for the writes; lost, the vectors are stored all the same
         * (paid for, and the same as another node's for the same text). */
        store_ignore(
            store_embed_turn_take(st, turn_lease_ms(cfg), holder, sizeof holder, &left_ms));
        if (call == 0) {
            int put = STORE_OK;
            size_t nfresh = 0;
            server_ok(r.dim);
            for (size_t j = 0; j < n; j++) {
                struct todo *t = &tk.t[which[j]];
                float *v = r.vec + j * (size_t)r.dim;
                int one;
                vec_normalise(v, r.dim);
                one = store_vector_put(st, t->seq, tk.space, cfg->embed_model, t->version,
                                       t->digest, v, r.dim);
                handled += one == STORE_OK;
                put = put == STORE_OK ? one : put;
                if (one == STORE_OK && t->fresh) { /* compacted: nfresh <= j */
                    texts[nfresh] = t->id;
                    memmove(r.vec + nfresh * (size_t)r.dim, v, (size_t)r.dim * sizeof *v);
                    nfresh++;
                }
            }
            /* the conflict check by meaning, now that the vectors are searchable */
            (void)conflicts_by_meaning(&c, texts, r.vec, nfresh, r.dim);
            if (put != STORE_OK) {
                /* Vectors paid for and not stored (a full disk, a busy
                 * database): back off as for a failing server rather than
                 * pay for them again every 200 ms. */
                store_status_error(put, "Vectors", err);
                server_failed(err);
            }
        } else if (strcmp(r.err.code, "LLM_CONTEXT_TOO_LONG") == 0 && n > 1) {
            server_halve_batch((int)n); /* the batch was too large: smaller next time */
        } else if (strcmp(r.err.code, "LLM_CONTEXT_TOO_LONG") == 0) {
            /* One text the server will not take: recorded as without a
             * vector (dimension 0) until its text changes; found lexically. */
            struct todo *t = &tk.t[which[0]];
            handled += store_vector_put(st, t->seq, tk.space, cfg->embed_model, t->version,
                                        t->digest, NULL, 0) == STORE_OK;
        } else {
            server_failed(&r.err);
            error_copy(err, &r.err, NULL);
            handled = -1;
        }
        embed_reply_release(&r);
    }
out:
    free(texts);
    free(which);
    taken_release(&tk);
    return handled;
}

/* One batch of the queue (of space, or of the rotation's next space, none
 * when that is skip's): entries gone or unchanged are taken off, the rest
 * embedded in one call, with the turn taken before and given back after (so
 * nodes take turns batch by batch). Returns the entries handled (0: none
 * waited), -1 when the call failed (err set, the breaker opened), or
 * EMBED_NOT_OUR_TURN with the node holding the turn in holder (holder_size
 * bytes). */
static long embed_batch(struct store *st, struct llm *llm, const struct config *cfg,
                        const char *space, const char *skip, const char *actor, struct error *err,
                        char *holder, size_t holder_size)
{
    long n, left_ms;
    if (store_embed_turn_take(st, turn_lease_ms(cfg), holder, holder_size, &left_ms) != STORE_OK)
        return EMBED_NOT_OUR_TURN;
    n = embed_batch_turn(st, llm, cfg, space, skip, actor, err);
    store_ignore(store_embed_turn_give(st)); /* else its lease runs out */
    return n;
}

void embed_start(struct store *st, const struct config *cfg)
{
    long dim = 0;
    if (!config_embed_configured(cfg))
        return;
    /* The model's dimension is that of its stored vectors: a first reply of
     * another (a lying server) is refused, not taken as the truth. */
    if (store_vector_dim(st, cfg->embed_model, &dim) == STORE_OK && dim > 0)
        server_ok((int)dim);
    store_ignore(store_embed_fill(st, NULL, cfg->embed_model, 0)); /* the queue covers edits;
                                                                      retried at the next start */
}

/* A batch of the rotation's next space, unless that is skip's (NULL: any). */
static int idle_batch(struct store *st, struct llm *llm, const struct config *cfg, const char *skip)
{
    char holder[HOLDER_SIZE];
    struct error err;
    long n;
    if (!config_embed_configured(cfg) || server_wait() > 0)
        return 0;
    error_init(&err);
    n = embed_batch(st, llm, cfg, NULL, skip, "knowhub:embed", &err, holder, sizeof holder);
    error_release(&err);
    return n > 0;
}

int embed_idle(struct store *st, struct llm *llm, const struct config *cfg)
{
    return idle_batch(st, llm, cfg, NULL);
}

/* ---- the backfill job ---- */

static atomic_int stop_requested;

void embed_request_stop(void)
{
    stop_requested = 1;
}

/* The backfill could not have its turn: another node held it TURN_WAIT_LEASES
 * leases while no entry of the space was embedded. */
static void turn_wait_failed(struct error *err, const struct config *cfg, const char *holder,
                             long waited_ms)
{
    error_set(err, E_SERVICE_UNAVAILABLE, NULL,
              "Node %s held the embedding turn for %ld s (leases of %ld s, renewed) while no"
              " entry of this space was embedded; run the backfill again later",
              *holder ? holder : "(unknown)", waited_ms / 1000, turn_lease_ms(cfg) / 1000);
    err->retry = 1;
}

void embed_run_job(struct store *st, struct llm *llm, const struct config *cfg, const char *job_id,
                   const char *space, const char *actor, struct json_object *params)
{
    struct json_object *v, *result;
    struct error err;
    char holder[HOLDER_SIZE] = "";
    long total = 0, left = 0, done = 0;
    long long waiting_since = 0; /* monotonic ms; 0: not waiting for the turn */
    int force = json_object_object_get_ex(params, "force", &v) && json_object_get_boolean(v);
    int failures = 0, idle = 0, rc;
    error_init(&err);
    rc = store_embed_fill(st, space, cfg->embed_model, force);
    if (rc == STORE_OK)
        rc = store_embed_queued(st, space, &total);
    if (rc != STORE_OK)
        store_status_error(rc, "Embedding queue", &err);
    left = total;
    store_ignore(store_job_progress(st, job_id, 0, total)); /* best effort */
    while (rc == STORE_OK && !stop_requested) {
        long n = embed_batch(st, llm, cfg, space, NULL, actor, &err, holder, sizeof holder);
        if (n == EMBED_NOT_OUR_TURN) {
            /* Another node is embedding: wait, keep the job's lease. Its
             * idle batches take this space's entries too, which counts as
             * progress; a holder whose lease runs out (a frozen node) loses
             * the turn; one that keeps it while nothing of this space moves
             * is waited for a bounded time, then the job fails, retry. */
            long now_left = left;
            long long now = monotonic_ms();
            if (!waiting_since)
                waiting_since = now;
            usleep(TURN_POLL_MS * 1000);
            if (store_embed_queued(st, space, &now_left) == STORE_OK && now_left < left) {
                left = now_left;
                waiting_since = monotonic_ms();
            }
            done = total - left > 0 ? total - left : 0;
            if (store_job_progress(st, job_id, done, total) == STORE_NOT_FOUND) {
                error_release(&err);
                return;
            }
            if (left == 0)
                break; /* embedded by the other node */
            if (now - waiting_since > TURN_WAIT_LEASES * turn_lease_ms(cfg)) {
                turn_wait_failed(&err, cfg, holder, (long)(now - waiting_since));
                break;
            }
            continue;
        }
        waiting_since = 0;
        if (n < 0) {
            if (++failures == 3)
                break; /* err says why */
            usleep((useconds_t)server_wait() * 1000);
            error_release(&err);
            error_init(&err);
            continue;
        }
        failures = 0;
        if ((rc = store_embed_queued(st, space, &left)) != STORE_OK) {
            store_status_error(rc, "Embedding queue", &err);
            break;
        }
        done = total - left > 0 ? total - left : 0;
        if (store_job_progress(st, job_id, done, total) == STORE_NOT_FOUND) {
            error_release(&err);
            return; /* no longer this node's: its lease ran out and another took it over */
        }
        /* Nothing handled with entries left: the batch was halved (a 413);
         * from 256 down to 1 that is at most 9 rounds in a row. */
        idle = n == 0 ? idle + 1 : 0;
        if (left == 0 || idle > 9)
            break;
        /* The job thread runs this job alone: a batch of the other spaces
         * in turn after each of its own, so their new entries wait a batch,
         * not the whole backfill. */
        idle_batch(st, llm, cfg, space);
    }
    if (stop_requested && !err.code) {
        error_release(&err);
        return; /* left running: the next start runs it again */
    }
    if (err.code) {
        struct json_object *e = error_json(&err);
        store_ignore(store_job_finish(st, job_id, "failed", NULL, json_text(e))); /* else
                                                                       requeued at start */
        json_object_put(e);
    } else {
        result = json_object_new_object();
        json_object_object_add(result, "queued", json_object_new_int64(total));
        json_object_object_add(result, "embedded", json_object_new_int64(done));
        json_object_object_add(result, "model", json_object_new_string(cfg->embed_model));
        json_object_object_add(result, "dimension", json_object_new_int(server_dim()));
        store_ignore(store_job_finish(st, job_id, "done", json_text(result), NULL)); /* else
                                                                       requeued at start */
        json_object_put(result);
    }
    error_release(&err);
}

/* ---- queries ---- */

/* The query cache: the last QCACHE_SLOTS query vectors, least recently used
 * replaced; at most QCACHE_SLOTS x EMBED_MAX_DIM floats (8 MiB). Keyed by
 * space, model and text: a space never meets another's query (no faster
 * answer, no missing ledger row tells one tenant what another searched). */
static struct {
    pthread_mutex_t mu;
    struct {
        unsigned char key[16];
        float *vec;
        int dim;
        unsigned long long used;
    } slot[QCACHE_SLOTS];
    unsigned long long tick;
} qcache = {.mu = PTHREAD_MUTEX_INITIALIZER};

static float *qcache_get(const unsigned char key[16], int *dim)
{
    float *v = NULL;
    pthread_mutex_lock(&qcache.mu);
    for (size_t i = 0; i < QCACHE_SLOTS && !v; i++)
        if (qcache.slot[i].vec && memcmp(qcache.slot[i].key, key, 16) == 0) {
            qcache.slot[i].used = ++qcache.tick;
            *dim = qcache.slot[i].dim;
            v = xmalloc((size_t)*dim * sizeof *v);
            memcpy(v, qcache.slot[i].vec, (size_t)*dim * sizeof *v);
        }
    pthread_mutex_unlock(&qcache.mu);
    return v;
}

static void qcache_put(const unsigned char key[16], const float *v, int dim)
{
    size_t lru = 0;
    pthread_mutex_lock(&qcache.mu);
    for (size_t i = 1; i < QCACHE_SLOTS; i++)
        if (qcache.slot[i].used < qcache.slot[lru].used)
            lru = i;
    free(qcache.slot[lru].vec);
    qcache.slot[lru].vec = xmalloc((size_t)dim * sizeof *v);
    memcpy(qcache.slot[lru].vec, v, (size_t)dim * sizeof *v);
    memcpy(qcache.slot[lru].key, key, 16);
    qcache.slot[lru].dim = dim;
    qcache.slot[lru].used = ++qcache.tick;
    pthread_mutex_unlock(&qcache.mu);
}

/* A query's key in the cache: its space, the model and its text. */
static void qcache_key(const char *space, const char *model, const char *q, unsigned char key[16])
{
    crypto_generichash_state s;
    crypto_generichash_init(&s, NULL, 0, 16);
    crypto_generichash_update(&s, (const unsigned char *)space, strlen(space) + 1);
    crypto_generichash_update(&s, (const unsigned char *)model, strlen(model) + 1);
    crypto_generichash_update(&s, (const unsigned char *)q, strlen(q));
    crypto_generichash_final(&s, key, 16);
}

void embed_query_remember(const struct config *cfg, const char *space, const char *q,
                          const float *vec, int dim)
{
    unsigned char key[16];
    float *v = xmalloc((size_t)dim * sizeof *v);
    memcpy(v, vec, (size_t)dim * sizeof *v);
    vec_normalise(v, dim);
    qcache_key(space, cfg->embed_model, q, key);
    qcache_put(key, v, dim);
    free(v);
}

int embed_query(const struct svc_ctx *c, const char *q, float **vec, int *dim, struct error *err)
{
    unsigned char key[16];
    struct embed_reply r;
    long wait;
    *vec = NULL;
    *dim = 0;
    if (!config_embed_configured(c->cfg)) {
        error_set(err, E_LLM_NOT_CONFIGURED, NULL,
                  "No embeddings server is configured (KNOWHUB_EMBED_URL is not set)");
        return -1;
    }
    qcache_key(c->space, c->cfg->embed_model, q, key);
    if ((*vec = qcache_get(key, dim)))
        return 0;
    if ((wait = server_wait()) > 0) {
        error_set(err, E_SERVICE_UNAVAILABLE, NULL,
                  "The embeddings server failed recently; the next try is in %ld ms", wait);
        err->retry = 1;
        return -1;
    }
    embed_reply_init(&r);
    if (svc_llm_embed(c, "embed_query", &q, 1, server_dim(),
                      c->cfg->embed_timeout_ms < QUERY_TIMEOUT_MS ? c->cfg->embed_timeout_ms
                                                                  : QUERY_TIMEOUT_MS,
                      &r)) {
        /* A query the server will not take is this query's problem, not the server's. */
        if (strcmp(r.err.code, "LLM_CONTEXT_TOO_LONG") != 0)
            server_failed(&r.err);
        error_copy(err, &r.err, NULL);
        embed_reply_release(&r);
        return -1;
    }
    server_ok(r.dim);
    vec_normalise(r.vec, r.dim);
    qcache_put(key, r.vec, r.dim);
    *vec = r.vec;
    *dim = r.dim;
    r.vec = NULL;
    embed_reply_release(&r);
    return 0;
}

/* ---- the operations ---- */

/* The caller's space's in-memory index against its budget, beside the
 * status's "index" {vectors, bytes}: cap (KNOWHUB_VECTOR_SPACE_BYTES, 0: no
 * limit), over (its vectors are not held: searched by words), needed (the
 * bytes they would take, when over) and evicted (not held for want of
 * room: loaded on its next search). */
static void index_budget(const char *space, struct json_object *idx)
{
    struct vindex_figures f;
    vindex_figures(space, &f); /* never another space's figures */
    json_object_object_add(idx, "cap", json_object_new_int64((int64_t)f.space_cap));
    json_object_object_add(idx, "over", json_object_new_boolean(f.over > 0));
    if (f.over)
        json_object_object_add(idx, "needed", json_object_new_int64((int64_t)f.needed));
    json_object_object_add(idx, "evicted", json_object_new_boolean(f.evicted > 0));
}

int svc_embed_status(const struct svc_ctx *c, struct json_object **data, struct error *err)
{
    long entries, rows, vectors, dim, queued = 0;
    size_t held, bytes;
    struct json_object *o, *idx, *last = NULL;
    int rc =
        store_vector_counts(c->st, c->space, c->cfg->embed_model, &entries, &rows, &vectors, &dim);
    if (rc == STORE_OK)
        rc = store_embed_queued(c->st, c->space, &queued);
    if (rc != STORE_OK) {
        store_status_error(rc, "Embeddings", err);
        return -1;
    }
    o = json_object_new_object();
    json_object_object_add(o, "configured",
                           json_object_new_boolean(config_embed_configured(c->cfg)));
    json_object_object_add(
        o, "model",
        config_embed_configured(c->cfg) ? json_object_new_string(c->cfg->embed_model) : NULL);
    json_object_object_add(o, "dimension", json_object_new_int64(dim ? dim : server_dim()));
    json_object_object_add(o, "entries", json_object_new_int64(entries));
    json_object_object_add(o, "embedded", json_object_new_int64(vectors));
    json_object_object_add(o, "failed", json_object_new_int64(rows - vectors));
    json_object_object_add(o, "queued", json_object_new_int64(queued));
    /* stale: entries waiting for a vector of this model (queued, or none yet) */
    json_object_object_add(
        o, "stale", json_object_new_int64(entries - rows > queued ? entries - rows : queued));
    pthread_mutex_lock(&server.mu);
    if (server.code[0]) {
        last = json_object_new_object();
        json_object_object_add(last, "code", json_object_new_string(server.code));
        json_object_object_add(last, "message", json_object_new_string(server.message));
        json_object_object_add(last, "at", json_object_new_string(server.at));
    }
    json_object_object_add(o, "batch",
                           json_object_new_int(server.batch ? server.batch : c->cfg->embed_batch));
    pthread_mutex_unlock(&server.mu);
    json_object_object_add(o, "last_error", last);
    json_object_object_add(o, "retry_in_ms", json_object_new_int64(server_wait()));
    vindex_usage(c->space, &held, &bytes); /* never another space's figures */
    idx = json_object_new_object();
    json_object_object_add(idx, "vectors", json_object_new_int64((int64_t)held));
    json_object_object_add(idx, "bytes", json_object_new_int64((int64_t)bytes));
    index_budget(c->space, idx);
    json_object_object_add(o, "index", idx);
    *data = o;
    return 0;
}
