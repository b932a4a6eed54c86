// knowhub import / export (fcgi/cli.c, fcgi/transfer.c): the real binary run
// against the data directory of a stack while it serves; what it imports the
// API sees at once, what it exports is byte for byte what was imported.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { err, ok } from './lib/expect.mjs';
import { EXAMPLES, fileView, knowhub, newSpace, outputLines, readTree, rulesBlock, tempDir, today, writeTree, zh } from './lib/files_helpers.mjs';

let s, admin;
before(async () => {
    s = await startStack();
    admin = fileView(s, s.admin);
});
after(async () => {
    await s?.stop();
});

const imp = (src, ...args) => knowhub(s.dir, ['import', src, ...args]);
const exp = (dst, ...args) => knowhub(s.dir, ['export', dst, ...args]);
const lines = outputLines;
const space = () => newSpace(s, 'imp');

describe('import docs/examples/knowledge, then export', () => {
    const exampleFiles = Object.keys(readTree(EXAMPLES)).sort();

    test('import: every example file, reported on stdout, exit 0', () => {
        assert.equal(exampleFiles.length, 9, exampleFiles.join(' '));
        const r = imp(EXAMPLES);
        assert.equal(r.status, 0, r.stderr);
        assert.deepEqual(lines(r.stdout).sort(), exampleFiles.map((f) => `imported ${f}`).sort());
        assert.match(r.stderr, /9 imported, 0 updated, 0 unchanged, 0 skipped, 0 refused/);
    });

    test('the API sees the imported files at once: list, read, rules, context, entries', async () => {
        const rules = ok(await admin.list('rules')).items;
        assert.deepEqual(rules.map((i) => i.path), ['chart-colors.md', 'cite-sources.md', 'no-secrets.md', '统一数据口径.md']);
        const chart = rules[0];
        assert.equal(chart.title, 'Colour-blind safe charts');
        assert.equal(chart.alwaysApply, false);
        assert.equal(chart.description, 'Use a colour-blind safe palette when charts compare categories');
        assert.deepEqual(chart.tags, ['charts', 'visualization']);
        assert.equal(chart.created, '2026-12-01');
        const ex = ok(await admin.list('experiences')).items.map((i) => i.path);
        assert.deepEqual(ex, ['data-cleaning/missing-values.md', 'finance/roi.md', 'sales-quarterly-trend.md', 'tools/pandas-read-csv.md', '库存/库存周转率.md']);

        const src = fs.readFileSync(path.join(EXAMPLES, 'experiences/库存/库存周转率.md'), 'utf8');
        const d = await admin.get('experiences', '库存/库存周转率.md');
        assert.equal(d.content, src);
        assert.equal(d.fields.title, '月度库存周转率的计算方法');
        assert.deepEqual(d.fields.tags, ['库存', '周转']);

        // the always-apply rules are injected in path order; chart-colors is not
        const inj = ok(await admin.rules());
        assert.deepEqual(inj.rules.map((r) => r.title), ['Cite your sources', 'Never write secrets into knowledge', '统一数据口径']);
        assert.equal(inj.block, rulesBlock(inj.rules));
        // and found by the search instead
        const c = ok(await admin.context({ question: 'colour-blind palette' }));
        assert.ok(c.knowledge.some((k) => k.path === 'chart-colors.md' && k.category === 'rules'), JSON.stringify(c.knowledge));
        const roi = ok(await admin.context({ question: 'ROI' }));
        assert.equal(roi.knowledge[0]?.path, 'finance/roi.md');
        const sales = ok(await admin.context({ question: 'zzz', table_names: ['sales_data'] }));
        assert.deepEqual(sales.knowledge.map((k) => k.path), ['sales-quarterly-trend.md']);

        // each file is an entry, with the entry-view fields from its front matter
        const pandas = await admin.get('experiences', 'tools/pandas-read-csv.md');
        const e = ok(await admin.entry(pandas.id));
        assert.equal(e.scenario, 'Loading a CSV file larger than memory with pandas');
        assert.deepEqual(e.tags.type, ['tool']);
        assert.deepEqual(e.source.urls, ['https://pandas.pydata.org/docs/reference/api/pandas.read_csv.html']);
        assert.equal(e.source.agent_id, 'research_agent');
        assert.equal(e.source.kind, 'agent');
        const revs = ok(await admin.revisions(pandas.id)).items;
        assert.equal(revs.length, 1);
        assert.match(revs[0].actor, /import/);
    });

    test('export gives back the example tree byte for byte', () => {
        const dst = path.join(tempDir(), 'out');
        const r = exp(dst);
        assert.equal(r.status, 0, r.stderr);
        assert.deepEqual(lines(r.stdout).sort(), exampleFiles.map((f) => `exported ${f}`).sort());
        assert.match(r.stderr, /9 exported/);
        const got = readTree(dst);
        const want = readTree(EXAMPLES);
        assert.deepEqual(Object.keys(got).sort(), Object.keys(want).sort());
        for (const f of Object.keys(want)) assert.ok(got[f].equals(want[f]), `${f} differs`);
    });

    test('importing the same tree again changes nothing', async () => {
        const before = ok(await admin.list('experiences')).items;
        const r = imp(EXAMPLES);
        assert.equal(r.status, 0, r.stderr);
        assert.deepEqual(lines(r.stdout).sort(), exampleFiles.map((f) => `unchanged ${f}`).sort());
        assert.match(r.stderr, /0 imported, 0 updated, 9 unchanged, 0 skipped, 0 refused/);
        assert.deepEqual(ok(await admin.list('experiences')).items, before);
    });
});

