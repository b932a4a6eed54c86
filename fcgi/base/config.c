/* config: the operator's settings, read once from the environment. */
#include "base/config.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

/* The integer setting name in [lo, hi], or dflt when unset. A value that is
 * not one is said on stderr (the operator sees it at start) and ignored. */
static long env_long(const char *name, long lo, long hi, long dflt)
{
    const char *text = env_or(name, NULL);
    long v;
    if (!text)
        return dflt;
    if (parse_long(text, lo, hi, &v) == 0)
        return v;
    fprintf(stderr, "knowhub: %s=%s is not a whole number in [%ld, %ld]: using %ld\n", name, text,
            lo, hi, dflt);
    return dflt;
}

/* The fraction setting name in [0, 1], or dflt (with a warning, as above). */
static double env_fraction(const char *name, double dflt)
{
    const char *text = env_or(name, NULL);
    char *end;
    double v;
    if (!text)
        return dflt;
    v = strtod(text, &end);
    if (!*end && v >= 0.0 && v <= 1.0)
        return v;
    fprintf(stderr, "knowhub: %s=%s is not a number in [0, 1]: using %g\n", name, text, dflt);
    return dflt;
}

/* One of the words of choices (NULL-terminated): its index, or 0 (the
 * default, choices[0]) with a warning for any other text. */
static int env_choice(const char *name, const char *const *choices)
{
    const char *text = env_or(name, NULL);
    if (!text)
        return 0;
    for (int i = 0; choices[i]; i++)
        if (strcmp(text, choices[i]) == 0)
            return i;
    fprintf(stderr, "knowhub: %s=%s is not one of the known values: using %s\n", name, text,
            choices[0]);
    return 0;
}

