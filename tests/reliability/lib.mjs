// lib.mjs: helpers shared by the reliability tests (tests/reliability/*.test.mjs):
// knowhub alone killed and restarted under a running nginx, `knowhub check`,
// raw HTTP over a socket, the route table, latency figures.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { BIN, ROOT, assertNoBugs } from '../http/lib/stack.mjs';

export const OUT = path.join(ROOT, 'tests/out');
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Run a knowhub sub-command on the stack's data directory (its stderr shows no bug). */
export function knowhubCli(s, args, env = {}) {
    const r = spawnSync(BIN, args, {
        env: { ...process.env, KNOWHUB_DATA: s.dir, ...env },
        encoding: 'utf8',
        timeout: 120000,
    });
    if (r.error) throw r.error;
    assertNoBugs(r.stderr, `knowhub ${args.join(' ')}`);
    return r;
}

/** `knowhub check`: asserts exit 0 and "ok"; returns its report. */
export function assertCheckClean(s, what = '') {
    const r = knowhubCli(s, ['check']);
    const out = `${r.stdout}${r.stderr}`;
    assert.equal(r.status, 0, `knowhub check ${what} failed:\n${out}`);
    assert.match(r.stdout, /^ok$/m, out);
    return out;
}

/** 'gone', 'zombie' or 'alive'. */
export function procState(pid) {
    let stat;
    try {
        stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
        return 'gone';
    }
    return stat.slice(stat.lastIndexOf(')') + 2)[0] === 'Z' ? 'zombie' : 'alive';
}

/** Wait (bounded) until pred() is truthy; returns its value. */
export async function waitFor(pred, ms, what) {
    const end = Date.now() + ms;
    for (;;) {
        const v = await pred();
        if (v) return v;
        if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
        await sleep(20);
    }
}

/** Send signal to the stack's knowhub (by the PID in DIR/run/knowhub.pid) and wait until it is gone. */
export async function killKnowhub(s, signal = 'SIGKILL') {
    const pid = s.knowhubPid();
    process.kill(pid, signal);
    await waitFor(() => procState(pid) !== 'alive', 10000, `knowhub ${pid} to exit on ${signal}`);
    return pid;
}

/**
 * Start knowhub alone on the stack's data directory, as scripts/stack.sh does
 * (KNOWHUB_DATA=DIR knowhub serve 2>>DIR/logs/knowhub.log &, PID in
 * DIR/run/knowhub.pid), while nginx keeps running; wait until its socket is
 * back and nginx answers /api/health through it. It starts with the stack's
 * own settings (startStack's env, e.g. KNOWHUB_WRITE_RATE=0) and env on top.
 * Returns the PID.
 */
export async function startKnowhub(s, env = {}) {
    const sock = path.join(s.dir, 'run/knowhub.sock');
    fs.rmSync(sock, { force: true }); // a kill -9 leaves the old one behind
    const log = fs.openSync(path.join(s.dir, 'logs/knowhub.log'), 'a');
    const child = spawn(BIN, ['serve'], {
        env: { ...process.env, ...s.env, KNOWHUB_DATA: s.dir, ...env },
        detached: true,
        stdio: ['ignore', 'ignore', log],
    });
    fs.closeSync(log);
    child.unref();
    fs.writeFileSync(path.join(s.dir, 'run/knowhub.pid'), `${child.pid}\n`);
    await waitFor(() => fs.existsSync(sock) || procState(child.pid) !== 'alive', 10000, 'the knowhub socket');
    assert.equal(procState(child.pid), 'alive', `knowhub did not start:\n${s.log().slice(-2000)}`);
    await waitFor(async () => (await s.api('GET', '/api/health').catch(() => ({ status: 0 }))).status === 200, 10000, 'health through nginx');
    return child.pid;
}

/**
 * One HTTP request written byte for byte on a fresh socket (for what node's
 * client refuses to send: CR/LF in headers, raw bytes, broken framing).
 * The request should say "Connection: close"; the answer is read until the
 * server closes. Returns {status, headers (lower-case names), body, text,
 * json}; status 0 when the server closed the connection without an answer.
 */
