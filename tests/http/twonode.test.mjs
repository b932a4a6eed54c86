// Two knowhub nodes on one PostgreSQL database behind one nginx
// (tests/http/lib/nodes.mjs): both answer through the front port, the front
// spreads requests over both (X-KnowHub-Node), and what one node writes the
// other reads. Needs KNOWHUB_TEST_PG (test.sh's PostgreSQL pass sets it).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { onPostgres, startNodes } from './lib/nodes.mjs';
import { ok } from './lib/expect.mjs';

const SKIP = !onPostgres && 'needs a PostgreSQL cluster (KNOWHUB_TEST_PG, see docs/testing.md)';

describe('two nodes on one database', { skip: SKIP }, () => {
    let c;
    before(async () => {
        c = await startNodes({ nodes: 2 });
    });
    after(async () => {
        await c?.stop();
    });

    test('each node answers on its own port, and names itself', async () => {
        for (const n of c.node) {
            const r = await n.api('GET', '/api/health');
            assert.equal(r.status, 200, r.text);
            assert.equal(r.headers['x-knowhub-node'], n.name);
        }
    });

    test('the front port reaches both nodes over 20 requests', async () => {
        const seen = new Map();
        for (let i = 0; i < 20; i++) {
            const r = await c.front.api('GET', '/api/health');
            assert.equal(r.status, 200, r.text);
            const name = r.headers['x-knowhub-node'];
            seen.set(name, (seen.get(name) || 0) + 1);
        }
        assert.deepEqual([...seen.keys()].sort(), ['node-a', 'node-b'], JSON.stringify([...seen]));
    });

    test('a document created through node A reads through node B', async () => {
        const [a, b] = c.node;
        const w = await a.api('POST', '/api/knowledge', {
            token: c.admin,
            body: { scenario: 'Two nodes share one database', content: 'Written on node A, read on node B.' },
        });
        assert.equal(w.headers['x-knowhub-node'], 'node-a');
        const id = ok(w).id;
        const r = await b.api('GET', `/api/knowledge/${id}`, { token: c.admin });
        assert.equal(r.headers['x-knowhub-node'], 'node-b');
        const d = ok(r);
        assert.equal(d.id, id);
        assert.match(JSON.stringify(d), /Written on node A, read on node B\./);
    });

    test('a token made with the CLI works on both nodes', async () => {
        const t = c.token('default', 'reader', 'twonode-reader');
        for (const n of c.node) assert.equal((await n.api('GET', '/api/knowledge', { token: t })).status, 200);
    });
});
