// The knowledge panel in a real browser (Debian chromium) against a real
// stack: login, language, rules and experiences as admin / agent / reader,
// search, markup shown as text, revisions. Screenshots go to
// tests/out/screenshots/.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setup } from './lib/harness.mjs';
import { EN, ZH, assertNoEnglish, deleteItem, englishOnPage, fillEditor, item, openNew, saveEditor, toastText, until } from './lib/ui.mjs';

let env;
before(async () => {
    env = await setup();
});
after(async () => {
    await env?.teardown();
});

describe('login', () => {
    test('the login screen takes a token; a wrong one is refused', async () => {
        const page = await env.page(null, { lang: 'en' });
        await page.waitForSelector('#login-screen:not([hidden])');
        assert.equal(await page.textContent('#login-screen h1'), EN.login.title);
        await env.shot(page, 'login');
        env.expectFailedLoad(page, '/api/auth/login', 401);
        await page.fill('#login-token', 'kh_0000000000000000_nope');
        await page.click('#login-submit');
        await page.waitForSelector('#login-error:not([hidden])');
        assert.equal(await page.textContent('#login-error'), EN.login.invalid);
        await page.fill('#login-token', env.s.admin);
        await page.click('#login-submit');
        await page.waitForSelector('#app:not([hidden]) .kb-section');
        assert.match(await page.textContent('#whoami'), /default · admin/);
        await page.close();
    });

    test('the one-click link: token exchanged for an HttpOnly SameSite=Strict cookie, cleared from the address bar', async () => {
        const page = await env.page(env.s.admin);
        assert.ok(!page.url().includes('token'), page.url());
        assert.ok(!page.url().includes(env.s.admin));
        const cookie = (await env.ctx.cookies(env.s.base)).find((c) => c.name === 'kh_session');
        assert.ok(cookie, 'no session cookie');
        assert.equal(cookie.httpOnly, true);
        assert.equal(cookie.sameSite, 'Strict');
        assert.equal(await page.evaluate(() => document.cookie), '', 'the cookie is not readable by script');
        // the cookie alone reads, but does not change anything without the CSRF header
        env.expectFailedLoad(page, '/api/knowledge/write', 403);
        const r = await page.evaluate(async () => {
            const me = await (await fetch('/api/auth/me')).json();
            const bad = await fetch('/api/knowledge/write', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ category: 'experiences', path: 'csrf.md', content: 'x' }) });
            const good = await fetch('/api/knowledge/list', { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': me.data.csrf_token }, body: '{"category":"rules"}' });
            return { role: me.data.role, bad: bad.status, good: (await good.json()).status };
        });
        assert.deepEqual(r, { role: 'admin', bad: 403, good: 'success' });
        // log out: back to the login screen (the panel asks who is logged in:
        // 401), the cookie no longer works (401)
        env.expectFailedLoad(page, '/api/auth/me', 401, 2);
        await page.click('#logout');
        await page.waitForSelector('#login-screen:not([hidden])');
        const after = await page.evaluate(async () => (await fetch('/api/auth/me')).status);
        assert.equal(after, 401);
        await page.close();
    });
});

