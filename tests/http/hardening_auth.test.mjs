// Hardening round 2 (issue 12), the browser-login side: login CSRF and the
// content-type rule, cookie GETs that write, nginx's own 400/405 in the
// envelope, HEAD on GET routes, the login cookie's name, file modes of a
// stack's data directory, and `knowhub login-link`.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BIN, ROOT, assertNoBugs, createDatabase, dropDatabase, freePort, onPostgres, startStack } from './lib/stack.mjs';
import { err, ok } from './lib/expect.mjs';
import { startFakeLlm } from './lib/fakellm.mjs';
import { callsOf, llmEnv } from './lib/llmtest.mjs';

let s;
before(async () => {
    s = await startStack();
});
after(async () => {
    await s?.stop();
});

/** Bytes as sent, answer as received (for what node's http client will not send). */
function rawHttp(port, text, timeout = 10000) {
    return new Promise((resolve, reject) => {
        const sock = net.connect(port, '127.0.0.1');
        const chunks = [];
        sock.setTimeout(timeout, () => sock.destroy(new Error('raw request timed out')));
        sock.on('connect', () => sock.write(text));
        sock.on('data', (c) => chunks.push(c));
        sock.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
        sock.on('error', reject);
    });
}

/** Split a raw HTTP/1.1 answer into {status, headers, body, json}. */
function parseRaw(text) {
    const [head, ...rest] = text.split('\r\n\r\n');
    const lines = head.split('\r\n');
    const status = Number(lines[0].split(' ')[1]);
    const headers = {};
    for (const l of lines.slice(1)) {
        const i = l.indexOf(':');
        headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
    }
    const body = rest.join('\r\n\r\n');
    let json = null;
    try {
        json = JSON.parse(body);
    } catch {
        json = null;
    }
    return { status, headers, body, json };
}

const host = () => `127.0.0.1:${s.port}`;
const origin = () => `http://${host()}`;

/** Log in like the panel does; returns {cookie, csrf, setCookie}. */
async function login(token = s.admin, headers = {}) {
    const h = Object.fromEntries(Object.entries({ Origin: origin(), 'Sec-Fetch-Site': 'same-origin', ...headers }).filter(([, v]) => v !== undefined));
    const r = await s.api('POST', '/api/auth/login', { body: { token }, headers: h });
    const d = ok(r);
    const setCookie = r.headers['set-cookie'][0];
    return { cookie: setCookie.split(';')[0], csrf: d.csrf_token, setCookie };
}

describe('login CSRF and the content-type rule (item 1)', () => {
    test('a cross-site text/plain form post cannot log in', async () => {
        // What <form enctype="text/plain"> on another site sends.
        const r = await s.api('POST', '/api/auth/login', {
            rawBody: `{"token":"${s.admin}","x":"="}`,
            headers: { 'Content-Type': 'text/plain', Origin: 'http://evil.example', 'Sec-Fetch-Site': 'cross-site' },
        });
        assert.equal(r.headers['set-cookie'], undefined);
        err(r, 'FORBIDDEN', 403);
    });

    test('login refuses a foreign Origin, and Sec-Fetch-Site cross-site or same-site', async () => {
        for (const headers of [
            { Origin: 'http://evil.example' },
            { Origin: 'null' },
            { Origin: `http://127.0.0.1:${s.port + 1}` }, // another port: same site, other origin
            { 'Sec-Fetch-Site': 'cross-site' },
            { 'Sec-Fetch-Site': 'same-site' },
        ]) {
            const r = await s.api('POST', '/api/auth/login', { body: { token: s.admin }, headers });
            assert.equal(r.headers['set-cookie'], undefined, JSON.stringify(headers));
            err(r, 'FORBIDDEN', 403);
        }
    });

    test('login needs application/json', async () => {
        for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx']) {
            const r = await s.api('POST', '/api/auth/login', {
                rawBody: JSON.stringify({ token: s.admin }),
                headers: { 'Content-Type': type },
            });
            assert.equal(r.headers['set-cookie'], undefined, type);
            err(r, 'UNSUPPORTED_MEDIA_TYPE', 415);
        }
        const none = await s.api('POST', '/api/auth/login', { rawBody: JSON.stringify({ token: s.admin }), headers: { 'Content-Type': '' } });
        err(none, 'UNSUPPORTED_MEDIA_TYPE', 415);
    });

    test('the panel\'s own login (same origin, JSON) and a non-browser client (no Origin) still work', async () => {
        await login();
        await login(s.admin, { 'Sec-Fetch-Site': 'none', Origin: undefined });
        ok(await s.api('POST', '/api/auth/login', { body: { token: s.admin }, headers: { 'Content-Type': 'Application/JSON; charset=utf-8' } }));
    });

    test('a cookie request with a body must be application/json, even with the CSRF header', async () => {
        const { cookie, csrf } = await login();
        for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
            const r = await s.api('POST', '/api/knowledge/list', {
                rawBody: '{"category":"rules"}',
                headers: { Cookie: cookie, 'X-CSRF-Token': csrf, 'Content-Type': type },
            });
            err(r, 'UNSUPPORTED_MEDIA_TYPE', 415);
        }
        ok(await s.api('POST', '/api/knowledge/list', { rawBody: '{"category":"rules"}', headers: { Cookie: cookie, 'X-CSRF-Token': csrf } }));
        // A body-less cookie POST (logout) needs no content type.
        ok(await s.api('POST', '/api/auth/logout', { headers: { Cookie: cookie, 'X-CSRF-Token': csrf } }));
    });

    test('a cookie request from another site or another origin is refused', async () => {
        const { cookie, csrf } = await login();
        for (const headers of [{ 'Sec-Fetch-Site': 'same-site' }, { 'Sec-Fetch-Site': 'cross-site' }, { Origin: 'http://evil.example' }]) {
            err(await s.api('GET', '/api/auth/me', { headers: { Cookie: cookie, ...headers } }), 'FORBIDDEN', 403);
            err(
                await s.api('POST', '/api/knowledge/list', { body: { category: 'rules' }, headers: { Cookie: cookie, 'X-CSRF-Token': csrf, ...headers } }),
                'FORBIDDEN',
                403,
            );
        }
        ok(await s.api('GET', '/api/auth/me', { headers: { Cookie: cookie, 'Sec-Fetch-Site': 'same-origin' } }));
    });

    test('Bearer requests keep working without application/json (curl -d) and whatever their Origin', async () => {
        const r = await s.api('POST', '/api/knowledge/list', {
            token: s.admin,
            rawBody: '{"category":"rules"}',
            headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: 'http://elsewhere.example' },
        });
        ok(r);
    });
});