describe('round trips through the API and the files', () => {
    test('documents written over HTTP export as their exact text and import into another space unchanged', async () => {
        const [name, v] = space();
        const docs = {
            'rules/auto.md': null, // written without front matter: gets the auto header
            'experiences/crlf.md': '---\r\ntitle: CRLF\r\n---\r\nwindows\r\n',
            'experiences/folder/中文 名.md': '---\ntitle: 中文\ntags: [a, b]\n---\n\n正文\n',
            'experiences/%2e%2e/odd.md': 'odd folder name',
        };
        await v.put('rules', 'auto.md', 'auto header body');
        for (const [f, text] of Object.entries(docs)) {
            if (text === null) continue;
            const [category, ...rest] = f.split('/');
            await v.put(category, rest.join('/'), text);
        }
        // an agent's entry and a deleted file
        const entry = ok(await s.api('POST', '/api/knowledge', { token: v.token, body: { scenario: 'Agent saved', content: 'agent text', agent_id: 'bot' } }));
        await v.put('experiences', 'gone.md', 'deleted soon');
        ok(await v.del('experiences', 'gone.md'));

        const dst = tempDir();
        const r = exp(dst, '--space', name);
        assert.equal(r.status, 0, r.stderr);
        const tree = readTree(dst);
        assert.deepEqual(Object.keys(tree).sort(), ['experiences/%2e%2e/odd.md', 'experiences/agent-saved.md', 'experiences/crlf.md', 'experiences/folder/中文 名.md', 'rules/auto.md'].sort());
        for (const f of Object.keys(tree)) {
            const [category, ...rest] = f.split('/');
            assert.equal(tree[f].toString('utf8'), (await v.get(category, rest.join('/'))).content, f);
        }
        assert.equal(tree['experiences/crlf.md'].toString(), docs['experiences/crlf.md']);
        assert.ok(tree['rules/auto.md'].toString().startsWith(`---\ntitle: auto\ndescription: ""\nalwaysApply: true\ncreated: ${today()}\n`));
        // nothing escaped the export directory
        assert.ok(!fs.existsSync(path.join(dst, '..', 'odd.md')));

        const [name2, w] = space();
        const r2 = imp(dst, '--space', name2);
        assert.equal(r2.status, 0, r2.stderr);
        assert.match(r2.stderr, /5 imported/);
        for (const f of Object.keys(tree)) {
            const [category, ...rest] = f.split('/');
            assert.equal((await w.get(category, rest.join('/'))).content, tree[f].toString('utf8'), f);
        }
        const dst2 = tempDir();
        assert.equal(exp(dst2, '--space', name2).status, 0);
        const tree2 = readTree(dst2);
        assert.deepEqual(Object.keys(tree2).sort(), Object.keys(tree).sort());
        for (const f of Object.keys(tree)) assert.ok(tree2[f].equals(tree[f]), f);
    });
});

