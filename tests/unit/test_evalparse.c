/* test_evalparse: the evaluator-output parser: whole text, the
 * first ```json block, the first balanced bare object with "evaluations". */
#include "domain/evalparse.h"
#include "harness.h"

#include <string.h>

/* The strategy for text and, on success, the first evaluation's knowledge_id. */
static enum eval_strategy parse(const char *text, const char **first_id, size_t *n)
{
    static char id[128];
    struct json_object *list = NULL, *first, *v;
    enum eval_strategy s = eval_parse(text, strlen(text), &list);
    *first_id = NULL;
    *n = 0;
    if (list) {
        *n = json_object_array_length(list);
        first = json_object_array_get_idx(list, 0);
        if (first && json_object_object_get_ex(first, "knowledge_id", &v)) {
            snprintf(id, sizeof id, "%s", json_object_get_string(v));
            *first_id = id;
        }
    }
    json_object_put(list);
    return s;
}

int main(void)
{
    const char *id;
    size_t n;

    CHECK_INT(
        parse("{\"evaluations\":[{\"knowledge_id\":\"k1\",\"eval_status\":\"helpful\"}]}", &id, &n),
        EVAL_WHOLE);
    CHECK_STR(id, "k1");
    CHECK_INT(parse("  [{\"knowledge_id\":\"k2\"}]\n", &id, &n), EVAL_WHOLE); /* a bare list */
    CHECK_STR(id, "k2");

    CHECK_INT(
        parse("Here you go:\n```json\n{\"evaluations\":[{\"knowledge_id\":\"k3\"}]}\n```\nBye", &id,
              &n),
        EVAL_FENCED);
    CHECK_STR(id, "k3");
    CHECK_INT(parse("```JSON\n{\"evaluations\":[]}\n```", &id, &n), EVAL_FENCED);
    CHECK_INT((int)n, 0);
    /* a fenced block that is not the evaluations falls through to the next way */
    CHECK_INT(
        parse("```json\n{\"x\":1}\n``` and then {\"evaluations\":[{\"knowledge_id\":\"k4\"}]}", &id,
              &n),
        EVAL_BARE);
    CHECK_STR(id, "k4");

    /* bare: braces inside strings do not end the object */
    CHECK_INT(parse("I think {\"evaluations\":[{\"knowledge_id\":\"k5\",\"reason\":\"a } and { "
                    "and \\\" quote\"}]} is right.",
                    &id, &n),
              EVAL_BARE);
    CHECK_STR(id, "k5");
    /* two objects: the first without evaluations is skipped */
    CHECK_INT(parse("{\"note\":\"x\"} {\"evaluations\":[{\"knowledge_id\":\"k6\"}]} "
                    "{\"evaluations\":[{\"knowledge_id\":\"k7\"}]}",
                    &id, &n),
              EVAL_BARE);
    CHECK_STR(id, "k6");

    /* nothing usable */
    CHECK_INT(parse("", &id, &n), EVAL_NONE);
    CHECK_INT(parse("no JSON at all", &id, &n), EVAL_NONE);
    CHECK_INT(parse("{\"evaluations\":[{\"knowledge_id\":\"k8\"", &id, &n), EVAL_NONE); /* cut */
    CHECK_INT(parse("{\"evaluations\":\"not a list\"}", &id, &n), EVAL_NONE);
    /* a fence that never closes: the object in it is still found bare */
    CHECK_INT(parse("```json\n{\"evaluations\":[]}", &id, &n), EVAL_BARE);
    CHECK_INT(
        parse("{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{", &id, &n),
        EVAL_NONE);
    CHECK_STR(eval_strategy_name(EVAL_FENCED), "fenced");
    CHECK_STR(eval_strategy_name(EVAL_NONE), "none");
    return test_summary();
}
