/* tools_knowledge: the knowledge tools of MCP over the entry and file
 * views' services; the answers are those of REST. */
#include "mcp/tools_knowledge.h"
#include "base/jfield.h"
#include "base/error.h"
#include "domain/knowledge.h"
#include "domain/paths.h"
#include "service/ctx.h"
#include "service/feedback.h"
#include "service/files.h"
#include "service/knowledge.h"
#include "service/links.h"
#include "service/review.h"
#include "store/store.h"

#include <string.h>

int tool_knowledge_save(const struct svc_ctx *c, struct json_object *args,
                        struct json_object **data, struct error *err)
{
    return svc_knowledge_create(c, args, data, err);
}

int tool_knowledge_update(const struct svc_ctx *c, struct json_object *args,
                          struct json_object **data, struct error *err)
{
    /* The entry's id is the path's {knowledge_id}; the rest is the body
     * (which has no knowledge_id field of its own). */
    const char *id = jf_member_str(args, "knowledge_id");
    if (!id || !*id) {
        error_set(err, E_INVALID_REQUEST, NULL, "'%s' is required", "knowledge_id");
        return -1;
    }
    return svc_knowledge_update(c, id, args, data, err);
}

int tool_knowledge_batch_update(const struct svc_ctx *c, struct json_object *args,
                                struct json_object **data, struct error *err)
{
    return svc_knowledge_batch_update(c, args, data, err);
}

int tool_knowledge_list(const struct svc_ctx *c, struct json_object *args,
                        struct json_object **data, struct error *err)
{
    struct knowledge_filter f = {0};
    struct json_object *types = NULL, *category = NULL;
    if (jf_long(err, args, "limit", 1, 100, 10, &f.limit) ||
        jf_long(err, args, "offset", 0, 1000000000L, 0, &f.offset))
        return -1;
    json_object_object_get_ex(args, "tags_type", &types);
    if (knowledge_types_add_json(types, &f.types, err))
        return -1;
    if (json_object_object_get_ex(args, "category", &category) && category &&
        *json_object_get_string(category)) {
        f.category = json_object_get_string(category);
        if (!category_valid(f.category)) {
            error_set(err, E_INVALID_REQUEST, "invalid_category", "Invalid category: %s",
                      f.category);
            error_str(err, "category", f.category);
            return -1;
        }
    }
    return svc_knowledge_list(c, &f, data, err);
}

int tool_knowledge_read(const struct svc_ctx *c, struct json_object *args,
                        struct json_object **data, struct error *err)
{
    return svc_files_read(c, args, data, err);
}

int tool_knowledge_review_list(const struct svc_ctx *c, struct json_object *args,
                               struct json_object **data, struct error *err)
{
    const char *state;
    long limit, offset;
    if (jf_string(err, args, "state", 0, 16, &state) ||
        jf_long(err, args, "limit", 1, REVIEW_PAGE_MAX, 20, &limit) ||
        jf_long(err, args, "offset", 0, 1000000000L, 0, &offset))
        return -1;
    return svc_review_list(c, state ? state : "pending", limit, offset, data, err);
}

int tool_knowledge_review_decide(const struct svc_ctx *c, struct json_object *args,
                                 struct json_object **data, struct error *err)
{
    const char *id;
    if (jf_string(err, args, "proposal_id", 1, 64, &id))
        return -1;
    return svc_review_decide(c, id, args, data, err);
}

int tool_knowledge_link(const struct svc_ctx *c, struct json_object *args,
                        struct json_object **data, struct error *err)
{
    const char *action, *id, *to, *type;
    if (jf_string(err, args, "action", 1, 16, &action) || jf_string(err, args, "id", 1, 64, &id))
        return -1;
    if (strcmp(action, "list") == 0)
        return svc_links_list(c, id, data, err);
    if (strcmp(action, "add") == 0)
        return svc_links_add(c, id, args, data, err);
    if (jf_string(err, args, "to", 1, 64, &to) || jf_string(err, args, "type", 1, 32, &type))
        return -1;
    return svc_links_remove(c, id, to, type, data, err); /* the schema allows no other action */
}
