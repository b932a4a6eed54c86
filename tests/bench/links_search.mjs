// links_search.mjs: what conflicts_with costs an entry search
// (docs/conflicts.md), through nginx. One space of ENTRIES entries, the same
// QUERIES distinct queries (each once: the answer cache does not help) timed
// one after another: with no contradicts link in the space (one extra read
// per search), then with LINKS contradicts links among the entries (one
// more read per result). A measurement, never a pass/fail.
//   KNOWHUB_BIN=build/knowhub node tests/bench/links_search.mjs
// With a binary that has no links (an older build), only the first phase runs.
import { startStack } from '../http/lib/stack.mjs';
import { summary, wordsFrom } from './lib/words.mjs';

const ENTRIES = Number(process.env.ENTRIES || 500);
const QUERIES = Number(process.env.QUERIES || 300);
const LINKS = Number(process.env.LINKS || 200);
const { rand, pick } = wordsFrom(42);
const summaryOf = (ms) => summary(ms, { mean: true });

async function timed(s, token, queries, salt) {
    const ms = [];
    for (const q of queries) {
        const t0 = performance.now();
        const r = await s.api('GET', `/api/knowledge/search?q=${encodeURIComponent(q)}&top_k=10&min_score=1&salt=${salt}`, { token });
        ms.push(performance.now() - t0);
        if (r.json?.status !== 'success') throw new Error(r.text.slice(0, 300));
    }
    return ms;
}

const s = await startStack();
try {
    const token = s.token('bench-links', 'admin', 'bench');
    const ids = [];
    for (let i = 0; i < ENTRIES; i++) {
        const words = Array.from({ length: 6 }, pick).join(' ');
        const r = await s.api('POST', '/api/knowledge', { token, body: { scenario: `${pick()} ${pick()} report ${i}`, content: `Use ${words} for case ${i}.` } });
        ids.push(r.json.data.id);
    }
    const queries = Array.from({ length: QUERIES }, (_, i) => `${pick()} ${pick()} ${i}`);
    // the salt keeps each phase's answers out of the other's cache entries
    await timed(s, token, queries.slice(0, 20), 'warm');
    console.log(`${ENTRIES} entries, ${QUERIES} distinct searches (top_k 10), one client:`);
    console.log(`  no contradicts link: ${summaryOf(await timed(s, token, queries, 'a'))}`);
    const probe = await s.api('GET', `/api/knowledge/${ids[0]}/links`, { token });
    if (probe.json?.status !== 'success') {
        console.log('  (this binary has no links: the first phase only)');
    } else {
        for (let i = 0; i < LINKS; i++) {
            const a = ids[rand(ids.length)];
            const b = ids[rand(ids.length)];
            if (a !== b) await s.api('POST', `/api/knowledge/${a}/links`, { token, body: { to: b, type: 'contradicts' } });
        }
        console.log(`  ${LINKS} contradicts links: ${summaryOf(await timed(s, token, queries, 'b'))}`);
    }
} finally {
    await s.stop();
}
