// Analysis sessions and the save-experience flow in a real browser: the
// button sits on leaf derived tables only, moves to the new leaf after a
// derive, ignores a deleted middle table (checked in the request the page
// sends), shows its states, and after saving the panel lists the new
// experience without a reload. Also the traces dashboard.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { captureRequest, distillAvailable, setup } from './lib/harness.mjs';
import { EN, ZH, toastText, until } from './lib/ui.mjs';

let env;
before(async () => {
    env = await setup();
});
after(async () => {
    await env?.teardown();
});

const leaves = (page) => page.$$eval('.table-card', (cards) => cards.filter((c) => c.querySelector('.save-exp-btn')).map((c) => c.dataset.tableId));

async function openSession(page, id) {
    await page.click('.tab[data-view="sessions"]');
    await page.click(`.session-link[data-id="${id}"]`);
    await page.waitForSelector(`.session-link[data-id="${id}"].selected`);
    await page.waitForSelector('.table-card');
}

async function refreshUntil(page, fn, arg) {
    await page.click('.sessions-refresh');
    return until(page, fn, arg);
}

describe('analysis sessions', () => {
    test('the example sessions are drawn as connected cards; Save as Experience only on leaf derived tables', async () => {
        const page = await env.page(env.s.admin);
        await openSession(page, 'example-quarterly-revenue');
        assert.deepEqual(await page.$$eval('.table-card', (c) => c.map((x) => x.dataset.tableId)), ['sales_2024', 'revenue_by_quarter', 'qoq_growth', 'units_by_product']);
        assert.deepEqual(await leaves(page), ['qoq_growth', 'units_by_product']);
        // the tree: qoq_growth hangs under revenue_by_quarter, which hangs under sales_2024
        const parent = await page.$eval('.table-card[data-table-id="qoq_growth"]', (c) => c.closest('ul').closest('li').querySelector(':scope > .table-card').dataset.tableId);
        assert.equal(parent, 'revenue_by_quarter');
        assert.equal(await page.textContent('.table-card[data-table-id="qoq_growth"] .save-exp-label'), EN.knowledge.saveAsExperience);
        await env.shot(page, 'sessions');
        await page.close();
    });

    test('the button moves to the new leaf after a derive, and back when that table is anchored', async () => {
        const s = await env.admin.getSession('example-quarterly-revenue');
        const page = await env.page(env.s.admin);
        await openSession(page, 'example-quarterly-revenue');
        // an agent derives a new table from qoq_growth
        const qoq = s.tables.find((t) => t.id === 'qoq_growth');
        const next = {
            id: 'top_region',
            names: ['region', 'avg_growth_pct'],
            rows: [{ region: 'East', avg_growth_pct: 13.9 }],
            derive: {
                source: ['qoq_growth'],
                code: 'top_region = qoq_growth.groupby("region", as_index=False)["qoq_growth_pct"].mean()',
                trigger: { tableId: 'qoq_growth', interaction: [{ from: 'user', role: 'prompt', content: 'Average the growth per region' }], chart: { mark: 'bar' } },
                executionAttempts: [],
            },
        };
        await env.admin.putSession({ id: s.id, title: s.title, tables: [...s.tables, next] });
        await refreshUntil(page, () => !!document.querySelector('.table-card[data-table-id="top_region"] .save-exp-btn'));
        assert.deepEqual(await leaves(page), ['top_region', 'units_by_product']);
        assert.ok(qoq);
        // anchoring the new table (in the page) makes qoq_growth a leaf again
        await page.click('.table-card[data-table-id="top_region"] .anchor-btn');
        await until(page, () => !!document.querySelector('.table-card[data-table-id="qoq_growth"] .save-exp-btn'));
        assert.deepEqual(await leaves(page), ['qoq_growth', 'top_region', 'units_by_product']);
        const stored = await env.admin.getSession(s.id);
        assert.equal(stored.tables.find((t) => t.id === 'top_region').anchored, true);
        await env.shot(page, 'sessions-anchored');
        await page.close();
    });

    test('a deleted middle table is not in the context the page sends; attempts go as summaries', async () => {
        const page = await env.page(env.s.admin, { lang: 'zh' });
        await openSession(page, 'example-inventory-turnover');
        assert.deepEqual(await leaves(page), ['slow_stores']);
        // delete the middle table "turnover" in the page (with confirmation)
        await page.click('.table-card[data-table-id="turnover"] .delete-table-btn');
        await page.waitForSelector('.confirm-dialog[open]');
        assert.equal(await page.textContent('.confirm-dialog[open] .dialog-title'), '删除表「库存周转率」？');
        await page.click('.confirm-dialog[open] .btn-danger');
        await page.waitForSelector('.table-card[data-table-id="turnover"]', { state: 'detached' });
        // slow_stores now hangs under avg_inventory (the server re-parented it)
        const parent = await page.$eval('.table-card[data-table-id="slow_stores"]', (c) => c.closest('ul').closest('li').querySelector(':scope > .table-card').dataset.tableId);
        assert.equal(parent, 'avg_inventory');
        assert.deepEqual(await leaves(page), ['slow_stores']);

        await page.click('.table-card[data-table-id="slow_stores"] .save-exp-btn');
        await page.waitForSelector('.distill-dialog[open]');
        assert.equal(await page.textContent('.distill-dialog[open] .dialog-title'), ZH.knowledge.saveAsExperienceTitle);
        assert.equal(await page.textContent('.distill-dialog[open] .chain-steps'), '库存月报 → 平均库存 → 周转最慢的门店');
        assert.equal(await page.textContent('.distill-dialog[open] .distill-mode'), ZH.sessions.distillHintLocal);
        await page.fill('.distill-dialog[open] .distill-hint', '库存分析');
        await env.shot(page, 'save-experience-dialog');
        const { json, headers } = await captureRequest(page, '/api/knowledge/distill-experience', () => page.click('.distill-dialog[open] .distill-go'));
        const ctx = json.experience_context;
        const text = JSON.stringify(ctx);
        assert.ok(!text.includes('计算各门店的月度库存周转率'), 'the deleted table\'s question was sent');
        assert.ok(!text.includes('误用了不存在'), 'the deleted table\'s attempts were sent');
        assert.ok(!text.includes('"turnover"') || ctx.result_summary.source_tables.includes('turnover'), 'the deleted table appears');
        assert.deepEqual(ctx.interaction.filter((e) => e.from === 'user').map((e) => e.content), ['帮我算一下各门店每个月的平均库存', '列出周转率低于 1 的门店，按周转率升序']);
        assert.equal(ctx.user_question, '列出周转率低于 1 的门店，按周转率升序', 'the question of the table saved from');
        assert.deepEqual(ctx.chain.map((c) => c.table), ['平均库存', '周转最慢的门店']);
        assert.equal(ctx.context_id, 'slow_stores');
        assert.equal(ctx.source_table_id, 'avg_inventory');
        assert.deepEqual(ctx.result_summary.output_fields, ['门店', '月份', '库存周转率']);
        assert.equal(ctx.result_summary.output_rows, 6);
        assert.equal(ctx.result_summary.chart_type, 'bar');
        assert.equal(ctx.result_summary.display_instruction, '周转率低于 1 的门店');
        assert.equal(ctx.chain[1].instruction, '筛选库存周转率 < 1 的记录并升序排列。', 'what was done, in full');
        assert.ok(ctx.execution_attempts.every((a) => ['平均库存', '周转最慢的门店'].includes(a.table)), 'every attempt names its table');
        assert.ok(Array.isArray(ctx.dialog) && ctx.dialog.length === 3);
        for (const a of ctx.execution_attempts) for (const k of ['code', 'failed_code', 'repair_code']) assert.ok(!(k in a), `attempt carries ${k}`);
        assert.equal(json.category_hint, '库存分析');
        assert.ok(headers['x-csrf-token'], 'the CSRF header');
        assert.match(headers['accept-language'], /^zh/);
        await page.waitForSelector('.table-card[data-table-id="slow_stores"] .save-exp-btn[data-state="idle"], .table-card[data-table-id="slow_stores"] .save-exp-btn[data-state="failed"]');
        await page.close();
    });

    test('states: idle, "Distilling…", "Save failed, retry"; a retry succeeds', async () => {
        const page = await env.page(env.s.admin);
        await openSession(page, 'example-quarterly-revenue');
        const btn = page.locator('.table-card[data-table-id="units_by_product"] .save-exp-btn');
        // the first answer fails (as an LLM timeout would), slowly enough to see the busy state
        let release;
        const gate = new Promise((r) => (release = r));
        await page.route('**/api/knowledge/distill-experience', async (route) => {
            await gate;
            await route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ status: 'error', error: { code: 'LLM_TIMEOUT', message: 'The LLM did not answer in time', retry: true, request_id: 'test-0001' } }) });
        }, { times: 1 });
        await btn.click();
        await page.click('.distill-dialog[open] .distill-go');
        await page.waitForSelector('.table-card[data-table-id="units_by_product"] .save-exp-btn[data-state="busy"]');
        assert.equal(await btn.locator('.save-exp-label').textContent(), EN.knowledge.distilling);
        assert.equal(await btn.isDisabled(), true);
        release();
        await page.waitForSelector('.table-card[data-table-id="units_by_product"] .save-exp-btn[data-state="failed"]');
        assert.equal(await btn.locator('.save-exp-label').textContent(), EN.knowledge.distillFailedRetry);
        await toastText(page, `${EN.knowledge.failedToDistill}: The LLM did not answer in time`);
        await env.shot(page, 'save-failed-retry');
        // retry: straight to the server this time
        const before = (await env.admin.list('experiences')).length;
        await btn.click();
        await page.waitForSelector('.table-card[data-table-id="units_by_product"] .save-exp-btn[data-state="idle"]');
        assert.equal((await env.admin.list('experiences')).length, before + 1);
        await page.close();
    });

    test('after saving, the panel shows the new experience without a reload', async (t) => {
        if (!(await distillAvailable(env.s))) {
            assert.fail('POST /api/knowledge/distill-experience is not in this server (404/405): the flow cannot finish');
        }
        const page = await env.page(env.s.admin);
        await openSession(page, 'example-quarterly-revenue');
        await page.evaluate(() => {
            window.__noReload = true;
            window.__events = [];
            window.addEventListener('knowledge-changed', (e) => window.__events.push(e.detail));
        });
        const countBefore = await page.locator('.kb-section[data-category="experiences"] .item').count();
        const resp = page.waitForResponse((r) => r.url().endsWith('/api/knowledge/distill-experience'));
        // no LLM in this stack: the button and the dialog say it is a local summary
        assert.equal(await page.getAttribute('.table-card[data-table-id="qoq_growth"] .save-exp-btn', 'title'), EN.sessions.distillHintLocal);
        await page.click('.table-card[data-table-id="qoq_growth"] .save-exp-btn');
        await page.waitForSelector('.distill-dialog[open] .distill-mode[data-mode="local"]');
        assert.equal(await page.textContent('.distill-dialog[open] .distill-mode'), EN.sessions.distillHintLocal);
        assert.ok(!(await page.textContent('.distill-dialog[open]')).includes('AI will'), 'no "AI will distill" without an LLM');
        await page.fill('.distill-dialog[open] .distill-hint', 'sales-analysis');
        await env.shot(page, 'save-experience-local');
        await page.click('.distill-dialog[open] .distill-go');
        const data = (await (await resp).json()).data;
        assert.equal(data.category, 'experiences');
        assert.equal(data.source, 'distill-local');
        // titled after the table saved from (qoq_growth), a short slug without punctuation
        assert.match(data.title, /quarter-over-quarter growth/i, data.title);
        assert.match(data.path, /^sales-analysis\/[a-z0-9]+(-[a-z0-9]+)*\.md$/, data.path);
        assert.ok(Buffer.byteLength(data.path) <= 'sales-analysis/'.length + 63, data.path);
        await toastText(page, `${EN.knowledge.distilled}: ${data.path} (${EN.sessions.distilledLocal})`);
        const doc = await env.admin.read('experiences', data.path);
        assert.match(doc.content, /revenue_by_quarter, attempt 1 \(transform\): failed/, 'the parent table\'s failed attempt is listed');
        assert.ok(!/No attempt failed/.test(doc.content), doc.content);
        const it = page.locator(`.item[data-category="experiences"][data-path="${data.path}"]`);
        await it.waitFor();
        assert.equal(await page.locator('.kb-section[data-category="experiences"] .item').count(), countBefore + 1);
        assert.deepEqual(await page.evaluate(() => window.__events), [{ category: 'experiences' }]);
        assert.equal(await page.evaluate(() => window.__noReload), true, 'the page was reloaded');
        assert.equal(await page.textContent('.table-card[data-table-id="qoq_growth"] .save-exp-label'), EN.knowledge.saveAsExperience);
        await env.shot(page, 'experience-saved');
        // it opens like any other experience
        await it.locator('.item-main').click();
        await page.waitForSelector(`.detail[data-path="${data.path}"] .rendered h2`);
        t.diagnostic(`saved as ${data.path}`);
        await page.close();
    });

    test('with an LLM configured, the dialog keeps "AI will distill"', async () => {
        const page = await env.page(env.s.admin);
        // as the server answers when KNOWHUB_LLM_* is set (docs/llm.md "Usage ledger")
        await page.route('**/api/llm/usage*', (route) => route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ status: 'success', data: { since: '', configured: true, items: [] } }) }));
        await page.evaluate(() => location.reload());
        await page.waitForSelector('.kb-section');
        await openSession(page, 'example-quarterly-revenue');
        await page.click('.table-card[data-table-id="units_by_product"] .save-exp-btn');
        await page.waitForSelector('.distill-dialog[open] .distill-mode[data-mode="llm"]');
        assert.equal(await page.textContent('.distill-dialog[open] .distill-mode'), EN.knowledge.saveAsExperienceHint);
        await page.click('.distill-dialog[open] .btn:not(.distill-go)');
        await page.close();
    });

    test('a reader sees the sessions but cannot save, delete or anchor', async () => {
        const page = await env.page(env.s.token('default', 'reader', 'e2e-sessions-reader'));
        await openSession(page, 'example-quarterly-revenue');
        for (const sel of ['.save-exp-btn', '.delete-table-btn', '.anchor-btn']) {
            const all = await page.$$eval(sel, (b) => b.map((x) => x.disabled));
            assert.ok(all.length && all.every(Boolean), sel);
        }
        assert.equal(await page.getAttribute('.save-exp-btn', 'title'), EN.panel.readOnlyReader);
        assert.equal(await page.locator('.session-delete').isHidden(), true);
        await page.close();
    });
});

