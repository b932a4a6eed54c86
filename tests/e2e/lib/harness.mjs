// harness.mjs: a real KnowHub stack (tests/http/lib/stack.mjs) and Debian's
// chromium driven by playwright-core, for the browser tests of web/.
//   const env = await setup();             // stack + examples + browser
//   const page = await env.page(token);    // a fresh logged-in page
//   await env.shot(page, 'panel');         // tests/out/screenshots/panel.png
//   env.expectFailedLoad(page, '/api/x', 404); // a failed load the test provokes
//   await env.teardown();                  // fails on page errors, CSP reports,
//                                          // console errors and failed loads
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { BIN, ROOT, assertNoBugs, startStack } from '../../http/lib/stack.mjs';

export { ROOT };
export const CHROMIUM = process.env.KNOWHUB_CHROMIUM || '/usr/bin/chromium';
export const SHOTS = path.join(ROOT, 'tests/out/screenshots');
export const EXAMPLES = path.join(ROOT, 'docs/examples/knowledge');
export const SESSIONS = path.join(ROOT, 'docs/examples/sessions');

const LAUNCH_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Run the knowhub CLI on the stack's data directory (its stderr shows no bug). */
export function knowhub(s, args) {
    const r = spawnSync(BIN, args, { env: { ...process.env, KNOWHUB_DATA: s.dir }, encoding: 'utf8', timeout: 60000 });
    if (r.error) throw r.error;
    assertNoBugs(r.stderr, `knowhub ${args.join(' ')}`);
    return r;
}

/** An API client for one token: call(method, path, body) -> data (throws on errors). */
export function client(s, token) {
    const call = async (method, p, body) => {
        const r = await s.api(method, p, { token, body });
        if (!r.json || r.json.status !== 'success') throw new Error(`${method} ${p}: HTTP ${r.status} ${r.text.slice(0, 300)}`);
        return r.json.data;
    };
    return {
        call,
        raw: (method, p, body) => s.api(method, p, { token, body }),
        write: (category, p, content) => call('POST', '/api/knowledge/write', { category, path: p, content }),
        read: (category, p) => call('POST', '/api/knowledge/read', { category, path: p }),
        list: async (category) => (await call('POST', '/api/knowledge/list', { category })).items,
        putSession: (session) => call('POST', '/api/sessions', session),
        getSession: (id) => call('GET', `/api/sessions/${encodeURIComponent(id)}`),
    };
}

export function exampleSessions() {
    return fs
        .readdirSync(SESSIONS)
        .filter((f) => f.endsWith('.json'))
        .sort()
        .map((f) => JSON.parse(fs.readFileSync(path.join(SESSIONS, f), 'utf8')));
}

/** Can the distill route answer here (the lead's part of the issue)? */
export async function distillAvailable(s) {
    const r = await s.api('POST', '/api/knowledge/distill-experience', { token: s.admin, body: {} });
    return r.status === 200 && r.json && !(r.json.status === 'error' && ['NOT_FOUND', 'METHOD_NOT_ALLOWED'].includes(r.json.error.code));
}

