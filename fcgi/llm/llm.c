/* llm: OpenAI-compatible chat completions over libcurl (the only file that
 * includes curl.h), with the ledger and the reasoning log. */
#include "llm/llm.h"
#include "base/error.h"
#include "llm/agentlog.h"
#include "base/config.h"
#include "base/jfield.h"
#include "base/metrics.h"
#include "base/util.h"

#include <curl/curl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define LLM_MAX_REPLY (4 * 1024 * 1024)
#define LLM_CONNECT_TIMEOUT_MS 5000L

struct llm {
    CURL *curl;
    struct metrics *metrics;
};

void llm_global_init(void)
{
    CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
    /* Then every llm_new fails: `knowhub serve` stops at its first (main.c). */
    if (rc != CURLE_OK)
        fprintf(stderr, "knowhub: libcurl did not initialise: %s\n", curl_easy_strerror(rc));
}

const char *llm_curl_version(void)
{
    return curl_version_info(CURLVERSION_NOW)->version;
}

struct llm *llm_new(void)
{
    struct llm *llm = xcalloc(1, sizeof *llm);
    llm->curl = curl_easy_init();
    if (!llm->curl) {
        free(llm);
        return NULL;
    }
    return llm;
}

void llm_free(struct llm *llm)
{
    if (!llm)
        return;
    curl_easy_cleanup(llm->curl);
    free(llm);
}

void llm_set_metrics(struct llm *llm, struct metrics *m)
{
    if (llm)
        llm->metrics = m;
}

struct json_object *llm_message(const char *role, const char *content)
{
    struct json_object *m = json_object_new_object();
    json_object_object_add(m, "role", json_object_new_string(role));
    json_object_object_add(m, "content", json_object_new_string(content));
    return m;
}

void llm_reply_init(struct llm_reply *r)
{
    memset(r, 0, sizeof *r);
    buf_init(&r->text, LLM_MAX_REPLY);
    error_init(&r->err);
}

void llm_reply_release(struct llm_reply *r)
{
    buf_release(&r->text);
    error_release(&r->err);
}

int llm_model_from_json(const struct config *cfg, struct json_object *v, const char **out)
{
    struct json_object *name = NULL;
    *out = NULL;
    if (!v || json_object_is_type(v, json_type_null))
        return 0;
    if (json_object_is_type(v, json_type_object)) {
        if (!json_object_object_get_ex(v, "model", &name) || !jf_str(name))
            json_object_object_get_ex(v, "id", &name);
        v = name;
    }
    if (!jf_str(v) || !*jf_str(v))
        return json_object_is_type(v, json_type_object) || !v ? 0 : -1;
    if (!config_model_allowed(cfg, jf_str(v)))
        return -1;
    *out = jf_str(v);
    return 0;
}

static size_t collect(char *data, size_t size, size_t n, void *arg)
{
    struct buf *b = arg;
    return buf_add(b, data, size * n) ? 0 : size * n; /* 0 aborts an oversize reply */
}

/* Case-insensitive (ASCII) substring test. */
static int has(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return 1;
    return 0;
}

static void fail(struct error *err, const char *code, int retry, const char *message)
{
    error_set(err, code, NULL, "%s", message);
    err->retry = retry;
}

/* Map an HTTP error answer of `who` ("LLM", "embeddings server") to an LLM_*
 * code, as the reference does by matching the provider's message. */
