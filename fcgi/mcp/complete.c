/* complete: completion of template and prompt arguments (mcp/complete.h). */
#include "mcp/complete.h"
#include "base/jfield.h"
#include "http/http.h"
#include "mcp/prompts.h"
#include "service/catalog.h"

#include <string.h>

enum source { FROM_CATALOG, FROM_LIST, FROM_NOTHING };

/* Where the values of an argument come from. */
struct completer {
    const char *name; /* a template's URI or a prompt argument's name */
    const char *argument;
    enum source source;
    enum catalog_field field; /* FROM_CATALOG */
    const char *category;     /* FROM_CATALOG: paths of this category (NULL: both) */
    const char *const *list;  /* FROM_LIST, NULL-ended */
};

static const char *const languages[] = {"en", "zh", NULL};
static const char *const categories[] = {"experiences", "rules", NULL};

#define RES "ref/resource"
#define PROMPT "ref/prompt"

/* The templates' arguments. */
static const struct completer by_template[] = {
    {"knowhub://rules/{path}", "path", FROM_CATALOG, CATALOG_PATHS, "rules", NULL},
    {"knowhub://experiences/{path}", "path", FROM_CATALOG, CATALOG_PATHS, "experiences", NULL},
    {"knowhub://entries/{id}", "id", FROM_CATALOG, CATALOG_IDS, NULL, NULL},
    {"knowhub://traces/{id}/pending", "id", FROM_CATALOG, CATALOG_TRACES, NULL, NULL},
};

/* A prompt's argument, by its name whichever prompt takes it; the others
 * (goal, text) are free text with nothing to complete. */
static const struct completer by_argument[] = {
    {"trace_id", NULL, FROM_CATALOG, CATALOG_TRACES, NULL, NULL},
    {"tag", NULL, FROM_CATALOG, CATALOG_TAGS, NULL, NULL},
    {"language", NULL, FROM_LIST, CATALOG_PATHS, NULL, languages},
    {"category", NULL, FROM_LIST, CATALOG_PATHS, NULL, categories},
};
static const struct completer free_text = {NULL, NULL, FROM_NOTHING, CATALOG_PATHS, NULL, NULL};

static int bad(struct rpc_fail *f, const char *what)
{
    return rpc_fail_set(f, RPC_INVALID_PARAMS, E_INVALID_REQUEST, "completion/complete: %s", what);
}

/* review_pending's tag is completed within the category its context gives. */
static const char *context_category(struct json_object *params)
{
    struct json_object *ctx = NULL, *args = NULL;
    const char *c;
    if (!json_object_object_get_ex(params, "context", &ctx) ||
        !json_object_object_get_ex(ctx, "arguments", &args) ||
        !(c = jf_member_str(args, "category")))
        return NULL;
    return strcmp(c, "rules") == 0 || strcmp(c, "experiences") == 0 ? c : NULL;
}

int mcp_complete(struct request *req, struct json_object *params, struct json_object **result,
                 struct rpc_fail *f)
{
    struct json_object *ref = NULL, *argument = NULL, *values = NULL, *completion;
    const struct completer *w = NULL;
    const char *type, *target, *name, *value;
    long total = 0;
    if (!params || !json_object_object_get_ex(params, "ref", &ref) ||
        !json_object_is_type(ref, json_type_object) ||
        !json_object_object_get_ex(params, "argument", &argument) ||
        !json_object_is_type(argument, json_type_object))
        return bad(f, "'ref' and 'argument' (objects) are required");
    if (rpc_param_str(ref, "type", 64, &type, f) ||
        rpc_param_str(argument, "name", 256, &name, f) ||
        rpc_param_str(argument, "value", MCP_COMPLETE_VALUE_MAX_BYTES, &value, f))
        return -1;
    if (!type || !name)
        return bad(f, "'ref.type' and 'argument.name' are required");
    if (strcmp(type, RES) == 0) {
        if (rpc_param_str(ref, "uri", 4096, &target, f))
            return -1;
    } else if (strcmp(type, PROMPT) == 0) {
        int has_arg, allowed;
        if (rpc_param_str(ref, "name", 256, &target, f))
            return -1;
        allowed = mcp_prompt_allowed(target, req->who.role, name, &has_arg);
        if (allowed < 0)
            return rpc_fail_set(f, RPC_INVALID_PARAMS, E_INVALID_REQUEST, "Unknown prompt: %s",
                                target ? target : "");
        if (allowed == 0)
            return rpc_fail_set(f, RPC_INVALID_PARAMS, E_FORBIDDEN,
                                "Your role may not use the prompt %s", target);
        if (!has_arg)
            return rpc_fail_set(f, RPC_INVALID_PARAMS, E_INVALID_REQUEST,
                                "Nothing to complete: %s has no argument '%s'", target, name);
        w = &free_text;
        for (size_t i = 0; i < sizeof by_argument / sizeof *by_argument; i++)
            if (strcmp(by_argument[i].name, name) == 0)
                w = &by_argument[i];
    } else {
        return bad(f, "'ref.type' must be ref/resource or ref/prompt");
    }
    if (!target)
        return bad(f, "the ref names no template (uri) or prompt (name)");
    for (size_t i = 0; !w && i < sizeof by_template / sizeof *by_template; i++)
        if (strcmp(by_template[i].name, target) == 0 && strcmp(by_template[i].argument, name) == 0)
            w = &by_template[i];
    if (!w)
        return rpc_fail_set(f, RPC_INVALID_PARAMS, E_INVALID_REQUEST,
                            "Nothing to complete: %s has no argument '%s'", target, name);
    if (w->source == FROM_CATALOG) {
        struct svc_ctx c;
        struct error err;
        const char *category = w->category;
        if (w->field == CATALOG_TAGS)
            category = context_category(params);
        http_svc_ctx(req, &c);
        error_init(&err);
        if (svc_catalog_values(&c, w->field, category, value, CATALOG_VALUES_MAX, &values, &total,
                               &err)) {
            rpc_fail_from(f, &err, RPC_INTERNAL_ERROR);
            error_release(&err);
            return -1;
        }
        error_release(&err);
    } else {
        values = json_object_new_array();
        for (size_t i = 0; w->source == FROM_LIST && w->list[i]; i++)
            if (!value || strncmp(w->list[i], value, strlen(value)) == 0) {
                json_object_array_add(values, json_object_new_string(w->list[i]));
                total++;
            }
    }
    completion = json_object_new_object();
    json_object_object_add(completion, "total", json_object_new_int64(total));
    json_object_object_add(completion, "hasMore",
                           json_object_new_boolean(total > (long)json_object_array_length(values)));
    json_object_object_add(completion, "values", values);
    *result = json_object_new_object();
    json_object_object_add(*result, "completion", completion);
    return 0;
}