describe('cookie GETs that write (item 3)', () => {
    test('a search that logs injections (trace_id) needs the CSRF header under a cookie', async () => {
        const agent = s.token('default', 'agent', 'hardening');
        ok(await s.api('POST', '/api/knowledge', { token: agent, body: { scenario: 'csrf trace scenario', content: 'csrf trace content words' } }));
        const { cookie, csrf } = await login(agent);
        const q = '/api/knowledge/search?q=csrf%20trace&min_score=1&trace_id=csrf-get-1';
        err(await s.api('GET', q, { headers: { Cookie: cookie } }), 'FORBIDDEN', 403);
        assert.equal((await s.api('HEAD', q, { headers: { Cookie: cookie } })).status, 403);
        // Nothing was logged.
        const none = await s.api('GET', '/api/traces/csrf-get-1/knowledge_log', { token: s.admin });
        assert.ok(none.json.status === 'error' || none.json.data.entries.length === 0, none.text);
        // With the header it logs; without trace_id it is a plain read.
        const d = ok(await s.api('GET', q, { headers: { Cookie: cookie, 'X-CSRF-Token': csrf } }));
        assert.equal(d.trace_id, 'csrf-get-1');
        assert.ok(ok(await s.api('GET', '/api/traces/csrf-get-1/knowledge_log', { token: s.admin })).entries.length > 0);
        ok(await s.api('GET', '/api/knowledge/search?q=csrf%20trace&min_score=1', { headers: { Cookie: cookie } }));
        // Bearer callers are unchanged.
        ok(await s.api('GET', '/api/knowledge/search?q=csrf%20trace&min_score=1&trace_id=csrf-get-2', { token: agent }));
    });
});

describe('cookie GETs that ask the LLM (item 3, the same class)', () => {
    test('a search routed by the LLM (it writes the usage ledger) needs the CSRF header under a cookie', async () => {
        const llm = await startFakeLlm();
        const ls = await startStack(llmEnv(llm, { KNOWHUB_LLM_ROUTER_MODEL: 'router-mini', KNOWHUB_LLM_MODEL: 'main-model' }));
        try {
            for (let i = 1; i <= 3; i++)
                ok(await ls.api('POST', '/api/knowledge', { token: ls.admin, body: { scenario: `ledger csrf scenario ${i}`, content: `ledger csrf content ${i}` } }));
            const r = await ls.api('POST', '/api/auth/login', { body: { token: ls.admin } });
            const cookie = r.headers['set-cookie'][0].split(';')[0];
            const csrf = ok(r).csrf_token;
            llm.reset();
            const q = '/api/knowledge/search?q=ledger%20csrf';
            err(await ls.api('GET', q, { headers: { Cookie: cookie } }), 'FORBIDDEN', 403);
            assert.equal(callsOf(llm, 'route').length, 0, 'the LLM was asked');
            const d = ok(await ls.api('GET', q, { headers: { Cookie: cookie, 'X-CSRF-Token': csrf } }));
            assert.equal(d.routing, 'llm');
            ok(await ls.api('GET', q, { token: ls.admin })); // Bearer: unchanged
        } finally {
            await ls.stop();
            await llm.stop();
        }
    });
});