static void classify_http(struct error *e, const char *who, long status, const char *body)
{
    struct json_object *j = json_parse_stored(body), *err = NULL, *msg = NULL;
    const char *text = "";
    char message[512];
    if (j && json_object_object_get_ex(j, "error", &err)) {
        if (json_object_is_type(err, json_type_object) &&
            json_object_object_get_ex(err, "message", &msg))
            text = json_object_get_string(msg);
        else if (jf_str(err))
            text = jf_str(err);
    }
    snprintf(message, sizeof message, "The %s answered HTTP %ld%s%.*s", who, status,
             *text ? ": " : "", (int)utf8_fit(text, strlen(text), 300), text);
    if (status == 401 || status == 403)
        fail(e, "LLM_AUTH_FAILED", 0, message);
    else if (status == 429)
        fail(e, "LLM_RATE_LIMIT", 1, message);
    else if (status == 413 ||
             (has(text, "context") && (has(text, "length") || has(text, "window"))))
        fail(e, "LLM_CONTEXT_TOO_LONG", 0, message);
    else if (has(text, "maximum") && has(text, "token"))
        fail(e, "LLM_CONTEXT_TOO_LONG", 0, message);
    else if (status == 404 ||
             (has(text, "model") && (has(text, "not found") || has(text, "does not exist"))))
        fail(e, "LLM_MODEL_NOT_FOUND", 0, message);
    else if (has(text, "content") && (has(text, "filter") || has(text, "policy")))
        fail(e, "LLM_CONTENT_FILTERED", 0, message);
    else if (status == 408 || status == 504)
        fail(e, "LLM_TIMEOUT", 1, message);
    else if (status >= 500)
        fail(e, "LLM_SERVICE_ERROR", 1, message);
    else
        fail(e, "LLM_UNKNOWN_ERROR", 0, message);
    json_object_put(j);
}

/* Take the assistant's text out of a 200 answer. */
static void parse_success(struct llm_reply *r, const char *body)
{
    struct json_object *j = json_parse_stored(body), *choices, *first, *message, *content, *finish,
                       *usage, *v;
    if (!j || !json_object_object_get_ex(j, "choices", &choices) ||
        !json_object_is_type(choices, json_type_array) ||
        !(first = json_object_array_get_idx(choices, 0)) ||
        !json_object_object_get_ex(first, "message", &message) ||
        !json_object_object_get_ex(message, "content", &content)) {
        fail(&r->err, "LLM_UNKNOWN_ERROR", 0, "The LLM's answer was not a chat completion");
        json_object_put(j);
        return;
    }
    if (json_object_object_get_ex(first, "finish_reason", &finish) && jf_str(finish))
        utf8_copy(r->finish_reason, sizeof r->finish_reason, jf_str(finish));
    if (json_object_object_get_ex(j, "usage", &usage)) {
        if (json_object_object_get_ex(usage, "prompt_tokens", &v))
            r->prompt_tokens = (long)json_object_get_int64(v);
        if (json_object_object_get_ex(usage, "completion_tokens", &v))
            r->completion_tokens = (long)json_object_get_int64(v);
    }
    if (strcmp(r->finish_reason, "content_filter") == 0)
        fail(&r->err, "LLM_CONTENT_FILTERED", 0, "The LLM's content filter stopped the answer");
    else if (!jf_str(content) || !*jf_str(content))
        fail(&r->err, "LLM_UNKNOWN_ERROR", 0, "The LLM gave an empty answer");
    else if (buf_adds(&r->text, jf_str(content)))
        fail(&r->err, "LLM_UNKNOWN_ERROR", 0, "The LLM's answer was larger than 4 MiB");
    json_object_put(j);
}

/* Where and how to POST: the server's base URL, the path under it, its
 * key, and its name in messages. */
struct endpoint {
    const char *base, *path, *key, *who;
};

/* One HTTP exchange: POST body to the endpoint; a 200 answer's body goes to
 * *answer (capped by its limit) and 1 is returned; otherwise err is set and
 * 0 returned, with *retry set when another attempt may help. */
static int post(CURL *c, const struct endpoint *ep, const char *body, long timeout_ms,
                struct buf *answer, struct error *err, int *retry)
{
    struct buf url, auth;
    struct curl_slist *headers = NULL;
    CURLcode cc;
    long status = 0;
    int ok = 0;
    char message[160];

