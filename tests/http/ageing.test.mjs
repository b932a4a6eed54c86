// Evidence that ages, and explain=true (docs/conflicts.md "Evidence that
// ages", "explain=true"): with a space's half-life on, stage 2 weighs each
// helpful or harmful verdict by 2^(-age / half-life), at query time from
// the verdict's time, never written back; rules are exempt; the most
// relevant entry keeps its place in the top_k; off by default. The fixed
// clock (KNOWHUB_NOW, Stack.restartKnowhub) dates the verdicts: old ones
// on 2026-01-01, fresh ones 300 days later. explain=true on both searches
// shows the relevance and quality components and what was left out.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { err, errKey, ok } from './lib/expect.mjs';
import { mcpTool, roleTokens } from './lib/reads.mjs';

const OLD = '2026-01-01T00:00:00Z';
const NOW = '2026-10-28T00:00:00Z'; // 300 days later

let s;
const spaces = {};
const ids = {};
const save = async (token, body) => ok(await s.api('POST', '/api/knowledge', { token, body: { score: 3, ...body } })).id;
let nCase = 0;
const verdicts = async (token, id, kind, n) => {
    for (let i = 0; i < n; i++)
        ok(await s.api('PUT', `/api/knowledge/${id}`, { token, body: { [`add_${kind}_case`]: { case_id: `c${++nCase}`, scenario: 's', result: 'r' } } }));
};
const setPolicy = async (space, days) => ok(await s.api('PUT', '/api/evidence/policy', { token: spaces[space].admin, body: { half_life_days: days } }));
const search = async (space, q, extra = '') => ok(await s.api('GET', `/api/knowledge/search?q=${encodeURIComponent(q)}${extra}`, { token: spaces[space].reader }));
const order = (d) => d.results.map((r) => r.id);

const Q = 'rotate nginx access logs';

before(async () => {
    s = await startStack({ KNOWHUB_NOW: OLD });
    for (const name of ['ageing-order', 'ageing-kept', 'ageing-alone', 'ageing-explain', 'ageing-policy', 'ageing-merge'])
        spaces[name] = roleTokens(s, name);
    // Old entries and their old verdicts, at OLD.
    let v = spaces['ageing-order'];
    ids.oldA = await save(v.agent, { title: 'Rotate nginx access logs with logrotate', scenario: 'Rotate nginx access logs', content: 'Rotate the nginx access logs daily with logrotate and compress the old ones.' });
    ids.freshB = await save(v.agent, { title: 'Rotate nginx access logs by size', scenario: 'Rotate nginx access logs', content: 'Rotate the nginx access logs when they pass 100 MB, with logrotate size.' });
    await verdicts(v.agent, ids.oldA, 'helpful', 3);
    ids.rule = await save(v.admin, { category: 'rules', path: 'rotate-before-full.md', title: 'Rotate nginx access logs before they fill the disk', scenario: 'Rotate nginx access logs', content: 'Rotate nginx access logs before the disk is 80% full.' });
    await verdicts(v.agent, ids.rule, 'helpful', 2);
    v = spaces['ageing-kept'];
    ids.keptA = await save(v.agent, { title: 'Rotate nginx access logs', scenario: 'Rotate nginx access logs', content: 'Rotate nginx access logs daily with logrotate.' });
    ids.keptB = await save(v.agent, { title: 'Disk space on the web servers', scenario: 'Free disk space on the web servers', content: 'Old nginx access logs fill the disk: rotate them, and delete core dumps.' });
    await verdicts(v.agent, ids.keptA, 'helpful', 3);
    v = spaces['ageing-alone'];
    ids.alone = await save(v.agent, { title: 'Rotate nginx access logs', scenario: 'Rotate nginx access logs', content: 'Rotate nginx access logs daily with logrotate.' });
    await verdicts(v.agent, ids.alone, 'helpful', 4);
    await verdicts(v.agent, ids.alone, 'harmful', 1);
    ids.other = await save(v.agent, { title: 'Plot revenue by month', scenario: 'Monthly revenue chart', content: 'Resample revenue by month and plot a line chart.' });
    v = spaces['ageing-merge'];
    const dup = { scenario: 'Vacuum the events table', content: 'Run VACUUM ANALYZE on the events table after every bulk delete of old events.' };
    ids.mergeOld = await save(v.agent, { title: 'Vacuum the events table', ...dup });
    await verdicts(v.agent, ids.mergeOld, 'helpful', 2);
    // 300 days later: fresh verdicts.
    s.restartKnowhub({ KNOWHUB_NOW: NOW });
    ids.mergeNew = await save(spaces['ageing-merge'].agent, { title: 'Vacuum the events table', ...dup });
    await verdicts(spaces['ageing-merge'].agent, ids.mergeNew, 'helpful', 1);
    await verdicts(spaces['ageing-order'].agent, ids.freshB, 'helpful', 2);
    await verdicts(spaces['ageing-kept'].agent, ids.keptB, 'helpful', 2);
    await verdicts(spaces['ageing-alone'].agent, ids.other, 'helpful', 5);
});
after(async () => s?.stop());

