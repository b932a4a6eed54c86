// nodes.mjs: KnowHub on SQLite, on PostgreSQL and as two nodes on one
// PostgreSQL, measured in ONE run through nginx. A measurement, not a test:
// it prints figures and never fails on time (exit 1 only when a request
// failed, or a set-up could not start or seed).
//
//   node tests/bench/nodes.mjs [--clients 8] [--seconds 10] [--entries 2000]
//        [--repeat 3] [--setups sqlite,pg,pg2] [--cache-slots 0] [--pg-stats]
//        [--no-analyze] [--json FILE]
//   node tests/bench/nodes.mjs --seconds 3 --repeat 1 --entries 500   a quick run (about a minute)
//
// It starts its own throwaway PostgreSQL cluster (scripts/pgcluster.sh in a
// temporary directory; stopped and removed at the end, also on an error or a
// signal, and by a watchdog if this process is killed outright) and three
// set-ups, all running at once (idle while another is measured):
//   sqlite  one node on SQLite            (tests/http/lib/stack.mjs)
//   pg      one node on PostgreSQL        (stack.mjs with the cluster)
//   pg2     two nodes on one PostgreSQL database behind one nginx, round
//           robin (tests/http/lib/nodes.mjs)
// Each set-up is seeded with N entries (POST /api/knowledge, English and
// Chinese words, tags and types; the same entries everywhere, from a fixed
// seed), then ANALYZE runs on the PostgreSQL databases (not with
// --no-analyze: then the planner keeps the estimates of the empty tables
// until autovacuum's own ANALYZE comes, up to a minute later). Then, with C
// concurrent clients in a closed loop over keep-alive HTTP (Node's http
// module, this process, on the same machine) for T seconds each:
//   get     GET /api/knowledge/{id}, a random seeded id every request
//   search  GET /api/knowledge/search?q=... (entry view, mode=lexical), 1-3
//           words of the seeded vocabulary, English and Chinese
//   create  POST /api/knowledge, a distinct body every request
//   health  GET /api/health without a token (what a load balancer asks)
// knowhub runs with KNOWHUB_CACHE_SLOTS=0 (--cache-slots): no answer cache,
// so every get and search is computed ("uncached"). Rounds are interleaved:
// every round measures get, search and health on each set-up in turn, R rounds;
// then R rounds of create (so every search sees exactly the N seeded
// entries). Printed per set-up and operation: the medians over the rounds of
// requests/s, p50 and p99 latency (ms), the errors of all rounds (non-2xx,
// KnowHub's error envelope "status":"error" under HTTP 200, and socket
// errors; must be 0), and the ratios pg/sqlite and pg2/pg of the medians with
// the median of the per-round ratios beside them (measured seconds apart).
// At the end each set-up's entry count is checked against N + the creates
// that succeeded (on pg2 through each node alone).
// Loopback is exempt from nginx's rate limit (KNOWHUB_RATE_LIMIT_LOOPBACK is
// removed from the environment; KNOWHUB_RATE_LIMIT is raised as well, and
// KNOWHUB_WRITE_RATE=0 lifts the per-token write rate).
// --pg-stats loads pg_stat_statements into the cluster and prints the
// statements with the highest mean time at the end (it costs a little).
// KNOWHUB_BIN selects the binary (default build/knowhub); KNOWHUB_THREADS
// and KNOWHUB_NGINX_WORKERS pass through to every node and nginx.
// Figures and what they mean: docs/performance.md, "PostgreSQL and several nodes".
import fs from 'node:fs';
import { closeAgents, isError, load, send as sendOne } from './lib/load.mjs';
import { entryBody, fmtInt, fmtMs, fmtRatio, gitRev, loadavg, median, psql, query, rng, seedEntries, startCluster, stopCluster } from './lib/pgbench.mjs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

