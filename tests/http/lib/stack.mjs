// stack.mjs: start a real nginx + knowhub for one test file, in a fresh
// temporary data directory on a free loopback port, and talk HTTP to it.
//   const s = await startStack();
//   const r = await s.api('GET', '/api/knowledge', { token: s.admin });
//   await s.stop();
// With KNOWHUB_TEST_PG set (the socket directory of a running cluster, see
// scripts/pgcluster.sh), each stack gets a fresh PostgreSQL database
// (KNOWHUB_DATABASE_URL for knowhub serve and every CLI command the tests
// run), dropped when the stack stops.
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const BIN = process.env.KNOWHUB_BIN || path.join(ROOT, 'build/knowhub');
const STACK_SH = path.join(ROOT, 'scripts/stack.sh');

/** The socket directory of the test cluster, or '' for SQLite. */
export const PG_SOCK = process.env.KNOWHUB_TEST_PG || '';
/** True when the stacks run on PostgreSQL (KNOWHUB_TEST_PG). */
export const onPostgres = PG_SOCK !== '';
// Each stack chooses its database: one from the caller's shell must not leak
// into a test's knowhub (every spawn copies process.env).
delete process.env.KNOWHUB_DATABASE_URL;

/** Run SQL on the test cluster's maintenance database "postgres" (sock:
 * another cluster's socket directory). */
function pgAdmin(query, sock = PG_SOCK) {
    const r = spawnSync('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-h', sock, '-U', 'knowhub', '-d', 'postgres', '-c', query], {
        stdio: ['ignore', 'pipe', 'pipe'],
        encoding: 'utf8',
        timeout: 30000,
    });
    if (r.error) throw r.error;
    if (r.status !== 0) throw new Error(`psql on ${sock}: ${r.stderr.trim()}`);
}

/** The libpq URL of database name on the test cluster (or on the cluster of sock). */
export const pgUrl = (name, sock = PG_SOCK) =>
    `postgresql:///${name}?host=${sock.replace(/[^A-Za-z0-9/._-]/g, (c) => encodeURIComponent(c))}&user=knowhub`;

/** A fresh empty database on the test cluster (or on the cluster whose
 * socket directory is sock): {name, url, sock}. */
export function createDatabase(sock = PG_SOCK) {
    if (!sock) throw new Error('createDatabase needs KNOWHUB_TEST_PG');
    const name = `kh_${crypto.randomBytes(6).toString('hex')}`;
    pgAdmin(`CREATE DATABASE ${name}`, sock);
    return { name, url: pgUrl(name, sock), sock };
}

