// The stale view (docs/conflicts.md "Time: expiry, review-by dates and
// pins"), in a real browser against a real stack, en and zh: an expired
// entry is listed with why (expired or review due) as text, one click
// renews it (or takes its expiry away) and it is back in the searches; a
// reader sees the list without the buttons.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setup } from './lib/harness.mjs';
import { EN, ZH, assertNoEnglish, englishOnPage, toastText, until } from './lib/ui.mjs';

let env;
before(async () => {
    env = await setup({ examples: false, sessions: false });
});
after(async () => {
    await env?.teardown();
});

/** Space name's admin client with one expired experience and one past its review date. */
async function spaceWith(name, expired, due) {
    const token = env.s.token(name, 'admin', name);
    const api = env.client(token);
    const a = await api.call('POST', '/api/knowledge', { scenario: expired[0], title: expired[0], content: expired[1], expires_at: '2020-01-01' });
    const b = await api.call('POST', '/api/knowledge', { scenario: due[0], title: due[0], content: due[1], review_after: '2020-01-01' });
    return { token, api, a, b };
}

async function openStale(token, lang) {
    const page = await env.page(token, { lang });
    await page.click('.tab[data-view="stale"]');
    await page.waitForSelector('.stale-table .stale-row');
    return page;
}

const rows = (page) => page.$$eval('.stale-row', (els) => els.map((e) => [e.dataset.id, e.querySelector('.stale-why').textContent, e.querySelectorAll('button').length]));
const found = async (api, word, id) => (await api.call('GET', `/api/knowledge/search?q=${encodeURIComponent(word)}&top_k=10`)).results.some((r) => r.id === id);

describe('the stale view', () => {
    test('en: lists the expired and the due as text; renew brings one back, never-expires the other way', async () => {
        const { token, api, a, b } = await spaceWith('stale-en', ['<b>Brambleworth</b> deploys', 'Deploy brambleworth with the old script.'], ['Thistlewick exports', 'Export thistlewick hourly.']);
        assert.equal(await found(api, 'brambleworth', a.id), false);
        const page = await openStale(token, 'en');
        assert.equal(await page.textContent('.view-stale h2'), EN.stale.title);
        assert.deepEqual(await rows(page), [
            [a.id, EN.stale.whyExpired, 2],
            [b.id, EN.stale.whyReviewDue, 0],
        ]);
        // the title is text, never markup
        assert.equal(await page.textContent(`.stale-row[data-id="${a.id}"] .stale-title`), '<b>Brambleworth</b> deploys');
        assert.equal(await page.evaluate(() => document.querySelectorAll('.stale-table b').length), 0);
        await env.shot(page, 'stale-en');
        await page.click(`.stale-row[data-id="${a.id}"] .stale-renew`);
        await toastText(page, EN.stale.renewed.replace('{{title}}', '<b>Brambleworth</b> deploys'));
        await page.waitForSelector(`.stale-row[data-id="${a.id}"]`, { state: 'detached' });
        assert.equal(await found(api, 'brambleworth', a.id), true);
        const renewed = await api.call('GET', `/api/knowledge/${a.id}`);
        assert.ok(renewed.expires_at > new Date(Date.now() + 80 * 86400000).toISOString(), renewed.expires_at);
        await page.close();
    });

    test('zh: the view in Chinese, no English label; never-expires clears the expiry', async () => {
        const { token, api, a } = await spaceWith('zs', ['旧的部署脚本', '用旧脚本部署荆棘沃斯。'], ['导出任务', '每小时导出一次。']);
        const page = await openStale(token, 'zh');
        assert.equal(await page.textContent('.tab[data-view="stale"]'), ZH.app.tabStale);
        assert.equal(await page.textContent('.view-stale h2'), ZH.stale.title);
        assert.equal(await page.textContent(`.stale-row[data-id="${a.id}"] .stale-why`), ZH.stale.whyExpired);
        assertNoEnglish(await englishOnPage(page), 'stale');
        await env.shot(page, 'stale-zh');
        await page.click(`.stale-row[data-id="${a.id}"] .stale-clear`);
        await page.waitForSelector(`.stale-row[data-id="${a.id}"]`, { state: 'detached' });
        assert.equal((await api.call('GET', `/api/knowledge/${a.id}`)).expires_at, null);
        await page.close();
    });

    for (const [lang, L] of [
        ['en', EN],
        ['zh', ZH],
    ])
        test(`${lang}: an entry past its review date is a review_due item in the review screen; approve confirms it`, async () => {
            const { token, api, b } = await spaceWith(`rd${lang}`, ['过期条目', '已过期。'], ['Wickerlane exports', 'Export wickerlane hourly.']);
            const page = await env.page(token, { lang });
            await page.click('.tab[data-view="review"]');
            await page.waitForSelector('.review-list .review-item');
            const item = page.locator('.review-item', { has: page.locator('.kind-review_due') });
            assert.equal(await item.locator('.review-kind').textContent(), L.review.kindReviewDue);
            await item.click();
            await page.waitForSelector('.review-detail .review-due-title');
            assert.equal(await page.textContent('.review-detail .review-due-title'), L.review.reviewDueTitle);
            assert.equal(await page.locator('.review-detail .review-merge').count(), 0);
            await env.shot(page, `stale-review-${lang}`);
            const id = await item.getAttribute('data-id');
            await page.click('.review-detail .review-approve');
            await until(page, (pid) => !document.querySelector(`.review-item[data-id="${pid}"]`), id);
            assert.equal((await api.call('GET', `/api/knowledge/${b.id}`)).review_after, null);
            await page.close();
        });

    test('a reader sees the list without the buttons; a title opens the document', async () => {
        const { a } = await spaceWith('stale-ro', ['Quillsby backups', 'Back up quillsby nightly.'], ['Quillsby restores', 'Restore quillsby weekly.']);
        const page = await openStale(env.s.token('stale-ro', 'reader', 'stale-ro-reader'), 'en');
        assert.equal(await page.locator('.stale-row button').count(), 0);
        await page.click(`.stale-row[data-id="${a.id}"] .stale-title`);
        await page.waitForSelector(`.detail[data-id="${a.id}"], .detail`);
        assert.equal(await page.isVisible('#view-knowledge'), true);
        await page.close();
    });
});
