// The file view of seed 004 (REFERENCE.md sections 1-3): limits, list, read,
// write, rename, delete, trash, rules, context, export, revisions and revert,
// through nginx, with the reference's messages; plus what KnowHub adds: one
// entry in both views, roles, optimistic concurrency, spaces.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { request, startStack } from './lib/stack.mjs';
import { assertCommon, err, ID_RE, ok, TIME_RE } from './lib/expect.mjs';
import { fileView, rulesBlock, today, zh } from './lib/files_helpers.mjs';

let s, admin, editor, agent, reader;
before(async () => {
    s = await startStack();
    admin = fileView(s, s.admin);
    editor = fileView(s, s.token('default', 'editor', 'files-editor'));
    agent = fileView(s, s.token('default', 'agent', 'files-agent'));
    reader = fileView(s, s.token('default', 'reader', 'files-reader'));
});
after(async () => {
    await s?.stop();
});

/** A file view in a space of its own (fresh each call), for tests that look at a whole space. */
let spaceNo = 0;
function freshSpace(role = 'admin') {
    return fileView(s, s.token(`files-${++spaceNo}`, role, 'files'));
}

// ---------------------------------------------------------------- /limits

describe('/limits', () => {
    test('answers the reference limits, for any body, to a reader', async () => {
        const want = { limits: { rule_description_max: 100, rules: 350, experiences: 2000, title_max: 200 } };
        assert.deepEqual(ok(await reader.limits()), want);
        assert.deepEqual(ok(await reader.limits({ anything: [1, 2] })), want);
        // "request: ignored" — even a body that is not JSON
        const r = await s.api('POST', '/api/knowledge/limits', { token: reader.token, rawBody: 'not json {' });
        assert.deepEqual(ok(r), want);
    });

    test('is POST only and needs a token', async () => {
        const r = await s.api('GET', '/api/knowledge/limits', { token: reader.token });
        err(r, 'METHOD_NOT_ALLOWED', 405);
        assert.equal(r.headers.allow, 'POST');
        err(await s.api('POST', '/api/knowledge/limits', {}), 'UNAUTHORIZED', 401);
    });
});

// ---------------------------------------------------------------- /list

describe('/list', () => {
    test("'category' is required: missing, blank or not a string", async () => {
        for (const body of [{}, { category: '' }, { category: '   ' }, { category: 5 }, { category: ['rules'] }, { category: null }]) {
            const e = err(await reader.post('list', body), 'INVALID_REQUEST');
            assert.equal(e.message, "'category' is required", JSON.stringify(body));
        }
        // an empty body counts as {}
        const r = await s.api('POST', '/api/knowledge/list', { token: reader.token });
        assert.equal(err(r, 'INVALID_REQUEST').message, "'category' is required");
    });

    test('Invalid category: <cat> (unquoted, as the reference)', async () => {
        assert.equal(err(await reader.list('x'), 'INVALID_REQUEST').message, 'Invalid category: x');
        assert.equal(err(await reader.list('Rules'), 'INVALID_REQUEST').message, 'Invalid category: Rules');
        assert.equal(err(await reader.list('workflows'), 'INVALID_REQUEST').message, 'Invalid category: workflows');
    });

    test('a fresh space lists nothing; the category is stripped', async () => {
        const v = freshSpace('reader');
        assert.deepEqual(ok(await v.list('rules')), { items: [] });
        assert.deepEqual(ok(await v.list(' experiences \n')), { items: [] });
    });

    test('items: title, tags, path, source, created (+ description, alwaysApply for rules), sorted by path', async () => {
        const v = freshSpace();
        await v.put('experiences', 'zeta.md', '---\ntitle: Zeta\ntags: [b, a]\ncreated: 2026-01-02\nsource: distill\n---\nz body');
        await v.put('experiences', 'alpha/one.md', 'no front matter');
        await v.put('experiences', 'beta.md', '---\ntitle: Beta\n---\nbeta body');
        await v.put('rules', 'r2.md', '---\ntitle: R2\ndescription: second\nalwaysApply: false\n---\nbody two');
        await v.put('rules', 'r1.md', 'body one');
        const ex = ok(await v.list('experiences')).items;
        assert.deepEqual(ex.map((i) => i.path), ['alpha/one.md', 'beta.md', 'zeta.md']);
        const z = ex[2];
        assert.equal(z.title, 'Zeta');
        assert.deepEqual(z.tags, ['b', 'a']);
        assert.equal(z.source, 'distill');
        assert.equal(z.created, '2026-01-02');
        assert.ok(!('description' in z) && !('alwaysApply' in z), 'experiences carry no rule fields');
        assert.ok(!('updated' in z), 'the reference list has no updated');
        assert.match(z.id, ID_RE);
        assert.equal(z.version, 1);
        assert.match(z.updated_at, TIME_RE);
        // auto header: title = stem, source manual, created today
        assert.equal(ex[0].title, 'one');
        assert.equal(ex[0].source, 'manual');
        assert.equal(ex[0].created, today());
        assert.equal(ex[1].created, '', 'no created in the front matter lists as ""');

        const rules = ok(await v.list('rules')).items;
        assert.deepEqual(rules.map((i) => i.path), ['r1.md', 'r2.md']);
        assert.equal(rules[0].title, 'r1');
        assert.equal(rules[0].description, '');
        assert.equal(rules[0].alwaysApply, true);
        assert.equal(rules[1].title, 'R2');
        assert.equal(rules[1].description, 'second');
        assert.equal(rules[1].alwaysApply, false);
        // the categories do not mix
        assert.ok(!rules.some((i) => i.path.includes('zeta')));
    });
});

// ---------------------------------------------------------------- paths

