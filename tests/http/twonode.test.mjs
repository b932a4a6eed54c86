// Two knowhub nodes on one PostgreSQL database behind one nginx
// (tests/http/lib/nodes.mjs): both answer through the front port, the front
// spreads requests over both (X-KnowHub-Node), and what one node writes the
// other reads. Then the proofs that two nodes are one service:
//   - counters exact under concurrent cases and evaluations through both nodes;
//   - one winner among concurrent writes with the same expected_version;
//   - no stale cached answer on B after a write on A (by id and by search);
//   - a revoked token refused by the other node within the bound (1 s), a
//     login on the next request;
//   - kill -9 of the node running a slim job: the other takes it over after
//     the lease and finishes it, each merge once;
//   - PostgreSQL crashed (stop -m immediate) under write load: every write
//     answered 200 survives, the others are 503 retry, both nodes recover by
//     themselves, knowhub check is clean (on a cluster of its own).
// Needs KNOWHUB_TEST_PG (test.sh's PostgreSQL pass sets it).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { onPostgres, startNodes } from './lib/nodes.mjs';
import { BIN, ROOT, assertNoBugs } from './lib/stack.mjs';
import { err, ok } from './lib/expect.mjs';
import { startFakeLlm } from './lib/fakellm.mjs';
import { llmEnv, sleep, sql, waitFor } from './lib/llmtest.mjs';

const SKIP = !onPostgres && 'needs a PostgreSQL cluster (KNOWHUB_TEST_PG, see docs/testing.md)';

/** Run fn(i) for i in 0..n-1 with at most `width` at a time; the results in order. */
async function pool(n, width, fn) {
    const out = new Array(n);
    let next = 0;
    await Promise.all(
        Array.from({ length: Math.min(width, n) }, async () => {
            while (next < n) {
                const i = next++;
                out[i] = await fn(i);
            }
        }),
    );
    return out;
}

/** The ports of a cluster by name: node-a, node-b and front. */
const ports = (c) => [
    { name: 'node-a', api: (...a) => c.node[0].api(...a) },
    { name: 'node-b', api: (...a) => c.node[1].api(...a) },
    { name: 'front', api: (...a) => c.front.api(...a) },
];

/** The name of the node that answered (X-KnowHub-Node). */
const nodeOf = (r) => r.headers['x-knowhub-node'];