describe('language', () => {
    test('switch to Chinese: no English UI label on any screen; remembered; ?lang=en switches back', async () => {
        // a space holding only Chinese data, so any Latin word on screen is a label
        const token = env.s.token('zh', 'admin', 'zh');
        const api = env.client(token);
        await api.write('rules', '统一口径.md', '---\ntitle: 统一数据口径\ntags: [口径]\ndescription: 金额统一为人民币\nalwaysApply: true\n---\n\n金额一律以人民币计。\n');
        await api.write('rules', '图表配色.md', '---\ntitle: 图表配色\ndescription: 使用色盲友好的配色\nalwaysApply: false\n---\n\n比较类别时使用色盲友好的配色。\n');
        await api.write('experiences', '库存/周转率.md', '---\ntitle: 月度库存周转率的计算方法\ntags: [库存, 周转]\nsource: distill\n---\n\n## 方法\n库存周转率 = 销售成本 / 平均库存。\n');
        await api.write('experiences', '库存/周转率.md', '---\ntitle: 月度库存周转率的计算方法\ntags: [库存, 周转]\nsource: distill\n---\n\n## 方法\n库存周转率 = 本月销售成本 / 本月平均库存。\n');
        const doc = await api.read('experiences', '库存/周转率.md');
        await api.call('POST', '/api/traces', { trace_id: 't-1', task: '门店库存分析' });
        await api.call('POST', '/api/traces/t-1/knowledge_log', { knowledge_id: doc.id, goal_id: '1', injected_at_sequence: 3 });
        await api.call('POST', '/api/traces/t-1/evaluations', { trigger: 'goal_completion', evaluations: [{ knowledge_id: doc.id, eval_status: 'helpful', reason: '用对了公式' }] });
        const zhSession = (await import('./lib/harness.mjs')).exampleSessions().find((x) => /[\u4e00-\u9fff]/.test(x.title));
        await api.putSession(zhSession);

        const page = await env.page(token, { lang: 'en' });
        assert.equal(await page.textContent('.panel-title'), EN.knowledge.title);
        await page.selectOption('.topbar .lang-select', 'zh');
        await until(page, (title) => document.querySelector('.panel-title').textContent === title, ZH.knowledge.title);
        assert.equal(await page.getAttribute('html', 'lang'), 'zh-CN');
        assert.equal(await page.textContent('.tab[data-view="sessions"]'), ZH.app.tabSessions);
        assertNoEnglish(await englishOnPage(page), 'panel');

        await item(page, 'experiences', '库存/周转率.md').locator('.item-main').click();
        await page.waitForSelector('.detail .revision');
        assert.match(await page.textContent('.detail .meta'), /2026年|\d{4}年/, 'dates in Chinese format');
        assertNoEnglish(await englishOnPage(page), 'details');
        await env.shot(page, 'zh-details');

        await page.click('.detail-edit');
        await page.waitForSelector('.editor-dialog[open]');
        assertNoEnglish(await englishOnPage(page), 'editor');
        await page.click('.editor-dialog[open] .dialog-actions .btn:not(.ed-save)');

        await page.fill('#kb-search', '库存周转分析');
        await page.press('#kb-search', 'Enter');
        await page.waitForSelector('.result');
        assertNoEnglish(await englishOnPage(page), 'search results');
        await page.click('.search-clear');

        await page.click('.tab[data-view="sessions"]');
        await page.waitForSelector('.table-card .save-exp-btn');
        await page.click('.table-card[data-table-id="turnover"] .attempts summary');
        assertNoEnglish(await englishOnPage(page), 'sessions');
        await env.shot(page, 'zh-sessions');

        await page.click('.tab[data-view="traces"]');
        await page.waitForSelector('.log-table .status');
        await page.click('.log-table .chart-entry');
        await page.waitForSelector('.entry-chart svg');
        assertNoEnglish(await englishOnPage(page), 'traces');
        await env.shot(page, 'zh-traces');

        // remembered across a reload (without ?lang)
        await page.goto(`${env.s.base}/`);
        await page.waitForSelector('.kb-section');
        assert.equal(await page.textContent('.panel-title'), ZH.knowledge.title);
        // ?lang=en in the address chooses English
        await page.goto(`${env.s.base}/?lang=en`);
        await page.waitForSelector('.kb-section');
        assert.equal(await page.textContent('.panel-title'), EN.knowledge.title);
        assert.equal(await page.inputValue('.topbar .lang-select'), 'en');
        await page.close();
    });

    test('numbers and dates follow the language', async () => {
        const page = await env.page(env.s.admin, { lang: 'zh' });
        const s = await page.evaluate(async () => {
            const m = await import('/js/i18n.js');
            const zh = [m.fmtNumber(1234567.5), m.fmtDate('2026-12-02')];
            await m.setLang('en');
            return { zh, en: [m.fmtNumber(1234567.5), m.fmtDate('2026-12-02')] };
        });
        assert.deepEqual(s, { zh: ['1,234,567.5', '2026年12月2日'], en: ['1,234,567.5', 'Dec 2, 2026'] });
        await page.close();
    });
});

