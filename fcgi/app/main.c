/* main: knowhub's entry point. Sub-commands; `serve` opens the FastCGI socket
 * and runs KNOWHUB_THREADS workers, each with its own SQLite connection, in an
 * FCGX_Accept_r loop. SIGTERM/SIGINT stop accepting, let in-flight requests
 * finish, and exit 0. The only file that includes fcgiapp.h. */
#include "http/accesslog.h"
#include "base/buf.h"
#include "base/cache.h"
#include "app/cli.h"
#include "base/config.h"
#include "llm/agentlog.h"
#include "http/http.h"
#include "service/embed.h"
#include "service/lindex.h"
#include "service/vindex.h"
#include "service/jobs.h"
#include "service/timing.h"
#include "service/auth.h"
#include "llm/llm.h"
#include "base/metrics.h"
#include "app/remote.h"
#include "app/routes.h"
#include "http/router.h"
#include "app/live.h"
#include "app/server.h"
#include "store/store.h"
#include "base/util.h"

#include <errno.h>
#include <fcgiapp.h>
#include <limits.h>
#include <pthread.h>
#include <sys/resource.h>
#include <signal.h>
#include <stdatomic.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* Set by main before the workers start; the signal handler reads it. */
static int listen_fd = -1;
/* Set by the signal handler (a lock-free atomic is async-signal-safe) and
 * read by the job thread, which stops between jobs. */
static atomic_int stopping;

struct worker {
    pthread_t thread;
    struct live *live; /* the stream thread (NULL: live streams are off) */
    struct store *store;
    struct llm *llm;
    struct cache *cache;
    const struct config *cfg;
    struct metrics *metrics;  /* this thread's counters */
    struct accesslog *access; /* shared by every thread (NULL: no log) */
    struct accesslog *audit;  /* likewise */
    const char *request_id;   /* the request being answered, for audit lines */
    struct buf line;          /* this thread's log line */
    const char *proxy_key;    /* what nginx must send as KNOWHUB_PROXY_KEY (serve's) */
    int warned_proxy_key;     /* a wrong key was said on stderr (once per thread) */
};

