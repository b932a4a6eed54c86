// Live streams under load (docs/agents.md "Live updates"): 500 open on one
// node — 250 MCP sessions subscribed to knowhub://rules on GET /mcp and 250
// panels on GET /api/events — all held by the one stream thread (knowhub's
// thread count does not move), each told of a rule edit; the memory a stream
// costs; clients that leave are noticed and freed (knowhub_streams_open
// falls back); a stop ends every stream with a whole answer. Figures go to
// tests/out/reliability-streams.json.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { startStack } from '../http/lib/stack.mjs';
import { writeOut } from './lib.mjs';

const STREAMS = 500;
const figures = { streams: STREAMS };
let s, pid;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function proc() {
    const st = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(st)[1]);
    return { rss_kb: kb('VmRSS'), threads: Number(/^Threads:\s+(\d+)/m.exec(st)[1]) };
}

async function metric(name) {
    const r = await s.api('GET', '/metrics');
    const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(r.text);
    return m ? Number(m[1]) : NaN;
}

/**
 * Open one stream with Node's http (a socket of its own); resolves once the
 * head and the first comment are in. Its text so far is in stream.text.
 */
function openStream(agent, path, headers) {
    return new Promise((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port: s.port, path, method: 'GET', agent, headers: { Accept: 'text/event-stream', ...headers } }, (res) => {
            const st = { res, req, text: '', ended: false, status: res.statusCode };
            res.setEncoding('utf8');
            res.on('data', (d) => {
                st.text += d;
                if (st.text.includes('\n\n')) resolve(st);
            });
            res.on('end', () => {
                st.ended = true;
                resolve(st);
            });
            res.on('error', () => {
                st.ended = true;
            });
        });
        req.on('error', reject);
        req.end();
    });
}

before(async () => {
    s = await startStack({ KNOWHUB_STREAMS_PER_TOKEN: '1000' });
    pid = s.knowhubPid();
});
after(async () => {
    await s?.stop();
    writeOut('reliability-streams.json', figures);
});

test(`${STREAMS} streams on one node: one thread holds them, each hears a rule edit, leavers are freed, a stop ends them whole`, async () => {
    const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
    const created = await s.api('POST', '/api/knowledge', { token: s.admin, body: { category: 'rules', path: 'load.md', scenario: 'load rule', content: 'one' } });
    assert.equal(created.json.status, 'success', created.text);
    // One MCP session per stream, each subscribed to the rules block.
    const sessions = [];
    for (let i = 0; i < STREAMS / 2; i++) {
        const init = await s.api('POST', '/mcp', { token: s.admin, body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'load', version: '1' } } } });
        const session = init.headers['mcp-session-id'];
        assert.match(session, /^[0-9a-f]{32}$/);
        const sub = await s.api('POST', '/mcp', { token: s.admin, headers: { 'Mcp-Session-Id': session }, body: { jsonrpc: '2.0', id: 2, method: 'resources/subscribe', params: { uri: 'knowhub://rules' } } });
        assert.deepEqual(sub.json.result, {}, sub.text);
        sessions.push(session);
    }
    await sleep(300);
    const before = proc();
    const t0 = Date.now();
    const streams = [];
    for (let i = 0; i < STREAMS; i += 50) {
        const batch = [];
        for (let j = i; j < i + 50; j++) {
            const auth = { Authorization: `Bearer ${s.admin}` };
            batch.push(j % 2 === 0 ? openStream(agent, '/mcp', { ...auth, 'Mcp-Session-Id': sessions[j / 2] }) : openStream(agent, '/api/events', auth));
        }
        streams.push(...(await Promise.all(batch)));
    }
    figures.open_ms = Date.now() - t0;
    for (const st of streams) assert.equal(st.status, 200, st.text.slice(0, 200));
    await sleep(500);
    const held = proc();
    assert.equal(await metric('knowhub_streams_open'), STREAMS);
    // No thread per stream: knowhub has the threads it had before.
    assert.equal(held.threads, before.threads, `threads ${before.threads} -> ${held.threads}`);
    figures.threads = held.threads;
    figures.rss_before_kb = before.rss_kb;
    figures.rss_held_kb = held.rss_kb;
    figures.kb_per_stream = +((held.rss_kb - before.rss_kb) / STREAMS).toFixed(1);
    assert.ok(figures.kb_per_stream < 96, `${figures.kb_per_stream} KiB a stream`);

    // One edit: every stream is told, MCP ones knowhub://rules, panels a "changed".
    for (const st of streams) st.text = '';
    const edit = Date.now();
    const w = await s.api('POST', '/api/knowledge/write', { token: s.admin, body: { category: 'rules', path: 'load.md', content: 'two' } });
    assert.equal(w.json.status, 'success', w.text);
    const told = (st, i) => (i % 2 === 0 ? st.text.includes('"uri":"knowhub://rules"') : st.text.includes('event: changed'));
    while (!streams.every(told) && Date.now() - edit < 5000) await sleep(20);
    figures.all_told_ms = Date.now() - edit;
    const missed = streams.filter((st, i) => !told(st, i)).length;
    assert.equal(missed, 0, `${missed} streams were not told within 5 s`);

    // Half the clients leave: their streams are freed.
    for (const st of streams.slice(0, STREAMS / 2)) st.req.destroy();
    const left = Date.now();
    while ((await metric('knowhub_streams_open')) !== STREAMS / 2 && Date.now() - left < 5000) await sleep(50);
    figures.freed_ms = Date.now() - left;
    assert.equal(await metric('knowhub_streams_open'), STREAMS / 2);

    // A stop ends the rest with a whole answer (the chunked end, no reset).
    await s.stop();
    s = null;
    const stopped = Date.now();
    while (!streams.slice(STREAMS / 2).every((st) => st.ended) && Date.now() - stopped < 5000) await sleep(20);
    assert.ok(streams.slice(STREAMS / 2).every((st) => st.ended), 'every stream ended');
    console.log(`streams: ${STREAMS} open in ${figures.open_ms} ms, ${figures.kb_per_stream} KiB each, ${figures.threads} threads; all told in ${figures.all_told_ms} ms; leavers freed in ${figures.freed_ms} ms`);
});
