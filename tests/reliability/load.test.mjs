// Load: 16 concurrent clients for LOAD_SECONDS (default 60) through nginx,
// mixing entry-view and file-view searches, creates, file writes, PUT
// feedback (distinct case ids), batch feedback, traces with injections and
// evaluations. Every request is recorded; afterwards: zero 5xx (and no error
// at all), every acknowledged entry and file present with its last
// acknowledged content, every counter (helpful, harmful, irrelevant, unused,
// neutral) of every entry exactly the number of acknowledged cases and
// verdicts, every acknowledged case id in the entry's history, and
// `knowhub check` clean. Throughput and p50/p99 per kind are printed and
// written to tests/out/reliability-load.json.
import assert from 'node:assert/strict';
import os from 'node:os';
import { after, before, test } from 'node:test';
import { startStack } from '../http/lib/stack.mjs';
import { ok } from '../http/lib/expect.mjs';
import { assertCheckClean, percentile, writeOut } from './lib.mjs';

const LOAD_SECONDS = Number(process.env.LOAD_SECONDS || 60);
const CLIENTS = 16;
const SEED_ENTRIES = 200;
const TARGETS = 24;
const WORDS = ('revenue cost margin forecast pandas chart pivot region quarter growth inventory turnover ' +
    'churn cohort funnel retention latency throughput cache index query join window median outlier ' +
    'seasonal trend budget invoice ledger payroll shipment warehouse supplier customer segment ' +
    'campaign conversion dashboard export import schema migration backup restore').split(' ');

let s, token;
const METRICS_TOKEN = 'load-metrics-operator-0123456789';
const targets = [];
/** Expected counters per entry id: {helpful, harmful, irrelevant, unused, neutral} and case ids. */
const expected = new Map();
const created = new Map(); // id -> scenario marker
const written = new Map(); // path -> last acknowledged marker
const traces = new Set();
const stats = new Map(); // kind -> {n, lat: [], s5xx, errors, samples}
let totalRequests = 0;

