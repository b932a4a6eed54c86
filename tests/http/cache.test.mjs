// cache.test.mjs: the searches' answer cache never serves a stale answer:
// a repeated search is the same, and any write (a new entry, feedback that
// moves quality, a delete) shows in the very next search, whichever worker
// thread answers it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { ok } from './lib/expect.mjs';

let s;
before(async () => {
    s = await startStack();
});
after(async () => {
    await s?.stop();
});

const searchRaw = (q) => s.api('GET', `/api/knowledge/search?q=${encodeURIComponent(q)}&top_k=5&min_score=1`, { token: s.admin });
const search = async (q) => ok(await searchRaw(q));
const files = async (query) => ok(await s.api('POST', '/api/knowledge/search', { token: s.admin, body: { query } })).results;

test('repeated searches agree; every kind of write shows in the next one', async () => {
    const mk = async (scenario) =>
        ok(await s.api('POST', '/api/knowledge', { token: s.admin, body: { scenario, content: `${scenario} in detail` } })).id;
    const a = await mk('Parquet partition pruning for quarterly reports');
    const first = await search('parquet partition');
    for (let i = 0; i < 8; i++) assert.deepEqual(await search('parquet partition'), first);
    assert.deepEqual(first.results.map((r) => r.id), [a]);

    // A new entry: in the next answer, from any thread.
    const b = await mk('Parquet partition layout by region');
    for (let i = 0; i < 8; i++) {
        const ids = (await search('parquet partition')).results.map((r) => r.id).sort();
        assert.deepEqual(ids, [a, b].sort());
        assert.equal((await files('parquet partition')).length, 2);
    }

    // Feedback moves quality, and the order, at once.
    const before = (await search('parquet partition')).results.find((r) => r.id === b).quality_score;
    ok(await s.api('PUT', `/api/knowledge/${b}`, { token: s.admin, body: { add_helpful_case: { case_id: 'c1' } } }));
    for (let i = 0; i < 8; i++)
        assert.equal((await search('parquet partition')).results.find((r) => r.id === b).quality_score, before + 1);

    // A delete is gone from the next answer.
    ok(await s.api('DELETE', `/api/knowledge/${a}`, { token: s.admin }));
    for (let i = 0; i < 8; i++) {
        assert.deepEqual((await search('parquet partition')).results.map((r) => r.id), [b]);
        assert.equal((await files('parquet partition')).length, 1);
    }
});

test('a repeated search is answered from a cache; the first one after a write is not', async () => {
    // Each worker thread keeps its own cache: within a few tries one repeats.
    let hits = 0;
    for (let i = 0; i < 20; i++) if ((await searchRaw('parquet partition')).headers['x-cache'] === 'hit') hits++;
    assert.ok(hits > 0, 'no search was answered from the cache');
    ok(await s.api('POST', '/api/knowledge', { token: s.admin, body: { scenario: 'Parquet partition sizes', content: 'x' } }));
    const next = await searchRaw('parquet partition');
    assert.equal(next.headers['x-cache'], 'miss');
    assert.ok(ok(next).results.some((r) => r.scenario === 'Parquet partition sizes'));
    // Logging injections (trace_id) is never cached: every call logs.
    for (let i = 0; i < 3; i++) {
        const r = await s.api('GET', '/api/knowledge/search?q=parquet%20partition&min_score=1&trace_id=tc&goal_id=g', { token: s.admin });
        assert.equal(ok(r).logged, true);
        assert.equal(r.headers['x-cache'], undefined);
    }
    const log = ok(await s.api('GET', '/api/traces/tc/knowledge_log', { token: s.admin }));
    assert.equal(log.entries.length, 3 * 2);
});

test('reads of one entry are cached too, and a change shows at once', async () => {
    const id = ok(await s.api('POST', '/api/knowledge', { token: s.admin, body: { scenario: 'Cached entry', content: 'c' } })).id;
    let hits = 0;
    for (let i = 0; i < 20; i++) if ((await s.api('GET', `/api/knowledge/${id}`, { token: s.admin })).headers['x-cache'] === 'hit') hits++;
    assert.ok(hits > 0);
    for (let n = 1; n <= 3; n++) {
        ok(await s.api('PUT', `/api/knowledge/${id}`, { token: s.admin, body: { add_helpful_case: { case_id: `h${n}` } } }));
        for (let i = 0; i < 6; i++) assert.equal(ok(await s.api('GET', `/api/knowledge/${id}`, { token: s.admin })).eval.helpful, n);
    }
});

test('another space never gets a cached answer of this one', async () => {
    const other = s.token('cache-other', 'admin');
    await search('parquet partition');
    const r = ok(await s.api('GET', '/api/knowledge/search?q=parquet%20partition&min_score=1', { token: other }));
    assert.deepEqual(r.results, []);
});
