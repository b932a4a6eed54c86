/* conflict_eval: the local contradiction detector (domain/conflict.h) on
 * pairs of entries, JSON lines on stdin ({"a": {"title", "scenario",
 * "content"}, "b": {...}, "label", "split", "note"}, as in
 * tests/conflict/pairs.jsonl). One line per pair on stdout:
 *   LINE<tab>VERDICT<tab>LABEL<tab>SPLIT<tab>REASON
 * (LINE counts from 1; a line that is no pair gives VERDICT "error"), and on
 * stderr the time conflict_check took: "# N pairs, T ms judging (mean, max)".
 * tests/conflict/bench.mjs turns these into figures. */
#include "base/buf.h"
#include "domain/conflict.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *field(json_object *o, const char *key)
{
    json_object *v;
    return o && json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "";
}

static struct conflict_entry entry(json_object *pair, const char *key)
{
    json_object *o = NULL;
    struct conflict_entry e;
    (void)json_object_object_get_ex(pair, key, &o);
    e.title = field(o, "title");
    e.scenario = field(o, "scenario");
    e.content = field(o, "content");
    return e;
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

int main(void)
{
    double total = 0, slowest = 0;
    struct buf line, reason;
    size_t n = 0;
    int c;
    buf_init(&line, 1024 * 1024);
    buf_init(&reason, 4096);
    for (;;) {
        buf_reset(&line);
        while ((c = getchar()) != EOF && c != '\n')
            buf_addch(&line, (char)c);
        if (c == EOF && line.len == 0)
            break;
        n++;
        json_object *pair = json_tokener_parse(line.data);
        if (!pair || !json_object_is_type(pair, json_type_object)) {
            printf("%zu\terror\t\t\tnot a JSON object\n", n);
        } else {
            struct conflict_entry a = entry(pair, "a"), b = entry(pair, "b");
            struct conflict_result r;
            double t0 = now_us(), t;
            (void)conflict_check(&a, &b, &r, &reason);
            t = now_us() - t0;
            total += t;
            slowest = t > slowest ? t : slowest;
            printf("%zu\t%s\t%s\t%s\t%s\n", n, conflict_verdict_name(r.verdict),
                   field(pair, "label"), field(pair, "split"), reason.data);
        }
        json_object_put(pair);
        if (c == EOF)
            break;
    }
    fprintf(stderr, "# %zu pairs, %.1f ms judging (mean %.1f us, max %.1f us)\n", n, total / 1e3,
            n ? total / (double)n : 0, slowest);
    buf_release(&line);
    buf_release(&reason);
    return 0;
}
