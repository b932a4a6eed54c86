// Results knowhub used to ignore (issue 23): an answer that could not be
// written (the connection closed mid-answer: counted in
// knowhub_responses_undelivered_total, said once on stderr, the access line
// marked "delivered":false, the server keeps serving), a streamed export
// whose store read fails midway (cut off: the client's reply fails instead of
// ending like a whole export; counted and marked the same way), an access log that
// cannot be written (lines counted in knowhub_log_lines_lost_total, said
// once), and a start that cannot work: a socket knowhub cannot make or give
// mode 0660, an LLM client it cannot make (exit 1 with a message, no socket
// left). The failures of chmod and curl_easy_init are forced by a small
// LD_PRELOAD library built here with cc: no root needed.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BIN, assertNoBugs, startStack } from './lib/stack.mjs';
import { casesFault, sql } from './lib/llmtest.mjs';
import { params as fcgiParams, record, stdoutOf } from './lib/fastcgi.mjs';

// ---- a minimal FastCGI client (responder) that can leave mid-answer ----

/**
 * Send one request (BEGIN_REQUEST, PARAMS, an empty STDIN) on a unix socket.
 * Resolves on close with {stdout (the STDOUT records' bytes), ended (an
 * END_REQUEST came), received (bytes read)}. leaveAfter: once that many
 * bytes arrived, stop reading, wait pauseMs (knowhub fills the socket's
 * buffer and blocks in write) and destroy the socket.
 */
function fcgi(socketPath, params, { leaveAfter = 0, pauseMs = 300 } = {}) {
    return new Promise((resolve, reject) => {
        const sock = net.createConnection(socketPath);
        const chunks = [];
        let received = 0;
        let leaving = false;
        sock.on('connect', () => {
            const begin = Buffer.alloc(8);
            begin.writeUInt16BE(1, 0); // FCGI_RESPONDER, flags 0: knowhub closes after the answer
            sock.write(Buffer.concat([record(1, begin), record(4, fcgiParams(params)), record(4), record(5)]));
        });
        sock.on('data', (d) => {
            chunks.push(d);
            received += d.length;
            if (leaveAfter && received >= leaveAfter && !leaving) {
                leaving = true;
                sock.pause();
                setTimeout(() => sock.destroy(), pauseMs);
            }
        });
        sock.on('error', reject);
        sock.on('close', () => {
            resolve({ ...stdoutOf(Buffer.concat(chunks)), received });
        });
    });
}

