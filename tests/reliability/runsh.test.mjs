// ./run.sh started again: for a data directory already served it says where
// and touches nothing (the most common newcomer move: "is it running? start
// it again" used to stop the running server: the port check failed and the
// failure path killed the PIDs of the shared data directory); on a port in
// use it starts and stops nothing; a pid file left naming another process is
// never taken for a running stack nor stopped; SIGTERM stops what it started.
// run.sh runs with KNOWHUB_BIN (the build under test): no build of its own.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BIN, ROOT, freePort } from '../http/lib/stack.mjs';
import { procState, waitFor } from './lib.mjs';

const alive = (pid) => procState(pid) === 'alive';

/** ./run.sh in the background (its own process group): {child, out, err, exit}. */
function startRun(env) {
    const child = spawn(path.join(ROOT, 'run.sh'), [], { cwd: ROOT, env: { ...process.env, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const r = { child, out: '', err: '', exit: null };
    child.stdout.on('data', (d) => (r.out += d));
    child.stderr.on('data', (d) => (r.err += d));
    r.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve((r.exit = { code, signal }))));
    return r;
}

/** ./run.sh to its end (a second start that must not stay): {status, stdout, stderr}. */
function runOnce(env) {
    return spawnSync(path.join(ROOT, 'run.sh'), [], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60000 });
}

async function health(port) {
    const r = await fetch(`http://127.0.0.1:${port}/api/health`);
    return { status: r.status, body: await r.json() };
}

const pidsOf = (data) => ({
    knowhub: fs.readFileSync(path.join(data, 'run/knowhub.pid'), 'utf8').trim(),
    nginx: fs.readFileSync(path.join(data, 'run/nginx-main.pid'), 'utf8').trim(),
});

describe('./run.sh started again', () => {
    let tmp, data, port, first;
    before(async () => {
        tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'knowhub-runsh-'));
        data = path.join(tmp, 'var');
        port = await freePort();
        first = startRun({ KNOWHUB_BIN: BIN, KNOWHUB_DATA: data, KNOWHUB_PORT: String(port) });
        await waitFor(() => first.out.includes('Press Ctrl-C') || first.exit, 90000, 'run.sh to start');
        assert.equal(first.exit, null, `run.sh ended: ${first.out}\n${first.err}`);
    });
    after(async () => {
        if (first && first.exit === null) {
            try {
                process.kill(-first.child.pid, 'SIGKILL');
            } catch {}
        }
        for (const d of fs.existsSync(tmp) ? fs.readdirSync(tmp) : []) {
            for (const f of ['knowhub.pid', 'nginx-main.pid']) {
                const p = path.join(tmp, d, 'run', f);
                if (fs.existsSync(p)) {
                    try {
                        process.kill(Number(fs.readFileSync(p, 'utf8')), 'SIGKILL');
                    } catch {}
                }
            }
        }
        fs.rmSync(tmp, { recursive: true, force: true });
    });

    test('for the data directory it serves, on its port or another: says where it runs, exit 0, nothing changed', async () => {
        const pids = pidsOf(data);
        const sock = fs.statSync(path.join(data, 'run/knowhub.sock')).ino;
        const other = await freePort();
        for (const p of [port, other]) {
            const r = runOnce({ KNOWHUB_BIN: BIN, KNOWHUB_DATA: data, KNOWHUB_PORT: String(p) });
            assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
            assert.match(r.stdout, /already running/);
            assert.ok(r.stdout.includes(`knowhub PID ${pids.knowhub}`) && r.stdout.includes(`nginx PID ${pids.nginx}`), r.stdout);
            assert.ok(r.stdout.includes(`http://127.0.0.1:${port}/`), r.stdout);
            assert.match(r.stdout, /Nothing was started or changed/);
            assert.deepEqual(pidsOf(data), pids);
            assert.equal(fs.statSync(path.join(data, 'run/knowhub.sock')).ino, sock, 'the running socket was not replaced');
            assert.ok(alive(Number(pids.knowhub)) && alive(Number(pids.nginx)));
            const h = await health(port);
            assert.equal(h.status, 200);
            assert.equal(h.body.data.ok, true);
        }
        await assert.rejects(fetch(`http://127.0.0.1:${other}/api/health`), 'nothing listens on the other port');
        assert.equal(first.exit, null, 'the first run.sh still runs');
    });

    test('another data directory on the port in use: exit 1, nothing started, nothing stopped, no database made', async () => {
        const other = path.join(tmp, 'other');
        const r = runOnce({ KNOWHUB_BIN: BIN, KNOWHUB_DATA: other, KNOWHUB_PORT: String(port) });
        assert.equal(r.status, 1, `${r.stdout}\n${r.stderr}`);
        assert.match(r.stderr, /already in use/);
        assert.match(r.stderr, /Nothing was started or changed/);
        assert.equal(fs.existsSync(path.join(other, 'knowhub.db')), false);
        assert.equal((await health(port)).status, 200);
        assert.ok(alive(Number(pidsOf(data).knowhub)));
    });

    test('pid files that name another live process are not a running stack, and that process is never stopped', async () => {
        // A data directory whose pid files (left by a crash) now name an
        // unrelated live process: run.sh starts a stack there, and its stop
        // ends its own servers only.
        const stale = path.join(tmp, 'stale');
        fs.mkdirSync(path.join(stale, 'run'), { recursive: true, mode: 0o700 });
        const bystander = spawn('sleep', ['300'], { stdio: 'ignore' });
        try {
            for (const f of ['knowhub.pid', 'nginx-main.pid']) fs.writeFileSync(path.join(stale, 'run', f), `${bystander.pid}\n`);
            const p = await freePort();
            const r = startRun({ KNOWHUB_BIN: BIN, KNOWHUB_DATA: stale, KNOWHUB_PORT: String(p) });
            await waitFor(() => r.out.includes('Press Ctrl-C') || r.exit, 90000, 'run.sh on the stale directory to start');
            assert.equal(r.exit, null, `${r.out}\n${r.err}`);
            assert.doesNotMatch(r.out, /already running/);
            assert.equal((await health(p)).status, 200);
            const mine = pidsOf(stale);
            assert.notEqual(mine.knowhub, String(bystander.pid));
            process.kill(r.child.pid, 'SIGTERM');
            await r.exited;
            assert.deepEqual(r.exit, { code: 0, signal: null }, r.err);
            await waitFor(() => !alive(Number(mine.knowhub)) && !alive(Number(mine.nginx)), 15000, 'its servers to stop');
            assert.ok(alive(bystander.pid), 'the bystander process named by the old pid files still runs');
            assert.equal((await health(port)).status, 200, 'the first stack still serves');
        } finally {
            bystander.kill('SIGKILL');
        }
    });

    test('SIGTERM stops the servers it started and run.sh exits 0', async () => {
        const pids = pidsOf(data);
        process.kill(first.child.pid, 'SIGTERM');
        await first.exited;
        assert.deepEqual(first.exit, { code: 0, signal: null }, first.err);
        await waitFor(() => !alive(Number(pids.knowhub)) && !alive(Number(pids.nginx)), 15000, 'the servers to stop');
        assert.equal(fs.existsSync(path.join(data, 'run/knowhub.pid')), false);
        assert.equal(fs.existsSync(path.join(data, 'run/url')), false);
        await assert.rejects(fetch(`http://127.0.0.1:${port}/api/health`));
    });
});
