// Typed links in the panel (docs/conflicts.md), in a real browser against a
// real stack, en and zh: a document's details list its links both ways
// (text only, never markup from data), add one with the form, open the
// other side, remove one; a supersede retires the other document from the
// list and removing the link brings it back.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setup } from './lib/harness.mjs';
import { EN, ZH, assertNoEnglish, englishOnPage, item, toastText, until } from './lib/ui.mjs';

let env;
before(async () => {
    env = await setup({ examples: false, sessions: false });
});
after(async () => {
    await env?.teardown();
});

/** Space name's admin client, with an experience at each [path, title, body]; the documents read back. */
async function spaceWith(name, docs) {
    const token = env.s.token(name, 'admin', name);
    const api = env.client(token);
    for (const [p, title, body] of docs) await api.write('experiences', p, `---\ntitle: ${title}\n---\n\n${body}\n`);
    const read = [];
    for (const [p] of docs) read.push(await api.read('experiences', p));
    return { token, api, docs: read };
}

/** A page of token in lang, showing the experience at path once its links card is there (sel). */
async function openDoc(token, lang, path, sel = '.links-body') {
    const page = await env.page(token, { lang });
    await item(page, 'experiences', path).locator('.item-main').click();
    await page.waitForSelector(`.detail[data-path="${path}"] ${sel}`);
    return page;
}

const linkTypes = (page) => page.$$eval('.detail .link-item', (els) => els.map((e) => [e.dataset.type, e.dataset.direction, e.querySelector('.link-type').textContent]));

describe('links in the details', () => {
    test('en: add with the form, listed both ways as text, open the other side, remove', async () => {
        const { token, api, docs } = await spaceWith('links-en', [
            ['quarter/fiscal.md', 'Report by fiscal quarter', 'Use the fiscal quarter.'],
            ['quarter/calendar.md', '<img src=x onerror=alert(1)> calendar', 'Use the calendar quarter.'],
        ]);
        const cal = docs[1];
        const page = await openDoc(token, 'en', 'quarter/fiscal.md');
        assert.equal(await page.textContent('.detail .links h3'), EN.details.links);
        assert.equal(await page.textContent('.detail .links-body > p'), EN.details.noLinks);
        await page.selectOption('.link-type-select', 'contradicts');
        await page.selectOption('.link-target', cal.id);
        await page.fill('.link-reason-input', 'fiscal <b>or</b> calendar');
        await page.click('.link-add');
        await toastText(page, EN.details.linkAdded);
        await page.waitForSelector('.detail .link-item');
        assert.deepEqual(await linkTypes(page), [['contradicts', 'out', EN.details.linkContradicts]]);
        // the other title and the reason are text, never markup
        assert.equal(await page.textContent('.detail .link-other'), '<img src=x onerror=alert(1)> calendar');
        assert.equal(await page.textContent('.detail .link-reason'), 'fiscal <b>or</b> calendar');
        assert.equal(await page.evaluate(() => document.querySelectorAll('.links img, .links b').length), 0);
        await env.shot(page, 'links-en');
        // the other side lists it as in, and opens back
        await page.click('.detail .link-other');
        await page.waitForSelector('.detail[data-path="quarter/calendar.md"] .link-item');
        assert.deepEqual(await linkTypes(page), [['contradicts', 'in', EN.details.linkContradicts]]);
        await page.click('.detail .link-remove');
        await toastText(page, EN.details.linkRemoved);
        await page.waitForSelector('.detail .links-body > p');
        assert.equal((await api.call('GET', `/api/knowledge/${cal.id}/links`)).items.length, 0);
        await page.close();
    });

    test('en: supersede retires the other document from the list; removing the link brings it back', async () => {
        const { token, api, docs } = await spaceWith('links-sup', [
            ['deploy-new.md', 'Deploy with the new script', 'Run deploy.sh.'],
            ['deploy-old.md', 'Deploy by hand', 'Copy the files.'],
        ]);
        const old = docs[1];
        const page = await openDoc(token, 'en', 'deploy-new.md', '.link-form');
        await page.selectOption('.link-type-select', 'supersedes');
        await page.selectOption('.link-target', old.id);
        await page.click('.link-add');
        await toastText(page, EN.details.linkAdded);
        await page.waitForSelector('.detail .link-retired');
        assert.deepEqual(await linkTypes(page), [['supersedes', 'out', EN.details.linkSupersedes]]);
        await until(page, () => !document.querySelector('.item[data-path="deploy-old.md"]'));
        await page.click('.detail .link-remove');
        await toastText(page, EN.details.linkRemoved);
        await page.waitForSelector('.item[data-category="experiences"][data-path="deploy-old.md"]');
        assert.equal((await api.read('experiences', 'deploy-old.md')).id, old.id);
        await page.close();
    });

    test('zh: the card, the form and a link in Chinese, no English label', async () => {
        const { token, api, docs } = await spaceWith('zl', [
            ['口径/财年.md', '按财年季度统计', '使用财年季度。'],
            // not a contradiction of the first (the write check would link it, with an English reason)
            ['口径/自然年.md', '按月汇总季度数据', '季度数据按月汇总后再比较。'],
        ]);
        const [a, b] = docs;
        await api.call('POST', `/api/knowledge/${b.id}/links`, { to: a.id, type: 'refines', reason: '更细' });
        const page = await openDoc(token, 'zh', '口径/财年.md', '.link-item');
        assert.equal(await page.textContent('.detail .links h3'), ZH.details.links);
        assert.deepEqual(await linkTypes(page), [['refines', 'in', ZH.details.linkRefinedBy]]);
        assert.equal(await page.textContent('.link-add'), ZH.details.linkAdd);
        assertNoEnglish(await englishOnPage(page), 'links');
        await env.shot(page, 'links-zh');
        await page.close();
    });

    test('a reader sees the links, without the form or remove buttons', async () => {
        const { api, docs } = await spaceWith('links-ro', [
            ['a.md', 'A', 'A.'],
            ['b.md', 'B', 'B.'],
        ]);
        await api.call('POST', `/api/knowledge/${docs[0].id}/links`, { to: docs[1].id, type: 'related' });
        const page = await openDoc(env.s.token('links-ro', 'reader', 'links-ro-reader'), 'en', 'a.md', '.link-item');
        assert.deepEqual(await linkTypes(page), [['related', 'out', EN.details.linkRelated]]);
        assert.equal(await page.locator('.detail .link-form, .detail .link-remove').count(), 0);
        await page.close();
    });
});
