// The proxy key (issue 23): any process that can connect to knowhub's FastCGI
// socket (on a packaged install, anything running as www-data, nginx's
// user) can claim REMOTE_ADDR=127.0.0.1. knowhub keeps a key in its data
// directory (proxy.key, 0600) and writes an nginx include (proxy_key.conf,
// 0600) that makes nginx send it as KNOWHUB_PROXY_KEY; a request is loopback
// (/metrics without KNOWHUB_METRICS_TOKEN) only with a loopback REMOTE_ADDR
// AND that key. Here: the files, a direct FastCGI client on the socket (no
// key, a wrong one, the right one, the operator's token), nginx from
// loopback, a rotation (new key after a restart, nginx's reload picks it up),
// and the key in no log and no answer.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fcgiRequest } from './lib/fastcgi.mjs';
import { BIN, ROOT, assertNoBugs, run, startStack } from './lib/stack.mjs';

const OPERATOR = 'proxy-key-operator-secret-0123456789';
const STACK_SH = path.join(ROOT, 'scripts/stack.sh');
let s;
const keys = []; // every key this stack had, to look for in logs and answers

before(async () => {
    s = await startStack({ KNOWHUB_METRICS_TOKEN: OPERATOR });
    keys.push(s.proxyKey());
});
after(async () => {
    await s?.stop();
});

/** GET path straight on knowhub's socket, as nginx would send it, plus params. */
async function direct(params = {}, reqPath = '/metrics') {
    const r = fcgiRequest(s.socket(), {
        REQUEST_METHOD: 'GET',
        REQUEST_URI: reqPath,
        QUERY_STRING: '',
        REMOTE_ADDR: '127.0.0.1',
        KNOWHUB_REQUEST_ID: `direct-${Math.random().toString(16).slice(2, 12)}`,
        ...params,
    });
    await r.connected;
    r.end();
    const res = await r.response;
    assert.ok(res.ended, 'knowhub ended the request (FCGI_END_REQUEST)');
    return res;
}

const mode = (file) => fs.statSync(path.join(s.dir, file)).mode & 0o777;
const isExposition = (text) => text.includes('# TYPE knowhub_http_requests_total counter');
const waitFor = async (what, fn, ms = 10000) => {
    for (const until = Date.now() + ms; ; await new Promise((r) => setTimeout(r, 50))) {
        // an error (a connection nginx closed, at a reload say) is one more try
        if (await Promise.resolve().then(fn).catch(() => false)) return;
        assert.ok(Date.now() < until, `timed out waiting for ${what}`);
    }
};

describe('the key and its nginx include', () => {
    test('proxy.key holds 64 hex digits, proxy_key.conf the fastcgi_param; both 0600; nginx includes it', () => {
        const key = s.proxyKey();
        assert.match(key, /^[0-9a-f]{64}$/);
        assert.equal(mode('proxy.key'), 0o600);
        assert.equal(mode('proxy_key.conf'), 0o600);
        const conf = fs.readFileSync(path.join(s.dir, 'proxy_key.conf'), 'utf8');
        assert.ok(conf.includes(`\nfastcgi_param KNOWHUB_PROXY_KEY "${key}";\n`), conf);
        assert.equal(conf.split('\n').filter((l) => l && !l.startsWith('#')).length, 1, 'one directive');
        // scripts/stack.sh rendered the hand-off with this data directory's include
        const handoff = fs.readFileSync(path.join(s.dir, 'nginx/knowhub_fastcgi.conf'), 'utf8');
        assert.ok(handoff.includes(`include ${s.dir}/proxy_key[.]conf;`), handoff);
        // the source (and the package) include the packaged data directory's
        const source = fs.readFileSync(path.join(ROOT, 'nginx/knowhub_fastcgi.conf'), 'utf8');
        assert.match(source, /^include \/var\/lib\/knowhub\/proxy_key\[\.\]conf;$/m);
    });
});