describe('two nodes on one database', { skip: SKIP }, () => {
    let c;
    before(async () => {
        c = await startNodes({ nodes: 2 });
    });
    after(async () => {
        await c?.stop();
    });

    test('each node answers on its own port, and names itself to an authenticated caller only', async () => {
        for (const n of c.node) {
            const r = await n.api('GET', '/api/jobs', { token: c.admin });
            assert.equal(r.status, 200, r.text);
            assert.equal(r.headers['x-knowhub-node'], n.name);
            const anonymous = await n.api('GET', '/api/health');
            assert.equal(anonymous.status, 200, anonymous.text);
            assert.equal(anonymous.headers['x-knowhub-node'], undefined, 'no host name for anonymous callers');
        }
    });

    test('the front port reaches both nodes over 20 requests', async () => {
        const seen = new Map();
        for (let i = 0; i < 20; i++) {
            const r = await c.front.api('GET', '/api/jobs', { token: c.admin });
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

    // 10 clients × 100 cases (4 through A, 4 through B, 2 through the front),
    // then every case of A's and B's clients again through the other node,
    // then 40 traces each injecting the entry twice (A and B) and evaluated
    // twice at once (A and B): the counters are exactly what was sent.
    test('exact counters: concurrent cases and evaluations through both nodes count once each', async () => {
        const t = c.token('counters', 'agent', 'counters-bot');
        const id = ok(await c.front.api('POST', '/api/knowledge', { token: t, body: { scenario: 'Counted by two nodes at once', content: 'Every case once.' } })).id;
        const P = ports(c);
        const CLIENTS = [0, 0, 0, 0, 1, 1, 1, 1, 2, 2]; // index into P
        const PER = 100;
        const sent = []; // {caseId, kind, via}
        for (let k = 0; k < CLIENTS.length; k++)
            for (let j = 0; j < PER; j++) sent.push({ caseId: `c${k}-${j}`, kind: (k + j) % 2 ? 'harmful' : 'helpful', via: CLIENTS[k] });
        const caseBody = (s) => ({ [`add_${s.kind}_case`]: { case_id: s.caseId, scenario: `case ${s.caseId}`, result: `sent through ${P[s.via].name}` } });
        const t0 = Date.now();
        const seenNodes = new Set();
        const perClient = await Promise.all(
            CLIENTS.map(async (via, k) => {
                const mine = sent.filter((s) => s.caseId.startsWith(`c${k}-`));
                for (const s of mine) {
                    const r = await P[via].api('PUT', `/api/knowledge/${id}`, { token: t, body: caseBody(s) });
                    const d = ok(r);
                    seenNodes.add(nodeOf(r));
                    assert.equal(d.applied[`add_${s.kind}_case`], 'added', `${s.caseId} via ${P[via].name}: ${r.text.slice(0, 300)}`);
                }
                return mine.length;
            }),
        );
        const caseMs = Date.now() - t0;
        assert.equal(perClient.reduce((x, y) => x + y, 0), 1000);
        assert.deepEqual([...seenNodes].sort(), ['node-a', 'node-b']);
        const helpfulCases = sent.filter((s) => s.kind === 'helpful').length;
        const harmfulCases = sent.length - helpfulCases;

        // The same case ids again, each through the other node: all duplicates.
        const again = sent.filter((s) => s.via !== 2);
        const dup = await pool(again.length, 8, async (i) => {
            const s = again[i];
            const other = P[1 - s.via];
            return ok(await other.api('PUT', `/api/knowledge/${id}`, { token: t, body: caseBody(s) })).applied[`add_${s.kind}_case`];
        });
        assert.deepEqual([...new Set(dup)], ['duplicate'], 'a case id sent again through the other node counts once');

        // Evaluations: each trace injects the entry through A and through B,
        // then both nodes evaluate it at the same moment; a trace moves a
        // counter once per status, so exactly one of the two counts.
        const TRACES = 40;
        const evals = await pool(TRACES, 8, async (i) => {
            const trace = `trace-two-${i}`;
            const status = i % 2 ? 'harmful' : 'helpful';
            ok(await c.node[0].api('POST', `/api/traces/${trace}/knowledge_log`, { token: t, body: { knowledge_id: id, goal_id: 'g1', injected_at_sequence: 1 } }));
            ok(await c.node[1].api('POST', `/api/traces/${trace}/knowledge_log`, { token: t, body: { knowledge_id: id, goal_id: 'g2', injected_at_sequence: 2 } }));
            const body = { trigger: 'goal_completion', evaluations: [{ knowledge_id: id, eval_status: status, reason: `verdict of ${trace}` }] };
            const rs = await Promise.all(c.node.map((n) => n.api('POST', `/api/traces/${trace}/evaluations`, { token: t, body })));
            const counted = rs.map((r) => ok(r).updated.filter((u) => u.counted).length);
            return { status, counted: counted[0] + counted[1] };
        });
        assert.deepEqual(
            evals.map((e) => e.counted),
            new Array(TRACES).fill(1),
            'each trace counted once although both nodes evaluated it',
        );
        // A trace evaluated again (through the front) changes nothing.
        for (let i = 0; i < 4; i++) {
            const trace = `trace-two-${i}`;
            ok(await c.front.api('POST', `/api/traces/${trace}/knowledge_log`, { token: t, body: { knowledge_id: id, goal_id: 'g3', injected_at_sequence: 3 } }));
            const d = ok(await c.front.api('POST', `/api/traces/${trace}/evaluations`, { token: t, body: { trigger: 'task_completion', evaluations: [{ knowledge_id: id, eval_status: evals[i].status, reason: 'again' }] } }));
            assert.equal(d.updated.filter((u) => u.counted).length, 0, JSON.stringify(d));
        }
        const helpful = helpfulCases + evals.filter((e) => e.status === 'helpful').length;
        const harmful = harmfulCases + evals.filter((e) => e.status === 'harmful').length;
        for (const p of P) {
            const d = ok(await p.api('GET', `/api/knowledge/${id}`, { token: t }));
            assert.equal(d.eval.helpful, helpful, `helpful through ${p.name}`);
            assert.equal(d.eval.harmful, harmful, `harmful through ${p.name}`);
            const hc = ok(await p.api('GET', `/api/knowledge/${id}/cases?kind=helpful&limit=1`, { token: t }));
            const mc = ok(await p.api('GET', `/api/knowledge/${id}/cases?kind=harmful&limit=1`, { token: t }));
            assert.equal(hc.total, helpful, `helpful cases through ${p.name}`);
            assert.equal(mc.total, harmful, `harmful cases through ${p.name}`);
        }
        console.log(`# counters: ${sent.length} cases in ${caseMs} ms (10 clients), ${again.length} duplicates, ${TRACES} traces x 2 evaluations: helpful ${helpful}, harmful ${harmful}`);
    });

    // 20 rounds of 12 writes at once (4 through A, 4 through B, 4 through the
    // front), all with the version just read: one wins, 11 are CONFLICT.
    test('one winner: concurrent writes with the same expected_version through both nodes', async () => {
        const t = c.token('winner', 'agent', 'winner-bot');
        const P = ports(c);
        const pathName = 'twonode/one-winner.md';
        ok(await c.node[0].api('POST', '/api/knowledge/write', { token: t, body: { category: 'experiences', path: pathName, content: 'first version' } }));
        const ROUNDS = 20;
        const N = 12;
        const codes = new Map();
        for (let round = 0; round < ROUNDS; round++) {
            const before = ok(await P[round % 2].api('POST', '/api/knowledge/read', { token: t, body: { category: 'experiences', path: pathName } }));
            const rs = await Promise.all(
                Array.from({ length: N }, (_, k) =>
                    P[k % 3].api('POST', '/api/knowledge/write', {
                        token: t,
                        body: { category: 'experiences', path: pathName, content: `round ${round} writer ${k}`, expected_version: before.version },
                    }),
                ),
            );
            const wins = rs.map((r, k) => ({ r, k })).filter(({ r }) => r.status === 200 && r.json?.status === 'success');
            assert.equal(wins.length, 1, `round ${round}: ${rs.map((r) => r.text.slice(0, 120)).join('\n')}`);
            for (const r of rs) {
                if (r === wins[0].r) continue;
                const e = err(r, 'CONFLICT');
                codes.set(e.key, (codes.get(e.key) || 0) + 1);
            }
            const winner = wins[0];
            assert.equal(winner.r.json.data.version, before.version + 1);
            for (const p of P.slice(0, 2)) {
                const now = ok(await p.api('POST', '/api/knowledge/read', { token: t, body: { category: 'experiences', path: pathName } }));
                assert.equal(now.version, before.version + 1, `round ${round}: the version moved by exactly one (via ${p.name})`);
                assert.match(now.content, new RegExp(`round ${round} writer ${winner.k}\\b`));
            }
        }
        const id = ok(await c.node[1].api('POST', '/api/knowledge/read', { token: t, body: { category: 'experiences', path: pathName } })).id;
        const revs = ok(await c.node[0].api('GET', `/api/knowledge/${id}/revisions?limit=1`, { token: t }));
        assert.equal(revs.total, 1 + ROUNDS, 'one revision per round');
        console.log(`# one winner: ${ROUNDS} rounds x ${N} writers, ${ROUNDS} winners, conflicts by key ${JSON.stringify([...codes])}`);
    });
});

// B runs one worker thread, so its one cache is the one every read of B hits:
// a stale answer would show.
describe('two nodes: caches and tokens', { skip: SKIP }, () => {
    let c;
    before(async () => {
        c = await startNodes({ nodes: 2, nodeEnv: [{}, { KNOWHUB_THREADS: '1' }] });
    });
    after(async () => {
        await c?.stop();
    });

    const ROUNDS = 500;

    // Read via B until X-Cache: hit (B's cache is warm: a repeat answers
    // from it, the same text), write via A, read via B: the write shows every
    // round, and that read is never a hit. The warming may take more than one
    // repeat while something else moves the generation (a write elsewhere).
    async function staleRounds(read, write, fresh) {
        let stale = 0;
        let repeats = 0;
        let hitAfterWrite = 0;
        const t0 = Date.now();
        for (let round = 0; round < ROUNDS; round++) {
            const r1 = await read();
            assert.equal(r1.status, 200, r1.text);
            let warm = false;
            for (let k = 0; k < 20 && !warm; k++) {
                const r2 = await read();
                repeats++;
                assert.equal(r2.status, 200, r2.text);
                assert.equal(r2.text, r1.text, 'a repeat answers the same');
                warm = r2.headers['x-cache'] === 'hit';
            }
            assert.ok(warm, `round ${round}: B's cache never answered a repeat`);
            await write(round);
            const r3 = await read();
            assert.equal(nodeOf(r3), 'node-b');
            if (r3.headers['x-cache'] === 'hit') hitAfterWrite++;
            if (!fresh(r3, round)) {
                stale++;
                console.log(`# stale in round ${round}: ${r3.headers['x-cache']} ${r3.text.slice(0, 300)}`);
            }
        }
        return { stale, repeats, hitAfterWrite, ms: Date.now() - t0 };
    }

    const report = (what, res) =>
        console.log(`# stale by ${what}: ${res.stale} of ${ROUNDS} rounds; ${res.repeats} repeat reads to warm ${ROUNDS} times; ${res.hitAfterWrite} cache hits after a write; ${res.ms} ms`);

    test('no stale cache: a GET by id on B after a write on A, 500 rounds', async () => {
        const t = c.token('cache', 'agent', 'cache-bot');
        const [a, b] = c.node;
        const pathName = 'twonode/cached.md';
        const id = ok(await a.api('POST', '/api/knowledge/write', { token: t, body: { category: 'experiences', path: pathName, content: 'round none' } })).id;
        let version = ok(await a.api('GET', `/api/knowledge/${id}`, { token: t })).version;
        const res = await staleRounds(
            () => b.api('GET', `/api/knowledge/${id}`, { token: t }),
            async (round) => {
                const w = ok(await a.api('POST', '/api/knowledge/write', { token: t, body: { category: 'experiences', path: pathName, content: `round r${round}x`, expected_version: version } }));
                version = w.version;
            },
            (r, round) => r.json?.data?.version === version && r.json.data.content.includes(`round r${round}x`),
        );
        report('id', res);
        assert.equal(res.stale, 0);
        assert.equal(res.hitAfterWrite, 0);
    });

    test('no stale cache: a search on B after a write on A, 500 rounds', async () => {
        const t = c.token('cache-search', 'agent', 'cache-search-bot');
        const [a, b] = c.node;
        const pathName = 'twonode/searched.md';
        ok(await a.api('POST', '/api/knowledge/write', { token: t, body: { category: 'experiences', path: pathName, content: 'zebracorn method, marker mnonex' } }));
        const res = await staleRounds(
            () => b.api('GET', '/api/knowledge/search?q=zebracorn&top_k=5', { token: t }),
            async (round) => ok(await a.api('POST', '/api/knowledge/write', { token: t, body: { category: 'experiences', path: pathName, content: `zebracorn method, marker m${round}x` } })),
            (r, round) => r.json?.data?.results?.length === 1 && r.json.data.results[0].content.includes(`marker m${round}x`),
        );
        report('search', res);
        assert.equal(res.stale, 0);
        assert.equal(res.hitAfterWrite, 0);
    });

    // The cache generation is the sum of the rows statement triggers raise
    // (fcgi/store/pg_sql.c). A statement trigger fires for a statement that
    // changes no row too, so each node's idle job poll (S_JOB_CLAIM, an UPDATE
    // of jobs every 200 ms that finds no job) moves it: ~10 times a second
    // with two idle nodes, and every cached answer of every node is dropped.
    test('an idle cluster keeps its cache: nothing moves the generation while nobody writes', async () => {
        const gen = () => Number(sql(c, 'SELECT sum(n) AS g FROM generation')[0].g);
        const t = c.token('idle', 'reader', 'idle-reader');
        ok(await c.node[1].api('GET', '/api/knowledge', { token: t }));
        const g0 = gen();
        await sleep(2000);
        const g1 = gen();
        let hits = 0;
        for (let i = 0; i < 50; i++) {
            const r = await c.node[1].api('GET', '/api/knowledge', { token: t });
            if (r.headers['x-cache'] === 'hit') hits++;
            await sleep(20);
        }
        console.log(`# idle: the generation moved by ${g1 - g0} in 2 s; ${hits} of 50 reads 20 ms apart were hits`);
        assert.equal(g1 - g0, 0, 'the generation moved while nobody wrote');
        assert.equal(hits, 50);
    });

    // A node keeps a verified token in memory for at most the bound
    // (KNOWHUB_TOKEN_CACHE_MS, 1 s; docs/performance.md "Round trips per
    // request"): revoked through node A, A refuses it on the very next
    // request, B within the bound; revoked by the CLI (another process), both
    // within the bound. SLACK: what a shared machine's scheduling adds.
    const BOUND = 1000;
    const SLACK = 300;
    // ms from now until n refuses tok (polled every 20 ms), or Infinity
    async function refusedAfter(n, tok, limit) {
        const t0 = Date.now();
        while (Date.now() - t0 < limit) {
            const r = await n.api('GET', '/api/knowledge', { token: tok });
            if (r.status === 401) return Date.now() - t0;
            assert.equal(r.status, 200, r.text);
            await sleep(20);
        }
        return Infinity;
    }
    async function usedOnBoth(tok) {
        for (const n of [...c.node, ...c.node]) {
            assert.equal(ok(await n.api('GET', '/api/auth/me', { token: tok })).role, 'agent');
            ok(await n.api('GET', '/api/knowledge', { token: tok }));
        }
    }

    test('revocation: a token revoked on node A is refused by A at once and by B within the bound', async () => {
        const [a, b] = c.node;
        const admin = c.token('revoke', 'admin', 'revoker'); // a space's admin revokes its tokens
        const took = [];
        for (let i = 0; i < 4; i++) {
            const tok = c.token('revoke', 'agent', `revoke-${i}`);
            await usedOnBoth(tok); // kept in memory by both
            const id = tok.split('_')[1];
            ok(await a.api('DELETE', `/api/tokens/${id}`, { token: admin }));
            const r = await a.api('GET', '/api/knowledge', { token: tok });
            assert.equal(r.status, 401, `round ${i}: A after its own revoke: ${r.status}`);
            const ms = await refusedAfter(b, tok, BOUND + SLACK + 2000);
            took.push(ms);
            assert.ok(ms <= BOUND + SLACK, `round ${i}: B refused it after ${ms} ms`);
            assert.equal((await b.api('GET', '/api/auth/me', { token: tok })).status, 401);
            assert.equal((await a.api('GET', '/api/auth/me', { token: tok })).status, 401);
        }
        console.log(`# a revoke on A refused by B after ${took.join(', ')} ms (bound ${BOUND} ms)`);
    });

    test('revocation: a token revoked by the CLI is refused by both nodes within the bound', async () => {
        for (let i = 0; i < 2; i++) {
            const tok = c.token('revoke', 'agent', `revoke-cli-${i}`);
            await usedOnBoth(tok);
            c.revoke(tok);
            for (const n of c.node) {
                const ms = await refusedAfter(n, tok, BOUND + SLACK + 2000);
                assert.ok(ms <= BOUND + SLACK, `round ${i}: ${n.name} refused it after ${ms} ms`);
            }
        }
    });

    test('a login made on A works on B; its logout on A is refused by B on the very next request', async () => {
        const [a, b] = c.node;
        const tok = c.token('revoke', 'editor', 'login-person');
        for (let i = 0; i < 10; i++) {
            const r = await a.api('POST', '/api/auth/login', { body: { token: tok } });
            const d = ok(r);
            assert.equal(nodeOf(r), 'node-a');
            const cookie = (r.headers['set-cookie'] || []).map((x) => x.split(';')[0]).find((x) => x.startsWith('kh_session='));
            assert.ok(cookie, JSON.stringify(r.headers['set-cookie']));
            const me = await b.api('GET', '/api/auth/me', { headers: { Cookie: cookie } });
            assert.equal(ok(me).role, 'editor', 'a login made on A works on B');
            assert.equal(nodeOf(me), 'node-b');
            ok(await b.api('GET', '/api/knowledge', { headers: { Cookie: cookie } }));
            ok(await b.api('GET', '/api/knowledge', { headers: { Cookie: cookie } }));
            const out = await a.api('POST', '/api/auth/logout', { headers: { Cookie: cookie, 'X-CSRF-Token': d.csrf_token } });
            assert.equal(out.status, 200, out.text);
            const after = await b.api('GET', '/api/knowledge', { headers: { Cookie: cookie } });
            assert.equal(after.status, 401, `round ${i}: B after the logout on A: ${after.status} ${after.text.slice(0, 200)}`);
            assert.equal((await a.api('GET', '/api/auth/me', { headers: { Cookie: cookie } })).status, 401);
        }
        // The token itself still works (a logout ends the login only).
        ok(await b.api('GET', '/api/knowledge', { token: tok }));
    });
});

// Slim merges with a slow fake LLM (1 s a group) under a 3 s lease. B is
// stopped while the job is posted, so A claims it; B starts again (and
// leaves A's live job alone), A merges a group or more and is killed (-9):
// B takes the job over once A's lease ran out, plans again from what the
// database holds and finishes; each group is merged exactly once.
const LEASE = 3;
const GROUPS = [
    ['Load a very large CSV file with pandas by reading it in chunks', 'Use read_csv with chunksize and concatenate the chunks.'],
    ['Plot a monthly revenue trend line chart with matplotlib', 'Resample by month, plot as a line, label the axes.'],
    ['Join two sales tables on the customer id and check the row counts', 'Merge on customer_id, then compare counts before and after.'],
    ['Deduplicate customer records by normalized email address', 'Lower-case and strip the emails, then drop duplicates on them.'],
    ['Compute a rolling seven day average of daily active users', 'Sort by date, then rolling(7).mean() on the daily counts.'],
];

describe('two nodes: a slim job taken over after kill -9', { skip: SKIP }, () => {
    let c, llm;
    before(async () => {
        llm = await startFakeLlm();
        llm.mode('slim', 'slow', { delayMs: 1000 });
        c = await startNodes({ nodes: 2, env: { ...llmEnv(llm), KNOWHUB_JOB_LEASE: String(LEASE) } });
    });
    after(async () => {
        await c?.stop();
        await llm?.stop();
    });

    test('kill -9 of node A during its slim job: node B takes it over after the lease and finishes it, each group merged once', async () => {
        const [a, b] = c.node;
        const t = c.token('slim2', 'agent', 'slim-bot');
        for (const [scenario, content] of GROUPS)
            for (let i = 0; i < 2; i++) ok(await c.front.api('POST', '/api/knowledge', { token: t, body: { scenario: scenario + (i ? ' indeed' : ''), content } }));
        const plan = ok(await c.front.api('POST', '/api/knowledge/slim', { token: t, body: { dry_run: true } }));
        const G = plan.groups.length;
        assert.equal(G, GROUPS.length, JSON.stringify(plan.groups.map((x) => x.members?.length)));

        b.stopKnowhub(); // so that A claims the job
        const job = ok(await a.api('POST', '/api/knowledge/slim', { token: t, body: {} }));
        const row = () => sql(c, `SELECT status, node, progress, total FROM jobs WHERE id = '${job.id}'`)[0];
        await waitFor(() => row().status === 'running' && row().node === 'node-a', 10000, 'node A running the job');
        b.start();
        await sleep(1200);
        assert.equal(row().node, 'node-a', 'a starting node left the live job alone');
        await waitFor(() => row().progress >= 1, 10000, 'node A merging a group');
        const atKill = sql(c, `SELECT progress, total, lease_until FROM jobs WHERE id = '${job.id}'`)[0];
        assert.ok(atKill.progress < G, `the job still had groups to merge: ${JSON.stringify(atKill)}`);

        const killedAt = Date.now();
        a.kill('SIGKILL');
        await waitFor(() => !a.alive(), 5000, 'node A gone');
        await waitFor(() => row().node === 'node-b', (LEASE + 8) * 1000, 'node B taking the job over');
        const tookOverMs = Date.now() - killedAt;
        // lease_until: UTC, as text or a timestamp; how long after it ran out B took the job.
        const leaseEnd = Date.parse(String(atKill.lease_until).replace(' ', 'T').replace(/(\.\d{3})\d*/, '$1').replace(/(Z|[+-]\d\d(:?\d\d)?)?$/, (m) => m || 'Z'));
        const afterLeaseMs = Date.now() - leaseEnd;
        assert.ok(afterLeaseMs >= -50, `B took the job ${-afterLeaseMs} ms before A's lease (${atKill.lease_until}) ran out`);
        assert.ok(tookOverMs >= LEASE * 1000 - 1200, `not before the lease ran out (${tookOverMs} ms)`);
        await waitFor(() => row().status === 'done', 30000, 'the job done by node B');
        const doneMs = Date.now() - killedAt;

        // The job, through B and through the front (A is dead: nginx uses B).
        for (const api of [(...x) => b.api(...x), (...x) => c.front.api(...x)]) {
            const r = await api('GET', `/api/jobs/${job.id}`, { token: t });
            assert.equal(nodeOf(r), 'node-b');
            const j = ok(r);
            assert.equal(j.status, 'done', JSON.stringify(j));
            assert.deepEqual(j.result.failed_groups, []);
        }
        assert.equal(row().node, 'node-b');

        // Each group merged once: one active survivor per group, one member merged into it.
        const rows = sql(c, `SELECT id, status, merged_into FROM knowledge WHERE space = 'slim2'`);
        const active = rows.filter((r) => r.status === 'active');
        const merged = rows.filter((r) => r.status === 'merged');
        assert.equal(active.length, G, JSON.stringify(rows));
        assert.equal(merged.length, G, JSON.stringify(rows));
        for (const m of merged) assert.ok(active.some((x) => x.id === m.merged_into), JSON.stringify(m));
        const merges = sql(c, `SELECT knowledge_id, count(*) AS n FROM knowledge_revisions WHERE space = 'slim2' AND reason = 'merge' GROUP BY knowledge_id`);
        assert.equal(merges.length, 2 * G, JSON.stringify(merges));
        assert.ok(merges.every((m) => Number(m.n) === 1), `no group merged twice: ${JSON.stringify(merges)}`);
        // The LLM: one call a group, plus at most the one A had in flight when it died.
        const fake = llm.calls.filter((x) => x.purpose === 'slim').length;
        const ledger = sql(c, `SELECT outcome, count(*) AS n FROM llm_calls WHERE space = 'slim2' AND purpose = 'slim' GROUP BY outcome`);
        const ledgerOk = Number(ledger.find((l) => l.outcome === 'ok')?.n || 0);
        assert.ok(fake >= G && fake <= G + 1, `fake LLM slim calls: ${fake}`);
        assert.ok(ledgerOk >= G && ledgerOk <= G + 1, `ledger: ${JSON.stringify(ledger)}`);
        console.log(`# takeover: ${G} groups, A killed at progress ${atKill.progress}/${atKill.total}; B took over after ${tookOverMs} ms (lease ${LEASE} s; ${afterLeaseMs} ms after A's lease ran out), done ${doneMs} ms after the kill; LLM calls ${fake} (ledger ${JSON.stringify(ledger)}); merge revisions ${merges.length}, each once`);
    });
});

// The test owns its cluster: scripts/pgcluster.sh in a temporary directory,
// stopped -m immediate (every backend killed, no checkpoint) under write
// load and started again a second later.
const PGCLUSTER = path.join(ROOT, 'scripts/pgcluster.sh');
// synchronous_commit on: a commit is answered once its WAL is written, so
// an immediate stop keeps it (off, the test cluster's default, loses the
// last few hundred milliseconds of answered commits: not knowhub's doing).
const pgcluster = (...args) => {
    const r = spawnSync('bash', [PGCLUSTER, ...args], { encoding: 'utf8', timeout: 120000, env: { ...process.env, PGCLUSTER_OPTS: '-c synchronous_commit=on' } });
    assert.equal(r.status, 0, `pgcluster.sh ${args.join(' ')}: ${r.stderr}`);
};

describe('two nodes: PostgreSQL crashed under write load', { skip: SKIP }, () => {
    let c, dir;
    before(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'knowhub-pgcrash-'));
        pgcluster('start', dir);
        c = await startNodes({ nodes: 2, pgSock: path.join(dir, 'sock') });
    });
    after(async () => {
        try {
            await c?.stop();
        } finally {
            if (dir) spawnSync('bash', [PGCLUSTER, 'stop', dir], { timeout: 60000 });
        }
    });

    test('every write answered 200 survives; the others are 503 retry; both nodes recover by themselves; knowhub check is clean', async () => {
        const t = c.token('crash', 'agent', 'crash-bot');
        const P = ports(c);
        const VIA = [0, 0, 1, 1, 2, 2];
        const TIMEOUT = 10000;
        const results = [];
        let stop = false;
        let seq = 0;
        const clients = VIA.map(async (via, k) => {
            while (!stop) {
                const n = seq++;
                const at = Date.now();
                try {
                    const r = await P[via].api('POST', '/api/knowledge', {
                        token: t,
                        timeout: TIMEOUT,
                        body: { scenario: `Crash write ${n} of client ${k}`, content: `Written through ${P[via].name} while the database may be down.` },
                    });
                    results.push({ n, via, at, ms: Date.now() - at, status: r.status, node: nodeOf(r), id: r.json?.data?.id, r });
                    if (r.status !== 200) await sleep(50);
                } catch (e) {
                    results.push({ n, via, at, ms: Date.now() - at, status: 0, error: e.message });
                    await sleep(50);
                }
            }
        });
        await sleep(1500);
        const crashAt = Date.now();
        pgcluster('crash', dir);
        await sleep(1000);
        const resumeAt = Date.now();
        pgcluster('resume', dir);
        const upAt = Date.now();
        // Both nodes answer again, neither restarted: a write through each node's own port.
        const pids = c.node.map((n) => n.pid());
        const recovered = await Promise.all(
            c.node.map(async (n) => {
                for (;;) {
                    const r = await n.api('POST', '/api/knowledge', { token: t, timeout: TIMEOUT, body: { scenario: `Probe after the restart on ${n.name}`, content: 'probe' } });
                    if (r.status === 200) return { ms: Date.now() - upAt, id: r.json.data.id, node: nodeOf(r) };
                    if (Date.now() - upAt > 15000) throw new Error(`${n.name} not answering 15 s after the restart: ${r.status} ${r.text.slice(0, 200)}`);
                    await sleep(50);
                }
            }),
        );
        await sleep(1000);
        stop = true;
        await Promise.all(clients);
        assert.deepEqual(c.node.map((n) => n.pid()), pids, 'neither node was restarted');
        assert.ok(c.node.every((n) => n.alive()));

        const good = results.filter((x) => x.status === 200);
        const bad = results.filter((x) => x.status !== 200);
        const hung = bad.filter((x) => x.status === 0);
        assert.deepEqual(hung.map((x) => x.error), [], 'no request failed or hung past the client timeout');
        for (const x of bad) {
            const e = err(x.r, 'SERVICE_UNAVAILABLE', 503);
            assert.equal(e.retry, true, x.r.text);
        }
        const during = bad.filter((x) => x.at >= crashAt - 100 && x.at <= upAt + 15000);
        assert.ok(bad.length > 0 && during.length === bad.length, `the outage was seen (503s: ${bad.length}), only around it`);
        assert.ok(good.some((x) => x.at > upAt), 'writes succeed after the restart');
        for (const x of good) assert.ok(x.id, x.r.text);

        // Every write answered 200 is there, through both nodes.
        const ids = [...good.map((x) => x.id), ...recovered.map((x) => x.id)];
        const missing = [];
        const atOf = new Map(good.map((x) => [x.id, `answered ${x.at + x.ms - crashAt} ms after the crash`]));
        await pool(ids.length, 8, async (i) => {
            for (const n of c.node) {
                const r = await n.api('GET', `/api/knowledge/${ids[i]}`, { token: t });
                if (r.status !== 200 || r.json?.status !== 'success') missing.push(`${ids[i]} (${atOf.get(ids[i])}) via ${n.name}: ${r.status} ${r.text.slice(0, 120)}`);
            }
        });
        assert.deepEqual(missing, [], 'every write answered 200 is present');
        const stored = Number(sql(c, `SELECT count(*) AS n FROM knowledge WHERE space = 'crash'`)[0].n);
        assert.ok(stored >= ids.length, `${stored} stored, ${ids.length} answered 200`);

        // The job threads are back too: slim jobs (no LLM here: merged as they
        // are) posted through the front run to the end on whichever node claims them.
        const jobNodes = [];
        for (let k = 0; k < 4; k++) {
            const tj = c.token(`crashjob${k}`, 'agent', 'crash-job-bot');
            for (let i = 0; i < 2; i++) ok(await c.front.api('POST', '/api/knowledge', { token: tj, body: { scenario: `Load a very large CSV file with pandas by reading it in chunks${i ? ' indeed' : ''}`, content: 'Use read_csv with chunksize.' } }));
            const job = ok(await c.front.api('POST', '/api/knowledge/slim', { token: tj, body: {} }));
            await waitFor(async () => ok(await c.front.api('GET', `/api/jobs/${job.id}`, { token: tj })).status === 'done', 15000, `slim job ${k} done after the restart`);
            jobNodes.push(sql(c, `SELECT node FROM jobs WHERE id = '${job.id}'`)[0].node);
        }

        const chk = spawnSync(BIN, ['check'], { env: { ...process.env, ...c.cliEnv() }, encoding: 'utf8', timeout: 60000 });
        assertNoBugs(chk.stderr, 'knowhub check');
        assert.equal(chk.status, 0, `knowhub check: ${chk.stdout}\n${chk.stderr}`);
        assert.match(chk.stdout, /^ok$/m);

        const byVia = (v) => results.filter((x) => x.via === v);
        const maxMs = Math.max(...results.map((x) => x.ms));
        console.log(
            `# crash: ${results.length} writes (${P.map((p, v) => `${p.name} ${byVia(v).filter((x) => x.status === 200).length}/${byVia(v).length}`).join(', ')}), ` +
                `${good.length} answered 200, ${bad.length} answered 503 retry, ${stored} rows stored; down ${resumeAt - crashAt} ms, resume took ${upAt - resumeAt} ms; ` +
                `recovered after the restart: ${recovered.map((x) => `${x.node} ${x.ms} ms`).join(', ')}; slowest answer ${maxMs} ms; ` +
                `4 slim jobs after it done by ${jobNodes.join(' ')}`,
        );
    });
});
