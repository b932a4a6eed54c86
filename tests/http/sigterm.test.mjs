// SIGTERM: knowhub stops accepting, lets in-flight requests finish and exits 0.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { BIN, bugLines, createDatabase, dropDatabase, onPostgres, startStack } from './lib/stack.mjs';
import { err, ok } from './lib/expect.mjs';
import { fcgiRequest } from './lib/fastcgi.mjs';

/** 'gone', 'zombie' (with its exit status) or 'alive'. */
function procState(pid) {
    let stat;
    try {
        stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
        return { state: 'gone' };
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state); field 52 (exit_code, waitpid form) is fields[49].
    if (fields[0] === 'Z') return { state: 'zombie', exitCode: fields.length > 49 ? Number(fields[49]) : undefined };
    return { state: 'alive' };
}

async function waitFor(pred, ms, what) {
    const end = Date.now() + ms;
    for (;;) {
        const v = await pred();
        if (v) return v;
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await sleep(10);
    }
}

/** Start `knowhub serve` as our own child in a fresh data directory. */
async function serveChild() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'knowhub-sig-'));
    const db = onPostgres ? createDatabase() : null;
    const dbEnv = db ? { KNOWHUB_DATABASE_URL: db.url } : {};
    const child = spawn(BIN, ['serve'], { env: { ...process.env, KNOWHUB_DATA: dir, KNOWHUB_THREADS: '2', ...dbEnv }, stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    child.stderr.on('data', (d) => (log += d));
    const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
    const sock = path.join(dir, 'run/knowhub.sock');
    await waitFor(() => fs.existsSync(sock), 10000, 'the socket');
    const token = fs.readFileSync(path.join(dir, 'admin.token'), 'utf8').trim();
    return {
        dir,
        child,
        sock,
        token,
        exited,
        log: () => log,
        cleanup() {
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
            fs.rmSync(dir, { recursive: true, force: true });
            if (db) dropDatabase(db.name);
        },
    };
}

test('SIGTERM to the knowhub of a stack: it stops, exits 0, and nginx answers 503', async () => {
    const s = await startStack();
    try {
        const tok = s.admin;
        const id = ok(await s.api('POST', '/api/knowledge', { token: tok, body: { scenario: 'before stop', content: 'c' } })).id;
        const pid = s.knowhubPid();
        assert.equal(procState(pid).state, 'alive');
        process.kill(pid, 'SIGTERM');
        const end = await waitFor(() => {
            const st = procState(pid);
            return st.state === 'alive' ? null : st;
        }, 10000, 'knowhub to exit');
        if (end.state === 'zombie' && end.exitCode !== undefined) assert.equal(end.exitCode, 0, 'exit status (waitpid form)');
        // kill -0 agrees once the zombie is reaped; the log says it stopped cleanly.
        await waitFor(() => s.log().includes('knowhub: stopped'), 5000, '"knowhub: stopped" in the log');
        assert.ok(!fs.existsSync(path.join(s.dir, 'run/knowhub.sock')), 'the socket is removed');
        assert.deepEqual(bugLines(s.log()), []);
        // nginx is still up and says the service is unavailable, in the envelope.
        const r = await s.api('GET', `/api/knowledge/${id}`, { token: tok });
        const e = err(r, 'SERVICE_UNAVAILABLE', 503);
        assert.equal(e.retry, true);
    } finally {
        await s.stop();
    }
});

test('SIGTERM and SIGINT: exit status 0', async () => {
    for (const sig of ['SIGTERM', 'SIGINT']) {
        const k = await serveChild();
        try {
            k.child.kill(sig);
            const { code, signal } = await k.exited;
            assert.equal(signal, null, `${sig}: killed by a signal`);
            assert.equal(code, 0, `${sig}: exit code; log:\n${k.log()}`);
            assert.match(k.log(), /knowhub: stopped/);
            assert.deepEqual(bugLines(k.log()), [], `${sig}: the log`);
            assert.ok(!fs.existsSync(k.sock));
        } finally {
            k.cleanup();
        }
    }
});

test('a request in flight when SIGTERM arrives is answered, then knowhub exits 0', async () => {
    const k = await serveChild();
    try {
        const body = Buffer.from(JSON.stringify({ scenario: 'in flight', content: 'finished after SIGTERM' }));
        const req = fcgiRequest(k.sock, {
            REQUEST_METHOD: 'POST',
            REQUEST_URI: '/api/knowledge',
            QUERY_STRING: '',
            CONTENT_TYPE: 'application/json',
            CONTENT_LENGTH: body.length,
            HTTP_AUTHORIZATION: `Bearer ${k.token}`,
            KNOWHUB_REQUEST_ID: 'in-flight-request-1',
        });
        await req.connected;
        req.sendBody(body.subarray(0, 10));
        await sleep(200); // a worker has the request and waits for the rest of the body
        k.child.kill('SIGTERM');
        await sleep(300);
        assert.equal(k.child.exitCode, null, 'knowhub must wait for the request in flight');
        req.sendBody(body.subarray(10));
        req.end();
        const r = await req.response;
        assert.equal(r.status, 200, r.body);
        assert.equal(r.headers['x-request-id'], 'in-flight-request-1');
        const json = JSON.parse(r.body);
        assert.equal(json.status, 'success');
        assert.equal(json.data.content, 'finished after SIGTERM');
        const { code, signal } = await k.exited;
        assert.equal(signal, null);
        assert.equal(code, 0, k.log());
        assert.match(k.log(), /knowhub: stopped/);
        assert.deepEqual(bugLines(k.log()), []);
    } finally {
        k.cleanup();
    }
});
