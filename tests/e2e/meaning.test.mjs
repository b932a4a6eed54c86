// The panel's search by meaning: with an embeddings server (the tests' fake on
// loopback), a result found by meaning alone carries a "by meaning" chip; when
// the server fails, the results are the word matches under a note saying so.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setup } from './lib/harness.mjs';
import { startFakeEmbed } from '../http/lib/fakeembed.mjs';
import { waitFor } from '../http/lib/llmtest.mjs';
import { EN } from './lib/ui.mjs';

describe('search by meaning in the panel', () => {
    let env, emb;
    before(async () => {
        emb = await startFakeEmbed({ dim: 256 });
        env = await setup({ sessions: false, stackEnv: { KNOWHUB_EMBED_URL: emb.url } });
        await waitFor(async () => (await env.admin.call('GET', '/api/embeddings')).stale === 0, 15000, 'the examples embedded');
    });
    after(async () => {
        await env?.teardown();
        await emb?.close();
    });

    test('a Chinese question finds the English missing-values experience, marked "by meaning"', async () => {
        const page = await env.page(env.s.admin);
        await page.fill('#kb-search', '表格里的空值应该怎么处理');
        await page.press('#kb-search', 'Enter');
        const hit = page.locator('.result[data-path="data-cleaning/missing-values.md"]');
        await hit.waitFor();
        assert.equal(await hit.locator('.chip-meaning').textContent(), EN.panel.foundByMeaning);
        assert.equal(await page.locator('.meaning-unavailable').count(), 0);
        await env.shot(page, 'search-meaning');
        await page.close();
    });

    test('the embeddings server down: word matches under a note, no chip', async () => {
        emb.mode('down');
        const page = await env.page(env.s.admin);
        await page.fill('#kb-search', 'missing values before aggregating');
        await page.press('#kb-search', 'Enter');
        await page.waitForSelector('.meaning-unavailable');
        assert.equal(await page.textContent('.meaning-unavailable'), EN.panel.meaningUnavailable);
        assert.ok((await page.locator('.result').count()) > 0, 'the word matches are shown');
        assert.equal(await page.locator('.chip-meaning').count(), 0);
        emb.mode('ok');
        await page.close();
    });
});