describe('rules and experiences', () => {
    test('admin creates, edits, renames and deletes a rule; counters warn and Save stops over the limit', async () => {
        const page = await env.page(env.s.admin);
        await openNew(page, 'rules');
        const dlg = page.locator('.editor-dialog[open]');
        assert.equal(await dlg.locator('.dialog-title').textContent(), EN.knowledge.createTitle);
        assert.equal(await dlg.locator('.ed-always').isChecked(), true, 'alwaysApply defaults to on');
        assert.equal(await dlg.locator('.f-folder').isHidden(), true, 'rules have no folder');
        // description counter n/100
        await fillEditor(page, { file: 'fiscal-year', title: 'Fiscal year starts in April', tags: 'finance, calendar', description: 'x'.repeat(95) });
        assert.equal(await dlg.locator('.desc-counter').textContent(), '95 / 100');
        assert.equal(await dlg.locator('.desc-counter').getAttribute('class'), 'counter desc-counter warn');
        await fillEditor(page, { description: 'x'.repeat(101) });
        assert.equal(await dlg.locator('.desc-counter').textContent(), 'Exceeds 100 character limit (101 / 100)');
        assert.equal(await dlg.locator('.ed-save').isDisabled(), true);
        // body counter: 90% of 350 warns, over 350 blocks Save
        await fillEditor(page, { description: 'Quarters are fiscal, Q1 = April to June', body: 'y'.repeat(315) });
        assert.match(await dlg.locator('.body-counter').getAttribute('class'), /\bwarn\b/);
        assert.equal(await dlg.locator('.ed-save').isDisabled(), false);
        await fillEditor(page, { body: 'y'.repeat(351) });
        assert.equal(await dlg.locator('.body-counter').textContent(), 'Exceeds 350 character limit (351 / 350)');
        assert.match(await dlg.locator('.body-counter').getAttribute('class'), /\bover\b/);
        assert.equal(await dlg.locator('.ed-save').isDisabled(), true);
        await fillEditor(page, { body: '# Fiscal year\n\nThe fiscal year starts on **1 April**; Q1 is April to June.', alwaysApply: false });
        await until(page, () => document.querySelector('.editor-dialog[open] .preview h1')?.textContent === 'Fiscal year');
        assert.equal(await dlg.locator('.preview strong').textContent(), '1 April');
        await env.shot(page, 'editor-rule');
        await saveEditor(page);
        await toastText(page, EN.knowledge.saved);
        await item(page, 'rules', 'fiscal-year.md').waitFor();
        assert.equal(await item(page, 'rules', 'fiscal-year.md').locator('.item-desc').textContent(), 'Quarters are fiscal, Q1 = April to June');
        assert.equal(await item(page, 'rules', 'fiscal-year.md').locator('.pin').count(), 0, 'not always applied: no pin');
        const created = await env.admin.read('rules', 'fiscal-year.md');
        assert.equal(created.fields.title, 'Fiscal year starts in April');
        assert.deepEqual(created.fields.tags, ['finance', 'calendar']);
        assert.equal(created.fields.alwaysApply, false);
        assert.equal(created.fields.description, 'Quarters are fiscal, Q1 = April to June');
        // the details show the server's rendering
        await page.waitForSelector('.detail[data-path="fiscal-year.md"] .rendered h1');

        // edit: switch alwaysApply on, change the body
        await item(page, 'rules', 'fiscal-year.md').hover();
        await item(page, 'rules', 'fiscal-year.md').locator('.edit-btn').click();
        await page.waitForSelector('.editor-dialog[open]');
        assert.equal(await page.locator('.editor-dialog[open] .dialog-title').textContent(), EN.knowledge.editTitle);
        assert.equal(await page.inputValue('.editor-dialog[open] .ed-title'), 'Fiscal year starts in April');
        await fillEditor(page, { alwaysApply: true, body: 'The fiscal year starts on 1 April.' });
        await saveEditor(page);
        await item(page, 'rules', 'fiscal-year.md').locator('.pin').waitFor();
        const edited = await env.admin.read('rules', 'fiscal-year.md');
        assert.equal(edited.id, created.id);
        assert.equal(edited.fields.alwaysApply, true);
        assert.match(edited.content, /\n\nThe fiscal year starts on 1 April\.\n$/);
        assert.match(edited.content, /^created: /m, 'other keys kept');

        // rename
        await item(page, 'rules', 'fiscal-year.md').hover();
        await item(page, 'rules', 'fiscal-year.md').locator('.edit-btn').click();
        await page.waitForSelector('.editor-dialog[open]');
        await fillEditor(page, { file: 'fiscal-calendar.md' });
        assert.equal(await page.locator('.editor-dialog[open] .rename-note').isVisible(), true);
        await saveEditor(page);
        await item(page, 'rules', 'fiscal-calendar.md').waitFor();
        assert.equal(await item(page, 'rules', 'fiscal-year.md').count(), 0);
        const renamed = await env.admin.read('rules', 'fiscal-calendar.md');
        assert.equal(renamed.id, created.id, 'a rename keeps the id');

        // delete, with confirmation (cancel first)
        await item(page, 'rules', 'fiscal-calendar.md').hover();
        await item(page, 'rules', 'fiscal-calendar.md').locator('.delete-btn').click();
        await page.waitForSelector('.confirm-dialog[open]');
        assert.equal(await page.textContent('.confirm-dialog[open] .dialog-title'), 'Delete "Fiscal year starts in April"?');
        assert.equal(await page.textContent('.confirm-dialog[open] .dialog-body'), EN.knowledge.deleteConfirmBody);
        await page.click('.confirm-dialog[open] .dialog-actions .btn:not(.btn-danger)');
        assert.equal(await item(page, 'rules', 'fiscal-calendar.md').count(), 1);
        await deleteItem(page, 'rules', 'fiscal-calendar.md');
        await toastText(page, EN.knowledge.deleted);
        const gone = await env.admin.raw('POST', '/api/knowledge/read', { category: 'rules', path: 'fiscal-calendar.md' });
        assert.equal(gone.json.error.code, 'TABLE_NOT_FOUND');
        await page.close();
    });

    test('a reader cannot change anything, an agent cannot change rules; the controls say why', async () => {
        const reader = env.s.token('default', 'reader', 'e2e-reader');
        const page = await env.page(reader);
        for (const c of ['rules', 'experiences']) {
            const add = page.locator(`.kb-section[data-category="${c}"] .add-btn`);
            assert.equal(await add.isDisabled(), true, `${c} +`);
            assert.equal(await add.getAttribute('title'), EN.panel.readOnlyReader);
        }
        assert.equal(await page.locator('.delete-btn').count(), 0, 'no delete buttons');
        await item(page, 'rules', 'cite-sources.md').hover();
        await item(page, 'rules', 'cite-sources.md').locator('.edit-btn').click();
        await page.waitForSelector('.editor-dialog[open]');
        assert.equal(await page.textContent('.editor-dialog[open] .readonly-notice'), EN.panel.readOnlyReader);
        assert.equal(await page.locator('.editor-dialog[open] .ed-save').isHidden(), true);
        assert.equal(await page.locator('.editor-dialog[open] .ed-body').isDisabled(), true);
        await env.shot(page, 'reader-editor');
        await page.keyboard.press('Escape');
        await item(page, 'experiences', 'finance/roi.md').locator('.item-main').click();
        await page.waitForSelector('.detail .restore-btn');
        assert.equal(await page.locator('.detail-delete').count(), 0);
        await page.close();

        const agent = env.s.token('default', 'agent', 'e2e-agent');
        const p2 = await env.page(agent);
        const addRule = p2.locator('.kb-section[data-category="rules"] .add-btn');
        assert.equal(await addRule.isDisabled(), true);
        assert.equal(await addRule.getAttribute('title'), EN.panel.rulesAdminOnly);
        assert.equal(await p2.locator('.kb-section[data-category="experiences"] .add-btn').isDisabled(), false);
        assert.equal(await p2.locator('.item[data-category="rules"] .delete-btn').count(), 0);
        assert.ok((await p2.locator('.item[data-category="experiences"] .delete-btn').count()) > 0);
        await item(p2, 'rules', 'no-secrets.md').hover();
        await item(p2, 'rules', 'no-secrets.md').locator('.edit-btn').click();
        await p2.waitForSelector('.editor-dialog[open]');
        assert.equal(await p2.textContent('.editor-dialog[open] .readonly-notice'), EN.panel.rulesAdminOnly);
        assert.equal(await p2.locator('.editor-dialog[open] .ed-save').isHidden(), true);
        await p2.keyboard.press('Escape');
        // a new experience cannot be turned into a rule
        await p2.click('.kb-section[data-category="experiences"] .add-btn');
        await p2.waitForSelector('.editor-dialog[open]');
        assert.deepEqual(await p2.$$eval('.editor-dialog[open] .ed-category option', (o) => o.map((x) => [x.value, x.disabled])), [['rules', true], ['experiences', false]]);
        assert.equal(await p2.locator('.editor-dialog[open] .ed-body').isDisabled(), false);
        await p2.close();
    });

    test('create an experience in a folder', async () => {
        const page = await env.page(env.s.admin);
        await openNew(page, 'experiences');
        const dlg = page.locator('.editor-dialog[open]');
        assert.equal(await dlg.locator('.ed-category').inputValue(), 'experiences');
        assert.equal(await dlg.locator('.f-description').isHidden(), true);
        await fillEditor(page, { folder: 'sales-analysis', file: 'year-over-year', title: 'Compare quarters year over year', tags: 'sales, 同比', body: '## When to Use\nSeasonal sales.\n\n## Method\nCompare each quarter with the same quarter a year earlier.' });
        await saveEditor(page);
        const it = page.locator('.folder[data-folder="sales-analysis"] .item[data-path="sales-analysis/year-over-year.md"]');
        await it.waitFor();
        assert.equal(await it.locator('.item-title').textContent(), 'Compare quarters year over year');
        // loose files come first, then folders by name
        const order = await page.$$eval('.section-experiences .section-body > *', (els) => els.map((e) => (e.matches('.folder') ? `folder:${e.dataset.folder}` : e.tagName.toLowerCase())));
        assert.equal(order[1], 'ul', 'loose files first');
        const folders = order.filter((x) => x.startsWith('folder:')).map((x) => x.slice(7));
        assert.deepEqual(folders, [...folders].sort((a, b) => a.localeCompare(b)));
        const d = await env.admin.read('experiences', 'sales-analysis/year-over-year.md');
        assert.deepEqual(d.fields.tags, ['sales', '同比']);
        assert.equal(d.fields.source, 'manual');
        await page.waitForSelector('.detail[data-path="sales-analysis/year-over-year.md"]');
        await env.shot(page, 'panel-details');
        await page.close();
    });

    test('search in Chinese: Enter runs it, results show category, title and a marked passage; clear restores the lists', async () => {
        const page = await env.page(env.s.admin);
        await page.fill('#kb-search', '库存周转分析');
        await page.press('#kb-search', 'Enter');
        const first = page.locator('.result').first();
        await first.waitFor();
        assert.equal(await first.locator('.result-title').textContent(), '月度库存周转率的计算方法');
        assert.equal(await first.locator('.chip').textContent(), EN.knowledge.experiences);
        const passage = await first.locator('.result-passage').textContent();
        assert.ok(passage.length > 10 && Array.from(passage).length <= 340, passage);
        assert.ok((await first.locator('.result-passage mark').count()) > 0, 'no word marked');
        assert.equal(await page.locator('.sections').isHidden(), true);
        await env.shot(page, 'search-zh');
        await first.locator('.result-main').click();
        await page.waitForSelector('.detail[data-path="库存/库存周转率.md"]');
        // no results
        await page.fill('#kb-search', '量子纠缠');
        await page.press('#kb-search', 'Enter');
        await page.waitForSelector('.no-results');
        assert.equal(await page.textContent('.no-results-title'), EN.knowledge.noSearchResults);
        assert.equal(await page.textContent('.no-results-detail'), EN.panel.nothingRelevant.replace('{{query}}', '量子纠缠'));
        await page.click('.search-clear');
        await page.waitForSelector('.sections:not([hidden])');
        assert.equal(await page.inputValue('#kb-search'), '');
        await page.close();
    });

    test('markup in a title, tags or body is shown as text everywhere', async () => {
        const X = '<img src=x onerror=alert(1)>';
        await env.admin.write('experiences', 'xss/markup.md', `---\ntitle: "${X}"\ntags: ["<b>bold</b>", "${X}"]\n---\n\nBody <img src=x onerror=alert(2)> <script>alert(3)</script>\n\n[link](javascript:alert(4))\n`);
        await env.admin.write('rules', 'xss-rule.md', `---\ntitle: "${X}"\ndescription: "${X}"\nalwaysApply: false\n---\n\nNever <img src=x onerror=alert(5)>\n`);
        const doc = await env.admin.read('experiences', 'xss/markup.md');
        await env.admin.call('POST', '/api/traces', { trace_id: 'xss-trace', task: X });
        await env.admin.call('POST', '/api/traces/xss-trace/knowledge_log', { knowledge_id: doc.id, goal_id: X.slice(0, 20) });
        await env.admin.putSession({ id: 'xss-session', title: X, tables: [{ id: 'src', displayId: X, names: [X], rows: [{ [X]: X }] }, { id: 'd1', displayId: X, names: [X], rows: [{ [X]: X }], derive: { source: ['src'], code: X, trigger: { tableId: 'src', interaction: [{ from: 'user', role: 'prompt', content: X }, { from: 'data-agent', role: 'instruction', content: X }], chart: { mark: X } }, executionAttempts: [{ status: X, summary: X }] } }] });

        const page = await env.page(env.s.admin);
        const noImg = async (where) => assert.equal(await page.locator('img').count(), 0, `an <img> element appeared in ${where}`);
        const shown = async (where, min = 1) => assert.ok((await page.getByText(X, { exact: false }).count()) >= min, `the title is not shown as text in ${where}`);
        await item(page, 'experiences', 'xss/markup.md').waitFor();
        assert.equal(await item(page, 'experiences', 'xss/markup.md').locator('.item-title').textContent(), X);
        assert.equal(await item(page, 'rules', 'xss-rule.md').locator('.item-desc').textContent(), X);
        await shown('the panel', 2);
        await noImg('the panel');
        await item(page, 'experiences', 'xss/markup.md').locator('.item-main').click();
        await page.waitForSelector('.detail[data-path="xss/markup.md"]');
        assert.equal(await page.textContent('.detail-title'), X);
        assert.equal(await page.locator('.detail .rendered script, .detail .rendered a[href^="javascript"]').count(), 0);
        await noImg('the details');
        // search results, the delete confirmation, the editor
        await page.fill('#kb-search', 'onerror');
        await page.press('#kb-search', 'Enter');
        await page.locator('.result-title', { hasText: X }).first().waitFor();
        await noImg('search results');
        await page.click('.search-clear');
        await item(page, 'experiences', 'xss/markup.md').hover();
        await item(page, 'experiences', 'xss/markup.md').locator('.delete-btn').click();
        assert.equal(await page.textContent('.confirm-dialog[open] .dialog-title'), `Delete "${X}"?`);
        await page.keyboard.press('Escape');
        await item(page, 'experiences', 'xss/markup.md').locator('.edit-btn').click();
        assert.equal(await page.inputValue('.editor-dialog[open] .ed-title'), X);
        await page.keyboard.press('Escape');
        // sessions and traces
        await page.click('.tab[data-view="sessions"]');
        await page.click('.session-link[data-id="xss-session"]');
        await page.waitForSelector('.table-card[data-table-id="d1"] .card-question');
        await shown('the session', 4);
        await noImg('the session');
        await page.click('.tab[data-view="traces"]');
        await page.click('tr[data-trace="xss-trace"]');
        await page.waitForSelector('.log-table .log-title');
        await shown('the traces', 2);
        await noImg('the traces');
        await env.shot(page, 'markup-as-text');
        assert.equal(await page.evaluate(() => document.querySelectorAll('[onerror]').length), 0);
        await page.close();
    });

    test('restore an old revision from the details, with a diff', async () => {
        await env.admin.write('experiences', 'revisions/chunks.md', '---\ntitle: Read CSV in chunks\n---\n\nUse chunksize=100000.\nKeep dtypes explicit.\n');
        await env.admin.write('experiences', 'revisions/chunks.md', '---\ntitle: Read CSV in chunks\n---\n\nUse chunksize=5000.\nKeep dtypes explicit.\nDrop unused columns early.\n');
        const page = await env.page(env.s.admin);
        await item(page, 'experiences', 'revisions/chunks.md').locator('.item-main').click();
        await page.waitForSelector('.detail[data-path="revisions/chunks.md"] .revision');
        assert.equal(await page.locator('.revision').count(), 2);
        await page.click('.revision[data-version="1"]');
        await page.waitForSelector('.revision[data-version="1"].selected');
        assert.deepEqual(await page.$$eval('.diff-del', (e) => e.map((x) => x.textContent.trim())), ['− Use chunksize=100000.']);
        assert.deepEqual(await page.$$eval('.diff-add', (e) => e.map((x) => x.textContent.trim())), ['+ Use chunksize=5000.', '+ Drop unused columns early.']);
        await env.shot(page, 'revisions');
        await page.click('.restore-btn');
        await toastText(page, 'Version 1 restored');
        await until(page, () => document.querySelectorAll('.revision').length === 3);
        assert.match(await page.textContent('.detail .rendered'), /chunksize=100000/);
        assert.equal(await page.textContent('.revision[data-version="3"] .rev-reason'), EN.reason.revert);
        const now = await env.admin.read('experiences', 'revisions/chunks.md');
        assert.equal(now.content, '---\ntitle: Read CSV in chunks\n---\n\nUse chunksize=100000.\nKeep dtypes explicit.\n');
        await page.close();
    });
});

describe('knowledge-changed', () => {
    test('the panel reloads one category on {category}, everything without a detail', async () => {
        const page = await env.page(env.s.admin);
        await env.admin.write('experiences', 'event/one.md', 'one');
        await env.admin.write('rules', 'event-rule.md', 'a rule');
        await page.evaluate(() => window.dispatchEvent(new CustomEvent('knowledge-changed', { detail: { category: 'experiences' } })));
        await item(page, 'experiences', 'event/one.md').waitFor();
        assert.equal(await item(page, 'rules', 'event-rule.md').count(), 0, 'only experiences were reloaded');
        await env.admin.write('experiences', 'event/two.md', 'two');
        await page.evaluate(() => window.dispatchEvent(new CustomEvent('knowledge-changed')));
        await item(page, 'rules', 'event-rule.md').waitFor();
        await item(page, 'experiences', 'event/two.md').waitFor();
        await page.close();
    });
});