describe('evidence that ages', () => {
    test('off by default: old helpful verdicts count in full', async () => {
        assert.deepEqual(ok(await s.api('GET', '/api/evidence/policy', { token: spaces['ageing-order'].reader })), { half_life_days: 0 });
        const d = await search('ageing-order', Q, '&top_k=5&category=experiences&explain=true');
        assert.deepEqual(order(d), [ids.oldA, ids.freshB]);
        const q = d.results[0].explain.quality;
        assert.deepEqual([q.helpful, q.helpful_aged, q.half_life_days, q.value], [3, 3, 0, 6]);
    });

    test('on: an entry with old helpful verdicts falls below one with fresh ones; reading twice compounds nothing', async () => {
        assert.deepEqual(await setPolicy('ageing-order', 30), { half_life_days: 30 });
        const first = await search('ageing-order', Q, '&top_k=5&category=experiences');
        assert.deepEqual(order(first), [ids.freshB, ids.oldA]);
        const again = await search('ageing-order', Q, '&top_k=5&category=experiences');
        assert.deepEqual(again.results.map((r) => [r.id, r.quality_score]), first.results.map((r) => [r.id, r.quality_score]));
        // 300 days at a half-life of 30: 3 * 2^-10
        const a = first.results.find((r) => r.id === ids.oldA);
        assert.ok(Math.abs(a.quality_score - (3 + 3 * 2 ** -10)) < 1e-3, String(a.quality_score));
        assert.equal(first.results.find((r) => r.id === ids.freshB).quality_score, 5);
        // nothing written back
        const e = ok(await s.api('GET', `/api/knowledge/${ids.oldA}`, { token: spaces['ageing-order'].reader }));
        assert.equal(e.eval.helpful, 3);
        // aged answers move with the clock: never from the cache
        const r = await s.api('GET', `/api/knowledge/search?q=${encodeURIComponent(Q)}&top_k=5&category=experiences`, { token: spaces['ageing-order'].reader });
        assert.equal(r.headers['x-cache'], 'miss');
        // off again: the counters as they are
        await setPolicy('ageing-order', 0);
        assert.deepEqual(order(await search('ageing-order', Q, '&top_k=5&category=experiences')), [ids.oldA, ids.freshB]);
        await setPolicy('ageing-order', 30);
    });

    test('a rule is not aged', async () => {
        const d = await search('ageing-order', Q, '&top_k=5&category=rules&explain=true');
        assert.deepEqual(order(d), [ids.rule]);
        const q = d.results[0].explain.quality;
        assert.deepEqual([q.exempt, q.helpful, q.helpful_aged, q.half_life_days], ['rule', 2, 2, 30]);
        assert.equal(d.results[0].quality_score, 5);
    });

    test('a pinned entry is not aged', async () => {
        const v = spaces['ageing-order'];
        ok(await s.api('PUT', `/api/knowledge/${ids.oldA}`, { token: v.admin, body: { pinned: true } }));
        try {
            const d = await search('ageing-order', Q, '&top_k=5&category=experiences&explain=true');
            assert.deepEqual(order(d), [ids.oldA, ids.freshB]);
            const q = d.results[0].explain.quality;
            assert.deepEqual([q.exempt, q.helpful, q.helpful_aged, q.half_life_days], ['pinned', 3, 3, 30]);
        } finally {
            ok(await s.api('PUT', `/api/knowledge/${ids.oldA}`, { token: v.admin, body: { pinned: false } }));
        }
        assert.deepEqual(order(await search('ageing-order', Q, '&top_k=5&category=experiences')), [ids.freshB, ids.oldA]);
    });

    test('the most relevant entry is never pushed out of the top_k by age alone', async () => {
        await setPolicy('ageing-kept', 30);
        const d = await search('ageing-kept', Q, '&top_k=1&explain=true');
        assert.deepEqual(order(d), [ids.keptA]);
        assert.equal(d.results[0].explain.kept, 'most_relevant');
        // with room for both, the aged order
        const both = await search('ageing-kept', Q, '&top_k=2&explain=true');
        assert.deepEqual(order(both), [ids.keptB, ids.keptA]);
        assert.ok(both.results[1].explain.relevance.fused > both.results[0].explain.relevance.fused);
        assert.equal(both.results[1].explain.kept, undefined);
    });

    test('an entry 300 days old that is the only relevant one stays first', async () => {
        await setPolicy('ageing-alone', 7);
        const d = await search('ageing-alone', Q, '&top_k=5&explain=true');
        assert.deepEqual(order(d), [ids.alone]);
        const q = d.results[0].explain.quality;
        assert.ok(q.helpful_aged < 0.001 && q.harmful_aged < 0.001, JSON.stringify(q));
        assert.equal(q.helpful, 4);
    });

    test('a slim merge carries the member\'s verdicts with their times', async () => {
        const v = spaces['ageing-merge'];
        const job = ok(await s.api('POST', '/api/knowledge/slim', { token: v.agent, body: {} }));
        let state;
        for (let i = 0; i < 200 && !['done', 'failed'].includes((state = ok(await s.api('GET', `/api/jobs/${job.id}`, { token: v.agent }))).status); i++)
            await new Promise((r) => setTimeout(r, 50));
        assert.equal(state.status, 'done', JSON.stringify(state));
        assert.equal(state.result.merged_groups.length, 1, JSON.stringify(state.result));
        await setPolicy('ageing-merge', 30);
        const d = await search('ageing-merge', 'vacuum events table', '&top_k=5&explain=true');
        assert.deepEqual(order(d), [ids.mergeOld], 'the survivor: more helpful verdicts');
        const q = d.results[0].explain.quality;
        assert.equal(q.helpful, 3);
        // 2 verdicts 300 days old (2 * 2^-10) and the member's fresh one (1)
        assert.ok(Math.abs(q.helpful_aged - (1 + 2 * 2 ** -10)) < 1e-3, JSON.stringify(q));
    });

    test('the policy: reader reads, admin sets 0..3650, nothing else', async () => {
        const v = spaces['ageing-policy'];
        assert.deepEqual(ok(await s.api('GET', '/api/evidence/policy', { token: v.reader })), { half_life_days: 0 });
        for (const body of [{ half_life_days: -1 }, { half_life_days: 3651 }, { half_life_days: 'x' }, { half_life_days: 1.5 }, {}])
            err(await s.api('PUT', '/api/evidence/policy', { token: v.admin, body }), 'INVALID_REQUEST');
        errKey(await s.api('PUT', '/api/evidence/policy', { token: v.admin, body: {} }), 'INVALID_REQUEST', 'half_life_days_required', { field: 'half_life_days' });
        for (const who of ['editor', 'agent', 'reader'])
            err(await s.api('PUT', '/api/evidence/policy', { token: v[who], body: { half_life_days: 30 } }), 'FORBIDDEN', 403);
        assert.deepEqual(ok(await s.api('PUT', '/api/evidence/policy', { token: v.admin, body: { half_life_days: 3650 } })), { half_life_days: 3650 });
        assert.deepEqual(ok(await s.api('GET', '/api/evidence/policy', { token: v.reader })), { half_life_days: 3650 });
        // another space's policy is its own
        assert.deepEqual(ok(await s.api('GET', '/api/evidence/policy', { token: spaces['ageing-explain'].reader })), { half_life_days: 0 });
    });
});