describe('path checks (reference order and messages)', () => {
    const cases = [
        // [category, path, message]
        ['experiences', '../x.md', "Path traversal segment '..' in: '../x.md'"],
        ['rules', '../x.md', 'rules does not allow sub-directories'],
        ['rules', '../../../etc/passwd.md', 'rules does not allow sub-directories'],
        ['experiences', '/etc/passwd.md', 'experiences allows at most one level of sub-directories'],
        ['rules', '/etc/passwd.md', 'rules does not allow sub-directories'],
        ['experiences', '/passwd.md', "Absolute path not allowed: '/passwd.md'"],
        ['rules', '/passwd.md', 'rules does not allow sub-directories'],
        ['experiences', 'a/../../b.md', 'experiences allows at most one level of sub-directories'],
        ['experiences', 'a/../b.md', 'experiences allows at most one level of sub-directories'], // pathlib keeps '..' as a part
        ['experiences', '../..', 'Knowledge files must be .md format'],
        ['experiences', '..', 'Knowledge files must be .md format'],
        ['experiences', '../b.md', "Path traversal segment '..' in: '../b.md'"],
        ['rules', 'a/../../b.md', 'rules does not allow sub-directories'],
        ['experiences', 'a\\b.md', 'Path contains a backslash or a control character'],
        ['rules', 'a\\b.md', 'Path contains a backslash or a control character'],
        ['experiences', '..\\x.md', 'Path contains a backslash or a control character'],
        ['experiences', 'a\tb.md', 'Path contains a backslash or a control character'],
        ['experiences', 'x.MD', 'Knowledge files must be .md format'],
        ['rules', 'x.Md', 'Knowledge files must be .md format'],
        ['experiences', 'x.txt', 'Knowledge files must be .md format'],
        ['experiences', 'x.md.txt', 'Knowledge files must be .md format'],
        ['experiences', 'x', 'Knowledge files must be .md format'],
        ['experiences', 'folder/', 'Knowledge files must be .md format'],
        ['experiences', '.md', 'Knowledge files must be .md format'],
        ['rules', '../x.txt', 'Knowledge files must be .md format'], // the suffix is checked before depth
        ['experiences', 'a/b/c.md', 'experiences allows at most one level of sub-directories'],
        ['experiences', 'a/b/c/d.md', 'experiences allows at most one level of sub-directories'],
        ['rules', 'folder/r.md', 'rules does not allow sub-directories'],
        ['x', 'a.md', "Invalid category: 'x'"],
        ['', 'a.md', "Invalid category: ''"],
        ['x', '../a.txt', "Invalid category: 'x'"], // the category is checked first
        // KnowHub's own bound on top of the reference: 255 characters
        ['experiences', `${'n'.repeat(253)}.md`, 'Path must be valid UTF-8 of at most 255 characters'],
    ];

    test('read answers every path message', async () => {
        for (const [category, p, message] of cases) {
            const e = err(await reader.read(category, p), 'INVALID_REQUEST');
            assert.equal(e.message, message, `${category} ${JSON.stringify(p)}`);
        }
    });

    test('write, delete and rename answer the same messages and write nothing', async () => {
        for (const [category, p, message] of cases) {
            const label = `${category} ${JSON.stringify(p)}`;
            assert.equal(err(await admin.write(category, p, 'x'), 'INVALID_REQUEST').message, message, `write ${label}`);
            assert.equal(err(await admin.del(category, p), 'INVALID_REQUEST').message, message, `delete ${label}`);
            assert.equal(err(await admin.rename(category, p, 'fine.md'), 'INVALID_REQUEST').message, message, `rename from ${label}`);
        }
        await admin.put('experiences', 'rename-src.md', 'source');
        await admin.put('rules', 'rename-src-rule.md', 'source');
        for (const [category, p, message] of cases) {
            if (!category) continue;
            const src = category === 'rules' ? 'rename-src-rule.md' : 'rename-src.md';
            const e = err(await admin.rename(category, src, p), 'INVALID_REQUEST');
            assert.equal(e.message, message, `rename to ${category} ${JSON.stringify(p)}`);
        }
        for (const c of ['rules', 'experiences'])
            for (const p of await admin.paths(c)) assert.ok(!/\.\.|\\|\/etc|passwd|\.txt|\.MD/i.test(p.replace(/\.md$/, '')), p);
        assert.deepEqual((await admin.get('experiences', 'rename-src.md')).path, 'rename-src.md');
    });

    test('a NUL inside the path or the category is refused, never cut short', async () => {
        for (const [p, message] of [
            ['nul.md\u0000.txt', 'Knowledge files must be .md format'],
            ['nul.md\u0000', 'Knowledge files must be .md format'],
            ['nul\u0000.md', 'Path contains a backslash or a control character'],
            ['a\u0000/b.md', 'Path contains a backslash or a control character'],
        ]) {
            assert.equal(err(await admin.write('experiences', p, 'x'), 'INVALID_REQUEST').message, message, JSON.stringify(p));
            assert.equal(err(await admin.read('experiences', p), 'INVALID_REQUEST').message, message, JSON.stringify(p));
        }
        err(await admin.read('experiences', 'nul.md'), 'TABLE_NOT_FOUND');
        const e = err(await admin.write('rules\u0000junk', 'r.md', 'x'), 'INVALID_REQUEST');
        assert.match(e.message, /^Invalid category: 'rules.junk'$/);
        assert.match(err(await admin.list('rules\u0000x'), 'INVALID_REQUEST').message, /^Invalid category: rules.x$/);
        await admin.put('experiences', 'nul-src.md', 'x');
        assert.equal(err(await admin.rename('experiences', 'nul-src.md', 'dst.md\u0000.txt'), 'INVALID_REQUEST').message,
            'Knowledge files must be .md format');
        err(await admin.read('experiences', 'dst.md'), 'TABLE_NOT_FOUND');
    });

    test("'path' is required: missing, blank or not a string", async () => {
        for (const body of [{ category: 'rules' }, { category: 'rules', path: '' }, { category: 'rules', path: '  \t ' }, { category: 'rules', path: 7 }]) {
            assert.equal(err(await reader.post('read', body), 'INVALID_REQUEST').message, "'path' is required", JSON.stringify(body));
            assert.equal(err(await admin.post('write', body), 'INVALID_REQUEST').message, "'path' is required");
            assert.equal(err(await admin.post('delete', body), 'INVALID_REQUEST').message, "'path' is required");
        }
        // the path is checked before the category, as the reference
        assert.equal(err(await reader.post('read', { category: 'nope' }), 'INVALID_REQUEST').message, "'path' is required");
    });

    test('%2e%2e is a folder name, never decoded to ..', async () => {
        const d = await agent.put('experiences', '%2e%2e/x.md', 'percent folder');
        assert.equal(d.path, '%2e%2e/x.md');
        const r = await agent.get('experiences', '%2e%2e/x.md');
        assert.match(r.content, /percent folder$/);
        assert.equal(r.fields.title, 'x');
        assert.equal(err(await agent.read('experiences', '../x.md'), 'INVALID_REQUEST').message, "Path traversal segment '..' in: '../x.md'");
        assert.equal(err(await agent.read('experiences', 'x.md'), 'TABLE_NOT_FOUND').message, 'Knowledge file not found');
        // in rules it is a sub-directory like any other
        assert.equal(err(await admin.write('rules', '%2e%2e/x.md', 'x'), 'INVALID_REQUEST').message, 'rules does not allow sub-directories');
        // and the percent form of a whole traversal is just an odd file name
        assert.equal(err(await agent.read('experiences', '%2e%2e%2fx.md'), 'TABLE_NOT_FOUND').code, 'TABLE_NOT_FOUND');
    });

    test('paths are stripped and normalised (./, //); Unicode and spaces are allowed', async () => {
        const d = await agent.put('experiences', '  ./norm//a b.md \n', 'normalised');
        assert.equal(d.path, 'norm/a b.md');
        assert.equal((await agent.get('experiences', 'norm/./a b.md')).path, 'norm/a b.md');
        assert.ok((await agent.paths('experiences')).includes('norm/a b.md'));
        const u = await agent.put('experiences', '库存/周转 率.md', '中文路径');
        assert.equal(u.path, '库存/周转 率.md');
        assert.equal((await agent.get('experiences', '库存/周转 率.md')).fields.title, '周转 率');
    });

    test('one folder level in experiences and a flat rule are fine', async () => {
        assert.equal((await agent.put('experiences', 'level1/file.md', 'ok')).path, 'level1/file.md');
        // a name is at most 255 bytes (what a file system holds): 84 × 3 + 3 passes
        assert.equal((await agent.put('experiences', `${'知'.repeat(84)}.md`, 'ok')).path, `${'知'.repeat(84)}.md`);
        const long = err(await agent.write('experiences', `${'知'.repeat(252)}.md`, 'ok'), 'INVALID_REQUEST');
        assert.equal(long.message, 'A file or folder name must be at most 255 bytes (got 759)');
        assert.equal((await admin.put('rules', 'flat.md', 'ok')).path, 'flat.md');
    });
});

// ---------------------------------------------------------------- /read

describe('/read', () => {
    test('a missing file is TABLE_NOT_FOUND "Knowledge file not found"', async () => {
        for (const [c, p] of [['rules', 'nope.md'], ['experiences', 'nope.md'], ['experiences', 'dir/nope.md']]) {
            const e = err(await reader.read(c, p), 'TABLE_NOT_FOUND');
            assert.equal(e.message, 'Knowledge file not found');
            assert.equal(e.retry, false);
        }
        // the same path in the other category is another file
        await agent.put('experiences', 'only-here.md', 'x');
        err(await reader.read('rules', 'only-here.md'), 'TABLE_NOT_FOUND');
    });

    test('content is the whole document; id, fields and html come with it', async () => {
        const doc = '---\ntitle: Full Read\ntags: [alpha, beta]\ncreated: 2026-03-04\nupdated: 2026-03-05\nsource: manual\n---\n\n# Heading\n\nSome *text*.\n';
        const w = await agent.put('experiences', 'read/full.md', doc);
        const d = await reader.get('experiences', ' read/full.md ');
        assert.equal(d.content, doc);
        assert.equal(d.category, 'experiences');
        assert.equal(d.path, 'read/full.md');
        assert.equal(d.id, w.id);
        assert.equal(d.version, 1);
        assert.equal(d.updated_at, w.updated_at);
        assert.equal(d.fields.title, 'Full Read');
        assert.deepEqual(d.fields.tags, ['alpha', 'beta']);
        assert.equal(d.fields.created, '2026-03-04');
        assert.equal(d.fields.updated, '2026-03-05');
        assert.equal(d.fields.source, 'manual');
        assert.equal(d.fields.path, 'read/full.md');
        assert.match(d.html, /<h1>Heading<\/h1>/);
        assert.match(d.html, /<em>text<\/em>/);
        assert.ok(!d.html.includes('title: Full Read'), 'the front matter is not rendered');
    });

    test('html is safe: raw <script>, event handlers and javascript: links are neutralised', async () => {
        const body = [
            'Hello <script>alert("x")</script> world',
            '',
            '<img src=x onerror="alert(1)">',
            '',
            '[click](javascript:alert(1)) [vb](vbscript:msgbox) [data](data:text/html;base64,PHNjcmlwdD4=)',
            '',
            '<a href="javascript:alert(2)">raw link</a>',
            '',
            '<iframe src="https://evil.example"></iframe>',
            '',
            '[fine](https://example.com/a?b=1)',
        ].join('\n');
        await agent.put('experiences', 'xss.md', body);
        const d = await reader.get('experiences', 'xss.md');
        assert.equal(d.content.endsWith(body), true, 'the stored Markdown keeps everything');
        const html = d.html.toLowerCase();
        for (const bad of ['<script', '</script', 'javascript:', 'vbscript:', 'onerror', '<iframe', '<img', 'data:text/html'])
            assert.ok(!html.includes(bad), `html contains ${bad}: ${d.html}`);
        assert.match(d.html, /raw HTML omitted/);
        assert.match(d.html, /<a href="https:\/\/example\.com\/a\?b=1">fine<\/a>/);
    });
});

// ---------------------------------------------------------------- /write

