// streams.mjs: what open live streams cost the requests beside them. One
// node on SQLite through nginx (answer cache off): GET by id and uncached
// search in a closed loop with no stream open, then with N streams open
// (half MCP sessions subscribed to knowhub://rules on GET /mcp, half panels
// on GET /api/events); in both a rule is edited every second (with the
// streams, every stream is told of each edit). Rounds interleaved, the
// order of the two phases alternating; the streams are opened before each
// "with" phase and closed after it (the "without" phase has none open). A
// measurement, not a test: it prints figures and never fails on time (exit
// 1 when a request failed or a stream was not told).
//
//   node tests/bench/streams.mjs [--streams 500] [--clients 8] [--seconds 5] [--rounds 3] [--json FILE]
//
// Printed per operation: the medians over the rounds of requests/s, p50 and
// p99 (ms) without and with the streams, the ratio of those medians, and
// the median of each round's own ratio with/without with its range (the
// issue's bar: at least 0.95); and knowhub's RSS and threads with the
// streams open. docs/performance.md, "Live streams", has a run's figures.
import fs from 'node:fs';
import http from 'node:http';
import { startStack } from '../http/lib/stack.mjs';
import { isError, load, send } from './lib/load.mjs';

const args = process.argv.slice(2);
const opt = { streams: 500, clients: 8, seconds: 5, rounds: 3, json: '' };
for (let i = 0; i < args.length; i += 2) {
    const k = args[i].replace(/^--/, '');
    if (!(k in opt)) throw new Error(`unknown option ${args[i]}`);
    opt[k] = k === 'json' ? args[i + 1] : Number(args[i + 1]);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const WORDS = ['revenue', 'quarter', 'inventory', 'margin', 'region', 'forecast', '库存', '周转', '毛利', '区域'];

const s = await startStack({ KNOWHUB_CACHE_SLOTS: '0', KNOWHUB_STREAMS_PER_TOKEN: String(opt.streams + 10), KNOWHUB_STREAMS_MAX: String(opt.streams + 10) });
let failed = 0;
try {
    const ids = [];
    for (let i = 0; i < 300; i++) {
        const w = (k) => WORDS[(i * 7 + k * 3) % WORDS.length];
        const r = await send(s.port, s.admin, 'POST', '/api/knowledge', { category: 'experiences', scenario: `${w(1)} ${w(2)} note ${i}`, content: `${w(3)} ${w(4)} ${w(5)} details ${i}` });
        if (isError(r)) throw new Error(`seed: ${r.text.slice(0, 200)}`);
        ids.push(JSON.parse(r.text).data.id);
    }
    const rule = JSON.parse((await send(s.port, s.admin, 'POST', '/api/knowledge', { category: 'rules', path: 'bench.md', scenario: 'bench rule', content: 'v0' })).text).data;
    let seq = 0;
    const ops = {
        get: () => ['GET', `/api/knowledge/${ids[seq++ % ids.length]}`],
        search: () => ['GET', `/api/knowledge/search?mode=lexical&q=${encodeURIComponent(`${WORDS[seq % WORDS.length]} ${WORDS[(seq++ * 3) % WORDS.length]}`)}`],
    };

    // The streams of a "with" phase (held, not read by the loop), closed after it.
    const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
    const streams = [];
    const open = (p, headers) =>
        new Promise((resolve, reject) => {
            const req = http.request({ host: '127.0.0.1', port: s.port, path: p, agent, headers: { Accept: 'text/event-stream', Authorization: `Bearer ${s.admin}`, ...headers } }, (res) => {
                const st = { req, told: 0 };
                res.setEncoding('utf8');
                res.on('data', (d) => {
                    st.told += (d.match(/knowhub:\/\/rules"|event: changed/g) || []).length;
                });
                res.on('error', () => {});
                if (res.statusCode !== 200) reject(new Error(`stream ${p}: ${res.statusCode}`));
                else resolve(st);
            });
            req.on('error', reject);
            req.end();
        });
    async function closeAll() {
        for (const st of streams) st.req.destroy();
        // the MCP sessions end too (their subscriptions with them: a token holds at most 1,000)
        for (const st of streams)
            if (st.session)
                await new Promise((resolve) => {
                    const r = http.request({ host: '127.0.0.1', port: s.port, path: '/mcp', method: 'DELETE', headers: { Authorization: `Bearer ${s.admin}`, 'Mcp-Session-Id': st.session } }, (x) => {
                        x.resume();
                        x.on('end', resolve);
                    });
                    r.on('error', resolve);
                    r.end();
                });
        streams.length = 0;
        await sleep(1000); // the stream thread notices the closed connections within its ticks
    }
    async function openAll() {
        for (let i = 0; i < opt.streams; i++) {
            if (i % 2) {
                streams.push(await open('/api/events', {}));
                continue;
            }
            const session = await sessionOf();
            const st = await open('/mcp', { 'Mcp-Session-Id': session });
            st.session = session;
            streams.push(st);
        }
    }
    // A new MCP session (initialize: the id is a response header) subscribed to the rules block.
    function sessionOf() {
        return new Promise((resolve, reject) => {
            const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } });
            const req = http.request({ host: '127.0.0.1', port: s.port, path: '/mcp', method: 'POST', headers: { Authorization: `Bearer ${s.admin}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } }, async (res) => {
                res.resume();
                const session = res.headers['mcp-session-id'];
                const sub = await new Promise((ok) => {
                    const b = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'resources/subscribe', params: { uri: 'knowhub://rules' } });
                    const r2 = http.request({ host: '127.0.0.1', port: s.port, path: '/mcp', method: 'POST', headers: { Authorization: `Bearer ${s.admin}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(b), 'Mcp-Session-Id': session } }, (x) => {
                        let t = '';
                        x.on('data', (d) => (t += d));
                        x.on('end', () => ok(t));
                    });
                    r2.end(b);
                });
                if (!sub.includes('"result":{}')) reject(new Error(`subscribe: ${sub}`));
                else resolve(session);
            });
            req.on('error', reject);
            req.end(body);
        });
    }

    const results = { get: { without: [], with: [] }, search: { without: [], with: [] } };
    let editor = null;
    let edits = 0;
    for (let round = 0; round < opt.rounds; round++) {
        for (const phase of round % 2 ? ['with', 'without'] : ['without', 'with']) {
            if (phase === 'with') await openAll();
            // A rule edited every second in both phases: the same writes; with the streams each is told.
            editor = setInterval(() => {
                edits++;
                send(s.port, s.admin, 'POST', '/api/knowledge/write', { category: 'rules', path: rule.path, content: `v${edits}` });
            }, 1000);
            for (const op of Object.keys(ops)) {
                const r = await load(s.port, s.admin, ops[op], opt.seconds, opt.clients);
                if (r.errors) {
                    failed++;
                    console.error(`${op} ${phase}: ${r.errors} errors, first: ${r.firstError}`);
                }
                results[op][phase].push(r);
            }
            if (editor) clearInterval(editor);
            editor = null;
            if (phase === 'with') {
                await sleep(1500);
                const st = fs.readFileSync(`/proc/${s.knowhubPid()}/status`, 'utf8');
                results.rss_mb = +(Number(/^VmRSS:\s+(\d+)/m.exec(st)[1]) / 1024).toFixed(1);
                results.threads = Number(/^Threads:\s+(\d+)/m.exec(st)[1]);
                results.untold = (results.untold || 0) + streams.filter((x) => x.told === 0).length;
                results.edits = edits;
                await closeAll();
            }
        }
    }
    console.log(`live streams beside the load: ${opt.streams} streams (half GET /mcp subscribed, half GET /api/events), a rule edited every second in both phases; ${opt.clients} clients, ${opt.seconds} s, ${opt.rounds} rounds, cache off`);
    console.log('op       without: req/s   p50   p99 | with: req/s   p50   p99 | ratio | per round: median (min-max)');
    for (const op of Object.keys(ops)) {
        const m = (phase, k) => median(results[op][phase].map((r) => r[k]));
        const ratio = m('with', 'rps') / m('without', 'rps');
        const paired = results[op].with.map((r, i) => r.rps / results[op].without[i].rps);
        results[op].ratio = +ratio.toFixed(3);
        results[op].paired = paired.map((x) => +x.toFixed(3));
        console.log(`${op.padEnd(8)} ${m('without', 'rps').toFixed(0).padStart(13)} ${m('without', 'p50').toFixed(2).padStart(5)} ${m('without', 'p99').toFixed(2).padStart(5)} | ${m('with', 'rps').toFixed(0).padStart(11)} ${m('with', 'p50').toFixed(2).padStart(5)} ${m('with', 'p99').toFixed(2).padStart(5)} | ${ratio.toFixed(3)} | ${median(paired).toFixed(3)} (${Math.min(...paired).toFixed(3)}-${Math.max(...paired).toFixed(3)})`);
    }
    console.log(`with the streams open: knowhub RSS ${results.rss_mb} MB, ${results.threads} threads; ${results.edits} edits, streams never told: ${results.untold}`);
    if (results.untold) failed++;
    if (opt.json) fs.writeFileSync(opt.json, JSON.stringify({ opt, results }, null, 1));
} finally {
    await s.stop();
}
process.exit(failed ? 1 : 0);
