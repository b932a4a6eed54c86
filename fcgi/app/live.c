/* live: the live streams and the thread that holds them (live.h). One
 * thread, one poll() over every stream's connection, no thread per stream:
 * a stream costs its FastCGI request (libfcgi's buffers, about 17 KiB) and
 * this record. */
#include "app/live.h"
#include "app/server.h"
#include "base/buf.h"
#include "base/config.h"
#include "base/metrics.h"
#include "base/util.h"
#include "http/http.h"
#include "service/ctx.h"
#include "service/streams.h"
#include "store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How often the thread looks (SQLite's changes, heartbeats, stop), and the
 * other periods, in ms. */
#define TICK_MS 200
#define TOKEN_CHECK_MS 5000
#define HOUSEKEEPING_MS (5 * 60 * 1000)
/* Subscriptions outlive their session's last stream by this (seconds), and
 * SQLite's change rows are kept this long (seconds). */
#define SUBSCRIPTION_KEEP_S 3600
#define CHANGES_KEEP_S 600

struct stream {
    FCGX_Request *fr;
    int kind; /* RESPONSE_LIVE_* */
    int role; /* the caller's (enum role): the review queue is told to editors only */
    char *space, *token_id;
    char session[STREAMS_SESSION_LEN + 1];
    long last_write_ms;
    int dead;    /* a write failed or the client left: cut off */
    int closing; /* end it with its FastCGI end (token revoked) */
};

struct token_count {
    char *token_id;
    long n;
};

struct live {
    pthread_t thread;
    const struct config *cfg;
    struct metrics *metrics; /* the thread's slot */
    struct store *st;
    int wake[2]; /* a byte on wake[1]: a stream was adopted, or stop */
    atomic_int stop;
    pthread_mutex_t mu;
    /* under mu */
    struct stream **adopted; /* handed over, not yet in streams */
    size_t n_adopted, cap_adopted;
    struct token_count *tokens; /* streams reserved per token */
    size_t n_tokens;
    long reserved;
    /* the thread's own */
    struct stream **streams;
    size_t n, cap;
    long next_token_check_ms, next_housekeeping_ms;
};

/* ---- reservations (any thread) ---- */

static struct token_count *token_slot(struct live *lv, const char *token_id, int create)
{
    for (size_t i = 0; i < lv->n_tokens; i++)
        if (!strcmp(lv->tokens[i].token_id, token_id))
            return &lv->tokens[i];
    if (!create)
        return NULL;
    lv->tokens = xrealloc(lv->tokens, (lv->n_tokens + 1) * sizeof *lv->tokens);
    lv->tokens[lv->n_tokens] = (struct token_count){xstrdup(token_id), 0};
    return &lv->tokens[lv->n_tokens++];
}

int live_reserve(struct live *lv, const char *token_id)
{
    int rc = 0;
    pthread_mutex_lock(&lv->mu);
    struct token_count *t = token_slot(lv, token_id, 1);
    if (lv->reserved >= lv->cfg->streams_max)
        rc = -1;
    else if (t->n >= lv->cfg->streams_per_token)
        rc = -2;
    else {
        t->n++;
        lv->reserved++;
    }
    pthread_mutex_unlock(&lv->mu);
    return rc;
}

void live_unreserve(struct live *lv, const char *token_id)
{
    pthread_mutex_lock(&lv->mu);
    struct token_count *t = token_slot(lv, token_id, 0);
    if (t && t->n > 0) {
        t->n--;
        lv->reserved--;
        if (t->n == 0) { /* the table holds the tokens with streams only */
            free(t->token_id);
            *t = lv->tokens[--lv->n_tokens];
        }
    }
    pthread_mutex_unlock(&lv->mu);
}

long live_open(struct live *lv)
{
    long n;
    if (!lv)
        return 0;
    pthread_mutex_lock(&lv->mu);
    n = lv->reserved;
    pthread_mutex_unlock(&lv->mu);
    return n;
}