describe('/write', () => {
    test('the auto header for a rule without front matter', async () => {
        const w = await admin.put('rules', 'auto-rule.md', 'Always answer in English.');
        assert.equal(w.category, 'rules');
        assert.equal(w.path, 'auto-rule.md');
        assert.match(w.id, ID_RE);
        assert.equal(w.version, 1);
        assert.equal(w.created, true);
        const d = await admin.get('rules', 'auto-rule.md');
        const t = today();
        assert.equal(
            d.content,
            `---\ntitle: auto-rule\ndescription: ""\nalwaysApply: true\ncreated: ${t}\nupdated: ${t}\nsource: manual\n---\n\nAlways answer in English.`,
        );
        assert.equal(d.fields.title, 'auto-rule');
        assert.equal(d.fields.description, '');
        assert.equal(d.fields.alwaysApply, true);
        assert.equal(d.fields.source, 'manual');
        assert.equal(d.fields.created, t);
        assert.equal(d.fields.updated, t);
    });

    test('the auto header for an experience (no description, no alwaysApply)', async () => {
        await agent.put('experiences', 'auto/exp note.md', 'Body text.');
        const t = today();
        const d = await agent.get('experiences', 'auto/exp note.md');
        assert.equal(d.content, `---\ntitle: exp note\ncreated: ${t}\nupdated: ${t}\nsource: manual\n---\n\nBody text.`);
        assert.ok(!('description' in d.fields) && !('alwaysApply' in d.fields));
    });

    test('a stem that YAML would read as another type is quoted, and reads back as text', async () => {
        for (const stem of ['123', 'true', 'no', 'null', '~']) {
            await admin.put('rules', `${stem}.md`, 'typed stem');
            const d = await admin.get('rules', `${stem}.md`);
            assert.equal(d.fields.title, stem, d.content);
            assert.equal(d.fields.alwaysApply, true);
        }
    });

    test('content defaults to "" (a header only); non-strings and NUL are refused', async () => {
        const r = await admin.post('write', { category: 'experiences', path: 'empty.md' });
        ok(r);
        const t = today();
        assert.equal((await admin.get('experiences', 'empty.md')).content, `---\ntitle: empty\ncreated: ${t}\nupdated: ${t}\nsource: manual\n---\n\n`);
        for (const content of [5, true, ['a'], { a: 1 }, 'a\u0000b']) {
            const e = err(await admin.write('experiences', 'bad-content.md', content), 'INVALID_REQUEST');
            assert.equal(e.message, "'content' must be a string", JSON.stringify(content));
        }
        err(await admin.read('experiences', 'bad-content.md'), 'TABLE_NOT_FOUND');
    });

    test('front matter given is kept as written (no header added)', async () => {
        const doc = '---\ntitle: Kept\ntags: [x]\n---\nKept body';
        await agent.put('experiences', 'kept.md', doc);
        assert.equal((await agent.get('experiences', 'kept.md')).content, doc);
        // CRLF front matter is front matter too
        const crlf = '---\r\ntitle: Windows\r\ntags: [w]\r\n---\r\nCRLF body';
        await agent.put('experiences', 'crlf.md', crlf);
        const d = await agent.get('experiences', 'crlf.md');
        assert.equal(d.content, crlf);
        assert.equal(d.fields.title, 'Windows');
        assert.deepEqual(d.fields.tags, ['w']);
    });

    test('invalid YAML, a non-mapping or an empty mapping count as no front matter: the header is prepended', async () => {
        const t = today();
        const broken = '---\ntitle: [unclosed\ntags: {a\n---\nbroken body';
        await agent.put('experiences', 'yaml/broken.md', broken);
        let d = await agent.get('experiences', 'yaml/broken.md');
        assert.equal(d.content, `---\ntitle: broken\ncreated: ${t}\nupdated: ${t}\nsource: manual\n---\n\n${broken}`);
        assert.equal(d.fields.title, 'broken');
        assert.deepEqual(d.fields.tags, []);
        for (const [name, text] of [
            ['list', '---\n- a\n- b\n---\nlist body'],
            ['scalar', '---\njust text\n---\nscalar body'],
            ['emptymap', '---\n{}\n---\nempty map body'],
            ['blank', '---\n\n---\nblank body'],
            ['tab', '---\ntitle:\tx\n\t- y\n---\nbody'],
        ]) {
            await agent.put('experiences', `yaml/${name}.md`, text);
            d = await agent.get('experiences', `yaml/${name}.md`);
            assert.equal(d.content, `---\ntitle: ${name}\ncreated: ${t}\nupdated: ${t}\nsource: manual\n---\n\n${text}`, name);
            assert.equal(d.fields.title, name);
        }
        // a rule with invalid YAML gets the rule header: description "" and alwaysApply true
        await admin.put('rules', 'broken-rule.md', '---\nalwaysApply: [false\n---\nrule body');
        d = await admin.get('rules', 'broken-rule.md');
        assert.ok(d.content.startsWith(`---\ntitle: broken-rule\ndescription: ""\nalwaysApply: true\ncreated: ${t}\n`), d.content);
        assert.equal(d.fields.alwaysApply, true);
    });

    test('front matter coercion: title, tags, source, created, description', async () => {
        const cases = [
            ['title: 42', { title: '42' }],
            ['title: yes', { title: 'True' }],
            ['title: "  spaced  "', { title: '  spaced  ' }],
            ['tags: single', { tags: ['single'] }],
            ['tags: [1, true, x]', { tags: ['1', 'True', 'x'] }],
            ['tags:\n  - one\n  - two', { tags: ['one', 'two'] }],
            ['tags: ~', { tags: [] }],
            ['tags:', { tags: [] }],
            ['source: agent_summarized', { source: 'agent_summarized' }],
            ['created: 2026-04-27', { created: '2026-04-27' }],
            ['title: 中文标题', { title: '中文标题' }],
            // PyYAML reads y/n as strings (YAML 1.1 would make them booleans)
            ['tags: [y, n, Y, N, yes, off]', { tags: ['y', 'n', 'Y', 'N', 'True', 'False'] }],
            ['title: y', { title: 'y' }],
        ];
        let i = 0;
        for (const [yaml, want] of cases) {
            const p = `coerce/c${i++}.md`;
            await agent.put('experiences', p, `---\n${yaml}\n---\nbody`);
            const f = (await agent.get('experiences', p)).fields;
            for (const [k, v] of Object.entries(want)) assert.deepEqual(f[k], v, `${yaml} -> ${k}`);
            if (!('title' in want)) assert.equal(f.title, `c${i - 1}`, 'title defaults to the stem');
            if (!('source' in want)) assert.equal(f.source, 'manual', 'source defaults to manual');
        }
        await admin.put('rules', 'coerce-desc.md', '---\ntitle: D\n---\nbody');
        assert.equal((await admin.get('rules', 'coerce-desc.md')).fields.description, '');
    });

    test('alwaysApply: false, "false", no, "no", off, 0 and null mean false; absent, true and "yes" mean true', async () => {
        const falses = ['false', '"false"', "'False'", 'no', '"no"', 'off', '0', 'null'];
        const trues = ['true', '"true"', 'yes', '"yes"', '1'];
        let i = 0;
        const v = freshSpace();
        for (const [vals, want] of [[falses, false], [trues, true]]) {
            for (const val of vals) {
                const p = `aa${i++}.md`;
                await v.put('rules', p, `---\ntitle: AA ${val}\nalwaysApply: ${val}\n---\nrule body ${val}`);
                assert.equal((await v.get('rules', p)).fields.alwaysApply, want, `alwaysApply: ${val}`);
            }
        }
        await v.put('rules', 'absent.md', '---\ntitle: absent\n---\nabsent body');
        assert.equal((await v.get('rules', 'absent.md')).fields.alwaysApply, true);
        const listed = Object.fromEntries(ok(await v.list('rules')).items.map((x) => [x.title, x.alwaysApply]));
        for (const val of falses) assert.equal(listed[`AA ${val}`], false, val);
        for (const val of trues) assert.equal(listed[`AA ${val}`], true, val);
        // exactly the true ones are injected
        const injected = ok(await v.rules()).rules.map((r) => r.title).sort();
        assert.deepEqual(injected, ['absent', ...trues.map((x) => `AA ${x}`)].sort());
    });

    test('limits count Unicode characters: a rule body of 350 Chinese characters passes, 351 fails', async () => {
        const w = await admin.put('rules', 'zh350.md', zh(350));
        assert.equal(w.path, 'zh350.md');
        const e = err(await admin.write('rules', 'zh351.md', zh(351)), 'INVALID_REQUEST');
        assert.equal(e.message, 'rules body exceeds 350 characters (got 351)');
        err(await admin.read('rules', 'zh351.md'), 'TABLE_NOT_FOUND');
        // the body is stripped before it is counted, and front matter does not count
        await admin.put('rules', 'zh350-ws.md', `---\ntitle: T\ndescription: d\n---\n\n   ${zh(350)}  \n\n\t`);
        assert.equal(err(await admin.write('rules', 'zh351-fm.md', `---\ntitle: T\n---\n${zh(351)}`), 'INVALID_REQUEST').message,
            'rules body exceeds 350 characters (got 351)');
        // emoji outside the BMP are one character each
        await admin.put('rules', 'emoji350.md', '😀'.repeat(350));
        assert.equal(err(await admin.write('rules', 'emoji351.md', '😀'.repeat(351)), 'INVALID_REQUEST').message,
            'rules body exceeds 350 characters (got 351)');
    });

    test('experiences: 2000 characters pass, 2001 fail', async () => {
        await agent.put('experiences', 'lim/2000.md', 'a'.repeat(2000));
        await agent.put('experiences', 'lim/zh2000.md', zh(2000));
        assert.equal(err(await agent.write('experiences', 'lim/2001.md', 'a'.repeat(2001)), 'INVALID_REQUEST').message,
            'experiences body exceeds 2000 characters (got 2001)');
        assert.equal(err(await agent.write('experiences', 'lim/zh2001.md', zh(2001)), 'INVALID_REQUEST').message,
            'experiences body exceeds 2000 characters (got 2001)');
        // an update over the limit leaves the document as it was
        assert.equal(err(await agent.write('experiences', 'lim/2000.md', 'b'.repeat(2500)), 'INVALID_REQUEST').message,
            'experiences body exceeds 2000 characters (got 2500)');
        const d = await agent.get('experiences', 'lim/2000.md');
        assert.ok(d.content.endsWith('a'.repeat(2000)));
        assert.equal(d.version, 1);
    });

    test('a rule description of 100 characters passes, 101 fails', async () => {
        await admin.put('rules', 'desc100.md', `---\ntitle: D\ndescription: "${zh(100)}"\n---\nbody`);
        assert.equal((await admin.get('rules', 'desc100.md')).fields.description, zh(100));
        const e = err(await admin.write('rules', 'desc101.md', `---\ntitle: D\ndescription: "${zh(101)}"\n---\nbody`), 'INVALID_REQUEST');
        assert.equal(e.message, 'Rule description exceeds 100 characters (got 101)');
        // the description is checked before the body
        const both = err(await admin.write('rules', 'desc-body.md', `---\ndescription: ${'d'.repeat(120)}\n---\n${'b'.repeat(400)}`), 'INVALID_REQUEST');
        assert.equal(both.message, 'Rule description exceeds 100 characters (got 120)');
        // experiences have no description limit
        await agent.put('experiences', 'desc-exp.md', `---\ndescription: ${'d'.repeat(300)}\n---\nbody`);
    });

    test('the HTTP body: exactly 1 MiB reaches knowhub, one byte more is 413', async () => {
        const frame = (n) => {
            const head = '{"category":"experiences","path":"huge.md","content":"';
            const tail = '"}';
            return head + 'x'.repeat(n - head.length - tail.length) + tail;
        };
        const MiB = 1024 * 1024;
        const at = frame(MiB);
        assert.equal(Buffer.byteLength(at), MiB);
        const r = await s.api('POST', '/api/knowledge/write', { token: agent.token, rawBody: at });
        const e = err(r, 'INVALID_REQUEST');
        assert.match(e.message, /^experiences body exceeds 2000 characters \(got \d+\)$/);
        const over = await s.api('POST', '/api/knowledge/write', { token: agent.token, rawBody: frame(MiB + 1) });
        err(over, 'PAYLOAD_TOO_LARGE', 413);
        err(await agent.read('experiences', 'huge.md'), 'TABLE_NOT_FOUND');
    });

    test('a write to an existing path is an update: same id, version + 1, the old text a revision', async () => {
        const first = await agent.put('experiences', 'upd/doc.md', 'version one');
        const second = await agent.put('experiences', 'upd/doc.md', 'version two');
        assert.equal(second.id, first.id);
        assert.equal(second.version, 2);
        assert.equal(second.created, false);
        const d = await agent.get('experiences', 'upd/doc.md');
        assert.match(d.content, /version two$/);
        assert.equal(d.version, 2);
        assert.deepEqual((await agent.paths('experiences')).filter((p) => p === 'upd/doc.md'), ['upd/doc.md']);
        const revs = ok(await agent.revisions(first.id));
        assert.equal(revs.id, first.id);
        assert.deepEqual(revs.items.map((r) => r.version), [2, 1]);
        assert.deepEqual(revs.items.map((r) => r.reason), ['write', 'create']);
        assert.match(revs.items[1].document.document, /version one$/);
        assert.match(revs.items[0].document.document, /version two$/);
        for (const r of revs.items) {
            assert.match(r.created_at, TIME_RE);
            assert.match(r.actor, /files-agent/);
        }
    });

    test('expected_version / expected_updated: CONFLICT when someone else changed the file', async () => {
        const w1 = await agent.put('experiences', 'occ/doc.md', 'base');
        // the right version passes
        const w2 = await agent.put('experiences', 'occ/doc.md', 'mine', { expected_version: w1.version });
        assert.equal(w2.version, 2);
        // someone else writes meanwhile
        await editor.put('experiences', 'occ/doc.md', 'theirs');
        // a stale expected_version is a CONFLICT and changes nothing
        const e = err(await agent.write('experiences', 'occ/doc.md', 'stale', { expected_version: 2 }), 'CONFLICT');
        assert.match(e.message, /changed by someone else/);
        assert.match(e.message, /version 3/);
        let d = await agent.get('experiences', 'occ/doc.md');
        assert.match(d.content, /theirs$/);
        assert.equal(d.version, 3);
        // expected_updated: the updated_token the writer last saw (the plain updated_at,
        // one-second resolution, is refused here: versions 2 and 3 share their second)
        const now = await agent.put('experiences', 'occ/doc.md', 'by updated', { expected_updated: d.updated_token });
        assert.equal(now.version, 4);
        const e2 = err(await agent.write('experiences', 'occ/doc.md', 'stale2', { expected_updated: '2000-01-01 00:00:00' }), 'CONFLICT');
        assert.match(e2.message, /changed by someone else/);
        d = await agent.get('experiences', 'occ/doc.md');
        assert.match(d.content, /by updated$/);
        // expecting a version of a file that is not there (deleted or moved) is a CONFLICT too
        const gone = err(await agent.write('experiences', 'occ/never.md', 'x', { expected_version: 1 }), 'CONFLICT');
        assert.match(gone.message, /deleted or moved/);
        err(await agent.read('experiences', 'occ/never.md'), 'TABLE_NOT_FOUND');
        // wrong types
        assert.match(err(await agent.write('experiences', 'occ/doc.md', 'x', { expected_version: 'two' }), 'INVALID_REQUEST').message, /'expected_version' must be an integer/);
        assert.match(err(await agent.write('experiences', 'occ/doc.md', 'x', { expected_version: 0 }), 'INVALID_REQUEST').message, /'expected_version' must be an integer/);
        assert.match(err(await agent.write('experiences', 'occ/doc.md', 'x', { expected_updated: 5 }), 'INVALID_REQUEST').message, /'expected_updated' must be a string/);
    });
});

