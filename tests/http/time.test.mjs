// time: an entry's expires_at, review_after and pinned (issue 25,
// docs/conflicts.md "Time: expiry, review-by dates and pins"), through
// nginx, on SQLite and (KNOWHUB_TEST_PG) PostgreSQL, with the wall clock
// fixed by KNOWHUB_NOW (Stack.restartKnowhub moves it): the fields on the
// entry view, bad values, the expiry boundary on every read path (one
// second before: found; at it: gone from the searches, the context and the
// rules, still readable, in the stale view), the answer cache's horizon,
// renewal, review_after queueing (one review_due proposal, approve clears).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { errKey, ok } from './lib/expect.mjs';
import { mcpTool, readsHolding, roleTokens } from './lib/reads.mjs';

const T0 = '2031-03-01T12:00:00Z';
let s;
before(async () => {
    s = await startStack({ KNOWHUB_NOW: T0 });
});
after(async () => {
    await s?.stop();
});

let spaces = 0;
const space = () => roleTokens(s, `time${++spaces}`);
const create = async (token, body) => ok(await s.api('POST', '/api/knowledge', { token, body }));
const get = async (token, id) => ok(await s.api('GET', `/api/knowledge/${id}`, { token }));
const put = (token, id, body) => s.api('PUT', `/api/knowledge/${id}`, { token, body });
const stale = async (token, q = '') => ok(await s.api('GET', `/api/knowledge/stale${q}`, { token }));
const at = (moment) => s.restartKnowhub({ KNOWHUB_NOW: moment });
const searchIds = async (token, word) =>
    ok(await s.api('GET', `/api/knowledge/search?q=${word}&top_k=10`, { token })).results.map((r) => r.id);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

describe('the fields', () => {
    test('set on create, returned by id and in lists, changed and cleared by PUT', async () => {
        await at(T0);
        const v = space();
        const k = await create(v.agent, {
            scenario: 'Rotating the staging certificates',
            content: 'Renew the staging certificates with certbot.',
            expires_at: '2031-06-01',
            review_after: '2031-04-01T08:30:00Z',
            pinned: true,
        });
        assert.deepEqual([k.expires_at, k.review_after, k.pinned], ['2031-06-01T00:00:00Z', '2031-04-01T08:30:00Z', true]);
        const g = await get(v.reader, k.id);
        assert.deepEqual([g.expires_at, g.review_after, g.pinned], [k.expires_at, k.review_after, true]);
        const listed = ok(await s.api('GET', '/api/knowledge?limit=10', { token: v.reader })).items.find((i) => i.id === k.id);
        assert.deepEqual([listed.expires_at, listed.review_after, listed.pinned], [k.expires_at, k.review_after, true]);
        const u = ok(await put(v.agent, k.id, { expires_at: null, pinned: false }));
        assert.deepEqual([u.expires_at, u.review_after, u.pinned], [null, '2031-04-01T08:30:00Z', false]);
        const plain = await create(v.agent, { scenario: 'No time at all', content: 'Nothing expires here.' });
        assert.deepEqual([plain.expires_at, plain.review_after, plain.pinned], [null, null, false]);
    });

    test('bad values are INVALID_REQUEST invalid_time naming the field', async () => {
        const v = space();
        for (const [field, value] of [
            ['expires_at', '2031-02-30'],
            ['expires_at', 'tomorrow'],
            ['review_after', '2031-04-01T25:00:00Z'],
            ['review_after', '2031-04-01T08:00:00+02:00'],
            ['expires_at', 20310401],
            ['pinned', 'yes'],
        ]) {
            const r = await s.api('POST', '/api/knowledge', { token: v.agent, body: { scenario: 'x', content: 'y', [field]: value } });
            errKey(r, 'INVALID_REQUEST', 'invalid_time', { field });
        }
        const k = await create(v.agent, { scenario: 'x', content: 'y' });
        errKey(await put(v.agent, k.id, { review_after: '31/12/2031' }), 'INVALID_REQUEST', 'invalid_time', { field: 'review_after' });
        // a rule's time is a rule's change: admins only
        const rule = await create(v.admin, { category: 'rules', path: 'r.md', scenario: 'r', content: 'Rule.', always_apply: true });
        errKey(await put(v.editor, rule.id, { expires_at: '2031-05-01' }), 'FORBIDDEN', 'rules_admin_only', {}, 403);
    });
});
