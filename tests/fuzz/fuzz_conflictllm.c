/* fuzz_conflictllm: the parser of an LLM's answer to the conflict check
 * (conflict_llm_answer_parse) on arbitrary text. Aborts when an accepted
 * answer has no verdict of the four, or a reason that is empty, longer
 * than the cap or holds a line break. */
#include "base/buf.h"
#include "base/util.h"
#include "domain/conflict.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum conflict_verdict v = CONFLICT_UNRELATED;
    struct buf reason;
    buf_init(&reason, 8 * CONFLICT_LLM_REASON_MAX);
    if (conflict_llm_answer_parse((const char *)data, size, &v, &reason) == 0) {
        if (strcmp(conflict_verdict_name(v), "unknown") == 0 || reason.len == 0 ||
            utf8_length(reason.data, reason.len) > CONFLICT_LLM_REASON_MAX ||
            memchr(reason.data, '\n', reason.len) || memchr(reason.data, '\r', reason.len))
            __builtin_trap();
    }
    buf_release(&reason);
    return 0;
}