describe('round trips of what the API accepts at its edges', () => {
    test('long names, a file beside a folder of its name, agents named like files: whatever was accepted exports and imports back', async () => {
        const [name, v] = space();
        const accepted = [];
        const tryWrite = async (category, p, text) => {
            const r = await v.write(category, p, text);
            if (r.json?.status === 'success') accepted.push(`${category}/${r.json.data.path}`);
        };
        await tryWrite('experiences', `${'é'.repeat(126)}.md`, 'a 255-byte name'); // 255 bytes: fine
        await tryWrite('experiences', `${'é'.repeat(130)}.md`, 'a 263-byte name');
        await tryWrite('experiences', `${'知'.repeat(84)}/${'知'.repeat(84)}.md`, 'two 252-byte names');
        await tryWrite('rules', `${'知'.repeat(252)}.md`, 'a 759-byte name');
        await tryWrite('experiences', 'a.md', 'a file');
        await tryWrite('experiences', 'a.md/x.md', 'in a folder named like the file');
        await tryWrite('experiences', 'b.md/y.md', 'in a folder');
        await tryWrite('experiences', 'b.md', 'a file named like the folder');
        await tryWrite('experiences', 'c.md', 'to be moved');
        ok(await v.write('experiences', 'm.md', 'moved below'));
        const moved = await v.rename('experiences', 'm.md', 'c.md/m.md');
        accepted.push(moved.json?.status === 'success' ? 'experiences/c.md/m.md' : 'experiences/m.md');
        // An agent whose id is a file name gets a folder export can write.
        await tryWrite('experiences', 'bot.md', 'a file named like the agent');
        const entry = ok(await s.api('POST', '/api/knowledge', { token: v.token, body: { scenario: 'Agent saved', content: 'agent text', agent_id: 'bot.md' } }));
        accepted.push(`experiences/${entry.path}`);
        const cr = await s.api('POST', '/api/knowledge', { token: v.token, body: { scenario: 'Agent saved', content: 'agent text', path: `${'é'.repeat(130)}.md` } });
        if (cr.json?.status === 'success') accepted.push(`experiences/${cr.json.data.path}`);

        const dst = tempDir();
        const r = exp(dst, '--space', name);
        assert.equal(r.status, 0, `export failed: ${r.stdout}${r.stderr}`);
        const tree = readTree(dst);
        assert.deepEqual(Object.keys(tree).sort(), accepted.sort());
        const [name2, w] = space();
        const r2 = imp(dst, '--space', name2);
        assert.equal(r2.status, 0, r2.stderr);
        for (const f of accepted) {
            const [category, ...rest] = f.split('/');
            assert.equal((await w.get(category, rest.join('/'))).content, (await v.get(category, rest.join('/'))).content, f);
        }
        // A tree whose folder is a file already stored is refused file by file, not as a whole.
        const src = writeTree(tempDir(), { 'experiences/a.md/z.md': 'clash', 'experiences/fine.md': 'fine' });
        const r3 = imp(src, '--space', name);
        assert.equal(r3.status, 3, r3.stdout + r3.stderr);
        assert.match(r3.stdout, /refused experiences\/a\.md\/z\.md: .*file or a folder/);
        assert.match(r3.stdout, /imported experiences\/fine\.md/);
        // --on-conflict rename never makes a name longer than a disk holds ("-2" on 255 bytes).
        const src2 = writeTree(tempDir(), { [`experiences/${'é'.repeat(126)}.md`]: 'other text' });
        const r4 = imp(src2, '--space', name, '--on-conflict', 'rename');
        assert.equal(r4.status, 3, r4.stdout + r4.stderr);
        assert.match(r4.stdout, /refused .*no free name/);
        const dst3 = tempDir();
        assert.equal(exp(dst3, '--space', name).status, 0);
    });
});

