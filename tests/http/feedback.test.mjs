// POST /api/knowledge/batch_update: per-item results, one bad item never fails
// the others, counters move only for good items, the 100-item limit.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { err, ok } from './lib/expect.mjs';

let s, agent;
before(async () => {
    s = await startStack();
    agent = s.token('default', 'agent', 'feedback-bot');
});
after(async () => {
    await s?.stop();
});

const batch = (body, token = agent) => s.api('POST', '/api/knowledge/batch_update', { token, body });
const get = async (id) => ok(await s.api('GET', `/api/knowledge/${id}`, { token: agent }));
async function newEntry(scenario = 'feedback target') {
    return ok(await s.api('POST', '/api/knowledge', { token: agent, body: { scenario, content: 'c' } })).id;
}
const counters = async (id) => {
    const d = await get(id);
    return [d.eval.helpful, d.eval.harmful];
};

describe('batch_update', () => {
    test('good items count, bad items fail alone', async () => {
        const a = await newEntry('a');
        const b = await newEntry('b');
        const unknown = 'knowledge-20200101-deadbeef';
        const list = [
            { knowledge_id: a, is_effective: true, feedback: 'worked well' }, // 0 ok
            { knowledge_id: unknown, is_effective: true }, // 1 NOT_FOUND
            { knowledge_id: a }, // 2 no is_effective
            'not an object', // 3
            { knowledge_id: b, is_effective: false }, // 4 ok
            { knowledge_id: a, is_effective: 'yes' }, // 5 not a boolean
            { is_effective: true }, // 6 no id
            { knowledge_id: b, is_effective: true, case_id: 'k1' }, // 7 ok
            { knowledge_id: b, is_effective: true, case_id: 'k1' }, // 8 ok, duplicate
            null, // 9
            [a, true], // 10
            { knowledge_id: 42, is_effective: true }, // 11
            { knowledge_id: a, is_effective: true, feedback: 'x'.repeat(4001) }, // 12 too long
            { knowledge_id: a, is_effective: 1 }, // 13
            { knowledge_id: '', is_effective: true }, // 14
            { knowledge_id: a, is_effective: false, feedback: null, extra: 'ignored' }, // 15 ok
        ];
        const d = ok(await batch({ feedback_list: list }));
        assert.equal(d.results.length, list.length);
        d.results.forEach((r, i) => assert.equal(r.index, i));
        const good = [0, 4, 7, 8, 15];
        assert.equal(d.succeeded, good.length);
        assert.equal(d.failed, list.length - good.length);
        for (const [i, r] of d.results.entries()) {
            if (good.includes(i)) {
                assert.equal(r.status, 'success', `item ${i}: ${JSON.stringify(r)}`);
            } else {
                assert.equal(r.status, 'error', `item ${i}: ${JSON.stringify(r)}`);
                assert.equal(typeof r.error.message, 'string');
            }
        }
        assert.equal(d.results[1].error.code, 'NOT_FOUND');
        assert.equal(d.results[1].knowledge_id, unknown);
        for (const i of [2, 3, 5, 6, 9, 10, 11, 12, 13, 14]) assert.equal(d.results[i].error.code, 'INVALID_REQUEST', `item ${i}`);
        assert.deepEqual(
            [d.results[0].counted, d.results[4].counted, d.results[7].counted, d.results[15].counted],
            ['helpful', 'harmful', 'helpful', 'harmful'],
        );
        assert.equal(d.results[0].knowledge_id, a);
        assert.equal(d.results[0].feedback, 'stored');
        assert.equal(d.results[7].added, true);
        assert.equal(d.results[8].added, false);
        assert.deepEqual(await counters(a), [1, 1]);
        assert.deepEqual(await counters(b), [1, 1]);
        const ga = await get(a);
        assert.equal(ga.eval.helpful_history[0].result, 'worked well');
        const gb = await get(b);
        assert.deepEqual(gb.eval.helpful_history.map((c) => c.case_id), ['k1']);
    });

    test('the same knowledge_id many times in one batch counts each (no case_id)', async () => {
        const a = await newEntry();
        const list = Array.from({ length: 10 }, (_, i) => ({ knowledge_id: a, is_effective: i % 2 === 0 }));
        const d = ok(await batch({ feedback_list: list }));
        assert.equal(d.succeeded, 10);
        assert.deepEqual(await counters(a), [5, 5]);
    });

    test('100 items pass; 101 are LIMIT_EXCEEDED and change nothing', async () => {
        const a = await newEntry();
        const item = { knowledge_id: a, is_effective: true };
        const over = err(await batch({ feedback_list: Array(101).fill(item) }), 'LIMIT_EXCEEDED');
        assert.match(over.message, /100/);
        err(await batch({ feedback_list: Array(500).fill(item) }), 'LIMIT_EXCEEDED');
        assert.deepEqual(await counters(a), [0, 0]);
        const d = ok(await batch({ feedback_list: Array(100).fill(item) }));
        assert.equal(d.succeeded, 100);
        assert.equal(d.failed, 0);
        assert.deepEqual(await counters(a), [100, 0]);
    });

    test('an empty list is a success with nothing done', async () => {
        assert.deepEqual(ok(await batch({ feedback_list: [] })), { results: [], succeeded: 0, failed: 0 });
    });

    test('feedback_list must be a list', async () => {
        const a = await newEntry();
        for (const body of [{}, { feedback_list: null }, { feedback_list: { knowledge_id: a, is_effective: true } }, { feedback_list: 'x' }, { feedback_list: 3 }, { list: [] }])
            err(await batch(body), 'INVALID_REQUEST');
        err(await s.api('POST', '/api/knowledge/batch_update', { token: agent }), 'INVALID_REQUEST');
        err(await s.api('POST', '/api/knowledge/batch_update', { token: agent, rawBody: '[{"knowledge_id":"x","is_effective":true}]' }), 'INVALID_REQUEST');
        assert.deepEqual(await counters(a), [0, 0]);
    });

    test('a deleted entry takes no feedback', async () => {
        const a = await newEntry();
        ok(await s.api('DELETE', `/api/knowledge/${a}`, { token: s.admin }));
        const d = ok(await batch({ feedback_list: [{ knowledge_id: a, is_effective: true }] }));
        assert.equal(d.results[0].error.code, 'NOT_FOUND');
        ok(await s.api('POST', `/api/knowledge/${a}/revert`, { token: s.admin, body: { version: 1 } }));
        assert.deepEqual(await counters(a), [0, 0]);
    });
});