void live_adopt(struct live *lv, FCGX_Request *fr, int kind, int role, const char *space,
                const char *token_id, const char *session)
{
    struct stream *s = xcalloc(1, sizeof *s);
    char byte = 1;
    s->fr = fr;
    s->kind = kind;
    s->role = role;
    s->space = xstrdup(space);
    s->token_id = xstrdup(token_id);
    snprintf(s->session, sizeof s->session, "%s", session ? session : "");
    s->last_write_ms = monotonic_ms();
    /* A client that stops reading must not stop the thread: a write that
     * would block fails, and the stream is cut off. */
    fcntl(fr->ipcFd, F_SETFL, fcntl(fr->ipcFd, F_GETFL) | O_NONBLOCK);
    pthread_mutex_lock(&lv->mu);
    if (lv->n_adopted == lv->cap_adopted) {
        lv->cap_adopted = lv->cap_adopted ? 2 * lv->cap_adopted : 16;
        lv->adopted = xrealloc(lv->adopted, lv->cap_adopted * sizeof *lv->adopted);
    }
    lv->adopted[lv->n_adopted++] = s;
    pthread_mutex_unlock(&lv->mu);
    if (write(lv->wake[1], &byte, 1) < 0 && errno != EAGAIN)
        fprintf(stderr, "knowhub: the stream thread's wake-up failed: %s\n", strerror(errno));
}

/* ---- writing (the thread's) ---- */

static void send_text(struct stream *s, const char *data, size_t n)
{
    if (s->dead || s->closing)
        return;
    if (FCGX_PutStr(data, (int)n, s->fr->out) != (int)n || FCGX_FFlush(s->fr->out)) {
        s->dead = 1;
        return;
    }
    s->last_write_ms = monotonic_ms();
}

/* One Server-Sent Event: event name and its data (one line of JSON). */
static void send_event(struct stream *s, const char *event, struct json_object *data)
{
    struct buf b;
    buf_init(&b, 64 * 1024);
    buf_addf(&b, "event: %s\ndata: %s\n\n", event,
             json_object_to_json_string_ext(data, JSON_C_TO_STRING_PLAIN |
                                                      JSON_C_TO_STRING_NOSLASHESCAPE));
    if (!buf_failed(&b))
        send_text(s, b.data, b.len);
    buf_release(&b);
}

/* An MCP notification (a JSON-RPC message without id) on the stream; uri
 * NULL for list_changed. */
static void send_notification(struct stream *s, const char *method, const char *uri)
{
    struct json_object *m = json_object_new_object();
    json_object_object_add(m, "jsonrpc", json_object_new_string("2.0"));
    json_object_object_add(m, "method", json_object_new_string(method));
    if (uri) {
        struct json_object *params = json_object_new_object();
        json_object_object_add(params, "uri", json_object_new_string(uri));
        json_object_object_add(m, "params", params);
    }
    send_event(s, "message", m);
    json_object_put(m);
}

/* ---- the changes ---- */

struct dispatch {
    struct live *lv;
    const struct store_change *ch;
    const char *uri;
    int space_has_sessions; /* an MCP stream of the change's space has a session */
};

/* A subscriber (token, session) of d->uri: its streams on this node are told. */
static void on_subscriber(void *arg, const char *token_id, const char *session)
{
    struct dispatch *d = arg;
    for (size_t i = 0; i < d->lv->n; i++) {
        struct stream *s = d->lv->streams[i];
        if (s->kind == RESPONSE_LIVE_MCP && !strcmp(s->token_id, token_id) &&
            !strcmp(s->session, session) && !strcmp(s->space, d->ch->space))
            send_notification(s, "notifications/resources/updated", d->uri);
    }
}

static void on_uri(void *arg, const char *uri)
{
    struct dispatch *d = arg;
    d->uri = uri;
    if (d->space_has_sessions)
        store_ignore(/* a failed lookup tells no one: the next change tells again */
                     store_sub_match(d->lv->st, d->ch->space, uri, on_subscriber, d));
}

/* A proposal made or decided (the review queue): a "review" event to the
 * panels of the space's editors and admins; readers, agents and MCP
 * sessions hear nothing of knowledge that is not served. */
static void on_review(struct live *lv, const struct store_change *ch)
{
    struct json_object *e = json_object_new_object();
    json_object_object_add(e, "proposal_id", json_object_new_string(ch->id));
    json_object_object_add(e, "action", json_object_new_string(ch->action));
    for (size_t i = 0; i < lv->n; i++) {
        struct stream *s = lv->streams[i];
        if (s->kind == RESPONSE_LIVE_EVENTS && s->role >= ROLE_EDITOR &&
            !strcmp(s->space, ch->space))
            send_event(s, "review", e);
    }
    json_object_put(e);
}

