/* config: the operator's settings, read once from the environment. */
#include "config.h"
#include "util.h"

#include <stdlib.h>
#include <unistd.h>

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

void config_from_env(struct config *cfg)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN), threads;
    cfg->data_dir = env_or("KNOWHUB_DATA", "./var");
    if (parse_long(env_or("KNOWHUB_THREADS", ""), 1, 256, &threads))
        threads = 2 * (cores > 0 ? cores : 1);
    cfg->threads = (int)threads;
    cfg->llm_base_url = env_or("KNOWHUB_LLM_BASE_URL", NULL);
    cfg->llm_api_key = env_or("KNOWHUB_LLM_API_KEY", NULL);
    cfg->llm_model = env_or("KNOWHUB_LLM_MODEL", "anthropic/claude-sonnet-4.5");
    cfg->llm_router_model = env_or("KNOWHUB_LLM_ROUTER_MODEL", "google/gemini-2.0-flash-001");
    cfg->agent_log = env_or("KNOWHUB_AGENT_LOG", "off");
}