describe('nginx\'s own errors in the envelope (item 4)', () => {
    test('a malformed chunked body to the API is the JSON 400', async () => {
        const text = await rawHttp(
            s.port,
            `POST /api/knowledge HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${s.admin}\r\n` +
                'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
        );
        const r = parseRaw(text);
        assert.equal(r.status, 400, text.slice(0, 400));
        assert.match(r.headers['content-type'] || '', /^application\/json/, text.slice(0, 400));
        assert.equal(r.json?.error?.code, 'INVALID_REQUEST', text.slice(0, 400));
        assert.equal(r.json.error.request_id, r.headers['x-request-id']);
    });

    test('an unknown Transfer-Encoding (501) and HTTP version (505) are the envelope too', async () => {
        for (const [want, text] of [
            [501, `POST /api/knowledge HTTP/1.1\r\nHost: ${host()}\r\nTransfer-Encoding: gzip\r\nConnection: close\r\n\r\n`],
            [505, `GET /api/health HTTP/2.0\r\nHost: ${host()}\r\nConnection: close\r\n\r\n`],
        ]) {
            const raw = await rawHttp(s.port, text);
            const r = parseRaw(raw);
            assert.equal(r.status, want, raw.slice(0, 400));
            assert.match(r.headers['content-type'] || '', /^application\/json/, raw.slice(0, 400));
            assert.equal(r.json?.error?.code, 'INVALID_REQUEST', raw.slice(0, 400));
        }
    });

    test('TRACE and CONNECT are the JSON 405 with Allow', async () => {
        for (const [method, target] of [
            ['TRACE', '/api/knowledge'],
            ['TRACE', '/'],
            ['CONNECT', '/api/health'],
        ]) {
            const text = await rawHttp(s.port, `${method} ${target} HTTP/1.1\r\nHost: ${host()}\r\nConnection: close\r\n\r\n`);
            const r = parseRaw(text);
            assert.equal(r.status, 405, `${method} ${target}: ${text.slice(0, 400)}`);
            assert.match(r.headers['content-type'] || '', /^application\/json/, text.slice(0, 400));
            assert.equal(r.json?.error?.code, 'METHOD_NOT_ALLOWED', text.slice(0, 400));
            assert.ok(r.headers.allow && !/TRACE|CONNECT/.test(r.headers.allow), `Allow: ${r.headers.allow}`);
        }
    });
});

describe('HEAD on GET routes (item 5)', () => {
    test('HEAD answers like GET without a body', async () => {
        const r = await s.api('HEAD', '/api/health');
        assert.equal(r.status, 200);
        assert.equal(r.raw.length, 0);
        assert.match(r.headers['content-type'] || '', /^application\/json/);
        const k = await s.api('HEAD', '/api/knowledge?limit=1', { token: s.admin });
        assert.equal(k.status, 200);
        assert.equal(k.raw.length, 0);
        const x = await s.api('HEAD', '/api/knowledge/export', { token: s.admin });
        assert.equal(x.status, 200);
        assert.equal(x.raw.length, 0);
        // Authentication still applies.
        assert.equal((await s.api('HEAD', '/api/knowledge')).status, 401);
    });

    test('HEAD on a POST-only route is 405, and Allow names HEAD next to GET', async () => {
        const r = await s.api('HEAD', '/api/auth/login');
        assert.equal(r.status, 405);
        assert.equal(r.headers.allow, 'POST');
        const p = await s.api('POST', '/api/health', { body: {} });
        err(p, 'METHOD_NOT_ALLOWED', 405);
        assert.equal(p.headers.allow, 'GET, HEAD');
    });
});

