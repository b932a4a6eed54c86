/* test_review: the review queue on SQLite (store_open(":memory:")):
 *   - store/review.c: the policy ("off" until set; a token's own over the
 *     space's), proposals inserted, read, listed by state, counted, decided
 *     once (a second decision from the same state is STORE_CONFLICT), never
 *     seen from another space;
 *   - service/reviewgate.c: which writes each policy holds (by role, by an
 *     LLM, a token's own), the held answer, review_refuse;
 *   - service/review.c: an approval writes the entry with the reviewer as
 *     actor; a change whose entry moved is base_moved and stays pending; a
 *     quarantined proposal is approved by admins only. */
#include "harness.h"
#include "base/config.h"
#include "base/jfield.h"
#include "base/util.h"
#include "domain/knowledge.h"
#include "service/ctx.h"
#include "service/files.h"
#include "service/review.h"
#include "store/store.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

static struct config cfg;

/* A literal in a struct proposal (its texts are char *: owned when read). */
#define TEXT(s) ((char *)(s))

static struct svc_ctx ctx_of(struct store *st, const char *space, enum role role,
                             const char *token_id)
{
    struct svc_ctx c = {0};
    c.space = space;
    c.actor = role == ROLE_AGENT ? "token:agent:unit" : "token:editor:unit";
    c.token_id = token_id;
    c.role = role;
    c.st = st;
    c.cfg = &cfg;
    return c;
}

static struct proposal proposal_of(const char *id, const char *space)
{
    struct proposal p;
    memset(&p, 0, sizeof p);
    p.id = (char *)id;
    p.space = (char *)space;
    p.kind = TEXT("create");
    p.state = TEXT("pending");
    p.write_path = TEXT("entry");
    p.category = TEXT("experiences");
    p.path = TEXT("a.md");
    p.document = TEXT("---\ntitle: A\n---\n\nbody");
    p.actor = TEXT("token:agent:unit");
    p.agent_id = TEXT("");
    p.trace_id = TEXT("");
    p.source = TEXT("agent");
    p.reasons = TEXT("[]");
    p.created_at = TEXT("2026-12-06T00:00:00.000000");
    return p;
}

static void count_item(const struct proposal *p, void *ctx)
{
    (void)p;
    (*(int *)ctx)++;
}

static void test_store(struct store *st)
{
    char *policy = NULL;
    long pending, quarantined, total;
    int n = 0;
    struct proposal p = proposal_of("prop-1", "s1"), got;

    CHECK_INT(store_review_policy_get(st, "s1", NULL, &policy), STORE_OK);
    CHECK_STR(policy, "off");
    free(policy);
    CHECK_INT(store_review_policy_set(st, "s1", "agent_writes", "token:admin"), STORE_OK);
    CHECK_INT(store_token_review_set(st, "tok-own", "all"), STORE_OK);
    CHECK_INT(store_review_policy_get(st, "s1", "tok-other", &policy), STORE_OK);
    CHECK_STR(policy, "agent_writes");
    free(policy);
    CHECK_INT(store_review_policy_get(st, "s1", "tok-own", &policy), STORE_OK);
    CHECK_STR(policy, "all");
    free(policy);
    CHECK_INT(store_review_policy_get(st, "s2", NULL, &policy), STORE_OK);
    CHECK_STR(policy, "off");
    free(policy);

    CHECK_INT(store_proposal_insert(st, &p), STORE_OK);
    CHECK_INT(store_proposal_insert(st, &p), STORE_CONFLICT);
    p.id = TEXT("prop-2");
    p.state = TEXT("quarantined");
    p.reasons = TEXT("[\"instruction_override\"]");
    CHECK_INT(store_proposal_insert(st, &p), STORE_OK);
    CHECK_INT(store_proposal_counts(st, "s1", &pending, &quarantined), STORE_OK);
    CHECK_INT(pending, 1);
    CHECK_INT(quarantined, 1);
    CHECK_INT(store_proposal_counts(st, "s2", &pending, &quarantined), STORE_OK);
    CHECK_INT(pending + quarantined, 0);
    CHECK_INT(store_proposal_list(st, "s1", "pending", 10, 0, count_item, &n, &total), STORE_OK);
    CHECK_INT(n, 1);
    CHECK_INT(total, 1);
    n = 0;
    CHECK_INT(store_proposal_list(st, "s1", NULL, 10, 0, count_item, &n, &total), STORE_OK);
    CHECK_INT(n, 2);
    n = 0;
    CHECK_INT(store_proposal_list(st, "s2", NULL, 10, 0, count_item, &n, &total), STORE_OK);
    CHECK_INT(n, 0);

    CHECK_INT(store_proposal_get(st, "s2", "prop-1", &got), STORE_NOT_FOUND);
    store_proposal_release(&got);
    CHECK_INT(store_proposal_get(st, "s1", "prop-2", &got), STORE_OK);
    CHECK_STR(got.reasons, "[\"instruction_override\"]");
    CHECK(got.knowledge_id == NULL && got.decision == NULL);
    store_proposal_release(&got);

    /* decided once: the second decision from "pending" finds none */
    CHECK_INT(store_proposal_decide(st, "s1", "prop-1", "pending", "rejected", "reject", "no",
                                    "token:editor", NULL),
              STORE_OK);
    CHECK_INT(store_proposal_decide(st, "s1", "prop-1", "pending", "approved", "approve", NULL,
                                    "token:other", NULL),
              STORE_CONFLICT);
    CHECK_INT(store_proposal_decide(st, "s2", "prop-2", "quarantined", "rejected", "reject", "x",
                                    "token:editor", NULL),
              STORE_NOT_FOUND);
    CHECK_INT(store_proposal_get(st, "s1", "prop-1", &got), STORE_OK);
    CHECK_STR(got.state, "rejected");
    CHECK_STR(got.decided_by, "token:editor");
    CHECK_STR(got.decision_reason, "no");
    store_proposal_release(&got);
    CHECK_INT(store_proposal_totals(st, &pending, &quarantined), STORE_OK);
    CHECK_INT(pending, 0);
    CHECK_INT(quarantined, 1);
}