// ---------------------------------------------------------------- roles

describe('roles', () => {
    test('readers only read', async () => {
        await admin.put('experiences', 'roles/exp.md', 'x');
        await admin.put('rules', 'roles-rule.md', 'x');
        for (const [c, p] of [['experiences', 'roles/exp.md'], ['rules', 'roles-rule.md']]) {
            for (const r of [await reader.write(c, p, 'y'), await reader.del(c, p), await reader.rename(c, p, 'other.md')]) {
                const e = err(r, 'FORBIDDEN', 403);
                assert.equal(e.message, 'The reader role may not do this');
            }
            ok(await reader.read(c, p));
        }
        ok(await reader.list('rules'));
        ok(await reader.trash());
        ok(await reader.rules());
        ok(await reader.context({ question: 'anything' }));
        assert.equal((await reader.exportJsonl()).status, 200);
        // nothing changed
        assert.equal((await admin.get('experiences', 'roles/exp.md')).version, 1);
    });

    test('only admins write, rename or delete rules', async () => {
        await admin.put('rules', 'roles-admin.md', 'admin rule');
        for (const v of [editor, agent]) {
            for (const r of [
                await v.write('rules', 'roles-admin.md', 'changed'),
                await v.write('rules', 'roles-new.md', 'new'),
                await v.del('rules', 'roles-admin.md'),
                await v.rename('rules', 'roles-admin.md', 'roles-moved.md'),
            ]) {
                assert.equal(err(r, 'FORBIDDEN', 403).message, 'Only admins may change rules');
            }
        }
        // nor move an experience into rules, nor a rule out of rules
        await agent.put('experiences', 'roles/to-rule.md', 'short');
        assert.equal(err(await editor.rename('experiences', 'roles/to-rule.md', 'to-rule.md', { new_category: 'rules' }), 'FORBIDDEN', 403).message,
            'Only admins may change rules');
        assert.equal(err(await editor.rename('rules', 'roles-admin.md', 'x.md', { new_category: 'experiences' }), 'FORBIDDEN', 403).message,
            'Only admins may change rules');
        err(await admin.read('rules', 'roles-new.md'), 'TABLE_NOT_FOUND');
        err(await admin.read('rules', 'roles-moved.md'), 'TABLE_NOT_FOUND');
        const d = await admin.get('rules', 'roles-admin.md');
        assert.match(d.content, /admin rule$/);
        assert.equal(d.version, 1);
        // admins do all three
        await admin.put('rules', 'roles-admin.md', 'changed by admin');
        ok(await admin.rename('rules', 'roles-admin.md', 'roles-moved.md'));
        assert.equal(ok(await admin.del('rules', 'roles-moved.md')), null);
    });

    test('editors and agents write, rename and delete experiences', async () => {
        for (const [name, v] of [['editor', editor], ['agent', agent]]) {
            const w = await v.put('experiences', `roles/${name}.md`, `by ${name}`);
            assert.equal(w.created, true);
            ok(await v.rename('experiences', `roles/${name}.md`, `roles/${name}-2.md`));
            assert.equal(ok(await v.del('experiences', `roles/${name}-2.md`)), null);
        }
    });

    test('no token, a bad token: 401 on every file-view endpoint', async () => {
        for (const [m, p] of [['POST', 'limits'], ['POST', 'list'], ['POST', 'read'], ['POST', 'write'], ['POST', 'rename'], ['POST', 'delete'], ['POST', 'trash'], ['GET', 'rules'], ['POST', 'context'], ['GET', 'export']]) {
            err(await s.api(m, `/api/knowledge/${p}`, { body: m === 'POST' ? {} : undefined }), 'UNAUTHORIZED', 401);
            err(await s.api(m, `/api/knowledge/${p}`, { token: 'kh_0000000000000000_nope', body: m === 'POST' ? {} : undefined }), 'UNAUTHORIZED', 401);
        }
    });
});

