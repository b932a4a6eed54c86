/* experience: the save-experience flow's end (service/experience.h). */
#include "service/experience.h"
#include "base/config.h"
#include "base/jfield.h"
#include "base/util.h"
#include "domain/document.h"
#include "domain/frontmatter.h"
#include "domain/knowledge.h"
#include "domain/paths.h"
#include "llm/llm.h"
#include "service/distill.h"
#include "service/knowledge.h"
#include "service/reviewgate.h"
#include "service/writerate.h"
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

#define CATEGORY_HINT_CHARS 120

/* The context's checks, in order, each with its own message. */
static int context_check(struct json_object *body, struct json_object **ctx, struct error *err)
{
    struct json_object *v;
    const char *q;
    if (!json_object_object_get_ex(body, "experience_context", ctx) ||
        !json_object_is_type(*ctx, json_type_object)) {
        error_set(err, E_INVALID_REQUEST, NULL, "'experience_context' is required");
        return -1;
    }
    if (!(q = jf_member_str(*ctx, "user_question")) || !q[strspn(q, " \t\r\n")]) {
        error_set(err, E_INVALID_REQUEST, NULL, "'experience_context.user_question' is required");
        return -1;
    }
    /* Absent means empty; present must be a list (null too is refused, as
     * a null dialog is not an empty one). */
    if (json_object_object_get_ex(*ctx, "dialog", &v) && !json_object_is_type(v, json_type_array)) {
        error_set(err, E_INVALID_REQUEST, NULL, "'experience_context.dialog' must be a list");
        return -1;
    }
    if (json_object_object_get_ex(*ctx, "interaction", &v) &&
        !json_object_is_type(v, json_type_array)) {
        error_set(err, E_INVALID_REQUEST, NULL, "'experience_context.interaction' must be a list");
        return -1;
    }
    if (json_object_object_get_ex(*ctx, "chain", &v) && !json_object_is_type(v, json_type_array)) {
        error_set(err, E_INVALID_REQUEST, NULL, "'experience_context.chain' must be a list");
        return -1;
    }
    if (!json_object_object_get_ex(*ctx, "result_summary", &v) ||
        !json_object_is_type(v, json_type_object)) {
        error_set(err, E_INVALID_REQUEST, NULL, "'experience_context.result_summary' is required");
        return -1;
    }
    return 0;
}

/* A folder name from category_hint (valid UTF-8, at most
 * CATEGORY_HINT_CHARS characters): separators, control characters and
 * leading dots removed, at most a folder name's bytes; empty means no
 * folder. Whole characters only. */
static void folder_of(const char *hint, struct buf *out)
{
    size_t chars = 0;
    buf_reset(out);
    for (const char *p = hint ? hint : ""; *p && chars < CATEGORY_HINT_CHARS;) {
        unsigned char c = (unsigned char)*p;
        size_t n = utf8_prefix(p, strlen(p), 1);
        if (n == 0 || out->len + n > PATH_SEGMENT_MAX_BYTES)
            break;
        if (n > 1 || (c >= 0x20 && c != 0x7f && c != '/' && c != '\\'))
            buf_add(out, p, n);
        p += n;
        chars++;
    }
    while (out->len && (out->data[out->len - 1] == ' ' || out->data[out->len - 1] == '.'))
        out->data[--out->len] = '\0';
    size_t lead = strspn(out->data, " .");
    memmove(out->data, out->data + lead, out->len - lead + 1);
    out->len -= lead;
}

/* What a distill request asks for, its checks passed. */
struct distill_params {
    struct json_object *ctx; /* experience_context, borrowed from the body */
    const char *model;       /* NULL: the configured one */
    const char *hint;        /* category_hint, may be NULL */
    const char *context_id;  /* may be NULL */
    long timeout_ms;         /* 0: the default */
};

/* The body's fields into p, in the order REST documents their errors. */
static int params_of(const struct svc_ctx *c, struct json_object *body, struct distill_params *p,
                     struct error *err)
{
    struct json_object *v;
    if (context_check(body, &p->ctx, err))
        return -1;
    if (json_object_object_get_ex(body, "model", &v) && llm_model_from_json(c->cfg, v, &p->model)) {
        error_set(err, E_INVALID_REQUEST, NULL, "'model' is not one of the allowed models");
        return -1;
    }
    if (jf_string(err, body, "category_hint", 0, CATEGORY_HINT_CHARS, &p->hint))
        return -1;
    if (json_object_object_get_ex(body, "timeout_seconds", &v) && v) {
        double t = json_object_get_double(v);
        if (!(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)) ||
            !(t > 0) || t > DISTILL_MAX_TIMEOUT_SECONDS) {
            error_set(err, E_INVALID_REQUEST, NULL,
                      "'timeout_seconds' must be a number above 0 (at most %d, below the "
                      "proxy's own timeout)",
                      DISTILL_MAX_TIMEOUT_SECONDS);
            return -1;
        }
        p->timeout_ms = (long)(t * 1000);
    }
    p->context_id = jf_member_str(p->ctx, "context_id");
    return 0;
}

/* The experience's document (front matter and body) into doc: by the LLM
 * when one is configured, else locally. */
