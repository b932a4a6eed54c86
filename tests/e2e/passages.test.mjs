// Search results show the passage where the query's words stand, with the
// matched words in <mark> elements (built from text, never from markup), an
// ellipsis where the passage starts inside the content; a search that finds
// nothing says so, in the UI's language. Screenshots: search-passage.png,
// search-nothing-zh.png.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setup } from './lib/harness.mjs';
import { EN, ZH, item, searchPanel as search } from './lib/ui.mjs';

const WORD = 'zymurgical';
const X = '<img src=x onerror=alert(1)>';
// Five paragraphs of about 290 characters; the word only in the fourth, an
// emoji (two UTF-16 units, one code point) and markup just before it.
const filler = (n) =>
    `Paragraph ${n} of the brewing log: weigh the grain, note the mash temperature, keep the hydrometer readings in the shared sheet ` +
    'and write down every deviation from the recipe, so that the next brewer can repeat the batch or explain why it tasted different. ' +
    'Label every bottle with its date.';
const PARAS = [
    filler('one'),
    filler('two'),
    filler('three'),
    `Paragraph four holds the point of the note 🍺: the ${WORD} step ${X} is where a batch is won or lost, because the yeast decides the flavour ` +
        'long before anyone tastes it. Pitch at the right temperature, aerate the wort, and keep the fermenter sealed and dark.',
    filler('five'),
];
const BODY = PARAS.join('\n\n');

let env;
before(async () => {
    env = await setup({ sessions: false });
    assert.ok(BODY.length > 1400 && BODY.length < 1600, `the body is ${BODY.length} characters`);
    await env.admin.write('experiences', 'brewing/fermentation.md', `---\ntitle: Fermentation notes\ntags: [brewing]\n---\n\n${BODY}\n`);
});
after(async () => {
    await env?.teardown();
});

