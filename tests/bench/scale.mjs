// scale.mjs: does adding a node add throughput? 1, 2 and 3 knowhub nodes on
// one PostgreSQL behind one nginx, each node an emulated machine (a cgroup
// with a CPU quota) and PostgreSQL another, measured in ONE run; with the
// CPU time per request of every component and the capacity model's
// prediction beside each measurement. A measurement, not a test: it prints
// figures and never fails on time (exit 1 only when a request failed, a
// set-up could not start, or the machines could not be made: root and the
// cgroup v1 cpu controller are needed).
//
//   node tests/bench/scale.mjs [--nodes 1,2,3] [--node-cpu 0.05] [--pg-cpu 0.6]
//        [--pg-cpu-limited 0.15] [--clients 16] [--seconds 6] [--warmup 1] [--repeat 2]
//        [--entries 1000] [--ops get,search,create] [--pg-stats] [--json FILE]
//   node tests/bench/scale.mjs --seconds 3 --repeat 1 --entries 300   a quick run (3 minutes)
//
// Set-up: a throwaway PostgreSQL cluster (scripts/pgcluster.sh; removed at
// the end), max(--nodes) knowhub nodes on one database (tests/http/lib/
// nodes.mjs, KNOWHUB_CACHE_SLOTS=0: no answer cache, every read computed)
// and one nginx front per node count, round robin over the first N nodes.
// Machines (tests/bench/lib/cgroup.mjs): node I in cgroup node-I with
// --node-cpu CPUs; the postmaster and every process it has forked in cgroup
// pg (backends forked later inherit it) with --pg-cpu CPUs ("PostgreSQL has
// enough"), then --pg-cpu-limited ("PostgreSQL is the limit"; 0 skips it).
// nginx and this process (the load generator: keep-alive clients of Node's
// http module, tests/bench/lib/load.mjs) stay outside any quota. Every cgroup
// is undone at the end (processes moved back, cgroups removed), also after an
// error, on SIGINT/SIGTERM, and by a watchdog if this process is killed.
//
// Seeded with --entries entries (tests/bench/lib/pgbench.mjs, the entries of
// nodes.mjs), then ANALYZE. Operations, C clients in a closed loop, T s each:
//   get     GET /api/knowledge/{id}, a random seeded id every request
//   search  GET /api/knowledge/search?q=... (mode=lexical, top_k=5): 1-3
//           random words every request, and no answer cache: uncached
//   create  POST /api/knowledge, a distinct body every request
// Reads run for both PostgreSQL quotas first, creates last (every search sees
// the seeded entries only). For every (quota, operation, node count): req/s,
// p50, p99, errors (non-2xx, the error envelope, socket errors), the scaling
// efficiency req/s(N) / (N x req/s(1)), how often the quotas throttled, the
// CPU milliseconds per request of knowhub (all nodes), PostgreSQL (every
// process in its cgroup), nginx (the front's master and workers) and the
// load generator (from /proc/PID/stat utime+stime and process.cpuUsage(),
// deltas over the measured seconds), and PostgreSQL round trips per request
// (the knowhub_store_round_trips histogram of every node's /metrics, delta).
//
// The capacity model (docs/performance.md, "A capacity model"): with the CPU
// per request of the one-node run under "enough" (kh, pg, ngx, gen ms), K
// nodes of C CPUs on a database of D CPUs serve at most
//   min(K*C/kh, D/pg, host/(kh+pg+ngx+gen))   requests/s
// (host: the machine's cores; a bound the other work on a shared machine
// lowers). The one-node row calibrates; every other row is a prediction,
// printed beside the measurement with their ratio and the bounding part.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Machine, childrenOf, cpuSeconds, restoreAll, unavailable } from './lib/cgroup.mjs';
import { closeAgents, load, send } from './lib/load.mjs';
import { ROOT, entryBody, fmtInt, fmtMs, fmtRatio, gitRev, loadavg, median, postmasterPid, psql, query, rng, seedEntries, startCluster, stopCluster } from './lib/pgbench.mjs';

