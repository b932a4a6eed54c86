// Live updates in the panel (docs/web.md "Live updates"): two browsers on one
// space; what one changes (here through REST, as an agent or a second
// person would) appears in the other's list and open document without a
// reload, through GET /api/events (Server-Sent Events).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setup } from './lib/harness.mjs';
import { item } from './lib/ui.mjs';

let env;
before(async () => {
    env = await setup({ examples: false, sessions: false });
});
after(async () => {
    await env?.teardown();
});

test('a rule created and edited elsewhere shows in an open panel without a reload', async () => {
    const s = env.s;
    const page = await env.page(s.admin, { lang: 'en' });
    await page.waitForSelector('#app:not([hidden]) .kb-section');
    // The page must not reload: a marker on window survives only without one.
    await page.evaluate(() => {
        window.__noReload = true;
    });
    // The stream is open once the panel is (EventSource's readyState 1).
    await page.waitForTimeout(500);

    const created = await s.api('POST', '/api/knowledge', { token: s.admin, body: { category: 'rules', path: 'live-rule.md', scenario: 'Live rule', content: 'First text of the live rule.' } });
    assert.equal(created.json.status, 'success', created.text);
    const t0 = Date.now();
    await item(page, 'rules', 'live-rule.md').waitFor({ timeout: 3000 });
    const shownAfter = Date.now() - t0;
    assert.ok(shownAfter < 3000, `shown after ${shownAfter} ms`);

    await item(page, 'rules', 'live-rule.md').locator('.item-main').click();
    await page.waitForSelector('#view-knowledge :text("First text of the live rule.")');
    const w = await s.api('POST', '/api/knowledge/write', { token: s.admin, body: { category: 'rules', path: 'live-rule.md', content: 'Second text, written elsewhere.' } });
    assert.equal(w.json.status, 'success', w.text);
    await page.waitForSelector('#view-knowledge :text("Second text, written elsewhere.")', { timeout: 3000 });

    const d = await s.api('DELETE', `/api/knowledge/${created.json.data.id}`, { token: s.admin });
    assert.equal(d.json.status, 'success', d.text);
    await item(page, 'rules', 'live-rule.md').waitFor({ state: 'detached', timeout: 3000 });
    assert.equal(await page.evaluate(() => window.__noReload), true, 'the page was not reloaded');
    await page.close();
});
