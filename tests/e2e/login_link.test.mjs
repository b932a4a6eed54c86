// The one-click link (#token=) while already logged in (issue 12): the panel
// asks before the link replaces the login; declining keeps the current login
// and clears the token from the address bar. The same token asks nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setup } from './lib/harness.mjs';
import { EN } from './lib/ui.mjs';

let env;
before(async () => {
    env = await setup({ examples: false, sessions: false });
});
after(async () => {
    await env?.teardown();
});

/** A page of the shared context opened at the link; dialogs answered by answer(). */
async function openLink(token, answer) {
    const page = await env.ctx.newPage();
    page.setDefaultTimeout(10000);
    const dialogs = [];
    env.watch(page);
    env.expectFailedLoad(page, '/api/auth/me', 401); // opened without a login
    page.on('dialog', async (d) => {
        dialogs.push({ type: d.type(), message: d.message() });
        if (answer(d)) await d.accept();
        else await d.dismiss();
    });
    await page.goto(`${env.s.base}/?lang=en#token=${encodeURIComponent(token)}`);
    await page.waitForSelector('#app:not([hidden])');
    return { page, dialogs };
}

const me = (page) => page.evaluate(async () => (await (await fetch('/api/auth/me')).json()).data);

describe('a #token= link over an existing login', () => {
    test('declining keeps the current login and clears the hash', async () => {
        await env.ctx.clearCookies();
        const first = await env.page(env.s.admin);
        await first.close();
        const other = env.s.token('team-b', 'reader', 'link test');
        const { page, dialogs } = await openLink(other, () => false);
        assert.equal(dialogs.length, 1, JSON.stringify(dialogs));
        assert.equal(dialogs[0].type, 'confirm');
        assert.ok(dialogs[0].message.includes('default'), dialogs[0].message);
        assert.ok(!page.url().includes('token'), page.url());
        const who = await me(page);
        assert.equal(who.space, 'default');
        assert.equal(who.role, 'admin');
        await page.close();
    });

    test('accepting replaces the login with the link\'s token', async () => {
        const other = env.s.token('team-c', 'reader', 'link test');
        const { page, dialogs } = await openLink(other, () => true);
        assert.equal(dialogs.length, 1);
        assert.ok(dialogs[0].message.startsWith(EN.login.replaceConfirm.split('{{')[0]), dialogs[0].message);
        const who = await me(page);
        assert.equal(who.space, 'team-c');
        await page.close();
    });

    test('the same token asks nothing; no login asks nothing', async () => {
        const tok = env.s.token('team-d', 'agent', 'link test');
        await env.ctx.clearCookies();
        let r = await openLink(tok, () => false);
        assert.equal(r.dialogs.length, 0);
        await r.page.close();
        r = await openLink(tok, () => false);
        assert.equal(r.dialogs.length, 0);
        assert.equal((await me(r.page)).space, 'team-d');
        await r.page.close();
    });

    test('a link pasted into an open panel (only the hash changes) asks too', async () => {
        await env.ctx.clearCookies();
        const { page, dialogs } = await openLink(env.s.admin, () => false);
        const other = env.s.token('team-e', 'reader', 'link test');
        await page.evaluate((t) => {
            location.hash = `#token=${encodeURIComponent(t)}`;
        }, other);
        await page.waitForFunction(() => !location.hash.includes('token'));
        assert.equal(dialogs.length, 1);
        assert.equal((await me(page)).space, 'default');
        await page.close();
    });
});
