// Fair shares between tenants (issue 23): one agent token once created
// 5,000 entries with 50 MCP requests in 4 s, because nginx counts requests
// and a request may carry hundreds of items. Now each token's writes are
// counted in items (KNOWHUB_WRITE_RATE a second, KNOWHUB_WRITE_BURST at
// once; 429 RATE_LIMITED with Retry-After past them), and a space holds at
// most KNOWHUB_SPACE_ENTRIES active entries (LIMIT_EXCEEDED "space_full":
// the write that would pass it is rolled back whole). Both backends: the
// quota is checked in the writing transaction, so concurrent creates
// cannot pass it either.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { errKey, ok } from './lib/expect.mjs';
import { experienceContext } from './lib/llmtest.mjs';

const entry = (n) => ({ scenario: `When quota case ${n} happens`, content: `Do step ${n}.` });
const mcpSave = (id, n) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'knowledge_save', arguments: entry(n) } });

describe('KNOWHUB_SPACE_ENTRIES: a space holds at most its entries', () => {
    const MAX = 6;
    let s, a, b;
    before(async () => {
        s = await startStack({ KNOWHUB_SPACE_ENTRIES: String(MAX) });
        a = s.token('quota-a', 'agent', 'bot-a');
        b = s.token('quota-b', 'agent', 'bot-b');
    });
    after(async () => {
        await s?.stop();
    });
    const count = async (token) => ok(await s.api('GET', '/api/knowledge?limit=100', { token })).total;

    test('creates up to the limit pass; the next is space_full and writes nothing', async () => {
        for (let i = 0; i < MAX; i++) ok(await s.api('POST', '/api/knowledge', { token: a, body: entry(i) }));
        const r = await s.api('POST', '/api/knowledge', { token: a, body: entry('over') });
        errKey(r, 'LIMIT_EXCEEDED', 'space_full', { max: MAX });
        assert.equal(r.json.error.retry, false);
        assert.equal(await count(a), MAX);
        const search = ok(await s.api('GET', '/api/knowledge/search?q=over&mode=lexical', { token: a }));
        assert.equal(search.results.filter((x) => x.scenario.includes('over')).length, 0);
    });

    test('every path that adds an entry is held: a new file, an MCP save, a distilled experience, a batch', async () => {
        errKey(await s.api('POST', '/api/knowledge/write', { token: a, body: { category: 'experiences', path: 'new-one.md', content: 'A new file would pass the limit.' } }), 'LIMIT_EXCEEDED', 'space_full', { max: MAX });
        const r = await s.api('POST', '/mcp', { token: a, body: [mcpSave(1, 'm1'), mcpSave(2, 'm2')] });
        assert.equal(r.status, 200, r.text);
        for (const item of r.json) {
            assert.equal(item.result.isError, true, JSON.stringify(item));
            assert.equal(item.result.structuredContent.error.key, 'space_full', JSON.stringify(item));
        }
        errKey(await s.api('POST', '/api/knowledge/distill-experience', { token: a, body: { experience_context: experienceContext({ context_id: 'quota-1' }) } }), 'LIMIT_EXCEEDED', 'space_full', { max: MAX });
        assert.equal(await count(a), MAX);
    });

    test('a space at its limit still changes: feedback, an update, a file rewrite, a delete; then a create fits again', async () => {
        const items = ok(await s.api('GET', '/api/knowledge?limit=100', { token: a })).items;
        ok(await s.api('PUT', `/api/knowledge/${items[0].id}`, { token: a, body: { add_helpful_case: { result: 'it worked' } } }));
        ok(await s.api('PUT', `/api/knowledge/${items[1].id}`, { token: a, body: { update_score: 4 } }));
        ok(await s.api('DELETE', `/api/knowledge/${items[2].id}`, { token: a }));
        ok(await s.api('POST', '/api/knowledge', { token: a, body: entry('after-delete') }));
        assert.equal(await count(a), MAX);
        // restoring the deleted one from the trash would pass the limit
        errKey(await s.api('POST', `/api/knowledge/${items[2].id}/revert`, { token: a, body: {} }), 'LIMIT_EXCEEDED', 'space_full', { max: MAX });
        assert.equal(await count(a), MAX);
    });

    test('the limit is per space: another space still writes', async () => {
        ok(await s.api('POST', '/api/knowledge', { token: b, body: entry('b1') }));
        assert.equal(await count(b), 1);
    });

    test('ten creates at once into a space one short of its limit: exactly one passes', async () => {
        const c = s.token('quota-c', 'agent', 'bot-c');
        for (let i = 0; i < MAX - 1; i++) ok(await s.api('POST', '/api/knowledge', { token: c, body: entry(`c${i}`) }));
        const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => s.api('POST', '/api/knowledge', { token: c, body: entry(`race${i}`) })));
        const passed = answers.filter((r) => r.json?.status === 'success').length;
        assert.equal(passed, 1, answers.map((r) => r.text).join('\n'));
        for (const r of answers.filter((x) => x.json?.status !== 'success')) errKey(r, 'LIMIT_EXCEEDED', 'space_full', { max: MAX });
        assert.equal(await count(c), MAX);
    });
});