/* review_gate of a create by c under the space's policy: 1 held, 0 not. */
static int held(const struct svc_ctx *c, int by_llm)
{
    struct review_write w = {0};
    struct json_object *data = NULL;
    struct error err;
    int rc;
    w.write_path = "entry";
    w.kind = "create";
    w.category = "experiences";
    w.path = "";
    w.document = "body";
    w.source = "agent";
    w.by_llm = by_llm;
    error_init(&err);
    rc = review_gate(c, &w, &data, &err);
    if (rc == 1) {
        CHECK_STR(jf_member_str(data, "status"), "pending");
        CHECK(strncmp(jf_member_str(data, "proposal_id"), "prop-", 5) == 0);
    }
    json_object_put(data);
    error_release(&err);
    return rc;
}

static void test_gate(struct store *st)
{
    struct svc_ctx agent = ctx_of(st, "g1", ROLE_AGENT, "tok-a");
    struct svc_ctx editor = ctx_of(st, "g1", ROLE_EDITOR, "tok-e");
    struct svc_ctx cli = ctx_of(st, "g1", ROLE_ADMIN, NULL);
    struct svc_ctx trusted = ctx_of(st, "g1", ROLE_AGENT, "tok-trusted");
    struct error err;

    CHECK_INT(held(&agent, 0), 0); /* off */
    CHECK_INT(held(&agent, 1), 0);
    CHECK_INT(store_review_policy_set(st, "g1", "agent_writes", "t"), STORE_OK);
    CHECK_INT(held(&agent, 0), 1);
    CHECK_INT(held(&editor, 0), 0);
    CHECK_INT(held(&editor, 1), 0);
    CHECK_INT(store_token_review_set(st, "tok-trusted", "off"), STORE_OK);
    CHECK_INT(held(&trusted, 0), 0);
    CHECK_INT(store_review_policy_set(st, "g1", "llm_writes", "t"), STORE_OK);
    CHECK_INT(held(&agent, 0), 0);
    CHECK_INT(held(&editor, 1), 1);
    CHECK_INT(store_review_policy_set(st, "g1", "all", "t"), STORE_OK);
    CHECK_INT(held(&editor, 0), 1);
    CHECK_INT(held(&cli, 0), 0); /* the operator's own */
    CHECK_INT(held(&cli, 1), 1);

    error_init(&err);
    CHECK_INT(review_refuse(&editor, "rename", 0, &err), -1);
    CHECK_STR(err.key, "review_required");
    error_release(&err);
    error_init(&err);
    CHECK_INT(review_refuse(&trusted, "rename", 0, &err), 0);
    error_release(&err);
    {
        int holds = -1;
        error_init(&err);
        CHECK_INT(review_holds(&editor, 0, &holds, &err), 0);
        CHECK_INT(holds, 1);
        CHECK_INT(review_holds(&trusted, 0, &holds, &err), 0);
        CHECK_INT(holds, 0);
        CHECK_INT(review_holds(&cli, 0, &holds, &err), 0);
        CHECK_INT(holds, 0);
        error_release(&err);
    }
    CHECK(review_policy_valid("llm_writes") && !review_policy_valid("sometimes"));
}

/* A file view write by c: 0 with *data, or -1. */
static int write_file(const struct svc_ctx *c, const char *path, const char *content,
                      struct json_object **data)
{
    struct json_object *body = json_object_new_object();
    struct error err;
    int rc;
    json_object_object_add(body, "category", json_object_new_string("experiences"));
    json_object_object_add(body, "path", json_object_new_string(path));
    json_object_object_add(body, "content", json_object_new_string(content));
    error_init(&err);
    *data = NULL;
    rc = svc_files_write(c, body, data, &err);
    error_release(&err);
    json_object_put(body);
    return rc;
}