/* The store's audit hook: one JSON line per committed audit row. */
static void log_audit(void *arg, const char *ts, const char *space, const char *actor,
                      const char *action, const char *target)
{
    struct worker *w = arg;
    accesslog_audit_line(&w->line, w->request_id, ts, space, actor, action, target);
    if (w->line.len && w->line.data[w->line.len - 1] == '\n' &&
        accesslog_write(w->audit, w->line.data, w->line.len))
        metrics_log_line_lost(w->metrics);
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void on_signal(int sig)
{
    (void)sig;
    stopping = 1;
    embed_request_stop();
    FCGX_ShutdownPending();
    if (listen_fd >= 0)
        shutdown(listen_fd, SHUT_RDWR);
}

/* The request id: the caller's (nginx passes it, or its own $request_id)
 * when it is plain, else a fresh random one. */
static void request_id_of(const char *given, char out[static 65])
{
    size_t n = given ? strlen(given) : 0;
    if (n >= 8 && id_text_valid(given, 64) && !strchr(given, ':')) {
        memcpy(out, given, n + 1);
        return;
    }
    unsigned char rnd[16];
    randombytes_buf(rnd, sizeof rnd);
    sodium_bin2hex(out, 65, rnd, sizeof rnd);
}

/* Read the body (at most max bytes) into b; -1 when it is longer or cut short. */
static int read_body(FCGX_Stream *in, long length, struct buf *b)
{
    char chunk[16384];
    long left = length;
    while (left > 0) {
        int want = left > (long)sizeof chunk ? (int)sizeof chunk : (int)left;
        int got = FCGX_GetStr(chunk, want, in);
        if (got <= 0 || buf_add(b, chunk, (size_t)got))
            return -1;
        left -= got;
    }
    return 0;
}

/* Where an answer goes: the FastCGI stream. A write that fails or falls
 * short means the connection is gone (nginx gave up on the client, or the
 * client on the socket left): nothing more is written. */
struct sink {
    FCGX_Stream *out;
    size_t bytes; /* handed to the sink of a streamed response */
    int failed;   /* the answer was not delivered in full */
    int error;    /* libfcgi's error then (an errno, or its own negative code) */
};

static void sink_put(struct sink *s, const char *data, size_t n)
{
    while (n > 0 && !s->failed) {
        int chunk = n > INT_MAX ? INT_MAX : (int)n;
        if (FCGX_PutStr(data, chunk, s->out) != chunk) {
            s->failed = 1;
            s->error = FCGX_GetError(s->out);
            return;
        }
        data += chunk;
        n -= (size_t)chunk;
    }
}

/* The sink of a streamed response: straight to the FastCGI stream, counted;
 * -1 once the connection is gone. */
static int fcgx_sink(void *ctx, const char *data, size_t n)
{
    struct sink *s = ctx;
    sink_put(s, data, n);
    s->bytes += n;
    return s->failed ? -1 : 0;
}

static void write_response(struct sink *s, const struct response *res)
{
    struct buf head;
    if (res->streamed)
        return; /* already written through the sink */
    buf_init(&head, 16384);
    response_head(res, res->content_type ? res->content_type : "application/json; charset=utf-8",
                  (long)res->body.len, &head);
    sink_put(s, head.data, head.len);
    if (!res->head_only)
        sink_put(s, res->body.data, res->body.len);
    buf_release(&head);
}

/* Room in libfcgi's stdout buffer the end needs: a record's padding (7),
 * the empty stdout record (8) and FCGI_END_REQUEST (16). */
#define ANSWER_END_BYTES 31

/* End the answer now rather than in FCGX_Finish_r, which cannot say whether
 * it worked: stderr's end (nothing was written to it: no bytes go out), then
 * stdout's, which sends what is buffered and the end records. Those two
 * records must go in one write: an nginx without fastcgi_keep_conn closes
 * the connection once it has read the empty stdout record, so an
 * FCGI_END_REQUEST written after it would fail although the client has the
 * whole answer (knowhub's own include asks for the end record: end_answer's
 * cut off answers need nginx to wait for it). When the buffer
 * has no room for both, what it holds goes first. */
static void finish_answer(FCGX_Request *fr, struct sink *s)
{
    if (!s->failed && fr->out->stop - fr->out->wrNext < ANSWER_END_BYTES && FCGX_FFlush(fr->out)) {
        s->failed = 1;
        s->error = FCGX_GetError(fr->out);
    }
    FCGX_FClose(fr->err);
    if (FCGX_FClose(fr->out) && !s->failed) {
        s->failed = 1;
        s->error = FCGX_GetError(fr->out);
    }
}

/* 1 when the request's KNOWHUB_PROXY_KEY is this process's key (compared in
 * constant time); a wrong one is said on stderr once per thread (never the
 * key: nginx has an old one when it was not reloaded after a change). */
static int proxy_key_matches(struct worker *w, const char *given)
{
    if (!given || !w->proxy_key)
        return 0;
    if (strlen(given) == SERVER_PROXY_KEY_HEX &&
        sodium_memcmp(given, w->proxy_key, SERVER_PROXY_KEY_HEX) == 0)
        return 1;
    if (!w->warned_proxy_key) {
        w->warned_proxy_key = 1;
        fputs("knowhub: a request carried a KNOWHUB_PROXY_KEY that is not this knowhub's: it "
              "is not treated as loopback (reload nginx after the key changed; "
              "docs/operations.md, \"The proxy key\")\n",
              stderr);
    }
    return 0;
}

/* Why an answer did not arrive, for the log line. */
static const char *undelivered_reason(int error)
{
    return error > 0 ? strerror(error) : "the FastCGI stream failed";
}

/* How a request's FastCGI exchange ends. */
enum answer_end {
    ANSWER_ENDED,   /* with its end records (FCGX_Finish_r frees the rest) */
    ANSWER_CUT_OFF, /* without them: the connection is to be closed (FCGX_Free) */
    ANSWER_LIVE,    /* a live stream: the stream thread owns the request now */
};

/* Fill req from the FastCGI parameters (they stay libfcgi's: valid until the
 * request is finished) and the worker's handles. Returns the path it made
 * (req->path, without the query string), which the caller frees after
 * request_release. */
static char *request_from_params(FCGX_ParamArray envp, struct worker *w, const char *request_id,
                                 struct request *req)
{
    const char *uri = FCGX_GetParam("REQUEST_URI", envp);
    const char *proto = FCGX_GetParam("HTTP_X_FORWARDED_PROTO", envp);
    const char *https = FCGX_GetParam("HTTPS", envp);
    char *path;

    request_init(req);
    req->method = FCGX_GetParam("REQUEST_METHOD", envp);
    req->query = FCGX_GetParam("QUERY_STRING", envp);
    req->authorization = FCGX_GetParam("HTTP_AUTHORIZATION", envp);
    req->accept_language = FCGX_GetParam("HTTP_ACCEPT_LANGUAGE", envp);
    req->cookie = FCGX_GetParam("HTTP_COOKIE", envp);
    req->csrf = FCGX_GetParam("HTTP_X_CSRF_TOKEN", envp);
    req->idempotency_key = FCGX_GetParam("HTTP_IDEMPOTENCY_KEY", envp);
    req->mcp_version = FCGX_GetParam("HTTP_MCP_PROTOCOL_VERSION", envp);
    req->mcp_session = FCGX_GetParam("HTTP_MCP_SESSION_ID", envp);
    req->accept = FCGX_GetParam("HTTP_ACCEPT", envp);
    req->content_type = FCGX_GetParam("CONTENT_TYPE", envp);
    req->origin = FCGX_GetParam("HTTP_ORIGIN", envp);
    req->host = FCGX_GetParam("HTTP_HOST", envp);
    req->sec_fetch_site = FCGX_GetParam("HTTP_SEC_FETCH_SITE", envp);
    req->remote_addr = FCGX_GetParam("REMOTE_ADDR", envp);
    req->forwarded_for = FCGX_GetParam("HTTP_X_FORWARDED_FOR", envp);
    req->forwarded = FCGX_GetParam("HTTP_FORWARDED", envp);
    req->proxy_key_ok = proxy_key_matches(w, FCGX_GetParam("KNOWHUB_PROXY_KEY", envp));
    req->https = (https && *https) || (proto && strcasecmp(proto, "https") == 0);
    req->request_id = request_id;
    req->store = w->store;
    req->llm = w->llm;
    req->cache = w->cache;
    req->metrics = w->metrics;
    req->cfg = w->cfg;
    if (!req->method)
        req->method = "GET";
    if (!req->query)
        req->query = "";
    if (!uri)
        uri = "/";
    path = xstrndup(uri, strcspn(uri, "?"));
    req->path = path;
    return path;
}

/* The response of a request: its id, the FastCGI sink for streamed
 * answers, no body for HEAD. */
static void response_for(const struct request *req, const char *request_id, struct sink *sink,
                         struct response *res)
{
    response_init(res, request_id);
    /* X-KnowHub-Node (the host's name by default) is for authenticated
     * callers only: the router sets it once the token is checked. */
    res->node = NULL;
    res->sink = fcgx_sink;
    res->sink_ctx = sink;
    res->head_only = strcmp(req->method, "HEAD") == 0;
}

/* Read the request body (CONTENT_LENGTH bytes, at most HTTP_MAX_BODY) into
 * body: 0, or -1 after writing the error answer to res. */
static int request_body_or_error(FCGX_Request *fr, struct response *res, struct buf *body)
{
    const char *clen = FCGX_GetParam("CONTENT_LENGTH", fr->envp);
    long length = 0;
    if (clen && *clen && parse_long(clen, 0, 1L << 40, &length)) {
        reply_error(res, 200, E_INVALID_REQUEST, "Invalid Content-Length");
        return -1;
    }
    if (length > HTTP_MAX_BODY) {
        error_param_int(res, "max", HTTP_MAX_BODY);
        reply_error_key(res, 413, E_PAYLOAD_TOO_LARGE, "payload_too_large",
                        "The request body exceeds %d bytes", HTTP_MAX_BODY);
        return -1;
    }
    if (read_body(fr->in, length, body)) {
        reply_error(res, 200, E_INVALID_REQUEST, "The request body was cut short");
        return -1;
    }
    return 0;
}

/* Route the request with its body and run its handler; an internal error
 * is said on stderr with the store's message. */
static void dispatch_request(struct worker *w, struct request *req, struct response *res,
                             const struct buf *body)
{
    req->body = body->data;
    req->body_len = body->len;
    router_dispatch(req, res);
    if (res->status == 500)
        fprintf(stderr, "knowhub: %s %s %s: internal error: %s\n", req->request_id, req->method,
                req->path, store_errmsg(w->store));
}

/* Count the request, then end its FastCGI exchange. A whole answer gets its
 * end records (finish_answer); one whose writes failed is counted as
 * undelivered and said once. A streamed answer that failed after its head
 * went out (res->cut_off) gets what was written and no end: the caller
 * closes the connection without FCGI_END_REQUEST, nginx (which waits for
 * it: fastcgi_keep_conn in knowhub_fastcgi.conf) ends the client's reply
 * without its last chunk ("upstream prematurely closed connection"), so no
 * client takes the short answer for a whole one. Counted as undelivered. */
static enum answer_end end_answer(FCGX_Request *fr, struct worker *w, const struct request *req,
                                  const struct response *res, struct sink *s, double seconds)
{
    /* Counted before the end goes out: a client that has the answer finds
     * it in the next scrape. */
    metrics_request(w->metrics, req->route, res->status, seconds);
    metrics_cache_bytes(w->metrics, w->cache ? cache_bytes(w->cache) : 0);
    if (res->streamed && res->cut_off) {
        if (!s->failed && FCGX_FFlush(fr->out)) {
            s->failed = 1;
            s->error = FCGX_GetError(fr->out);
        }
        /* Counted and said before the connection closes, as above. */
        metrics_response_undelivered(w->metrics);
        fprintf(stderr,
                "knowhub: %s %s %s: the streamed answer failed after %zu bytes had gone out: cut "
                "off (the connection closes without the FastCGI end, so the client sees an "
                "incomplete answer)\n",
                req->request_id, req->method, req->path, s->bytes);
        return ANSWER_CUT_OFF;
    }
    finish_answer(fr, s);
    if (s->failed) {
        metrics_response_undelivered(w->metrics);
        /* Once per request: the sink stopped writing at the first failure. */
        fprintf(stderr,
                "knowhub: %s %s %s: the answer was not delivered (%s): the connection "
                "closed while knowhub wrote\n",
                req->request_id, req->method, req->path, undelivered_reason(s->error));
    }
    return ANSWER_ENDED;
}

/* The request's line in the access log ("delivered":false when the answer
 * did not reach the client in full), if there is a log. */
static void log_access(struct worker *w, const struct request *req, const struct response *res,
                       const struct sink *s, int cut_off, double seconds)
{
    const struct route *routes;
    size_t n_routes;
    if (!w->access)
        return;
    routes = router_table(&n_routes);
    struct access_entry e = {
        req->request_id,
        req->who.space,
        req->who.actor,
        req->who.token_id,
        req->route >= 0 ? routes[req->route].method : req->method,
        req->route >= 0 ? routes[req->route].pattern : "unmatched",
        res->status,
        seconds * 1000.0,
        res->streamed    ? s->bytes
        : res->head_only ? 0
                         : res->body.len,
    };
    if (s->failed || cut_off)
        accesslog_undelivered_line(&w->line, &e);
    else
        accesslog_access_line(&w->line, &e);
    if (w->line.len && w->line.data[w->line.len - 1] == '\n' &&
        accesslog_write(w->access, w->line.data, w->line.len))
        metrics_log_line_lost(w->metrics);
}

/* A live stream asked for (res->live): reserve its room, write its head
 * (buffering off in nginx, a first comment so the client has the head at
 * once) and hand the request to the stream thread: ANSWER_LIVE. Refused
 * (no room, streams off) it is an error answer like any: ANSWER_ENDED,
 * and the caller writes it. */
static enum answer_end go_live(FCGX_Request *fr, struct worker *w, struct request *req,
                               struct response *res, struct sink *sink)
{
    static const char first[] = ": knowhub live stream\n\n";
    int room;
    if (res->head_only) {
        res->content_type = "text/event-stream";
        reply_raw(res, 200, NULL);
        return ANSWER_ENDED;
    }
    room = w->live ? live_reserve(w->live, req->who.token_id) : 1;
    if (room) {
        res->live = RESPONSE_LIVE_NONE;
        if (room == 1)
            reply_error(res, 503, E_SERVICE_UNAVAILABLE,
                        "Live streams are off on this node (KNOWHUB_STREAMS_MAX=0, or its "
                        "stream thread did not start)");
        else
            reply_error(res, 429, E_LIMIT_EXCEEDED,
                        room == -1 ? "This node holds as many live streams as it may "
                                     "(KNOWHUB_STREAMS_MAX): try again later"
                                   : "This token holds as many live streams as it may "
                                     "(KNOWHUB_STREAMS_PER_TOKEN): close one first");
        return ANSWER_ENDED;
    }
    buf_adds(&res->headers, "X-Accel-Buffering: no\r\n");
    reply_stream_begin(res, "text/event-stream");
    (void)reply_stream_write(res, first, sizeof first - 1); /* the flush below says */
    if (sink->failed || FCGX_FFlush(fr->out)) {
        live_unreserve(w->live, req->who.token_id);
        sink->failed = 1;
        return ANSWER_CUT_OFF;
    }
    /* Whatever nginx sent after the parameters (an empty body's end) is
     * read now: from here on the connection readable means the client left. */
    while (FCGX_GetChar(fr->in) != EOF)
        ;
    live_adopt(w->live, fr, res->live, (int)req->who.role, req->who.space, req->who.token_id,
               res->live_session);
    return ANSWER_LIVE;
}

/* One request from its parameters to its access line; how its exchange
 * ends is for the caller (worker_main) to carry out. */
static enum answer_end handle(FCGX_Request *fr, struct worker *w)
{
    struct request req;
    struct response res;
    struct buf body;
    struct sink sink = {fr->out, 0, 0, 0};
    char request_id[65];
    char *path;
    struct timespec started;
    double seconds;
    unsigned long long rt;
    enum answer_end end;

    clock_gettime(CLOCK_MONOTONIC, &started);
    request_id_of(FCGX_GetParam("KNOWHUB_REQUEST_ID", fr->envp), request_id);
    w->request_id = request_id;
    path = request_from_params(fr->envp, w, request_id, &req);
    response_for(&req, request_id, &sink, &res);
    buf_init(&body, HTTP_MAX_BODY);
    rt = store_round_trips(w->store);
    if (request_body_or_error(fr, &res, &body) == 0)
        dispatch_request(w, &req, &res, &body);
    rt = store_round_trips(w->store) - rt;
    if (strcmp(store_backend(w->store), "postgresql") == 0)
        metrics_round_trips(w->metrics, req.route, rt);
    if (w->cfg->debug_headers && !res.streamed)
        buf_addf(&res.headers, "X-KnowHub-Round-Trips: %llu\r\n", rt);
    end = res.live ? go_live(fr, w, &req, &res, &sink) : ANSWER_ENDED;
    seconds = seconds_since(&started);
    if (end == ANSWER_LIVE) {
        metrics_request(w->metrics, req.route, res.status, seconds);
    } else if (end == ANSWER_ENDED) {
        write_response(&sink, &res);
        seconds = seconds_since(&started);
        end = end_answer(fr, w, &req, &res, &sink, seconds);
    } else {
        metrics_request(w->metrics, req.route, 500, seconds);
    }
    log_access(w, &req, &res, &sink, end == ANSWER_CUT_OFF, seconds);
    w->request_id = NULL;
    request_release(&req);
    response_release(&res);
    buf_release(&body);
    free(path);
    return end;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    /* On the heap: a live stream's request goes to the stream thread, and
     * this thread takes a new one. */
    FCGX_Request *fr = xmalloc(sizeof *fr);
    sigset_t block;
    /* Signals go to the main thread, whose handler shuts the socket down. */
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    pthread_sigmask(SIG_BLOCK, &block, NULL);
    FCGX_InitRequest(fr, listen_fd, 0);
    while (FCGX_Accept_r(fr) >= 0) {
        /* A cut off answer: the request is freed and its connection closed
         * without the end records; the next FCGX_Accept_r, finding no
         * connection, accepts a new one. */
        switch (handle(fr, w)) {
        case ANSWER_CUT_OFF:
            FCGX_Free(fr, 1);
            break;
        case ANSWER_LIVE:
            fr = xmalloc(sizeof *fr);
            FCGX_InitRequest(fr, listen_fd, 0);
            break;
        default:
            FCGX_Finish_r(fr);
        }
    }
    FCGX_Free(fr, 1);
    free(fr);
    return NULL;
}

/* The job thread: runs queued jobs (slim, embed) one after another, the
 * oldest first (a space has at most one of a kind queued: jobs_start), and
 * after each a batch of entries to embed, so new entries of every space get
 * their vectors however many jobs wait; when neither had work, it merges the
 * full-text indexes' segments. Outside any request, with its own connection
 * and LLM handle. */
/* How often the job thread puts the entries past review_after in the queue. */
#define REVIEW_SWEEP_MS 60000

static void *job_main(void *arg)
{
    struct worker *w = arg;
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    pthread_sigmask(SIG_BLOCK, &block, NULL);
    /* A crash's unfinished jobs run again; should that fail, they wait for the next start. */
    /* This node's claims, for its lease; then what a stop of this node left running. */
    store_set_node(w->store, w->cfg->node, w->cfg->job_lease_s);
    store_ignore(store_job_requeue_running(w->store));
    embed_start(w->store, w->cfg);
    long review_sweep_ms = 0;
    while (!stopping) {
        /* A job, then embedding's own turn: jobs never starve it. */
        int ran = jobs_run_next(w->store, w->llm, w->cfg, w->metrics);
        if (monotonic_ms() >= review_sweep_ms) {
            /* entries past review_after join the review queue (docs/review.md) */
            store_ignore(timing_review_tick(w->store, w->cfg));
            review_sweep_ms = monotonic_ms() + REVIEW_SWEEP_MS;
        }
        int embedded = embed_idle(w->store, w->llm, w->cfg);
        if (embedded > 0)
            ran = 1;
        if (ran == 0)
            ran = store_fts_compact(w->store);
        for (int i = 0; ran <= 0 && i < 4 && !stopping; i++)
            usleep(50 * 1000);
    }
    return NULL;
}

/* Bind and listen on a Unix socket at path (shorter than sun_path), mode
 * 0660: nginx's workers, the group, connect (the umask would leave 0600).
 * Not FCGX_OpenSocket: libfcgi exits the process when bind() fails. The
 * descriptor, or -1 after a message: a socket nginx cannot reach stops the
 * start. */
static int bind_unix_socket(const char *path)
{
    struct sockaddr_un sa;
    int fd;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, path, strlen(path) + 1);
    unlink(path);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) || listen(fd, 1024)) {
        fprintf(stderr, "knowhub: cannot listen on the socket %s: %s\n", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (chmod(path, 0660)) {
        fprintf(stderr,
                "knowhub: cannot give the socket %s mode 0660 (%s): nginx could not connect; "
                "not serving\n",
                path, strerror(errno));
        close(fd);
        unlink(path);
        return -1;
    }
    return fd;
}

/* Listen on path: a Unix socket (mode 0660) appears under its name only
 * once it listens. It is bound and listening under path.new first, then
 * renamed: a connection between bind() and listen() would be refused, and
 * scripts and tests take the file for "ready". A path with no room for
 * ".new" is bound in place. host:port is TCP (libfcgi), opened as it is.
 * The listening descriptor, or -1 after a message on stderr. */
static int open_listener(const char *path)
{
    const size_t max = sizeof(((struct sockaddr_un *)0)->sun_path) - 1;
    struct buf tmp;
    int fd;
    if (strchr(path, ':'))
        return FCGX_OpenSocket(path, 1024); /* libfcgi says why and exits when it cannot */
    if (strlen(path) > max) {
        fprintf(stderr, "knowhub: the socket path %s is longer than %zu bytes\n", path, max);
        return -1;
    }
    if (strlen(path) + strlen(".new") > max)
        return bind_unix_socket(path);
    buf_init(&tmp, 4096);
    buf_addf(&tmp, "%s.new", path);
    if ((fd = bind_unix_socket(tmp.data)) >= 0 && rename(tmp.data, path)) {
        fprintf(stderr, "knowhub: cannot rename the socket %s to %s: %s\n", tmp.data, path,
                strerror(errno));
        close(fd);
        unlink(tmp.data);
        fd = -1;
    }
    buf_release(&tmp);
    return fd;
}

/* Open $KNOWHUB_DATA/logs/<name>, or NULL when logs are off or it cannot. */
static struct accesslog *open_log(const struct config *cfg, const char *name)
{
    struct buf path;
    struct accesslog *log;
    if (!cfg->access_log)
        return NULL;
    buf_init(&path, 8192);
    buf_addf(&path, "%s/logs/%s", cfg->data_dir, name);
    log = accesslog_open(path.data, cfg->log_max_bytes, cfg->log_keep);
    buf_release(&path);
    return log;
}

/* Give a thread its counters and the logs. */
static void worker_attach(struct worker *w, struct metrics *m, struct accesslog *access,
                          struct accesslog *audit)
{
    w->metrics = m;
    w->access = access;
    w->audit = audit;
    buf_init(&w->line, 64 * 1024);
    store_set_metrics(w->store, m);
    llm_set_metrics(w->llm, m);
    if (audit)
        store_set_audit_hook(w->store, log_audit, w);
}

/* A thread's LLM client, or NULL after a message: knowhub does not start
 * with a thread that could never call the LLM. */
static struct llm *new_llm_client(void)
{
    struct llm *llm = llm_new();
    if (!llm)
        fputs("knowhub: cannot make an HTTP client for the LLM (curl_easy_init failed: out of "
              "memory, or libcurl did not initialise); not serving\n",
              stderr);
    return llm;
}

/* Every live stream holds a connection: the soft limit of open files goes
 * up to the hard one (1024 is a common soft limit). */
static void raise_open_files(void)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
        r.rlim_cur = r.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &r); /* the old limit stays: fewer streams fit */
    }
}