    *retry = 0;
    buf_init(&url, 4096);
    buf_init(&auth, 4096);
    {
        size_t n = strlen(ep->base);
        while (n && ep->base[n - 1] == '/')
            n--;
        buf_add(&url, ep->base, n);
        buf_adds(&url, ep->path);
    }
    headers = curl_slist_append(headers, "Content-Type: application/json");
    if (ep->key && *ep->key) {
        buf_addf(&auth, "Authorization: Bearer %s", ep->key);
        headers = curl_slist_append(headers, auth.data);
    }
    if (buf_failed(&url) || buf_failed(&auth)) {
        /* One check for every append above: never call a cut-short URL or key. */
        snprintf(message, sizeof message, "The %s's base URL or API key is too long", ep->who);
        fail(err, "LLM_SERVICE_ERROR", 0, message);
        goto out;
    }
    curl_easy_reset(c);
    curl_easy_setopt(c, CURLOPT_URL, url.data);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, LLM_CONNECT_TIMEOUT_MS);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, answer);
    cc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (cc == CURLE_OPERATION_TIMEDOUT) {
        snprintf(message, sizeof message, "The %s did not answer in time", ep->who);
        fail(err, "LLM_TIMEOUT", 1, message);
    } else if (cc == CURLE_WRITE_ERROR) {
        snprintf(message, sizeof message, "The %s's answer was larger than %zu MiB", ep->who,
                 answer->max >> 20);
        fail(err, "LLM_UNKNOWN_ERROR", 0, message);
    } else if (cc != CURLE_OK) {
        snprintf(message, sizeof message, "The %s could not be reached", ep->who);
        fail(err, "LLM_SERVICE_ERROR", 1, message);
        *retry = 1;
    } else if (status != 200) {
        classify_http(err, ep->who, status, answer->data);
        *retry = status == 429 || status >= 500;
    } else {
        ok = 1;
    }
out:
    curl_slist_free_all(headers);
    memset(auth.data, 0, auth.len); /* the key does not linger in freed memory */
    buf_release(&url);
    buf_release(&auth);
    return ok;
}

/* post, once more after a short pause when the failure may pass and the
 * time allows. Returns 1 with the answer, or 0 with err set. */
static int post_retry(CURL *c, const struct endpoint *ep, const char *body, long timeout,
                      struct buf *answer, struct error *err)
{
    long started = monotonic_ms(), spent;
    int retry;
    if (post(c, ep, body, timeout, answer, err, &retry))
        return 1;
    spent = monotonic_ms() - started;
    if (!retry || spent + 500 >= timeout)
        return 0;
    usleep(500 * 1000);
    buf_reset(answer);
    err->code = NULL;
    return post(c, ep, body, timeout - spent - 500, answer, err, &retry);
}

int llm_chat(struct llm *llm, const struct config *cfg, const struct llm_request *req,
             struct llm_reply *r)
{
    struct llm *own = NULL;
    struct json_object *body, *event;
    const char *model = req->model ? req->model : cfg->llm_model;
    long started, timeout = req->timeout_ms > 0 ? req->timeout_ms : cfg->llm_timeout_ms;
    char *text;

    buf_reset(&r->text);
    r->err.code = NULL;
    r->model = NULL; /* set once a call is made: the ledger records calls, not refusals */
    if (!config_llm_configured(cfg)) {
        fail(&r->err, "LLM_NOT_CONFIGURED", 0,
             "No LLM is configured (KNOWHUB_LLM_BASE_URL is not set)");
        return -1;
    }
    if (!llm && !(llm = own = llm_new())) {
        fail(&r->err, "LLM_UNKNOWN_ERROR", 0, "Cannot start an HTTP client");
        return -1;
    }
    r->model = model;
    body = json_object_new_object();
    json_object_object_add(body, "model", json_object_new_string(model));
    json_object_object_add(body, "messages", json_object_get(req->messages));
    json_object_object_add(body, "temperature", json_object_new_double(0.2));
    if (req->max_tokens > 0)
        json_object_object_add(body, "max_tokens", json_object_new_int(req->max_tokens));
    text = xstrdup(json_text(body));
    json_object_put(body);

