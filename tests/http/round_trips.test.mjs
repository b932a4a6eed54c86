// Round trips to the store per request (docs/performance.md "Round trips"):
// X-KnowHub-Round-Trips under KNOWHUB_DEBUG_HEADERS=on, and the
// knowhub_store_round_trips histogram of GET /metrics. SQLite runs in the
// process: 0. PostgreSQL (KNOWHUB_TEST_PG): what each request costs, with
// the answer cache off as issue 27 measures it: a GET by id is one statement
// (the entry, its cases, log and time) with the token kept in memory, and
// the health check answers from its connection's last check of the database
// while it is younger than the bound (KNOWHUB_TOKEN_CACHE_MS).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { ok } from './lib/expect.mjs';

let s;
// one worker thread: every request on the one connection, prepared after the first
// a verified token kept 10 s (not 1): a slow moment of a shared machine does not look it up again
before(async () => (s = await startStack({ KNOWHUB_DEBUG_HEADERS: 'on', KNOWHUB_CACHE_SLOTS: '0', KNOWHUB_THREADS: '1', KNOWHUB_TOKEN_CACHE_MS: '10000' })));
after(async () => s?.stop());

const trips = (r) => Number(r.headers['x-knowhub-round-trips']);

test('each answer says its round trips; GET by id in steady state', async () => {
    const id = ok(await s.api('POST', '/api/knowledge', { token: s.admin, body: { scenario: 'round trips', content: 'count them' } })).id;
    const first = await s.api('GET', `/api/knowledge/${id}`, { token: s.admin });
    ok(first);
    const steady = [];
    for (let i = 0; i < 5; i++) steady.push(trips(await s.api('GET', `/api/knowledge/${id}`, { token: s.admin })));
    await s.api('GET', '/api/health'); // the first asks the database
    const health = trips(await s.api('GET', '/api/health'));
    const search = trips(await s.api('GET', '/api/knowledge/search?q=round+trips', { token: s.admin }));
    console.log(`# round trips (${s.databaseUrl ? 'postgresql' : 'sqlite'}): GET by id ${steady.join(' ')}, health ${health}, search ${search}`);
    if (!s.databaseUrl) {
        assert.deepEqual([...steady, health, search], [0, 0, 0, 0, 0, 0, 0]);
        return;
    }
    // Steady once the connection has prepared its statements and verified
    // the token (kept 1 s): one statement, where it was 8 (the token with the
    // generation, BEGIN, the entry, its helpful and its harmful cases, its
    // log, its time, COMMIT; docs/performance.md "Round trips per request").
    assert.deepEqual(steady.slice(1), [1, 1, 1, 1], steady.join(' '));
    assert.equal(health, 0);
    assert.ok(search >= 1, String(search));
});

test('the metrics: a histogram per route, on PostgreSQL only', async () => {
    const r = await s.api('GET', '/metrics');
    assert.equal(r.status, 200);
    const line = r.text.split('\n').find((l) => l.startsWith('knowhub_store_round_trips_count{method="GET",route="/api/knowledge/{id}"}'));
    if (!s.databaseUrl) {
        assert.equal(line, undefined);
        return;
    }
    assert.ok(line && Number(line.split(' ')[1]) >= 6, line);
    const sum = r.text.split('\n').find((l) => l.startsWith('knowhub_store_round_trips_sum{method="GET",route="/api/knowledge/{id}"}'));
    assert.ok(Number(sum.split(' ')[1]) >= 6, sum);
});

// A search in steady state (its statements prepared), one hit and ten: the
// entry view (GET /api/knowledge/search, top_k 5: ten candidates) and the
// file view (POST /api/knowledge/search). docs/performance.md "Search on PostgreSQL"
// lists the statements of each.
test('search: the round trips of the entry view and the file view, one hit and ten', async () => {
    for (let i = 0; i < 12; i++)
        ok(await s.api('POST', '/api/knowledge', { token: s.admin, body: { scenario: `ledger ${i} reconcile`, content: `quarterly ledger reconcile step ${i}` } }));
    ok(await s.api('POST', '/api/knowledge', { token: s.admin, body: { scenario: 'lonely walrus', content: 'one of a kind' } }));
    const entry = async (q) => {
        const r = await s.api('GET', `/api/knowledge/search?q=${encodeURIComponent(q)}&top_k=5&mode=lexical`, { token: s.admin });
        return [trips(r), ok(r).results.length];
    };
    const file = async (q) => {
        const r = await s.api('POST', '/api/knowledge/search', { token: s.admin, body: { query: q, max_results: 10, mode: 'lexical' } });
        return [trips(r), ok(r).results.length];
    };
    const runs = {};
    for (const [name, f, q] of [['entry one', entry, 'walrus'], ['entry ten', entry, 'ledger reconcile'], ['file one', file, 'walrus'], ['file ten', file, 'ledger reconcile']]) {
        await f(q); // prepares what it needs
        runs[name] = await f(q);
    }
    console.log(`# search round trips (${s.databaseUrl ? 'postgresql' : 'sqlite'}): ${JSON.stringify(runs)}`);
    assert.deepEqual(Object.values(runs).map((r) => r[1]), [1, 5, 1, 10]);
    if (!s.databaseUrl) {
        assert.deepEqual(Object.values(runs).map((r) => r[0]), [0, 0, 0, 0]);
        return;
    }
    // entry view: the generation (the token is kept in memory; the answer
    // cache reads the generation itself), the evidence policy, the hits in one
    // read, their conflicts in one read: the ranking reads no row (the index in
    // memory, docs/search.md), so no read transaction either; the file view the
    // same without the policy and the conflicts. (With the passes: 9, 7, 7, 5.)
    assert.deepEqual(Object.values(runs).map((r) => r[0]), [4, 4, 2, 2], JSON.stringify(runs));
});

// /context (and the write check, which searches the same way) reads its hits
// in one statement: one hit or five of the same five alike entries, the same
// round trips (they were one read per hit).
test('context: the hits in one read, however many', async () => {
    const ask = async (max) => {
        const r = await s.api('POST', '/api/knowledge/context', { token: s.admin, body: { question: 'heron nest survey', max_results: max } });
        return [trips(r), ok(r).knowledge.length];
    };
    for (let i = 0; i < 5; i++)
        ok(await s.api('POST', '/api/knowledge', { token: s.admin, body: { category: 'experiences', scenario: `heron nest survey ${i}`, content: `count the heron nests along the river, survey ${i}` } }));
    await ask(1); // prepares what it needs
    const one = await ask(1);
    const five = await ask(5);
    console.log(`# context round trips (${s.databaseUrl ? 'postgresql' : 'sqlite'}): one hit ${one[0]}, five ${five[0]}`);
    assert.deepEqual([one[1], five[1]], [1, 5]);
    assert.equal(five[0], one[0], `one hit ${one[0]}, five ${five[0]}`);
    if (!s.databaseUrl) assert.equal(one[0], 0);
});
