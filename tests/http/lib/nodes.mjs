// nodes.mjs: several knowhub processes on ONE PostgreSQL database behind ONE
// nginx, for the scale-out tests. Needs KNOWHUB_TEST_PG (a running cluster,
// scripts/pgcluster.sh); a test skips without it:
//   test('...', { skip: !onPostgres && 'needs KNOWHUB_TEST_PG' }, async () => {
//       const c = await startNodes({ nodes: 2, env: { KNOWHUB_JOB_LEASE: '4' } });
//       await c.front.api('GET', '/api/health');          // round robin over the nodes
//       await c.node[1].api('GET', '/api/health');        // node-b alone
//       c.node[0].kill('SIGKILL'); await c.node[0].restart();
//       await c.stop();
//   });
// Layout of c.dir: node-a/, node-b/ ... (each node's KNOWHUB_DATA: socket,
// logs, admin.token for node-a) and front/ (nginx: scripts/stack.sh
// nodes-start renders nginx/knowhub_nodes.conf.in with the shared parts).
// Every node gets KNOWHUB_NODE=node-a, node-b ... and the same
// KNOWHUB_DATABASE_URL; the nodes start one after another, so node-a makes
// the schema and the first admin token (c.admin).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { BIN, PG_SOCK, ROOT, assertNoBugs, bugLines, createDatabase, dropDatabase, freePort, onPostgres, request, run, tokenId } from './stack.mjs';

export { onPostgres };

const STACK_SH = path.join(ROOT, 'scripts/stack.sh');
const running = new Set();

process.on('exit', () => {
    for (const c of running) {
        const bugs = c.stopSync();
        if (bugs.length) console.error(bugs.join('\n'));
    }
});

// stdout 'ignore' when starting: the servers inherit it (see stack.mjs).
const stackSh = (args, env = {}, stdout = 'pipe') => run('bash', [STACK_SH, ...args], env, stdout);

const readPid = (file) => {
    try {
        return Number(fs.readFileSync(file, 'utf8').trim()) || null;
    } catch {
        return null;
    }
};

class Node {
    constructor(cluster, index, port, env) {
        this.cluster = cluster;
        this.index = index;
        /** KNOWHUB_NODE of this node: node-a, node-b ... */
        this.name = `node-${String.fromCharCode(97 + index)}`;
        this.dir = path.join(cluster.dir, this.name);
        this.socket = path.join(this.dir, 'run/knowhub.sock');
        /** The nginx port that reaches this node alone. */
        this.port = port;
        this.env = { ...env, KNOWHUB_NODE: this.name, KNOWHUB_DATABASE_URL: cluster.databaseUrl };
        this.agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    }

    /** Start knowhub (waits for its socket); env is added to the node's own. */
    start(env = {}) {
        const r = stackSh(['knowhub-start', this.dir], { ...this.env, ...env }, 'ignore');
        if (r.status !== 0) throw new Error(`${this.name} did not start: ${r.stderr}`);
    }

    /** One HTTP request through nginx to this node only. */
    api(method, reqPath, opts = {}) {
        return request(this.agent, this.port, method, reqPath, opts);
    }

    /** The PID of this node's knowhub (the last one started). */
    pid() {
        return readPid(path.join(this.dir, 'run/knowhub.pid'));
    }

    /** True while the knowhub process runs (not a zombie). */
    alive() {
        const pid = this.pid();
        if (!pid) return false;
        try {
            const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
            return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
        } catch {
            return false;
        }
    }

    /** Send a signal to this node's knowhub (SIGKILL: a crash, SIGTERM: a clean stop). */
    kill(sig = 'SIGTERM') {
        process.kill(this.pid(), sig);
    }

    /** Stop knowhub (TERM, KILL after 10 s) if it runs. */
    stopKnowhub() {
        stackSh(['knowhub-stop', this.dir]);
    }

    /** Stop (if running) and start again on the same directory and database;
     * env is added to the node's environment from now on. */
    restart(env = {}) {
        this.stopKnowhub();
        Object.assign(this.env, env);
        this.agent.destroy();
        this.agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
        this.start();
    }

    log() {
        try {
            return fs.readFileSync(path.join(this.dir, 'logs/knowhub.log'), 'utf8');
        } catch {
            return '';
        }
    }
}

class Nodes {
    constructor(dir, db) {
        this.dir = dir;
        this.db = db;
        /** The KNOWHUB_DATABASE_URL every node shares. */
        this.databaseUrl = db.url;
        this.frontDir = path.join(dir, 'front');
        /** @type {Node[]} */
        this.node = [];
        this.stopped = false;
    }

    /** The environment of a knowhub CLI command (on node-a's directory, the shared database). */
    cliEnv() {
        return { KNOWHUB_DATA: this.node[0].dir, KNOWHUB_DATABASE_URL: this.databaseUrl };
    }

    /** A new token for space with role (knowhub token create); returns the token text. */
    token(space, role, label = '') {
        const r = spawnSync(BIN, ['token', 'create', '--space', space, '--role', role, '--label', label], {
            env: { ...process.env, ...this.cliEnv() },
            encoding: 'utf8',
            timeout: 30000,
        });
        assertNoBugs(r.stderr, 'knowhub token create');
        const tok = (r.stdout || '').trim();
        if (r.status !== 0 || !/^kh_[0-9a-f]{16}_\S+$/.test(tok)) throw new Error(`token create failed (${r.status}): ${r.stderr}`);
        return tok;
    }