/** The value of an unlabelled series in an exposition (NaN when absent). */
const sample = (text, name) => {
    const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
    return m ? Number(m[1]) : NaN;
};
const scrape = async (st, name) => {
    const r = await st.api('GET', '/metrics');
    assert.equal(r.status, 200, r.text.slice(0, 200));
    return sample(r.text, name);
};
const waitFor = async (what, fn, ms = 10000) => {
    for (const until = Date.now() + ms; ; await new Promise((r) => setTimeout(r, 50))) {
        // an error (a connection nginx closed, at a reload say) is one more try
        if (await Promise.resolve().then(fn).catch(() => false)) return;
        assert.ok(Date.now() < until, `timed out waiting for ${what}`);
    }
};
const accessLines = (dir) =>
    fs
        .readFileSync(path.join(dir, 'logs/access.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l)
        .map((l) => JSON.parse(l));

describe('a client that leaves mid-answer', () => {
    let s;
    const ENTRIES = 300;
    before(async () => {
        s = await startStack({ KNOWHUB_THREADS: '2', KNOWHUB_WRITE_RATE: '0' });
        const content = 'Read the file with an explicit encoding. '.repeat(40); // 1.6 kB
        for (let i = 0; i < ENTRIES; i += 10)
            await Promise.all(
                Array.from({ length: 10 }, async (_, k) => {
                    const r = await s.api('POST', '/api/knowledge', { token: s.admin, body: { scenario: `leaving client scenario ${i + k}`, content } });
                    assert.equal(r.json?.status, 'success', r.text.slice(0, 300));
                }),
            );
    });
    after(async () => {
        await s?.stop();
    });

    test('a large export left after its first bytes: counted once, logged once, "delivered":false; the server keeps serving', async () => {
        const before0 = await scrape(s, 'knowhub_responses_undelivered_total');
        assert.equal(before0, 0);
        const id = 'leave-early-0001';
        const left = await fcgi(
            s.socket(),
            {
                REQUEST_METHOD: 'GET',
                REQUEST_URI: '/api/knowledge/export',
                QUERY_STRING: '',
                REMOTE_ADDR: '127.0.0.1',
                HTTP_AUTHORIZATION: `Bearer ${s.admin}`,
                KNOWHUB_REQUEST_ID: id,
            },
            { leaveAfter: 1 },
        );
        assert.match(left.stdout, /^Status: 200/);
        assert.ok(!left.ended, 'the client left before the end');
        await waitFor('the undelivered answer to be counted', async () => (await scrape(s, 'knowhub_responses_undelivered_total')) === 1);
        await waitFor('its access line', () => accessLines(s.dir).some((l) => l.request_id === id));
        const line = accessLines(s.dir).find((l) => l.request_id === id);
        assert.equal(line.delivered, false);
        assert.equal(line.route, '/api/knowledge/export');
        assert.equal(line.status, 200);
        // every delivered answer's line has no such field
        assert.ok(accessLines(s.dir).filter((l) => l.request_id !== id).every((l) => !('delivered' in l)));
        const said = s.log().split('\n').filter((l) => l.includes(id));
        assert.equal(said.length, 1, said.join('\n'));
        assert.match(said[0], /GET \/api\/knowledge\/export: the answer was not delivered \((Broken pipe|Connection reset by peer)\)/);
        // the server goes on: a whole export through nginx, every entry
        const full = await s.api('GET', '/api/knowledge/export', { token: s.admin });
        assert.equal(full.status, 200);
        assert.equal(full.text.split('\n').filter((l) => l).length, ENTRIES);
        assert.ok(full.text.endsWith('\n'));
        assert.equal((await s.api('GET', '/api/health')).status, 200);
        assert.equal(await scrape(s, 'knowhub_responses_undelivered_total'), 1);
    });
});

describe('an export that fails midway', () => {
    // A store error after the head and some lines went out cannot be said in
    // the answer any more: knowhub closes the FastCGI connection without its
    // end, nginx ends the chunked reply without its last chunk, and every
    // client reports an incomplete answer instead of a short export that
    // looks whole. One worker thread: the one that cut the answer off must
    // answer the next requests.
    let s;
    const BEFORE = 200; // entries exported before the one that fails (~330 kB)
    // The fault (casesFault): reading the helpful cases fails; only the entry
    // with a helpful case has one.
    const write = async (p, body) => {
        const r = await s.api('POST', '/api/knowledge/write', { token: s.admin, body: { category: 'experiences', path: p, content: `---\ntitle: ${p}\n---\n\n${body}\n` } });
        assert.equal(r.json?.status, 'success', r.text.slice(0, 300));
        return r.json.data;
    };
    /** GET the export with fetch, reading what arrives: {status, text, error (the read's, or null)}. */
    const fetchExport = async (requestId) => {
        const r = await fetch(`${s.base}/api/knowledge/export`, { headers: { Authorization: `Bearer ${s.admin}`, 'X-Request-Id': requestId } });
        const reader = r.body.getReader();
        const chunks = [];
        let error = null;
        try {
            for (let c = await reader.read(); !c.done; c = await reader.read()) chunks.push(c.value);
        } catch (e) {
            error = e;
        }
        return { status: r.status, text: Buffer.concat(chunks).toString('utf8'), error };
    };

    before(async () => {
        s = await startStack({ KNOWHUB_THREADS: '1', KNOWHUB_WRITE_RATE: '0' });
        const content = 'Read the file with an explicit encoding. '.repeat(40); // 1.6 kB
        for (let i = 0; i < BEFORE; i += 10) await Promise.all(Array.from({ length: 10 }, (_, k) => write(`a-${String(i + k).padStart(4, '0')}.md`, content)));
        // after every a-*.md: the only entry with a helpful case
        const broken = await write('m-broken.md', content);
        const c = await s.api('PUT', `/api/knowledge/${broken.id}`, { token: s.admin, body: { add_helpful_case: { case_id: 'c-1', result: 'helped' } } });
        assert.equal(c.json?.status, 'success', c.text.slice(0, 300));
        await write('z-last.md', content);
    });
    after(() => {
        s?.stopSync(); // this stack logs the internal error the test provokes
    });

    test('the client sees an incomplete answer, not a short export that ends normally; counted, logged; the server keeps serving', async () => {
        const whole = await fetchExport('export-whole-0001');
        assert.equal(whole.error, null, 'the export before the fault ends normally');
        assert.equal(whole.text.split('\n').filter(Boolean).length, BEFORE + 2);
        const before0 = await scrape(s, 'knowhub_responses_undelivered_total');
        sql(s, casesFault(s).plant);
        const id = 'export-cut-0001';
        let cut;
        try {
            cut = await fetchExport(id);
            // through nginx, by fetch (undici): the body's read fails ("terminated")
            assert.equal(cut.status, 200);
            assert.ok(cut.error, `the export ended normally after ${cut.text.split('\n').filter(Boolean).length} of ${BEFORE + 2} lines: a client cannot tell it is incomplete`);
            assert.match(String(cut.error?.message), /terminated/);
            // and by node:http: the response is 'aborted', never 'end'
            const viaHttp = await new Promise((resolve) => {
                const req = http.get(`${s.base}/api/knowledge/export`, { headers: { Authorization: `Bearer ${s.admin}` } }, (res) => {
                    let bytes = 0;
                    res.on('data', (d) => (bytes += d.length));
                    res.on('end', () => resolve({ ended: true, bytes }));
                    res.on('error', (e) => resolve({ ended: false, bytes, error: e.message }));
                });
                req.on('error', (e) => resolve({ ended: false, error: e.message }));
            });
            assert.equal(viaHttp.ended, false, JSON.stringify(viaHttp));
            assert.match(viaHttp.error, /aborted/);
        } finally {
            sql(s, casesFault(s).unplant);
        }
        // What came is whole lines of the entries before the broken one (nginx
        // passed on what knowhub had written); never the broken one or any after.
        const lines = cut.text.split('\n');
        lines.pop(); // what follows the last newline
        const paths = lines.map((l) => JSON.parse(l).path);
        assert.ok(paths.length > 0, 'lines went out before the failure');
        assert.ok(paths.every((p) => p.startsWith('a-')), paths.slice(-3).join(' '));
        assert.ok(!cut.text.includes('m-broken'), 'nothing of the entry that failed');
        // counted (one per cut answer: two above), the cut said once on stderr, the access line marked
        await waitFor('the cut answers to be counted', async () => (await scrape(s, 'knowhub_responses_undelivered_total')) === before0 + 2);
        const said = s.log().split('\n').filter((l) => l.includes(id) && l.includes('cut off'));
        assert.equal(said.length, 1, s.log().slice(-2000));
        assert.match(said[0], /GET \/api\/knowledge\/export: the streamed answer failed after \d+ bytes had gone out: cut off/);
        await waitFor('its access line', () => accessLines(s.dir).some((l) => l.request_id === id));
        const line = accessLines(s.dir).find((l) => l.request_id === id);
        assert.equal(line.delivered, false);
        assert.equal(line.status, 500);
        // the one worker goes on answering: reads, a write, the whole export again
        for (let i = 0; i < 5; i++) assert.equal((await s.api('GET', '/api/health')).status, 200);
        await write('after-cut.md', 'written after the cut');
        const again = await fetchExport('export-whole-0002');
        assert.equal(again.error, null);
        assert.equal(again.status, 200);
        assert.equal(again.text.split('\n').filter(Boolean).length, BEFORE + 3);
        assert.ok(again.text.endsWith('\n'));
        assert.equal(await scrape(s, 'knowhub_responses_undelivered_total'), before0 + 2);
    });
});

describe('an access log that cannot be written', () => {
    test('every lost line is counted; stderr says it once', async () => {
        // logs/access.jsonl is /dev/full: every write fails with ENOSPC
        const st = await startStack({}, {
            prepare: (dir) => {
                fs.mkdirSync(path.join(dir, 'logs'), { recursive: true });
                fs.symlinkSync('/dev/full', path.join(dir, 'logs/access.jsonl'));
            },
        });
        try {
            for (let i = 0; i < 5; i++) assert.equal((await st.api('GET', '/api/health')).status, 200);
            // each line is written once its answer went out: wait for the fifth
            await waitFor('5 lost lines', async () => (await scrape(st, 'knowhub_log_lines_lost_total')) >= 5);
            const said = st.log().split('\n').filter((l) => l.includes('cannot write to the log'));
            assert.equal(said.length, 1, said.join('\n'));
            assert.match(said[0], /access\.jsonl: No space left on device; its lines are lost \(counted in knowhub_log_lines_lost_total\)/);
            // the audit log, another file, still works
            const created = await st.api('POST', '/api/knowledge', { token: st.admin, body: { scenario: 'audited while the access log is full', content: 'c' } });
            assert.equal(created.json?.status, 'success', created.text.slice(0, 200));
            assert.match(fs.readFileSync(path.join(st.dir, 'logs/audit.jsonl'), 'utf8'), /knowledge\.create/);
        } finally {
            await st.stop();
        }
    });
});

describe('a start that cannot work stops with a message', () => {
    let tmp, shim;
    before(() => {
        tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'knowhub-failstart-'));
        // chmod of the socket, or curl_easy_init, fails when KNOWHUB_TEST_FAIL names it
        fs.writeFileSync(
            path.join(tmp, 'fail.c'),
            `#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
static int failing(const char *what)
{
    const char *f = getenv("KNOWHUB_TEST_FAIL");
    return f && strcmp(f, what) == 0;
}
int chmod(const char *path, mode_t mode)
{
    int (*real)(const char *, mode_t) = (int (*)(const char *, mode_t))dlsym(RTLD_NEXT, "chmod");
    if (failing("chmod") && strstr(path, "knowhub.sock")) {
        errno = EPERM;
        return -1;
    }
    return real(path, mode);
}
void *curl_easy_init(void)
{
    void *(*real)(void) = (void *(*)(void))dlsym(RTLD_NEXT, "curl_easy_init");
    return failing("curl_easy_init") ? NULL : real();
}
`,
        );
        shim = path.join(tmp, 'fail.so');
        const cc = spawnSync('cc', ['-shared', '-fPIC', '-o', shim, path.join(tmp, 'fail.c'), '-ldl'], { encoding: 'utf8' });
        assert.equal(cc.status, 0, `cc: ${cc.error || cc.stderr}`);
    });
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    /** The environment of knowhub serve on DIR (SQLite) plus env. The
     * LD_PRELOAD library comes before a sanitizer build's runtime: ASan must
     * not refuse that. */
    const serveEnv = (dir, env) => ({
        ...process.env,
        KNOWHUB_DATA: dir,
        KNOWHUB_SOCKET: '',
        KNOWHUB_THREADS: '2',
        ASAN_OPTIONS: `${process.env.ASAN_OPTIONS ? `${process.env.ASAN_OPTIONS}:` : ''}verify_asan_link_order=0`,
        ...env,
    });
    /** knowhub serve on a fresh data directory until it exits (10 s at most); {status, signal, stderr, dir}. */
    const serve = (name, env) => {
        const dir = path.join(tmp, name);
        const r = spawnSync(BIN, ['serve'], {
            env: serveEnv(dir, env),
            encoding: 'utf8',
            timeout: 10000,
        });
        assertNoBugs(r.stderr, 'knowhub serve');
        return { status: r.status, signal: r.signal, stderr: r.stderr, dir };
    };
    const socketsIn = (dir) => (fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.includes('.sock')) : []);

    test('chmod 0660 of the socket fails: exit 1, the socket and the reason named, no socket left', () => {
        const r = serve('chmod', { LD_PRELOAD: shim, KNOWHUB_TEST_FAIL: 'chmod' });
        assert.equal(r.status, 1, `status ${r.status} ${r.signal}: ${r.stderr}`);
        assert.match(r.stderr, /cannot give the socket \S*\/run\/knowhub\.sock(\.new)? mode 0660 \(Operation not permitted\): nginx could not connect; not serving/);
        assert.deepEqual(socketsIn(path.join(r.dir, 'run')), []);
    });

    test('the socket directory does not exist: exit 1 with the path and the reason (not libfcgi exiting with errno)', () => {
        const r = serve('nodir', { KNOWHUB_SOCKET: path.join(tmp, 'missing/knowhub.sock') });
        assert.equal(r.status, 1, `status ${r.status} ${r.signal}: ${r.stderr}`);
        assert.match(r.stderr, /knowhub: cannot listen on the socket \S*\/missing\/knowhub\.sock(\.new)?: No such file or directory/);
    });

    test('no HTTP client for the LLM (curl_easy_init fails): exit 1 before the socket, with a message', () => {
        const r = serve('curl', { LD_PRELOAD: shim, KNOWHUB_TEST_FAIL: 'curl_easy_init' });
        assert.equal(r.status, 1, `status ${r.status} ${r.signal}: ${r.stderr}`);
        assert.match(r.stderr, /cannot make an HTTP client for the LLM \(curl_easy_init failed/);
        assert.deepEqual(socketsIn(path.join(r.dir, 'run')), []);
    });

    test('the same library lets a normal start through (the failures above are the forced ones)', async () => {
        // serve with the library but nothing to fail, stopped once its socket is there
        const dir = path.join(tmp, 'normal');
        const child = spawn(BIN, ['serve'], {
            env: serveEnv(dir, { LD_PRELOAD: shim }),
            stdio: ['ignore', 'ignore', 'pipe'],
        });
        let stderr = '';
        child.stderr.on('data', (d) => (stderr += d));
        const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
        await waitFor('the socket', () => fs.existsSync(path.join(dir, 'run/knowhub.sock')) || child.exitCode !== null);
        assert.equal((fs.statSync(path.join(dir, 'run/knowhub.sock')).mode & 0o777).toString(8), '660');
        child.kill('SIGTERM');
        assert.equal(await exited, 0, stderr);
        assertNoBugs(stderr, 'knowhub serve');
    });
});