// ---------------------------------------------------------------- /delete, /trash, revert

describe('/delete, /trash and restore', () => {
    test('delete answers null; the file leaves list and read; a missing file is TABLE_NOT_FOUND', async () => {
        const w = await agent.put('experiences', 'del/one.md', 'to delete');
        const r = await agent.del('experiences', ' del/one.md ');
        assert.equal(ok(r), null);
        err(await agent.read('experiences', 'del/one.md'), 'TABLE_NOT_FOUND');
        assert.ok(!(await agent.paths('experiences')).includes('del/one.md'));
        const again = err(await agent.del('experiences', 'del/one.md'), 'TABLE_NOT_FOUND');
        assert.equal(again.message, 'Knowledge file not found');
        err(await agent.entry(w.id), 'NOT_FOUND');
        // the entry keeps its revisions
        const revs = ok(await agent.revisions(w.id)).items;
        assert.deepEqual(revs.map((x) => x.reason), ['delete', 'create']);
        assert.equal(revs[0].document.status, 'deleted');
    });

    test('trash lists deleted documents, newest first, per category; Invalid category', async () => {
        const v = freshSpace();
        const a = await v.put('experiences', 'tr/a.md', '---\ntitle: Trash A\n---\na');
        const b = await v.put('rules', 'tr-b.md', 'b');
        await v.put('experiences', 'tr/keep.md', 'keep');
        ok(await v.del('experiences', 'tr/a.md'));
        ok(await v.del('rules', 'tr-b.md'));
        const all = ok(await v.trash()).items;
        assert.deepEqual(all.map((i) => i.id).sort(), [a.id, b.id].sort());
        const ta = all.find((i) => i.id === a.id);
        assert.equal(ta.category, 'experiences');
        assert.equal(ta.path, 'tr/a.md');
        assert.equal(ta.title, 'Trash A');
        assert.equal(ta.version, 2);
        assert.match(ta.deleted_at, TIME_RE);
        assert.deepEqual(ok(await v.trash({ category: 'rules' })).items.map((i) => i.id), [b.id]);
        assert.deepEqual(ok(await v.trash({ category: ' experiences ' })).items.map((i) => i.id), [a.id]);
        assert.equal(err(await v.trash({ category: 'bin' }), 'INVALID_REQUEST').message, 'Invalid category: bin');
    });

    test('revert without a version restores a deleted document (same id, same path)', async () => {
        const w = await agent.put('experiences', 'del/restore.md', 'restore me');
        ok(await agent.del('experiences', 'del/restore.md'));
        const r = ok(await agent.revert(w.id));
        assert.equal(r.id, w.id);
        assert.equal(r.status, 'active');
        assert.equal(r.version, 3);
        const d = await agent.get('experiences', 'del/restore.md');
        assert.equal(d.id, w.id);
        assert.match(d.content, /restore me$/);
        assert.ok(!ok(await agent.trash()).items.some((i) => i.id === w.id));
        assert.deepEqual(ok(await agent.revisions(w.id)).items.map((x) => x.reason), ['revert', 'delete', 'create']);
        // an active document needs a version
        assert.equal(err(await agent.revert(w.id), 'INVALID_REQUEST').message,
            "'version' is required (only a deleted entry can be restored without one)");
    });

    test('revert {version} brings an older text back as a new revision', async () => {
        const w = await agent.put('experiences', 'rev/doc.md', 'text one');
        await agent.put('experiences', 'rev/doc.md', 'text two');
        const r = ok(await agent.revert(w.id, { version: 1 }));
        assert.equal(r.version, 3);
        const d = await agent.get('experiences', 'rev/doc.md');
        assert.match(d.content, /text one$/);
        assert.equal(d.version, 3);
        const e = err(await agent.revert(w.id, { version: 99 }), 'NOT_FOUND');
        assert.match(e.message, /Revision 99/);
        assert.match(err(await agent.revert(w.id, { version: 'x' }), 'INVALID_REQUEST').message, /'version' must be an integer/);
    });

    test('a deleted path can be written again (a new document); restoring the old one is then a CONFLICT', async () => {
        const old = await agent.put('experiences', 'del/reuse.md', 'old');
        ok(await agent.del('experiences', 'del/reuse.md'));
        const fresh = await agent.put('experiences', 'del/reuse.md', 'new');
        assert.equal(fresh.created, true);
        assert.notEqual(fresh.id, old.id);
        const e = err(await agent.revert(old.id), 'CONFLICT');
        assert.match(e.message, /holds the path/);
        assert.match((await agent.get('experiences', 'del/reuse.md')).content, /new$/);
    });

    test('only admins delete or restore a rule', async () => {
        const w = await admin.put('rules', 'del-rule.md', 'rule');
        ok(await admin.del('rules', 'del-rule.md'));
        err(await editor.revert(w.id), 'FORBIDDEN', 403);
        ok(await admin.revert(w.id));
        ok(await admin.read('rules', 'del-rule.md'));
    });

    test('reverting an experience to a revision that was a rule is for admins only', async () => {
        const w = await admin.put('rules', 'demote-me.md', 'once a rule');
        ok(await admin.rename('rules', 'demote-me.md', 'demoted.md', { new_category: 'experiences' }));
        assert.equal((await agent.get('experiences', 'demoted.md')).id, w.id);
        for (const v of [agent, editor]) {
            const e = err(await v.revert(w.id, { version: 1 }), 'FORBIDDEN', 403);
            assert.equal(e.message, 'Only admins may change rules');
        }
        err(await agent.read('rules', 'demote-me.md'), 'TABLE_NOT_FOUND');
        assert.deepEqual(ok(await agent.rules()).rules.filter((r) => r.title === 'demote-me'), []);
        // an experience-to-experience revert stays open to agents
        await agent.put('experiences', 'demoted.md', '---\ntitle: demoted\n---\nedited by an agent');
        ok(await agent.revert(w.id, { version: 2 }));
        // and the admin may bring the rule back
        ok(await admin.revert(w.id, { version: 1 }));
        ok(await agent.read('rules', 'demote-me.md'));
    });
});

// ---------------------------------------------------------------- /rename

