/* fields: the jf_ getters of base/jfield.h for handlers, which reply with
 * the error instead of returning it (http.h). */
#include "base/jfield.h"
#include "http/http.h"

/* rc from a getter that filled e: on failure, reply with e. */
static int replied(struct response *res, int rc, struct error *e)
{
    if (rc)
        reply_error_of(res, e);
    error_release(e);
    return rc;
}

int jf_string_or_400(struct response *res, struct json_object *obj, const char *key, int required,
                     size_t max_chars, const char **out)
{
    struct error e;
    error_init(&e);
    return replied(res, jf_string(&e, obj, key, required, max_chars, out), &e);
}

int jf_long_or_400(struct response *res, struct json_object *obj, const char *key, long min,
                   long max, long dflt, long *out)
{
    struct error e;
    error_init(&e);
    return replied(res, jf_long(&e, obj, key, min, max, dflt, out), &e);
}

int jf_bool_or_400(struct response *res, struct json_object *obj, const char *key, int dflt,
                   int *out)
{
    struct error e;
    error_init(&e);
    return replied(res, jf_bool(&e, obj, key, dflt, out), &e);
}

int jf_object_or_400(struct response *res, struct json_object *obj, const char *key,
                     struct json_object **out)
{
    struct error e;
    error_init(&e);
    return replied(res, jf_object(&e, obj, key, out), &e);
}

int jf_string_list_or_400(struct response *res, struct json_object *obj, const char *key,
                          size_t max_items, size_t max_chars, int scalar_ok,
                          struct json_object **out)
{
    struct error e;
    error_init(&e);
    return replied(res, jf_string_list(&e, obj, key, max_items, max_chars, scalar_ok, out), &e);
}