static int serve(const struct config *cfg)
{
    struct buf sock, store_said;
    struct metrics_set *metrics = NULL;
    struct accesslog *access = NULL, *audit = NULL;
    struct timespec now;
    const struct route *routes;
    size_t n_routes;
    struct worker *workers = NULL, jobber = {0};
    struct live *live = NULL;
    int jobber_started = 0;
    struct sigaction sa;
    int rc = 1, started = 0;
    char proxy_key[SERVER_PROXY_KEY_HEX + 1] = "";

    buf_init(&sock, 4096);
    buf_init(&store_said, 8192);
    if (server_prepare_dirs(cfg))
        goto out;
    server_socket_path(cfg, &sock);
    /* Before the socket: once it is there, nginx may start and read the key's include. */
    if (server_proxy_key(cfg, proxy_key))
        goto out;
    /* Writers waiting for the write lock hold threads: half of them at most
     * wait long, so reads are answered while a write lock is held long. */
    store_set_writers_waiting(cfg->threads / 2);
    store_set_space_entries(cfg->space_entries);
    auth_cache_configure(cfg->token_cache_ms);
    vindex_configure(cfg->vector_bytes, cfg->vector_space_bytes);
    lindex_configure(cfg->search_index_bytes);
    workers = xcalloc((size_t)cfg->threads, sizeof *workers);
    for (int i = 0; i < cfg->threads; i++) {
        workers[i].cfg = cfg;
        /* The first open migrates (after a backup) or refuses a newer
         * database, with a message; the others find it current. */
        if (!(workers[i].store = server_open_store(cfg)))
            goto out;
        workers[i].proxy_key = proxy_key;
        if (!(workers[i].llm = new_llm_client()))
            goto out;
        workers[i].cache =
            cache_new((size_t)cfg->cache_slots, cfg->cache_bytes / (size_t)cfg->threads);
    }
    jobber.cfg = cfg;
    if (!(jobber.llm = new_llm_client()))
        goto out;
    if (server_first_start(cfg, workers[0].store))
        goto out;
    /* Threads 0..n-1 are the workers, thread n the job thread, n+1 the stream thread. */
    clock_gettime(CLOCK_REALTIME, &now);
    metrics = metrics_set_new((size_t)cfg->threads + 2, (double)now.tv_sec + now.tv_nsec / 1e9);
    routes = router_table(&n_routes);
    for (size_t r = 0; r < n_routes; r++)
        metrics_set_route(metrics, r, routes[r].method, routes[r].pattern);
    access = open_log(cfg, "access.jsonl");
    audit = open_log(cfg, "audit.jsonl");
    for (int i = 0; i < cfg->threads; i++)
        worker_attach(&workers[i], metrics_of(metrics, (size_t)i), access, audit);
    if (agentlog_mode(cfg) != AGENTLOG_OFF)
        agentlog_cleanup(cfg, 30);
    if (FCGX_Init()) {
        fputs("knowhub: FCGX_Init failed\n", stderr);
        goto out;
    }
    /* Handlers first: the socket tells scripts we are ready, and a SIGTERM
     * right after that must stop us cleanly, not by the default action. */
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: accept() must return */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    listen_fd = open_listener(sock.data);
    if (listen_fd < 0)
        goto out; /* open_listener said why */

    /* Before the workers: a stream may be asked for with the first request. */
    raise_open_files();
    live = live_start(cfg, metrics_of(metrics, (size_t)cfg->threads + 1));
    for (int i = 0; i < cfg->threads; i++)
        workers[i].live = live;
    for (; started < cfg->threads; started++)
        if (pthread_create(&workers[started].thread, NULL, worker_main, &workers[started])) {
            fputs("knowhub: cannot start a worker thread\n", stderr);
            on_signal(0);
            break;
        }
    if ((jobber.store = server_open_store(cfg))) {
        worker_attach(&jobber, metrics_of(metrics, (size_t)cfg->threads), access, audit);
        jobber_started = pthread_create(&jobber.thread, NULL, job_main, &jobber) == 0;
    }
    if (!jobber_started)
        fputs("knowhub: the job thread did not start; jobs will wait\n", stderr);
    server_store_said(cfg, &store_said);
    fprintf(stderr, "knowhub: serving on %s with %d threads, store %s\n", sock.data, started,
            store_said.data);
    for (int i = 0; i < started; i++)
        pthread_join(workers[i].thread, NULL);
    live_stop(live); /* every stream ends whole */
    stopping = 1;
    embed_request_stop();
    if (jobber_started)
        pthread_join(jobber.thread, NULL);
    rc = started == cfg->threads ? 0 : 1;
    unlink(sock.data);
    fputs("knowhub: stopped\n", stderr);
out:
    if (listen_fd >= 0)
        close(listen_fd);
    for (int i = 0; workers && i < cfg->threads; i++) {
        store_close(workers[i].store);
        llm_free(workers[i].llm);
        cache_free(workers[i].cache);
        buf_release(&workers[i].line);
    }
    store_close(jobber.store);
    llm_free(jobber.llm);
    buf_release(&jobber.line);
    accesslog_close(access);
    accesslog_close(audit);
    metrics_set_free(metrics);
    free(workers);
    buf_release(&sock);
    buf_release(&store_said);
    sodium_memzero(proxy_key, sizeof proxy_key);
    return rc;
}

