/* errmsg: an error's message, key and parameters (errmsg.h). */
#include "base/errmsg.h"

#include <stdarg.h>

void errmsg_init(struct errmsg *e)
{
    buf_init(&e->message, 4096);
    e->key = NULL;
    e->params = NULL;
}

void errmsg_release(struct errmsg *e)
{
    buf_release(&e->message);
    json_object_put(e->params);
    e->params = NULL;
}

void errmsg_set(struct errmsg *e, const char *key, const char *fmt, ...)
{
    va_list ap;
    buf_reset(&e->message);
    json_object_put(e->params);
    e->params = NULL;
    e->key = key;
    va_start(ap, fmt);
    buf_vaddf(&e->message, fmt, ap);
    va_end(ap);
}

static void param_add(struct errmsg *e, const char *name, struct json_object *v)
{
    if (!e->params)
        e->params = json_object_new_object();
    json_object_object_add(e->params, name, v);
}

void errmsg_str(struct errmsg *e, const char *name, const char *value)
{
    param_add(e, name, json_object_new_string(value ? value : ""));
}

void errmsg_int(struct errmsg *e, const char *name, long long value)
{
    param_add(e, name, json_object_new_int64(value));
}
