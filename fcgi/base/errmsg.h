/* errmsg: an error as a checker (paths, documents) builds it before a
 * handler replies with it (reply_errmsg): the English message for people
 * and agents, a stable key the panel translates (i18n errors.<key>) and the
 * values the message names. */
#ifndef KNOWHUB_ERRMSG_H
#define KNOWHUB_ERRMSG_H

#include <json-c/json.h>

#include "base/buf.h"

struct errmsg {
    struct buf message;         /* English */
    const char *key;            /* static; NULL: no key */
    struct json_object *params; /* owned; NULL until a parameter is added */
};

/* Init an empty error; release what it holds. */
void errmsg_init(struct errmsg *e);
void errmsg_release(struct errmsg *e);
/* Set the key and the message (printf format), dropping earlier ones and
 * their parameters. */
void errmsg_set(struct errmsg *e, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Add a parameter (a string or an integer) to e. */
void errmsg_str(struct errmsg *e, const char *name, const char *value);
void errmsg_int(struct errmsg *e, const char *name, long long value);

#endif