describe('/rename', () => {
    test('moves a document atomically: same id, new path, old path gone, a "rename" revision', async () => {
        const w = await agent.put('experiences', 'mv/src.md', '---\ntitle: Moving\n---\nmoving body');
        const r = ok(await agent.rename('experiences', 'mv/src.md', ' mv2/dst.md '));
        assert.deepEqual(r, { category: 'experiences', path: 'mv2/dst.md', id: w.id });
        err(await agent.read('experiences', 'mv/src.md'), 'TABLE_NOT_FOUND');
        const d = await agent.get('experiences', 'mv2/dst.md');
        assert.equal(d.id, w.id);
        assert.equal(d.version, 2);
        assert.match(d.content, /moving body$/);
        assert.equal(d.fields.title, 'Moving');
        const paths = await agent.paths('experiences');
        assert.ok(paths.includes('mv2/dst.md') && !paths.includes('mv/src.md'));
        assert.deepEqual(ok(await agent.revisions(w.id)).items.map((x) => x.reason), ['rename', 'create']);
        const e = ok(await agent.entry(w.id));
        assert.equal(e.path, 'mv2/dst.md');
        // the title of a document without one follows the new stem
        await agent.put('experiences', 'mv/stem-a.md', '---\ntags: [t]\n---\nno title');
        ok(await agent.rename('experiences', 'mv/stem-a.md', 'mv/stem-b.md'));
        assert.equal((await agent.get('experiences', 'mv/stem-b.md')).fields.title, 'stem-b');
    });

    test('errors: missing source, taken target, new_path required, expected_version', async () => {
        await agent.put('experiences', 'mv/a.md', 'a');
        await agent.put('experiences', 'mv/b.md', 'b');
        assert.equal(err(await agent.rename('experiences', 'mv/none.md', 'mv/c.md'), 'TABLE_NOT_FOUND').message, 'Knowledge file not found');
        const e = err(await agent.rename('experiences', 'mv/a.md', 'mv/b.md'), 'CONFLICT');
        assert.equal(e.message, 'A document already exists at experiences/mv/b.md');
        assert.match((await agent.get('experiences', 'mv/a.md')).content, /a$/);
        assert.match((await agent.get('experiences', 'mv/b.md')).content, /b$/);
        for (const body of [{ category: 'experiences', path: 'mv/a.md' }, { category: 'experiences', path: 'mv/a.md', new_path: ' ' }])
            assert.equal(err(await agent.post('rename', body), 'INVALID_REQUEST').message, "'new_path' is required");
        assert.match(err(await agent.rename('experiences', 'mv/a.md', 'mv/c.md', { expected_version: 7 }), 'CONFLICT').message, /changed/);
        ok(await agent.rename('experiences', 'mv/a.md', 'mv/c.md', { expected_version: 1 }));
        // to itself: nothing to do
        const same = ok(await agent.rename('experiences', 'mv/c.md', './mv/c.md'));
        assert.equal(same.path, 'mv/c.md');
        assert.equal((await agent.get('experiences', 'mv/c.md')).version, 2);
    });

    test('new_category moves between categories; the destination rules (depth, limits) apply', async () => {
        await agent.put('experiences', 'cat/short.md', '---\ntitle: Short\n---\nshort enough for a rule');
        assert.equal(err(await admin.rename('experiences', 'cat/short.md', 'cat/short.md', { new_category: 'rules' }), 'INVALID_REQUEST').message,
            'rules does not allow sub-directories');
        assert.equal(err(await admin.rename('experiences', 'cat/short.md', 'x.md', { new_category: 'nope' }), 'INVALID_REQUEST').message,
            "Invalid category: 'nope'");
        const r = ok(await admin.rename('experiences', 'cat/short.md', 'short.md', { new_category: 'rules' }));
        assert.equal(r.category, 'rules');
        const d = await admin.get('rules', 'short.md');
        assert.equal(d.fields.alwaysApply, true);
        err(await admin.read('experiences', 'cat/short.md'), 'TABLE_NOT_FOUND');

        // a body over the rules limit cannot become a rule by a rename
        await agent.put('experiences', 'cat/long.md', 'L'.repeat(1000));
        const e = err(await admin.rename('experiences', 'cat/long.md', 'long.md', { new_category: 'rules' }), 'INVALID_REQUEST');
        assert.equal(e.message, 'rules body exceeds 350 characters (got 1000)');
        err(await admin.read('rules', 'long.md'), 'TABLE_NOT_FOUND');
        ok(await admin.read('experiences', 'cat/long.md'));
    });
});

// ---------------------------------------------------------------- /rules and /context

describe('GET /rules and POST /context', () => {
    let v;
    before(async () => {
        v = freshSpace();
        await v.put('rules', 'b-second.md', '---\ntitle: Second rule\ndescription: two\nalwaysApply: true\n---\n\n  Second body.  \n');
        await v.put('rules', 'a-first.md', 'First body.');
        await v.put('rules', 'c-off.md', '---\ntitle: Chart palette\ndescription: colour-blind safe\nalwaysApply: false\n---\nUse the Okabe-Ito palette for charts.');
        await v.put('rules', 'd-off-str.md', '---\ntitle: Quoted false palette\nalwaysApply: "false"\n---\npalette quoted');
        await v.put('rules', 'e-empty.md', '---\ntitle: Empty rule\n---\n   \n');
        await v.put('experiences', 'finance/roi.md', '---\ntitle: ROI Calculation\ntags: [finance]\n---\nROI = (revenue - cost) / cost');
        await v.put('experiences', 'misc/roi.md', '---\ntitle: Something\n---\nunrelated');
        await v.put('experiences', 'sales.md', '---\ntitle: Quarterly\ntags: [sales_data_2024]\n---\nsales body');
    });

    test('rules: the always-apply rules in path order with the reference block; false ones and empty bodies left out', async () => {
        const d = ok(await v.rules());
        const want = [{ title: 'a-first', body: 'First body.' }, { title: 'Second rule', body: 'Second body.' }];
        assert.deepEqual(d.rules, want);
        assert.equal(d.block, rulesBlock(want));
        assert.ok(d.block.startsWith('\n\n## \u26a0 User Rules (MANDATORY \u2014 override defaults)\n\n'));
        assert.ok(d.block.endsWith('\n### Second rule\nSecond body.\n'));
        assert.ok(!d.block.includes('palette'));
    });

    test('rules: a space without rules gets [] and ""', async () => {
        assert.deepEqual(ok(await freshSpace('reader').rules()), { rules: [], block: '' });
    });

    test('context: the rules block plus the matching knowledge; alwaysApply:false rules are found, always-apply ones are not', async () => {
        const d = ok(await v.context({ question: 'palette for charts' }));
        assert.equal(d.rules_block, rulesBlock([{ title: 'a-first', body: 'First body.' }, { title: 'Second rule', body: 'Second body.' }]));
        assert.deepEqual(d.rules.map((r) => r.title), ['a-first', 'Second rule']);
        const titles = d.knowledge.map((k) => k.title);
        assert.ok(titles.includes('Chart palette'), JSON.stringify(d.knowledge));
        assert.ok(titles.includes('Quoted false palette'), 'alwaysApply "false" is false, so it is searched');
        const hit = d.knowledge.find((k) => k.title === 'Chart palette');
        assert.deepEqual(hit, { category: 'rules', title: 'Chart palette', path: 'c-off.md', snippet: 'Use the Okabe-Ito palette for charts.' });
        assert.ok(d.knowledge_block.startsWith('[RELEVANT KNOWLEDGE]\n'));
        assert.ok(d.knowledge_block.includes('\n### [rule] Chart palette\nUse the Okabe-Ito palette for charts.\n'));
        // an always-apply rule is injected, never searched
        const first = ok(await v.context({ question: 'First body' }));
        assert.ok(!first.knowledge.some((k) => k.path === 'a-first.md'));
    });

    test('context: reference scores order the hits; table names give the tag bonus', async () => {
        const d = ok(await v.context({ question: 'ROI' }));
        assert.deepEqual(d.knowledge.map((k) => k.path), ['finance/roi.md', 'misc/roi.md']);
        assert.ok(d.knowledge_block.includes('\n### [knowledge] ROI Calculation\nROI = (revenue - cost) / cost\n'));
        // "zzz" matches nothing, but a table name inside a tag scores 30 per name
        assert.deepEqual(ok(await v.context({ question: 'zzz' })).knowledge, []);
        const t = ok(await v.context({ question: 'zzz', table_names: ['sales_data'] }));
        assert.deepEqual(t.knowledge.map((k) => k.path), ['sales.md']);
        // only the first five table names count
        const six = ok(await v.context({ question: 'zzz', table_names: ['t1', 't2', 't3', 't4', 't5', 'sales_data'] }));
        assert.deepEqual(six.knowledge, []);
        assert.equal(six.knowledge_block, '');
    });

    test('context: a query without tokens finds nothing (docs/search.md); a source other than manual scores x0.9', async () => {
        const w = freshSpace();
        await w.put('experiences', 'book.md', '---\ntitle: Book Club\n---\nreading');
        await w.put('experiences', 'other.md', '---\ntitle: The Other Thing\n---\nx');
        // "ok" (two letters) and "the" (a stop word) are no tokens: a deliberate
        // difference from the reference, whose whole-query bonus would match
        assert.deepEqual(ok(await w.context({ question: 'ok' })).knowledge, []);
        assert.deepEqual(ok(await w.context({ question: 'the' })).knowledge, []);
        assert.deepEqual(ok(await w.context({ question: 'book' })).knowledge.map((k) => k.path), ['book.md']);
        // same match, the newer one distilled: the manual one ranks first
        await w.put('experiences', 'cleaning/manual.md', '---\ntitle: Handle Missing Values\n---\nm');
        await w.put('experiences', 'cleaning/distilled.md', '---\ntitle: Handle Missing Values\nsource: agent_summarized\n---\nm');
        const d = ok(await w.context({ question: 'Handle Missing Values' }));
        assert.deepEqual(d.knowledge.map((k) => k.path), ['cleaning/manual.md', 'cleaning/distilled.md']);
    });

    test('context: max_results caps the hits (default 5)', async () => {
        const w = freshSpace();
        for (let i = 0; i < 8; i++) await w.put('experiences', `many/m${i}.md`, `---\ntitle: Widget ${i}\n---\nwidget`);
        assert.equal(ok(await w.context({ question: 'widget' })).knowledge.length, 5);
        assert.equal(ok(await w.context({ question: 'widget', max_results: 2 })).knowledge.length, 2);
        assert.equal(ok(await w.context({ question: 'widget', max_results: 50 })).knowledge.length, 8);
        // ties are ordered the same way every time
        const a = ok(await w.context({ question: 'widget', max_results: 50 })).knowledge.map((k) => k.path);
        const b = ok(await w.context({ question: 'widget', max_results: 50 })).knowledge.map((k) => k.path);
        assert.deepEqual(a, b);
    });

    test('context: request checks', async () => {
        assert.equal(err(await v.context({}), 'INVALID_REQUEST').message, "'question' is required");
        assert.equal(err(await v.context({ question: '  ' }), 'INVALID_REQUEST').message, "'question' is required");
        assert.equal(err(await v.context({ question: 5 }), 'INVALID_REQUEST').message, "'question' must be a string");
        assert.equal(err(await v.context({ question: 'q', table_names: 'sales' }), 'INVALID_REQUEST').message, "'table_names' must be a list of strings");
        assert.equal(err(await v.context({ question: 'q', table_names: [1] }), 'INVALID_REQUEST').message, "'table_names' must be a list of strings");
        assert.match(err(await v.context({ question: 'q', max_results: 0 }), 'INVALID_REQUEST').message, /'max_results' must be an integer between 1 and 50/);
        assert.match(err(await v.context({ question: 'q', max_results: 51 }), 'INVALID_REQUEST').message, /'max_results' must be an integer between 1 and 50/);
        err(await s.api('GET', '/api/knowledge/context', { token: v.token }), 'METHOD_NOT_ALLOWED', 405);
        err(await s.api('POST', '/api/knowledge/rules', { token: v.token, body: {} }), 'METHOD_NOT_ALLOWED', 405);
    });

    test('a rule switched to alwaysApply:false leaves rules and enters the search at once', async () => {
        const w = freshSpace();
        await w.put('rules', 'toggle.md', '---\ntitle: Toggle rule\nalwaysApply: true\n---\ntoggle body');
        assert.deepEqual(ok(await w.rules()).rules.map((r) => r.title), ['Toggle rule']);
        assert.deepEqual(ok(await w.context({ question: 'toggle' })).knowledge, []);
        await w.put('rules', 'toggle.md', '---\ntitle: Toggle rule\nalwaysApply: no\n---\ntoggle body');
        assert.deepEqual(ok(await w.rules()), { rules: [], block: '' });
        assert.deepEqual(ok(await w.context({ question: 'toggle' })).knowledge.map((k) => k.path), ['toggle.md']);
    });
});