describe('passages in the search results', () => {
    test('the passage of the fourth paragraph, its word marked, markup shown as text', async () => {
        const page = await env.page(env.s.admin);
        await item(page, 'experiences', 'brewing/fermentation.md').waitFor();
        await search(page, WORD);
        const hit = page.locator('.result[data-path="brewing/fermentation.md"]');
        await hit.waitFor();
        const passage = hit.locator('.result-passage');
        assert.equal(await passage.count(), 1, 'the result shows a passage');
        // the word, and only the word, inside a <mark> (the emoji before it is one code point, two UTF-16 units)
        assert.deepEqual(await passage.locator('mark').allTextContents(), [WORD]);
        // not the content's start: an ellipsis, an offset, none of the first paragraph
        const offset = Number(await passage.getAttribute('data-offset'));
        assert.ok(offset > PARAS[0].length, `offset ${offset}`);
        assert.equal(await passage.locator('.ellipsis-before').textContent(), '…');
        const text = await passage.evaluate((el) => [...el.childNodes].filter((n) => !(n.classList && n.classList.contains('ellipsis'))).map((n) => n.textContent).join(''));
        assert.ok(!text.includes('Paragraph one'), text);
        assert.ok(text.includes(`the ${WORD} step`), text);
        // where the server says it starts, in code points of the content
        // (as plain text: the paragraphs' line breaks are one space)
        assert.ok(Array.from(BODY).slice(offset).join('').replace(/\s+/g, ' ').startsWith(text), `the passage is not at offset ${offset}: ${text}`);
        // the markup is text: shown as written, no element made of it
        assert.ok(text.includes(X), text);
        assert.equal(await page.locator('img').count(), 0, 'an <img> element appeared');
        assert.equal(await page.evaluate(() => document.querySelectorAll('[onerror]').length), 0);
        await env.shot(page, 'search-passage');
        await page.close();
    });

    test('a passage at the start of a short content has no ellipsis; several words are each marked', async () => {
        await env.admin.write('experiences', 'brewing/short.md', '---\ntitle: Short note\n---\n\nKeep the yeast cold and the fermenter dark.\n');
        const page = await env.page(env.s.admin);
        await search(page, 'yeast fermenter');
        const passage = page.locator('.result[data-path="brewing/short.md"] .result-passage');
        await passage.waitFor();
        assert.equal(await passage.getAttribute('data-offset'), '0');
        assert.equal(await passage.locator('.ellipsis').count(), 0);
        assert.equal(await passage.textContent(), 'Keep the yeast cold and the fermenter dark.');
        assert.deepEqual(await passage.locator('mark').allTextContents(), ['yeast', 'fermenter']);
        // the long note: its passage is in the middle of its content
        assert.equal(await page.locator('.result[data-path="brewing/fermentation.md"] .result-passage .ellipsis-before').count(), 1);
        await page.close();
    });

    test('a passage inside the first 500 characters that ends before the content does: an ellipsis on both sides', async () => {
        const words = (n, w) => Array.from({ length: n }, (_, i) => `${w}${i}`).join(' ');
        const body = `${words(25, 'alpha')} the hydrolysis step ${words(30, 'omega')}`;
        assert.ok(body.length > 380 && body.length < 480, `${body.length}`);
        await env.admin.write('experiences', 'brewing/middle.md', `---\ntitle: Middle\n---\n\n${body}\n`);
        const page = await env.page(env.s.admin);
        await search(page, 'hydrolysis');
        const passage = page.locator('.result[data-path="brewing/middle.md"] .result-passage');
        await passage.waitFor();
        assert.deepEqual(await passage.locator('mark').allTextContents(), ['hydrolysis']);
        assert.equal(await passage.locator('.ellipsis-before').count(), 1);
        assert.equal(await passage.locator('.ellipsis-after').count(), 1);
        assert.ok(Number(await passage.getAttribute('data-offset')) > 0);
        await page.close();
    });

    test('a result without a passage (an older server) shows the start of its snippet', async () => {
        const page = await env.page(env.s.admin);
        await page.route('**/api/knowledge/search', async (route) => {
            const res = await route.fetch();
            const json = await res.json();
            for (const r of json.data.results) delete r.passage;
            await route.fulfill({ response: res, json });
        });
        await search(page, WORD);
        const hit = page.locator('.result[data-path="brewing/fermentation.md"]');
        await hit.waitFor();
        assert.equal(await hit.locator('.result-passage').count(), 0);
        // at most 120 characters, cut at a word, an ellipsis after
        const shown = await hit.locator('.result-snippet').evaluate((el) => el.firstChild.textContent);
        assert.equal(shown, BODY.slice(0, 120));
        assert.equal(BODY[120], ' ', 'the cut is at a word');
        assert.equal(await hit.locator('.result-snippet .ellipsis-after').count(), 1);
        assert.equal(await hit.locator('mark').count(), 0);
        await page.unroute('**/api/knowledge/search');
        await page.close();
    });

    test('highlights count code points; runs out of range are clipped, overlapping ones merged', async () => {
        const page = await env.page(env.s.admin);
        const r = await page.evaluate(async () => {
            const { markedNodes } = await import('/js/panel.js');
            const show = (text, hl) => markedNodes(text, hl).map((n) => (n.nodeName === 'MARK' ? `[${n.textContent}]` : n.textContent)).join('');
            return [
                show('𝒳 😀 word <b>x</b>', [[4, 4]]),
                show('库存周转率', [[0, 2], [1, 2]]),
                show('abc', [[1, 9], [7, 2], [-1, 1], 'x', [0, 0]]),
                show('<img src=x onerror=alert(1)>', [[1, 3]]),
            ];
        });
        assert.deepEqual(r, ['𝒳 😀 [word] <b>x</b>', '[库存周]转率', 'a[bc]', '<[img] src=x onerror=alert(1)>']);
        assert.equal(await page.locator('img').count(), 0);
        await page.close();
    });
});

describe('a search that finds nothing', () => {
    test('says there is nothing relevant for the query, in English and in Chinese', async () => {
        const page = await env.page(env.s.admin);
        await search(page, 'qwxzvyplk');
        assert.equal(await page.locator('.result').count(), 0);
        assert.equal(await page.textContent('.no-results-title'), EN.knowledge.noSearchResults);
        assert.equal(await page.textContent('.no-results-detail'), EN.panel.nothingRelevant.replace('{{query}}', 'qwxzvyplk'));
        assert.equal(await page.locator('.sections').isHidden(), true);
        await page.click('.search-clear');
        await page.waitForSelector('.sections:not([hidden])');
        await page.close();

        const zh = await env.page(env.s.admin, { lang: 'zh' });
        await search(zh, '量子纠缠');
        assert.equal(await zh.textContent('.no-results-title'), ZH.knowledge.noSearchResults);
        assert.equal(await zh.textContent('.no-results-detail'), ZH.panel.nothingRelevant.replace('{{query}}', '量子纠缠'));
        await env.shot(zh, 'search-nothing-zh');
        await zh.close();
    });
});
