/* reviewgate (service): the one place every write path of the knowledge
 * asks whether its write is done now or held for review (docs/review.md):
 * the space's review policy decides, and a held write is stored as a
 * proposal with its whole document and provenance (service/review.h lists
 * and decides them). */
#ifndef KNOWHUB_SVC_REVIEWGATE_H
#define KNOWHUB_SVC_REVIEWGATE_H

#include <json-c/json.h>

struct svc_ctx;
struct error;

/* An entry a slim merge merges into its survivor, at the version read. */
struct review_member {
    const char *id;
    long version;
};

/* A write about to be done, as review_gate sees it. Strings borrowed. */
struct review_write {
    const char *write_path;      /* "entry", "file" ...: the route or tool it came by */
    const char *kind;            /* "create", "update", "delete", "rename" or "slim_merge" */
    const char *knowledge_id;    /* the entry changed (update, delete; a slim merge's survivor);
                                  * NULL for a create */
    long base_version;           /* the entry's version the change was made against */
    const char *category, *path; /* path "" for an entry-view create named at approval;
                                  * a rename's new place */
    const char *document;        /* the whole new document; the live one for a delete */
    const char *base_document;   /* the live document (update, delete); NULL for a create */
    const char *agent_id, *trace_id;
    const char *source; /* "agent", "llm" ... */
    int by_llm;         /* the text was written by an LLM (evolve, slim, distill) */
    int was_live;       /* the text was live knowledge (a revert, a rename): not screened */
    const struct review_member *members; /* a slim merge's members, stored with it */
    size_t member_count;
};

/* Whether w is to be held for review under the caller's space's policy:
 * 1 with the proposal stored and *data {status: "pending", proposal_id,
 * kind, category, path} (the caller answers it instead of the write's own
 * answer); 0 when the write is to be done now; -1 with err. */
int review_gate(const struct svc_ctx *c, const struct review_write *w, struct json_object **data,
                struct error *err);

/* Hold w for review whatever the policy (the caller has asked it: a slim
 * job started under a policy that holds it): 1 with the proposal stored
 * (quarantined when the poisoning screen finds something) and *data as
 * review_gate's, or -1 with err. */
int review_propose(const struct svc_ctx *c, const struct review_write *w, struct json_object **data,
                   struct error *err);

/* The held answer of the proposal id of the caller's space, as
 * review_gate gave it (an Idempotency-Key's replay): 0 with *data, or -1
 * with err. */
int review_held_data(const struct svc_ctx *c, const char *id, struct json_object **data,
                     struct error *err);

/* Whether policy is one of off, agent_writes, llm_writes, all. */
int review_policy_valid(const char *policy);

/* Whether the space's policy (or the token's) would hold a write of this
 * caller (by_llm as in review_write): 0 with *holds, or -1 with err. */
int review_holds(const struct svc_ctx *c, int by_llm, int *holds, struct error *err);

/* For a write that cannot be held as a proposal yet (the restore of a
 * deleted entry, a revert that moves it; docs/review.md): -1 with err FORBIDDEN (key
 * review_required, param write_path) when the space's policy would hold a
 * write of this caller there (by_llm as in review_write), so no write
 * slips past review; 0 when it may be done now. */
int review_refuse(const struct svc_ctx *c, const char *write_path, int by_llm, struct error *err);

#endif
