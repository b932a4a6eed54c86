/* error: the one error type of KnowHub. The store (store_status_error), the
 * LLM client (llm_reply.err), the checkers (paths, documents), the services
 * and both front ends (REST's envelope, MCP's tool result) speak it: a
 * stable code (E_*, docs/api.md), the English message for people and
 * agents, a stable key the panel translates (i18n errors.<key>), the values
 * the message names, and whether trying again may help. */
#ifndef KNOWHUB_ERROR_H
#define KNOWHUB_ERROR_H

#include <json-c/json.h>

#include "base/buf.h"

/* The error codes of docs/api.md. */
#define E_INVALID_REQUEST "INVALID_REQUEST"
#define E_NOT_FOUND "NOT_FOUND"
#define E_FILE_NOT_FOUND "TABLE_NOT_FOUND" /* the file view's code for a missing file */
#define E_CONFLICT "CONFLICT"
#define E_LIMIT_EXCEEDED "LIMIT_EXCEEDED"
#define E_UNAUTHORIZED "UNAUTHORIZED"
#define E_FORBIDDEN "FORBIDDEN"
#define E_METHOD_NOT_ALLOWED "METHOD_NOT_ALLOWED"
#define E_PAYLOAD_TOO_LARGE "PAYLOAD_TOO_LARGE"
#define E_UNSUPPORTED_MEDIA_TYPE "UNSUPPORTED_MEDIA_TYPE"
#define E_LLM_NOT_CONFIGURED "LLM_NOT_CONFIGURED"
#define E_SERVICE_UNAVAILABLE "SERVICE_UNAVAILABLE"
#define E_RATE_LIMITED "RATE_LIMITED" /* over a rate: nginx's per address, knowhub's per token */
#define E_INTERNAL "INTERNAL_ERROR"

struct error {
    const char *code;           /* static E_* or LLM_* code; NULL: no error */
    struct buf message;         /* English */
    const char *key;            /* static; NULL: no key */
    struct json_object *params; /* owned; NULL until a parameter is added */
    int retry;                  /* the same call may succeed later */
};

/* Init an empty error (code NULL); release what it holds. */
void error_init(struct error *e);
void error_release(struct error *e);
/* Set the code, key (may be NULL) and message (printf format), dropping
 * earlier ones and their parameters; retry follows the code (error_retryable). */
void error_set(struct error *e, const char *code, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The one JSON shape of an error, wherever it goes (REST's envelope, an MCP
 * tool's result, a batch item, a slim group, a job): {code, message, retry}
 * and, when it has a key, {key, params}. retry is e's own (a cause may know
 * better than its code). A new object; e is left as it is. */
struct json_object *error_json(const struct error *e);
/* error_json of an error made of code (retry as error_retryable says) and
 * a message that is not a format: a batch item's, a slim group's, a job's. */
struct json_object *error_json_text(const char *code, const char *message);
/* Set code (retry as error_retryable says) and a message that is not a
 * format. */
void error_text(struct error *e, const char *code, const char *key, const char *message);
/* Copy cause into e (code, key, params, retry: what the cause knew), and
 * with fmt a message of e's own (NULL: the cause's). */
void error_copy(struct error *e, const struct error *cause, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Add a parameter (a string or an integer) to e. */
void error_str(struct error *e, const char *name, const char *value);
void error_int(struct error *e, const char *name, long long value);

/* Whether an error of this code may go away on its own (busy database, an
 * LLM's rate limit or timeout ...). */
int error_retryable(const char *code);
/* The HTTP status an error of this code is answered with: 401, 403, 405,
 * 413, 415, 500 and 503 for the codes of those names, 200 for every
 * application error (docs/api.md "Errors"). */
int error_http_status(const char *code);

#endif