describe('refused files', () => {
    test('rules sub-folder, three-level experiences, invalid UTF-8, over-limit bodies, symlinks: reported, exit 3, the rest imported; .txt and .MD skipped', async () => {
        const [name, v] = space();
        const src = writeTree(tempDir(), {
            'rules/good.md': '---\ntitle: Good rule\n---\ngood',
            'rules/sub/nested.md': 'nested rule',
            'rules/long.md': zh(351),
            'rules/zh350.md': zh(350),
            'rules/desc.md': `---\ndescription: ${'d'.repeat(101)}\n---\nbody`,
            'experiences/ok.md': 'plain experience',
            'experiences/folder/ok.md': 'one level is fine',
            'experiences/a/b/deep.md': 'too deep',
            'experiences/notes.txt': 'not markdown',
            'experiences/UPPER.MD': 'wrong suffix case',
            'experiences/bad-utf8.md': Buffer.from([0x2d, 0x2d, 0x2d, 0x0a, 0xff, 0xfe, 0x0a]),
            'experiences/nul.md': Buffer.from('a\u0000b'),
            'experiences/long.md': 'x'.repeat(2001),
            'experiences/2000.md': 'x'.repeat(2000),
        });
        fs.symlinkSync('/etc/passwd', path.join(src, 'experiences/link.md'));
        const r = imp(src, '--space', name);
        assert.equal(r.status, 3, r.stdout + r.stderr);
        const out = lines(r.stdout);
        const expectLine = (l) => assert.ok(out.includes(l), `missing "${l}" in:\n${r.stdout}`);
        expectLine('refused rules/sub/: rules does not allow sub-directories');
        expectLine('refused rules/long.md: rules body exceeds 350 characters (got 351)');
        expectLine('refused rules/desc.md: Rule description exceeds 100 characters (got 101)');
        expectLine('refused experiences/a/b/: experiences allows at most one level of sub-directories');
        expectLine('skipped experiences/notes.txt: not Markdown');
        expectLine('skipped experiences/UPPER.MD: not Markdown');
        expectLine('refused experiences/bad-utf8.md: not valid UTF-8 (or contains NUL bytes)');
        expectLine('refused experiences/nul.md: not valid UTF-8 (or contains NUL bytes)');
        expectLine('refused experiences/long.md: experiences body exceeds 2000 characters (got 2001)');
        expectLine('refused experiences/link.md: symbolic links are not imported');
        for (const f of ['rules/good.md', 'rules/zh350.md', 'experiences/ok.md', 'experiences/folder/ok.md', 'experiences/2000.md'])
            expectLine(`imported ${f}`);
        assert.equal(out.filter((l) => l.startsWith('refused ')).length, 8, r.stdout);
        assert.match(r.stderr, /5 imported, 0 updated, 0 unchanged, 0 skipped, 8 refused, 2 not Markdown, 0 hidden/);
        assert.match(r.stderr, /: knowledge tree \(rules\/ and experiences\/\)/);
        // exactly the accepted files are there, at once
        assert.deepEqual(await v.paths('rules'), ['good.md', 'zh350.md']);
        assert.deepEqual(await v.paths('experiences'), ['2000.md', 'folder/ok.md', 'ok.md']);
        // an imported file without front matter got the auto header
        const t = today();
        assert.equal((await v.get('experiences', 'ok.md')).content, `---\ntitle: ok\ncreated: ${t}\nupdated: ${t}\nsource: manual\n---\n\nplain experience`);
        err(await v.read('experiences', 'long.md'), 'TABLE_NOT_FOUND');
        // nothing went to the default space
        err(await admin.read('rules', 'good.md'), 'TABLE_NOT_FOUND');
    });

    test('usage errors exit 2; a missing source directory exits 1', () => {
        const src = tempDir();
        for (const args of [[], ['--space'], [src, '--space', 'Bad Space'], [src, '--on-conflict', 'merge'], [src, 'extra'], [src, '--bogus']]) {
            const r = knowhub(s.dir, ['import', ...args]);
            assert.equal(r.status, 2, `import ${args.join(' ')}: ${r.stderr}`);
            assert.match(r.stderr, /usage: knowhub import/);
        }
        assert.equal(knowhub(s.dir, ['export']).status, 2);
        assert.equal(knowhub(s.dir, ['export', src, '--on-conflict', 'skip']).status, 2, 'export has no --on-conflict');
        const missing = imp(path.join(src, 'does-not-exist'));
        assert.equal(missing.status, 1, missing.stderr);
        assert.equal(missing.stderr, `knowhub: import: ${path.join(src, 'does-not-exist')}: No such file or directory\n`);
        // an empty directory is an empty plain folder: nothing to import, not a failure
        const empty = imp(src, '--space', 'imp-empty');
        assert.equal(empty.status, 0, empty.stderr);
        assert.match(empty.stderr, /: plain folder /);
        assert.match(empty.stderr, /0 imported, 0 updated, 0 unchanged, 0 skipped, 0 refused/);
    });
});

