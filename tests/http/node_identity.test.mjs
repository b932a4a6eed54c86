// Which node answers, and on which backend (issue 27): GET /api/health says
// `store` (sqlite / postgresql) always and `node` (KNOWHUB_NODE) to loopback
// through the node's nginx and to a caller with a valid token, never to a
// remote anonymous caller; /metrics has knowhub_node_info{node,store}. On
// PostgreSQL also the operator's form `scripts/stack.sh nodes-start N`: N
// nodes on one database behind one nginx, each node's own port naming its
// node (health and metrics: what Prometheus scrapes), the round-robin front
// reaching every node, and nodes-stop leaving no process behind.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ROOT, createDatabase, dropDatabase, freePort, onPostgres, request, run, startStack } from './lib/stack.mjs';

const STORE = onPostgres ? 'postgresql' : 'sqlite';
const STACK_SH = path.join(ROOT, 'scripts/stack.sh');
const via = { 'X-Forwarded-For': '203.0.113.7' };

const nodeInfo = (text) => text.split('\n').filter((l) => l.startsWith('knowhub_node_info'));

describe('one node names itself and its backend', () => {
    let s;
    before(async () => {
        s = await startStack({ KNOWHUB_NODE: 'node-x' });
    });
    after(async () => {
        await s?.stop();
    });

    test('health: store always; node to loopback and to a valid token, not to a remote anonymous caller', async () => {
        const local = await s.api('GET', '/api/health');
        assert.equal(local.status, 200);
        assert.equal(local.json.data.store, STORE);
        assert.equal(local.json.data.node, 'node-x');
        assert.equal(local.headers['x-knowhub-node'], undefined); // the header stays for authenticated answers

        const remote = await s.api('GET', '/api/health', { headers: via });
        assert.equal(remote.json.data.store, STORE);
        assert.equal(remote.json.data.node, undefined);
        const bad = await s.api('GET', '/api/health', { headers: via, token: 'kh_0000000000000000_nope' });
        assert.equal(bad.json.data.node, undefined);

        const withToken = await s.api('GET', '/api/health', { headers: via, token: s.admin });
        assert.equal(withToken.json.data.node, 'node-x');
        assert.equal(withToken.json.data.space.name, 'default');
    });

    test('metrics: knowhub_node_info{node,store} 1', async () => {
        const r = await s.api('GET', '/metrics');
        assert.equal(r.status, 200);
        assert.deepEqual(nodeInfo(r.text), [`knowhub_node_info{node="node-x",store="${STORE}"} 1`]);
        assert.match(r.text, /^# TYPE knowhub_node_info gauge$/m);
    });
});

describe('scripts/stack.sh nodes-start N', () => {
    test('refuses without KNOWHUB_DATABASE_URL (several nodes share one PostgreSQL) and starts nothing', () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'knowhub-opnodes-'));
        try {
            const r = run('bash', [STACK_SH, 'nodes-start', '2', dir, '127.0.0.1', '1'], { KNOWHUB_DATABASE_URL: '' });
            assert.equal(r.status, 1);
            assert.match(r.stderr, /KNOWHUB_DATABASE_URL/);
            assert.deepEqual(fs.readdirSync(dir), []);
            const bad = run('bash', [STACK_SH, 'nodes-start', '0', dir], { KNOWHUB_DATABASE_URL: 'postgresql:///x' });
            assert.equal(bad.status, 1);
            assert.match(bad.stderr, /1 to 64/);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    test('three nodes on one PostgreSQL: each port names its node, the front reaches all, nodes-stop stops all', { skip: !onPostgres && 'needs KNOWHUB_TEST_PG' }, async () => {
        const N = 3;
        const db = createDatabase();
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'knowhub-opnodes-'));
        const agent = new http.Agent({ keepAlive: false });
        let port = 0;
        let started = false;
        try {
            let err = '';
            for (let attempt = 0; attempt < 5 && !started; attempt++) {
                port = await freePort();
                const r = run('bash', [STACK_SH, 'nodes-start', String(N), dir, '127.0.0.1', String(port)], { KNOWHUB_DATABASE_URL: db.url }, 'ignore');
                started = r.status === 0;
                err = r.stderr;
            }
            assert.ok(started, `nodes-start failed: ${err}`);
            const admin = fs.readFileSync(path.join(dir, 'node-1/admin.token'), 'utf8').trim();
            for (let i = 1; i <= N; i++) {
                const h = await request(agent, port + i, 'GET', '/api/health');
                assert.equal(h.status, 200);
                assert.equal(h.json.data.node, `node-${i}`);
                assert.equal(h.json.data.store, 'postgresql');
                const m = await request(agent, port + i, 'GET', '/metrics');
                assert.equal(m.status, 200, m.text.slice(0, 200));
                assert.deepEqual(nodeInfo(m.text), [`knowhub_node_info{node="node-${i}",store="postgresql"} 1`]);
            }
            // The front: round robin (new connections; nginx's workers each
            // keep their own turn), so within a few dozen requests every node
            // answers. Its /metrics is not one node's: the nodes' proxy keys
            // differ, so the front sends none and loopback is not trusted.
            const seen = new Set();
            for (let k = 0; k < 60 && seen.size < N; k++) {
                const h = await request(agent, port, 'GET', '/api/health', { token: admin });
                assert.equal(h.status, 200);
                seen.add(h.json.data.node);
            }
            assert.deepEqual([...seen].sort(), ['node-1', 'node-2', 'node-3']);
            assert.equal((await request(agent, port, 'GET', '/metrics')).status, 401);
            const again = run('bash', [STACK_SH, 'nodes-start', String(N), dir, '127.0.0.1', String(port + 10)], { KNOWHUB_DATABASE_URL: db.url });
            assert.equal(again.status, 1);
            assert.match(again.stderr, /already has nodes|already in use/);
        } finally {
            const pids = [];
            for (let i = 1; i <= N; i++) {
                try {
                    pids.push(Number(fs.readFileSync(path.join(dir, `node-${i}/run/knowhub.pid`), 'utf8')));
                } catch {
                    /* not started */
                }
            }
            try {
                pids.push(Number(fs.readFileSync(path.join(dir, 'front/run/nginx-main.pid'), 'utf8')));
            } catch {
                /* not started */
            }
            const stop = run('bash', [STACK_SH, 'nodes-stop', dir]);
            agent.destroy();
            dropDatabase(db.name);
            fs.rmSync(dir, { recursive: true, force: true });
            assert.equal(stop.status, 0, stop.stderr);
            for (const pid of pids) {
                let alive = false;
                try {
                    const st = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
                    alive = st.slice(st.lastIndexOf(')') + 2)[0] !== 'Z';
                } catch {
                    /* gone */
                }
                assert.ok(!alive, `process ${pid} still runs after nodes-stop`);
            }
        }
    });
});
