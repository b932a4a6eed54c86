/* resources: MCP resources and templates (mcp/resources.h). */
#include "mcp/resources.h"
#include "base/buf.h"
#include "base/jfield.h"
#include "base/util.h"
#include "domain/paths.h"
#include "http/http.h"
#include "service/catalog.h"
#include "service/context.h"
#include "service/files.h"
#include "service/knowledge.h"
#include "service/traces.h"

#include <string.h>

#define SCHEME "knowhub://"
#define MD "text/markdown"
#define JSON_TYPE "application/json"

/* path percent-encoded for a URI: unreserved characters and '/' stay. */
static void add_encoded(struct buf *out, const char *path)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
            strchr("-._~/", *p))
            buf_addch(out, (char)*p);
        else
            buf_addf(out, "%%%c%c", hex[*p >> 4], hex[*p & 15]);
    }
}

void mcp_resource_uri(struct buf *out, const char *category, const char *path)
{
    buf_addf(out, SCHEME "%s/", category);
    add_encoded(out, path);
}

static struct json_object *resource(const char *uri, const char *name, const char *title,
                                    const char *description, const char *mime)
{
    struct json_object *r = json_object_new_object();
    json_object_object_add(r, "uri", json_object_new_string(uri));
    json_object_object_add(r, "name", json_object_new_string(name));
    json_object_object_add(r, "title", json_object_new_string(title));
    if (description && *description)
        json_object_object_add(r, "description", json_object_new_string(description));
    json_object_object_add(r, "mimeType", json_object_new_string(mime));
    return r;
}

/* ---- resources/list ---- */

/* The cursor is the key of the page's last document, "<category>/<path>". */
static int cursor_parse(const char *cursor, struct buf *category, const char **path,
                        struct rpc_fail *f)
{
    const char *slash = strchr(cursor, '/');
    if (slash && slash[1]) {
        buf_add(category, cursor, (size_t)(slash - cursor));
        if (category_valid(category->data)) {
            *path = slash + 1;
            return 0;
        }
    }
    return rpc_fail_set(f, RPC_INVALID_PARAMS, E_INVALID_REQUEST,
                        "Invalid cursor: give back a nextCursor of resources/list");
}

int mcp_resources_list(struct request *req, struct json_object *params, struct json_object **result,
                       struct rpc_fail *f)
{
    struct json_object *items = NULL, *list;
    struct svc_ctx c;
    struct error err;
    struct buf category, uri;
    const char *cursor, *after_path = NULL;
    int more = 0, rc = -1;
    size_t n;
    error_init(&err);
    buf_init(&category, MCP_URI_MAX_BYTES);
    buf_init(&uri, 3 * MCP_URI_MAX_BYTES + 64);
    if (rpc_param_str(params, "cursor", MCP_URI_MAX_BYTES, &cursor, f) ||
        (cursor && cursor_parse(cursor, &category, &after_path, f)))
        goto out;
    http_svc_ctx(req, &c);
    if (svc_catalog_page(&c, cursor ? category.data : NULL, after_path, MCP_RESOURCES_PAGE, &items,
                         &more, &err)) {
        rpc_fail_from(f, &err, RPC_INTERNAL_ERROR);
        goto out;
    }
    list = json_object_new_array();
    if (!cursor)
        json_object_array_add(list, resource(SCHEME "rules", "rules", "Rules to always follow",
                                             "The always-apply rules as one block, ready for a "
                                             "system prompt (what knowledge_rules gives)",
                                             MD));
    n = json_object_array_length(items);
    for (size_t i = 0; i < n; i++) {
        struct json_object *it = json_object_array_get_idx(items, i);
        buf_reset(&uri);
        mcp_resource_uri(&uri, jf_member_str(it, "category"), jf_member_str(it, "path"));
        json_object_array_add(list, resource(uri.data, jf_member_str(it, "path"),
                                             jf_member_str(it, "title"),
                                             jf_member_str(it, "description"), MD));
    }
    *result = json_object_new_object();
    json_object_object_add(*result, "resources", list);
    if (more && n > 0) {
        struct json_object *last = json_object_array_get_idx(items, n - 1);
        buf_reset(&uri);
        buf_addf(&uri, "%s/%s", jf_member_str(last, "category"), jf_member_str(last, "path"));
        json_object_object_add(*result, "nextCursor", json_object_new_string(uri.data));
    }
    rc = 0;
out:
    json_object_put(items);
    error_release(&err);
    buf_release(&category);
    buf_release(&uri);
    return rc;
}