describe('traces dashboard', () => {
    test('traces with their knowledge log and statuses, charts of counts and of an entry over time, a job with nothing to do', async () => {
        const roi = await env.admin.read('experiences', 'finance/roi.md');
        const csv = await env.admin.read('experiences', 'tools/pandas-read-csv.md');
        const verdicts = [['helpful', 'helpful'], ['harmful', 'unused'], ['helpful', 'irrelevant']];
        for (const [i, [a, b]] of verdicts.entries()) {
            const id = `dash-${i + 1}`;
            await env.admin.call('POST', '/api/traces', { trace_id: id, task: `Quarterly ROI report ${i + 1}` });
            for (const [seq, k] of [roi.id, csv.id].entries()) await env.admin.call('POST', `/api/traces/${id}/knowledge_log`, { knowledge_id: k, goal_id: '1', injected_at_sequence: seq + 1 });
            await env.admin.call('POST', `/api/traces/${id}/evaluations`, { trigger: i === 2 ? 'task_completion' : 'goal_completion', evaluations: [{ knowledge_id: roi.id, eval_status: a, reason: `roi ${a}` }, { knowledge_id: csv.id, eval_status: b, reason: `csv ${b}` }] });
        }
        await env.admin.call('POST', '/api/traces', { trace_id: 'dash-pending', task: 'Still running' });
        await env.admin.call('POST', '/api/traces/dash-pending/knowledge_log', { knowledge_id: roi.id, goal_id: '1' });
        const job = await env.admin.call('POST', '/api/knowledge/slim', {});

        const page = await env.page(env.s.admin);
        await page.click('.tab[data-view="traces"]');
        await page.waitForSelector('tr[data-trace="dash-1"]');
        // the status chart sums the listed traces
        const bars = await page.$$eval('.bar-chart .chart-value', (t) => t.map((x) => x.textContent));
        const labels = await page.$$eval('.bar-chart .chart-label', (t) => t.map((x) => x.textContent));
        assert.deepEqual(labels, [EN.status.helpful, EN.status.harmful, EN.status.neutral, EN.status.unused, EN.status.irrelevant, EN.status.pending]);
        const byLabel = Object.fromEntries(labels.map((l, i) => [l, Number(bars[i])]));
        assert.ok(byLabel[EN.status.helpful] >= 3 && byLabel[EN.status.harmful] >= 1 && byLabel[EN.status.unused] >= 1 && byLabel[EN.status.pending] >= 1, JSON.stringify(byLabel));
        // the log of one trace, with statuses and the trigger
        await page.click('tr[data-trace="dash-2"]');
        await page.waitForSelector('tr[data-trace="dash-2"].selected');
        await until(page, () => document.querySelectorAll('.log-table tbody tr').length === 2);
        assert.deepEqual(await page.$$eval('.log-table .status', (s) => s.map((x) => x.textContent)), [EN.status.harmful, EN.status.unused]);
        assert.match(await page.textContent('.log-table tbody tr:first-child'), /goal completed/);
        // an entry's helpful / harmful over time
        await page.click(`.log-table tr[data-knowledge-id="${roi.id}"] .chart-entry`);
        await page.waitForSelector('.entry-chart path.series-helpful');
        assert.match(await page.textContent('.entry-chart .legend'), /Helpful \(2\).*Harmful \(1\)/);
        // the slim job: the examples hold no near-duplicates, so it ends with
        // nothing to do, said so instead of a full bar (a running one: labels.test.mjs)
        await page.waitForSelector(`.jobs .job[data-id="${job.id}"].job-done`, { timeout: 15000 });
        assert.equal((await env.admin.call('GET', `/api/jobs/${job.id}`)).total, 0);
        assert.equal(await page.textContent(`.jobs .job[data-id="${job.id}"] .job-empty`), EN.traces.jobNothingToDo);
        assert.equal(await page.locator(`.jobs .job[data-id="${job.id}"] progress`).count(), 0);
        await env.shot(page, 'traces');
        // open the entry from the log
        await page.click(`.log-table tr[data-knowledge-id="${roi.id}"] .open-entry`);
        await page.waitForSelector('.detail[data-path="finance/roi.md"] .injections tbody tr');
        assert.ok((await page.locator('.detail .injections tbody tr').count()) >= 3);
        assert.equal(await page.textContent('.stat-helpful .stat-value'), '2');
        await page.waitForSelector('.detail .feedback path.series-harmful');
        await env.shot(page, 'details-feedback');
        await page.close();
    });
});
