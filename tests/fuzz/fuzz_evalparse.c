/* fuzz_evalparse: the evaluator-output parser (seed 000) on arbitrary text. */
#include "domain/evalparse.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct json_object *list = NULL;
    enum eval_strategy s = eval_parse((const char *)data, size, &list);
    if ((s == EVAL_NONE) != (list == NULL))
        __builtin_trap();
    if (list && !json_object_is_type(list, json_type_array))
        __builtin_trap();
    json_object_put(list);
    return 0;
}
