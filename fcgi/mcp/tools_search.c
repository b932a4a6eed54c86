/* tools_search: MCP tools over the search, context, slim and trace services. */
#include "mcp/tools_search.h"
#include "base/jfield.h"
#include "service/traces.h"

#include <string.h>

/* 1 when the JSON string v holds a NUL byte (a URL may not). */
static int has_nul(struct json_object *v)
{
    return strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v);
}

/* The path argument name of a tool (a non-empty string), as the REST route
 * needs it in its path; -1 with "'name' is required" or the router's
 * malformed path error otherwise. */
static int path_arg(struct json_object *args, const char *name, const char **out, struct error *err)
{
    struct json_object *v = NULL;
    const char *s;
    if (!json_object_object_get_ex(args, name, &v) || !(s = jf_str(v)) || !*s) {
        error_set(err, E_INVALID_REQUEST, NULL, "'%s' is required", name);
        return -1;
    }
    if (has_nul(v)) {
        error_set(err, E_INVALID_REQUEST, "malformed_url",
                  "Malformed path (bad %%-escape, invalid UTF-8 or NUL)");
        return -1;
    }
    *out = s;
    return 0;
}

/* A string argument REST reads from its query string (NULL when absent);
 * -1 with the router's malformed query error when it holds a NUL byte. */
static int query_text(struct json_object *args, const char *name, const char **out,
                      struct error *err)
{
    struct json_object *v = NULL;
    *out = NULL;
    if (!json_object_object_get_ex(args, name, &v) || !jf_str(v))
        return 0;
    if (has_nul(v)) {
        error_set(err, E_INVALID_REQUEST, "malformed_url",
                  "Malformed query string (bad %%-escape or invalid UTF-8)");
        return -1;
    }
    *out = json_object_get_string(v);
    return 0;
}

int tool_trace_eval_prompt(const struct svc_ctx *c, struct json_object *args,
                           struct json_object **data, struct error *err)
{
    const char *trace_id, *goal;
    *data = NULL;
    if (path_arg(args, "trace_id", &trace_id, err) || query_text(args, "goal", &goal, err))
        return -1;
    return svc_trace_eval_prompt(c, trace_id, goal, data, err);
}

int tool_trace_submit_evaluation(const struct svc_ctx *c, struct json_object *args,
                                 struct json_object **data, struct error *err)
{
    const char *trace_id;
    *data = NULL;
    if (path_arg(args, "trace_id", &trace_id, err))
        return -1;
    return svc_trace_evaluate(c, trace_id, args, data, err);
}
