// Knowledge as the files coding agents read (fcgi/domain/interop.c,
// docs/agents.md): GET /api/knowledge/export?format=agents_md|claude_md|
// cursor|skills and POST /api/knowledge/import of the same, and knowhub
// export/import --format, through the real stack and the real binary.
// Round trips into an empty space keep titles, bodies, categories, paths
// and always-apply flags; the files' front matter is checked against the
// fields the target tools document (PyYAML reads it, not knowhub); bad
// archives and files are refused with their documented errors.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { BIN, assertNoBugs, startStack } from './lib/stack.mjs';
import { err, ok } from './lib/expect.mjs';
import { knowhub, newSpace, outputLines, tempDir, writeTree } from './lib/files_helpers.mjs';

let s;
before(async () => {
    s = await startStack();
});
after(async () => {
    await s?.stop();
});

/** A ustar archive of entries [{name, data, type ('0' file, '2' symlink, '1' hard link, '5' folder), link}]. */
function tarOf(entries) {
    const blocks = [];
    for (const e of entries) {
        const data = Buffer.from(e.data ?? '');
        const h = Buffer.alloc(512);
        const field = (off, len, text) => Buffer.from(text).copy(h, off, 0, len);
        const octal = (off, len, n) => field(off, len, n.toString(8).padStart(len - 1, '0') + '\0');
        field(0, 100, e.name);
        octal(100, 8, 0o644);
        octal(108, 8, 0);
        octal(116, 8, 0);
        octal(124, 12, (e.type ?? '0') === '0' ? data.length : 0);
        octal(136, 12, 1700000000);
        h.fill(' ', 148, 156);
        field(156, 1, e.type ?? '0');
        field(157, 100, e.link ?? '');
        field(257, 8, 'ustar\u000000');
        let sum = 0;
        for (const b of h) sum += b;
        field(148, 8, sum.toString(8).padStart(6, '0') + '\0 ');
        blocks.push(h);
        if ((e.type ?? '0') === '0') {
            blocks.push(data);
            if (data.length % 512) blocks.push(Buffer.alloc(512 - (data.length % 512)));
        }
    }
    blocks.push(Buffer.alloc(1024));
    return Buffer.concat(blocks);
}

/** The files of a tar answer, extracted by GNU tar: {name: text}. */
function untar(buf) {
    const dir = tempDir('knowhub-untar-');
    const r = spawnSync('tar', ['-xf', '-', '-C', dir], { input: buf });
    assert.equal(r.status, 0, r.stderr?.toString());
    const out = {};
    const walk = (d, pre) => {
        for (const n of fs.readdirSync(d).sort()) {
            const p = path.join(d, n);
            if (fs.statSync(p).isDirectory()) walk(p, `${pre}${n}/`);
            else out[`${pre}${n}`] = fs.readFileSync(p, 'utf8');
        }
    };
    walk(dir, '');
    return out;
}

