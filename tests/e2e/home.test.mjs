// The home screen (docs/web.md "Home"): with no document open the knowledge
// view shows the space's counts, traces this week, the latest changes, the
// entries agents were given most and those judged harmful most, each opening
// its document; an empty space shows how an agent connects (the MCP address;
// for an admin the way to a token, for others who to ask). In en and zh.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setup } from './lib/harness.mjs';
import { EN, ZH, until } from './lib/ui.mjs';

let env;
let harmfulId;
let injectedId;
before(async () => {
    env = await setup({ examples: true, sessions: false });
    const s = env.s;
    const agent = s.token('default', 'agent', 'home test agent');
    // Two traces: the ROI entry injected three times, judged harmful once.
    const search = (trace, seq) => s.api('GET', `/api/knowledge/search?q=ROI&top_k=1&trace_id=${trace}&goal_id=g&sequence=${seq}`, { token: agent });
    const r1 = await search('home-t1', 1);
    injectedId = r1.json.data.results[0].id;
    await search('home-t1', 2);
    await search('home-t2', 1);
    const output = JSON.stringify({ evaluations: [{ knowledge_id: injectedId, eval_status: 'harmful', reason: 'wrong period' }] });
    const ev = await s.api('POST', '/api/traces/home-t2/evaluations', { token: agent, body: { trigger: 'goal_completion', output } });
    assert.equal(ev.json.status, 'success', ev.text);
    harmfulId = injectedId;
});
after(async () => {
    await env?.teardown();
});

for (const [lang, S] of [
    ['en', EN],
    ['zh', ZH],
]) {
    describe(`home (${lang})`, () => {
        test('counts, lists, and a click opens the document', async () => {
            const page = await env.page(env.s.admin, { lang });
            await page.waitForSelector('.home .home-counts');
            assert.equal(await page.textContent('.home h2'), S.home.title.replace('{{space}}', 'default'));
            const n = (kind) => page.textContent(`.home-count-${kind} .home-count-n`);
            const overview = (await env.s.api('GET', '/api/overview', { token: env.s.admin })).json.data;
            assert.equal(Number(await n('rules')), overview.counts.rules);
            assert.equal(Number(await n('experiences')), overview.counts.experiences);
            assert.ok(overview.counts.rules > 0 && overview.counts.experiences > 0);
            assert.equal(await n('traces-week'), '2');
            // The lists: the latest changes (5), the most injected with its count, the harmful one.
            assert.equal(await page.locator('.home-recent li').count(), 5);
            const top = page.locator('.home-injected li').first();
            assert.equal(await top.locator('.home-open').getAttribute('data-id'), injectedId);
            assert.equal(await top.locator('.home-meta').textContent(), S.home.injections.replace('{{count}}', '3'));
            assert.equal(await page.locator('.home-harmful .home-open').first().getAttribute('data-id'), harmfulId);
            assert.equal(await page.locator('.home-start').count(), 0);
            await env.shot(page, lang === 'en' ? 'home' : 'home-zh');
            // A click opens the entry; Escape-free way back: the brand.
            const title = await top.locator('.home-open').textContent();
            await top.locator('.home-open').click();
            await until(page, (t) => document.querySelector('#view-knowledge h2')?.textContent === t, title);
            await page.click('.topbar .brand');
            await page.waitForSelector('.home .home-counts');
            await page.close();
        });

        test('an empty space: how an agent connects, and the way to a token', async () => {
            const admin = env.s.token(`home-empty-${lang}`, 'admin', 'home empty admin');
            const page = await env.page(admin, { lang });
            await page.waitForSelector('.home-start');
            assert.equal(await page.textContent('.home-start h3'), S.home.startTitle);
            assert.equal(await page.textContent('.home-mcp-url'), `${env.s.base}/mcp`);
            assert.equal(await page.locator('.home-lists').count(), 0);
            if (lang === 'en') await env.shot(page, 'home-empty');
            await page.click('.home-token');
            await page.waitForSelector('#view-tokens .tokens-table');
            await page.close();
            // Another role is told who makes tokens.
            const reader = env.s.token(`home-empty-${lang}`, 'reader', 'home empty reader');
            const rp = await env.page(reader, { lang });
            await rp.waitForSelector('.home-start');
            assert.equal(await rp.locator('.home-token').count(), 0);
            assert.equal(await rp.textContent('.home-start .muted.small'), S.home.askAdmin);
            await rp.close();
        });
    });
}

test('a new document shows in the home lists without a reload', async () => {
    const page = await env.page(env.s.admin);
    await page.waitForSelector('.home .home-counts');
    const before = Number(await page.textContent('.home-count-experiences .home-count-n'));
    const r = await env.s.api('POST', '/api/knowledge', { token: env.s.admin, body: { scenario: 'Home screen freshness check', content: 'A new entry.' } });
    assert.equal(r.json.status, 'success', r.text);
    await page.evaluate(() => window.dispatchEvent(new CustomEvent('knowledge-changed')));
    await until(page, (n) => Number(document.querySelector('.home-count-experiences .home-count-n')?.textContent) === n, before + 1);
    assert.equal(await page.locator('.home-recent .home-open').first().textContent(), 'Home screen freshness check');
    await page.close();
});