// ---- options ----
const opt = { clients: 8, seconds: 10, entries: 2000, repeat: 3, setups: 'sqlite,pg,pg2', cacheSlots: 0, pgStats: false, analyze: true, json: '' };
function usage(msg) {
    if (msg) console.error(`nodes.mjs: ${msg}`);
    console.error(fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1, 10).map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
    process.exit(2);
}
{
    const a = process.argv.slice(2);
    const num = (v, name, min) => {
        const n = Number(v);
        if (!Number.isInteger(n) || n < min) usage(`${name} must be an integer >= ${min}`);
        return n;
    };
    for (let i = 0; i < a.length; i++) {
        const k = a[i];
        const v = () => (i + 1 < a.length ? a[++i] : usage(`${k} needs a value`));
        if (k === '--clients') opt.clients = num(v(), k, 1);
        else if (k === '--seconds') opt.seconds = num(v(), k, 1);
        else if (k === '--entries') opt.entries = num(v(), k, 1);
        else if (k === '--repeat') opt.repeat = num(v(), k, 1);
        else if (k === '--setups') opt.setups = v();
        else if (k === '--cache-slots') opt.cacheSlots = num(v(), k, 0);
        else if (k === '--pg-stats') opt.pgStats = true;
        else if (k === '--no-analyze') opt.analyze = false;
        else if (k === '--json') opt.json = v();
        else if (k === '-h' || k === '--help') usage();
        else usage(`unknown option ${k}`);
    }
}
const SETUPS = opt.setups.split(',').filter(Boolean);
for (const s of SETUPS) if (!['sqlite', 'pg', 'pg2'].includes(s)) usage(`unknown set-up ${s}`);
const needPg = SETUPS.some((s) => s !== 'sqlite');

// The load must not be rate limited: loopback is exempt unless
// KNOWHUB_RATE_LIMIT_LOOPBACK=1, and the rate itself is raised too.
delete process.env.KNOWHUB_RATE_LIMIT_LOOPBACK;
process.env.KNOWHUB_RATE_LIMIT = '1000000r/s';
process.env.KNOWHUB_RATE_BURST = '100000';
// nor by the per-token write rate (100 items a second): creates measure writing
process.env.KNOWHUB_WRITE_RATE = '0';
// This script makes its own cluster; stack.mjs reads KNOWHUB_TEST_PG when it
// is first imported, so the SQLite set-up imports it before the cluster is set.
delete process.env.KNOWHUB_TEST_PG;
const sqliteLib = await import('../http/lib/stack.mjs?sqlite');

// Registered after stack.mjs's own handlers, so the stacks (and their
// databases) are gone before the cluster stops.
process.on('exit', stopCluster);

// ---- HTTP load (lib/load.mjs) ----
const send = (port, token, method, reqPath, body) => sendOne(port, token, method, reqPath, body, opt.clients);

// ---- set-ups ----
const LABEL = { sqlite: 'one node, SQLite', pg: 'one node, PostgreSQL', pg2: 'two nodes, one PostgreSQL' };
const nodeEnv = { KNOWHUB_CACHE_SLOTS: String(opt.cacheSlots) };

async function startSetup(name, pgLib, nodesLib) {
    if (name === 'sqlite') {
        const s = await sqliteLib.startStack(nodeEnv);
        return { name, port: s.port, token: s.admin, stop: () => s.stopSync(), dbName: null, perNode: [], stack: s };
    }
    if (name === 'pg') {
        const s = await pgLib.startStack(nodeEnv);
        return { name, port: s.port, token: s.admin, stop: () => s.stopSync(), dbName: s.db.name, perNode: [], stack: s };
    }
    const c = await nodesLib.startNodes({ nodes: 2, env: nodeEnv });
    return { name, port: c.front.port, token: c.admin, stop: () => c.stopSync(), dbName: c.db.name, perNode: c.node.map((n) => n.port), cluster: c };
}

/** Seed N entries (the same bodies on every set-up) with C clients; returns their ids. */
async function seed(su) {
    try {
        const { ids, seconds } = await seedEntries(su.port, su.token, opt.entries, opt.clients);
        su.seedSeconds = seconds;
        return ids;
    } catch (e) {
        throw new Error(`${su.name}: ${e.message}`);
    }
}

async function total(port, token) {
    const r = await send(port, token, 'GET', '/api/knowledge?limit=1');
    if (isError(r)) return `error ${r.status} ${r.text.slice(0, 200)}`;
    return JSON.parse(r.text).data.total;
}

