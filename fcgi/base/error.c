/* error: the one error type (error.h). */
#include "base/error.h"
#include "base/util.h"

#include <stdarg.h>
#include <string.h>

void error_init(struct error *e)
{
    buf_init(&e->message, 4096);
    e->code = NULL;
    e->key = NULL;
    e->params = NULL;
    e->retry = 0;
}

void error_release(struct error *e)
{
    buf_release(&e->message);
    json_object_put(e->params);
    e->params = NULL;
    e->code = NULL;
    e->key = NULL;
    e->retry = 0;
}

void error_set(struct error *e, const char *code, const char *key, const char *fmt, ...)
{
    va_list ap;
    buf_reset(&e->message);
    json_object_put(e->params);
    e->params = NULL;
    e->code = code;
    e->key = key;
    e->retry = error_retryable(code);
    va_start(ap, fmt);
    if (buf_vaddf(&e->message, fmt, ap))
        buf_adds(&e->message, code);
    va_end(ap);
    /* a text cut by bytes or a server's bad byte never reaches an answer, a
     * log or a stored job */
    e->message.len = strlen(utf8_repair(e->message.data));
}

void error_text(struct error *e, const char *code, const char *key, const char *message)
{
    error_set(e, code, key, "%s", message);
}

void error_copy(struct error *e, const struct error *cause, const char *fmt, ...)
{
    struct buf message;
    buf_init(&message, 1 << 16);
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        if (buf_vaddf(&message, fmt, ap))
            buf_reset(&message);
        va_end(ap);
    }
    error_text(e, cause->code ? cause->code : E_INTERNAL, cause->key,
               message.len ? message.data : cause->message.data);
    e->retry = cause->retry;
    e->params = cause->params ? json_object_get(cause->params) : NULL;
    buf_release(&message);
}

struct json_object *error_json(const struct error *e)
{
    const char *code = e->code ? e->code : E_INTERNAL;
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "code", json_object_new_string(code));
    json_object_object_add(o, "message",
                           json_object_new_string(e->message.len ? e->message.data : code));
    json_object_object_add(o, "retry", json_object_new_boolean(e->retry));
    if (e->key) {
        json_object_object_add(o, "key", json_object_new_string(e->key));
        json_object_object_add(o, "params",
                               e->params ? json_object_get(e->params) : json_object_new_object());
    }
    return o;
}

struct json_object *error_json_text(const char *code, const char *message)
{
    struct error e;
    struct json_object *o;
    error_init(&e);
    error_text(&e, code, NULL, message);
    o = error_json(&e);
    error_release(&e);
    return o;
}

static void param_add(struct error *e, const char *name, struct json_object *v)
{
    if (!e->params)
        e->params = json_object_new_object();
    json_object_object_add(e->params, name, v);
}

void error_str(struct error *e, const char *name, const char *value)
{
    param_add(e, name, json_object_new_string(value ? value : ""));
}

void error_int(struct error *e, const char *name, long long value)
{
    param_add(e, name, json_object_new_int64(value));
}

int error_retryable(const char *code)
{
    static const char *const codes[] = {"LLM_RATE_LIMIT", "LLM_TIMEOUT", "LLM_SERVICE_ERROR",
                                        E_SERVICE_UNAVAILABLE, E_RATE_LIMITED};
    for (size_t i = 0; code && i < sizeof codes / sizeof codes[0]; i++)
        if (strcmp(code, codes[i]) == 0)
            return 1;
    return 0;
}

int error_http_status(const char *code)
{
    static const struct {
        const char *code;
        int status;
    } map[] = {
        {E_UNAUTHORIZED, 401},           {E_FORBIDDEN, 403},
        {E_METHOD_NOT_ALLOWED, 405},     {E_PAYLOAD_TOO_LARGE, 413},
        {E_UNSUPPORTED_MEDIA_TYPE, 415}, {E_INTERNAL, 500},
        {E_SERVICE_UNAVAILABLE, 503},    {E_RATE_LIMITED, 429},
    };
    for (size_t i = 0; code && i < sizeof map / sizeof map[0]; i++)
        if (strcmp(code, map[i].code) == 0)
            return map[i].status;
    return 200;
}
