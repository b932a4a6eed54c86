/* rpc: the failures of the MCP methods besides tools (mcp/rpc.h). */
#include "mcp/rpc.h"

#include <string.h>

void rpc_fail_init(struct rpc_fail *f)
{
    f->code = 0;
    error_init(&f->err);
}

void rpc_fail_release(struct rpc_fail *f)
{
    error_release(&f->err);
}

int rpc_fail_from(struct rpc_fail *f, const struct error *e, int not_found_code)
{
    const char *code = e->code ? e->code : E_INTERNAL;
    if (strcmp(code, E_INVALID_REQUEST) == 0 || strcmp(code, E_FORBIDDEN) == 0 ||
        strcmp(code, E_LIMIT_EXCEEDED) == 0)
        f->code = RPC_INVALID_PARAMS;
    else if (strcmp(code, E_NOT_FOUND) == 0 || strcmp(code, E_FILE_NOT_FOUND) == 0)
        f->code = not_found_code;
    else
        f->code = RPC_INTERNAL_ERROR;
    error_copy(&f->err, e, NULL);
    return -1;
}

int rpc_fail_code(struct rpc_fail *f, int code)
{
    f->code = code;
    return -1;
}

int rpc_param_str(struct json_object *params, const char *key, size_t max_bytes, const char **out,
                  struct rpc_fail *f)
{
    struct json_object *v = NULL;
    *out = NULL;
    if (!params || !json_object_object_get_ex(params, key, &v) || !v)
        return 0;
    if (!json_object_is_type(v, json_type_string))
        return rpc_fail_set(f, RPC_INVALID_PARAMS, E_INVALID_REQUEST, "'%s' must be a string", key);
    if ((size_t)json_object_get_string_len(v) > max_bytes ||
        strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v))
        return rpc_fail_set(f, RPC_INVALID_PARAMS, E_INVALID_REQUEST,
                            "'%s' must be at most %zu bytes, without NUL", key, max_bytes);
    *out = json_object_get_string(v);
    return 0;
}