// ---------------------------------------------------------------- POST /search (REFERENCE.md section 1)

describe('POST /search', () => {
    let v;
    before(async () => {
        v = freshSpace();
        await v.put('experiences', 'finance/roi.md', '---\ntitle: ROI Calculation\ntags: [finance]\n---\nROI = (revenue - cost) / cost');
        await v.put('rules', 'roi-rule.md', '---\ntitle: ROI rule\nalwaysApply: false\n---\nROI in percent');
        await v.put('rules', 'roi-always.md', '---\ntitle: ROI always\n---\nROI always applies');
    });
    const search = (body) => v.post('search', body);

    test('results carry category, title, tags, path, snippet, source; always-apply rules are skipped', async () => {
        const d = ok(await search({ query: 'ROI' }));
        assert.deepEqual(d.results.map((r) => r.path).sort(), ['finance/roi.md', 'roi-rule.md']);
        const r = d.results.find((x) => x.path === 'finance/roi.md');
        for (const key of ['category', 'title', 'tags', 'path', 'snippet', 'source']) assert.ok(key in r, key);
        assert.equal(r.category, 'experiences');
        assert.equal(r.title, 'ROI Calculation');
        assert.deepEqual(r.tags, ['finance']);
        assert.equal(r.snippet, 'ROI = (revenue - cost) / cost');
        assert.equal(r.source, 'manual');
    });

    test('categories: null or [] mean both; a list narrows; the reference messages', async () => {
        for (const categories of [null, []]) assert.equal(ok(await search({ query: 'ROI', categories })).results.length, 2);
        assert.deepEqual(ok(await search({ query: 'ROI', categories: ['rules'] })).results.map((r) => r.path), ['roi-rule.md']);
        assert.deepEqual(ok(await search({ query: 'ROI', categories: ['experiences'] })).results.map((r) => r.path), ['finance/roi.md']);
        assert.equal(err(await search({ query: 'ROI', categories: 'rules' }), 'INVALID_REQUEST').message, "'categories' must be a list");
        assert.equal(err(await search({ query: 'ROI', categories: ['bad'] }), 'INVALID_REQUEST').message, "Invalid categories: {'bad'}");
        assert.equal(err(await search({ query: 'ROI', categories: ['rules', 'bad'] }), 'INVALID_REQUEST').message, "Invalid categories: {'bad'}");
    });

    test('a blank or missing query finds nothing; a non-string query is refused (the reference answers 500)', async () => {
        for (const body of [{}, { query: '' }, { query: '   ' }, { query: null }]) assert.deepEqual(ok(await search(body)), { results: [] });
        assert.equal(err(await search({ query: 5 }), 'INVALID_REQUEST').message, "'query' must be a string");
    });
});

// ---------------------------------------------------------------- one entry, two views

describe('the same knowledge is one entry in both views', () => {
    test('a file written here has an id: GET /api/knowledge/{id} shows it', async () => {
        const w = await agent.put('experiences', 'both/file.md', '---\ntitle: Both Views\ntags: [x, y]\nsource: manual\n---\n\nThe body text.\n');
        const e = ok(await agent.entry(w.id));
        assert.equal(e.id, w.id);
        assert.equal(e.category, 'experiences');
        assert.equal(e.path, 'both/file.md');
        assert.equal(e.title, 'Both Views');
        assert.equal(e.content, 'The body text.');
        assert.deepEqual(e.tags.labels, ['x', 'y']);
        assert.equal(e.source.kind, 'manual');
        assert.equal(e.status, 'active');
        assert.equal(e.version, w.version);
        // and it is in the entry list
        const list = ok(await s.api('GET', '/api/knowledge?category=experiences&limit=100', { token: agent.token }));
        assert.ok(list.items.some((i) => i.id === w.id));
        // an entry-view change shows in the file view (same version counter)
        ok(await s.api('PUT', `/api/knowledge/${w.id}`, { token: agent.token, body: { update_score: 5 } }));
        assert.equal((await agent.get('experiences', 'both/file.md')).version, w.version + 1);
        // deleting through the entry view deletes the file
        ok(await s.api('DELETE', `/api/knowledge/${w.id}`, { token: editor.token }));
        err(await agent.read('experiences', 'both/file.md'), 'TABLE_NOT_FOUND');
        assert.ok(ok(await agent.trash()).items.some((i) => i.id === w.id));
    });

    test('an entry saved by an agent with POST /api/knowledge appears in /list and /read', async () => {
        const created = ok(await s.api('POST', '/api/knowledge', {
            token: agent.token,
            body: { scenario: 'Parse big CSV files', content: 'Use chunks and dtypes.', agent_id: 'csv_bot', tags: ['csv', 'pandas'], tags_type: ['tool'] },
        }));
        assert.equal(created.path, 'parse-big-csv-files.md');
        const listed = ok(await reader.list('experiences')).items.find((i) => i.id === created.id);
        assert.ok(listed, 'in /list');
        assert.equal(listed.path, created.path);
        assert.equal(listed.title, 'Parse big CSV files');
        assert.deepEqual(listed.tags, ['csv', 'pandas']);
        assert.equal(listed.source, 'agent');
        assert.equal(listed.created, today());
        const d = await reader.get('experiences', created.path);
        assert.equal(d.id, created.id);
        assert.ok(d.content.startsWith('---\n'), d.content);
        assert.ok(d.content.includes('title: Parse big CSV files\n'));
        assert.ok(d.content.trimEnd().endsWith('Use chunks and dtypes.'));
        assert.equal(d.fields.title, 'Parse big CSV files');
        assert.equal(d.fields.source, 'agent');
        assert.match(d.html, /<p>Use chunks and dtypes\.<\/p>/);
        // writing that path through the file view updates the same entry
        const w = await agent.put('experiences', created.path, d.content.replace('Use chunks and dtypes.', 'Use chunks.'));
        assert.equal(w.id, created.id);
        assert.equal(w.created, false);
        assert.equal(ok(await agent.entry(created.id)).content, 'Use chunks.');
    });

    test('a rule created in the entry view is a rule file', async () => {
        const created = ok(await s.api('POST', '/api/knowledge', {
            token: s.admin,
            body: { scenario: 'Dates in UTC', content: 'All dates are UTC.', category: 'rules', path: 'entry-utc.md', always_apply: false, description: 'utc' },
        }));
        const item = ok(await reader.list('rules')).items.find((i) => i.id === created.id);
        assert.equal(item.path, 'entry-utc.md');
        assert.equal(item.alwaysApply, false);
        assert.equal(item.description, 'utc');
        const d = await reader.get('rules', 'entry-utc.md');
        assert.equal(d.fields.alwaysApply, false);
    });
});

// ---------------------------------------------------------------- export

