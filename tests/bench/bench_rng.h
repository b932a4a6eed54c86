/* bench_rng: the benchmarks' small deterministic generator (xorshift64*),
 * so every run of a benchmark builds the same data. */
#ifndef KNOWHUB_BENCH_RNG_H
#define KNOWHUB_BENCH_RNG_H

static unsigned long long rng_state = 0x9E3779B97F4A7C15ull;

static unsigned long long rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

#endif
