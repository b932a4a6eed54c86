/* config: the operator's settings (DESIGN.md "Operator contract"), read once
 * from the environment by main before any thread starts, then read-only. */
#ifndef KNOWHUB_CONFIG_H
#define KNOWHUB_CONFIG_H

struct config {
    const char *data_dir;     /* KNOWHUB_DATA, default ./var */
    int threads;              /* KNOWHUB_THREADS, default 2 x cores */
    const char *llm_base_url; /* KNOWHUB_LLM_BASE_URL, NULL when unset */
    const char *llm_api_key;
    const char *llm_model;
    const char *llm_router_model;
    const char *agent_log; /* off, on, verbose */
};

/* Fill cfg from the environment (strings point into the environment). */
void config_from_env(struct config *cfg);

#endif