static int decide(const struct svc_ctx *c, const char *id, const char *decision,
                  const char *document, struct json_object **data, struct error *err)
{
    struct json_object *body = json_object_new_object();
    int rc;
    json_object_object_add(body, "decision", json_object_new_string(decision));
    if (document)
        json_object_object_add(body, "document", json_object_new_string(document));
    *data = NULL;
    rc = svc_review_decide(c, id, body, data, err);
    json_object_put(body);
    return rc;
}

static void test_decide(struct store *st)
{
    struct svc_ctx agent = ctx_of(st, "d1", ROLE_AGENT, "tok-da");
    struct svc_ctx editor = ctx_of(st, "d1", ROLE_EDITOR, "tok-de");
    struct json_object *w = NULL, *u = NULL, *d = NULL;
    struct knowledge k;
    struct error err;
    char *id = NULL;

    CHECK_INT(store_review_policy_set(st, "d1", "agent_writes", "t"), STORE_OK);
    CHECK_INT(write_file(&editor, "x.md", "one", &w), 0);
    id = xstrdup(jf_member_str(w, "id"));
    CHECK_INT(write_file(&agent, "x.md", "two", &u), 0);
    CHECK_STR(jf_member_str(u, "status"), "pending");
    CHECK_STR(jf_member_str(u, "kind"), "update");
    /* the live entry moves: approve is base_moved, the proposal stays pending */
    json_object_put(w);
    CHECK_INT(write_file(&editor, "x.md", "three", &w), 0);
    error_init(&err);
    CHECK_INT(decide(&editor, jf_member_str(u, "proposal_id"), "approve", NULL, &d, &err), -1);
    CHECK_STR(err.key, "base_moved");
    error_release(&err);
    error_init(&err);
    CHECK_INT(decide(&editor, jf_member_str(u, "proposal_id"), "edit", "three, then two", &d, &err),
              0);
    CHECK_STR(jf_member_str(d, "state"), "approved");
    CHECK_STR(jf_member_str(d, "result_id"), id);
    error_release(&err);
    CHECK_INT(store_knowledge_get(st, "d1", id, 0, &k), STORE_OK);
    CHECK(strstr(k.content, "three, then two") != NULL);
    CHECK_INT(k.version, 3);
    knowledge_release(&k);
    free(id);
    json_object_put(w);
    json_object_put(u);
    json_object_put(d);
}

/* A quarantined proposal (the screen's): editors may reject it, only
 * admins approve it. */
static void test_quarantine(struct store *st)
{
    struct svc_ctx editor = ctx_of(st, "q1", ROLE_EDITOR, "tok-qe");
    struct svc_ctx admin = ctx_of(st, "q1", ROLE_ADMIN, "tok-qa");
    struct proposal p = proposal_of("prop-q1", "q1");
    struct json_object *d = NULL;
    struct error err;
    p.state = TEXT("quarantined");
    p.path = TEXT("q.md");
    p.reasons = TEXT("[\"hidden_text\"]");
    CHECK_INT(store_proposal_insert(st, &p), STORE_OK);
    p.id = TEXT("prop-q2");
    p.path = TEXT("q2.md");
    CHECK_INT(store_proposal_insert(st, &p), STORE_OK);
    error_init(&err);
    CHECK_INT(decide(&editor, "prop-q1", "approve", NULL, &d, &err), -1);
    CHECK_STR(err.key, "quarantine_admin_only");
    error_release(&err);
    error_init(&err);
    CHECK_INT(decide(&admin, "prop-q1", "approve", NULL, &d, &err), 0);
    CHECK_STR(jf_member_str(d, "state"), "approved");
    json_object_put(d);
    error_release(&err);
    {
        struct json_object *body = json_object_new_object();
        json_object_object_add(body, "decision", json_object_new_string("reject"));
        json_object_object_add(body, "reason", json_object_new_string("injection"));
        error_init(&err);
        CHECK_INT(svc_review_decide(&editor, "prop-q2", body, &d, &err), 0);
        CHECK_STR(jf_member_str(d, "state"), "rejected");
        json_object_put(d);
        json_object_put(body);
        error_release(&err);
    }
}

int main(void)
{
    struct store *st = NULL;
    store_global_init();
    if (sodium_init() < 0 || !CHECK_INT(store_open(":memory:", &st), STORE_OK))
        return test_summary();
    config_from_env(&cfg);
    test_store(st);
    test_gate(st);
    test_decide(st);
    test_quarantine(st);
    store_close(st);
    return test_summary();
}