// ---- options ----
const opt = { nodes: [1, 2, 3], nodeCpu: 0.05, pgCpu: 0.6, pgCpuLimited: 0.15, clients: 16, seconds: 6, warmup: 1, repeat: 2, entries: 1000, ops: ['get', 'search', 'create'], pgStats: false, json: '' };
function usage(msg) {
    if (msg) console.error(`scale.mjs: ${msg}`);
    console.error(fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(9, 14).map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
    process.exit(2);
}
{
    const a = process.argv.slice(2);
    const num = (v, name, min, int = true) => {
        const n = Number(v);
        if (!Number.isFinite(n) || n < min || (int && !Number.isInteger(n))) usage(`${name} must be ${int ? 'an integer' : 'a number'} >= ${min}`);
        return n;
    };
    for (let i = 0; i < a.length; i++) {
        const k = a[i];
        const v = () => (i + 1 < a.length ? a[++i] : usage(`${k} needs a value`));
        if (k === '--nodes') opt.nodes = v().split(',').map((x) => num(x, k, 1));
        else if (k === '--node-cpu') opt.nodeCpu = num(v(), k, 0.01, false);
        else if (k === '--pg-cpu') opt.pgCpu = num(v(), k, 0.01, false);
        else if (k === '--pg-cpu-limited') opt.pgCpuLimited = num(v(), k, 0, false);
        else if (k === '--clients') opt.clients = num(v(), k, 1);
        else if (k === '--seconds') opt.seconds = num(v(), k, 1);
        else if (k === '--warmup') opt.warmup = num(v(), k, 0);
        else if (k === '--repeat') opt.repeat = num(v(), k, 1);
        else if (k === '--entries') opt.entries = num(v(), k, 1);
        else if (k === '--ops') opt.ops = v().split(',').filter(Boolean);
        else if (k === '--pg-stats') opt.pgStats = true;
        else if (k === '--json') opt.json = v();
        else if (k === '-h' || k === '--help') usage();
        else usage(`unknown option ${k}`);
    }
    for (const o of opt.ops) if (!['get', 'search', 'create'].includes(o)) usage(`unknown operation ${o}`);
    if (!opt.nodes.includes(1)) usage('--nodes must include 1 (the efficiency and the model are relative to one node)');
    opt.nodes = [...new Set(opt.nodes)].sort((x, y) => x - y);
}
{
    const why = unavailable();
    if (why) {
        console.error(`scale.mjs: ${why}`);
        process.exit(1);
    }
}

// The load must not be rate limited (as nodes.mjs).
delete process.env.KNOWHUB_RATE_LIMIT_LOOPBACK;
process.env.KNOWHUB_RATE_LIMIT = '1000000r/s';
process.env.KNOWHUB_RATE_BURST = '100000';
delete process.env.KNOWHUB_TEST_PG;

const STACK_SH = path.join(ROOT, 'scripts/stack.sh');
const CORES = os.cpus().length;
const OP_LABEL = { get: 'GET by id', search: 'search (uncached)', create: 'create' };

// ---- measuring one component ----
const readPid = (file) => {
    try {
        return Number(fs.readFileSync(file, 'utf8').trim()) || 0;
    } catch {
        return 0;
    }
};
/** CPU seconds of an nginx: its master and workers. */
const nginxCpu = (master) => [master, ...childrenOf(master)].reduce((a, p) => a + cpuSeconds(p), 0);
const clientCpu = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
};
/** The round trips of every node so far: {sum, count} over every route but /metrics. */
async function roundTrips(nodePorts, token) {
    let sum = 0;
    let count = 0;
    for (const port of nodePorts) {
        const r = await send(port, token, 'GET', '/metrics');
        for (const l of r.text.split('\n')) {
            const m = /^knowhub_store_round_trips_(sum|count)\{(.*)\} (\S+)$/.exec(l);
            if (!m || m[2].includes('route="/metrics"')) continue;
            if (m[1] === 'sum') sum += Number(m[3]);
            else count += Number(m[3]);
        }
    }
    return { sum, count };
}