    event = json_object_new_object();
    json_object_object_add(event, "model", json_object_new_string(model));
    json_object_object_add(event, "purpose", json_object_new_string(req->purpose));
    json_object_object_add(event, "messages", json_object_get(req->messages));
    agentlog_write(cfg, req->actor, req->session_id, req->purpose, "llm_request", event);

    started = monotonic_ms();
    {
        struct endpoint ep = {cfg->llm_base_url, "/chat/completions", cfg->llm_api_key, "LLM"};
        struct buf answer;
        buf_init(&answer, LLM_MAX_REPLY);
        if (post_retry(llm->curl, &ep, text, timeout, &answer, &r->err))
            parse_success(r, answer.data);
        buf_release(&answer);
    }
    r->latency_ms = monotonic_ms() - started;
    free(text);

    metrics_llm_call(llm->metrics, req->purpose, r->err.code ? r->err.code : "ok", r->prompt_tokens,
                     r->completion_tokens, r->latency_ms);
    event = json_object_new_object();
    json_object_object_add(event, "model", json_object_new_string(model));
    json_object_object_add(event, "latency_ms", json_object_new_int64(r->latency_ms));
    json_object_object_add(event, "finish_reason", json_object_new_string(r->finish_reason));
    json_object_object_add(event, "prompt_tokens", json_object_new_int64(r->prompt_tokens));
    json_object_object_add(event, "completion_tokens", json_object_new_int64(r->completion_tokens));
    if (r->err.code)
        json_object_object_add(event, "error", json_object_new_string(r->err.code));
    else
        json_object_object_add(event, "messages", json_object_new_string(r->text.data));
    agentlog_write(cfg, req->actor, req->session_id, req->purpose, "llm_response", event);
    llm_free(own);
    return r->err.code ? -1 : 0;
}

/* ---- embeddings ---- */

#define EMBED_MAX_REPLY (64 * 1024 * 1024) /* whatever the batch */

void embed_reply_init(struct embed_reply *r)
{
    memset(r, 0, sizeof *r);
    error_init(&r->err);
}

void embed_reply_release(struct embed_reply *r)
{
    free(r->vec);
    error_release(&r->err);
    memset(r, 0, sizeof *r);
}

void llm_parse_embeddings(struct embed_reply *r, const char *body, size_t n, int expect_dim)
{
    struct json_object *j = json_parse_stored(body), *data, *usage, *v;
    unsigned char *filled = NULL;
    const char *bad = NULL;
    size_t len;
    if (!j || !json_object_object_get_ex(j, "data", &data) ||
        !json_object_is_type(data, json_type_array)) {
        bad = "was not a list of embeddings";
        goto out;
    }
    if ((len = json_object_array_length(data)) != n) {
        bad = "had a different number of vectors than texts";
        goto out;
    }
    filled = xcalloc(n + 1, 1);
    for (size_t i = 0; i < n; i++) {
        struct json_object *item = json_object_array_get_idx(data, i), *e, *ix;
        size_t at = i, d;
        if (json_object_object_get_ex(item, "index", &ix)) {
            int64_t k = json_object_is_type(ix, json_type_int) ? json_object_get_int64(ix) : -1;
            if (k < 0 || (uint64_t)k >= n) {
                bad = "numbered a vector out of range";
                goto out;
            }
            at = (size_t)k;
        }
        if (filled[at] || !json_object_object_get_ex(item, "embedding", &e) ||
            !json_object_is_type(e, json_type_array)) {
            bad = "was not one embedding per text";
            goto out;
        }
        d = json_object_array_length(e);
        if (d < 1 || d > EMBED_MAX_DIM || (r->dim && d != (size_t)r->dim) ||
            (expect_dim > 0 && d != (size_t)expect_dim)) {
            bad = r->dim || expect_dim > 0 ? "changed the vectors' dimension"
                                           : "had a vector of 0 or over 8192 dimensions";
            goto out;
        }
        if (!r->dim) {
            r->dim = (int)d;
            r->vec = xcalloc(n * d, sizeof *r->vec);
        }
        for (size_t k = 0; k < d; k++) {
            struct json_object *x = json_object_array_get_idx(e, k);
            double f = json_object_get_double(x);
            if ((!json_object_is_type(x, json_type_double) &&
                 !json_object_is_type(x, json_type_int)) ||
                !isfinite(f) || f > 1e30 || f < -1e30) {
                bad = "held a value that is not a finite number";
                goto out;
            }
            r->vec[at * d + k] = (float)f;
        }
        filled[at] = 1;
    }
    r->n = n;
    if (json_object_object_get_ex(j, "usage", &usage) &&
        json_object_object_get_ex(usage, "prompt_tokens", &v))
        r->prompt_tokens = (long)json_object_get_int64(v);
out:
    if (bad) {
        char message[160];
        snprintf(message, sizeof message, "The embeddings server's answer %s", bad);
        fail(&r->err, "LLM_UNKNOWN_ERROR", 0, message);
        free(r->vec);
        r->vec = NULL;
        r->dim = 0;
        r->n = 0;
    }
    free(filled);
    json_object_put(j);
}