describe('GET /api/knowledge/export', () => {
    test('JSON Lines: one active entry per line with its document; deleted ones left out', async () => {
        const v = freshSpace();
        const a = await v.put('experiences', 'ex/a.md', 'alpha');
        const b = await v.put('rules', 'ex-b.md', 'beta');
        const c = await v.put('experiences', 'ex/c.md', 'gamma');
        ok(await v.del('experiences', 'ex/c.md'));
        const r = await v.exportJsonl();
        assert.equal(r.status, 200);
        assert.match(r.headers['content-type'], /^application\/x-ndjson/);
        assert.ok(r.headers['x-request-id']);
        assert.ok(r.text.endsWith('\n'));
        const lines = r.text.slice(0, -1).split('\n').map((l) => JSON.parse(l));
        assert.deepEqual(lines.map((l) => l.id).sort(), [a.id, b.id].sort());
        assert.ok(!lines.some((l) => l.id === c.id));
        const la = lines.find((l) => l.id === a.id);
        assert.equal(la.category, 'experiences');
        assert.equal(la.path, 'ex/a.md');
        assert.equal(la.document, (await v.get('experiences', 'ex/a.md')).content);
        assert.equal(la.content, 'alpha');
        // an empty space exports nothing
        const empty = await freshSpace('reader').exportJsonl();
        assert.equal(empty.status, 200);
        assert.equal(empty.text, '');
    });
});

// ---------------------------------------------------------------- spaces

describe('spaces are isolated', () => {
    test("another space's token sees nothing and writes its own", async () => {
        const mine = freshSpace();
        const w = await mine.put('experiences', 'iso/secret.md', 'space one secret');
        const r = await mine.put('rules', 'iso-rule.md', 'space one rule');
        const other = freshSpace();
        assert.deepEqual(ok(await other.list('experiences')), { items: [] });
        assert.deepEqual(ok(await other.list('rules')), { items: [] });
        assert.equal(err(await other.read('experiences', 'iso/secret.md'), 'TABLE_NOT_FOUND').message, 'Knowledge file not found');
        err(await other.del('experiences', 'iso/secret.md'), 'TABLE_NOT_FOUND');
        err(await other.rename('experiences', 'iso/secret.md', 'iso/stolen.md'), 'TABLE_NOT_FOUND');
        err(await other.entry(w.id), 'NOT_FOUND');
        err(await other.revisions(w.id), 'NOT_FOUND');
        err(await other.revert(w.id, { version: 1 }), 'NOT_FOUND');
        assert.deepEqual(ok(await other.rules()), { rules: [], block: '' });
        assert.deepEqual(ok(await other.context({ question: 'secret rule' })).knowledge, []);
        assert.equal((await other.exportJsonl()).text, '');
        assert.deepEqual(ok(await other.trash()).items, []);
        // writing the same path creates the other space's own document
        const o = await other.put('experiences', 'iso/secret.md', 'space two text', {});
        assert.equal(o.created, true);
        assert.notEqual(o.id, w.id);
        assert.match((await mine.get('experiences', 'iso/secret.md')).content, /space one secret$/);
        assert.match((await other.get('experiences', 'iso/secret.md')).content, /space two text$/);
        assert.equal((await mine.get('experiences', 'iso/secret.md')).version, 1);
        // expected_version of another space's document does not reach it
        err(await other.write('rules', 'iso-rule.md', 'x', { expected_version: r.version }), 'CONFLICT');
        assert.match((await mine.get('rules', 'iso-rule.md')).content, /space one rule$/);
        // and deleting in one space leaves the other alone
        ok(await other.del('experiences', 'iso/secret.md'));
        ok(await mine.read('experiences', 'iso/secret.md'));
    });
});

// ---------------------------------------------------------------- concurrency

describe('concurrent writers', () => {
    const agents = [];
    before(() => {
        for (let i = 0; i < 2; i++) agents.push(new http.Agent({ keepAlive: true, maxSockets: 1 }));
    });
    after(() => {
        for (const a of agents) a.destroy();
    });
    const writeVia = (a, token, body) => request(a, s.port, 'POST', '/api/knowledge/write', { token, body });

    test('two clients creating the same path at once: both versions are kept (one current, the other a revision)', async () => {
        const ROUNDS = 25;
        for (let round = 0; round < ROUNDS; round++) {
            const p = `race/new-${round}.md`;
            const texts = [`client A round ${round}`, `client B round ${round}`];
            const rs = await Promise.all([
                writeVia(agents[0], agent.token, { category: 'experiences', path: p, content: texts[0] }),
                writeVia(agents[1], editor.token, { category: 'experiences', path: p, content: texts[1] }),
            ]);
            const won = [];
            for (const [i, r] of rs.entries()) {
                assertCommon(r);
                if (r.json.status === 'success') won.push(i);
                else assert.equal(r.json.error.code, 'CONFLICT', r.text);
            }
            assert.ok(won.length >= 1, `round ${round}: nobody won`);
            const ids = new Set(won.map((i) => rs[i].json.data.id));
            assert.equal(ids.size, 1, `round ${round}: one path, one document`);
            const [id] = ids;
            assert.equal(won.filter((i) => rs[i].json.data.created).length, 1, `round ${round}: exactly one create`);
            const d = await agent.get('experiences', p);
            const revs = ok(await agent.revisions(id)).items.map((x) => x.document.document);
            // every successful write is somewhere: current text or a revision
            for (const i of won) assert.ok(revs.some((doc) => doc.endsWith(texts[i])), `round ${round}: lost ${texts[i]}`);
            assert.ok(won.some((i) => d.content.endsWith(texts[i])));
            assert.deepEqual((await agent.paths('experiences')).filter((x) => x === p), [p]);
        }
    });

    test('a write racing a delete of the same path is never lost: it succeeds (created anew if need be)', async () => {
        const ROUNDS = 150;
        const del = (a) => request(a, s.port, 'POST', '/api/knowledge/delete', { token: editor.token, body: { category: 'experiences', path: 'race/wd.md' } });
        for (let round = 0; round < ROUNDS; round++) {
            const text = `write ${round}`;
            const [w, d] = await Promise.all([writeVia(agents[0], agent.token, { category: 'experiences', path: 'race/wd.md', content: text }), del(agents[1])]);
            assert.equal(w.json.status, 'success', `round ${round}: ${w.text}`);
            if (d.json.status !== 'success') assert.equal(d.json.error.code, 'TABLE_NOT_FOUND', d.text);
            // the written text is current, or the delete came after it (then it is in the trash)
            const r = await agent.read('experiences', 'race/wd.md');
            if (r.json.status === 'success') assert.ok(r.json.data.content.endsWith(text), `round ${round}`);
            else {
                err(r, 'TABLE_NOT_FOUND');
                const revs = ok(await agent.revisions(w.json.data.id)).items;
                assert.ok(revs[0].reason === 'delete' && revs[0].document.document.endsWith(text), `round ${round}: lost ${text}`);
            }
        }
    });

    test('clients updating with the same expected_updated: one wins, the others get CONFLICT', async () => {
        // updated_at has whole seconds: a change within the second it was read
        // cannot be told apart by it, so each round starts in a later second.
        const ROUNDS = 3;
        const many = Array.from({ length: 8 }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }));
        try {
            for (let round = 0; round < ROUNDS; round++) {
                const p = `race/occu-${round}.md`;
                await agent.put('experiences', p, 'base');
                const seen = (await agent.get('experiences', p)).updated_at;
                const seenMs = Date.parse(seen.replace(' ', 'T') + 'Z');
                while (Date.now() < seenMs + 1050) await new Promise((r) => setTimeout(r, 25));
                const texts = many.map((_, i) => `client ${i} round ${round}`);
                const rs = await Promise.all(
                    many.map((a, i) => writeVia(a, i % 2 ? editor.token : agent.token, { category: 'experiences', path: p, content: texts[i], expected_updated: seen })),
                );
                const status = rs.map((r) => (r.json.status === 'success' ? 'ok' : r.json.error.code));
                assert.deepEqual(status.filter((x) => x === 'ok').length, 1, `round ${round}: ${status.join(' ')}`);
                assert.deepEqual(status.filter((x) => x !== 'ok' && x !== 'CONFLICT'), []);
                const d = await agent.get('experiences', p);
                assert.ok(d.content.endsWith(texts[status.indexOf('ok')]));
                assert.equal(d.version, 2);
            }
        } finally {
            for (const a of many) a.destroy();
        }
    });

    test('two clients updating with the same expected_version: one wins, the other gets CONFLICT', async () => {
        const ROUNDS = 25;
        for (let round = 0; round < ROUNDS; round++) {
            const p = `race/occ-${round}.md`;
            const base = await agent.put('experiences', p, 'base');
            const texts = [`A ${round}`, `B ${round}`];
            const rs = await Promise.all(
                texts.map((t, i) => writeVia(agents[i], i ? editor.token : agent.token, { category: 'experiences', path: p, content: t, expected_version: base.version })),
            );
            const status = rs.map((r) => (r.json.status === 'success' ? 'ok' : r.json.error.code));
            assert.deepEqual([...status].sort(), ['CONFLICT', 'ok'], `round ${round}: ${rs.map((r) => r.text).join(' | ')}`);
            const winner = status.indexOf('ok');
            const d = await agent.get('experiences', p);
            assert.ok(d.content.endsWith(texts[winner]));
            assert.equal(d.version, 2);
        }
    });
});