export function rawHttp(port, request, timeout = 15000) {
    return new Promise((resolve, reject) => {
        const chunks = [];
        // Written without a half-close: nginx drops a proxied request whose client sent FIN (499).
        const sock = net.connect({ host: '127.0.0.1', port }, () => sock.write(request));
        sock.setTimeout(timeout, () => sock.destroy(new Error('raw request timed out')));
        sock.on('data', (c) => chunks.push(c));
        sock.on('end', () => sock.end());
        sock.on('error', (e) => (e.code === 'ECONNRESET' || e.code === 'EPIPE' ? null : reject(e)));
        sock.on('close', () => {
            const text = Buffer.concat(chunks).toString('latin1');
            const m = /^HTTP\/1\.[01] (\d{3})[^\r\n]*\r\n([\s\S]*?)\r\n\r\n([\s\S]*)$/.exec(text);
            if (!m) return resolve({ status: 0, headers: {}, body: '', text, json: null });
            const headers = {};
            for (const line of m[2].split('\r\n')) {
                const i = line.indexOf(':');
                if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
            }
            let body = m[3];
            if (headers['content-length']) body = body.slice(0, Number(headers['content-length']));
            let json = null;
            try {
                json = JSON.parse(Buffer.from(body, 'latin1').toString('utf8'));
            } catch {
                json = null;
            }
            resolve({ status: Number(m[1]), headers, body, text, json });
        });
    });
}

/** The route table of fcgi/app/routes.c: [{method, pattern, role}] (/api/ and /mcp). */
export function routeTable() {
    const table = fs.readFileSync(path.join(ROOT, 'fcgi/app/routes.c'), 'utf8');
    const routes = [...table.matchAll(/\{\s*"([A-Z]+)",\s*"(\/[^"]*)",\s*ROLE_([A-Z]+),\s*\w+\s*(?:,\s*\d+\s*)?\}/g)].map(
        ([, method, pattern, role]) => ({ method, pattern, role: role.toLowerCase() }),
    );
    assert.ok(routes.length >= 40, `only ${routes.length} routes parsed from fcgi/app/routes.c`);
    return routes;
}

export const ROLES = ['reader', 'agent', 'editor', 'admin'];
/** A role's rank (fcgi/http.h enum role); 'none' is below reader. */
export const rank = (role) => (role === 'none' ? -1 : ROLES.indexOf(role));

/** The p-th percentile (0-100) of a list of numbers (nearest rank). */
export function percentile(values, p) {
    if (!values.length) return 0;
    const v = [...values].sort((a, b) => a - b);
    return v[Math.min(v.length - 1, Math.max(0, Math.ceil((p / 100) * v.length) - 1))];
}

/** Write a figures file under tests/out. */
export function writeOut(name, data) {
    fs.mkdirSync(OUT, { recursive: true });
    fs.writeFileSync(path.join(OUT, name), `${JSON.stringify(data, null, 2)}\n`);
}

export const SECURITY_HEADERS = {
    'x-content-type-options': /^nosniff$/,
    'x-frame-options': /^DENY$/,
    'referrer-policy': /^no-referrer$/,
    'content-security-policy': /frame-ancestors 'none'/,
};

/** Every security header nginx adds (docs/operations.md), and a CSP that allows no inline script. */
export function assertSecurityHeaders(headers, what) {
    for (const [name, re] of Object.entries(SECURITY_HEADERS))
        assert.match(headers[name] || '', re, `${what}: ${name} is '${headers[name]}'`);
    const csp = headers['content-security-policy'];
    const script = /(?:^|;)\s*script-src ([^;]*)/.exec(csp) || /(?:^|;)\s*default-src ([^;]*)/.exec(csp);
    assert.ok(script, `${what}: CSP without script-src: ${csp}`);
    assert.doesNotMatch(script[1], /unsafe-inline|unsafe-eval|\*/, `${what}: CSP script-src ${script[1]}`);
    assert.match(headers['x-request-id'] || '', /^[A-Za-z0-9._-]{8,64}$/, `${what}: X-Request-Id`);
}
