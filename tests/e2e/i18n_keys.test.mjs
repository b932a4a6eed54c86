// The i18n files and the static page: every key the web code uses exists in
// both languages, both files have the same keys (and placeholders), the 54
// knowledge.* keys of the reference are there with its English texts, and
// the page keeps to its Content-Security-Policy (no inline script, handler or
// style; innerHTML only for the server's safe Markdown rendering).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { ROOT } from './lib/harness.mjs';

const WEB = path.join(ROOT, 'web');
const load = (lang) => JSON.parse(fs.readFileSync(path.join(ROOT, 'i18n', lang, 'common.json'), 'utf8'));
const en = load('en');
const zh = load('zh');

function flatten(obj, prefix = '', out = new Map()) {
    for (const [k, v] of Object.entries(obj)) {
        const key = prefix ? `${prefix}.${k}` : k;
        if (v && typeof v === 'object') flatten(v, key, out);
        else out.set(key, v);
    }
    return out;
}
const EN = flatten(en);
const ZH = flatten(zh);
const placeholders = (s) => [...String(s).matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1]).sort();

function webFiles(dir = WEB) {
    return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
        const p = path.join(dir, d.name);
        if (d.isDirectory()) return webFiles(p);
        return /\.(js|mjs|html)$/.test(d.name) ? [p] : [];
    });
}

/** The REFERENCE.md section 6 table: knowledge.* key -> English text. */
const REFERENCE = {
    title: 'Knowledge Base', rules: 'Rules', experiences: 'Experiences',
    rulesDescription: 'Constraints and standards that agents must follow',
    experiencesDescription: 'Reusable methods, tips, and knowledge distilled from analyses',
    newItem: 'New', search: 'Search', searchPlaceholder: 'Search knowledge...', noItems: 'No items yet',
    noSearchResults: 'No results found', editTitle: 'Edit Knowledge', createTitle: 'Create Knowledge',
    fileName: 'File name', fileNamePlaceholder: 'e.g. my-rule.md', category: 'Category',
    subDirectory: 'Sub-directory (optional)', subDirectoryPlaceholder: 'e.g. data-cleaning', content: 'Content',
    tags: 'Tags', tagsPlaceholder: 'Comma-separated tags', source: 'Source', sourceManual: 'Manual',
    sourceAgent: 'Agent summarized', save: 'Save', saving: 'Saving...', saved: 'Knowledge saved',
    deleted: 'Knowledge deleted', deleteConfirm: 'Delete "{{title}}"?', deleteConfirmBody: 'This action cannot be undone.',
    failedToLoad: 'Failed to load knowledge', failedToSave: 'Failed to save knowledge',
    failedToDelete: 'Failed to delete knowledge', failedToSearch: 'Search failed',
    saveAsExperience: 'Save as Experience', saveAsExperienceTitle: 'Save as Experience',
    saveAsExperienceHint: 'AI will distill the analysis into a reusable experience',
    categoryHint: 'Sub-directory (optional)', categoryHintPlaceholder: 'e.g. sales-analysis',
    distillStarted: 'Distilling experience...', distilling: 'Distilling experience...', distilled: 'Experience saved',
    distillFailedRetry: 'Save failed, retry', failedToDistill: 'Failed to distill experience', itemCount: '({{count}})',
    collapse: 'Collapse', expand: 'Expand', emptyState: 'Add rules or experiences to help AI agents work better.',
    markdownEditor: 'Markdown Editor', description: 'Description',
    descriptionPlaceholder: 'Short summary of this rule (max {{max}} chars)', alwaysApply: 'Always loaded into AI',
    alwaysApplyHint: 'When enabled, this rule is always injected into every AI agent prompt, regardless of context',
    charCount: '{{current}} / {{max}}', charCountExceeded: 'Exceeds {{max}} character limit ({{current}} / {{max}})',
};

describe('i18n files', () => {
    test('en and zh have the same keys, every value a non-empty string with the same placeholders', () => {
        assert.deepEqual([...EN.keys()].sort(), [...ZH.keys()].sort());
        for (const [k, v] of EN) {
            assert.equal(typeof v, 'string', `en ${k}`);
            assert.equal(typeof ZH.get(k), 'string', `zh ${k}`);
            assert.ok(v.trim() && ZH.get(k).trim(), `empty text for ${k}`);
            assert.deepEqual(placeholders(ZH.get(k)), placeholders(v), `placeholders of ${k}`);
        }
    });

    test("the reference's 54 knowledge.* keys, with its English texts and the zh examples", () => {
        assert.equal(Object.keys(REFERENCE).length, 54);
        assert.deepEqual(Object.keys(en.knowledge).sort(), Object.keys(REFERENCE).sort());
        for (const [k, text] of Object.entries(REFERENCE)) assert.equal(en.knowledge[k], text, `knowledge.${k}`);
        assert.equal(zh.knowledge.title, '知识库');
        assert.equal(zh.knowledge.rules, '规则');
        assert.equal(zh.knowledge.experiences, '经验');
        assert.equal(zh.knowledge.saveAsExperience, '保存为经验');
        assert.equal(zh.knowledge.deleteConfirm, '删除「{{title}}」？');
    });

    test('the Chinese file is translated: no zh label is the English text (names and formats aside)', () => {
        const same = [...EN].filter(([k, v]) => ZH.get(k) === v && /[A-Za-z]{3,}/.test(v.replace(/\{\{\s*\w+\s*\}\}/g, ''))).map(([k]) => k);
        assert.deepEqual(same, [], `untranslated: ${same.join(', ')}`);
    });
});

