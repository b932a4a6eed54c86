// overview: GET /api/overview, the home screen's numbers and short lists of
// the caller's space: counts by category, traces (all and this week), the
// latest changes, the most injected and the most harmful entries; scoped to
// the space, for every role, fresh after a write (it is a cached route).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { err, ok } from './lib/expect.mjs';

let s;
let agent;
before(async () => {
    s = await startStack();
    agent = s.token('default', 'agent', 'overview');
});
after(async () => {
    await s?.stop();
});

const overview = async (token = s.admin) => ok(await s.api('GET', '/api/overview', { token }));
async function create(scenario, extra = {}) {
    return ok(await s.api('POST', '/api/knowledge', { token: s.admin, body: { scenario, content: `${scenario}: the content.`, ...extra } })).id;
}

test('an empty space: zeros and empty lists', async () => {
    const d = await overview();
    assert.deepEqual(d.counts, { rules: 0, experiences: 0, traces: 0, traces_week: 0 });
    assert.deepEqual([d.recent, d.most_injected, d.most_harmful], [[], [], []]);
    assert.match(d.week_since, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/);
    assert.ok(Date.parse(`${d.week_since}Z`) < Date.now() - 6.9 * 86400e3);
});

test('counts, the latest changes (5 at most), the most injected and the most harmful', async () => {
    const ids = [];
    for (let i = 0; i < 7; i++) ids.push(await create(`overview entry ${i} alpha`));
    const rule = ok(await s.api('POST', '/api/knowledge', { token: s.admin, body: { scenario: 'overview rule', content: 'Always cite.', category: 'rules', path: 'overview-rule.md' } }));
    // ids[2] injected 3 times in two traces, ids[4] once; ids[4] judged harmful.
    for (const [trace, id, seq] of [['ov-1', ids[2], 1], ['ov-1', ids[2], 2], ['ov-2', ids[2], 1], ['ov-2', ids[4], 2]])
        ok(await s.api('POST', `/api/traces/${trace}/knowledge_log`, { token: agent, body: { knowledge_id: id, goal_id: 'g', injected_at_sequence: seq } }));
    ok(await s.api('POST', '/api/traces/ov-2/evaluations', { token: agent, body: { trigger: 'goal_completion', evaluations: [{ knowledge_id: ids[4], eval_status: 'harmful', reason: 'misled' }] } }));
    // A change moves an entry to the top of the latest changes (times are to the second).
    await new Promise((r) => setTimeout(r, 1100));
    ok(await s.api('PUT', `/api/knowledge/${ids[0]}`, { token: s.admin, body: { update_score: 5 } }));
    const d = await overview(s.token('default', 'reader', 'overview reader'));
    assert.deepEqual(d.counts, { rules: 1, experiences: 7, traces: 2, traces_week: 2 });
    assert.equal(d.recent.length, 5);
    assert.equal(d.recent[0].id, ids[0]);
    assert.deepEqual(Object.keys(d.recent[0]).sort(), ['category', 'id', 'path', 'title', 'updated_at']);
    assert.ok(d.recent.every((x, i, a) => i === 0 || a[i - 1].updated_at >= x.updated_at), 'latest first');
    assert.deepEqual(d.most_injected.map((x) => [x.id, x.injections]), [[ids[2], 3], [ids[4], 1]]);
    assert.deepEqual(d.most_harmful.map((x) => [x.id, x.harmful]), [[ids[4], 1]]);
    assert.equal(d.most_harmful[0].title, 'overview entry 4 alpha');
    assert.ok(rule.id);
});

test('a deleted entry leaves every list and count', async () => {
    const before = await overview();
    const top = before.most_injected[0].id;
    ok(await s.api('DELETE', `/api/knowledge/${top}`, { token: s.admin }));
    const d = await overview();
    assert.equal(d.counts.experiences, before.counts.experiences - 1);
    assert.ok(![...d.recent, ...d.most_injected, ...d.most_harmful].some((x) => x.id === top));
});

test('another space sees only its own', async () => {
    const other = s.token('ov-other', 'admin', 'overview other');
    const d = await overview(other);
    assert.deepEqual(d.counts, { rules: 0, experiences: 0, traces: 0, traces_week: 0 });
    assert.deepEqual([d.recent, d.most_injected, d.most_harmful], [[], [], []]);
});

test('no token: 401', async () => {
    err(await s.api('GET', '/api/overview'), 'UNAUTHORIZED', 401);
});