void config_from_env(struct config *cfg)
{
    static const char *const on_off[] = {"on", "off", NULL};
    static const char *const rankings[] = {"fused", "reference", "bm25f", NULL};
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    cfg->data_dir = env_or("KNOWHUB_DATA", "./var");
    cfg->socket_path = env_or("KNOWHUB_SOCKET", NULL);
    cfg->database_url = env_or("KNOWHUB_DATABASE_URL", NULL);
    cfg->threads = (int)env_long("KNOWHUB_THREADS", 1, 256, 2 * (cores > 0 ? cores : 1));
    cfg->llm_base_url = env_or("KNOWHUB_LLM_BASE_URL", NULL);
    cfg->llm_api_key = env_or("KNOWHUB_LLM_API_KEY", NULL);
    cfg->llm_model = env_or("KNOWHUB_LLM_MODEL", "anthropic/claude-sonnet-4.5");
    cfg->llm_router_model = env_or("KNOWHUB_LLM_ROUTER_MODEL", "google/gemini-2.0-flash-001");
    cfg->llm_models = env_or("KNOWHUB_LLM_MODELS", "");
    cfg->llm_timeout_ms = env_long("KNOWHUB_LLM_TIMEOUT", 1, 3600, 60) * 1000;
    cfg->conflict_llm_calls = env_long("KNOWHUB_CONFLICT_LLM_CALLS", 0, 20, 5);
    cfg->agent_log = env_or("KNOWHUB_AGENT_LOG", "off"); /* any word but off is on */
    cfg->cache_slots = (int)env_long("KNOWHUB_CACHE_SLOTS", 0, 65536, 512);
    /* A verified token kept in memory: how long a revocation elsewhere may take. */
    cfg->token_cache_ms = env_long("KNOWHUB_TOKEN_CACHE_MS", 0, 60000, 1000);
    /* The total over all worker threads; each thread gets its share. */
    cfg->cache_bytes = (size_t)env_long("KNOWHUB_CACHE_BYTES", 0, 1L << 40, 64L * 1024 * 1024);
    /* What one POST /mcp may cost (docs/agents.md "Budgets"). */
    cfg->mcp_budget_bytes = (size_t)env_long("KNOWHUB_MCP_BUDGET_BYTES", 64L * 1024,
                                             64L * 1024 * 1024, 4L * 1024 * 1024);
    cfg->mcp_budget_ms = env_long("KNOWHUB_MCP_BUDGET_MS", 1, 3600L * 1000, 10000);
    /* Live streams (docs/agents.md "Live updates"): a thread holds them all. */
    cfg->streams_max = env_long("KNOWHUB_STREAMS_MAX", 0, 16384, 1024);
    cfg->streams_per_token = env_long("KNOWHUB_STREAMS_PER_TOKEN", 1, 16384, 64);
    cfg->streams_heartbeat_ms = env_long("KNOWHUB_STREAMS_HEARTBEAT", 1, 3600, 15) * 1000;
    cfg->access_log = env_choice("KNOWHUB_ACCESS_LOG", on_off) == 0;
    cfg->debug_headers =
        getenv("KNOWHUB_DEBUG_HEADERS") && env_choice("KNOWHUB_DEBUG_HEADERS", on_off) == 0;
    cfg->log_max_bytes = env_long("KNOWHUB_LOG_MAX_BYTES", 0, 1L << 40, 64L * 1024 * 1024);
    cfg->log_keep = (int)env_long("KNOWHUB_LOG_KEEP", 1, 100, 5);
    cfg->node = env_or("KNOWHUB_NODE", NULL);
    if (cfg->node && !id_text_valid(cfg->node, 64))
        fprintf(stderr,
                "knowhub: KNOWHUB_NODE=%s is not a name of 1-64 letters, digits, '-', "
                "'_' or '.': using the host's\n",
                cfg->node);
    if (!cfg->node || !id_text_valid(cfg->node, 64)) {
        if (gethostname(cfg->node_buf, sizeof cfg->node_buf - 1) != 0 ||
            !id_text_valid(cfg->node_buf, 64))
            snprintf(cfg->node_buf, sizeof cfg->node_buf, "knowhub");
        cfg->node = cfg->node_buf;
    }
    cfg->job_lease_s = env_long("KNOWHUB_JOB_LEASE", 1, 86400, 300);
    cfg->metrics_token = env_or("KNOWHUB_METRICS_TOKEN", NULL);
    if (cfg->metrics_token && strlen(cfg->metrics_token) < METRICS_TOKEN_MIN) {
        fprintf(stderr,
                "knowhub: KNOWHUB_METRICS_TOKEN is shorter than %d characters: ignored, /metrics "
                "answers loopback only\n",
                METRICS_TOKEN_MIN);
        cfg->metrics_token = NULL;
    }
    cfg->embed_url = env_or("KNOWHUB_EMBED_URL", NULL);
    cfg->embed_model = env_or("KNOWHUB_EMBED_MODEL", "embedding");
    cfg->embed_key = env_or("KNOWHUB_EMBED_KEY", NULL);
    cfg->embed_batch = (int)env_long("KNOWHUB_EMBED_BATCH", 1, 256, 32);
    cfg->embed_timeout_ms = env_long("KNOWHUB_EMBED_TIMEOUT", 1, 3600, 30) * 1000;
    cfg->hybrid_alpha = env_fraction("KNOWHUB_HYBRID_ALPHA", 0.3);
    cfg->embed_min_similarity = env_fraction("KNOWHUB_EMBED_MIN_SIMILARITY", 0.0);
    cfg->ranking = env_choice("KNOWHUB_RANKING", rankings);
    /* Fair shares between spaces (docs/operations.md "Quotas"). */
    cfg->vector_bytes = (size_t)env_long("KNOWHUB_VECTOR_BYTES", 0, 1L << 40, 1L << 30);
    cfg->vector_space_bytes =
        (size_t)env_long("KNOWHUB_VECTOR_SPACE_BYTES", 0, 1L << 40, 256L * 1024 * 1024);
    cfg->search_index_bytes = (size_t)env_long("KNOWHUB_SEARCH_INDEX_BYTES", 0, 1L << 40, 1L << 30);
    cfg->space_entries = env_long("KNOWHUB_SPACE_ENTRIES", 0, 1L << 31, 100000);
    cfg->write_rate = env_long("KNOWHUB_WRITE_RATE", 0, 1000000, 100);
    cfg->write_burst = env_long("KNOWHUB_WRITE_BURST", 1, 100000000, 1000);
}

int config_llm_configured(const struct config *cfg)
{
    return cfg && cfg->llm_base_url && *cfg->llm_base_url;
}

int config_embed_configured(const struct config *cfg)
{
    return cfg && cfg->embed_url && *cfg->embed_url;
}

int config_model_allowed(const struct config *cfg, const char *model)
{
    size_t n = strlen(model);
    if (!n)
        return 0;
    if (strcmp(model, cfg->llm_model) == 0 || strcmp(model, cfg->llm_router_model) == 0)
        return 1;
    for (const char *p = cfg->llm_models; *p;) {
        size_t len = strcspn(p, ",");
        const char *a = p, *b = p + len;
        while (a < b && *a == ' ')
            a++;
        while (b > a && b[-1] == ' ')
            b--;
        if ((size_t)(b - a) == n && strncmp(a, model, n) == 0)
            return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}
