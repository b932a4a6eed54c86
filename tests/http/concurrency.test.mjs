// Concurrent clients through nginx: counters are exact (atomic SQL in a
// transaction), ids stay unique, and no request fails under contention.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { request, startStack } from './lib/stack.mjs';
import { ok } from './lib/expect.mjs';

const CLIENTS = 8;
let s, agent;
const agents = [];

before(async () => {
    // 2,000 writes at once from one token: lost updates are the question here,
    // not the token's write rate (tests/http/quotas.test.mjs)
    s = await startStack({ KNOWHUB_WRITE_RATE: '0' });
    agent = s.token('default', 'agent', 'load');
    // One connection per client, so the requests really overlap.
    for (let i = 0; i < CLIENTS; i++) agents.push(new http.Agent({ keepAlive: true, maxSockets: 1 }));
});
after(async () => {
    for (const a of agents) a.destroy();
    await s?.stop();
});

/** Run fn(client, i) for i in [0, n) on every client at once; collect failures. */
async function hammer(n, fn) {
    const failures = [];
    await Promise.all(
        agents.map(async (a, client) => {
            for (let i = 0; i < n; i++) {
                const r = await fn(a, client, i);
                if (r.status !== 200 || r.json?.status !== 'success') failures.push(`${r.status} ${r.text.slice(0, 200)}`);
            }
        }),
    );
    return failures;
}

const call = (a, method, path, body) => request(a, s.port, method, path, { token: agent, body });

test(`${CLIENTS} clients x 250 add_helpful_case on one entry: exactly ${CLIENTS * 250}`, async () => {
    const id = ok(await s.api('POST', '/api/knowledge', { token: agent, body: { scenario: 'hot entry', content: 'c' } })).id;
    const failures = await hammer(250, (a, client, i) =>
        call(a, 'PUT', `/api/knowledge/${id}`, { add_helpful_case: { case_id: `c${client}-${i}`, result: 'ok' } }),
    );
    assert.deepEqual(failures.slice(0, 5), []);
    const d = ok(await s.api('GET', `/api/knowledge/${id}`, { token: agent }));
    assert.equal(d.eval.helpful, CLIENTS * 250);
    assert.equal(d.metrics.helpful, CLIENTS * 250);
    assert.equal(d.eval.helpful_history.length, 50, 'an entry shows its latest 50 cases');
    // Every case is a history row: page through all of them.
    const seen = new Set();
    for (let offset = 0; ; offset += 1000) {
        const page = ok(await s.api('GET', `/api/knowledge/${id}/cases?kind=helpful&limit=1000&offset=${offset}`, { token: s.admin }));
        assert.equal(page.total, CLIENTS * 250);
        for (const c of page.items) seen.add(c.case_id);
        if (page.items.length < 1000) break;
    }
    assert.equal(seen.size, CLIENTS * 250);
    assert.equal(d.eval.harmful, 0);
});

test('the same case ids from every client count once each', async () => {
    const id = ok(await s.api('POST', '/api/knowledge', { token: agent, body: { scenario: 'dup entry', content: 'c' } })).id;
    const added = [];
    const failures = await hammer(40, async (a, client, i) => {
        const r = await call(a, 'PUT', `/api/knowledge/${id}`, { add_harmful_case: { case_id: `shared-${i}` } });
        if (r.json?.data?.applied?.add_harmful_case === 'added') added.push(i);
        return r;
    });
    assert.deepEqual(failures.slice(0, 5), []);
    assert.equal(added.length, 40, 'each case id is "added" exactly once');
    assert.equal(new Set(added).size, 40);
    const d = ok(await s.api('GET', `/api/knowledge/${id}`, { token: agent }));
    assert.equal(d.eval.harmful, 40);
    assert.equal(d.eval.helpful, 0);
});

test('concurrent creates get distinct ids and the total matches', async () => {
    const tok = s.token('creates', 'agent', 'creator');
    const ids = [];
    const failures = await hammer(30, async (a, client, i) => {
        const r = await request(a, s.port, 'POST', '/api/knowledge', {
            token: tok,
            body: { scenario: `parallel ${client}/${i}`, content: 'c', agent_id: `agent-${client}` },
        });
        if (r.json?.status === 'success') ids.push(r.json.data.id);
        return r;
    });
    assert.deepEqual(failures.slice(0, 5), []);
    assert.equal(ids.length, CLIENTS * 30);
    assert.equal(new Set(ids).size, ids.length);
    const list = ok(await s.api('GET', '/api/knowledge?limit=100', { token: tok }));
    assert.equal(list.total, CLIENTS * 30);
    // Paging through all of them finds each id once.
    const seen = [];
    for (let off = 0; off < list.total; off += 100)
        seen.push(...ok(await s.api('GET', `/api/knowledge?limit=100&offset=${off}`, { token: tok })).items.map((i) => i.id));
    assert.deepEqual([...seen].sort(), [...ids].sort());
});

test('concurrent batch feedback, score changes and reads stay consistent', async () => {
    const id = ok(await s.api('POST', '/api/knowledge', { token: agent, body: { scenario: 'mixed', content: 'c' } })).id;
    const failures = await hammer(25, (a, client, i) => {
        switch (client % 4) {
            case 0:
                return call(a, 'POST', '/api/knowledge/batch_update', {
                    feedback_list: [
                        { knowledge_id: id, is_effective: true },
                        { knowledge_id: id, is_effective: false },
                    ],
                });
            case 1:
                return call(a, 'PUT', `/api/knowledge/${id}`, { update_score: 1 + ((i + client) % 5) });
            case 2:
                return call(a, 'GET', `/api/knowledge/${id}`);
            default:
                return call(a, 'GET', '/api/knowledge?limit=5');
        }
    });
    assert.deepEqual(failures.slice(0, 5), []);
    const d = ok(await s.api('GET', `/api/knowledge/${id}`, { token: agent }));
    // Clients 0 and 4 each sent 25 batches of one helpful and one harmful.
    assert.equal(d.eval.helpful, 50);
    assert.equal(d.eval.harmful, 50);
    const revs = ok(await s.api('GET', `/api/knowledge/${id}/revisions`, { token: agent })).items;
    assert.equal(revs[0].version, d.version, 'the newest revision is the current version');
    assert.deepEqual(
        revs.map((r) => r.version),
        Array.from({ length: d.version }, (_, i) => d.version - i),
        'versions have no gaps',
    );
    assert.equal(revs[0].document.score, d.eval.score);
});
