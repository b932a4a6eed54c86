// server_errors.test.mjs: a server error in the panel speaks the UI's
// language: the error's key and params (docs/api.md, "Errors") become
// errors.<key> of i18n/<lang>/common.json with the params filled in; a key
// the panel does not know falls back to the server's English message.
// Screenshots: tests/out/screenshots/server-error-{zh,en}.png and
// server-error-conflict-zh.png.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setup } from './lib/harness.mjs';
import { EN, ZH, fillEditor, item, openNew } from './lib/ui.mjs';

/** The text of key in dict with {{name}} replaced by vars. */
function fill(dict, key, vars) {
    const text = key.split('.').reduce((o, k) => o[k], dict);
    assert.equal(typeof text, 'string', `missing ${key}`);
    return text.replace(/\{\{\s*(\w+)\s*\}\}/g, (m, name) => String(vars[name]));
}

/** Press Save (once the preview shows the body) and wait for the editor's
 * error line; returns its text. */
async function saveAndReadError(page) {
    await page.waitForFunction(() => document.querySelector('.editor-dialog[open] .preview')?.textContent.trim());
    await page.click('.editor-dialog[open] .ed-save');
    const line = page.locator('.editor-dialog[open] .form-error');
    await line.waitFor({ state: 'visible' });
    return (await line.textContent()).trim();
}

describe('server errors in the panel', () => {
    let env;
    before(async () => {
        env = await setup({ examples: false, sessions: false });
    });
    after(async () => {
        if (env) await env.teardown();
    });

    for (const [lang, dict] of [['zh', ZH], ['en', EN]]) {
        test(`${lang}: a title over 200 characters is refused with the ${lang} text and its numbers`, async () => {
            const page = await env.page(env.s.admin, { lang });
            await openNew(page, 'experiences');
            const title = lang === 'zh' ? '部署回滚的完整步骤'.repeat(25) + '与注意事项' : 'The full steps of a deploy rollback '.repeat(7) + 'and its checks';
            const got = Array.from(title).length;
            assert.ok(got > 200, `title of ${got} characters`);
            await fillEditor(page, { file: lang === 'zh' ? '回滚' : 'rollback', title, body: lang === 'zh' ? '先回到上一个标签，再二分查找。' : 'Redeploy the previous tag, then bisect.' });
            const shown = await saveAndReadError(page);
            const why = fill(dict, 'errors.front_matter_too_long', { field: dict.errorFields.title, got, max: 200 });
            const want = fill(dict, 'app.errorLine', { what: dict.knowledge.failedToSave, why });
            assert.equal(shown, want);
            if (lang === 'zh') {
                assert.match(shown, /^保存知识失败：文档头字段“标题”过长：\d+ 个字符，最多 200 个$/);
                assert.doesNotMatch(shown, /exceeds|Front matter/, 'the English message leaked into the zh UI');
            } else {
                assert.match(shown, /^Failed to save knowledge: Front matter “title” is too long: \d+ characters, at most 200$/);
            }
            // The toast says the same.
            await page.locator('.toast', { hasText: want }).first().waitFor();
            await env.shot(page, `server-error-${lang}`);
            await page.close();
        });
    }

    test('zh: a write over a newer version names the version in Chinese', async () => {
        await env.admin.write('experiences', 'cache/warm-up.md', '---\ntitle: 重启后预热缓存\n---\n重启后先跑一遍最常用的十个搜索。\n');
        const page = await env.page(env.s.admin, { lang: 'zh' });
        await item(page, 'experiences', 'cache/warm-up.md').locator('.edit-btn').click();
        await page.waitForSelector('.editor-dialog[open]');
        // Someone else saves twice meanwhile: version 3.
        await env.admin.write('experiences', 'cache/warm-up.md', '---\ntitle: 重启后预热缓存\n---\n另一位同事的修改。\n');
        await env.admin.write('experiences', 'cache/warm-up.md', '---\ntitle: 重启后预热缓存\n---\n又一次修改。\n');
        await fillEditor(page, { body: '我的修改：重启后先跑一遍最常用的二十个搜索。' });
        const shown = await saveAndReadError(page);
        assert.equal(shown, fill(ZH, 'app.errorLine', { what: ZH.knowledge.failedToSave, why: fill(ZH, 'errors.version_conflict', { version: 3 }) }));
        assert.match(shown, /当前为第 3 版/);
        await env.shot(page, 'server-error-conflict-zh');
        await page.close();
    });

    test('zh: an error whose key the panel does not know shows the server message', async () => {
        const page = await env.page(env.s.admin, { lang: 'zh' });
        await page.route('**/api/knowledge/write', (route) =>
            route.fulfill({
                status: 200,
                contentType: 'application/json',
                body: JSON.stringify({ status: 'error', error: { code: 'INVALID_REQUEST', message: 'A brand new check refused it', retry: false, request_id: 'x', key: 'a_key_from_the_future', params: { n: 1 } } }),
            }),
        );
        await openNew(page, 'experiences');
        await fillEditor(page, { file: 'future', body: '正文' });
        assert.equal(await saveAndReadError(page), `${ZH.knowledge.failedToSave}：A brand new check refused it`);
        await page.close();
    });
});