static int document_of(const struct svc_ctx *c, const struct distill_params *p, const char *source,
                       struct buf *doc, struct error *err)
{
    const char *lang = distill_language(c->accept_language);
    struct llm_reply r;
    struct buf raw;
    int ret = -1;
    llm_reply_init(&r);
    buf_init(&raw, 4 << 20);
    if (config_llm_configured(c->cfg)) {
        if (distill_llm(c, p->ctx, lang, p->model, p->timeout_ms, &raw, &r)) {
            error_copy(err, &r.err, NULL);
            goto out;
        }
    } else {
        distill_local(p->ctx, lang, &raw);
    }
    distill_finish(raw.data, source, p->context_id, doc);
    ret = 0;
out:
    llm_reply_release(&r);
    buf_release(&raw);
    return ret;
}

/* The normalized path for doc into norm: named after its title, in the
 * hinted folder; never over another (name-2.md, name-3.md ...). */
static int free_path_of(const struct svc_ctx *c, const struct distill_params *p,
                        const struct buf *doc, struct buf *norm, struct error *err)
{
    struct buf name, folder, path;
    size_t off = 0;
    struct json_object *meta = frontmatter_parse(doc->data, doc->len, &off), *title = NULL;
    int rc, ret = -1;
    buf_init(&name, 4096);
    buf_init(&folder, 4096);
    buf_init(&path, 8192);
    if (meta)
        json_object_object_get_ex(meta, "title", &title);
    distill_file_name(title ? json_object_get_string(title) : NULL, p->context_id, &name);
    json_object_put(meta);
    folder_of(p->hint, &folder);
    for (int n = 1; n < 1000; n++) {
        struct knowledge taken;
        buf_reset(&path);
        if (folder.len)
            buf_addf(&path, "%s/", folder.data);
        if (n == 1)
            buf_adds(&path, name.data);
        else
            buf_addf(&path, "%.*s-%d.md", (int)(name.len - 3), name.data, n);
        if (path_check("experiences", path.data, norm, err))
            goto out;
        rc = store_knowledge_get_by_path(c->st, c->space, "experiences", norm->data, &taken);
        knowledge_release(&taken);
        if (rc == STORE_NOT_FOUND)
            break;
        if (rc) {
            store_status_error(rc, "Knowledge file", err);
            goto out;
        }
    }
    ret = 0;
out:
    buf_release(&name);
    buf_release(&folder);
    buf_release(&path);
    return ret;
}

/* Store doc as the experience at the normalized path, and answer with it. */
static int experience_write(const struct svc_ctx *c, const char *path, const struct buf *doc,
                            const char *source, struct json_object **data, struct error *err)
{
    struct buf final;
    struct knowledge k;
    int rc, ret = -1;
    buf_init(&final, 4 << 20);
    knowledge_init(&k);
    if (document_prepare("experiences", path, doc->data, doc->len, &final, err))
        goto out;
    /* A folder named like a stored document (or the reverse) cannot be exported. */
    if (knowledge_path_free(c, "experiences", path, NULL, err))
        goto out;
    k.space = xstrdup(c->space);
    k.category = xstrdup("experiences");
    k.path = xstrdup(path);
    k.score = 3;
    document_fill(&k, "experiences", path, final.data, final.len);
    {
        /* the review gate: an LLM's distillation is an LLM write */
        struct review_write w = {
            "distill",  "create", NULL,       0,    "experiences", path,
            final.data, NULL,     k.agent_id, NULL, source,        strcmp(source, "distill") == 0,
            0,          NULL,     0};
        int held = review_gate(c, &w, data, err);
        if (held) {
            ret = held > 0 ? 0 : -1;
            goto out;
        }
    }
    rc = knowledge_create(c->st, &k, c->actor);
    if (rc == STORE_CONFLICT) {
        error_set(err, E_CONFLICT, NULL, "Another experience took %s meanwhile; try again", path);
    } else if (rc) {
        store_status_error(rc, "Knowledge file", err);
    } else {
        *data = json_object_new_object();
        json_object_object_add(*data, "path", json_object_new_string(k.path));
        json_object_object_add(*data, "category", json_object_new_string("experiences"));
        json_object_object_add(*data, "id", json_object_new_string(k.id));
        json_object_object_add(*data, "title", json_object_new_string(k.title));
        json_object_object_add(*data, "source", json_object_new_string(source));
        ret = 0;
    }
out:
    knowledge_release(&k);
    buf_release(&final);
    return ret;
}

int svc_distill_experience(const struct svc_ctx *c, struct json_object *body,
                           struct json_object **data, struct error *err)
{
    struct distill_params p = {0};
    const char *source = config_llm_configured(c->cfg) ? "distill" : "distill-local";
    struct buf doc, norm;
    int ret = -1;

    *data = NULL;
    buf_init(&doc, 4 << 20);
    buf_init(&norm, 8192);
    if (params_of(c, body, &p, err) || write_admit(c, 1, err) ||
        document_of(c, &p, source, &doc, err) || free_path_of(c, &p, &doc, &norm, err))
        goto out;
    ret = experience_write(c, norm.data, &doc, source, data, err);
out:
    buf_release(&doc);
    buf_release(&norm);
    return ret;
}