static void on_change(void *arg, const struct store_change *ch)
{
    struct live *lv = arg;
    if (!strcmp(ch->action, "proposed") || !strcmp(ch->action, "decided")) {
        on_review(lv, ch);
        return;
    }
    struct dispatch d = {lv, ch, NULL, 0};
    int any_mcp = 0, listed;
    struct json_object *e = NULL;
    for (size_t i = 0; i < lv->n; i++) {
        struct stream *s = lv->streams[i];
        if (strcmp(s->space, ch->space) != 0)
            continue;
        if (s->kind == RESPONSE_LIVE_EVENTS) {
            if (!e) {
                e = json_object_new_object();
                json_object_object_add(e, "id", json_object_new_string(ch->id));
                json_object_object_add(e, "category", json_object_new_string(ch->category));
                json_object_object_add(e, "path", json_object_new_string(ch->path));
                json_object_object_add(e, "action", json_object_new_string(ch->action));
            }
            send_event(s, "changed", e);
        } else {
            any_mcp = 1;
            d.space_has_sessions |= s->session[0] != '\0';
        }
    }
    json_object_put(e);
    if (!any_mcp)
        return;
    listed = streams_change_uris(ch, on_uri, &d);
    if (listed)
        for (size_t i = 0; i < lv->n; i++) {
            struct stream *s = lv->streams[i];
            if (s->kind == RESPONSE_LIVE_MCP && !strcmp(s->space, ch->space))
                send_notification(s, "notifications/resources/list_changed", NULL);
        }
}

/* Changes may have gone by unseen (the database session was lost): every
 * reader is told to read again. */
static void tell_everyone(struct live *lv)
{
    struct json_object *e = json_object_new_object();
    json_object_object_add(e, "action", json_object_new_string("resync"));
    for (size_t i = 0; i < lv->n; i++) {
        struct stream *s = lv->streams[i];
        if (s->kind == RESPONSE_LIVE_EVENTS)
            send_event(s, "changed", e);
        else
            send_notification(s, "notifications/resources/list_changed", NULL);
    }
    json_object_put(e);
}

/* ---- the streams' lives ---- */

static void stream_free(struct live *lv, struct stream *s)
{
    if (s->dead) {
        /* Cut off: the connection closes without the FastCGI end. */
        FCGX_Free(s->fr, 1);
    } else {
        FCGX_Finish_r(s->fr);
        if (s->fr->ipcFd >= 0)
            FCGX_Free(s->fr, 1);
    }
    live_unreserve(lv, s->token_id);
    free(s->fr);
    free(s->space);
    free(s->token_id);
    free(s);
}

/* The streams handed over since the last look join the thread's; how many. */
static size_t take_adopted(struct live *lv)
{
    size_t taken;
    pthread_mutex_lock(&lv->mu);
    taken = lv->n_adopted;
    for (size_t i = 0; i < lv->n_adopted; i++) {
        if (lv->n == lv->cap) {
            lv->cap = lv->cap ? 2 * lv->cap : 64;
            lv->streams = xrealloc(lv->streams, lv->cap * sizeof *lv->streams);
        }
        lv->streams[lv->n++] = lv->adopted[i];
    }
    lv->n_adopted = 0;
    pthread_mutex_unlock(&lv->mu);
    return taken;
}

/* Streams whose token was revoked (or deleted) end: each token looked up
 * once per pass. */
static void check_tokens(struct live *lv)
{
    for (size_t i = 0; i < lv->n; i++) {
        struct stream *s = lv->streams[i];
        struct token_record t;
        int gone, seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = !strcmp(lv->streams[j]->token_id, s->token_id);
        if (seen)
            continue;
        memset(&t, 0, sizeof t);
        int rc = store_token_get(lv->st, s->token_id, &t);
        gone = rc == STORE_NOT_FOUND || (rc == STORE_OK && t.revoked_at);
        store_token_record_release(&t);
        for (size_t j = i; gone && j < lv->n; j++)
            if (!strcmp(lv->streams[j]->token_id, s->token_id))
                lv->streams[j]->closing = 1;
    }
}

/* Every few minutes: the open sessions keep their subscriptions, old ones
 * and old change rows go. */
static void housekeeping(struct live *lv)
{
    for (size_t i = 0; i < lv->n; i++)
        if (lv->streams[i]->session[0])
            store_ignore(/* kept at the next pass */
                         store_sub_touch(lv->st, lv->streams[i]->token_id,
                                         lv->streams[i]->session));
    store_ignore(store_sub_expire(lv->st, SUBSCRIPTION_KEEP_S)); /* next time */
    store_ignore(store_changes_trim(lv->st, CHANGES_KEEP_S));    /* next time */
}

/* A stream's connection readable: nginx closed it (the client left) or
 * sent an abort; nothing else comes on a request already read. */
static void client_left(struct stream *s)
{
    s->dead = 1;
}

static void reap(struct live *lv)
{
    size_t kept = 0;
    for (size_t i = 0; i < lv->n; i++) {
        struct stream *s = lv->streams[i];
        if (s->dead || s->closing)
            stream_free(lv, s);
        else
            lv->streams[kept++] = s;
    }
    lv->n = kept;
}

