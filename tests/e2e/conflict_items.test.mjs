// Conflict items in the review view (docs/conflicts.md "Conflict items and
// their resolution", docs/web.md "Review"): a contradiction saved through
// the API waits in the queue as a conflict item with both sides side by
// side; superseded from the panel (keep one side), the other side leaves
// the search; another is dismissed with a reason (required), a third is
// narrowed by editing one side. In English and in Chinese.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setup } from './lib/harness.mjs';
import { EN, ZH } from './lib/ui.mjs';

let env;
let agent;
let editor;
before(async () => {
    env = await setup({ examples: false, sessions: false });
    agent = env.s.token('default', 'agent', 'conflict bot');
    editor = env.s.token('default', 'editor', 'conflict reviewer');
});
after(async () => {
    await env?.teardown();
});

const save = async (body) => {
    const r = await env.s.api('POST', '/api/knowledge', { token: agent, body });
    assert.equal(r.json.status, 'success', r.text);
    return r.json.data;
};
/** Two entries that contradict each other about word: {a, b, id} (id: the item). */
async function contradiction(word) {
    const scenario = `Serve JSON answers through the ${word} proxy`;
    const a = await save({ scenario, content: `Always enable gzip compression on the ${word} proxy for JSON answers.` });
    const b = await save({ scenario, content: `Never enable gzip compression on the ${word} proxy for JSON answers.` });
    const c = b.conflicts.find((x) => x.id === a.id);
    assert.equal(c?.verdict, 'contradiction', JSON.stringify(b.conflicts));
    return { a, b, id: c.review_id };
}
const item = async (id) => (await env.s.api('GET', `/api/review/${id}`, { token: editor })).json.data;
const found = async (word) => (await env.s.api('GET', `/api/knowledge/search?q=${word}&top_k=10`, { token: agent })).json.data.results.map((r) => r.id);

async function openItem(page, id) {
    await page.waitForSelector('.review-list');
    await page.locator(`.review-item[data-id="${id}"]`).click();
    await page.waitForSelector(`.review-detail[data-id="${id}"]`);
}