/** Drop a database of the test cluster (or of sock's), its sessions too; best effort. */
export function dropDatabase(name, sock = PG_SOCK) {
    if (!sock || !name) return;
    try {
        pgAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`, sock);
    } catch (e) {
        console.error(`could not drop test database ${name}: ${e.message}`);
    }
}

// The database URL of each running stack's data directory, for cliEnv.
const urlOfDir = new Map();

/** The environment of a knowhub CLI command on a stack's data directory:
 * KNOWHUB_DATA, and KNOWHUB_DATABASE_URL when that stack is on PostgreSQL. */
export function cliEnv(dir) {
    const url = urlOfDir.get(path.resolve(dir));
    return url ? { KNOWHUB_DATA: dir, KNOWHUB_DATABASE_URL: url } : { KNOWHUB_DATA: dir };
}

const running = new Set();

/** What in a knowhub log or stderr shows a bug: a sanitizer report, an internal error. */
export const BUG_RE = /AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|ThreadSanitizer|runtime error:|internal error/;
/** The lines of text (a knowhub log or stderr) that show a bug. */
export const bugLines = (text) => String(text || '').split('\n').filter((l) => BUG_RE.test(l));
/** Throw when the log or stderr of a knowhub process (what) shows a bug. */
export function assertNoBugs(text, what) {
    const bugs = bugLines(text);
    if (bugs.length) throw new Error(`${what} logged ${bugs.length} problem line(s):\n${bugs.slice(0, 20).join('\n')}`);
}

// A stack left running by a crashed test file is stopped on the way out.
function stopAll() {
    for (const s of running) {
        const bugs = s.stopSync();
        if (bugs.length) console.error(bugs.join('\n'));
    }
}
process.on('exit', stopAll);
// A test file killed by the runner (timeout, Ctrl-C, a closed pipe) still stops its servers.
for (const [sig, code] of [['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]]) {
    process.once(sig, () => {
        stopAll();
        process.exit(code);
    });
}

/** A loopback port nobody listens on right now. */
export function freePort() {
    return new Promise((resolve, reject) => {
        const srv = net.createServer();
        srv.unref();
        srv.on('error', reject);
        srv.listen(0, '127.0.0.1', () => {
            const { port } = srv.address();
            srv.close(() => resolve(port));
        });
    });
}

/** The id part of a token "kh_<16 hex>_<secret>". */
export function tokenId(token) {
    const m = /^kh_([0-9a-f]{16})_/.exec(token);
    if (!m) throw new Error(`not a knowhub token: ${token}`);
    return m[1];
}

// stdout 'ignore' for stack.sh start: the servers it leaves running inherit
// its stdout, and a pipe would keep spawnSync waiting until they exit. A
// knowhub command (cmd BIN) throws when its stderr shows a bug, whatever its
// exit status.
export function run(cmd, args, env = {}, stdout = 'pipe') {
    const r = spawnSync(cmd, args, {
        env: { ...process.env, KNOWHUB_BIN: BIN, ...env },
        stdio: ['ignore', stdout, 'pipe'],
        encoding: 'utf8',
        timeout: 30000,
    });
    if (r.error) throw r.error;
    if (cmd === BIN) assertNoBugs(r.stderr, `knowhub ${args.join(' ')}`);
    return r;
}

/**
 * One HTTP request. path is sent as given (it may hold raw bytes written as
 * latin1 characters \u0080-\u00ff). body is JSON-encoded; rawBody (string or
 * Buffer) is sent as is; chunked sends it without Content-Length.
 * Returns {status, headers, text, json, raw}.
 */
export function request(agent, port, method, reqPath, opts = {}) {
    const { token, body, rawBody, headers = {}, timeout = 30000, chunked = false } = opts;
    let payload = null;
    if (rawBody !== undefined) payload = Buffer.isBuffer(rawBody) ? rawBody : Buffer.from(rawBody);
    else if (body !== undefined) payload = Buffer.from(JSON.stringify(body));
    const h = { ...headers };
    if (token !== undefined && token !== null) h.Authorization = `Bearer ${token}`;
    if (payload) {
        if (!Object.keys(h).some((k) => k.toLowerCase() === 'content-type'))
            h['Content-Type'] = 'application/json';
        if (!chunked) h['Content-Length'] = String(payload.length);
    }
    return new Promise((resolve, reject) => {
        const req = http.request(
            { host: '127.0.0.1', port, method, path: reqPath, headers: h, agent, timeout },
            (res) => {
                const chunks = [];
                res.on('data', (c) => chunks.push(c));
                res.on('end', () => {
                    const raw = Buffer.concat(chunks);
                    const text = raw.toString('utf8');
                    let json = null;
                    try {
                        json = JSON.parse(text);
                    } catch {
                        json = null;
                    }
                    resolve({ status: res.statusCode, headers: res.headers, text, json, raw });
                });
                res.on('error', reject);
            },
        );
        req.on('timeout', () => req.destroy(new Error(`${method} ${reqPath}: timed out`)));
        req.on('error', reject);
        if (payload && chunked) {
            // Transfer-Encoding: chunked, in 64 KiB pieces.
            for (let i = 0; i < payload.length; i += 65536) req.write(payload.subarray(i, i + 65536));
        } else if (payload) {
            req.write(payload);
        }
        req.end();
    });
}

class Stack {
    constructor(dir, port, db = null, env = {}) {
        this.dir = dir;
        /** The environment knowhub was started with (a restart of knowhub alone starts it so again). */
        this.env = env;
        this.port = port;
        /** The PostgreSQL database ({name, url}), or null on SQLite. */
        this.db = db;
        /** KNOWHUB_DATABASE_URL of this stack, or null on SQLite. */
        this.databaseUrl = db ? db.url : null;
        this.base = `http://127.0.0.1:${port}`;
        this.agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
        this.admin = fs.readFileSync(path.join(dir, 'admin.token'), 'utf8').trim();
        this.stopped = false;
    }

    /** A new token for space with role; returns the token text. */
    token(space, role, label = '') {
        const r = run(BIN, ['token', 'create', '--space', space, '--role', role, '--label', label], this.cliEnv());
        const tok = r.stdout.trim();
        if (r.status !== 0 || !/^kh_[0-9a-f]{16}_\S+$/.test(tok))
            throw new Error(`token create failed (${r.status}): ${r.stderr}`);
        return tok;
    }

    /** Revoke a token by its id (or by the token itself). */
    revoke(idOrToken) {
        const id = idOrToken.startsWith('kh_') ? tokenId(idOrToken) : idOrToken;
        const r = run(BIN, ['token', 'revoke', id], this.cliEnv());
        if (r.status !== 0) throw new Error(`token revoke failed (${r.status}): ${r.stderr}`);
    }

    /** Stop knowhub alone and start it again on the same directory and
     * database (nginx stays); env is added to its environment from now on
     * (KNOWHUB_NOW moves the clock: docs/operations.md). */
    restartKnowhub(env = {}) {
        Object.assign(this.env, env);
        run('bash', [STACK_SH, 'knowhub-stop', this.dir]);
        const r = run('bash', [STACK_SH, 'knowhub-start', this.dir], this.env, 'ignore');
        if (r.status !== 0) throw new Error(`knowhub-start failed (${r.status})`);
        this.agent.destroy();
        this.agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    }

    /** The environment of a knowhub CLI command on this stack (cliEnv). */
    cliEnv() {
        return this.databaseUrl ? { KNOWHUB_DATA: this.dir, KNOWHUB_DATABASE_URL: this.databaseUrl } : { KNOWHUB_DATA: this.dir };
    }

    api(method, reqPath, opts = {}) {
        return request(this.agent, this.port, method, reqPath, opts);
    }

    /** knowhub's FastCGI socket (scripts/stack.sh: DIR/run/knowhub.sock). */
    socket() {
        return path.join(this.dir, 'run/knowhub.sock');
    }

    /** The proxy key knowhub keeps in DIR/proxy.key (nginx sends it as KNOWHUB_PROXY_KEY). */
    proxyKey() {
        return fs.readFileSync(path.join(this.dir, 'proxy.key'), 'utf8').trim();
    }

    /** The PID of the knowhub process. */
    knowhubPid() {
        return Number(fs.readFileSync(path.join(this.dir, 'run/knowhub.pid'), 'utf8').trim());
    }

    log() {
        try {
            return fs.readFileSync(path.join(this.dir, 'logs/knowhub.log'), 'utf8');
        } catch {
            return '';
        }
    }

    /** Stop both servers and remove the directory; returns the lines of
     * knowhub's log that show a bug (sanitizer reports, internal errors). */
    stopSync() {
        if (this.stopped) return [];
        this.stopped = true;
        running.delete(this);
        this.agent.destroy();
        if (this.watchdog) {
            try {
                process.kill(this.watchdog);
            } catch {
                /* already gone */
            }
        }
        run('bash', [STACK_SH, 'stop', this.dir]);
        urlOfDir.delete(path.resolve(this.dir));
        if (this.db) dropDatabase(this.db.name);
        const log = this.log();
        if (!process.env.KNOWHUB_KEEP_TEST_DATA) fs.rmSync(this.dir, { recursive: true, force: true });
        return bugLines(log);
    }

    /** Stop; fails when knowhub logged a sanitizer report or an internal error. */
    async stop() {
        const bugs = this.stopSync();
        if (bugs.length) throw new Error(`knowhub logged ${bugs.length} problem line(s):\n${bugs.slice(0, 20).join('\n')}`);
    }
}

