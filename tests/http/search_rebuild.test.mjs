// search_rebuild.test.mjs: a tokenizer change (search_meta's version behind
// the binary's) rebuilds every entry's search records when knowhub opens
// the database, in batches of 256 marked entries (fcgi/store/search_index.c
// sync_marked): every entry found again, the document frequencies the same,
// no mark left. Both backends.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { ok } from './lib/expect.mjs';
import { sql } from './lib/llmtest.mjs';

let s;
before(async () => (s = await startStack({ KNOWHUB_WRITE_RATE: '0' })));
after(async () => s?.stop());

const one = (q) => Number(Object.values(sql(s, q)[0])[0]);

test('a tokenizer change rebuilds the search records of every entry, past one batch', async () => {
    const N = 600; // more than two batches of 256
    for (let i = 0; i < N; i += 50)
        await Promise.all(Array.from({ length: 50 }, (_, j) => s.api('POST', '/api/knowledge', { token: s.admin, body: { scenario: `osprey nest ${i + j}`, content: `marker${i + j} holds here` } }).then(ok)));
    const docs = one('SELECT count(*) AS n FROM search_docs');
    const df = one('SELECT sum(df) AS n FROM search_terms');
    assert.equal(docs, N);
    sql(s, "UPDATE search_meta SET value = 0 WHERE key = 'tokenizer'");
    sql(s, 'DELETE FROM search_terms');
    s.restartKnowhub();
    assert.match(s.log(), /search index: rebuilding for tokenizer \d+ \(was 0\)/);
    assert.equal(one('SELECT count(*) AS n FROM search_docs'), N);
    assert.equal(one('SELECT sum(df) AS n FROM search_terms'), df);
    assert.equal(one('SELECT count(*) AS n FROM search_dirty'), 0);
    for (const i of [0, 255, 256, 511, 512, N - 1]) {
        const hits = ok(await s.api('GET', `/api/knowledge/search?q=marker${i}&mode=lexical`, { token: s.admin })).results;
        assert.deepEqual(hits.map((h) => h.scenario), [`osprey nest ${i}`], `marker${i}`);
    }
});