const rev = gitRev();

// ---- the run ----
const OPS = ['get', 'search', 'health', 'create'];
const OP_LABEL = { get: 'GET /api/knowledge/{id}', search: 'search (uncached)', health: 'GET /api/health', create: 'POST /api/knowledge' };
const results = {}; // results[setup][op] = [round...]
const setups = [];
let exitCode = 0;
try {
    let pgLib = null;
    let nodesLib = null;
    if (needPg) {
        startCluster({ pgStats: opt.pgStats });
        pgLib = await import('../http/lib/stack.mjs');
        nodesLib = await import('../http/lib/nodes.mjs');
        if (!pgLib.onPostgres) throw new Error('stack.mjs did not see the cluster');
    }
    console.log(`nodes.mjs: rev ${rev}, ${os.cpus().length} cores, clients ${opt.clients}, ${opt.seconds} s per figure, ` +
        `${opt.repeat} round(s), ${opt.entries} entries, KNOWHUB_CACHE_SLOTS=${opt.cacheSlots}; load average ${loadavg()}`);
    for (const name of SETUPS) {
        const su = await startSetup(name, pgLib, nodesLib);
        setups.push(su);
        su.ids = await seed(su);
        if (su.dbName && opt.analyze) psql(su.dbName, 'ANALYZE');
        console.log(`  ${name.padEnd(6)} ${LABEL[name]}: seeded ${su.ids.length} entries in ${su.seedSeconds.toFixed(1)} s (port ${su.port})`);
        results[name] = { get: [], search: [], health: [], create: [] };
    }

    const gens = {
        get: (su, r) => () => ['GET', `/api/knowledge/${su.ids[Math.floor(r() * su.ids.length)]}`],
        search: (su, r) => () => ['GET', `/api/knowledge/search?q=${encodeURIComponent(query(r))}&mode=lexical&top_k=5`],
        health: () => () => ['GET', '/api/health'],
        create: (su, r) => {
            let i = 0;
            return () => ['POST', '/api/knowledge', entryBody(r, `bench ${su.name} ${process.pid} ${Date.now()} ${i++}`)];
        },
    };
    const measure = async (op, round) => {
        for (const su of setups) {
            const res = await load(su.port, op === 'health' ? '' : su.token, gens[op](su, rng(1000 * round + OPS.indexOf(op))), opt.seconds, opt.clients);
            results[su.name][op].push(res);
            console.log(`  round ${round + 1} ${op.padEnd(6)} ${su.name.padEnd(6)} ${fmtInt(res.rps).padStart(7)} req/s  p50 ${fmtMs(res.p50)} ms  p99 ${fmtMs(res.p99)} ms  errors ${res.errors}` +
                (res.firstError ? `  (first: ${res.firstError})` : ''));
        }
    };
    // Reads first (every search sees exactly the seeded entries), then creates.
    for (let round = 0; round < opt.repeat; round++) for (const op of ['get', 'search', 'health']) await measure(op, round);
    for (let round = 0; round < opt.repeat; round++) await measure('create', round);

    // Correctness: every set-up holds the seeded entries plus the creates that succeeded.
    const checks = [];
    for (const su of setups) {
        const want = su.ids.length + results[su.name].create.reduce((a, r) => a + r.ok, 0);
        const ports = [su.port, ...su.perNode];
        for (const [k, port] of ports.entries()) {
            const got = await total(port, su.token);
            const where = k === 0 ? (su.perNode.length ? 'front' : 'node') : `node-${String.fromCharCode(96 + k)} alone`;
            const ok = got === want;
            checks.push({ setup: su.name, where, want, got, ok });
            if (!ok) exitCode = 1;
        }
    }

    // ---- the table ----
    console.log(`\nload average at the end ${loadavg()}\n`);
    console.log(`| set-up | operation | req/s (median of ${opt.repeat}) | p50 ms | p99 ms | errors (all rounds) |`);
    console.log('|---|---|---:|---:|---:|---:|');
    const med = {};
    for (const su of setups) {
        med[su.name] = {};
        for (const op of OPS) {
            const rs = results[su.name][op];
            const m = { rps: median(rs.map((r) => r.rps)), p50: median(rs.map((r) => r.p50)), p99: median(rs.map((r) => r.p99)), errors: rs.reduce((a, r) => a + r.errors, 0) };
            med[su.name][op] = m;
            if (m.errors) exitCode = 1;
            console.log(`| ${LABEL[su.name]} | ${OP_LABEL[op]} | ${fmtInt(m.rps)} | ${fmtMs(m.p50)} | ${fmtMs(m.p99)} | ${m.errors} |`);
        }
    }
    const ratioRows = [['pg', 'sqlite', 'PostgreSQL / SQLite (one node)'], ['pg2', 'pg', 'two nodes / one node (PostgreSQL)']];
    const ratios = [];
    if (ratioRows.some(([a, b]) => med[a] && med[b])) {
        console.log('\n| ratio of req/s | ' + OPS.map((o) => OP_LABEL[o]).join(' | ') + ' |');
        console.log('|---|' + OPS.map(() => '---:').join('|') + '|');
        for (const [a, b, label] of ratioRows) {
            if (!med[a] || !med[b]) continue;
            const cells = OPS.map((op) => {
                const ofMedians = med[a][op].rps / med[b][op].rps;
                const perRound = median(results[a][op].map((r, i) => r.rps / results[b][op][i].rps));
                ratios.push({ ratio: `${a}/${b}`, op, ofMedians, perRound });
                return `${fmtRatio(ofMedians)} (rounds ${fmtRatio(perRound)})`;
            });
            console.log(`| ${label} | ${cells.join(' | ')} |`);
        }
        console.log('(of the medians; in brackets the median of the per-round ratios)');
    }
    console.log('\nentry counts after the run (seeded + successful creates):');
    for (const c of checks) console.log(`  ${c.setup.padEnd(6)} ${c.where.padEnd(14)} ${c.got} (want ${c.want}) ${c.ok ? 'ok' : 'WRONG'}`);

    if (opt.pgStats) {
        console.log('\npg_stat_statements: the statements with the highest mean time (all databases, calls >= 20):');
        const out = psql('postgres', 'SELECT round(mean_exec_time::numeric, 3), calls, round(total_exec_time::numeric, 1), ' +
            "left(regexp_replace(query, '\\s+', ' ', 'g'), 300) FROM pg_stat_statements WHERE calls >= 20 ORDER BY mean_exec_time DESC LIMIT 12");
        console.log('  mean ms\tcalls\ttotal ms\tstatement');
        for (const l of out.trim().split('\n')) console.log(`  ${l}`);
        const tot = psql('postgres', 'SELECT round(total_exec_time::numeric, 1), calls, round(mean_exec_time::numeric, 3), ' +
            "left(regexp_replace(query, '\\s+', ' ', 'g'), 300) FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 12");
        console.log('\n  by total time:\n  total ms\tcalls\tmean ms\tstatement');
        for (const l of tot.trim().split('\n')) console.log(`  ${l}`);
        const calls = psql('postgres', 'SELECT calls, round(mean_exec_time::numeric, 3), ' +
            "left(regexp_replace(query, '\\s+', ' ', 'g'), 160) FROM pg_stat_statements ORDER BY calls DESC LIMIT 20");
        console.log('\n  by calls:\n  calls\tmean ms\tstatement');
        for (const l of calls.trim().split('\n')) console.log(`  ${l}`);
    }
    if (opt.json) fs.writeFileSync(opt.json, JSON.stringify({ rev, options: opt, results, medians: med, ratios, checks }, null, 1));
    if (exitCode) console.log('\nnodes.mjs: errors or a wrong entry count (see above)');
} catch (e) {
    console.error(`nodes.mjs: ${e.stack || e.message}`);
    exitCode = 1;
} finally {
    closeAgents();
    for (const su of setups) {
        const bugs = su.stop();
        if (bugs.length) {
            console.error(`${su.name}: knowhub logged ${bugs.length} problem line(s):\n${bugs.slice(0, 10).join('\n')}`);
            exitCode = 1;
        }
    }
    stopCluster();
}
process.exit(exitCode);