/* The operator commands: their line in knowhub's usage (after the name),
 * and their help (knowhub CMD --help: the synopsis, then what it does). */
static const struct {
    const char *name;
    const char *line;
    const char *help;
} operator_commands[] = {
    {"serve", "run the FastCGI server on $KNOWHUB_SOCKET",
     "serve\n\nRun the FastCGI server on $KNOWHUB_SOCKET\n"
     "(default $KNOWHUB_DATA/run/knowhub.sock).\n"},
    {"init", "create $KNOWHUB_DATA, the database and the first admin token",
     "init\n\nCreate $KNOWHUB_DATA, the database and the first admin token; on a node\n"
     "with tokens but no $KNOWHUB_DATA/admin.token, write a new admin token there.\n"},
    {"token", "create|list|revoke: API tokens (knowhub token --help)",
     "token create --space NAME --role admin|editor|agent|reader [--label TEXT]\n"
     "       knowhub token list\n"
     "       knowhub token revoke ID\n\n"
     "Create (the token is printed on stdout, once), list and revoke API tokens.\n"},
    {"import", "DIR|FILE.jsonl|- [--space S] ...: load a knowledge tree, notes or an export",
     "import DIR|FILE.jsonl|- [--space S] [--on-conflict skip|overwrite|rename] [--flatten]\n\n"
     "Load a knowledge tree (DIR with rules/ or experiences/), a plain folder of notes\n"
     "(every .md an experience; --flatten for deep trees) or the JSON Lines export\n"
     "writes (a file, or - for stdin). Also AGENTS.md, CLAUDE.md, a folder with\n"
     ".cursor/rules, .mdc or SKILL.md files, or a tar of those (--format F says\n"
     "agents_md, claude_md, cursor or skills when the names do not). Exit 0\n"
     "imported (skips are not failures), 1 the source or the database failed,\n"
     "2 usage, 3 some documents refused.\n"},
    {"export", "DIR [--space S]: every document as rules/ and experiences/ files",
     "export DIR [--space S]\n"
     "       knowhub export FILE.jsonl|- --format jsonl [--space S]\n"
     "       knowhub export FILE.md|DIR|- --format agents_md|claude_md [--space S]\n"
     "       knowhub export DIR --format cursor|skills [--space S]\n\n"
     "Write every document as rules/ and experiences/ files, or as JSON Lines\n"
     "(what GET /api/knowledge/export answers; import reads it back); or the rules\n"
     "as AGENTS.md, CLAUDE.md or DIR/.cursor/rules/*.mdc, the experiences as Agent\n"
     "Skills folders DIR/NAME/SKILL.md.\n"},
    {"backup", "FILE [--force]: an online copy of the database (safe while serving)",
     "backup FILE [--force]\n\nAn online copy of the database (safe while serving), through a\n"
     "temporary file; an existing FILE is replaced only with --force.\n"},
    {"check", "integrity, full-text index against the table, statements",
     "check\n\nIntegrity, full-text index against the table, statements (exit 1 on a\n"
     "problem).\n"},
    {"login-link", "print the panel's one-click login link for the admin token",
     "login-link\n\nPrint the panel's one-click login link for the admin token\n"
     "(at http://$KNOWHUB_HOST:$KNOWHUB_PORT/, default 127.0.0.1:8080).\n"},
    {"migrate-to", "URL: copy the SQLite database into an empty PostgreSQL one",
     "migrate-to URL\n\nCopy $KNOWHUB_DATA/knowhub.db into an empty PostgreSQL database,\n"
     "checked table by table (docs/operations.md).\n"},
    {"version", "print knowhub's version, its stores and libraries",
     "version\n\nPrint knowhub's version (first line), the stores it was built with, the\n"
     "versions of its libraries and the store this environment points at.\n"},
};

