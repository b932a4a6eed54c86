// Seeded made-up text for the HTTP benchmarks (links_search, conflict_write):
// a word picker over 25 words and a summary of latencies.

export const WORDS = 'amber basil cedar delta ember fennel garnet harbor indigo juniper kestrel lantern meadow nectar onyx pepper quartz raven saffron thistle umber violet willow yarrow zephyr'.split(' ');

/** A seeded generator: rand(n) in [0, n), pick() a word of WORDS. */
export function wordsFrom(seed) {
    const rand = (n) => {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        return seed % n;
    };
    return { rand, pick: () => WORDS[rand(WORDS.length)] };
}

/** "median M ms, p90 P ms" of a list of milliseconds (and the mean with mean). */
export function summary(ms, { mean = false } = {}) {
    const s = [...ms].sort((a, b) => a - b);
    const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))].toFixed(2);
    const m = (s.reduce((a, b) => a + b, 0) / s.length).toFixed(2);
    return `median ${q(0.5)} ms, p90 ${q(0.9)} ms${mean ? `, mean ${m} ms` : ''}`;
}