for (const [lang, S] of [
    ['en', EN],
    ['zh', ZH],
]) {
    describe(`conflict items in the review view (${lang})`, () => {
        test('both sides side by side; supersede keeps one and the other leaves the search', async () => {
            const word = `quillfen${lang}`;
            const { a, b, id } = await contradiction(word);
            const page = await env.page(editor, { lang, hash: 'review' });
            await openItem(page, id);
            const detail = page.locator('.review-detail');
            assert.equal(await detail.locator('.review-kind').textContent(), S.review.kindConflict);
            assert.equal(await page.locator(`.review-item[data-id="${id}"] .review-kind`).textContent(), S.review.kindConflict);
            assert.equal(await detail.locator('.review-side-left').getAttribute('data-id'), b.id);
            assert.equal(await detail.locator('.review-side-right').getAttribute('data-id'), a.id);
            assert.match(await detail.locator('.review-side-left .review-side-document').textContent(), /Never enable gzip/);
            assert.match(await detail.locator('.review-side-right .review-side-document').textContent(), /Always enable gzip/);
            assert.match(await detail.locator('.review-conflict-judge').first().textContent(), new RegExp(S.review.judgeLocal));
            // the detector's reason in the panel's language, its quoted evidence as written
            const reason = (await item(id)).conflict.reason;
            const shown = await detail.locator('.review-conflict-reason').first().textContent();
            if (lang === 'en') assert.equal(shown, reason);
            else assert.match(shown, /^在 "gzip" 上.+相反："Always enable" 对 "Never enable"$/, `${reason} -> ${shown}`);
            assert.equal(await detail.locator('.review-keep-left').textContent(), S.review.keepLeft);
            assert.equal(await detail.locator('.review-dismiss').textContent(), S.review.dismiss);
            // nothing of approve / edit / merge for a conflict
            assert.equal(await detail.locator('.review-approve, .review-edit, .review-merge').count(), 0);
            await detail.locator('.review-detail-head').scrollIntoViewIfNeeded();
            await env.shot(page, `review-conflict-${lang}`);
            await detail.locator('.review-keep-right').click();
            await page.waitForSelector(`.review-item[data-id="${id}"]`, { state: 'detached' });
            const done = await item(id);
            assert.deepEqual([done.state, done.decision, done.result_id], ['approved', 'supersede', a.id]);
            const ids = await found(word);
            assert.ok(ids.includes(a.id) && !ids.includes(b.id), JSON.stringify(ids));
            await page.close();
        });

        test('every kind of reason the detector writes has the panel\'s words', async () => {
            const reasons = [];
            const pairs = [
                ['Always enable gzip compression on the nginx proxy for JSON answers.', 'Never enable gzip compression on the nginx proxy for JSON answers.'],
                ['Set the upload timeout of the nginx proxy to 30 seconds for large JSON answers.', 'Set the upload timeout of the nginx proxy to 90 seconds for large JSON answers.'],
                ['Use the staging database for the weekly billing export job.', 'Use the production database for the weekly billing export job.'],
                ['Rotate the API keys of the billing service every month.', 'Rotate the API keys of the billing service every month, always.'],
                ['Rotate the API keys of the billing service every month.', 'Rotate the API keys of the billing service every month and record each rotation in the audit log with the operator name.'],
            ];
            // in a space of their own: the review list of the others stays short
            const other = env.s.token(`reasons-${lang}`, 'agent', 'reason bot');
            const saveThere = async (body) => {
                const r = await env.s.api('POST', '/api/knowledge', { token: other, body });
                assert.equal(r.json.status, 'success', r.text);
                return r.json.data;
            };
            for (const [i, [x, y]] of pairs.entries()) {
                const scenario = `Reason kinds ${lang} ${i} kestrelvane`;
                const a = await saveThere({ scenario, content: x });
                const b = await saveThere({ scenario, content: y });
                for (const c of b.conflicts.filter((c) => c.id === a.id)) reasons.push(c.reason);
            }
            assert.ok(reasons.length >= 4, JSON.stringify(reasons));
            const page = await env.page(editor, { lang, hash: 'review' });
            const shown = await page.evaluate(async (rs) => {
                const { detectorReason } = await import('/js/labels.js');
                return rs.map((r) => detectorReason(r));
            }, reasons);
            for (const [i, r] of reasons.entries()) {
                if (lang === 'en') {
                    assert.equal(shown[i], r);
                    continue;
                }
                assert.notEqual(shown[i], r, `a reason the panel does not know: ${r}`);
                assert.doesNotMatch(shown[i], /\b(opposite|different|words|shared|entry)\b/, shown[i]);
                for (const q of r.match(/"[^"]*"/g) || []) assert.ok(shown[i].includes(q), `${q} kept in ${shown[i]}`);
            }
            await page.close();
        });

        test('dismiss needs a reason; narrow writes the edited side', async () => {
            const d = await contradiction(`brindlemoor${lang}`);
            const n = await contradiction(`hollowmere${lang}`);
            const page = await env.page(editor, { lang, hash: 'review' });
            await openItem(page, d.id);
            await page.locator('.review-dismiss').click();
            assert.ok((await page.locator('.review-error').textContent()).endsWith(S.review.dismissReasonRequired));
            await page.fill('.review-dismiss-reason', 'different proxies');
            await page.locator('.review-dismiss').click();
            await page.waitForSelector(`.review-item[data-id="${d.id}"]`, { state: 'detached' });
            const dismissed = await item(d.id);
            assert.deepEqual([dismissed.state, dismissed.decision], ['rejected', 'dismiss']);
            const links = (await env.s.api('GET', `/api/knowledge/${d.a.id}/links`, { token: agent })).json.data.items;
            assert.deepEqual(links.filter((l) => l.other.id === d.b.id), [], 'the pair\'s contradicts link is gone');

            await openItem(page, n.id);
            await page.locator('.review-narrow').click();
            await page.waitForSelector('.review-narrow-dialog');
            assert.equal(await page.textContent('.review-narrow-dialog .dialog-title'), S.review.narrowTitle);
            const left = page.locator(`.review-narrow-input[data-id="${n.b.id}"]`);
            await left.fill((await left.inputValue()).replace('for JSON answers.', 'for event streams only.'));
            await page.locator('.review-narrow-save').click();
            await page.waitForSelector('.review-narrow-dialog', { state: 'detached' });
            const narrowed = await item(n.id);
            assert.deepEqual([narrowed.state, narrowed.decision, narrowed.result_id], ['approved', 'narrow', n.b.id]);
            const nowB = (await env.s.api('GET', `/api/knowledge/${n.b.id}`, { token: agent })).json.data;
            assert.match(nowB.content, /event streams only/);
            await page.close();
        });
    });
}
