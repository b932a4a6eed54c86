// GET /metrics through nginx: every line of the exposition is valid Prometheus
// text format 0.0.4 (checked by a small parser here, and by promtool when it
// is installed); the counters move with the requests made (route pattern and
// status, latency histograms, answer cache, LLM calls through the fake LLM);
// the access rule (loopback, else the operator's KNOWHUB_METRICS_TOKEN, never
// a space's token: the figures cover every space); a scrape of a busy server
// stays fast; the space labels stay bounded. Also the JSON-lines access and
// audit logs: every line parses and has its fields, the request id is the
// response's X-Request-Id, the token never appears, rotation at the size limit.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { onPostgres, startStack } from './lib/stack.mjs';
import { startFakeLlm } from './lib/fakellm.mjs';
import { ok } from './lib/expect.mjs';
import { waitJob } from './lib/llmtest.mjs';

const NAME_RE = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_RE = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const VALUE_RE = /^(?:[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|[+-]Inf|NaN)$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/** Parse one sample line's labels `{a="b",...}` starting at i; returns [labels, next index]. */
function parseLabels(line, i) {
    const labels = {};
    assert.equal(line[i], '{');
    i++;
    while (line[i] !== '}') {
        const eq = line.indexOf('=', i);
        assert.ok(eq > i, `label without '=': ${line}`);
        const name = line.slice(i, eq);
        assert.match(name, LABEL_RE, `bad label name in: ${line}`);
        assert.ok(!(name in labels), `label ${name} twice: ${line}`);
        assert.equal(line[eq + 1], '"', `label value not quoted: ${line}`);
        let j = eq + 2;
        let value = '';
        for (;;) {
            assert.ok(j < line.length, `unterminated label value: ${line}`);
            const c = line[j];
            if (c === '\\') {
                const e = line[j + 1];
                assert.ok(e === '\\' || e === '"' || e === 'n', `bad escape \\${e} in: ${line}`);
                value += e === 'n' ? '\n' : e;
                j += 2;
            } else if (c === '"') {
                j++;
                break;
            } else {
                value += c;
                j++;
            }
        }
        labels[name] = value;
        if (line[j] === ',') j++;
        else assert.equal(line[j], '}', `expected , or } in: ${line}`);
        i = j;
    }
    return [labels, i + 1];
}

/** The family a sample belongs to, given the TYPEs seen. */
function familyOf(name, types) {
    if (types.has(name)) return name;
    for (const suffix of ['_bucket', '_sum', '_count'])
        if (name.endsWith(suffix) && types.get(name.slice(0, -suffix.length)) === 'histogram') return name.slice(0, -suffix.length);
    return null;
}

/**
 * Parse and validate a whole exposition: names, labels, escaping, a TYPE
 * before the samples of its family and each family in one block, counters
 * ending in _total, no duplicate series, histograms with ascending le,
 * monotonic cumulative buckets, +Inf equal to _count and a _sum.
 * Returns {samples: [{name, labels, value}], types: Map}.
 */
export function parseExposition(text) {
    assert.ok(text.endsWith('\n'), 'the exposition ends with a newline');
    const types = new Map();
    const helps = new Set();
    const samples = [];
    const seen = new Set();
    const closed = new Set(); // families whose block has ended
    let current = null;
    for (const line of text.slice(0, -1).split('\n')) {
        assert.ok(line.length > 0, 'no empty lines');
        if (line.startsWith('#')) {
            const m = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
            if (!m) continue; // a plain comment
            const [, kind, name, rest] = m;
            assert.match(name, NAME_RE, line);
            if (kind === 'HELP') {
                assert.ok(!helps.has(name), `HELP twice for ${name}`);
                helps.add(name);
                assert.ok(!/\\[^\\n]/.test(rest.replace(/\\\\/g, '')), `bad escape in HELP: ${line}`);
            } else {
                assert.ok(TYPES.has(rest), `unknown type: ${line}`);
                assert.ok(!types.has(name), `TYPE twice for ${name}`);
                assert.ok(!samples.some((s) => familyOf(s.name, new Map([[name, rest]])) === name), `TYPE after samples of ${name}`);
                if (rest === 'counter') assert.ok(name.endsWith('_total'), `counter ${name} does not end in _total`);
                types.set(name, rest);
                if (current && current !== name) closed.add(current);
                current = name;
            }
            continue;
        }
        const nameEnd = line.search(/[{ ]/);
        const name = line.slice(0, nameEnd);
        assert.match(name, NAME_RE, `bad metric name: ${line}`);
        let labels = {};
        let i = nameEnd;
        if (line[i] === '{') [labels, i] = parseLabels(line, i);
        assert.equal(line[i], ' ', `no space before the value: ${line}`);
        const parts = line.slice(i + 1).split(' ');
        assert.ok(parts.length === 1 || (parts.length === 2 && /^-?\d+$/.test(parts[1])), `bad value/timestamp: ${line}`);
        assert.match(parts[0], VALUE_RE, `bad value: ${line}`);
        const family = familyOf(name, types);
        assert.ok(family, `sample before its TYPE: ${line}`);
        assert.ok(!closed.has(family), `family ${family} is not one block: ${line}`);
        if (current !== family) {
            if (current) closed.add(current);
            current = family;
        }
        const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
        assert.ok(!seen.has(key), `duplicate series: ${line}`);
        seen.add(key);
        samples.push({ name, labels, value: Number(parts[0].replace('Inf', 'Infinity')) });
    }
    // Histograms: group by the labels without le.
    for (const [family, type] of types) {
        if (type !== 'histogram') continue;
        const groups = new Map();
        const keyOf = (labels) => JSON.stringify(Object.entries(labels).filter(([k]) => k !== 'le').sort());
        for (const s of samples) {
            if (!s.name.startsWith(family)) continue;
            const g = groups.get(keyOf(s.labels)) || { buckets: [], sum: null, count: null };
            if (s.name === `${family}_bucket`) g.buckets.push([s.labels.le, s.value]);
            else if (s.name === `${family}_sum`) g.sum = s.value;
            else if (s.name === `${family}_count`) g.count = s.value;
            groups.set(keyOf(s.labels), g);
        }
        for (const [k, g] of groups) {
            const what = `${family}${k}`;
            assert.ok(g.buckets.length > 0 && g.sum !== null && g.count !== null, `${what}: buckets, _sum and _count`);
            const les = g.buckets.map(([le]) => (le === '+Inf' ? Infinity : Number(le)));
            assert.ok(les.every((v) => !Number.isNaN(v)), `${what}: le values`);
            for (let i = 1; i < les.length; i++) assert.ok(les[i] > les[i - 1], `${what}: le ascending`);
            for (let i = 1; i < g.buckets.length; i++) assert.ok(g.buckets[i][1] >= g.buckets[i - 1][1], `${what}: buckets cumulative`);
            assert.equal(les.at(-1), Infinity, `${what}: ends with +Inf`);
            assert.equal(g.buckets.at(-1)[1], g.count, `${what}: +Inf == _count`);
            assert.ok(g.sum >= 0, `${what}: _sum`);
        }
    }
    return { samples, types };
}

/** The value of one series (0 when absent): labels must match exactly those given (a subset match). */
function value(parsed, name, labels = {}) {
    const hits = parsed.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
    return hits.reduce((a, s) => a + s.value, 0);
}

let s, llm, sl, entryId;
const OPERATOR = 'metrics-operator-secret-0123456789';
const scrape = async (st = s, opts = {}) => {
    const r = await st.api('GET', '/metrics', opts);
    assert.equal(r.status, 200, r.text.slice(0, 300));
    assert.match(r.headers['content-type'], /^text\/plain; version=0\.0\.4/);
    return { r, parsed: parseExposition(r.text) };
};

before(async () => {
    s = await startStack({ KNOWHUB_THREADS: '4', KNOWHUB_METRICS_TOKEN: OPERATOR });
    entryId = ok(await s.api('POST', '/api/knowledge', { token: s.admin, body: { scenario: 'metrics scenario about csv files', content: 'Use read_csv.' } })).id;
});
after(async () => {
    await s?.stop();
    await sl?.stop();
    await llm?.stop();
});

describe('the exposition', () => {
    test('every line is valid text format 0.0.4, with the documented families', async () => {
        const { r, parsed } = await scrape();
        for (const f of [
            'knowhub_build_info',
            'process_start_time_seconds',
            'process_resident_memory_bytes',
            'process_open_fds',
            'knowhub_http_requests_total',
            'knowhub_http_request_duration_seconds',
            'knowhub_cache_hits_total',
            'knowhub_cache_misses_total',
            'knowhub_cache_bytes',
            'knowhub_streams_open',
            'knowhub_streams_opened_total',
            'knowhub_store_busy_events_total',
            'knowhub_llm_calls_total',
            'knowhub_llm_call_duration_seconds',
            'knowhub_space_entries',
            'knowhub_space_traces',
            'knowhub_jobs',
            'knowhub_job_duration_seconds',
            'knowhub_responses_undelivered_total',
            'knowhub_log_lines_lost_total',
        ])
            assert.ok(parsed.types.has(f), `family ${f} missing`);
        const build = parsed.samples.find((x) => x.name === 'knowhub_build_info');
        assert.equal(build.value, 1);
        assert.match(build.labels.version, /^\d+\.\d+\.\d+$/);
        assert.match(build.labels.sqlite, /^3\.\d+/);
        assert.ok(value(parsed, 'process_resident_memory_bytes') > 1e6);
        assert.ok(value(parsed, 'process_open_fds') > 3);
        const start = value(parsed, 'process_start_time_seconds');
        assert.ok(start > Date.now() / 1000 - 600 && start <= Date.now() / 1000 + 1, `start time ${start}`);
        assert.equal(value(parsed, 'knowhub_space_entries', { space: 'default' }), 1);
        // The parser itself refuses what it must.
        assert.throws(() => parseExposition('x_total 1\n'), /before its TYPE/);
        assert.throws(() => parseExposition('# TYPE a counter\na 1\n'), /_total/);
        assert.throws(() => parseExposition('# TYPE a gauge\na{b="\\x"} 1\n'), /bad escape/);
        assert.throws(() => parseExposition('# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n'), /cumulative/);
        assert.throws(() => parseExposition('# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 1\n'), /\+Inf == _count/);
        assert.throws(() => parseExposition('# TYPE a gauge\n# TYPE b gauge\nb 1\na 1\n'), /one block|TYPE after/);
        // promtool, when installed (Debian: apt-get install prometheus).
        const promtool = spawnSync('promtool', ['check', 'metrics'], { input: r.text, encoding: 'utf8' });
        if (promtool.error) console.log('# promtool not installed: its check is skipped');
        else assert.equal(promtool.status, 0, `promtool check metrics:\n${promtool.stdout}${promtool.stderr}`);
    });
});

describe('counters move with requests', () => {
    test('5 GETs of an entry: its route pattern +5 at status 200, the histogram +5; a 401 on its own status', async () => {
        const before0 = (await scrape()).parsed;
        const labels = { method: 'GET', route: '/api/knowledge/{id}' };
        for (let i = 0; i < 5; i++) ok(await s.api('GET', `/api/knowledge/${entryId}`, { token: s.admin }));
        const r401 = await s.api('GET', `/api/knowledge/${entryId}`, { token: 'kh_0000000000000000_nope' });
        assert.equal(r401.status, 401);
        const after0 = (await scrape()).parsed;
        assert.equal(value(after0, 'knowhub_http_requests_total', { ...labels, status: '200' }) - value(before0, 'knowhub_http_requests_total', { ...labels, status: '200' }), 5);
        assert.equal(value(after0, 'knowhub_http_requests_total', { ...labels, status: '401' }) - value(before0, 'knowhub_http_requests_total', { ...labels, status: '401' }), 1);
        assert.equal(value(after0, 'knowhub_http_request_duration_seconds_count', labels) - value(before0, 'knowhub_http_request_duration_seconds_count', labels), 6);
        // never the raw path: no label holds the entry's id
        assert.ok(!after0.samples.some((x) => Object.values(x.labels).some((v) => v.includes(entryId))), 'an id became a label');
        // the scrape before this one is counted on /metrics itself
        assert.ok(value(after0, 'knowhub_http_requests_total', { route: '/metrics', status: '200' }) >= 2);
    });

    test('unknown API paths share one label value', async () => {
        const before0 = (await scrape()).parsed;
        for (const p of ['/api/nope-1', '/api/nope-2/x', '/api/knowledge/a/b/c/d'])
            assert.equal((await s.api('GET', p, { token: s.admin })).status, 404);
        const after0 = (await scrape()).parsed;
        const d = value(after0, 'knowhub_http_requests_total', { route: 'unmatched', status: '404' }) - value(before0, 'knowhub_http_requests_total', { route: 'unmatched', status: '404' });
        assert.equal(d, 3);
        assert.ok(!after0.samples.some((x) => /nope/.test(JSON.stringify(x.labels))));
    });

    test('the answer cache: hits, misses and bytes', async () => {
        const before0 = (await scrape()).parsed;
        const threads = value(before0, 'knowhub_worker_threads') - 1;
        const n = 12;
        for (let i = 0; i < n; i++) {
            const r = await s.api('GET', '/api/knowledge/search?q=csv', { token: s.admin });
            ok(r);
        }
        const after0 = (await scrape()).parsed;
        const hits = value(after0, 'knowhub_cache_hits_total') - value(before0, 'knowhub_cache_hits_total');
        const misses = value(after0, 'knowhub_cache_misses_total') - value(before0, 'knowhub_cache_misses_total');
        assert.equal(hits + misses, n);
        // each thread misses the question once at most, then answers from its cache
        assert.ok(misses >= 1 && misses <= threads, `misses ${misses} (threads ${threads})`);
        assert.ok(hits >= n - threads, `hits ${hits}`);
        assert.ok(value(after0, 'knowhub_cache_bytes') > 0);
    });
});

describe('LLM calls (fake LLM)', () => {
    before(async () => {
        llm = await startFakeLlm();
        sl = await startStack({ KNOWHUB_LLM_BASE_URL: llm.url, KNOWHUB_LLM_API_KEY: 'sk-test' });
    });

    test('an evolve moves calls{purpose,outcome=ok}, tokens and latency; a 401 is LLM_AUTH_FAILED', async () => {
        const id = ok(await sl.api('POST', '/api/knowledge', { token: sl.admin, body: { scenario: 'evolve me please', content: 'Old text.' } })).id;
        const b = (await scrape(sl)).parsed;
        ok(await sl.api('PUT', `/api/knowledge/${id}`, { token: sl.admin, body: { evolve_feedback: 'Mention the encoding.' } }));
        llm.mode('evolve', '401');
        const failed = await sl.api('PUT', `/api/knowledge/${id}`, { token: sl.admin, body: { evolve_feedback: 'Again.' } });
        assert.equal(failed.json?.error?.code, 'LLM_AUTH_FAILED', failed.text.slice(0, 300));
        llm.mode('evolve', 'ok');
        const a = (await scrape(sl)).parsed;
        const d = (name, labels) => value(a, name, labels) - value(b, name, labels);
        assert.equal(d('knowhub_llm_calls_total', { purpose: 'evolve', outcome: 'ok' }), 1);
        assert.equal(d('knowhub_llm_calls_total', { purpose: 'evolve', outcome: 'LLM_AUTH_FAILED' }), 1);
        assert.equal(d('knowhub_llm_prompt_tokens_total', { purpose: 'evolve' }), 100);
        assert.equal(d('knowhub_llm_completion_tokens_total', { purpose: 'evolve' }), 20);
        assert.equal(d('knowhub_llm_call_duration_seconds_count', { purpose: 'evolve' }), 2);
        assert.ok(!a.samples.some((x) => x.name.startsWith('knowhub_embedding')), 'no embedding series before embeddings exist');
    });
});

describe('jobs', () => {
    test('a slim job: the queue gauge by kind and status, and its run time', async () => {
        const b = (await scrape(sl)).parsed;
        assert.equal(value(b, 'knowhub_job_duration_seconds_count', { kind: 'slim' }), 0);
        const started = ok(await sl.api('POST', '/api/knowledge/slim', { token: sl.admin, body: {} }));
        assert.equal((await waitJob(sl, sl.admin, started.id)).status, 'done');
        // the job thread counts the run time just after it marked the job done
        let a;
        for (const until = Date.now() + 5000; ; await new Promise((r) => setTimeout(r, 20))) {
            a = (await scrape(sl)).parsed;
            if (value(a, 'knowhub_job_duration_seconds_count', { kind: 'slim' }) === 1) break;
            assert.ok(Date.now() < until, 'the job duration was never counted');
        }
        assert.equal(value(a, 'knowhub_jobs', { kind: 'slim', status: 'done' }), 1);
        assert.equal(value(a, 'knowhub_jobs', { kind: 'slim', status: 'queued' }), 0);
    });
});

describe('who may scrape', () => {
    // nginx passes the client's address as REMOTE_ADDR and the proxy key; a
    // request that came through another proxy (X-Forwarded-For) is not a
    // loopback one. Straight on the socket without the key: proxy_key.test.mjs.
    const via = { 'X-Forwarded-For': '203.0.113.7' };
    test("through a proxy: 401 without a token or with a wrong one, 403 with any space's token (an admin's too), 200 with KNOWHUB_METRICS_TOKEN", async () => {
        const none = await s.api('GET', '/metrics', { headers: via });
        assert.equal(none.status, 401);
        assert.equal(none.json.error.code, 'UNAUTHORIZED');
        assert.match(none.headers['www-authenticate'] || '', /Bearer/);
        // a tenant's admin reads no other space's names and counts
        for (const [space, role] of [['default', 'reader'], ['default', 'agent'], ['default', 'editor'], ['tenant-b', 'admin']]) {
            const r = await s.api('GET', '/metrics', { headers: via, token: s.token(space, role) });
            assert.equal(r.status, 403, `${space}/${role}: ${r.text.slice(0, 200)}`);
            assert.equal(r.json.error.code, 'FORBIDDEN');
            assert.ok(!r.text.includes('knowhub_http_requests_total'));
        }
        assert.equal((await s.api('GET', '/metrics', { headers: via, token: s.admin })).status, 403);
        for (const wrong of [OPERATOR.slice(0, -1), `${OPERATOR}x`, OPERATOR.toUpperCase()])
            assert.equal((await s.api('GET', '/metrics', { headers: via, token: wrong })).status, 401, wrong);
        const forwarded = await s.api('GET', '/metrics', { headers: { Forwarded: 'for=203.0.113.7' } });
        assert.equal(forwarded.status, 401);
        const operator = await scrape(s, { headers: via, token: OPERATOR });
        assert.ok(operator.parsed.types.has('knowhub_http_requests_total'));
    });

    test('a KNOWHUB_METRICS_TOKEN under 16 characters is ignored with a warning: loopback only', async () => {
        const st = await startStack({ KNOWHUB_METRICS_TOKEN: 'short-secret' });
        try {
            assert.equal((await st.api('GET', '/metrics', { headers: via, token: 'short-secret' })).status, 401);
            assert.equal((await st.api('GET', '/metrics')).status, 200);
            assert.match(st.log(), /KNOWHUB_METRICS_TOKEN is shorter than 16 characters: ignored/);
        } finally {
            await st.stop();
        }
    });
});

describe('a busy server', () => {
    test('the median of 20 scrapes under load is under 5 ms (10 ms on PostgreSQL)', async () => {
        let stop = false;
        let loadRequests = 0;
        const loop = async () => {
            while (!stop) {
                await s.api('GET', `/api/knowledge/${entryId}`, { token: s.admin });
                loadRequests++;
            }
        };
        const loops = Array.from({ length: 4 }, loop);
        await new Promise((r) => setTimeout(r, 200));
        const times = [];
        for (let i = 0; i < 20; i++) {
            const t0 = process.hrtime.bigint();
            const r = await s.api('GET', '/metrics');
            times.push(Number(process.hrtime.bigint() - t0) / 1e6);
            assert.equal(r.status, 200);
        }
        stop = true;
        await Promise.all(loops);
        times.sort((a, b) => a - b);
        const median = (times[9] + times[10]) / 2;
        console.log(`# scrape under load: median ${median.toFixed(2)} ms, max ${times.at(-1).toFixed(2)} ms over 20 scrapes (${loadRequests} load requests meanwhile)`);
        assert.ok(loadRequests > 20, 'the load loop ran');
        // A sanitizer build runs several times slower: its figure is printed, not held to 5 ms.
        // On PostgreSQL the scrape's counts are round trips to a server that shares the 2
        // cores with the load (each of its reads is 7 round trips): held to 10 ms.
        const sanitized = /libasan|libubsan/.test(fs.readFileSync(`/proc/${s.knowhubPid()}/maps`, 'utf8'));
        const budget = onPostgres ? 10 : 5;
        if (!sanitized) assert.ok(median < budget, `median scrape ${median} ms (budget ${budget} ms)`);
    });
});

describe('bounded labels', () => {
    test('150 spaces give at most 101 space label values, the rest summed in _other', async () => {
        const spaces = Array.from({ length: 150 }, (_, i) => `mspace-${String(i).padStart(3, '0')}`);
        for (const [i, sp] of spaces.entries()) {
            const tok = s.token(sp, 'agent');
            // entries 1..3 so the largest spaces are known
            for (let k = 0; k < (i % 3) + 1; k++)
                ok(await s.api('POST', '/api/knowledge', { token: tok, body: { scenario: `space scenario ${k}`, content: 'c' } }));
            if (i % 10 === 0) ok(await s.api('POST', '/api/traces', { token: tok, body: { trace_id: `t-${i}`, task: 'x' } }));
        }
        const { parsed } = await scrape();
        for (const family of ['knowhub_space_entries', 'knowhub_space_traces']) {
            const rows = parsed.samples.filter((x) => x.name === family);
            const names = new Set(rows.map((x) => x.labels.space));
            assert.ok(names.size <= 101, `${family}: ${names.size} label values`);
            assert.ok(names.has('_other'), `${family}: no _other`);
        }
        const rows = parsed.samples.filter((x) => x.name === 'knowhub_space_entries');
        const total = rows.reduce((a, x) => a + x.value, 0);
        assert.equal(total, 1 + spaces.reduce((a, _, i) => a + (i % 3) + 1, 0), 'every entry counted once');
        assert.equal(parsed.samples.filter((x) => x.name === 'knowhub_space_traces').reduce((a, x) => a + x.value, 0), 15);
        // the named spaces are the largest: every one holds at least as many as any folded one
        const named = rows.filter((x) => x.labels.space !== '_other');
        assert.ok(named.every((x) => x.value >= 2), 'the 100 named spaces are the largest');
    });
});

describe('JSON-lines logs', () => {
    const lines = (file) =>
        fs
            .readFileSync(file, 'utf8')
            .split('\n')
            .filter((l) => l)
            .map((l) => JSON.parse(l)); // every line parses, or the test fails here

    test('one access line per request with its fields; audit lines for writes; never a token', async () => {
        const r = await s.api('GET', `/api/knowledge/${entryId}`, { token: s.admin });
        ok(r);
        const createReq = await s.api('POST', '/api/knowledge', { token: s.admin, body: { scenario: 'audited scenario', content: 'c' } });
        const created = ok(createReq);
        const deleted = await s.api('DELETE', `/api/knowledge/${created.id}`, { token: s.admin });
        ok(deleted);
        const access = lines(path.join(s.dir, 'logs/access.jsonl'));
        for (const l of access) {
            assert.deepEqual(Object.keys(l).sort(), ['actor', 'bytes', 'duration_ms', 'method', 'request_id', 'route', 'space', 'status', 'time', 'token_id', 'type'].sort());
            assert.equal(l.type, 'access');
            assert.match(l.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
            assert.ok(Number.isInteger(l.status) && Number.isInteger(l.bytes) && typeof l.duration_ms === 'number');
        }
        const mine = access.find((l) => l.request_id === r.headers['x-request-id']);
        assert.ok(mine, 'the response X-Request-Id is in the access log');
        assert.equal(mine.route, '/api/knowledge/{id}');
        assert.equal(mine.method, 'GET');
        assert.equal(mine.status, 200);
        assert.equal(mine.space, 'default');
        assert.equal(mine.bytes, Buffer.byteLength(r.text));
        assert.match(mine.actor, /^token:[0-9a-f]{16}/);
        assert.equal(mine.token_id, mine.actor.split(':')[1]);
        const audit = lines(path.join(s.dir, 'logs/audit.jsonl'));
        const create = audit.find((l) => l.action === 'knowledge.create' && l.target === created.id);
        assert.ok(create, 'the create is audited');
        assert.equal(create.request_id, createReq.headers['x-request-id']);
        assert.match(create.ts, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
        assert.equal(create.space, 'default');
        assert.equal(create.actor, mine.actor);
        assert.ok(audit.find((l) => l.action === 'knowledge.delete' && l.target === created.id && l.request_id === deleted.headers['x-request-id']));
        const secret = s.admin.split('_').slice(2).join('_'); // the secret may hold '_' itself
        for (const f of ['access.jsonl', 'audit.jsonl']) assert.ok(!fs.readFileSync(path.join(s.dir, 'logs', f), 'utf8').includes(secret), `the token is in ${f}`);
    });

    test('rotation at KNOWHUB_LOG_MAX_BYTES keeps KNOWHUB_LOG_KEEP files', async () => {
        const st = await startStack({ KNOWHUB_LOG_MAX_BYTES: '4096', KNOWHUB_LOG_KEEP: '2' });
        try {
            for (let i = 0; i < 80; i++) ok(await st.api('GET', '/api/health'));
            const dir = path.join(st.dir, 'logs');
            // A request's access line is written after its answer went out: the last one's
            // rotation (two renames) may still be under way when its answer is here.
            const list = () => fs.readdirSync(dir).filter((f) => f.startsWith('access.jsonl')).sort();
            for (let i = 0; i < 50 && list().length !== 3; i++) await new Promise((r) => setTimeout(r, 20));
            const files = list();
            assert.deepEqual(files, ['access.jsonl', 'access.jsonl.1', 'access.jsonl.2']);
            for (const f of files) {
                const size = fs.statSync(path.join(dir, f)).size;
                // Past the limit by the lines other threads wrote while one rotated (a few).
                assert.ok(size < 4096 + 2048, `${f}: ${size} bytes`);
                for (const l of lines(path.join(dir, f))) assert.equal(l.route, '/api/health');
            }
            assert.ok(fs.statSync(path.join(dir, 'access.jsonl.1')).size >= 4096);
        } finally {
            await st.stop();
        }
    });
});