/* ---- resources/read ---- */

enum uri_kind { URI_RULES_BLOCK, URI_DOCUMENT, URI_ENTRY, URI_PENDING };

struct parsed_uri {
    enum uri_kind kind;
    const char *category; /* URI_DOCUMENT */
    struct buf arg;       /* the decoded path or id */
};

static int bad_uri(struct rpc_fail *f, const char *uri, const char *why)
{
    return rpc_fail_set(f, RPC_INVALID_PARAMS, E_INVALID_REQUEST, "Invalid resource URI '%s': %s",
                        uri, why);
}

#define URI_FORMS                                                                                  \
    "the forms are knowhub://rules, knowhub://rules/{path}, knowhub://experiences/{path}, "        \
    "knowhub://entries/{id} and knowhub://traces/{id}/pending"

/* Split uri into one of the forms, its path or id percent-decoded. */
static int uri_parse(const char *uri, struct parsed_uri *p, struct rpc_fail *f)
{
    static const struct {
        const char *prefix;
        enum uri_kind kind;
        const char *category;
    } forms[] = {{"rules/", URI_DOCUMENT, "rules"},
                 {"experiences/", URI_DOCUMENT, "experiences"},
                 {"entries/", URI_ENTRY, NULL},
                 {"traces/", URI_PENDING, NULL}};
    const char *rest, *end;
    if (strncmp(uri, SCHEME, strlen(SCHEME)) != 0)
        return bad_uri(f, uri, "it must begin with knowhub://");
    if (strpbrk(uri, "?#"))
        return bad_uri(f, uri, "no query or fragment");
    rest = uri + strlen(SCHEME);
    if (strcmp(rest, "rules") == 0) {
        p->kind = URI_RULES_BLOCK;
        return 0;
    }
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        size_t len = strlen(forms[i].prefix);
        if (strncmp(rest, forms[i].prefix, len) != 0)
            continue;
        p->kind = forms[i].kind;
        p->category = forms[i].category;
        rest += len;
        end = rest + strlen(rest);
        if (p->kind == URI_PENDING) {
            size_t tail = strlen("/pending");
            if ((size_t)(end - rest) <= tail || strcmp(end - tail, "/pending") != 0)
                return bad_uri(f, uri, "a trace's resource is knowhub://traces/{id}/pending");
            end -= tail;
        }
        if (end == rest)
            return bad_uri(f, uri, "the path or id is empty");
        if (url_decode(rest, (size_t)(end - rest), 0, &p->arg))
            return bad_uri(f, uri, "bad %-escape, invalid UTF-8 or NUL");
        if (p->kind != URI_DOCUMENT && strchr(p->arg.data, '/'))
            return bad_uri(f, uri, "an id holds no '/'");
        return 0;
    }
    return bad_uri(f, uri, URI_FORMS);
}

static struct json_object *contents(const char *uri, const char *mime, const char *text)
{
    struct json_object *r = json_object_new_object(), *list = json_object_new_array();
    struct json_object *one = json_object_new_object();
    json_object_object_add(one, "uri", json_object_new_string(uri));
    json_object_object_add(one, "mimeType", json_object_new_string(mime));
    json_object_object_add(one, "text", json_object_new_string(text));
    json_object_array_add(list, one);
    json_object_object_add(r, "contents", list);
    return r;
}

/* The document at (category, path): its Markdown in *text (the caller's). */
static int document_text(const struct svc_ctx *c, const char *category, const char *path,
                         struct json_object **data, struct error *err)
{
    struct json_object *body = json_object_new_object();
    int rc;
    json_object_object_add(body, "category", json_object_new_string(category));
    json_object_object_add(body, "path", json_object_new_string(path));
    rc = svc_files_read(c, body, data, err);
    json_object_put(body);
    return rc;
}