static void *live_main(void *arg)
{
    struct live *lv = arg;
    struct pollfd *fds = NULL;
    size_t cap = 0;
    int following = store_changes_follow(lv->st) == STORE_OK;
    if (!following)
        fprintf(stderr, "knowhub: the stream thread cannot follow changes yet (%s); retrying\n",
                store_errmsg(lv->st));
    while (!atomic_load(&lv->stop)) {
        long now;
        size_t taken;
        int db_fd = store_changes_fd(lv->st);
        size_t nfds = 2 + lv->n;
        if (nfds > cap) {
            cap = nfds * 2;
            fds = xrealloc(fds, cap * sizeof *fds);
        }
        fds[0] = (struct pollfd){lv->wake[0], POLLIN, 0};
        fds[1] = (struct pollfd){db_fd, POLLIN, 0}; /* -1: ignored by poll */
        for (size_t i = 0; i < lv->n; i++)
            fds[2 + i] = (struct pollfd){lv->streams[i]->fr->ipcFd, POLLIN, 0};
        if (poll(fds, (nfds_t)nfds, TICK_MS) < 0 && errno != EINTR)
            break;
        if (fds[0].revents & POLLIN) {
            char drain[256];
            while (read(lv->wake[0], drain, sizeof drain) > 0)
                ;
        }
        for (size_t i = 0; i < lv->n; i++)
            if (fds[2 + i].revents)
                client_left(lv->streams[i]);
        taken = take_adopted(lv);
        if (!following)
            following = store_changes_follow(lv->st) == STORE_OK;
        if (following) {
            int rc = store_changes_read(lv->st, on_change, lv);
            if (rc == STORE_UNAVAILABLE)
                tell_everyone(lv);
        }
        now = monotonic_ms();
        for (size_t i = 0; i < lv->n; i++)
            if (now - lv->streams[i]->last_write_ms >= lv->cfg->streams_heartbeat_ms)
                send_text(lv->streams[i], ": heartbeat\n\n", 13);
        if (now >= lv->next_token_check_ms) {
            check_tokens(lv);
            lv->next_token_check_ms = now + TOKEN_CHECK_MS;
        }
        if (now >= lv->next_housekeeping_ms) {
            housekeeping(lv);
            lv->next_housekeeping_ms = now + HOUSEKEEPING_MS;
        }
        reap(lv);
        metrics_streams(lv->metrics, (long)lv->n, (long)taken);
    }
    /* Stopping: every stream ends whole. */
    (void)take_adopted(lv);
    for (size_t i = 0; i < lv->n; i++)
        lv->streams[i]->closing = 1;
    reap(lv);
    free(fds);
    return NULL;
}

struct live *live_start(const struct config *cfg, struct metrics *metrics)
{
    struct live *lv;
    if (cfg->streams_max <= 0)
        return NULL;
    lv = xcalloc(1, sizeof *lv);
    lv->cfg = cfg;
    lv->metrics = metrics;
    pthread_mutex_init(&lv->mu, NULL);
    if (pipe(lv->wake) || fcntl(lv->wake[0], F_SETFL, O_NONBLOCK) ||
        fcntl(lv->wake[1], F_SETFL, O_NONBLOCK)) {
        fprintf(stderr, "knowhub: no pipe for the stream thread: %s; live streams are off\n",
                strerror(errno));
        free(lv);
        return NULL;
    }
    if ((lv->st = server_open_store(cfg)))
        store_set_metrics(lv->st, metrics);
    if (!lv->st || pthread_create(&lv->thread, NULL, live_main, lv)) {
        fputs("knowhub: the stream thread did not start; live streams are off\n", stderr);
        store_close(lv->st);
        close(lv->wake[0]);
        close(lv->wake[1]);
        free(lv);
        return NULL;
    }
    return lv;
}

void live_stop(struct live *lv)
{
    char byte = 0;
    if (!lv)
        return;
    atomic_store(&lv->stop, 1);
    if (write(lv->wake[1], &byte, 1) < 0 && errno != EAGAIN)
        fprintf(stderr, "knowhub: the stream thread's wake-up failed: %s\n", strerror(errno));
    pthread_join(lv->thread, NULL);
    store_close(lv->st);
    close(lv->wake[0]);
    close(lv->wake[1]);
    for (size_t i = 0; i < lv->n_tokens; i++)
        free(lv->tokens[i].token_id);
    free(lv->tokens);
    free(lv->adopted);
    free(lv->streams);
    pthread_mutex_destroy(&lv->mu);
    free(lv);
}
