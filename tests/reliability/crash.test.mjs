// Crash safety: a write storm from 8 clients (creates, PUT feedback cases,
// file writes, batch feedback), kill -9 of knowhub (the PID in
// DIR/run/knowhub.pid) in the middle of it, knowhub restarted alone while
// nginx keeps running; then every write acknowledged before the kill is
// present, counters agree with the histories, and `knowhub check` is clean.
// Three times over the same data directory. While knowhub is down nginx
// answers 503 SERVICE_UNAVAILABLE in JSON with retry: true.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startStack } from '../http/lib/stack.mjs';
import { err, ok } from '../http/lib/expect.mjs';
import { assertCheckClean, assertSecurityHeaders, killKnowhub, sleep, startKnowhub, waitFor, writeOut } from './lib.mjs';

const REPEATS = 3;
const CLIENTS = 8;
let s, token;
const targets = [];
const acked = { creates: new Map(), files: new Map(), cases: new Map() }; // cases: case_id -> {id, kind}
const figures = { repeats: [] };

before(async () => {
    // eight writers share one token: its write rate (tests/http/quotas) is not what this test is about
    s = await startStack({ KNOWHUB_WRITE_RATE: '0' });
    token = s.token('crash', 'agent', 'crash test');
    for (let i = 0; i < 8; i++) targets.push(ok(await s.api('POST', '/api/knowledge', { token, body: { scenario: `crash target ${i}`, content: `target body ${i}` } })).id);
});
after(async () => {
    await s?.stop();
});

/** One storm client: writes until told to stop; records what was acknowledged (HTTP 200 success). */
async function stormClient(c, rep, state) {
    for (let n = 0; n < 100000 && !state.stop; n++) {
        const k = n % 4;
        const tag = `r${rep}-c${c}-n${n}`;
        let req;
        if (k === 0) req = ['POST', '/api/knowledge', { scenario: `crash storm ${tag}`, content: `storm content ${tag} `.repeat(20) }];
        else if (k === 1) req = ['PUT', `/api/knowledge/${targets[n % targets.length]}`, { add_helpful_case: { case_id: `put-${tag}`, scenario: 's', result: 'r' } }];
        else if (k === 2) req = ['POST', '/api/knowledge/write', { category: 'experiences', path: `crash-${c}/${tag}.md`, content: `file ${tag}\n` }];
        else req = ['POST', '/api/knowledge/batch_update', { feedback_list: [0, 1, 2].map((i) => ({ knowledge_id: targets[(n + i) % targets.length], is_effective: i !== 1, case_id: `batch-${tag}-${i}` })) }];
        let r;
        try {
            r = await s.api(req[0], req[1], { token, body: req[2], timeout: 10000 });
        } catch {
            state.failed++;
            continue;
        }
        if (r.status !== 200 || r.json?.status !== 'success') {
            state.failed++;
            if (r.status === 503 || r.status === 502) state.unavailable.push(r);
            else state.other.push(`${r.status} ${r.text.slice(0, 200)}`);
            continue;
        }
        state.acked++;
        const d = r.json.data;
        if (k === 0) acked.creates.set(d.id, tag);
        else if (k === 1) acked.cases.set(`put-${tag}`, { id: req[1].split('/').pop(), kind: 'helpful' });
        else if (k === 2) acked.files.set(req[2].path, tag);
        else for (const it of req[2].feedback_list) acked.cases.set(it.case_id, { id: it.knowledge_id, kind: it.is_effective ? 'helpful' : 'harmful' });
    }
}

/** Everything acknowledged so far is in the database; counters match the histories. */
async function verifyAcked() {
    const r = await s.api('GET', '/api/knowledge/export', { token, timeout: 60000 });
    assert.equal(r.status, 200);
    const entries = r.text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const byId = new Map(entries.map((e) => [e.id, e]));
    const byPath = new Map(entries.map((e) => [e.path, e]));
    for (const [id, tag] of acked.creates) assert.ok(byId.get(id)?.content.includes(tag), `acknowledged create ${id} (${tag}) lost`);
    for (const [p, tag] of acked.files) assert.ok(byPath.get(p)?.content.includes(tag), `acknowledged file ${p} lost`);
    const want = new Map();
    for (const [caseId, { id, kind }] of acked.cases) {
        if (!want.has(`${id} ${kind}`)) want.set(`${id} ${kind}`, new Set());
        want.get(`${id} ${kind}`).add(caseId);
    }
    for (const id of targets) {
        for (const kind of ['helpful', 'harmful']) {
            const got = new Set();
            let total = 0;
            for (let offset = 0; offset < 1_000_000; offset += 1000) {
                const page = ok(await s.api('GET', `/api/knowledge/${id}/cases?kind=${kind}&limit=1000&offset=${offset}`, { token }));
                for (const c of page.items) got.add(c.case_id);
                total = page.total;
                if (offset + 1000 >= page.total) break;
            }
            for (const c of want.get(`${id} ${kind}`) || []) assert.ok(got.has(c), `acknowledged ${kind} case ${c} of ${id} lost`);
            // The counter is the history: no half-applied feedback.
            assert.equal(byId.get(id).eval[kind], total, `${id} ${kind} counter ${byId.get(id).eval[kind]} vs ${total} cases`);
        }
    }
    return entries.length;
}

for (let rep = 1; rep <= REPEATS; rep++) {
    test(`crash ${rep}/${REPEATS}: kill -9 mid-storm, restart knowhub alone, every acknowledged write present, check clean`, async () => {
        const state = { stop: false, acked: 0, failed: 0, unavailable: [], other: [] };
        const clients = Array.from({ length: CLIENTS }, (_, c) => stormClient(c, rep, state));
        await waitFor(() => state.acked >= 300, 30000, '300 acknowledged writes');
        await sleep(200 * rep); // a different moment each time
        const ackedBefore = state.acked;
        const pid = await killKnowhub(s, 'SIGKILL');
        const killedAt = performance.now();
        // Clients go on against nginx for a moment: knowhub is gone, nginx answers 503 in JSON.
        await waitFor(() => state.unavailable.length >= 8, 10000, '503s while knowhub is down');
        state.stop = true;
        await Promise.all(clients);
        for (const r of state.unavailable.slice(0, 8)) {
            assert.equal(err(r, 'SERVICE_UNAVAILABLE', 503).retry, true);
            assertSecurityHeaders(r.headers, '503 while knowhub is down');
        }
        assert.deepEqual(state.other, [], 'answers other than success or 503');
        const t0 = performance.now();
        const newPid = await startKnowhub(s);
        const restartMs = performance.now() - t0;
        assert.notEqual(newPid, pid);
        const entries = await verifyAcked();
        assertCheckClean(s, `after crash ${rep}`);
        const one = {
            repeat: rep,
            acked_writes_total: acked.creates.size + acked.files.size + acked.cases.size,
            acked_requests_this_storm: state.acked,
            acked_before_kill: ackedBefore,
            failed_requests: state.failed,
            restart_ms: Math.round(restartMs),
            outage_ms: Math.round(performance.now() - killedAt),
            entries,
            check: 'ok',
        };
        figures.repeats.push(one);
        console.log(`# crash ${rep}: ${JSON.stringify(one)}`);
    });
}

test('the data directory is still usable: a write and a read after the last restart', async () => {
    const d = ok(await s.api('POST', '/api/knowledge', { token, body: { scenario: 'after the crashes', content: 'still writable' } }));
    assert.equal(ok(await s.api('GET', `/api/knowledge/${d.id}`, { token })).content, 'still writable');
    writeOut('reliability-crash.json', figures);
});