#define NOPERATOR (sizeof operator_commands / sizeof operator_commands[0])

/* knowhub's usage: on stdout with exit 0 when asked for (help, --help),
 * on stderr with exit 2 after a wrong command line. */
static int usage(FILE *out, int status)
{
    fputs("usage: knowhub COMMAND [ARGS]   (knowhub help COMMAND, or knowhub COMMAND --help)\n\n",
          out);
    remote_usage(out);
    fputs("\nOperator commands (on $KNOWHUB_DATA, on the server's host):\n", out);
    for (size_t i = 0; i < NOPERATOR; i++)
        fprintf(out, "  %-11s %s\n", operator_commands[i].name, operator_commands[i].line);
    fputs("\nEnvironment and exit statuses: man knowhub, docs/cli.md, docs/operations.md.\n", out);
    return status;
}

/* knowhub help [COMMAND], knowhub COMMAND --help: on stdout, exit 0. */
static int help(const char *name)
{
    if (!name)
        return usage(stdout, 0);
    if (remote_is_command(name)) {
        char help_arg[] = "--help";
        char *argv[] = {(char *)name, help_arg, NULL};
        return remote_main(NULL, 2, argv);
    }
    for (size_t i = 0; i < NOPERATOR; i++)
        if (!strcmp(operator_commands[i].name, name)) {
            printf("usage: knowhub %s", operator_commands[i].help);
            return 0;
        }
    fprintf(stderr, "knowhub: no command '%s'\n", name);
    return usage(stderr, 2);
}