export async function setup({ examples = true, sessions = true, stackEnv = {} } = {}) {
    const s = await startStack(stackEnv);
    if (examples) {
        const r = knowhub(s, ['import', EXAMPLES]);
        assert.equal(r.status, 0, r.stderr);
    }
    const admin = client(s, s.admin);
    if (sessions) for (const sess of exampleSessions()) await admin.putSession(sess);

    /** A browser of its own: a Chromium with a fresh profile (its own cookies). */
    const launch = async () => {
        const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'knowhub-e2e-chromium-'));
        const ctx = await chromium.launchPersistentContext(profile, {
            executablePath: CHROMIUM,
            headless: true,
            args: LAUNCH_ARGS,
            viewport: { width: 1440, height: 900 },
            locale: 'en-US',
        });
        return { ctx, profile };
    };
    const browsers = [await launch()];
    const { ctx } = browsers[0];
    const problems = [];
    const pages = [];
    const expectedFailures = new WeakMap(); // page -> [{ path, status, left }]
    fs.mkdirSync(SHOTS, { recursive: true });

    /** Is console message m of page a failed load the test declared (env.expectFailedLoad)? Uses it up. */
    const expectedFailure = (page, m) => {
        const status = /^Failed to load resource: the server responded with a status of (\d+)/.exec(m.text());
        if (!status || !m.location().url) return false;
        const url = new URL(m.location().url);
        const e = (expectedFailures.get(page) || []).find((x) => x.left > 0 && x.path === url.pathname + url.search && x.status === Number(status[1]));
        if (e) e.left--;
        return Boolean(e);
    };

    const env = {
        s,
        ctx,
        admin,
        problems,
        client: (token) => client(s, token),
        /** Let page fail to load path (its path and query: '/api/auth/me') with HTTP
         * status, up to times times: a test declares the failures it provokes, and
         * Chromium's "Failed to load resource" for any other is a problem. */
        expectFailedLoad(page, reqPath, status, times = 1) {
            if (!expectedFailures.has(page)) expectedFailures.set(page, []);
            expectedFailures.get(page).push({ path: reqPath, status, left: times });
        },
        /** Count page's errors, CSP reports and console errors (failed loads
         * included, but the expected ones) as problems; env.page does this. */
        watch(page) {
            page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
            page.on('console', (m) => {
                const text = m.text();
                if (/Content Security Policy|Refused to/i.test(text)) problems.push(`csp: ${text}`);
                else if (m.type() === 'error' && !expectedFailure(page, m)) problems.push(`console: ${text}${m.location().url ? ` (${m.location().url})` : ''}`);
            });
        },
        /** A second browser (its own profile and cookies), for env.page's browser option. */
        async secondBrowser() {
            const b = await launch();
            browsers.push(b);
            return b.ctx;
        },
        /** A new page logged in with token through the one-click link (null: not logged in), in lang (?lang=).
         * The browser's cookies are shared: this logs every other open page of the
         * browser (default the first; env.secondBrowser() gives another) in as token too. */
        async page(token, { lang = 'en', hash = '', browser = ctx } = {}) {
            const page = await browser.newPage();
            pages.push(page);
            page.setDefaultTimeout(10000);
            env.watch(page);
            // The panel first asks who is logged in: 401 without a login cookie
            // (cleared below for a token; maybe there is none without one).
            env.expectFailedLoad(page, '/api/auth/me', 401);
            page.on('dialog', (d) => {
                problems.push(`unexpected ${d.type()} dialog: ${d.message()}`);
                d.dismiss().catch(() => {});
            });
            const q = lang ? `?lang=${lang}` : '';
            if (token) {
                // A fresh login, as the tests mean it: over another token's
                // cookie the panel would ask first (login_link.test.mjs).
                await browser.clearCookies();
                await page.goto(`${s.base}/${q}#token=${encodeURIComponent(token)}`);
                await page.waitForSelector('#app:not([hidden])');
                await page.waitForSelector('.kb-section');
                if (hash) {
                    await page.click(`.tab[data-view="${hash}"]`);
                }
            } else {
                await page.goto(`${s.base}/${q}`);
            }
            return page;
        },
        async shot(page, name) {
            await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: false });
        },
        async teardown() {
            try {
                for (const p of pages) await p.close().catch(() => {});
                for (const b of browsers) await b.ctx.close();
            } finally {
                for (const b of browsers) fs.rmSync(b.profile, { recursive: true, force: true });
                await s.stop();
            }
            assert.deepEqual(problems, [], problems.join('\n'));
        },
    };
    return env;
}

/** The JSON body of the next request to a path the page sends while fn runs. */
export async function captureRequest(page, urlPart, fn) {
    const seen = page.waitForRequest((r) => r.url().includes(urlPart) && r.method() === 'POST');
    await fn();
    const req = await seen;
    return { json: JSON.parse(req.postData() || 'null'), headers: req.headers(), request: req };
}
