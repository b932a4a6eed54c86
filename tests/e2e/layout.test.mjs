// The knowledge panel folds away (docs/web.md, "Layout"): the topbar's first
// button hides it so the sessions canvas gets the width (issue 28: the panel
// squeezed the canvas and cut its columns); the choice is remembered across
// a reload, and the button shows it again.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setup } from './lib/harness.mjs';

let env;
before(async () => {
    env = await setup({ examples: false, sessions: true });
});
after(async () => {
    await env?.teardown();
});

test('the panel folds away for the sessions canvas and stays folded after a reload', async () => {
    const page = await env.page(env.s.admin, { hash: 'sessions' });
    await page.setViewportSize({ width: 1100, height: 800 });
    await page.waitForSelector('.table-card');
    const mainWidth = () => page.evaluate(() => document.querySelector('#main').clientWidth);
    const before = await mainWidth();
    const cutCards = () =>
        page.evaluate(() => {
            const main = document.querySelector('#main').getBoundingClientRect();
            return [...document.querySelectorAll('.table-card')].filter((c) => c.getBoundingClientRect().right > main.right + 1).length;
        });
    const cutBefore = await cutCards();
    assert.ok(cutBefore > 0, 'at 1100 px the example session is meant to be too wide beside the panel');
    assert.equal(await page.getAttribute('#toggle-panel', 'aria-expanded'), 'true');
    await page.click('#toggle-panel');
    assert.equal(await page.isVisible('#panel'), false);
    assert.equal(await page.getAttribute('#toggle-panel', 'aria-expanded'), 'false');
    const wide = await mainWidth();
    assert.ok(wide >= before + 300, `the canvas grew from ${before} to ${wide} px only`);
    // The tree of the example session fits the wider canvas: no card is cut on the right.
    assert.equal(await cutCards(), 0, `cards cut on the right (${cutBefore} with the panel)`);
    console.log(`# cards cut with the panel at 1100 px: ${cutBefore}; without: 0`);
    await env.shot(page, 'sessions-wide');
    await page.reload();
    await page.waitForSelector('.table-card');
    assert.equal(await page.isVisible('#panel'), false, 'folded after a reload');
    await page.click('#toggle-panel');
    assert.equal(await page.isVisible('#panel'), true);
    assert.equal(await mainWidth(), before);
    await page.close();
});
