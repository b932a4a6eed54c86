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

/* A number in [0, 1], or dflt when text is not one. */
static double parse_fraction(const char *text, double dflt)
{
    char *end;
    double v = strtod(text, &end);
    return *text && !*end && v >= 0.0 && v <= 1.0 ? v : dflt;
}

void config_from_env(struct config *cfg)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN), threads;
    cfg->data_dir = env_or("KNOWHUB_DATA", "./var");
    cfg->socket_path = env_or("KNOWHUB_SOCKET", NULL);
    cfg->database_url = env_or("KNOWHUB_DATABASE_URL", NULL);
    if (parse_long(env_or("KNOWHUB_THREADS", ""), 1, 256, &threads))
        threads = 2 * (cores > 0 ? cores : 1);
    cfg->threads = (int)threads;
    cfg->llm_base_url = env_or("KNOWHUB_LLM_BASE_URL", NULL);
    cfg->llm_api_key = env_or("KNOWHUB_LLM_API_KEY", NULL);
    cfg->llm_model = env_or("KNOWHUB_LLM_MODEL", "anthropic/claude-sonnet-4.5");
    cfg->llm_router_model = env_or("KNOWHUB_LLM_ROUTER_MODEL", "google/gemini-2.0-flash-001");
    cfg->llm_models = env_or("KNOWHUB_LLM_MODELS", "");
    {
        long seconds;
        if (parse_long(env_or("KNOWHUB_LLM_TIMEOUT", ""), 1, 3600, &seconds))
            seconds = 60;
        cfg->llm_timeout_ms = seconds * 1000;
    }
    cfg->agent_log = env_or("KNOWHUB_AGENT_LOG", "off");
    {
        long slots;
        if (parse_long(env_or("KNOWHUB_CACHE_SLOTS", ""), 0, 65536, &slots))
            slots = 512;
        cfg->cache_slots = (int)slots;
    }
    {
        /* The total over all worker threads; each thread gets its share. */
        long bytes;
        if (parse_long(env_or("KNOWHUB_CACHE_BYTES", ""), 0, 1L << 40, &bytes))
            bytes = 64L * 1024 * 1024;
        cfg->cache_bytes = (size_t)bytes;
    }
    {
        /* What one POST /mcp may cost (docs/agents.md "Budgets"). */
        long bytes, ms;
        if (parse_long(env_or("KNOWHUB_MCP_BUDGET_BYTES", ""), 64L * 1024, 64L * 1024 * 1024,
                       &bytes))
            bytes = 4L * 1024 * 1024;
        if (parse_long(env_or("KNOWHUB_MCP_BUDGET_MS", ""), 1, 3600L * 1000, &ms))
            ms = 10000;
        cfg->mcp_budget_bytes = (size_t)bytes;
        cfg->mcp_budget_ms = ms;
    }
    {
        long bytes, keep;
        cfg->access_log = strcmp(env_or("KNOWHUB_ACCESS_LOG", "on"), "off") != 0;
        if (parse_long(env_or("KNOWHUB_LOG_MAX_BYTES", ""), 0, 1L << 40, &bytes))
            bytes = 64L * 1024 * 1024;
        if (parse_long(env_or("KNOWHUB_LOG_KEEP", ""), 1, 100, &keep))
            keep = 5;
        cfg->log_max_bytes = bytes;
        cfg->log_keep = (int)keep;
    }
    {
        long lease;
        cfg->node = env_or("KNOWHUB_NODE", NULL);
        if (!cfg->node || !id_text_valid(cfg->node, 64)) {
            if (gethostname(cfg->node_buf, sizeof cfg->node_buf - 1) != 0 ||
                !id_text_valid(cfg->node_buf, 64))
                snprintf(cfg->node_buf, sizeof cfg->node_buf, "knowhub");
            cfg->node = cfg->node_buf;
        }
        if (parse_long(env_or("KNOWHUB_JOB_LEASE", ""), 1, 86400, &lease))
            lease = 300;
        cfg->job_lease_s = lease;
    }
    cfg->metrics_token = env_or("KNOWHUB_METRICS_TOKEN", NULL);
    if (cfg->metrics_token && strlen(cfg->metrics_token) < METRICS_TOKEN_MIN) {
        fprintf(stderr,
                "knowhub: KNOWHUB_METRICS_TOKEN is shorter than %d characters: ignored, /metrics "
                "answers loopback only\n",
                METRICS_TOKEN_MIN);
        cfg->metrics_token = NULL;
    }
    {
        long batch, seconds;
        cfg->embed_url = env_or("KNOWHUB_EMBED_URL", NULL);
        cfg->embed_model = env_or("KNOWHUB_EMBED_MODEL", "embedding");
        cfg->embed_key = env_or("KNOWHUB_EMBED_KEY", NULL);
        if (parse_long(env_or("KNOWHUB_EMBED_BATCH", ""), 1, 256, &batch))
            batch = 32;
        if (parse_long(env_or("KNOWHUB_EMBED_TIMEOUT", ""), 1, 3600, &seconds))
            seconds = 30;
        cfg->embed_batch = (int)batch;
        cfg->hybrid_alpha = parse_fraction(env_or("KNOWHUB_HYBRID_ALPHA", ""), 0.3);
        cfg->embed_min_similarity = parse_fraction(env_or("KNOWHUB_EMBED_MIN_SIMILARITY", ""), 0.0);
        cfg->embed_timeout_ms = seconds * 1000;
    }
    {
        const char *ranking = env_or("KNOWHUB_RANKING", "");
        cfg->ranking = strcmp(ranking, "reference") == 0 ? CONFIG_RANKING_REFERENCE
                       : strcmp(ranking, "bm25f") == 0   ? CONFIG_RANKING_BM25F
                                                         : CONFIG_RANKING_FUSED;
    }
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