int main(int argc, char **argv)
{
    struct config cfg;
    store_global_init();
    routes_install();
    llm_global_init();
    if (sodium_init() < 0) {
        fputs("knowhub: libsodium failed to initialise\n", stderr);
        return 1;
    }
    config_from_env(&cfg);
    if (argc < 2)
        return usage(stderr, 2);
    if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
        return argc <= 3 ? help(argc == 3 ? argv[2] : NULL) : usage(stderr, 2);
    if (remote_is_command(argv[1]))
        return remote_main(&cfg, argc - 1, argv + 1);
    if (argc == 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h")))
        return help(argv[1]);
    /* What knowhub creates under $KNOWHUB_DATA (database, WAL, tokens,
     * backups) is the owner's alone, whatever the caller's umask; export
     * writes plain Markdown for the operator and keeps it. */
    if (strcmp(argv[1], "export") != 0)
        umask(077);
    if (strcmp(argv[1], "serve") == 0)
        return argc == 2 ? serve(&cfg) : usage(stderr, 2);
    if (strcmp(argv[1], "init") == 0)
        return cli_init(&cfg, argc - 2, argv + 2);
    if (strcmp(argv[1], "token") == 0)
        return cli_token(&cfg, argc - 2, argv + 2);
    if (strcmp(argv[1], "import") == 0)
        return cli_import(&cfg, argc - 2, argv + 2);
    if (strcmp(argv[1], "export") == 0)
        return cli_export(&cfg, argc - 2, argv + 2);
    if (strcmp(argv[1], "backup") == 0)
        return cli_backup(&cfg, argc - 2, argv + 2);
    if (strcmp(argv[1], "check") == 0)
        return cli_check(&cfg, argc - 2, argv + 2);
    if (strcmp(argv[1], "login-link") == 0)
        return cli_login_link(&cfg, argc - 2, argv + 2);
    if (strcmp(argv[1], "migrate-to") == 0)
        return cli_migrate_to(&cfg, argc - 2, argv + 2);
    if (strcmp(argv[1], "version") == 0)
        return cli_version(&cfg, argc - 2, argv + 2);
    fprintf(stderr, "knowhub: no command '%s'\n", argv[1]);
    return usage(stderr, 2);
}
