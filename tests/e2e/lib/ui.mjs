// ui.mjs: small helpers for driving the panel in the browser tests.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './harness.mjs';

const load = (lang) => JSON.parse(fs.readFileSync(path.join(ROOT, 'i18n', lang, 'common.json'), 'utf8'));
export const EN = load('en');
export const ZH = load('zh');

/** Wait until fn (run in the page) returns a truthy value. */
export async function until(page, fn, arg, timeout = 10000) {
    const h = await page.waitForFunction(fn, arg, { timeout, polling: 50 });
    return h.jsonValue();
}

export const item = (page, category, p) => page.locator(`.item[data-category="${category}"][data-path="${p}"]`);

/** Open the editor for a new document of category. */
export async function openNew(page, category) {
    await page.click(`.kb-section[data-category="${category}"] .add-btn`);
    await page.waitForSelector('.editor-dialog[open]');
}

/** Fill editor fields present in opts, then save and wait for the dialog to close. */
export async function fillEditor(page, opts) {
    const d = page.locator('.editor-dialog[open]');
    if (opts.category) await d.locator('.ed-category').selectOption(opts.category);
    if (opts.folder !== undefined) await d.locator('.ed-folder').fill(opts.folder);
    if (opts.file !== undefined) await d.locator('.ed-file').fill(opts.file);
    if (opts.title !== undefined) await d.locator('.ed-title').fill(opts.title);
    if (opts.tags !== undefined) await d.locator('.ed-tags').fill(opts.tags);
    if (opts.description !== undefined) await d.locator('.ed-description').fill(opts.description);
    if (opts.alwaysApply !== undefined) await d.locator('.ed-always').setChecked(opts.alwaysApply);
    if (opts.body !== undefined) await d.locator('.ed-body').fill(opts.body);
}

export async function saveEditor(page) {
    await page.click('.editor-dialog[open] .ed-save');
    await page.waitForSelector('.editor-dialog', { state: 'detached' });
}

/** Hover an item and press its delete button, then confirm. */
export async function deleteItem(page, category, p) {
    const it = item(page, category, p);
    await it.hover();
    await it.locator('.delete-btn').click();
    await page.waitForSelector('.confirm-dialog[open]');
    await page.click('.confirm-dialog[open] .btn-danger');
    await it.waitFor({ state: 'detached' });
}

/** Run a search in the panel and wait for its answer (a result list or the no-results note). */
export async function searchPanel(page, query) {
    await page.fill('#kb-search', query);
    await page.press('#kb-search', 'Enter');
    await page.waitForSelector('.result-list, .no-results');
}

export async function toastText(page, text) {
    await page.locator('.toast', { hasText: text }).first().waitFor();
}

export function flatValues(obj, out = []) {
    for (const v of Object.values(obj)) {
        if (v && typeof v === 'object') flatValues(v, out);
        else out.push(v);
    }
    return out;
}

/**
 * Visible UI text in English on a Chinese page: any text node, placeholder,
 * title or aria-label that is an English label, or holds a Latin word of
 * three letters or more (names aside). Identifiers (code) and document text
 * (diffs) are data, not labels.
 */
export async function englishOnPage(page) {
    const zhValues = new Set(flatValues(ZH));
    const enOnly = flatValues(EN).filter((v) => !zhValues.has(v));
    return page.evaluate((enOnly) => {
        const allow = /^(KnowHub|Markdown)$/;
        const bad = [];
        const check = (text, where) => {
            const s = String(text || '').trim();
            if (!s) return;
            if (enOnly.includes(s)) bad.push(`${where}: "${s}"`);
            else if ((s.match(/[A-Za-z]{3,}/g) || []).some((w) => !allow.test(w))) bad.push(`${where}: "${s}"`);
        };
        const skip = (el) => !el || el.closest('code, pre, script, .toasts');
        const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
            const el = n.parentElement;
            if (skip(el) || !el.checkVisibility({ visibilityProperty: true })) continue;
            check(n.textContent, `<${el.tagName.toLowerCase()} class="${el.getAttribute('class') || ''}">`);
        }
        for (const el of document.querySelectorAll('[placeholder], [title], [aria-label]')) {
            if (skip(el) || !el.checkVisibility({ visibilityProperty: true })) continue;
            for (const a of ['placeholder', 'title', 'aria-label']) if (el.hasAttribute(a)) check(el.getAttribute(a), `[${a}] of <${el.tagName.toLowerCase()}>`);
        }
        return bad;
    }, enOnly);
}

export function assertNoEnglish(list, where) {
    assert.deepEqual(list, [], `English UI text on the Chinese ${where}:\n${list.join('\n')}`);
}
