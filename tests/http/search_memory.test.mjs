// The index in memory (docs/search.md "The index in memory"): a search ranks
// from each space's index held in the process, kept in step with the store by
// the search log. Over the same knowledge it answers exactly as the full-text
// passes do (a stack with KNOWHUB_SEARCH_INDEX_BYTES=0 holds no index and takes
// them): the same entries, order and scores, in both views, with filters;
// writes, deletes and reverts are seen by the next search; a space the budget
// cannot hold is answered by the passes, the same; /metrics shows what is held.
// On PostgreSQL (KNOWHUB_TEST_PG) the stacks are PostgreSQL's.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { metrics, ok } from './lib/expect.mjs';
import { canon, corpus, queries, scores } from './lib/search-corpus.mjs';

const LIMIT = 50;
// 120 entries: every word of the corpus is in at most 100 of them (a pass's
// rows), so the passes meet every entry holding a query word, as the index does
const ENTRIES = 120;


let mem, passes, small;
const stacks = () => [mem, passes, small];

/** Both searches of query on stack s (file view, entry view with the filter of round i). */
async function both(s, query, i) {
    const file = ok(await s.api('POST', '/api/knowledge/search', { token: s.admin, body: { query, max_results: LIMIT } }));
    const params = new URLSearchParams({ q: query, top_k: String(LIMIT), min_score: '1' });
    if (i % 4 === 0) params.set('category', 'experiences');
    if (i % 4 === 1) params.set('category', 'rules');
    const entry = ok(await s.api('GET', `/api/knowledge/search?${params}`, { token: s.admin }));
    return { file: file.results, entry: entry.results };
}

/** Every stack answers query as the passes do. */
async function sameAnswers(query, i) {
    const want = await both(passes, query, i);
    for (const s of [mem, small]) {
        const got = await both(s, query, i);
        const who = `${s === mem ? 'in memory' : 'over budget'}, query ${query}`;
        assert.deepEqual(scores(got.file, 'score'), scores(want.file, 'score'), `file view, ${who}`);
        assert.deepEqual(canon(got.file, 'score', LIMIT), canon(want.file, 'score', LIMIT), `file view, ${who}`);
        assert.deepEqual(scores(got.entry, 'relevance'), scores(want.entry, 'relevance'), `entry view, ${who}`);
        assert.deepEqual(canon(got.entry, 'relevance', LIMIT), canon(want.entry, 'relevance', LIMIT), `entry view, ${who}`);
    }
    return want.file.length + want.entry.length;
}

describe('search: the index in memory answers as the passes do', () => {
    before(async () => {
        [mem, passes, small] = await Promise.all([
            startStack(),
            startStack({ KNOWHUB_SEARCH_INDEX_BYTES: '0' }),
            startStack({ KNOWHUB_SEARCH_INDEX_BYTES: '20000' }),
        ]);
        const docs = corpus(ENTRIES);
        for (const [i, body] of docs.entries()) {
            // a few rules too, some always applied (the file view leaves those out)
            const b = i % 10 === 0 ? { ...body, category: 'rules', path: `r${i}.md`, always_apply: i % 20 === 0 } : body;
            for (const s of stacks()) ok(await s.api('POST', '/api/knowledge', { token: s.admin, body: b }));
        }
    });
    after(async () => {
        for (const s of stacks()) await s?.stop();
    });

    test('both views, with category filters: the same entries, order and scores', async () => {
        let found = 0;
        const qs = queries();
        for (const [i, q] of qs.entries()) if (await sameAnswers(q, i)) found++;
        assert.ok(found >= qs.length * 0.8, `${found} of ${qs.length} queries found something`);
    });

    test('/metrics: the space is held in memory, and not past the budget', async () => {
        const m = await metrics(mem);
        assert.equal(m.knowhub_search_index_spaces, 1);
        assert.equal(m.knowhub_search_index_entries, ENTRIES);
        assert.ok(m.knowhub_search_index_bytes > 0 && m.knowhub_search_index_bytes <= m.knowhub_search_index_budget_bytes);
        const none = await metrics(passes);
        assert.equal(none.knowhub_search_index_budget_bytes, 0);
        assert.equal(none.knowhub_search_index_spaces, 0);
        const over = await metrics(small);
        assert.equal(over.knowhub_search_index_spaces, 0, 'a space past the budget is not held');
        assert.ok(over.knowhub_search_index_bytes <= 20000);
    });

    test('writes, deletes and reverts are seen by the next search', async () => {
        for (const s of stacks()) {
            const token = s.admin;
            const created = ok(await s.api('POST', '/api/knowledge', {
                token,
                body: { category: 'experiences', path: 'fresh/okapi.md', title: 'okapi_fresh sighting', scenario: 'by the river', content: 'an okapi_fresh was seen by the river' },
            }));
            const hit = ok(await s.api('POST', '/api/knowledge/search', { token, body: { query: 'okapi_fresh' } }));
            assert.deepEqual(hit.results.map((r) => r.path), ['fresh/okapi.md'], 'a new entry is found at once');
            ok(await s.api('POST', '/api/knowledge/write', {
                token,
                body: { category: 'experiences', path: 'fresh/okapi.md', content: '---\ntitle: gazelle_fresh sighting\n---\n\na gazelle_fresh crossed\n' },
            }));
            const old = ok(await s.api('POST', '/api/knowledge/search', { token, body: { query: 'okapi_fresh' } }));
            assert.deepEqual(old.results, [], 'the old words are gone with the edit');
            const now = ok(await s.api('POST', '/api/knowledge/search', { token, body: { query: 'gazelle_fresh' } }));
            assert.equal(now.results.length, 1);
            ok(await s.api('DELETE', `/api/knowledge/${created.id}`, { token }));
            const gone = ok(await s.api('POST', '/api/knowledge/search', { token, body: { query: 'gazelle_fresh' } }));
            assert.deepEqual(gone.results, [], 'a deleted entry leaves the search');
            ok(await s.api('POST', `/api/knowledge/${created.id}/revert`, { token, body: { version: 1 } }));
            const back = ok(await s.api('POST', '/api/knowledge/search', { token, body: { query: 'okapi_fresh' } }));
            assert.deepEqual(back.results.map((r) => r.path), ['fresh/okapi.md'], 'a revert brings it back');
        }
        // the same changes on every stack, so the answers still agree
        for (const [i, q] of ['okapi_fresh', 'gazelle_fresh', ...queries().slice(0, 20)].entries()) await sameAnswers(q, i);
    });

    test('another space is held apart: its entries never answer here', async () => {
        const other = mem.token('memory-other', 'admin');
        ok(await mem.api('POST', '/api/knowledge', {
            token: other,
            body: { category: 'experiences', path: 'x/kudu.md', title: 'kudu_apart', scenario: 'apart', content: 'kudu_apart text' },
        }));
        const there = ok(await mem.api('POST', '/api/knowledge/search', { token: other, body: { query: 'kudu_apart' } }));
        assert.equal(there.results.length, 1);
        const here = ok(await mem.api('POST', '/api/knowledge/search', { token: mem.admin, body: { query: 'kudu_apart' } }));
        assert.deepEqual(here.results, []);
        assert.equal((await metrics(mem)).knowhub_search_index_spaces, 2);
    });
});