/* The resource's contents into *result; a service's error in err. */
static int read_parsed(const struct svc_ctx *c, const char *uri, const struct parsed_uri *p,
                       struct json_object **result, struct error *err)
{
    struct json_object *data = NULL, *entry = NULL;
    int rc = -1;
    switch (p->kind) {
    case URI_RULES_BLOCK:
        if ((rc = svc_context_rules(c, 0, &data, err)) == 0)
            *result = contents(uri, MD, jf_member_str(data, "block"));
        break;
    case URI_DOCUMENT:
        if ((rc = document_text(c, p->category, p->arg.data, &data, err)) == 0)
            *result = contents(uri, MD, jf_member_str(data, "content"));
        break;
    case URI_ENTRY:
        if (!id_text_valid(p->arg.data, 128)) {
            error_set(err, E_INVALID_REQUEST, NULL,
                      "Invalid id: 1 to 128 of A-Z a-z 0-9 . _ : -, not . or ..");
            break;
        }
        if (svc_knowledge_get(c, p->arg.data, &entry, err))
            break;
        if ((rc = document_text(c, jf_member_str(entry, "category"), jf_member_str(entry, "path"),
                                &data, err)) == 0)
            *result = contents(uri, MD, jf_member_str(data, "content"));
        break;
    case URI_PENDING:
        /* REST lists an unknown trace as empty; a resource must exist. */
        if (svc_trace_get(c, p->arg.data, &entry, err))
            break;
        if ((rc = svc_trace_log(c, p->arg.data, 1, MCP_PENDING_SHOWN, 0, &data, err)) == 0)
            *result = contents(uri, JSON_TYPE, json_text(data));
        break;
    }
    json_object_put(data);
    json_object_put(entry);
    return rc;
}

int mcp_resources_read(struct request *req, struct json_object *params, struct json_object **result,
                       struct rpc_fail *f)
{
    struct parsed_uri p = {0};
    struct svc_ctx c;
    struct error err;
    const char *uri;
    int rc = -1;
    buf_init(&p.arg, MCP_URI_MAX_BYTES);
    error_init(&err);
    if (rpc_param_str(params, "uri", MCP_URI_MAX_BYTES, &uri, f))
        goto out;
    if (!uri) {
        rpc_fail_set(f, RPC_INVALID_PARAMS, E_INVALID_REQUEST, "'uri' is required");
        goto out;
    }
    if (uri_parse(uri, &p, f))
        goto out;
    http_svc_ctx(req, &c);
    if (read_parsed(&c, uri, &p, result, &err) == 0) {
        rc = 0;
    } else {
        rpc_fail_from(f, &err, RPC_RESOURCE_NOT_FOUND);
        if (f->code == RPC_RESOURCE_NOT_FOUND)
            rpc_fail_set(f, RPC_RESOURCE_NOT_FOUND, E_NOT_FOUND, "Resource not found: %s", uri);
    }
out:
    error_release(&err);
    buf_release(&p.arg);
    return rc;
}

/* ---- resources/templates/list ---- */

int mcp_resources_templates(struct request *req, struct json_object *params,
                            struct json_object **result, struct rpc_fail *f)
{
    static const char *const templates[][4] = {
        {SCHEME "rules/{path}", "rule", "A rule by its path",
         "A rule document (Markdown with front matter) of the file view"},
        {SCHEME "experiences/{path}", "experience", "An experience by its path",
         "An experience document (Markdown with front matter) of the file view"},
        {SCHEME "entries/{id}", "entry", "An entry by its id",
         "The document of the entry with this id (as knowledge_search and knowledge_list "
         "name it)"},
        {SCHEME "traces/{id}/pending", "trace-pending", "A trace's pending injections",
         "The knowledge injected into the trace that has no evaluation yet (JSON, as "
         "GET /api/traces/{trace_id}/knowledge_log/pending answers)"},
    };
    struct json_object *list = json_object_new_array();
    (void)req;
    (void)params;
    (void)f;
    for (size_t i = 0; i < sizeof templates / sizeof *templates; i++) {
        struct json_object *t = json_object_new_object();
        json_object_object_add(t, "uriTemplate", json_object_new_string(templates[i][0]));
        json_object_object_add(t, "name", json_object_new_string(templates[i][1]));
        json_object_object_add(t, "title", json_object_new_string(templates[i][2]));
        json_object_object_add(t, "description", json_object_new_string(templates[i][3]));
        json_object_object_add(t, "mimeType", json_object_new_string(i == 3 ? JSON_TYPE : MD));
        json_object_array_add(list, t);
    }
    *result = json_object_new_object();
    json_object_object_add(*result, "resourceTemplates", list);
    return 0;
}