function rng(seed) {
    let a = seed >>> 0;
    return () => {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

function exp(id) {
    if (!expected.has(id)) expected.set(id, { helpful: 0, harmful: 0, irrelevant: 0, unused: 0, neutral: 0, cases: { helpful: new Set(), harmful: new Set() } });
    return expected.get(id);
}

/** One timed request of a kind; returns the response (data on success) or null. */
async function call(kind, method, path, body) {
    if (!stats.has(kind)) stats.set(kind, { n: 0, lat: [], s5xx: 0, errors: 0, samples: [] });
    const st = stats.get(kind);
    const t0 = performance.now();
    let r;
    try {
        r = await s.api(method, path, { token, body });
    } catch (e) {
        r = { status: 0, text: String(e), json: null };
    }
    st.lat.push(performance.now() - t0);
    st.n++;
    totalRequests++;
    if (r.status >= 500 || r.status === 0) st.s5xx++;
    if (r.status !== 200 || r.json?.status !== 'success') {
        st.errors++;
        if (st.samples.length < 5) st.samples.push(`${r.status} ${method} ${path}: ${r.text.slice(0, 200)}`);
        return null;
    }
    return r.json.data;
}

const words = (rand, n) => Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ');

async function client(c, deadline) {
    const rand = rng(1000 + c);
    const pick = (a) => a[Math.floor(rand() * a.length)];
    let n = 0;
    let myPaths = [];
    while (performance.now() < deadline && n < 10_000_000) {
        n++;
        const x = rand();
        if (x < 0.27) {
            await call('search_entry', 'GET', `/api/knowledge/search?q=${encodeURIComponent(words(rand, 2))}&top_k=5&min_score=1`);
        } else if (x < 0.45) {
            await call('search_file', 'POST', '/api/knowledge/search', { query: words(rand, 2), max_results: 10 });
        } else if (x < 0.52) {
            const marker = `load-c${c}-n${n}`;
            const d = await call('create', 'POST', '/api/knowledge', { scenario: `${words(rand, 4)} ${marker}`, content: `${words(rand, 30)} ${marker}`, tags_type: [pick(['tool', 'plan', 'strategy'])], agent_id: `load-${c}` });
            if (d) created.set(d.id, marker);
        } else if (x < 0.58) {
            // A new file, or a rewrite of one of this client's own (so the last acknowledged content is known).
            const path = myPaths.length && rand() < 0.4 ? pick(myPaths) : `load-${c}/doc-${n}.md`;
            const marker = `write-c${c}-n${n}`;
            const d = await call('write', 'POST', '/api/knowledge/write', { category: 'experiences', path, content: `# ${words(rand, 3)}\n\n${words(rand, 40)} ${marker}\n` });
            if (d) {
                written.set(path, marker);
                if (!myPaths.includes(path)) myPaths.push(path);
                if (myPaths.length > 50) myPaths = myPaths.slice(-50);
            }
        } else if (x < 0.72) {
            const id = pick(targets);
            const kind = rand() < 0.7 ? 'helpful' : 'harmful';
            const caseId = `put-c${c}-n${n}`;
            const d = await call('feedback_put', 'PUT', `/api/knowledge/${id}`, { [`add_${kind}_case`]: { case_id: caseId, scenario: 'load', result: 'r' } });
            if (d) {
                assert.equal(d.applied[`add_${kind}_case`], 'added');
                exp(id)[kind]++;
                exp(id).cases[kind].add(caseId);
            }
        } else if (x < 0.80) {
            const items = Array.from({ length: 5 }, (_, i) => ({ knowledge_id: pick(targets), is_effective: rand() < 0.6, case_id: `batch-c${c}-n${n}-${i}` }));
            const d = await call('feedback_batch', 'POST', '/api/knowledge/batch_update', { feedback_list: items });
            if (d) {
                for (const res of d.results) {
                    const item = items[res.index];
                    assert.equal(res.status, 'success', JSON.stringify(res));
                    assert.equal(res.added, true);
                    const kind = item.is_effective ? 'helpful' : 'harmful';
                    assert.equal(res.counted, kind);
                    exp(item.knowledge_id)[kind]++;
                    exp(item.knowledge_id).cases[kind].add(item.case_id);
                }
            }
        } else {
            // A trace: create it, inject with a search and by hand, then one verdict per injected entry.
            const trace = `trace-c${c}-n${n}`;
            if (!(await call('trace', 'POST', '/api/traces', { trace_id: trace, task: `load task ${n}` }))) continue;
            traces.add(trace);
            const found = await call('inject_search', 'GET', `/api/knowledge/search?q=${encodeURIComponent(words(rand, 2))}&top_k=3&min_score=1&trace_id=${trace}&goal_id=g1&sequence=${n}`);
            const injected = new Set(found ? found.results.map((e) => e.id) : []);
            const target = pick(targets);
            if (await call('inject', 'POST', `/api/traces/${trace}/knowledge_log`, { knowledge_id: target, goal_id: 'g2', injected_at_sequence: n + 1 })) injected.add(target);
            const statuses = ['helpful', 'harmful', 'irrelevant', 'unused', 'neutral'];
            const evaluations = [...injected].map((id) => ({ knowledge_id: id, eval_status: pick(statuses), reason: 'load' }));
            if (!evaluations.length) continue;
            const d = await call('evaluate', 'POST', `/api/traces/${trace}/evaluations`, { trigger: pick(['goal_completion', 'compression', 'task_completion']), evaluations });
            if (d) {
                assert.equal(d.unmatched.length, 0, JSON.stringify(d.unmatched));
                assert.equal(d.updated.length, evaluations.length);
                for (const u of d.updated) {
                    // A fresh trace and one verdict per entry: every verdict counts.
                    assert.equal(u.counted, true, JSON.stringify(u));
                    exp(u.knowledge_id)[u.eval_status]++;
                    if (u.eval_status === 'helpful' || u.eval_status === 'harmful') exp(u.knowledge_id).cases[u.eval_status].add(`trace:${trace}`);
                }
            }
        }
    }
}

before(async () => {
    // 16 clients share one token: its write rate (KNOWHUB_WRITE_RATE, tests/http/quotas) is not what this measures
    s = await startStack({ KNOWHUB_WRITE_RATE: '0', KNOWHUB_METRICS_TOKEN: METRICS_TOKEN });
    token = s.token('load', 'agent', 'load test');
    const rand = rng(7);
    for (let i = 0; i < SEED_ENTRIES; i++) {
        const d = ok(await s.api('POST', '/api/knowledge', { token, body: { scenario: `${words(rand, 5)} seed ${i}`, content: words(rand, 60), tags_type: ['tool'], score: 1 + (i % 5) } }));
        created.set(d.id, `seed ${i}`);
        if (i < TARGETS) targets.push(d.id);
    }
});
after(async () => {
    await s?.stop();
});

let figures;

test(`16 concurrent clients for ${LOAD_SECONDS} s through nginx: zero 5xx, no errors`, async () => {
    const loadBefore = os.loadavg()[0];
    const t0 = performance.now();
    const deadline = t0 + LOAD_SECONDS * 1000;
    await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c, deadline)));
    const elapsed = (performance.now() - t0) / 1000;
    const kinds = {};
    for (const [kind, st] of [...stats].sort()) {
        kinds[kind] = {
            requests: st.n,
            per_second: Math.round(st.n / elapsed),
            p50_ms: Number(percentile(st.lat, 50).toFixed(2)),
            p99_ms: Number(percentile(st.lat, 99).toFixed(2)),
            max_ms: Number(Math.max(...st.lat).toFixed(2)),
            errors: st.errors,
            status_5xx: st.s5xx,
        };
    }
    const all = [...stats.values()].flatMap((st) => st.lat);
    figures = {
        clients: CLIENTS,
        seconds: Number(elapsed.toFixed(1)),
        requests: totalRequests,
        requests_per_second: Math.round(totalRequests / elapsed),
        p50_ms: Number(percentile(all, 50).toFixed(2)),
        p99_ms: Number(percentile(all, 99).toFixed(2)),
        status_5xx: [...stats.values()].reduce((n, st) => n + st.s5xx, 0),
        errors: [...stats.values()].reduce((n, st) => n + st.errors, 0),
        kinds,
        // Other work on the machine shows here: the 1-minute load average before and after.
        machine: { cpus: os.cpus().length, node: process.version, loadavg_before: Number(loadBefore.toFixed(2)), loadavg_after: Number(os.loadavg()[0].toFixed(2)) },
    };
    console.log(`# load: ${figures.requests} requests in ${figures.seconds} s = ${figures.requests_per_second} req/s, p50 ${figures.p50_ms} ms, p99 ${figures.p99_ms} ms, 5xx ${figures.status_5xx} (load average ${figures.machine.loadavg_before} -> ${figures.machine.loadavg_after} on ${figures.machine.cpus} CPUs)`);
    for (const [k, v] of Object.entries(kinds)) console.log(`#   ${k.padEnd(15)} ${String(v.requests).padStart(7)} req ${String(v.per_second).padStart(5)}/s  p50 ${v.p50_ms} ms  p99 ${v.p99_ms} ms`);
    // Waits for the write lock and SQLite's busy retries: what a 503 db_busy came from.
    const m = await s.api('GET', '/metrics', { token: METRICS_TOKEN });
    figures.busy_events = Object.fromEntries([...m.text.matchAll(/^knowhub_store_busy_events_total\{event="(\w+)"\} (\d+)$/gm)].map((x) => [x[1], Number(x[2])]));
    console.log(`#   busy events ${JSON.stringify(figures.busy_events)}`);
    const samples = [...stats.values()].flatMap((st) => st.samples).concat(`busy events ${JSON.stringify(figures.busy_events)}`);
    assert.equal(figures.status_5xx, 0, samples.join('\n'));
    assert.equal(figures.errors, 0, samples.join('\n'));
    for (const k of ['search_entry', 'search_file', 'create', 'write', 'feedback_put', 'feedback_batch', 'trace', 'inject', 'evaluate'])
        assert.ok(kinds[k]?.requests > 0, `no ${k} requests`);
});