describe('KNOWHUB_WRITE_RATE: a token writes at most its items a second, batch items counted', () => {
    const BURST = 8;
    let s, a, a2, reader;
    before(async () => {
        s = await startStack({ KNOWHUB_WRITE_RATE: '1', KNOWHUB_WRITE_BURST: String(BURST) });
        a = s.token('rate-a', 'agent', 'bot-a');
        a2 = s.token('rate-a', 'agent', 'bot-a2');
        reader = s.token('rate-a', 'reader', 'reader-a');
    });
    after(async () => {
        await s?.stop();
    });
    const count = async () => ok(await s.api('GET', '/api/knowledge?limit=100', { token: reader })).total;

    test('one MCP request of 12 saves: the burst passes, the rest are RATE_LIMITED and write nothing', async () => {
        const r = await s.api('POST', '/mcp', { token: a, body: Array.from({ length: 12 }, (_, i) => mcpSave(i + 1, `mcp${i}`)) });
        assert.equal(r.status, 200, r.text);
        const refused = r.json.filter((x) => x.result?.isError);
        // the burst, and at most one more refilled meanwhile (a slow sanitizer build)
        assert.ok(r.json.length - refused.length >= BURST && r.json.length - refused.length <= BURST + 1, r.text);
        for (const x of refused) {
            const e = x.result.structuredContent.error;
            assert.equal(e.code, 'RATE_LIMITED', JSON.stringify(x));
            assert.equal(e.retry, true);
        }
        assert.equal(await count(), r.json.length - refused.length);
    });

    test('over the rate, REST answers 429 RATE_LIMITED with Retry-After; reads and other tokens go on', async () => {
        const before = await count();
        const r = await s.api('POST', '/api/knowledge', { token: a, body: entry('rest') });
        assert.equal(r.status, 429, r.text);
        const wait = Number(r.headers['retry-after']);
        assert.ok(wait >= 1 && wait <= 2, `Retry-After ${r.headers['retry-after']}`);
        const e = errKey(r, 'RATE_LIMITED', 'write_rate', { rate: 1, items: 1, retry_after: wait }, 429);
        assert.equal(e.retry, true);
        ok(await s.api('GET', '/api/knowledge/search?q=quota&mode=lexical', { token: a }));
        ok(await s.api('POST', '/api/knowledge', { token: a2, body: entry('other-token') }));
        assert.equal(await count(), before + 1);
    });

    test('a batch is admitted whole or not at all; after Retry-After the token writes again', async () => {
        const id = ok(await s.api('GET', '/api/knowledge?limit=1', { token: reader })).items[0].id;
        const batch = (n) => ({ feedback_list: Array.from({ length: n }, (_, i) => ({ knowledge_id: id, case_id: `b${n}-${i}`, is_effective: true })) });
        const refused = await s.api('POST', '/api/knowledge/batch_update', { token: a, body: batch(5) });
        const wait = Number(refused.headers['retry-after']);
        errKey(refused, 'RATE_LIMITED', 'write_rate', { rate: 1, items: 5, retry_after: wait }, 429);
        assert.ok(wait >= 1 && wait <= 5, `Retry-After ${wait}`);
        assert.equal(ok(await s.api('GET', `/api/knowledge/${id}`, { token: reader })).eval.helpful, 0);
        await new Promise((res) => setTimeout(res, wait * 1000 + 200));
        const passed = ok(await s.api('POST', '/api/knowledge/batch_update', { token: a, body: batch(5) }));
        assert.equal(passed.succeeded, 5);
        assert.equal(ok(await s.api('GET', `/api/knowledge/${id}`, { token: reader })).eval.helpful, 5);
    });
});
