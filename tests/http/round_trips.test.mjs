// Round trips to the store per request (docs/performance.md "Round trips"):
// X-KnowHub-Round-Trips under KNOWHUB_DEBUG_HEADERS=on, and the
// knowhub_store_round_trips histogram of GET /metrics. SQLite runs in the
// process: 0. PostgreSQL (KNOWHUB_TEST_PG): what each request costs today,
// with the answer cache off as issue 27 measures it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { ok } from './lib/expect.mjs';

let s;
// one worker thread: every request on the one connection, prepared after the first
before(async () => (s = await startStack({ KNOWHUB_DEBUG_HEADERS: 'on', KNOWHUB_CACHE_SLOTS: '0', KNOWHUB_THREADS: '1' })));
after(async () => s?.stop());

const trips = (r) => Number(r.headers['x-knowhub-round-trips']);

test('each answer says its round trips; GET by id in steady state', async () => {
    const id = ok(await s.api('POST', '/api/knowledge', { token: s.admin, body: { scenario: 'round trips', content: 'count them' } })).id;
    const first = await s.api('GET', `/api/knowledge/${id}`, { token: s.admin });
    ok(first);
    const steady = [];
    for (let i = 0; i < 5; i++) steady.push(trips(await s.api('GET', `/api/knowledge/${id}`, { token: s.admin })));
    const health = trips(await s.api('GET', '/api/health'));
    const search = trips(await s.api('GET', '/api/knowledge/search?q=round+trips', { token: s.admin }));
    console.log(`# round trips (${s.databaseUrl ? 'postgresql' : 'sqlite'}): GET by id ${steady.join(' ')}, health ${health}, search ${search}`);
    if (!s.databaseUrl) {
        assert.deepEqual([...steady, health, search], [0, 0, 0, 0, 0, 0, 0]);
        return;
    }
    // Steady once every worker's connection has prepared its statements:
    // today 8 (the token with the generation, BEGIN, the entry, its helpful
    // and its harmful cases, its log, its time, COMMIT; docs/performance.md).
    const last = steady.slice(-2);
    assert.equal(last[0], last[1], steady.join(' '));
    assert.ok(last[0] >= 1 && health >= 1 && search >= 1, `${steady} ${health} ${search}`);
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
    assert.ok(Number(sum.split(' ')[1]) >= 12, sum);
});
