/* config: the operator's settings (the KNOWHUB_* variables, docs/operations.md), read once
 * from the environment by main before any thread starts, then read-only. */
#ifndef KNOWHUB_CONFIG_H
#define KNOWHUB_CONFIG_H

#include <stddef.h>

/* The shortest KNOWHUB_METRICS_TOKEN taken (a shorter one is ignored, with a warning). */
#define METRICS_TOKEN_MIN 16

struct config {
    const char *data_dir;     /* KNOWHUB_DATA, default ./var */
    const char *socket_path;  /* KNOWHUB_SOCKET, NULL: data_dir/run/knowhub.sock */
    const char *database_url; /* KNOWHUB_DATABASE_URL: PostgreSQL; NULL: data_dir/knowhub.db */
    int threads;              /* KNOWHUB_THREADS, default 2 x cores */
    const char *llm_base_url; /* KNOWHUB_LLM_BASE_URL, NULL when unset */
    const char *llm_api_key;
    const char *llm_model;
    const char *llm_router_model;
    const char *llm_models;  /* KNOWHUB_LLM_MODELS: the allow-list a request may pick from */
    long llm_timeout_ms;     /* KNOWHUB_LLM_TIMEOUT (seconds), default 60 */
    long conflict_llm_calls; /* KNOWHUB_CONFLICT_LLM_CALLS: LLM verdicts a conflict check may ask
                              * for (a write, an embedding batch), 0-20, default 5; 0: none */
    const char *agent_log;   /* off, on, verbose (anything else counts as on) */
    int cache_slots;         /* KNOWHUB_CACHE_SLOTS: answers cached per thread; 0 = none */
    long token_cache_ms;     /* KNOWHUB_TOKEN_CACHE_MS: a verified token kept, 1000; 0 = none */

    /* Memory bounds (docs/operations.md) */
    size_t cache_bytes;        /* KNOWHUB_CACHE_BYTES: all threads' caches together; 0 = none */
    size_t mcp_budget_bytes;   /* KNOWHUB_MCP_BUDGET_BYTES: one /mcp answer, default 4 MiB */
    long mcp_budget_ms;        /* KNOWHUB_MCP_BUDGET_MS: a batch starts nothing after, 10000 */
    long streams_max;          /* KNOWHUB_STREAMS_MAX: live streams open at once (GET /mcp,
                                * GET /api/events), 1024; 0 = none */
    long streams_per_token;    /* KNOWHUB_STREAMS_PER_TOKEN: of them one token's, 64 */
    long streams_heartbeat_ms; /* KNOWHUB_STREAMS_HEARTBEAT: seconds of silence before a
                                * comment line keeps a stream open, 15 */

    /* Logs under $KNOWHUB_DATA/logs (docs/operations.md "Logs") */
    int access_log;    /* KNOWHUB_ACCESS_LOG: on (default) or off: access + audit JSON lines */
    int debug_headers; /* KNOWHUB_DEBUG_HEADERS: on adds X-KnowHub-Round-Trips (tests) */
    long long log_max_bytes; /* KNOWHUB_LOG_MAX_BYTES: rotate at this size, 0 = never, 64 MiB */
    int log_keep;            /* KNOWHUB_LOG_KEEP: rotated files kept (name.1 ... name.N), 5 */

    /* Several processes on one database (docs/operations.md "Several processes") */
    const char *node; /* KNOWHUB_NODE: this process's name (jobs, X-KnowHub-Node), the host's */
    const char *metrics_token; /* KNOWHUB_METRICS_TOKEN: /metrics off loopback (NULL: none) */
    long job_lease_s;  /* KNOWHUB_JOB_LEASE: seconds a job stays this node's without progress */
    char node_buf[65]; /* the host name when KNOWHUB_NODE is unset */

    /* Embeddings (docs/search.md "By meaning"): an OpenAI-compatible
     * POST {embed_url}/embeddings; unset, search is lexical only. */
    const char *embed_url;       /* KNOWHUB_EMBED_URL, NULL when unset */
    const char *embed_model;     /* KNOWHUB_EMBED_MODEL, default "embedding" */
    const char *embed_key;       /* KNOWHUB_EMBED_KEY */
    int embed_batch;             /* KNOWHUB_EMBED_BATCH: most texts per request, 1..256, 32 */
    long embed_timeout_ms;       /* KNOWHUB_EMBED_TIMEOUT (seconds), default 30 */
    double hybrid_alpha;         /* KNOWHUB_HYBRID_ALPHA: the lexical share of the fused score */
    double embed_min_similarity; /* KNOWHUB_EMBED_MIN_SIMILARITY: a hit by meaning alone needs
                                  * at least this cosine; 0 (default): none */

    /* Search (docs/search.md "Relevance") */
    int ranking; /* KNOWHUB_RANKING: CONFIG_RANKING_* (fused, reference or bm25f) */

    /* Fair shares between spaces and tokens (docs/operations.md "Quotas"); 0 = no limit */
    size_t search_index_bytes; /* KNOWHUB_SEARCH_INDEX_BYTES: the lexical index in memory, 1 GiB */
    size_t vector_bytes;       /* KNOWHUB_VECTOR_BYTES: every space's vectors in memory, 1 GiB */
    size_t vector_space_bytes; /* KNOWHUB_VECTOR_SPACE_BYTES: one space's, 256 MiB */
    long space_entries;        /* KNOWHUB_SPACE_ENTRIES: entries one space holds, 100000 */
    long write_rate;           /* KNOWHUB_WRITE_RATE: items one token writes per second, 100 */
    long write_burst;          /* KNOWHUB_WRITE_BURST: items it may write at once, 1000 */
};

/* The order of the words KNOWHUB_RANKING takes (the first is the default). */
enum { CONFIG_RANKING_FUSED, CONFIG_RANKING_REFERENCE, CONFIG_RANKING_BM25F };

/* Return 1 when an LLM is configured (KNOWHUB_LLM_BASE_URL is set). */
int config_llm_configured(const struct config *cfg);
/* Return 1 when an embeddings server is configured (KNOWHUB_EMBED_URL is set). */
int config_embed_configured(const struct config *cfg);
/* Return 1 when model may be used: one of the configured models or of the
 * comma-separated KNOWHUB_LLM_MODELS allow-list. */
int config_model_allowed(const struct config *cfg, const char *model);

/* Fill cfg from the environment (strings point into the environment). */
void config_from_env(struct config *cfg);

#endif