describe('--on-conflict', () => {
    test('skip (the default) keeps the stored text; overwrite updates it as a revision; rename imports next to it', async () => {
        const [name, v] = space();
        const one = writeTree(tempDir(), { 'experiences/c.md': '---\ntitle: C\n---\none', 'rules/r.md': '---\ntitle: R\n---\nrule one' });
        const two = writeTree(tempDir(), { 'experiences/c.md': '---\ntitle: C\n---\ntwo', 'rules/r.md': '---\ntitle: R\n---\nrule one' });
        const three = writeTree(tempDir(), { 'experiences/c.md': '---\ntitle: C\n---\nthree' });

        assert.equal(imp(one, '--space', name).status, 0);
        const first = await v.get('experiences', 'c.md');

        for (const args of [[], ['--on-conflict', 'skip']]) {
            const r = imp(two, '--space', name, ...args);
            assert.equal(r.status, 0, r.stderr);
            assert.deepEqual(lines(r.stdout).sort(), ['skipped experiences/c.md: exists (use --on-conflict overwrite|rename)', 'unchanged rules/r.md']);
            assert.match(r.stderr, /0 imported, 0 updated, 1 unchanged, 1 skipped, 0 refused/);
            const d = await v.get('experiences', 'c.md');
            assert.equal(d.content, '---\ntitle: C\n---\none');
            assert.equal(d.version, 1);
        }

        const o = imp(two, '--space', name, '--on-conflict', 'overwrite');
        assert.equal(o.status, 0, o.stderr);
        assert.deepEqual(lines(o.stdout).sort(), ['unchanged rules/r.md', 'updated experiences/c.md']);
        let d = await v.get('experiences', 'c.md');
        assert.equal(d.content, '---\ntitle: C\n---\ntwo');
        assert.equal(d.id, first.id, 'the same document');
        assert.equal(d.version, 2);
        const revs = ok(await v.revisions(first.id)).items;
        assert.deepEqual(revs.map((x) => x.reason), ['import', 'create']);
        assert.equal(revs[1].document.document, '---\ntitle: C\n---\none');

        const rn = imp(three, '--space', name, '--on-conflict', 'rename');
        assert.equal(rn.status, 0, rn.stderr);
        assert.deepEqual(lines(rn.stdout), ['imported experiences/c-2.md (renamed from c.md)']);
        assert.equal((await v.get('experiences', 'c.md')).content, '---\ntitle: C\n---\ntwo');
        const c2 = await v.get('experiences', 'c-2.md');
        assert.equal(c2.content, '---\ntitle: C\n---\nthree');
        assert.notEqual(c2.id, first.id);
        // again: the next free name
        const four = writeTree(tempDir(), { 'experiences/c.md': '---\ntitle: C\n---\nfour' });
        assert.deepEqual(lines(imp(four, '--space', name, '--on-conflict', 'rename').stdout), ['imported experiences/c-3.md (renamed from c.md)']);
        // an identical file is unchanged, never renamed
        assert.deepEqual(lines(imp(two, '--space', name, '--on-conflict', 'rename').stdout).sort(), ['unchanged experiences/c.md', 'unchanged rules/r.md']);
        assert.deepEqual(await v.paths('experiences'), ['c-2.md', 'c-3.md', 'c.md']);
    });

    test('a file the API deleted is imported again as a new document', async () => {
        const [name, v] = space();
        const src = writeTree(tempDir(), { 'experiences/back.md': 'back again' });
        assert.equal(imp(src, '--space', name).status, 0);
        const first = await v.get('experiences', 'back.md');
        ok(await v.del('experiences', 'back.md'));
        const r = imp(src, '--space', name);
        assert.deepEqual(lines(r.stdout), ['imported experiences/back.md']);
        const again = await v.get('experiences', 'back.md');
        assert.notEqual(again.id, first.id);
    });
});