    /** Revoke a token by its id (or by the token itself), with the CLI. */
    revoke(idOrToken) {
        const id = idOrToken.startsWith('kh_') ? tokenId(idOrToken) : idOrToken;
        const r = spawnSync(BIN, ['token', 'revoke', id], { env: { ...process.env, ...this.cliEnv() }, encoding: 'utf8', timeout: 30000 });
        assertNoBugs(r.stderr, 'knowhub token revoke');
        if (r.status !== 0) throw new Error(`token revoke failed (${r.status}): ${r.stderr}`);
    }

    /** Stop nginx and every node, drop the database, remove the directory;
     * returns the lines of the nodes' logs that show a bug. */
    stopSync() {
        if (this.stopped) return [];
        this.stopped = true;
        running.delete(this);
        if (this.watchdog) {
            try {
                process.kill(this.watchdog);
            } catch {
                /* already gone */
            }
        }
        this.front?.agent.destroy();
        stackSh(['stop', this.frontDir]);
        const bugs = [];
        for (const n of this.node) {
            n.agent.destroy();
            n.stopKnowhub();
            for (const l of bugLines(n.log())) bugs.push(`${n.name}: ${l}`);
        }
        dropDatabase(this.db.name, this.db.sock);
        if (!process.env.KNOWHUB_KEEP_TEST_DATA) fs.rmSync(this.dir, { recursive: true, force: true });
        return bugs;
    }

    /** Stop; fails when a node logged a sanitizer report or an internal error. */
    async stop() {
        const bugs = this.stopSync();
        if (bugs.length) throw new Error(`the nodes logged ${bugs.length} problem line(s):\n${bugs.slice(0, 20).join('\n')}`);
    }
}

// A test process killed outright runs no handler: a detached watchdog stops
// nginx and the nodes once it is gone, and drops the database.
function watchdog(c) {
    const keep = process.env.KNOWHUB_KEEP_TEST_DATA ? 1 : 0;
    const script =
        'sh=$0 pid=$1 dir=$2 keep=$3 sock=$4 db=$5; shift 6; ' +
        'while kill -0 "$pid" 2>/dev/null; do sleep 1; done; ' +
        'bash "$sh" stop "$dir/front"; for n in "$@"; do bash "$sh" knowhub-stop "$dir/$n"; done; ' +
        '[ "$keep" = 1 ] || rm -rf "$dir"; ' +
        'psql -X -q -h "$sock" -U knowhub -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1';
    const args = [STACK_SH, String(process.pid), c.dir, String(keep), c.db.sock, c.db.name, '--', ...c.node.map((n) => n.name)];
    const w = spawn('bash', ['-c', script, ...args], { detached: true, stdio: 'ignore' });
    w.unref();
    return w.pid;
}

/**
 * Start one database, `nodes` knowhub processes on it and one nginx: the
 * front port round robin over every node, and one port per node. nginx keeps
 * its default fastcgi_next_upstream "error timeout": a request that could not
 * be sent (connection refused) goes to the next node whatever its method; a
 * sent POST is never sent again, a sent GET, PUT or DELETE is after an error
 * or a timeout. A node is left out for 1 s after a failed connection.
 * env goes to every node, nodeEnv[i] to node i only. pgSock: the socket
 * directory of another running cluster to make the database on (a test that
 * stops its cluster owns one of its own), KNOWHUB_TEST_PG's by default.
 * Returns a Nodes: {front: {port, api}, node: [Node], admin, token(), revoke(),
 * databaseUrl, dir, stop()}.
 */
export async function startNodes({ nodes = 2, env = {}, nodeEnv = [], pgSock = PG_SOCK } = {}) {
    if (!onPostgres) throw new Error('startNodes needs a PostgreSQL cluster: set KNOWHUB_TEST_PG (see docs/testing.md)');
    if (!fs.existsSync(BIN)) throw new Error(`knowhub binary not found: ${BIN} (set KNOWHUB_BIN)`);
    if (nodes < 1 || nodes > 26) throw new Error(`nodes: 1 to 26, not ${nodes}`);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'knowhub-nodes-'));
    const c = new Nodes(dir, createDatabase(pgSock));
    running.add(c);
    try {
        for (let i = 0; i < nodes; i++) c.node.push(new Node(c, i, 0, { ...env, ...(nodeEnv[i] || {}) }));
        c.watchdog = watchdog(c);
        // One after another: node-a migrates the empty database and writes admin.token.
        for (const n of c.node) n.start();
        c.admin = fs.readFileSync(path.join(c.node[0].dir, 'admin.token'), 'utf8').trim();
        let lastError = '';
        for (let attempt = 0; attempt < 5; attempt++) {
            const front = await freePort();
            for (const n of c.node) n.port = await freePort();
            const r = stackSh(['nodes-start', c.frontDir, '127.0.0.1', String(front), ...c.node.map((n) => `${n.socket}=${n.port}`)], {}, 'ignore');
            if (r.status === 0) {
                const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
                c.front = { port: front, agent, api: (method, reqPath, opts = {}) => request(agent, front, method, reqPath, opts) };
                return c;
            }
            lastError = r.stderr;
            stackSh(['stop', c.frontDir]);
        }
        throw new Error(`the nodes' nginx did not start: ${lastError}`);
    } catch (e) {
        c.stopSync();
        throw e;
    }
}
