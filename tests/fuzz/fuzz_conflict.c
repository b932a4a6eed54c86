/* fuzz_conflict: the local contradiction detector on arbitrary bytes. The
 * input is cut at 0x1f bytes into title, scenario and content of entry a,
 * then of entry b (missing fields are NULL). Aborts when the verdict is no
 * verdict, differs with the entries swapped, the figures leave [0, 1], or the
 * reason is empty or holds a line break. */
#include "base/buf.h"
#include "domain/conflict.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *copy = malloc(size + 1), *field[6] = {NULL};
    struct conflict_entry a, b;
    struct conflict_result r1, r2;
    struct buf reason;
    size_t k = 0, start = 0;
    memcpy(copy, data, size);
    copy[size] = '\0';
    for (size_t i = 0; i <= size && k < 6; i++)
        if (i == size || copy[i] == 0x1f) {
            copy[i] = '\0';
            field[k++] = copy + start;
            start = i + 1;
        }
    a = (struct conflict_entry){field[0], field[1], field[2]};
    b = (struct conflict_entry){field[3], field[4], field[5]};
    buf_init(&reason, 4096);
    if (conflict_check(&a, &b, &r1, &reason) != 0 || reason.len == 0 ||
        memchr(reason.data, '\n', reason.len) ||
        strcmp(conflict_verdict_name(r1.verdict), "unknown") == 0)
        abort();
    if (r1.jaccard < 0 || r1.jaccard > 1 || r1.containment < 0 || r1.containment > 1 ||
        r1.jaccard > r1.containment)
        abort();
    if (conflict_check(&b, &a, &r2, &reason) != 0 || r2.verdict != r1.verdict)
        abort();
    buf_release(&reason);
    free(copy);
    return 0;
}