describe('export never writes through a symbolic link', () => {
    test('a planted folder or file link makes the export fail and leaves its target alone', async () => {
        const [name, v] = space();
        await v.put('experiences', 'sub/doc.md', 'exported text');
        await v.put('rules', 'r.md', 'rule text');
        const outside = tempDir();
        fs.writeFileSync(path.join(outside, 'r.md'), 'untouched');

        const dst1 = tempDir();
        fs.symlinkSync(outside, path.join(dst1, 'experiences'));
        const r1 = exp(dst1, '--space', name);
        assert.equal(r1.status, 1, r1.stdout + r1.stderr);
        assert.match(r1.stdout, /^failed experiences\/sub\/doc\.md: /m);
        assert.deepEqual(fs.readdirSync(outside), ['r.md']);

        const dst2 = tempDir();
        fs.mkdirSync(path.join(dst2, 'rules'));
        fs.symlinkSync(path.join(outside, 'r.md'), path.join(dst2, 'rules/r.md'));
        const r2 = exp(dst2, '--space', name);
        assert.equal(r2.status, 1, r2.stdout + r2.stderr);
        assert.match(r2.stdout, /^failed rules\/r\.md: /m);
        assert.equal(fs.readFileSync(path.join(outside, 'r.md'), 'utf8'), 'untouched');
    });
});

describe('spaces', () => {
    test('--space imports into that space only, and export --space writes only its documents', async () => {
        const [name, v] = space();
        const src = writeTree(tempDir(), { 'experiences/only-here.md': 'space text', 'rules/only-rule.md': 'space rule' });
        assert.equal(imp(src, '--space', name).status, 0);
        ok(await v.read('experiences', 'only-here.md'));
        err(await admin.read('experiences', 'only-here.md'), 'TABLE_NOT_FOUND');
        const dst = tempDir();
        assert.equal(exp(dst, '--space', name).status, 0);
        assert.deepEqual(Object.keys(readTree(dst)).sort(), ['experiences/only-here.md', 'rules/only-rule.md']);
        // a space nobody wrote to exports an empty tree
        const none = tempDir();
        const r = exp(none, '--space', 'imp-nobody');
        assert.equal(r.status, 0, r.stderr);
        assert.deepEqual(readTree(none), {});
    });
});
