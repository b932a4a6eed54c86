// The tokens view (admins, docs/web.md "Tokens"): create a token (shown once,
// copied to the clipboard), it works with its role; revoke it after a
// confirmation and the revoked token is refused; the admin's own token has
// no revoke button; other roles have no Tokens tab and #tokens opens the
// knowledge view. In English and in Chinese.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setup } from './lib/harness.mjs';
import { EN, ZH, until } from './lib/ui.mjs';

let env;
before(async () => {
    env = await setup({ examples: false, sessions: false });
    await env.ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: env.s.base });
});
after(async () => {
    await env?.teardown();
});

const idOf = (token) => /^kh_([0-9a-f]{16})_/.exec(token)[1];

/** Create a token in the open tokens view; returns the token text the page shows. */
async function createToken(page, role, label) {
    await page.selectOption('.token-create select[name=role]', role);
    await page.fill('.token-create input[name=label]', label);
    await page.click('.token-create button[type=submit]');
    await page.waitForSelector('.token-fresh');
    return page.inputValue('.token-fresh .token-secret');
}

for (const [lang, S] of [
    ['en', EN],
    ['zh', ZH],
]) {
    describe(`tokens view (${lang})`, () => {
        test('create: shown once with a copy button, it works with its role', async () => {
            const page = await env.page(env.s.admin, { lang, hash: 'tokens' });
            await page.waitForSelector('.tokens-table');
            assert.equal(await page.textContent('#view-tokens h2'), S.tokens.title);
            // The admin's own row: marked, without a revoke button.
            const own = page.locator(`.token-row[data-id="${idOf(env.s.admin)}"]`);
            assert.equal(await own.locator('.token-current').textContent(), S.tokens.current);
            assert.equal(await own.locator('.token-revoke').count(), 0);
            // The label's counter follows what is typed.
            await page.fill('.token-create input[name=label]', 'abc');
            assert.equal(await page.textContent('.token-create .field-counter'), '3 / 200');

            const token = await createToken(page, 'agent', `ci bot ${lang}`);
            assert.match(token, /^kh_[0-9a-f]{16}_\S+$/);
            assert.equal(await page.textContent('.token-fresh .token-warning'), S.tokens.shownOnce);
            assert.ok((await page.textContent('.token-fresh .token-connect')).includes(`${env.s.base}/mcp`));
            await page.click('.token-fresh .token-copy');
            await until(page, (text) => document.querySelector('.token-fresh .token-copy').textContent === text, S.tokens.copied);
            assert.equal(await page.evaluate(() => navigator.clipboard.readText()), token);
            // Listed, with its label and role.
            const row = page.locator(`.token-row[data-id="${idOf(token)}"]`);
            assert.ok((await row.textContent()).includes(`ci bot ${lang}`));
            // It works, as an agent.
            const me = await env.s.api('GET', '/api/auth/me', { token });
            assert.equal(me.json.data.role, 'agent');
            if (lang === 'en') await env.shot(page, 'tokens');
            // Shown once: after a new visit to the view, the secret is gone.
            await page.click('.tab[data-view="knowledge"]');
            await page.click('.tab[data-view="tokens"]');
            await page.waitForSelector('.tokens-table');
            assert.equal(await page.locator('.token-fresh').count(), 0);
            assert.ok(!(await page.textContent('#view-tokens')).includes(token.slice('kh_'.length + 17)));
            await page.close();
        });

        test('revoke: asks first, then the token is refused', async () => {
            const token = env.s.token('default', 'reader', `to revoke ${lang}`);
            const page = await env.page(env.s.admin, { lang, hash: 'tokens' });
            await page.waitForSelector(`.token-row[data-id="${idOf(token)}"]`);
            const row = page.locator(`.token-row[data-id="${idOf(token)}"]`);
            // Cancel keeps it.
            await row.locator('.token-revoke').click();
            await page.waitForSelector('dialog.confirm-dialog');
            assert.equal(await page.textContent('dialog.confirm-dialog h2'), S.tokens.revokeTitle);
            await page.click('dialog.confirm-dialog .btn:not(.btn-danger)');
            assert.equal((await env.s.api('GET', '/api/auth/me', { token })).status, 200);
            // Confirm revokes it.
            await row.locator('.token-revoke').click();
            await page.click('dialog.confirm-dialog .btn-danger');
            await page.waitForSelector(`.token-row.state-revoked[data-id="${idOf(token)}"]`);
            assert.equal(await page.locator(`.token-row[data-id="${idOf(token)}"] .token-revoke`).count(), 0);
            assert.equal((await env.s.api('GET', '/api/auth/me', { token })).status, 401);
            if (lang === 'zh') await env.shot(page, 'tokens-zh');
            await page.close();
        });
    });
}

test('other roles: no Tokens tab, and #tokens opens the knowledge view', async () => {
    for (const role of ['editor', 'agent', 'reader']) {
        const page = await env.page(env.s.token('default', role, `no tokens ${role}`));
        assert.equal(await page.locator('.tab[data-view="tokens"]').isVisible(), false, role);
        await page.evaluate(() => (location.hash = '#tokens'));
        await until(page, () => !document.querySelector('#view-knowledge').hidden);
        assert.equal(await page.locator('#view-tokens').isVisible(), false, role);
        await page.close();
    }
});
