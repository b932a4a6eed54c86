// Small honest labels of the panel (issue 28): the editor's title counter
// (n / the server's title_max), a finished job with nothing to do says so
// instead of a full bar, and Chinese headings are drawn bold.
// Screenshots: editor-title-counter.png, job-nothing-to-do-zh.png, headings-zh.png.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setup } from './lib/harness.mjs';
import { EN, ZH, item, openNew } from './lib/ui.mjs';

let env;
before(async () => {
    env = await setup({ examples: false, sessions: false });
    await env.admin.write('experiences', '库存/标题.md', '---\ntitle: 库存周转率的口径\n---\n\n## 适用场景\n\n按月评估门店的库存周转。\n\n### 注意事项\n\n用**销售成本**而不是销售额。\n');
});
after(() => env?.teardown());

describe('labels', () => {
    test('the title field counts its characters against the server\'s limit', async () => {
        const limits = (await env.admin.call('POST', '/api/knowledge/limits', {})).limits;
        assert.equal(limits.title_max, 200);
        const page = await env.page(env.s.admin);
        await openNew(page, 'experiences');
        const counter = page.locator('.f-title .title-counter');
        assert.equal(await counter.textContent(), EN.knowledge.charCount.replaceAll('{{current}}', '0').replaceAll('{{max}}', '200'));
        await page.fill('.ed-title', 'Quarterly revenue 📈 per region');
        assert.equal(await counter.textContent(), '30 / 200', 'characters, not UTF-16 units (31)');
        await page.fill('.ed-title', 'x'.repeat(185));
        assert.match(await counter.getAttribute('class'), /\bwarn\b/);
        await page.fill('.ed-title', 'x'.repeat(201));
        assert.match(await counter.getAttribute('class'), /\bover\b/);
        assert.equal(await counter.textContent(), EN.knowledge.charCountExceeded.replaceAll('{{current}}', '201').replaceAll('{{max}}', '200'));
        await page.fill('.ed-title', 'Quarterly revenue per region');
        await env.shot(page, 'editor-title-counter');
        await page.close();
    });

    test('a finished job of 0 items says "nothing to do", with no progress bar', async () => {
        const page = await env.page(env.s.admin, { lang: 'zh' });
        const job = (id, status, progress, total) => ({ id, kind: 'slim', status, progress, total, created_at: '2026-12-06 01:00:00', updated_at: '2026-12-06 01:00:01' });
        await page.route('**/api/jobs*', (route) =>
            route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ status: 'success', data: { items: [job('job-empty', 'done', 0, 0), job('job-half', 'running', 2, 4)] } }) }),
        );
        await page.click('.tab[data-view="traces"]');
        const empty = page.locator('.job[data-id="job-empty"]');
        await empty.waitFor();
        assert.equal(await empty.locator('progress').count(), 0, 'a full bar for nothing');
        assert.equal(await empty.locator('.job-empty').textContent(), ZH.traces.jobNothingToDo);
        const half = page.locator('.job[data-id="job-half"] progress');
        assert.equal(await half.getAttribute('value'), '50');
        await env.shot(page, 'job-nothing-to-do-zh');
        await page.close();
    });

    test('Chinese headings are bold', async () => {
        const page = await env.page(env.s.admin, { lang: 'zh' });
        await item(page, 'experiences', '库存/标题.md').locator('.item-main').click();
        const h2 = page.locator('.detail .rendered h2').first();
        await h2.waitFor();
        for (const sel of ['.detail .rendered h2', '.detail .rendered h3']) {
            const weight = await page.$eval(sel, (el) => Number(getComputedStyle(el).fontWeight));
            assert.ok(weight >= 600, `${sel} font-weight ${weight}`);
            // drawn bold: the font may have no bold face, so the browser must be allowed to make one
            const synthesis = await page.$eval(sel, (el) => getComputedStyle(el).fontSynthesisWeight || getComputedStyle(el).fontSynthesis);
            assert.notEqual(synthesis, 'none', `${sel} font-synthesis ${synthesis}`);
        }
        // drawn bold: the heading's own font puts more ink on a canvas than the same at weight 400
        const ink = await page.$eval('.detail .rendered h2', (el) => {
            const style = getComputedStyle(el);
            const draw = (weight) => {
                const c = document.createElement('canvas');
                c.width = 400;
                c.height = 60;
                const x = c.getContext('2d');
                x.font = `${weight} ${style.fontSize} ${style.fontFamily}`;
                x.fillText(el.textContent, 4, 40);
                let sum = 0;
                for (const [i, v] of x.getImageData(0, 0, 400, 60).data.entries()) if (i % 4 === 3) sum += v;
                return sum;
            };
            return [draw(style.fontWeight), draw(400)];
        });
        assert.ok(ink[0] > ink[1] * 1.2, `bold ink ${ink[0]} vs normal ${ink[1]}`);
        await env.shot(page, 'headings-zh');
        await page.close();
    });
});