describe('keys used by web/', () => {
    const files = webFiles();
    const namespaces = Object.keys(en);
    const used = new Map(); // key -> file
    for (const f of files) {
        const src = fs.readFileSync(f, 'utf8');
        const rel = path.relative(ROOT, f);
        // t('a.b'), data-i18n="a.b", data-i18n-placeholder="a.b", and any 'ns.key' literal (maps of keys)
        for (const m of src.matchAll(/\bt\(\s*(['"])([^'"]+)\1/g)) used.set(m[2], rel);
        for (const m of src.matchAll(/data-i18n(?:-[a-z-]+)?="([^"]+)"/g)) used.set(m[1], rel);
        for (const m of src.matchAll(/(['"])([a-z]+\.[A-Za-z0-9_]+)\1/g)) if (namespaces.includes(m[2].split('.')[0])) used.set(m[2], rel);
    }

    test('the web code uses i18n keys (sanity)', () => {
        assert.ok(used.size > 150, `only ${used.size} keys found`);
    });

    test('every key used exists in both languages', () => {
        const missing = [...used].filter(([k]) => !EN.has(k) || !ZH.has(k)).map(([k, f]) => `${k} (${f})`);
        assert.deepEqual(missing, []);
    });

    test('keys are written literally: no t(`template`) calls', () => {
        for (const f of files) {
            const src = fs.readFileSync(f, 'utf8');
            assert.doesNotMatch(src, /\bt\(\s*`/, path.relative(ROOT, f));
        }
    });

    test('every key in the files is used by the page (no dead strings)', () => {
        // errors.* are named by the server's error keys and errorFields.* by
        // their params ("server error keys" below checks those).
        const unused = [...EN.keys()].filter((k) => !used.has(k) && !/^(errors|errorFields)\./.test(k));
        assert.deepEqual(unused, []);
    });
});

describe('the page keeps to its CSP', () => {
    const files = webFiles();
    test('index.html: scripts only from files, no inline handlers, no style attributes', () => {
        const html = fs.readFileSync(path.join(WEB, 'index.html'), 'utf8');
        for (const m of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)) {
            assert.match(m[1], /\bsrc="\/[^"]+"/, 'a script without src');
            assert.equal(m[2].trim(), '', 'inline script');
        }
        assert.doesNotMatch(html, /\son[a-z]+\s*=/i, 'inline event handler');
        assert.doesNotMatch(html, /\sstyle\s*=/i, 'style attribute');
        assert.doesNotMatch(html, /<style\b/i, 'style element');
    });

    test('scripts never build markup from text: innerHTML only for the server-rendered preview', () => {
        const uses = [];
        for (const f of files) {
            const src = fs.readFileSync(f, 'utf8');
            for (const m of src.matchAll(/(innerHTML|outerHTML|insertAdjacentHTML|document\.write|setAttribute\(\s*['"]style|\beval\(|new Function)/g)) {
                const line = src.slice(0, m.index).split('\n').length;
                uses.push(`${path.relative(ROOT, f)}:${src.split('\n')[line - 1].trim()}`);
            }
        }
        assert.deepEqual(uses, [
            'web/js/details.js:body.innerHTML = doc.html; // rendered by the server with libcmark in safe mode (no raw HTML, no javascript: links)',
            "web/js/editor.js:preview.innerHTML = d.html; // the server's safe rendering (cmark safe mode)",
        ]);
    });
});

describe('server error keys', () => {
    /** Every key knowhub (reply_error_key, error_set) and nginx's JSON pages can send. */
    function serverKeys() {
        const keys = new Set();
        const dir = path.join(ROOT, 'fcgi');
        for (const f of fs.readdirSync(dir, { recursive: true }).filter((n) => n.endsWith('.c'))) {
            const src = fs.readFileSync(path.join(dir, f), 'utf8');
            for (const m of src.matchAll(/reply_error_key\([^;]*?,\s*"([a-z0-9_]+)"\s*,/g)) keys.add(m[1]);
            for (const m of src.matchAll(/error_(?:set|text)\(\s*&?[\w>-]+,\s*(?:\w+|"[A-Z_]+"),\s*"([a-z0-9_]+)"/g)) keys.add(m[1]);
        }
        for (const f of fs.readdirSync(path.join(ROOT, 'nginx')).filter((n) => n.endsWith('.conf') || n.endsWith('.conf.in'))) {
            const conf = fs.readFileSync(path.join(ROOT, 'nginx', f), 'utf8');
            for (const m of conf.matchAll(/"key":"([a-z0-9_]+)"/g)) keys.add(m[1]);
        }
        return keys;
    }

    test('each has an en and a zh string (errors.<key>), with the same placeholders', () => {
        const keys = serverKeys();
        assert.ok(keys.size >= 40, `only ${keys.size} keys found: the scan is broken`);
        for (const k of ['field_too_long', 'path_traversal', 'version_conflict', 'rate_limited', 'payload_too_large', 'service_unavailable', 'token_invalid'])
            assert.ok(keys.has(k), `${k} not found in the sources`);
        const missing = [...keys].filter((k) => !EN.has(`errors.${k}`) || !ZH.has(`errors.${k}`));
        assert.deepEqual(missing, [], 'server error keys without a panel string');
        for (const k of keys) assert.deepEqual(placeholders(ZH.get(`errors.${k}`)), placeholders(EN.get(`errors.${k}`)), `errors.${k}`);
    });

    test('no dead error strings: each errors.* key is one the server sends (or the panel\'s own "network")', () => {
        const keys = serverKeys();
        const dead = Object.keys(en.errors).filter((k) => !keys.has(k) && k !== 'network');
        assert.deepEqual(dead, []);
    });
});
