/* evolve: the LLM rewrites an entry after feedback. */
#include "service/evolve.h"
#include "base/jfield.h"
#include "domain/document.h"
#include "base/error.h"
#include "service/ctx.h"
#include "service/llmcall.h"
#include "service/reviewgate.h"
#include "domain/knowledge_limits.h"
#include "llm/llm.h"
#include "store/store.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

static int add_case_line(const struct knowledge_case *c, void *ctx)
{
    buf_addf(ctx, "- %s: %s\n", c->scenario, c->result);
    return 0;
}

/* The answer without a ``` fence wrapped around all of it. */
static void unfence(const char *text, struct buf *out)
{
    size_t n = strlen(text), start = strspn(text, " \t\r\n");
    const char *body;
    size_t len;
    buf_reset(out);
    if (fence_unwrap(text, n, &body, &len)) {
        text = body;
        start = 0;
        n = len;
    }
    while (n > start && strchr(" \t\r\n", text[n - 1]))
        n--;
    buf_add(out, text + start, n - start);
}

int evolve_rewrite(const struct svc_ctx *c, const struct knowledge *k, const char *feedback,
                   struct buf *out, struct llm_reply *r)
{
    size_t limit = strcmp(k->category, "rules") == 0 ? LIMIT_RULES_BODY : LIMIT_EXPERIENCES_BODY;
    struct json_object *messages = json_object_new_array();
    struct llm_request lr;
    struct buf system, user, harmful;
    int rc = -1;

    buf_init(&system, 8192);
    buf_init(&user, 1 << 20);
    buf_init(&harmful, 1 << 16);
    /* Best effort: the rewrite goes on without the cases it could not read. */
    store_ignore(store_knowledge_cases_each(c->st, k->id, "harmful", 5, add_case_line, &harmful));
    buf_addf(&system,
             "You maintain a knowledge base that AI agents read before they work. Rewrite the "
             "knowledge entry so that it answers the feedback: keep what is right, correct what "
             "the feedback shows wrong, add what it shows missing. Write reusable method, not "
             "case details; no raw data, no secrets. Answer with the new content only, in "
             "Markdown, at most %zu characters, in the language of the current content.",
             limit);
    buf_addf(&user, "Scenario: %s\n\nCurrent content:\n%s\n\n", k->scenario, k->content);
    if (harmful.len)
        buf_addf(&user, "Cases where it was harmful:\n%s\n", harmful.data);
    buf_addf(&user, "Feedback:\n%s\n", feedback);
    json_object_array_add(messages, llm_message("system", system.data));
    json_object_array_add(messages, llm_message("user", user.data));
    lr = svc_llm_request(c, "evolve", messages);
    for (int attempt = 0; attempt < 2; attempt++) {
        if (svc_llm_chat(c, &lr, r))
            goto out;
        unfence(r->text.data, out);
        size_t chars = utf8_length(out->data, out->len);
        if (chars > 0 && chars <= limit) {
            rc = 0;
            goto out;
        }
        /* Once more, asking it to condense, as distill does. */
        json_object_array_add(messages, llm_message("assistant", r->text.data));
        buf_reset(&user);
        buf_addf(&user,
                 "That is %zu characters; the limit is %zu. Condense it, keeping the "
                 "method and the pitfalls.",
                 chars, limit);
        json_object_array_add(messages, llm_message("user", user.data));
    }
    error_set(&r->err, E_LIMIT_EXCEEDED, NULL,
              "The LLM's rewrite stayed over the %zu-character limit", limit);
out:
    json_object_put(messages);
    buf_release(&system);
    buf_release(&user);
    buf_release(&harmful);
    return rc;
}

int evolve_apply(const struct svc_ctx *c, const struct knowledge *k, const char *content,
                 char **held)
{
    struct knowledge next;
    struct json_object *pending = NULL;
    struct error err;
    struct buf doc;
    int rc, gate;
    *held = NULL;
    knowledge_init(&next);
    error_init(&err);
    buf_init(&doc, 4 << 20);
    document_with_body(k->document, content, &doc);
    {
        struct review_write w = {"evolve", "update", k->id,       k->version,  k->category,
                                 k->path,  doc.data, k->document, k->agent_id, NULL,
                                 "llm",    1,        0,           NULL,        0};
        gate = review_gate(c, &w, &pending, &err);
    }
    if (gate) {
        /* held: the proposal is written in the caller's transaction */
        if (gate > 0)
            *held = xstrdup(jf_member_str(pending, "proposal_id"));
        rc = gate > 0 ? STORE_OK : STORE_ERROR;
        goto out;
    }
    next.category = xstrdup(k->category);
    next.path = xstrdup(k->path);
    document_fill(&next, k->category, k->path, doc.data, doc.len);
    rc = store_knowledge_update(c->st, c->space, k->id, &next, k->version, c->actor, "evolve");
out:
    json_object_put(pending);
    error_release(&err);
    knowledge_release(&next);
    buf_release(&doc);
    return rc;
}