describe('explain=true', () => {
    let e;
    before(async () => {
        const v = spaces['ageing-explain'];
        e = {};
        e.good = await save(v.agent, { title: 'Rotate nginx access logs daily', scenario: 'Rotate nginx access logs', content: 'Rotate nginx access logs daily with logrotate.' });
        e.low = await save(v.agent, { title: 'Rotate nginx access logs hourly', scenario: 'Rotate nginx access logs', content: 'Rotate nginx access logs every hour.', score: 1 });
        e.harm = await save(v.agent, { title: 'Rotate nginx access logs by hand', scenario: 'Rotate nginx access logs', content: 'Rotate nginx access logs by moving them by hand.' });
        await verdicts(v.agent, e.harm, 'harmful', 2);
        e.old = await save(v.agent, { title: 'Rotate nginx access logs weekly', scenario: 'Rotate nginx access logs', content: 'Rotate nginx access logs weekly with logrotate.' });
        ok(await s.api('POST', `/api/knowledge/${e.good}/links`, { token: v.editor, body: { to: e.old, type: 'supersedes' } }));
        e.expired = await save(v.agent, { title: 'Rotate nginx access logs monthly', scenario: 'Rotate nginx access logs', content: 'Rotate nginx access logs monthly.', expires_at: '2000-01-01' });
        const filler = Array.from({ length: 70 }, (_, i) => `revenue ${i} by month`).join(', ');
        e.weak = await save(v.agent, { title: 'Plot revenue by month', scenario: 'Monthly revenue chart', content: `${filler}; the chart is served through nginx.` });
        for (let i = 0; i < 4; i++)
            await save(v.agent, { title: `Quarterly tax filing step ${i}`, scenario: 'File taxes', content: `Step ${i} of the quarterly tax filing.` });
    });

    test('the entry search: each result\'s components; left_out with why', async () => {
        const d = await search('ageing-explain', Q, '&top_k=5&explain=true');
        assert.deepEqual(order(d), [e.good]);
        const x = d.results[0].explain;
        for (const k of ['reference', 'bm25f', 'fused']) assert.equal(typeof x.relevance[k], 'number', k);
        assert.ok(x.relevance.bm25f > 0 && x.relevance.bm25f < 1);
        assert.ok(Math.abs(x.relevance.fused - (0.5 * x.relevance.reference + 100 * x.relevance.bm25f)) < 1e-6);
        assert.equal(x.relevance.fused, d.results[0].relevance);
        assert.deepEqual(x.quality, { score: 3, helpful: 0, harmful: 0, helpful_aged: 0, harmful_aged: 0, half_life_days: 0, counted: 3, value: 3 });
        const why = Object.fromEntries(d.left_out.map((l) => [l.id, l.why]));
        assert.deepEqual(why, { [e.low]: 'min_score', [e.harm]: 'negative_quality', [e.weak]: 'weak', [e.old]: 'superseded', [e.expired]: 'expired' });
        assert.equal(d.left_out.find((l) => l.id === e.old).title, 'Rotate nginx access logs weekly');
        // the same results without explain, and no explain fields
        const plain = await search('ageing-explain', Q, '&top_k=5');
        assert.deepEqual(order(plain), order(d));
        assert.equal(plain.left_out, undefined);
        assert.equal(plain.results[0].explain, undefined);
        // include_weak: the weak hit is a result, not left out
        const withWeak = await search('ageing-explain', Q, '&top_k=5&explain=true&include_weak=true');
        assert.ok(order(withWeak).includes(e.weak));
        assert.ok(!withWeak.left_out.some((l) => l.id === e.weak));
        err(await s.api('GET', '/api/knowledge/search?q=x&explain=maybe', { token: spaces['ageing-explain'].reader }), 'INVALID_REQUEST');
    });

    test('the file view search', async () => {
        const v = spaces['ageing-explain'];
        const d = ok(await s.api('POST', '/api/knowledge/search', { token: v.reader, body: { query: Q, explain: true } }));
        assert.ok(d.results.length >= 3);
        for (const r of d.results) {
            assert.equal(r.explain.relevance.fused, r.relevance);
            assert.equal(r.explain.relevance.reference, r.score);
        }
        const why = Object.fromEntries(d.left_out.map((l) => [l.id, l.why]));
        assert.equal(why[e.weak], 'weak');
        assert.equal(why[e.old], 'superseded');
        const plain = ok(await s.api('POST', '/api/knowledge/search', { token: v.reader, body: { query: Q } }));
        assert.deepEqual(plain.results.map((r) => r.id), d.results.map((r) => r.id));
        assert.equal(plain.left_out, undefined);
    });

    test('MCP knowledge_search takes explain', async () => {
        const v = spaces['ageing-explain'];
        const r = await mcpTool(s, v.reader, 'knowledge_search', { query: Q, explain: true });
        assert.equal(r.status, 200, r.text);
        const data = r.json.result.structuredContent;
        assert.deepEqual(data.results.map((x) => x.id), [e.good]);
        assert.equal(typeof data.results[0].explain.quality.value, 'number');
        assert.ok(data.left_out.some((l) => l.id === e.weak && l.why === 'weak'));
    });
});
