/* ctx: who runs a service operation and with what. Every service function
 * takes a struct svc_ctx, never an HTTP request: REST (api/) and MCP (mcp/)
 * build one from their caller, the CLI and the job runner from their own. */
#ifndef KNOWHUB_CTX_H
#define KNOWHUB_CTX_H

struct store;
struct llm;
struct metrics;
struct config;

/* The roles, least first: each may do what the ones below it may. */
enum role { ROLE_NONE = -1, ROLE_READER = 0, ROLE_AGENT = 1, ROLE_EDITOR = 2, ROLE_ADMIN = 3 };

/* Who is calling: filled by authentication (service/auth.c). */
struct identity {
    char *space;    /* owned */
    char *token_id; /* owned */
    char *actor;    /* owned: "token:<id>" or "token:<id>:<label>" for the audit trail */
    enum role role;
    char *csrf; /* owned: the CSRF token when the caller came with a login cookie */
};

struct svc_ctx {
    const char *space;           /* the caller's space: every read and write is scoped to it */
    const char *actor;           /* the audit trail's and the reasoning log's identity */
    const char *token_id;        /* the caller's token (write rates), NULL for the CLI and jobs */
    enum role role;              /* what the caller may do */
    const char *request_id;      /* the reasoning log's session; may be NULL */
    const char *accept_language; /* the caller's Accept-Language, or NULL */
    struct store *st;            /* this thread's store connection */
    struct llm *llm;             /* this thread's LLM client; may be NULL */
    struct metrics *metrics;     /* this thread's counters; may be NULL */
    const struct config *cfg;    /* the server's configuration (read-only) */
    const char *idempotency_key; /* the request's Idempotency-Key header, or NULL */
};

#endif