describe('the login cookie (item 6)', () => {
    test('over https (X-Forwarded-Proto from a TLS proxy) the cookie is __Host- and Secure, and only that name counts', async () => {
        const tls = { 'X-Forwarded-Proto': 'https', Origin: `https://${host()}` };
        const r = await s.api('POST', '/api/auth/login', { body: { token: s.admin }, headers: tls });
        const d = ok(r);
        const sc = r.headers['set-cookie'][0];
        assert.match(sc, /^__Host-kh_session=[A-Za-z0-9_-]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/);
        const cookie = sc.split(';')[0];
        ok(await s.api('GET', '/api/auth/me', { headers: { Cookie: cookie, 'X-Forwarded-Proto': 'https' } }));
        // The unprefixed name (settable by any sibling host or plain-http page) is not a login over https.
        const plain = cookie.replace(/^__Host-/, '');
        assert.equal((await s.api('GET', '/api/auth/me', { headers: { Cookie: plain, 'X-Forwarded-Proto': 'https' } })).status, 401);
        const out = await s.api('POST', '/api/auth/logout', { headers: { Cookie: cookie, 'X-CSRF-Token': d.csrf_token, ...tls } });
        ok(out);
        assert.match(out.headers['set-cookie'][0], /^__Host-kh_session=; Path=\/; HttpOnly; SameSite=Strict; Max-Age=0; Secure$/);
    });

    test('over plain http (the default 127.0.0.1:8080) it stays kh_session without Secure', async () => {
        const { setCookie } = await login();
        assert.match(setCookie, /^kh_session=[A-Za-z0-9_-]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
    });
});

describe('file modes (item 7)', () => {
    test('after a start under umask 022, the data directory, database, WAL and logs are private', async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'knowhub-modes-'));
        fs.chmodSync(dir, 0o755);
        const port = await freePort();
        const stack = path.join(ROOT, 'scripts/stack.sh');
        // On PostgreSQL there is no database file: the directory, token and logs are checked.
        const db = onPostgres ? createDatabase() : null;
        const env = { ...process.env, KNOWHUB_BIN: BIN, ...(db ? { KNOWHUB_DATABASE_URL: db.url } : {}) };
        try {
            const r = spawnSync('bash', ['-c', 'umask 022; exec bash "$0" start "$1" 127.0.0.1 "$2"', stack, dir, String(port)], {
                env,
                stdio: ['ignore', 'ignore', 'pipe'],
                encoding: 'utf8',
                timeout: 30000,
            });
            assert.equal(r.status, 0, r.stderr);
            const tok = fs.readFileSync(path.join(dir, 'admin.token'), 'utf8').trim();
            // A write, so the WAL exists; a request, so the access log has a line.
            const w = await fetch(`http://127.0.0.1:${port}/api/knowledge`, {
                method: 'POST',
                headers: { Authorization: `Bearer ${tok}`, 'Content-Type': 'application/json' },
                body: JSON.stringify({ scenario: 'modes scenario', content: 'modes content' }),
            });
            assert.equal((await w.json()).status, 'success');
            await new Promise((res) => setTimeout(res, 1500)); // access_log flush=1s
            const files = db ? [] : ['knowhub.db', 'knowhub.db-wal'];
            const paths = [dir, ...files, 'admin.token', 'logs', 'logs/knowhub.log', 'logs/nginx-error.log', 'logs/access.log'];
            for (const p of paths) {
                const full = p === dir ? dir : path.join(dir, p);
                assert.ok(fs.existsSync(full), `${p} missing`);
                const mode = fs.statSync(full).mode & 0o777;
                assert.equal(mode & 0o077, 0, `${p} has mode ${mode.toString(8)}`);
            }
        } finally {
            spawnSync('bash', [stack, 'stop', dir], { env, stdio: 'ignore', timeout: 30000 });
            fs.rmSync(dir, { recursive: true, force: true });
            if (db) dropDatabase(db.name);
        }
    });
});

describe('knowhub login-link (item 8)', () => {
    test('prints the one-click link for the admin token', () => {
        const run = (env) => {
            const r = spawnSync(BIN, ['login-link'], { env: { ...process.env, ...env }, encoding: 'utf8' });
            assertNoBugs(r.stderr, 'knowhub login-link');
            return r;
        };
        const tok = fs.readFileSync(path.join(s.dir, 'admin.token'), 'utf8').trim();
        const d = run({ ...s.cliEnv(), KNOWHUB_HOST: '', KNOWHUB_PORT: '' });
        assert.equal(d.status, 0, d.stderr);
        assert.equal(d.stdout, `http://127.0.0.1:8080/#token=${tok}\n`);
        const p = run({ ...s.cliEnv(), KNOWHUB_HOST: '127.0.0.1', KNOWHUB_PORT: String(s.port) });
        assert.equal(p.stdout, `http://127.0.0.1:${s.port}/#token=${tok}\n`);
        const none = run({ KNOWHUB_DATA: path.join(s.dir, 'nope') });
        assert.equal(none.status, 1);
        assert.equal(none.stdout, '');
    });
});