int llm_embed(struct llm *llm, const struct config *cfg, const char *const *texts, size_t n,
              int expect_dim, long timeout_ms, struct embed_reply *r)
{
    struct llm *own = NULL;
    struct json_object *body, *input;
    struct buf answer;
    long started;
    char *text;

    free(r->vec);
    r->vec = NULL;
    r->n = 0;
    r->dim = 0;
    r->err.code = NULL;
    r->model = NULL;
    r->prompt_tokens = r->latency_ms = 0;
    if (!config_embed_configured(cfg)) {
        fail(&r->err, "LLM_NOT_CONFIGURED", 0,
             "No embeddings server is configured (KNOWHUB_EMBED_URL is not set)");
        return -1;
    }
    if (n == 0)
        return 0;
    if (!llm && !(llm = own = llm_new())) {
        fail(&r->err, "LLM_UNKNOWN_ERROR", 0, "Cannot start an HTTP client");
        return -1;
    }
    r->model = cfg->embed_model;
    body = json_object_new_object();
    input = json_object_new_array_ext((int)n);
    for (size_t i = 0; i < n; i++)
        json_object_array_add(input, json_object_new_string(texts[i]));
    json_object_object_add(body, "model", json_object_new_string(cfg->embed_model));
    json_object_object_add(body, "input", input);
    json_object_object_add(body, "encoding_format", json_object_new_string("float"));
    text = xstrdup(json_text(body));
    json_object_put(body);

    started = monotonic_ms();
    /* n vectors of the known dimension (else the largest allowed), about 32
     * bytes a number at most: a lying server cannot make json-c hold more. */
    {
        size_t per = (size_t)(expect_dim > 0 ? expect_dim : EMBED_MAX_DIM) * 32;
        size_t cap = 65536 + n * per;
        buf_init(&answer, cap < EMBED_MAX_REPLY ? cap : EMBED_MAX_REPLY);
    }
    {
        struct endpoint ep = {cfg->embed_url, "/embeddings", cfg->embed_key, "embeddings server"};
        if (post_retry(llm->curl, &ep, text, timeout_ms > 0 ? timeout_ms : cfg->embed_timeout_ms,
                       &answer, &r->err))
            llm_parse_embeddings(r, answer.data, n, expect_dim);
    }
    buf_release(&answer);
    r->latency_ms = monotonic_ms() - started;
    free(text);
    metrics_llm_call(llm->metrics, "embed", r->err.code ? r->err.code : "ok", r->prompt_tokens, 0,
                     r->latency_ms);
    llm_free(own);
    return r->err.code ? -1 : 0;
}