/** The front matter of a file as PyYAML's safe_load reads it (an independent YAML reader). */
function frontMatter(text) {
    const m = /^---\n([\s\S]*?\n)---\n/.exec(text);
    assert.ok(m, `no front matter block:\n${text.slice(0, 200)}`);
    const r = spawnSync('python3', ['-c', 'import sys, json, yaml; print(json.dumps(yaml.safe_load(sys.stdin.read())))'], { input: m[1], encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return { meta: JSON.parse(r.stdout), body: text.slice(m[0].length) };
}

const LONG = 'Use this skill when a report needs a chart. '.repeat(30); // 1320 characters

/** Documents of a full space: rules (always-apply or not, tags, description, Chinese, a fenced ## line) and experiences. */
const SEED = {
    rules: {
        'roi.md': '---\ntitle: ROI 计算标准\ntags: [finance, roi]\ndescription: When ROI is asked for\nalwaysApply: false\n---\n\nROI = (revenue - cost) / cost\n\n```\n## a fenced line, not a heading\n```',
        'brief.md': '---\ntitle: Be brief\nalwaysApply: true\n---\nAnswer in three sentences at most.',
        '库存规则.md': '---\ntitle: 库存周转\ndescription: ""\nalwaysApply: true\n---\n库存周转率 = 销售成本 / 平均库存',
    },
    experiences: {
        'parse-csv.md': '---\ntitle: Parse CSV files quickly\ntags: [csv, io]\nscenario: A CSV file over 1 GB\n---\nUse a streaming parser; never load the file whole.',
        '分析/按地区汇总.md': '---\ntitle: 按地区汇总季度收入\ntags: [sales]\n---\n先按地区分组，再按季度求和，最后画柱状图。',
        'charts.md': `---\ntitle: Bar charts\ndescription: ${LONG}\n---\nOne bar per category, sorted.`,
    },
};

/** A fresh space with a token of role: [name, token]. */
function spaceWith(prefix, role = 'admin') {
    const [name, v] = newSpace(s, prefix);
    return [name, role === 'admin' ? v.token : s.token(name, role, 'interop'), v];
}

async function seed(prefix) {
    const [name, token, v] = spaceWith(prefix);
    for (const [category, docs] of Object.entries(SEED)) for (const [p, content] of Object.entries(docs)) await v.put(category, p, content);
    return [name, token, v];
}

/** Every active entry of a space as the JSON Lines export gives it, by category/path. */
async function entries(token) {
    const r = await s.api('GET', '/api/knowledge/export', { token });
    assert.equal(r.status, 200);
    const out = {};
    for (const line of r.text.split('\n').filter(Boolean)) {
        const e = JSON.parse(line);
        out[`${e.category}/${e.path}`] = e;
    }
    return out;
}

/** What a round trip must keep of one entry (tags only where the format carries them). */
function kept(e, withTags) {
    return { title: e.title, content: e.content, always_apply: e.always_apply, description: e.category === 'rules' ? e.description : undefined, tags: withTags ? e.tags.labels : undefined };
}

function assertSame(from, to, category, withTags) {
    const pick = (all) => Object.fromEntries(Object.entries(all).filter(([k]) => k.startsWith(`${category}/`)).map(([k, e]) => [k, kept(e, withTags)]));
    assert.deepEqual(pick(to), pick(from));
    assert.ok(Object.keys(pick(from)).length >= 3);
    assert.deepEqual(Object.keys(to).filter((k) => !k.startsWith(`${category}/`)), [], 'only the category the format carries');
}

const exportAs = (token, format) => s.api('GET', `/api/knowledge/export?format=${format}`, { token });
const importAs = (token, format, body, query = '') =>
    s.api('POST', `/api/knowledge/import?format=${format}${query}`, {
        token,
        rawBody: body,
        headers: { 'Content-Type': format === 'agents_md' || format === 'claude_md' ? 'text/markdown' : 'application/x-tar' },
    });

describe('GET /api/knowledge/export?format= and POST /api/knowledge/import: round trips into an empty space', () => {
    let srcToken, reader, before;
    test('seed', async () => {
        const [name, token] = await seed('interop-src');
        srcToken = token;
        reader = s.token(name, 'reader', 'interop');
        before = await entries(token);
        assert.equal(Object.keys(before).length, 6);
    });

    for (const [format, file] of [['agents_md', 'AGENTS.md'], ['claude_md', 'CLAUDE.md']]) {
        test(`${format}: one ${file}, rules as ## sections with a marker each; back into an empty space the same rules, tags included`, async () => {
            const r = await exportAs(reader, format);
            assert.equal(r.status, 200, r.text);
            assert.match(r.headers['content-type'], /^text\/markdown; charset=utf-8$/);
            assert.equal(r.headers['content-disposition'], `attachment; filename="${file}"`);
            assert.equal(r.headers['x-knowhub-exported'], '3');
            assert.ok(r.text.startsWith(`# ${file}\n\n<!-- knowhub:export {"format":"${format}",`), r.text.slice(0, 200));
            assert.match(r.text, /"experiences_not_carried":3/);
            assert.match(r.text, /<!-- knowhub:rule \{"path":"roi\.md","alwaysApply":false,"description":"When ROI is asked for","tags":\["finance","roi"\]\} -->\n## ROI 计算标准\n\n\*Applies when: When ROI is asked for\*\n\nROI = /);
            assert.match(r.text, /\n## Be brief\n\nAnswer in three sentences at most\.\n/);
            const [, token] = spaceWith(`interop-${format}`);
            const d = ok(await importAs(token, format, r.raw));
            assert.equal(d.imported, 3, JSON.stringify(d));
            assert.equal(d.refused, 0);
            assert.match(d.not_carried, /^experiences \(use the skills format\)/);
            assert.ok(d.report.includes(`imported rules/roi.md (from ${file} section 2 (ROI 计算标准))`), d.report.join('\n'));
            assertSame(before, await entries(token), 'rules', true);
            // again: nothing changes
            const again = ok(await importAs(token, format, r.raw));
            assert.deepEqual([again.imported, again.unchanged], [0, 3]);
        });
    }

    test('cursor: .cursor/rules/NAME.mdc with description, globs and alwaysApply only (PyYAML); back: the same rules without tags', async () => {
        const r = await exportAs(reader, 'cursor');
        assert.equal(r.status, 200);
        assert.equal(r.headers['content-type'], 'application/x-tar');
        assert.match(r.headers['content-disposition'], /^attachment; filename="knowhub-interop-src-\d+-cursor\.tar"$/);
        const files = untar(r.raw);
        assert.deepEqual(Object.keys(files).sort(), ['.cursor/rules/brief.mdc', '.cursor/rules/roi.mdc', '.cursor/rules/库存规则.mdc', 'KNOWHUB-EXPORT.md']);
        for (const [name, text] of Object.entries(files)) {
            if (!name.endsWith('.mdc')) continue;
            const { meta, body } = frontMatter(text);
            assert.deepEqual(Object.keys(meta), ['description', 'globs', 'alwaysApply'], name);
            assert.equal(typeof meta.description, 'string');
            assert.equal(typeof meta.globs, 'string');
            assert.equal(typeof meta.alwaysApply, 'boolean');
            assert.match(body, /^# \S/);
        }
        assert.deepEqual(frontMatter(files['.cursor/rules/roi.mdc']).meta, { description: 'When ROI is asked for', globs: '', alwaysApply: false });
        assert.deepEqual(frontMatter(files['.cursor/rules/brief.mdc']).meta, { description: '', globs: '', alwaysApply: true });
        assert.match(files['KNOWHUB-EXPORT.md'], /Not carried by this format: experiences \(use the skills format\); tags, scenario/);
        assert.match(files['KNOWHUB-EXPORT.md'], /\n3 experiences not in this format\.\n/);
        const [, token] = spaceWith('interop-cursor');
        const d = ok(await importAs(token, 'cursor', r.raw));
        assert.deepEqual([d.imported, d.refused, d.not_imported], [3, 0, 1], JSON.stringify(d));
        assert.ok(d.report.includes('skipped KNOWHUB-EXPORT.md: the report of a KnowHub export'));
        const after = await entries(token);
        assertSame(before, after, 'rules', false);
        assert.deepEqual(after['rules/roi.md'].tags.labels, [], 'tags are not carried by cursor');
    });

    test('skills: NAME/SKILL.md with name (pattern, 64, its folder) and description (1024) (PyYAML); back: the same experiences, paths and tags', async () => {
        const r = await exportAs(reader, 'skills');
        assert.equal(r.status, 200);
        assert.equal(r.headers['x-knowhub-left-out'], '1', 'the description cut to 1024 is reported');
        const files = untar(r.raw);
        const skills = Object.keys(files).filter((n) => n.endsWith('/SKILL.md')).sort();
        assert.deepEqual(skills, ['charts/SKILL.md', 'experience/SKILL.md', 'parse-csv/SKILL.md'], 'a path without ASCII letters is named experience');
        for (const name of skills) {
            const { meta, body } = frontMatter(files[name]);
            for (const k of Object.keys(meta)) assert.ok(['name', 'description', 'license', 'compatibility', 'metadata', 'allowed-tools'].includes(k), `${name}: ${k}`);
            assert.match(meta.name, /^[a-z0-9]+(-[a-z0-9]+)*$/);
            assert.ok(meta.name.length <= 64);
            assert.equal(meta.name, name.split('/')[0], 'name is its folder');
            assert.equal(typeof meta.description, 'string');
            assert.ok(meta.description.length >= 1 && [...meta.description].length <= 1024, `${name}: ${meta.description.length}`);
            for (const v of Object.values(meta.metadata)) assert.equal(typeof v, 'string', 'metadata maps strings to strings');
            assert.match(body, /^# \S/);
        }
        const csv = frontMatter(files['parse-csv/SKILL.md']).meta;
        assert.deepEqual(csv, { name: 'parse-csv', description: 'A CSV file over 1 GB', metadata: { 'knowhub-path': 'parse-csv.md', 'knowhub-tags': '["csv","io"]', 'knowhub-scenario': 'A CSV file over 1 GB' } });
        assert.equal([...frontMatter(files['charts/SKILL.md']).meta.description].length, 1024);
        assert.match(files['KNOWHUB-EXPORT.md'], /- experiences\/charts\.md: description cut to 1024 characters/);
        const [, token] = spaceWith('interop-skills');
        const d = ok(await importAs(token, 'skills', zlib.gzipSync(r.raw)));
        assert.deepEqual([d.imported, d.refused], [3, 0], JSON.stringify(d));
        const after = await entries(token);
        // the description cut to 1024 comes back cut: everything else is the same
        const fix = (all) => ({ ...all, 'experiences/charts.md': { ...all['experiences/charts.md'], description: null } });
        assertSame(fix(before), fix(after), 'experiences', true);
        assert.equal(after['experiences/分析/按地区汇总.md'].title, '按地区汇总季度收入');
    });
});

describe('knowhub export / import --format: the same round trips through the binary', () => {
    test('each format into a folder (or AGENTS.md), then into an empty space: the same rules and experiences', async () => {
        const [srcName, srcToken] = await seed('interop-cli');
        const before = await entries(srcToken);
        for (const [format, category, withTags] of [['agents_md', 'rules', true], ['claude_md', 'rules', true], ['cursor', 'rules', false], ['skills', 'experiences', true]]) {
            const dir = tempDir('knowhub-interop-cli-');
            const target = format === 'agents_md' ? path.join(dir, 'AGENTS.md') : dir;
            const e = knowhub(s.dir, ['export', target, '--format', format, '--space', srcName]);
            assert.equal(e.status, 0, e.stderr);
            assert.match(e.stderr, /knowhub: 3 exported, \d+ left out or changed/);
            const src = format === 'claude_md' ? path.join(dir, 'CLAUDE.md') : target;
            assert.ok(fs.existsSync(src), src);
            if (format === 'cursor') assert.ok(fs.existsSync(path.join(dir, '.cursor/rules/roi.mdc')));
            if (format === 'skills') assert.ok(fs.existsSync(path.join(dir, 'parse-csv/SKILL.md')));
            const [name, token] = spaceWith(`interop-cli-${format}`);
            const i = knowhub(s.dir, ['import', src, '--space', name]);
            assert.equal(i.status, 0, i.stdout + i.stderr);
            assert.match(i.stderr, new RegExp(`^knowhub: import: .*: ${format} \\(\\d+ file\\(s\\)\\)$`, 'm'));
            assert.match(i.stderr, /3 imported, 0 updated, 0 unchanged, 0 skipped, 0 refused/);
            const after = await entries(token);
            const fix = (all) => (format === 'skills' ? { ...all, 'experiences/charts.md': { ...all['experiences/charts.md'], description: null } } : all);
            assertSame(fix(before), fix(after), category, withTags);
        }
    });

    test('a hand-written AGENTS.md (no markers): each ## section a rule named by its title, always applied; the rest said', async () => {
        const dir = tempDir('knowhub-interop-hand-');
        fs.writeFileSync(path.join(dir, 'AGENTS.md'), '# Project notes\n\nSome intro text.\n\n## Run the tests\n\nUse `npm test`.\n\n### Details\n\nNo network.\n\n## 代码风格\n\n```sh\n## inside a fence\n```\nTwo spaces.\n');
        const [name, token] = spaceWith('interop-hand');
        const r = knowhub(s.dir, ['import', path.join(dir, 'AGENTS.md'), '--space', name]);
        assert.equal(r.status, 0, r.stdout + r.stderr);
        assert.deepEqual(outputLines(r.stdout), [
            'skipped AGENTS.md: 1 line(s) outside a ## section are not a rule',
            'imported rules/run-the-tests.md (from AGENTS.md section 1 (Run the tests))',
            'imported rules/代码风格.md (from AGENTS.md section 2 (代码风格))',
        ]);
        const after = await entries(token);
        assert.equal(after['rules/run-the-tests.md'].content, 'Use `npm test`.\n\n### Details\n\nNo network.');
        assert.equal(after['rules/run-the-tests.md'].always_apply, true);
        assert.equal(after['rules/代码风格.md'].content, '```sh\n## inside a fence\n```\nTwo spaces.');
    });
});

describe('bad input: the documented error, and nothing half-imported', () => {
    const mdc = (desc = 'x') => `---\ndescription: ${desc}\nglobs: ""\nalwaysApply: true\n---\n# T\n\nbody\n`;
    const count = async (token) => Object.keys(await entries(token)).length;

    for (const [what, entry, message] of [
        ['a ../ member', { name: '../evil.mdc', data: mdc() }, /^The archive is refused: tar member \.\.\/evil\.mdc: the name is absolute, holds '\.\.'/],
        ['an absolute member', { name: '/etc/evil.mdc', data: mdc() }, /^The archive is refused: tar member \/etc\/evil\.mdc: the name is absolute/],
        ['a symbolic link', { name: '.cursor/rules/link.mdc', type: '2', link: '/etc/passwd' }, /^The archive is refused: tar member \.cursor\/rules\/link\.mdc is a link or not a regular file/],
        ['a hard link', { name: '.cursor/rules/hard.mdc', type: '1', link: '.cursor/rules/ok.mdc' }, /^The archive is refused: tar member \.cursor\/rules\/hard\.mdc is a link or not a regular file/],
    ]) {
        test(`${what} in the archive: 400 INVALID_REQUEST, not even the good member imported`, async () => {
            const [, token] = spaceWith('interop-bad');
            const e = err(await importAs(token, 'cursor', tarOf([{ name: '.cursor/rules/ok.mdc', data: mdc() }, entry])), 'INVALID_REQUEST', 400);
            assert.match(e.message, message);
            assert.equal(await count(token), 0);
        });
    }

    test('oversize: a member over 1 MiB (gzip makes it small), more than 5000 files, a body over 1 MiB', async () => {
        const [, token] = spaceWith('interop-big');
        const big = zlib.gzipSync(tarOf([{ name: 'a/SKILL.md', data: 'x'.repeat(1024 * 1024 + 1) }]));
        assert.ok(big.length < 1024 * 1024);
        assert.match(err(await importAs(token, 'skills', big), 'INVALID_REQUEST', 400).message, /^The archive is refused: tar member a\/SKILL\.md: larger than 1 MiB$/);
        const many = zlib.gzipSync(tarOf(Array.from({ length: 5001 }, (_, i) => ({ name: `s${i}/SKILL.md`, data: `---\nname: s${i}\ndescription: d\n---\nb\n` }))));
        assert.ok(many.length < 1024 * 1024, `${many.length}`);
        assert.match(err(await importAs(token, 'skills', many), 'INVALID_REQUEST', 400).message, /^The archive is refused: tar member s5000\/SKILL\.md: more than 5000 files$/);
        const r = await importAs(token, 'agents_md', Buffer.alloc(1024 * 1024 + 10, 'a'));
        assert.equal(r.status, 413);
        assert.equal(await count(token), 0);
    });

    test('not a tar, an empty body, no or an unknown format, a bad on_conflict: 400', async () => {
        const [, token] = spaceWith('interop-400');
        assert.match(err(await importAs(token, 'cursor', 'just text, not a tar archive at all, long enough to be looked at'.repeat(20)), 'INVALID_REQUEST', 400).message, /^The archive is refused: not a tar archive/);
        assert.match(err(await importAs(token, 'skills', Buffer.alloc(0)), 'INVALID_REQUEST', 400).message, /^The body is empty: send the tar archive/);
        assert.match(err(await s.api('POST', '/api/knowledge/import', { token, rawBody: '## a\n\nb', headers: { 'Content-Type': 'text/markdown' } }), 'INVALID_REQUEST', 400).message, /^format is required/);
        assert.match(err(await importAs(token, 'jsonl', '{}'), 'INVALID_REQUEST', 400).message, /^format must be agents_md, claude_md, cursor or skills \(got 'jsonl'\)$/);
        assert.match(err(await exportAs(token, 'zip'), 'INVALID_REQUEST', 400).message, /^format must be jsonl, agents_md, claude_md, cursor or skills \(got 'zip'\)$/);
        assert.match(err(await importAs(token, 'agents_md', '## a\n\nb', '&on_conflict=merge'), 'INVALID_REQUEST', 400).message, /^on_conflict must be skip, overwrite or rename/);
        assert.equal(await count(token), 0);
    });

    test('a file of the format that is malformed is refused by name; the others are imported', async () => {
        const [, token] = spaceWith('interop-mixed');
        const tar = tarOf([
            { name: '.cursor/rules/good.mdc', data: mdc('good one') },
            { name: '.cursor/rules/bad-yaml.mdc', data: '---\ndescription: [unclosed\n---\nbody\n' },
            { name: '.cursor/rules/no-front.mdc', data: '# Just a body\n' },
            { name: '.cursor/rules/latin1.mdc', data: Buffer.from([0x2d, 0x2d, 0x2d, 0x0a, 0xe9, 0x0a, 0x2d, 0x2d, 0x2d, 0x0a]) },
            { name: '.cursor/rules/bool.mdc', data: '---\nalwaysApply: sometimes\n---\nx\n' },
            { name: '.cursor/rules/extra.mdc', data: '---\ndescription: d\nalwaysApply: false\npriority: 3\n---\n# Extra\n\nbody\n' },
            { name: 'README.md', data: 'not a rule' },
        ]);
        const d = ok(await importAs(token, 'cursor', tar));
        assert.deepEqual([d.imported, d.refused, d.not_imported], [2, 4, 1], JSON.stringify(d));
        assert.deepEqual(d.report, [
            'refused .cursor/rules/bad-yaml.mdc: no front matter, or front matter that is not valid YAML or not a mapping (the file must start with a --- block)',
            "refused .cursor/rules/bool.mdc: front matter 'alwaysApply' must be true or false",
            "note .cursor/rules/extra.mdc: front matter key 'priority' is not a Cursor field; not imported",
            'refused .cursor/rules/latin1.mdc: not valid UTF-8 (or contains NUL bytes)',
            'refused .cursor/rules/no-front.mdc: no front matter, or front matter that is not valid YAML or not a mapping (the file must start with a --- block)',
            'skipped README.md: not a .mdc rule',
            'imported rules/extra.md (from .cursor/rules/extra.mdc)',
            'imported rules/good.md (from .cursor/rules/good.mdc)',
        ]);
        const after = await entries(token);
        assert.deepEqual(Object.keys(after).sort(), ['rules/extra.md', 'rules/good.md']);
        assert.equal(after['rules/extra.md'].always_apply, false);
        assert.equal(after['rules/extra.md'].title, 'Extra');
    });

    test('skills: a name against the spec, a name not its folder, no description, one over 1024: refused by name', async () => {
        const [, token] = spaceWith('interop-skillbad');
        const skill = (name, desc) => `---\nname: ${name}\ndescription: ${desc}\n---\n# T\n\nbody\n`;
        const d = ok(await importAs(token, 'skills', tarOf([
            { name: 'Bad_Name/SKILL.md', data: skill('Bad_Name', 'd') },
            { name: 'a--b/SKILL.md', data: skill('a--b', 'd') },
            { name: 'folder/SKILL.md', data: skill('other', 'd') },
            { name: 'nodesc/SKILL.md', data: '---\nname: nodesc\n---\nbody\n' },
            { name: 'long/SKILL.md', data: skill('long', 'x'.repeat(1025)) },
            { name: 'fine/SKILL.md', data: skill('fine', 'Use it when fine') },
            { name: 'fine/scripts/run.sh', data: 'echo hi' },
        ])));
        assert.deepEqual([d.imported, d.refused, d.not_imported], [1, 5, 1], JSON.stringify(d));
        assert.deepEqual(d.report.slice(0, 6), [
            "refused Bad_Name/SKILL.md: front matter 'name' must be 1-64 lowercase letters, digits and single hyphens, not starting or ending with one (got 'Bad_Name')",
            "refused a--b/SKILL.md: front matter 'name' must be 1-64 lowercase letters, digits and single hyphens, not starting or ending with one (got 'a--b')",
            'skipped fine/scripts/run.sh: only the SKILL.md of a skill is imported',
            "refused folder/SKILL.md: front matter 'name' other is not the name of its folder (folder)",
            "refused long/SKILL.md: front matter 'description' must be 1-1024 characters",
            "refused nodesc/SKILL.md: front matter 'description' must be 1-1024 characters",
        ]);
        const e = (await entries(token))['experiences/fine.md'];
        assert.equal(e.title, 'T');
        assert.match(e.document, /\ndescription: Use it when fine\n/, 'a description of its own is kept in the front matter');
    });

    test('roles: readers and agents may not import (403); an editor imports experiences, its rules are refused by name', async () => {
        const [name] = spaceWith('interop-roles');
        for (const role of ['reader', 'agent']) err(await importAs(s.token(name, role, 'interop'), 'agents_md', '## a\n\nb'), 'FORBIDDEN', 403);
        const editor = s.token(name, 'editor', 'interop');
        const d = ok(await importAs(editor, 'agents_md', '## Rule one\n\nbody'));
        assert.deepEqual(d.report, ['refused AGENTS.md section 1 (Rule one): rules are written by admins only']);
        const sk = ok(await importAs(editor, 'skills', tarOf([{ name: 'ok/SKILL.md', data: '---\nname: ok\ndescription: d\n---\nbody\n' }])));
        assert.equal(sk.imported, 1);
        assert.deepEqual(Object.keys(await entries(editor)), ['experiences/ok.md']);
    });

    test('rules that would make AGENTS.md pass 1 MiB: LIMIT_EXCEEDED (the CLI: exit 1), while cursor takes them all', async () => {
        const [name, token] = spaceWith('interop-huge');
        const files = {};
        for (let i = 0; i < 3200; i++) files[`rules/r${i}.md`] = `---\ntitle: Rule number ${i}\nalwaysApply: true\n---\n${'x'.repeat(340)}\n`;
        // 3,200 near-identical rules: the conflict check (each judged against its
        // neighbours) is not what this test measures, and takes minutes on PostgreSQL
        const r = knowhub(s.dir, ['import', writeTree(tempDir('knowhub-interop-huge-'), files), '--space', name, '--no-conflict-check']);
        assert.equal(r.status, 0, r.stderr);
        const e = err(await exportAs(token, 'agents_md'), 'LIMIT_EXCEEDED');
        assert.equal(e.message, 'The rules would make AGENTS.md larger than 1 MiB: use format cursor');
        const cli = knowhub(s.dir, ['export', '-', '--format', 'claude_md', '--space', name]);
        assert.equal(cli.status, 1);
        assert.match(cli.stderr, /^knowhub: export of space interop-huge-\d+ failed: the file would be larger than 1 MiB \(use --format cursor\)$/m);
        const cur = await exportAs(token, 'cursor');
        assert.equal(cur.status, 200);
        assert.equal(cur.headers['x-knowhub-exported'], '3200');
    });

    test('the CLI: a folder with a symbolic link or a tar with ../ imports nothing (exit 1); an unknown --format is a usage error', () => {
        const [name] = spaceWith('interop-clibad');
        const dir = writeTree(tempDir('knowhub-interop-bad-'), { '.cursor/rules/ok.mdc': mdc() });
        fs.symlinkSync('/etc/passwd', path.join(dir, '.cursor/rules/link.mdc'));
        let r = knowhub(s.dir, ['import', dir, '--space', name]);
        assert.equal(r.status, 1);
        assert.match(r.stderr, /^knowhub: import: .*: link\.mdc: symbolic links are not imported; nothing imported$/m);
        const tarFile = path.join(tempDir('knowhub-interop-tar-'), 'rules.tar');
        fs.writeFileSync(tarFile, tarOf([{ name: '.cursor/rules/ok.mdc', data: mdc() }, { name: '../up.mdc', data: mdc() }]));
        r = knowhub(s.dir, ['import', tarFile, '--space', name]);
        assert.equal(r.status, 1);
        assert.match(r.stderr, /tar member \.\.\/up\.mdc: the name is absolute, holds '\.\.'.*; nothing imported$/m);
        r = knowhub(s.dir, ['import', dir, '--format', 'zip', '--space', name]);
        assert.equal(r.status, 2);
        r = knowhub(s.dir, ['export', '-', '--format', 'cursor', '--space', name]);
        assert.equal(r.status, 2, 'a folder format cannot go to standard output');
        assert.match(knowhub(s.dir, ['export', '-', '--format', 'agents_md', '--space', name]).stdout, /^# AGENTS\.md\n/);
    });

    test('a knowledge tree with a document named SKILL.md stays a knowledge tree', async () => {
        const [name, token] = spaceWith('interop-tree');
        const dir = writeTree(tempDir('knowhub-interop-tree-'), { 'experiences/tools/SKILL.md': '---\ntitle: A note named SKILL\n---\nbody\n' });
        const r = knowhub(s.dir, ['import', dir, '--space', name]);
        assert.equal(r.status, 0, r.stderr);
        assert.match(r.stderr, /knowledge tree \(rules\/ and experiences\/\)/);
        assert.deepEqual(Object.keys(await entries(token)), ['experiences/tools/SKILL.md']);
    });

    test('the CLI reads standard input with --format: AGENTS.md text, or a tar', async () => {
        const [name, token] = spaceWith('interop-stdin');
        const run = (args, input) => {
            const r = spawnSync(BIN, args, { env: { ...process.env, ...s.cliEnv() }, input, timeout: 60000 });
            assertNoBugs(r.stderr.toString(), `knowhub ${args.join(' ')}`);
            return r;
        };
        let r = run(['import', '-', '--format', 'agents_md', '--space', name], '## From stdin\n\nread from standard input\n');
        assert.equal(r.status, 0, r.stderr.toString());
        assert.equal(r.stdout.toString(), 'imported rules/from-stdin.md (from AGENTS.md section 1 (From stdin))\n');
        r = run(['import', '-', '--format', 'skills', '--space', name], tarOf([{ name: 'piped/SKILL.md', data: '---\nname: piped\ndescription: d\n---\n# Piped\n\nbody\n' }]));
        assert.equal(r.status, 0, r.stderr.toString());
        assert.deepEqual(Object.keys(await entries(token)).sort(), ['experiences/piped.md', 'rules/from-stdin.md']);
    });
});
