/* tools_search: MCP tools over the search, context, slim and trace services. */
#include "mcp/tools_search.h"
#include "base/jfield.h"
#include "base/util.h"
#include "service/context.h"
#include "service/entries.h"
#include "service/jobops.h"
#include "service/traces.h"

#include <stdlib.h>
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

/* REST reads these arguments from its query string, which may not hold a
 * NUL byte: the router's malformed query error for any string that does. */
static int query_args_check(struct json_object *args, struct error *err)
{
    json_object_object_foreach(args, key, val)
    {
        (void)key;
        int bad = json_object_is_type(val, json_type_string) && has_nul(val);
        for (size_t i = 0;
             json_object_is_type(val, json_type_array) && i < json_object_array_length(val); i++) {
            struct json_object *e = json_object_array_get_idx(val, i);
            bad |= json_object_is_type(e, json_type_string) && has_nul(e);
        }
        if (bad) {
            error_set(err, E_INVALID_REQUEST, "malformed_url",
                      "Malformed query string (bad %%-escape or invalid UTF-8)");
            return -1;
        }
    }
    return 0;
}

int tool_knowledge_search(const struct svc_ctx *c, struct json_object *args,
                          struct json_object **data, struct error *err)
{
    struct entry_query eq = {0};
    struct json_object *types = NULL;
    const char **list = NULL;
    int rc;
    *data = NULL;
    /* REST reads these from its query string, with the same error. */
    if (query_args_check(args, err) || jf_long(err, args, "top_k", 1, 50, 5, &eq.top_k) ||
        jf_long(err, args, "min_score", 1, 5, 3, &eq.min_score) ||
        jf_long(err, args, "sequence", 0, 1L << 50, 0, &eq.sequence) ||
        jf_bool(err, args, "include_pending", 0, &eq.include_pending) ||
        jf_bool(err, args, "explain", 0, &eq.explain))
        return -1;
    eq.q = jf_member_str(args, "query");
    eq.trace_id = jf_member_str(args, "trace_id");
    eq.goal_id = jf_member_str(args, "goal_id");
    eq.task = jf_member_str(args, "task");
    eq.category = jf_member_str(args, "category");
    eq.mode = jf_member_str(args, "mode");
    /* tags_type: a list of names (the schema checked them), as one value. */
    if (json_object_object_get_ex(args, "tags_type", &types) &&
        json_object_is_type(types, json_type_array)) {
        list = xcalloc(json_object_array_length(types) + 1, sizeof *list);
        for (size_t i = 0; i < json_object_array_length(types); i++) {
            const char *s = jf_str(json_object_array_get_idx(types, i));
            if (s)
                list[eq.n_types++] = s;
        }
        eq.types = list;
    }
    rc = svc_search_entries(c, &eq, data, err);
    free(list);
    return rc;
}

int tool_knowledge_slim(const struct svc_ctx *c, struct json_object *args,
                        struct json_object **data, struct error *err)
{
    return svc_slim(c, args, data, err);
}

int tool_knowledge_rules(const struct svc_ctx *c, struct json_object *args,
                         struct json_object **data, struct error *err)
{
    long budget;
    *data = NULL;
    if (jf_long(err, args, "budget_tokens", CONTEXT_BUDGET_MIN, CONTEXT_BUDGET_MAX, 0, &budget))
        return -1;
    return svc_context_rules(c, budget, data, err);
}

int tool_knowledge_context(const struct svc_ctx *c, struct json_object *args,
                           struct json_object **data, struct error *err)
{
    return svc_context_question(c, args, data, err);
}

int tool_trace_eval_prompt(const struct svc_ctx *c, struct json_object *args,
                           struct json_object **data, struct error *err)
{
    const char *trace_id;
    *data = NULL;
    if (path_arg(args, "trace_id", &trace_id, err) || query_args_check(args, err))
        return -1;
    return svc_trace_eval_prompt(c, trace_id, jf_member_str(args, "goal"), data, err);
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