// ---- the run ----
const rounds = []; // every measurement
const rows = []; // per (quota, operation, nodes): the medians over the rounds
const fronts = []; // extra nginx fronts (FRONT directories) to stop
let cluster = null;
let exitCode = 0;
const stopFronts = () => {
    while (fronts.length) {
        const dir = fronts.pop();
        spawnStack(['stop', dir]);
        fs.rmSync(dir, { recursive: true, force: true });
    }
};
function spawnStack(args) {
    return spawnSync('bash', [STACK_SH, ...args], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', timeout: 60000 });
}
// Registered first: at exit the machines are undone (cgroup.mjs), the fronts
// stopped, the nodes stopped (nodes.mjs) and then the cluster.
process.on('exit', stopFronts);

try {
    startCluster({ pgStats: opt.pgStats });
    const { startNodes } = await import('../http/lib/nodes.mjs');
    const { freePort } = await import('../http/lib/stack.mjs');
    // After nodes.mjs's own exit handler: the nodes and their database go first.
    process.on('exit', stopCluster);
    const maxN = opt.nodes[opt.nodes.length - 1];
    const rev = gitRev();
    console.log(`scale.mjs: rev ${rev}, ${CORES} cores, nodes ${opt.nodes.join(',')} of ${opt.nodeCpu} CPU, PostgreSQL ${opt.pgCpu} CPU` +
        `${opt.pgCpuLimited ? ` then ${opt.pgCpuLimited}` : ''}, ${opt.clients} clients, ${opt.seconds} s per figure, ${opt.entries} entries; load average ${loadavg()}`);
    cluster = await startNodes({ nodes: maxN, env: { KNOWHUB_CACHE_SLOTS: '0' } });
    const token = cluster.admin;
    const nodePorts = cluster.node.map((n) => n.port);
    // A front over the first N nodes: the cluster's own for all of them.
    const frontOf = {};
    for (const n of opt.nodes) {
        if (n === maxN) {
            frontOf[n] = { port: cluster.front.port, master: readPid(path.join(cluster.frontDir, 'run/nginx-main.pid')) };
            continue;
        }
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), `knowhub-scale-front${n}-`));
        fronts.push(dir);
        let r = null;
        let port = 0;
        for (let attempt = 0; attempt < 5; attempt++) {
            port = await freePort();
            const specs = [];
            for (const node of cluster.node.slice(0, n)) specs.push(`${node.socket}=${await freePort()}`);
            r = spawnStack(['nodes-start', dir, '127.0.0.1', String(port), ...specs]);
            if (r.status === 0) break;
            spawnStack(['stop', dir]);
        }
        if (r.status !== 0) throw new Error(`the front of ${n} node(s) did not start: ${r.stderr}`);
        // If this process is killed outright, a watchdog stops this nginx.
        spawn('bash', ['-c', 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; bash "$0" stop "$2"; rm -rf "$2"', STACK_SH, String(process.pid), dir], {
            detached: true,
            stdio: 'ignore',
        }).unref();
        frontOf[n] = { port, master: readPid(path.join(dir, 'run/nginx-main.pid')) };
    }

    // The machines.
    const pg = new Machine('pg', opt.pgCpu);
    pg.addTree(postmasterPid());
    const nodeMachines = cluster.node.map((node, i) => {
        const m = new Machine(`node-${i + 1}`, opt.nodeCpu);
        m.add(node.pid());
        return m;
    });

    // Seed through the front of all nodes (every backend it opens forks from
    // the postmaster, inside the pg machine).
    const seeded = await seedEntries(frontOf[maxN].port, token, opt.entries, opt.clients);
    psql(cluster.db.name, 'ANALYZE');
    const ids = seeded.ids;
    console.log(`  seeded ${ids.length} entries in ${seeded.seconds.toFixed(1)} s; PostgreSQL processes in its machine: ${pg.pids().length}`);

    const gens = {
        get: (r) => () => ['GET', `/api/knowledge/${ids[Math.floor(r() * ids.length)]}`],
        search: (r) => () => ['GET', `/api/knowledge/search?q=${encodeURIComponent(query(r))}&mode=lexical&top_k=5`],
        create: (r) => {
            let i = 0;
            return () => ['POST', '/api/knowledge', entryBody(r, `scale ${process.pid} ${Date.now()} ${i++}`)];
        },
    };
    const configs = [{ name: 'enough', pgCpus: opt.pgCpu }];
    if (opt.pgCpuLimited) configs.push({ name: 'pg-limited', pgCpus: opt.pgCpuLimited });

    const measure = async (cfg, op, n, round) => {
        pg.setCpus(cfg.pgCpus);
        pg.addTree(postmasterPid()); // a backend forked before the move, if any
        const front = frontOf[n];
        // Unmeasured: connections opened, backends forked, caches warm.
        if (opt.warmup) await load(front.port, token, gens[op](rng(104729 * n + op.length)), opt.warmup, opt.clients);
        const rt0 = await roundTrips(nodePorts, token);
        const th0 = [pg, ...nodeMachines].map((m) => m.stat().nr_throttled || 0);
        const c0 = { kh: nodeMachines.reduce((a, m) => a + m.cpuSeconds(), 0), pg: pg.cpuSeconds(), ngx: nginxCpu(front.master), gen: clientCpu() };
        const res = await load(front.port, token, gens[op](rng(7919 * n + 31 * round + op.length)), opt.seconds, opt.clients);
        const c1 = { kh: nodeMachines.reduce((a, m) => a + m.cpuSeconds(), 0), pg: pg.cpuSeconds(), ngx: nginxCpu(front.master), gen: clientCpu() };
        const th1 = [pg, ...nodeMachines].map((m) => m.stat().nr_throttled || 0);
        const rt1 = await roundTrips(nodePorts, token);
        const per = (k) => (res.n ? ((c1[k] - c0[k]) * 1000) / res.n : NaN);
        const row = {
            config: cfg.name, pgCpus: cfg.pgCpus, op, nodes: n, rps: res.rps, p50: res.p50, p99: res.p99, errors: res.errors, n: res.n, firstError: res.firstError,
            cpuMs: { kh: per('kh'), pg: per('pg'), ngx: per('ngx'), gen: per('gen') },
            roundTrips: rt1.count > rt0.count ? (rt1.sum - rt0.sum) / (rt1.count - rt0.count) : NaN,
            throttledPg: th1[0] - th0[0],
            throttledNodes: th1.slice(1).reduce((a, x) => a + x, 0) - th0.slice(1).reduce((a, x) => a + x, 0),
        };
        rounds.push(row);
        console.log(`  round ${round + 1} ${cfg.name.padEnd(10)} ${op.padEnd(6)} ${n} node(s) ${fmtInt(row.rps).padStart(6)} req/s  p50 ${fmtMs(row.p50)} ms  p99 ${fmtMs(row.p99)} ms  errors ${row.errors}` +
            `  CPU ms/req kh ${row.cpuMs.kh.toFixed(2)} pg ${row.cpuMs.pg.toFixed(2)} nginx ${row.cpuMs.ngx.toFixed(2)} gen ${row.cpuMs.gen.toFixed(2)}  RT ${fmtRatio(row.roundTrips)}` +
            (res.firstError ? `  (first error: ${res.firstError})` : ''));
    };
    // Rounds interleave the node counts (1, 2, 3, 1, 2, 3 ...): a change of
    // the load around the run moves every count alike.
    const reads = opt.ops.filter((o) => o !== 'create');
    for (const cfg of configs) for (const op of reads) for (let k = 0; k < opt.repeat; k++) for (const n of opt.nodes) await measure(cfg, op, n, k);
    if (opt.ops.includes('create')) for (const cfg of configs) for (let k = 0; k < opt.repeat; k++) for (const n of opt.nodes) await measure(cfg, 'create', n, k);
    for (const cfg of configs) {
        for (const op of opt.ops) {
            for (const n of opt.nodes) {
                const rs = rounds.filter((r) => r.config === cfg.name && r.op === op && r.nodes === n);
                const m = (f) => median(rs.map(f));
                rows.push({
                    config: cfg.name, pgCpus: cfg.pgCpus, op, nodes: n, rps: m((r) => r.rps), p50: m((r) => r.p50), p99: m((r) => r.p99),
                    errors: rs.reduce((a, r) => a + r.errors, 0), n: rs.reduce((a, r) => a + r.n, 0),
                    cpuMs: { kh: m((r) => r.cpuMs.kh), pg: m((r) => r.cpuMs.pg), ngx: m((r) => r.cpuMs.ngx), gen: m((r) => r.cpuMs.gen) },
                    roundTrips: m((r) => r.roundTrips), throttledPg: m((r) => r.throttledPg), throttledNodes: m((r) => r.throttledNodes),
                });
            }
        }
    }
    // Errors where PostgreSQL has enough fail the run; where it is the
    // limit they are part of what saturation looks like (printed).
    if (rows.some((r) => r.errors && r.config === 'enough')) exitCode = 1;

    // ---- the model and the tables ----
    const calib = {};
    for (const r of rows) if (r.config === 'enough' && r.nodes === 1) calib[r.op] = r.cpuMs;
    const predict = (r, c = calib[r.op]) => {
        if (!c) return { rps: NaN, bound: '' };
        const bounds = {
            knowhub: (r.nodes * opt.nodeCpu * 1000) / c.kh,
            postgresql: (r.pgCpus * 1000) / c.pg,
            host: (CORES * 1000) / (c.kh + c.pg + c.ngx + c.gen),
        };
        const bound = Object.keys(bounds).reduce((a, b) => (bounds[a] <= bounds[b] ? a : b));
        return { rps: bounds[bound], bound };
    };
    const one = (r) => rows.find((x) => x.config === r.config && x.op === r.op && x.nodes === 1);
    console.log(`\nload average at the end ${loadavg()}\n`);
    console.log(`Each node ${opt.nodeCpu} CPU; PostgreSQL "enough" ${opt.pgCpu} CPU` + (opt.pgCpuLimited ? `, "pg-limited" ${opt.pgCpuLimited} CPU` : '') +
        `; ${opt.clients} clients; ${opt.seconds} s per row; nginx and the load generator outside the quotas.\n`);
    console.log('| PostgreSQL | operation | nodes | req/s | p50 ms | p99 ms | errors | efficiency | predicted req/s (bound) | measured / predicted | bound from the row\'s own CPU | throttled periods: pg, nodes |');
    console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const r of rows) {
        const base = one(r);
        r.efficiency = base ? r.rps / (r.nodes * base.rps) : NaN;
        const p = predict(r);
        r.predicted = p.rps;
        r.bound = p.bound;
        const own = predict(r, r.cpuMs);
        r.ownBound = own.rps;
        const calibRow = r.config === 'enough' && r.nodes === 1;
        console.log(`| ${r.config} (${r.pgCpus} CPU) | ${OP_LABEL[r.op]} | ${r.nodes} | ${fmtInt(r.rps)} | ${fmtMs(r.p50)} | ${fmtMs(r.p99)} | ${r.errors} | ` +
            `${r.nodes === 1 ? '1' : fmtRatio(r.efficiency)} | ${fmtInt(p.rps)} (${p.bound}${calibRow ? ', calibration' : ''}) | ${fmtRatio(r.rps / p.rps)} | ${fmtInt(own.rps)} (${own.bound}) | ${r.throttledPg}, ${r.throttledNodes} |`);
    }
    console.log('\nCPU per request (ms; every process of the component, utime+stime deltas) and PostgreSQL round trips per request:\n');
    console.log('| PostgreSQL | operation | nodes | knowhub | PostgreSQL | nginx | load generator | round trips |');
    console.log('|---|---|---:|---:|---:|---:|---:|---:|');
    for (const r of rows) {
        console.log(`| ${r.config} | ${OP_LABEL[r.op]} | ${r.nodes} | ${r.cpuMs.kh.toFixed(3)} | ${r.cpuMs.pg.toFixed(3)} | ${r.cpuMs.ngx.toFixed(3)} | ${r.cpuMs.gen.toFixed(3)} | ${fmtRatio(r.roundTrips)} |`);
    }
    console.log('\nScaling efficiency, req/s of N nodes / (N x one node), target >= 0.9 for 2 nodes and >= 0.83 for 3 ("enough"):');
    for (const cfg of configs) {
        for (const op of opt.ops) {
            const cells = opt.nodes.filter((n) => n > 1).map((n) => {
                const r = rows.find((x) => x.config === cfg.name && x.op === op && x.nodes === n);
                const b = rows.find((x) => x.config === cfg.name && x.op === op && x.nodes === 1);
                return r && b ? `${n} nodes ${fmtRatio(r.rps / b.rps)}x (efficiency ${fmtRatio(r.efficiency)})` : '';
            });
            console.log(`  ${cfg.name.padEnd(10)} ${OP_LABEL[op].padEnd(18)} ${cells.join(', ')}`);
        }
    }
    if (opt.pgStats) {
        console.log('\npg_stat_statements, by total time:\n  total ms\tcalls\tmean ms\tstatement');
        const tot = psql('postgres', 'SELECT round(total_exec_time::numeric, 1), calls, round(mean_exec_time::numeric, 3), ' +
            "left(regexp_replace(query, '\\s+', ' ', 'g'), 140) FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 15");
        for (const l of tot.trim().split('\n')) console.log(`  ${l}`);
    }
    if (exitCode) console.log('\nscale.mjs: requests failed with PostgreSQL given enough CPU (see errors above)');
    else if (rows.some((r) => r.errors)) console.log('\nscale.mjs: requests failed only where PostgreSQL is the limit (saturation; see above)');
    if (opt.json) fs.writeFileSync(opt.json, JSON.stringify({ rev, options: opt, cores: CORES, rows, rounds }, null, 1));
} catch (e) {
    console.error(`scale.mjs: ${e.stack || e.message}`);
    exitCode = 1;
} finally {
    closeAgents();
    restoreAll();
    stopFronts();
    if (cluster) {
        const bugs = cluster.stopSync();
        if (bugs.length) {
            console.error(`the nodes logged ${bugs.length} problem line(s):\n${bugs.slice(0, 10).join('\n')}`);
            exitCode = 1;
        }
    }
    stopCluster();
}
process.exit(exitCode);
