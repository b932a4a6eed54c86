/* test_config: the operator's settings from the environment. A value knowhub
 * cannot read is said on stderr and replaced by the default, never silently;
 * a good value is taken; an unset one is the default without a word. */
#include "harness.h"
#include "base/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* config_from_env with stderr caught into out (at most size - 1 bytes). */
static void load(struct config *cfg, char *out, size_t size)
{
    FILE *tmp = tmpfile();
    int saved = dup(fileno(stderr));
    size_t n;
    fflush(stderr);
    dup2(fileno(tmp), fileno(stderr));
    config_from_env(cfg);
    fflush(stderr);
    dup2(saved, fileno(stderr));
    close(saved);
    rewind(tmp);
    n = fread(out, 1, size - 1, tmp);
    out[n] = '\0';
    fclose(tmp);
}

static void test_defaults_quietly(void)
{
    struct config cfg;
    char said[4096];
    unsetenv("KNOWHUB_THREADS");
    unsetenv("KNOWHUB_WRITE_RATE");
    unsetenv("KNOWHUB_RANKING");
    unsetenv("KNOWHUB_HYBRID_ALPHA");
    unsetenv("KNOWHUB_SPACE_ENTRIES");
    load(&cfg, said, sizeof said);
    CHECK_STR(said, "");
    CHECK_INT(cfg.write_rate, 100);
    CHECK_INT(cfg.write_burst, 1000);
    CHECK_INT(cfg.space_entries, 100000);
    CHECK_INT(cfg.ranking, CONFIG_RANKING_FUSED);
    CHECK(cfg.threads >= 2);
}

static void test_bad_values_warn(void)
{
    struct config cfg;
    char said[4096];
    setenv("KNOWHUB_THREADS", "lots", 1);
    setenv("KNOWHUB_WRITE_RATE", "-5", 1);
    setenv("KNOWHUB_RANKING", "bm52f", 1);
    setenv("KNOWHUB_HYBRID_ALPHA", "1.5", 1);
    load(&cfg, said, sizeof said);
    CHECK(strstr(said, "KNOWHUB_THREADS=lots is not a whole number") != NULL);
    CHECK(strstr(said, "KNOWHUB_WRITE_RATE=-5 is not a whole number in [0, 1000000]: using 100") !=
          NULL);
    CHECK(strstr(said, "KNOWHUB_RANKING=bm52f is not one of the known values: using fused") !=
          NULL);
    CHECK(strstr(said, "KNOWHUB_HYBRID_ALPHA=1.5 is not a number in [0, 1]: using 0.3") != NULL);
    CHECK_INT(cfg.write_rate, 100);
    CHECK_INT(cfg.ranking, CONFIG_RANKING_FUSED);
    CHECK(cfg.hybrid_alpha == 0.3);
    CHECK(cfg.threads >= 2);
}

static void test_good_values_taken(void)
{
    struct config cfg;
    char said[4096];
    setenv("KNOWHUB_THREADS", "3", 1);
    setenv("KNOWHUB_WRITE_RATE", "0", 1);
    setenv("KNOWHUB_RANKING", "bm25f", 1);
    setenv("KNOWHUB_HYBRID_ALPHA", "0.5", 1);
    setenv("KNOWHUB_SPACE_ENTRIES", "42", 1);
    load(&cfg, said, sizeof said);
    CHECK_STR(said, "");
    CHECK_INT(cfg.threads, 3);
    CHECK_INT(cfg.write_rate, 0);
    CHECK_INT(cfg.ranking, CONFIG_RANKING_BM25F);
    CHECK(cfg.hybrid_alpha == 0.5);
    CHECK_INT(cfg.space_entries, 42);
}

int main(void)
{
    test_defaults_quietly();
    test_bad_values_warn();
    test_good_values_taken();
    return test_summary();
}
