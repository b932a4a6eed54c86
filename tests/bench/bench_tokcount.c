/* bench_tokcount: the token estimator (domain/tokcount.h) on files: for
 * each FILE, a line "FILE BYTES TOKENS" (tests/tokens compares TOKENS with
 * a real tokenizer's count), then the estimator's speed on all of them on
 * stderr. */
#include "domain/tokcount.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static char *file_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *data = NULL;
    size_t cap = 0;
    *len = 0;
    if (!f)
        return NULL;
    for (;;) {
        size_t got;
        if (*len == cap) {
            char *grown = realloc(data, cap ? cap * 2 : 65536);
            if (!grown) {
                free(data);
                fclose(f);
                return NULL;
            }
            data = grown;
            cap = cap ? cap * 2 : 65536;
        }
        got = fread(data + *len, 1, cap - *len, f);
        if (got == 0)
            break;
        *len += got;
    }
    fclose(f);
    return data;
}

int main(int argc, char **argv)
{
    size_t total_bytes = 0;
    struct timespec t0, t1;
    double seconds;
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE...\n", argv[0]);
        return 2;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 1; i < argc; i++) {
        size_t len;
        char *data = file_read(argv[i], &len);
        if (!data) {
            fprintf(stderr, "%s: cannot read\n", argv[i]);
            return 1;
        }
        printf("%s %zu %zu\n", argv[i], len, tokcount_estimate(data, len));
        total_bytes += len;
        free(data);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    fprintf(stderr, "%zu bytes in %.6f s\n", total_bytes, seconds);
    return 0;
}
