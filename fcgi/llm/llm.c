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
    curl_global_init(CURL_GLOBAL_DEFAULT);
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

static void fail(struct llm_reply *r, const char *code, int retry, const char *message)
{
    error_set(&r->err, code, NULL, "%s", message);
    r->err.retry = retry;
}

/* Map an HTTP error answer to an LLM_* code, as the reference does by
 * matching the provider's message. */
static void classify_http(struct llm_reply *r, long status, const char *body)
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
    snprintf(message, sizeof message, "The LLM answered HTTP %ld%s%.300s", status,
             *text ? ": " : "", text);
    if (status == 401 || status == 403)
        fail(r, "LLM_AUTH_FAILED", 0, message);
    else if (status == 429)
        fail(r, "LLM_RATE_LIMIT", 1, message);
    else if (has(text, "context") && (has(text, "length") || has(text, "window")))
        fail(r, "LLM_CONTEXT_TOO_LONG", 0, message);
    else if (has(text, "maximum") && has(text, "token"))
        fail(r, "LLM_CONTEXT_TOO_LONG", 0, message);
    else if (status == 404 ||
             (has(text, "model") && (has(text, "not found") || has(text, "does not exist"))))
        fail(r, "LLM_MODEL_NOT_FOUND", 0, message);
    else if (has(text, "content") && (has(text, "filter") || has(text, "policy")))
        fail(r, "LLM_CONTENT_FILTERED", 0, message);
    else if (status == 408 || status == 504)
        fail(r, "LLM_TIMEOUT", 1, message);
    else if (status >= 500)
        fail(r, "LLM_SERVICE_ERROR", 1, message);
    else
        fail(r, "LLM_UNKNOWN_ERROR", 0, message);
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
        fail(r, "LLM_UNKNOWN_ERROR", 0, "The LLM's answer was not a chat completion");
        json_object_put(j);
        return;
    }
    if (json_object_object_get_ex(first, "finish_reason", &finish) && jf_str(finish))
        snprintf(r->finish_reason, sizeof r->finish_reason, "%s", jf_str(finish));
    if (json_object_object_get_ex(j, "usage", &usage)) {
        if (json_object_object_get_ex(usage, "prompt_tokens", &v))
            r->prompt_tokens = (long)json_object_get_int64(v);
        if (json_object_object_get_ex(usage, "completion_tokens", &v))
            r->completion_tokens = (long)json_object_get_int64(v);
    }
    if (strcmp(r->finish_reason, "content_filter") == 0)
        fail(r, "LLM_CONTENT_FILTERED", 0, "The LLM's content filter stopped the answer");
    else if (!jf_str(content) || !*jf_str(content))
        fail(r, "LLM_UNKNOWN_ERROR", 0, "The LLM gave an empty answer");
    else if (buf_adds(&r->text, jf_str(content)))
        fail(r, "LLM_UNKNOWN_ERROR", 0, "The LLM's answer was larger than 4 MiB");
    json_object_put(j);
}

/* One HTTP exchange. Returns 1 when a retry may help. */
static int attempt(CURL *c, const struct config *cfg, const char *body, long timeout_ms,
                   struct llm_reply *r)
{
    struct buf url, answer, auth;
    struct curl_slist *headers = NULL;
    CURLcode cc;
    long status = 0;
    int retry = 0;

    buf_init(&url, 4096);
    buf_init(&answer, LLM_MAX_REPLY);
    buf_init(&auth, 4096);
    {
        size_t n = strlen(cfg->llm_base_url);
        while (n && cfg->llm_base_url[n - 1] == '/')
            n--;
        buf_add(&url, cfg->llm_base_url, n);
        buf_adds(&url, "/chat/completions");
    }
    headers = curl_slist_append(headers, "Content-Type: application/json");
    if (cfg->llm_api_key && *cfg->llm_api_key) {
        buf_addf(&auth, "Authorization: Bearer %s", cfg->llm_api_key);
        headers = curl_slist_append(headers, auth.data);
    }
    if (buf_failed(&url) || buf_failed(&auth)) {
        /* One check for every append above: never call a cut-short URL or key. */
        fail(r, "LLM_SERVICE_ERROR", 0, "The LLM's base URL or API key is too long");
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
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &answer);
    cc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (cc == CURLE_OPERATION_TIMEDOUT) {
        fail(r, "LLM_TIMEOUT", 1, "The LLM did not answer in time");
    } else if (cc == CURLE_WRITE_ERROR) {
        fail(r, "LLM_UNKNOWN_ERROR", 0, "The LLM's answer was larger than 4 MiB");
    } else if (cc != CURLE_OK) {
        fail(r, "LLM_SERVICE_ERROR", 1, "The LLM service could not be reached");
        retry = 1;
    } else if (status != 200) {
        classify_http(r, status, answer.data);
        retry = status == 429 || status >= 500;
    } else {
        parse_success(r, answer.data);
    }
out:
    curl_slist_free_all(headers);
    memset(auth.data, 0, auth.len); /* the key does not linger in freed memory */
    buf_release(&url);
    buf_release(&answer);
    buf_release(&auth);
    return retry;
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
        fail(r, "LLM_NOT_CONFIGURED", 0, "No LLM is configured (KNOWHUB_LLM_BASE_URL is not set)");
        return -1;
    }
    if (!llm && !(llm = own = llm_new())) {
        fail(r, "LLM_UNKNOWN_ERROR", 0, "Cannot start an HTTP client");
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
    if (attempt(llm->curl, cfg, text, timeout, r)) {
        /* One retry, after a short pause, for failures that may pass. */
        long spent = monotonic_ms() - started;
        if (spent + 500 < timeout) {
            usleep(500 * 1000);
            buf_reset(&r->text);
            r->err.code = NULL;
            attempt(llm->curl, cfg, text, timeout - spent - 500, r);
        }
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
