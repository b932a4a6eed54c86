/* llm: the only module that speaks to an LLM or an embeddings server
 * (libcurl): OpenAI-compatible POST {KNOWHUB_LLM_BASE_URL}/chat/completions
 * and {KNOWHUB_EMBED_URL}/embeddings, with connect and total
 * timeouts, one retry with backoff on a retryable failure, a capped reply,
 * failures mapped to the LLM_* error codes, every call counted in the
 * thread's metrics and, when KNOWHUB_AGENT_LOG is on, written to the
 * reasoning log. The client never touches the store: the caller writes the
 * usage ledger from the reply (service/llmcall.c). The URL and key come from
 * the server's configuration only. */
#ifndef KNOWHUB_LLM_H
#define KNOWHUB_LLM_H

#include <json-c/json.h>

#include "base/buf.h"
#include "base/error.h"

struct config;
struct llm;

/* Process-wide libcurl setup; call once in main before threads start. */
void llm_global_init(void);

/* The libcurl this binary runs with ("7.88.1"). */
const char *llm_curl_version(void);

/* A handle for one thread (one CURL easy handle, reused). */
struct llm *llm_new(void);
void llm_free(struct llm *llm);
struct metrics;
/* Count this handle's calls in m (its thread's counters; may be NULL). */
void llm_set_metrics(struct llm *llm, struct metrics *m);

struct llm_request {
    const char *purpose;          /* route, evolve, distill, slim: the ledger's key */
    const char *model;            /* NULL: KNOWHUB_LLM_MODEL */
    struct json_object *messages; /* borrowed: [{role, content}, ...] */
    long timeout_ms;              /* 0: the configured timeout */
    int max_tokens;               /* 0: not sent */
    const char *actor;            /* who asked: the reasoning log's identity */
    const char *session_id;       /* the request id: the reasoning log's session */
};

struct llm_reply {
    struct buf text;   /* the assistant message's content */
    struct error err;  /* err.code NULL on success, else an LLM_* code; the message is for
                        * the client: never the key or the URL */
    const char *model; /* the model asked (the request's or the configured one) */
    long prompt_tokens, completion_tokens, latency_ms;
    char finish_reason[32];
};

/* A chat message {role, content} (caller owns it). */
struct json_object *llm_message(const char *role, const char *content);

void llm_reply_init(struct llm_reply *r);
void llm_reply_release(struct llm_reply *r);

/* Run one chat completion. 0 with r->text filled, or -1 with r->err set
 * (LLM_NOT_CONFIGURED when no LLM is configured); once a call is made,
 * r->model, the token counts and the latency are set for the ledger. With
 * llm NULL a temporary handle is used. */
int llm_chat(struct llm *llm, const struct config *cfg, const struct llm_request *req,
             struct llm_reply *r);

/* ---- embeddings: OpenAI-compatible POST {KNOWHUB_EMBED_URL}/embeddings ---- */

#define EMBED_MAX_DIM 8192

struct embed_reply {
    float *vec;         /* n x dim floats, row i the vector of text i (as received) */
    size_t n;           /* vectors in vec: the texts' count on success */
    int dim;            /* their dimension */
    struct error err;   /* err.code NULL on success, else an LLM_* code (LLM_CONTEXT_TOO_LONG
                         * also for HTTP 413: a batch or a text too large) */
    const char *model;  /* the model asked: set once a call is made */
    long prompt_tokens; /* the server's usage count, 0 when it gave none */
    long latency_ms;
};

void embed_reply_init(struct embed_reply *r);
void embed_reply_release(struct embed_reply *r);

/* Embed texts[0..n) with the configured model: 0 with r->vec holding n
 * vectors of one dimension (expect_dim when > 0, else the first vector's),
 * or -1 with r->err set; an answer with another count, a mixed or
 * implausible dimension, or a value that is not a finite number is refused
 * (LLM_UNKNOWN_ERROR). timeout_ms 0: KNOWHUB_EMBED_TIMEOUT. Timeouts, one retry and the metrics as
 * llm_chat; no ledger row (the caller writes it) and no reasoning log. */
int llm_embed(struct llm *llm, const struct config *cfg, const char *const *texts, size_t n,
              int expect_dim, long timeout_ms, struct embed_reply *r);

/* The vectors of an embeddings server's 200 answer (body, NUL-terminated)
 * into r: n of them, in input order, or r->err (LLM_UNKNOWN_ERROR) when it
 * is not n vectors of one plausible dimension (expect_dim when > 0).
 * llm_embed's parser, public for its fuzzer. */
void llm_parse_embeddings(struct embed_reply *r, const char *body, size_t n, int expect_dim);

/* A request's "model": a name, or an object whose "model" (or "id") names one
 * (the reference sends {id, endpoint, api_key, ...}: only the name is used).
 * *out is NULL when absent; -1 when it names no allowed model. */
int llm_model_from_json(const struct config *cfg, struct json_object *v, const char **out);

#endif