test('every acknowledged entry and file is there with its last acknowledged content; counters exact', async () => {
    const r = await s.api('GET', '/api/knowledge/export', { token, timeout: 120000 });
    assert.equal(r.status, 200);
    const entries = r.text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const byId = new Map(entries.map((e) => [e.id, e]));
    const byPath = new Map(entries.map((e) => [e.path, e]));
    let missing = 0;
    for (const [id, marker] of created) if (!byId.get(id)?.scenario.includes(marker)) missing++;
    assert.equal(missing, 0, `${missing} of ${created.size} acknowledged creates missing`);
    for (const [path, marker] of written) assert.ok(byPath.get(path)?.content.includes(marker), `${path}: not the last acknowledged write ${marker}`);
    assert.equal(entries.length, created.size + written.size, 'entries that nobody acknowledged');
    let countersChecked = 0;
    for (const e of entries) {
        const want = expected.get(e.id) || { helpful: 0, harmful: 0, irrelevant: 0, unused: 0, neutral: 0 };
        const got = { helpful: e.eval.helpful, harmful: e.eval.harmful, irrelevant: e.metrics.irrelevant, unused: e.metrics.unused, neutral: e.metrics.neutral };
        assert.deepEqual(got, { helpful: want.helpful, harmful: want.harmful, irrelevant: want.irrelevant, unused: want.unused, neutral: want.neutral }, `counters of ${e.id}`);
        assert.equal(e.metrics.helpful, e.eval.helpful);
        countersChecked++;
    }
    figures.verified = { entries: entries.length, creates: created.size - SEED_ENTRIES, files: written.size, counters_checked: countersChecked };
    const listed = ok(await s.api('GET', '/api/traces?limit=1', { token }));
    assert.equal(listed.total, traces.size, 'acknowledged traces');
    figures.verified.traces = traces.size;
});

test('every acknowledged case id is in its entry history, and no other', async () => {
    let cases = 0;
    for (const [id, want] of expected) {
        for (const kind of ['helpful', 'harmful']) {
            const got = new Set();
            for (let offset = 0; offset < 1_000_000; offset += 1000) {
                const page = ok(await s.api('GET', `/api/knowledge/${id}/cases?kind=${kind}&limit=1000&offset=${offset}`, { token }));
                for (const c of page.items) got.add(c.case_id);
                if (offset + 1000 >= page.total) break;
            }
            assert.equal(got.size, want.cases[kind].size, `${id} ${kind} cases`);
            for (const c of want.cases[kind]) assert.ok(got.has(c), `${id}: acknowledged ${kind} case ${c} missing`);
            cases += got.size;
        }
    }
    figures.verified.cases = cases;
    figures.verified.feedback = [...expected.values()].reduce((n, e) => n + e.helpful + e.harmful + e.irrelevant + e.unused + e.neutral, 0);
    console.log(`# load verified: ${JSON.stringify(figures.verified)}`);
});

test('knowhub check is clean after the load', () => {
    assertCheckClean(s, 'after the load');
    writeOut('reliability-load.json', figures);
});