// A test process killed outright (SIGKILL, or by the runner after a broken
// pipe) runs no handler: a detached watchdog stops its stack once it is gone
// (and drops its PostgreSQL database).
export function watchdog(dir, dbName = '') {
    const keep = process.env.KNOWHUB_KEEP_TEST_DATA ? 1 : 0;
    const script =
        'while kill -0 "$2" 2>/dev/null; do sleep 1; done; bash "$0" stop "$1"; [ "$3" = 1 ] || rm -rf "$1"; ' +
        '[ -z "$5" ] || psql -X -q -h "$4" -U knowhub -d postgres -c "DROP DATABASE IF EXISTS $5 WITH (FORCE)" >/dev/null 2>&1';
    const w = spawn('bash', ['-c', script, STACK_SH, dir, String(process.pid), String(keep), PG_SOCK, dbName], {
        detached: true,
        stdio: 'ignore',
    });
    w.unref();
    return w.pid;
}

/** Start nginx + knowhub in a fresh temporary directory on a free port;
 * prepare(dir), when given, fills the directory first (an old database);
 * sqlite: on SQLite even when the suite runs on PostgreSQL (to compare them). */
export async function startStack(env = {}, { prepare, sqlite = false } = {}) {
    if (!fs.existsSync(BIN)) throw new Error(`knowhub binary not found: ${BIN} (set KNOWHUB_BIN)`);
    let lastError = '';
    for (let attempt = 0; attempt < 5; attempt++) {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'knowhub-http-'));
        const port = await freePort();
        if (prepare) await prepare(dir);
        const db = onPostgres && !sqlite ? createDatabase() : null;
        const dbEnv = db ? { KNOWHUB_DATABASE_URL: db.url } : {};
        const r = run('bash', [STACK_SH, 'start', dir, '127.0.0.1', String(port)], { ...dbEnv, ...env }, 'ignore');
        if (r.status === 0) {
            const s = new Stack(dir, port, db, { ...dbEnv, ...env });
            running.add(s);
            if (db) urlOfDir.set(path.resolve(dir), db.url);
            s.watchdog = watchdog(dir, db ? db.name : '');
            return s;
        }
        lastError = r.stderr;
        run('bash', [STACK_SH, 'stop', dir]);
        if (db) dropDatabase(db.name);
        fs.rmSync(dir, { recursive: true, force: true });
    }
    throw new Error(`stack did not start: ${lastError}`);
}
