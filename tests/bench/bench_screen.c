/* bench_screen: the poisoning screen (domain/screen.h) on the benchmark
 * files of tests/fixtures/screen (JSON lines: {"id", "lang", "class",
 * "split", "text"}). For each FILE, one line per text,
 *   ID<tab>flagged|clean<tab>CODE,CODE...
 * then a summary per file on stdout: "# FILE: N texts, N flagged (P%)",
 * per class (the "class" field) and per split. tests/screen checks the
 * rates; the screen's speed on all texts goes to stderr.
 *   bench_screen FILE...        the benchmark
 *   bench_screen -              screen stdin, print each finding and its excerpt
 *   bench_screen --rules        the rule table: CLASS<tab>CODE<tab>DESCRIPTION */
#include "base/buf.h"
#include "domain/screen.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_GROUPS 32

struct group {
    char name[64];
    size_t texts;
    size_t flagged;
};

static void group_count(struct group *g, size_t *ng, const char *name, int flagged)
{
    size_t i;
    for (i = 0; i < *ng; i++)
        if (strcmp(g[i].name, name) == 0)
            break;
    if (i == *ng) {
        if (*ng == MAX_GROUPS)
            return;
        snprintf(g[i].name, sizeof g[i].name, "%s", name);
        g[i].texts = g[i].flagged = 0;
        (*ng)++;
    }
    g[i].texts++;
    g[i].flagged += flagged ? 1 : 0;
}

static const char *field(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "";
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int bench_file(const char *path, double *seconds, size_t *bytes)
{
    FILE *fp = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0, texts = 0, flagged = 0, ng = 0, lineno = 0;
    struct group groups[MAX_GROUPS];
    ssize_t got;
    if (!fp) {
        fprintf(stderr, "%s: cannot read\n", path);
        return 1;
    }
    while ((got = getline(&line, &cap, fp)) >= 0) {
        json_object *o;
        struct screen_result r;
        const char *text;
        double t0;
        lineno++;
        if (got <= 1)
            continue;
        o = json_tokener_parse(line);
        if (!o || !json_object_is_type(o, json_type_object)) {
            fprintf(stderr, "%s:%zu: not a JSON object\n", path, lineno);
            json_object_put(o);
            fclose(fp);
            free(line);
            return 1;
        }
        text = field(o, "text");
        t0 = now_s();
        screen_text(text, strlen(text), &r);
        *seconds += now_s() - t0;
        *bytes += strlen(text);
        printf("%s\t%s\t", field(o, "id"), r.count ? "flagged" : "clean");
        for (size_t i = 0; i < r.count; i++)
            printf("%s%s", i ? "," : "", r.findings[i].code);
        printf("\n");
        texts++;
        flagged += r.count ? 1 : 0;
        {
            char name[64];
            snprintf(name, sizeof name, "class %s", field(o, "class"));
            group_count(groups, &ng, name, r.count > 0);
            snprintf(name, sizeof name, "lang %s", field(o, "lang"));
            group_count(groups, &ng, name, r.count > 0);
            snprintf(name, sizeof name, "split %s", field(o, "split"));
            group_count(groups, &ng, name, r.count > 0);
        }
        json_object_put(o);
    }
    free(line);
    fclose(fp);
    printf("# %s: %zu texts, %zu flagged (%.1f%%)\n", path, texts, flagged,
           texts ? 100.0 * (double)flagged / (double)texts : 0.0);
    for (size_t i = 0; i < ng; i++)
        printf("#   %s: %zu texts, %zu flagged (%.1f%%)\n", groups[i].name, groups[i].texts,
               groups[i].flagged, 100.0 * (double)groups[i].flagged / (double)groups[i].texts);
    return 0;
}

static int screen_stdin(void)
{
    struct buf in, ex;
    char chunk[65536];
    size_t got;
    struct screen_result r;
    buf_init(&in, SCREEN_MAX_INPUT + 1);
    buf_init(&ex, 4096);
    while ((got = fread(chunk, 1, sizeof chunk, stdin)) > 0)
        buf_add(&in, chunk, got);
    if (screen_text(in.data, in.len, &r) < 0) {
        fprintf(stderr, "the text is longer than %d bytes\n", SCREEN_MAX_INPUT);
        buf_release(&in);
        buf_release(&ex);
        return 1;
    }
    for (size_t i = 0; i < r.count; i++) {
        buf_reset(&ex);
        screen_excerpt(in.data, in.len, &r.findings[i], &ex);
        printf("%s\t%s\t%zu\t%zu\t%s\n", screen_class_name(r.findings[i].cls), r.findings[i].code,
               r.findings[i].offset, r.findings[i].length, ex.data);
    }
    buf_release(&in);
    buf_release(&ex);
    return 0;
}

int main(int argc, char **argv)
{
    double seconds = 0;
    size_t bytes = 0;
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE... | - | --rules\n", argv[0]);
        return 2;
    }
    if (strcmp(argv[1], "-") == 0)
        return screen_stdin();
    if (strcmp(argv[1], "--rules") == 0) {
        for (size_t i = 0; i < screen_rule_count(); i++) {
            const struct screen_rule *r = screen_rule_at(i);
            printf("%s\t%s\t%s\n", screen_class_name(r->cls), r->code, r->description);
        }
        return 0;
    }
    for (int i = 1; i < argc; i++)
        if (bench_file(argv[i], &seconds, &bytes))
            return 1;
    fprintf(stderr, "screened %zu bytes in %.6f s\n", bytes, seconds);
    return 0;
}
