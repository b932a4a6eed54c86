// Live updates in the panel (docs/web.md "Live updates"): two browsers on one
// space; what one changes (through REST, as an agent would, or in the other
// browser's panel, as a second person would) appears in the other's list
// and open document without a reload, through GET /api/events (Server-Sent
// Events).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setup } from './lib/harness.mjs';
import { deleteItem, fillEditor, item, openNew, saveEditor } from './lib/ui.mjs';

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

test("two browsers: what one person saves, edits and deletes in the panel shows in the other's without a reload", async () => {
    const s = env.s;
    const editor = s.token('default', 'editor', 'second person');
    const a = await env.page(s.admin, { lang: 'en' });
    // a second browser: its own cookies, so each person stays logged in as themselves
    const b = await env.page(editor, { lang: 'zh', browser: await env.secondBrowser() });
    for (const p of [a, b]) await p.waitForSelector('#app:not([hidden]) .kb-section');
    await b.evaluate(() => {
        window.__noReload = true;
    });
    await b.waitForTimeout(500);

    await openNew(a, 'experiences');
    await fillEditor(a, { folder: 'live', file: 'two-browsers', title: 'Two browsers', body: 'Saved in the first browser.' });
    await saveEditor(a);
    await item(b, 'experiences', 'live/two-browsers.md').waitFor({ timeout: 3000 });
    await item(b, 'experiences', 'live/two-browsers.md').locator('.item-main').click();
    await b.waitForSelector('#view-knowledge :text("Saved in the first browser.")');

    await item(a, 'experiences', 'live/two-browsers.md').hover();
    await item(a, 'experiences', 'live/two-browsers.md').locator('.edit-btn').click();
    await a.waitForSelector('.editor-dialog[open]');
    await fillEditor(a, { body: 'Edited in the first browser.' });
    await saveEditor(a);
    await b.waitForSelector('#view-knowledge :text("Edited in the first browser.")', { timeout: 3000 });

    await deleteItem(a, 'experiences', 'live/two-browsers.md');
    await item(b, 'experiences', 'live/two-browsers.md').waitFor({ state: 'detached', timeout: 3000 });
    assert.equal(await b.evaluate(() => window.__noReload), true, 'the second browser was not reloaded');
    await a.close();
    await b.close();
});