describe('straight on the socket', () => {
    test('REMOTE_ADDR=127.0.0.1 without the key is not loopback: /metrics 401', async () => {
        for (const addr of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) {
            const r = await direct({ REMOTE_ADDR: addr });
            assert.equal(r.status, 401, `${addr}: ${r.body.slice(0, 200)}`);
            assert.equal(JSON.parse(r.body).error.code, 'UNAUTHORIZED');
            assert.match(r.headers['www-authenticate'] || '', /Bearer/);
            assert.ok(!isExposition(r.body));
        }
    });

    test('a wrong key, a cut one or an empty one: 401, and knowhub says so without the key', async () => {
        const key = s.proxyKey();
        const flipped = (key[0] === '0' ? '1' : '0') + key.slice(1);
        for (const wrong of [flipped, key.slice(0, -1), `${key}0`, key.toUpperCase(), ''])
            assert.equal((await direct({ KNOWHUB_PROXY_KEY: wrong })).status, 401, JSON.stringify(wrong));
        assert.match(s.log(), /a request carried a KNOWHUB_PROXY_KEY that is not this knowhub's/);
        assert.ok(!s.log().includes(key), 'the key is in knowhub.log');
    });

    test('the right key from loopback: 200; the key alone is not enough (another address, another proxy)', async () => {
        const key = s.proxyKey();
        const ok200 = await direct({ KNOWHUB_PROXY_KEY: key });
        assert.equal(ok200.status, 200, ok200.body.slice(0, 200));
        assert.ok(isExposition(ok200.body));
        assert.equal((await direct({ KNOWHUB_PROXY_KEY: key, REMOTE_ADDR: '::1' })).status, 200);
        assert.equal((await direct({ KNOWHUB_PROXY_KEY: key, REMOTE_ADDR: '203.0.113.9' })).status, 401);
        assert.equal((await direct({ KNOWHUB_PROXY_KEY: key, HTTP_X_FORWARDED_FOR: '203.0.113.9' })).status, 401);
    });

    test("without the key the operator's KNOWHUB_METRICS_TOKEN still opens /metrics; a space's admin token does not", async () => {
        const r = await direct({ HTTP_AUTHORIZATION: `Bearer ${OPERATOR}` });
        assert.equal(r.status, 200, r.body.slice(0, 200));
        assert.ok(isExposition(r.body));
        assert.equal((await direct({ HTTP_AUTHORIZATION: `Bearer ${s.admin}` })).status, 403);
        // the rest of the API never depended on loopback
        assert.equal((await direct({}, '/api/health')).status, 200);
    });
});

describe('through nginx', () => {
    test('from loopback: 200 (nginx adds the key); through another proxy: 401', async () => {
        const r = await s.api('GET', '/metrics');
        assert.equal(r.status, 200, r.text.slice(0, 200));
        assert.ok(isExposition(r.text));
        assert.equal((await s.api('GET', '/metrics', { headers: { 'X-Forwarded-For': '203.0.113.7' } })).status, 401);
    });

    test('rotation: without proxy.key a restart makes a new key; nginx sends the old one until its reload', async () => {
        const old = s.proxyKey();
        fs.rmSync(path.join(s.dir, 'proxy.key'));
        run('bash', [STACK_SH, 'knowhub-stop', s.dir]);
        const r = run('bash', [STACK_SH, 'knowhub-start', s.dir], { ...s.cliEnv(), KNOWHUB_METRICS_TOKEN: OPERATOR }, 'ignore');
        assert.equal(r.status, 0, r.stderr);
        const key = s.proxyKey();
        keys.push(key);
        assert.notEqual(key, old);
        assert.ok(fs.readFileSync(path.join(s.dir, 'proxy_key.conf'), 'utf8').includes(`"${key}"`));
        await waitFor('knowhub behind nginx', async () => (await s.api('GET', '/api/health')).status === 200);
        assert.equal((await s.api('GET', '/metrics')).status, 401, 'nginx still sends the old key');
        // a restart keeps the key it finds
        run('bash', [STACK_SH, 'knowhub-stop', s.dir]);
        assert.equal(run('bash', [STACK_SH, 'knowhub-start', s.dir], { ...s.cliEnv(), KNOWHUB_METRICS_TOKEN: OPERATOR }, 'ignore').status, 0);
        assert.equal(s.proxyKey(), key);
        // nginx's master reads the include again at its reload
        process.kill(Number(fs.readFileSync(path.join(s.dir, 'run/nginx-main.pid'), 'utf8')), 'SIGHUP');
        await waitFor('/metrics 200 after the reload', async () => (await s.api('GET', '/metrics')).status === 200);
    });

    test('a proxy.key that is not a key stops the start with a message naming the file, never its content', async () => {
        fs.writeFileSync(path.join(s.dir, 'proxy.key'), 'not-a-key-0123456789\n', { mode: 0o600 });
        run('bash', [STACK_SH, 'knowhub-stop', s.dir]);
        const r = spawnSync(BIN, ['serve'], { env: { ...process.env, ...s.cliEnv(), KNOWHUB_SOCKET: '' }, encoding: 'utf8', timeout: 10000 });
        assertNoBugs(r.stderr, 'knowhub serve');
        assert.equal(r.status, 1, `knowhub serve: ${r.status} ${r.signal} ${r.stderr}`);
        assert.match(r.stderr, /proxy\.key does not hold a proxy key \(64 lower-case hexadecimal characters\); remove it/);
        assert.ok(!r.stderr.includes('not-a-key-0123456789'));
        assert.ok(!fs.existsSync(s.socket()), 'no socket');
        // the operator's fix: remove it; the next start makes a new key
        fs.rmSync(path.join(s.dir, 'proxy.key'));
        assert.equal(run('bash', [STACK_SH, 'knowhub-start', s.dir], { ...s.cliEnv(), KNOWHUB_METRICS_TOKEN: OPERATOR }, 'ignore').status, 0);
        keys.push(s.proxyKey());
        process.kill(Number(fs.readFileSync(path.join(s.dir, 'run/nginx-main.pid'), 'utf8')), 'SIGHUP');
        await waitFor('/metrics 200 after the reload', async () => (await s.api('GET', '/metrics')).status === 200);
    });

    test('no key in any log or answer', async () => {
        const answers = [await s.api('GET', '/metrics'), await s.api('GET', '/api/health'), await s.api('GET', '/api/nope')];
        const texts = answers.map((a) => `${JSON.stringify(a.headers)}\n${a.text}`);
        texts.push((await direct({ KNOWHUB_PROXY_KEY: 'wrong' })).body);
        for (const f of fs.readdirSync(path.join(s.dir, 'logs'))) texts.push(fs.readFileSync(path.join(s.dir, 'logs', f), 'utf8'));
        for (const key of keys) for (const t of texts) assert.ok(!t.includes(key), 'a key leaked');
    });
});
