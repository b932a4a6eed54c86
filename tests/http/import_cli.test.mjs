// knowhub import of what people have (a plain folder of notes, the JSON Lines
// that GET /api/knowledge/export writes) and the operator commands around it
// (backup, init and login-link, version, which store a node runs): the real
// binary against the data directory of a running stack.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BIN, assertNoBugs, onPostgres, startStack } from './lib/stack.mjs';
import { ok } from './lib/expect.mjs';
import { knowhub, newSpace, outputLines, tempDir, today, writeTree } from './lib/files_helpers.mjs';

let s, lite;
before(async () => {
    s = await startStack();
    // backup and admin.token are the SQLite node's: a stack of its own either way
    lite = onPostgres ? await startStack({}, { sqlite: true }) : s;
});
after(async () => {
    if (lite !== s) await lite?.stop();
    await s?.stop();
});

const imp = (src, ...args) => knowhub(s.dir, ['import', src, ...args]);
const lines = outputLines;
const space = () => newSpace(s, 'plain');
/** knowhub with text on its standard input. */
function knowhubInput(dir, args, input, env = {}) {
    const r = spawnSync(BIN, args, { env: { ...process.env, ...s.cliEnv(), KNOWHUB_DATA: dir, ...env }, input, encoding: 'utf8', timeout: 60000 });
    if (r.error) throw r.error;
    assertNoBugs(r.stderr, `knowhub ${args.join(' ')}`);
    return r;
}

describe('a plain folder of notes', () => {
    test('every .md becomes an experience at its path; category: rule makes a rule; the rest is skipped or refused with a line each', async () => {
        const src = writeTree(tempDir(), {
            'top.md': '# Top note\n\nplain text',
            'sub/e.md': 'in a folder',
            'sub/r.md': '---\ncategory: Rule\ntitle: Be nice\ndescription: a rule from a note\n---\nbe nice',
            'a/b/deep.md': 'two folders down',
            'bad.md': '---\ncategory: recipe\n---\nbody',
            'cat.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]),
            'notes.txt': 'not markdown',
            '.git/config': '[core]',
            '.hidden.md': 'hidden',
        });
        fs.symlinkSync('/etc/passwd', path.join(src, 'link.md'));
        const [name, v] = space();
        const r = imp(src, '--space', name);
        assert.equal(r.status, 3, r.stdout + r.stderr);
        assert.deepEqual(lines(r.stdout), [
            'refused a/b/: experiences allows at most one level of sub-directories (use --flatten)',
            "refused bad.md: front matter category must be rule or experience (got 'recipe')",
            'skipped cat.png: not Markdown',
            'refused link.md: symbolic links are not imported',
            'skipped notes.txt: not Markdown',
            'imported experiences/sub/e.md',
            'imported rules/r.md (from sub/r.md)',
            'imported experiences/top.md',
        ]);
        assert.match(r.stderr, /^knowhub: import: .*: plain folder \(every \.md file an experience at its path, unless its front matter says category: rule\)$/m);
        assert.match(r.stderr, /3 imported, 0 updated, 0 unchanged, 0 skipped, 3 refused, 2 not Markdown, 2 hidden\n$/);
        assert.deepEqual(await v.paths('experiences'), ['sub/e.md', 'top.md']);
        assert.deepEqual(await v.paths('rules'), ['r.md']);
        const rule = ok(await v.list('rules')).items[0];
        assert.equal(rule.title, 'Be nice');
        assert.equal(rule.description, 'a rule from a note');
        const t = today();
        assert.equal((await v.get('experiences', 'top.md')).content, `---\ntitle: top\ncreated: ${t}\nupdated: ${t}\nsource: manual\n---\n\n# Top note\n\nplain text`);
        // the same folder again: nothing changes, and the report says so
        const again = imp(src, '--space', name);
        assert.equal(again.status, 3);
        assert.match(again.stdout, /^unchanged rules\/r\.md \(from sub\/r\.md\)$/m);
        assert.match(again.stderr, /0 imported, 0 updated, 3 unchanged/);
    });

    test('only skips (not Markdown, hidden) are no failure: exit 0', async () => {
        const [name, v] = space();
        const src = writeTree(tempDir(), { 'a.md': 'a', 'img.jpg': Buffer.from([0xff, 0xd8, 0xff]), '.obsidian/app.json': '{}' });
        const r = imp(src, '--space', name);
        assert.equal(r.status, 0, r.stdout + r.stderr);
        assert.deepEqual(lines(r.stdout), ['imported experiences/a.md', 'skipped img.jpg: not Markdown']);
        assert.match(r.stderr, /1 imported, 0 updated, 0 unchanged, 0 skipped, 0 refused, 1 not Markdown, 1 hidden/);
        assert.deepEqual(await v.paths('experiences'), ['a.md']);
    });

    test('--flatten names each note by its file name; a name taken twice follows --on-conflict', async () => {
        const tree = {
            'x/y/z/deep.md': 'deep',
            'one/same.md': 'first same',
            'two/same.md': 'second same',
            'top.md': 'top',
        };
        const [name, v] = space();
        const src = writeTree(tempDir(), tree);
        const r = imp(src, '--space', name, '--flatten');
        assert.equal(r.status, 0, r.stdout + r.stderr);
        assert.match(r.stderr, /: plain folder, flattened/);
        assert.deepEqual(lines(r.stdout), [
            'imported experiences/same.md (from one/same.md)',
            'imported experiences/top.md',
            'skipped experiences/same.md (from two/same.md): exists (use --on-conflict overwrite|rename)',
            'imported experiences/deep.md (from x/y/z/deep.md)',
        ]);
        assert.deepEqual(await v.paths('experiences'), ['deep.md', 'same.md', 'top.md']);
        assert.match((await v.get('experiences', 'same.md')).content, /first same$/);

        const [name2, w] = space();
        const r2 = imp(src, '--space', name2, '--flatten', '--on-conflict', 'rename');
        assert.equal(r2.status, 0, r2.stdout + r2.stderr);
        assert.ok(lines(r2.stdout).includes('imported experiences/same-2.md (renamed from same.md; from two/same.md)'), r2.stdout);
        assert.match((await w.get('experiences', 'same-2.md')).content, /second same$/);

        // a knowledge tree ignores --flatten, and says so; it keeps names
        // starting with '.', which the file view accepts and export writes
        const treeDir = writeTree(tempDir(), { 'experiences/a.md': 'a', 'experiences/.dot.md': 'dot', 'experiences/.dir/x.md': 'x' });
        const r3 = imp(treeDir, '--space', name2, '--flatten');
        assert.equal(r3.status, 0, r3.stderr);
        assert.match(r3.stderr, /--flatten applies to plain folders only; ignored/);
        assert.deepEqual(lines(r3.stdout), ['imported experiences/.dir/x.md', 'imported experiences/.dot.md', 'imported experiences/a.md']);
        assert.match(r3.stderr, /, 0 hidden\n$/);
        // notes beside rules/ or experiences/ are not imported, and that is said
        const mixed = writeTree(tempDir(), { 'experiences/in.md': 'in', 'journal/day.md': 'beside', 'README.md': 'beside', '.git/HEAD': 'x' });
        const r4 = imp(mixed, '--space', name2);
        assert.equal(r4.status, 0, r4.stderr);
        assert.deepEqual(lines(r4.stdout), ['skipped README.md: outside rules/ and experiences/', 'skipped journal: outside rules/ and experiences/', 'imported experiences/in.md']);
        assert.match(r4.stderr, /^knowhub: import: 2 name\(s\) beside rules\/ and experiences\/ not imported: a folder holding either is a knowledge tree/m);
    });
});

describe('JSON Lines from GET /api/knowledge/export', () => {
    test('export a space, import the lines into an empty one: the same documents, titles, categories, tags and paths', async () => {
        const [name, v] = space();
        await v.put('rules', 'cite.md', '---\ntitle: Cite sources\ndescription: always cite\nalwaysApply: true\ntags: [a, b]\n---\nCite every source.');
        await v.put('rules', 'auto.md', 'a rule without front matter');
        await v.put('experiences', 'folder/中文 名.md', '---\ntitle: 中文\ntags: [x]\n---\n\n正文\n');
        await v.put('experiences', 'crlf.md', '---\r\ntitle: CRLF\r\n---\r\nwindows\r\n');
        const entry = ok(await s.api('POST', '/api/knowledge', { token: v.token, body: { scenario: 'Agent saved', content: 'agent text', agent_id: 'bot', tags: ['tool', 'csv'] } }));
        const exported = await v.exportJsonl();
        assert.equal(exported.status, 200);
        const file = path.join(tempDir(), 'space.jsonl');
        fs.writeFileSync(file, exported.text);
        assert.equal(lines(exported.text).length, 5);
        // knowhub export --format jsonl writes the same lines, to stdout or a new file
        const cli = knowhub(s.dir, ['export', '-', '--format', 'jsonl', '--space', name]);
        assert.equal(cli.status, 0, cli.stderr);
        assert.equal(cli.stdout, exported.text);
        assert.equal(cli.stderr, 'knowhub: 5 exported\n');
        const cliFile = path.join(tempDir(), 'cli.jsonl');
        assert.equal(knowhub(s.dir, ['export', cliFile, '--format', 'jsonl', '--space', name]).status, 0);
        assert.equal(fs.readFileSync(cliFile, 'utf8'), exported.text);
        const exists = knowhub(s.dir, ['export', cliFile, '--format', 'jsonl', '--space', name]);
        assert.equal(exists.status, 1);
        assert.match(exists.stderr, /^knowhub: export: .*cli\.jsonl: File exists$/m);
        for (const args of [['-'], ['x', '--format', 'xml'], ['--format', 'jsonl']]) assert.equal(knowhub(s.dir, ['export', ...args]).status, 2, args.join(' '));

        const [name2, w] = space();
        const r = imp(file, '--space', name2);
        assert.equal(r.status, 0, r.stdout + r.stderr);
        assert.match(r.stderr, /: JSON Lines \(one exported document per line\)/);
        assert.match(r.stderr, /5 imported, 0 updated, 0 unchanged, 0 skipped, 0 refused/);
        assert.ok(lines(r.stdout).includes(`imported experiences/${entry.path}`), r.stdout);

        const docs = (text) =>
            Object.fromEntries(
                lines(text).map((l) => {
                    const e = JSON.parse(l);
                    return [`${e.category}/${e.path}`, { document: e.document, title: e.title, tags: e.tags, category: e.category, path: e.path }];
                }),
            );
        const want = docs(exported.text);
        const back = await w.exportJsonl();
        assert.equal(back.status, 200);
        assert.deepEqual(docs(back.text), want);
        for (const [f, d] of Object.entries(want)) {
            const [category, ...rest] = f.split('/');
            const got = await w.get(category, rest.join('/'));
            assert.equal(got.content, d.document, f);
        }
        const rules = ok(await w.list('rules')).items;
        assert.deepEqual(rules.map((i) => [i.path, i.title, i.tags, i.alwaysApply]), [
            ['auto.md', 'auto', [], true],
            ['cite.md', 'Cite sources', ['a', 'b'], true],
        ]);

        // the same lines again change nothing; from standard input too
        const again = imp(file, '--space', name2);
        assert.equal(again.status, 0, again.stderr);
        assert.match(again.stderr, /0 imported, 0 updated, 5 unchanged/);
        const [name3, x] = space();
        const piped = knowhubInput(s.dir, ['import', '-', '--space', name3], exported.text);
        assert.equal(piped.status, 0, piped.stdout + piped.stderr);
        assert.match(piped.stderr, /knowhub: import: -: JSON Lines/);
        assert.deepEqual(docs((await x.exportJsonl()).text), want);
    });

    test('a line that is not an export line is refused by its number; the others are imported', async () => {
        const [name, v] = space();
        const good = (p, text) => JSON.stringify({ category: 'experiences', path: p, document: text });
        const text = [
            good('one.md', 'first'),
            'not json at all',
            '[1, 2]',
            JSON.stringify({ category: 'recipes', path: 'x.md', document: 'x' }),
            JSON.stringify({ category: 'experiences', path: 'nodoc.md' }),
            '',
            good('../escape.md', 'path outside'),
            good('big.md', 'x'.repeat(1024 * 1024 + 1)),
            good('nul.md', 'a\u0000b'),
            good('crlf.md', 'line ending\r') + '\r',
            good('last.md', 'no newline at the end'),
        ].join('\n');
        const file = path.join(tempDir(), 'mixed.jsonl');
        fs.writeFileSync(file, text);
        const r = imp(file, '--space', name);
        assert.equal(r.status, 3, r.stdout + r.stderr);
        const out = lines(r.stdout);
        const refused = out.filter((l) => l.startsWith('refused '));
        assert.deepEqual(refused.map((l) => l.replace(/:.*/, '')), [
            'refused line 2',
            'refused line 3',
            'refused line 4',
            'refused line 5',
            'refused line 7 (experiences/../escape.md)',
            'refused line 8 (experiences/big.md)',
            'refused line 9 (experiences/nul.md)',
        ]);
        assert.match(refused[0], /^refused line 2: not JSON \(/);
        assert.equal(refused[2], 'refused line 4: not an export line (it needs category rules|experiences, path and document)');
        assert.match(refused[5], /larger than 1 MiB$/);
        assert.match(refused[6], /not valid UTF-8 \(or contains NUL bytes\)$/);
        assert.deepEqual(out.filter((l) => !l.startsWith('refused ')), ['imported experiences/one.md', 'imported experiences/crlf.md', 'imported experiences/last.md']);
        assert.deepEqual(await v.paths('experiences'), ['crlf.md', 'last.md', 'one.md']);
        assert.match((await v.get('experiences', 'crlf.md')).content, /line ending\r$/);
    });
});

describe('errors say what the system said, and the exit status is documented', () => {
    test('a missing source: errno text, exit 1, nothing written; usage: exit 2', () => {
        const missing = path.join(tempDir(), 'nope');
        for (const src of [missing, `${missing}.jsonl`]) {
            const r = imp(src, '--space', 'plain-missing');
            assert.equal(r.status, 1, r.stderr);
            assert.equal(r.stderr, `knowhub: import: ${src}: No such file or directory\n`);
            assert.doesNotMatch(r.stderr, /not an error/);
        }
        const r = imp(path.join(tempDir(), '.'), '--flatten', '--flatten-more');
        assert.equal(r.status, 2);
        assert.match(r.stderr, /usage: knowhub import DIR\|FILE\.jsonl\|- .*--flatten/);
        assert.match(r.stderr, /exit status: 0 imported \(skips too\), 1 failed, 2 usage, 3 some refused/);
    });
});

describe('knowhub backup', () => {
    const backup = (...args) => knowhub(lite.dir, ['backup', ...args]);
    test('writes a new file; refuses an existing one unless --force; leaves no half file behind', () => {
        const dir = tempDir();
        const file = path.join(dir, 'kh.db');
        const r = backup(file);
        assert.equal(r.status, 0, r.stderr);
        assert.equal(fs.readFileSync(file).subarray(0, 16).toString('latin1'), 'SQLite format 3\u0000');
        assert.deepEqual(fs.readdirSync(dir), ['kh.db']);
        const copySize = fs.statSync(file).size;

        fs.writeFileSync(file, 'precious');
        const again = backup(file);
        assert.equal(again.status, 1, again.stderr);
        assert.equal(again.stderr, `knowhub: backup: ${file} exists; knowhub backup ${file} --force replaces it\n`);
        assert.equal(fs.readFileSync(file, 'utf8'), 'precious');

        const forced = backup(file, '--force');
        assert.equal(forced.status, 0, forced.stderr);
        assert.equal(fs.readFileSync(file).subarray(0, 15).toString('latin1'), 'SQLite format 3');
        assert.deepEqual(fs.readdirSync(dir), ['kh.db']);

        // a copy that fails midway (files limited to 64 KiB, as a full disk
        // would stop it) leaves the old FILE whole and no temporary file
        fs.writeFileSync(file, 'precious');
        assert.ok(copySize > 128 * 1024, `a copy of ${copySize} bytes does not reach the limit`);
        const limited = spawnSync('bash', ['-c', 'trap "" XFSZ; ulimit -f 64; exec "$0" backup "$1" --force', BIN, file], {
            env: { ...process.env, ...lite.cliEnv() },
            encoding: 'utf8',
            timeout: 60000,
        });
        assertNoBugs(limited.stderr, 'knowhub backup (limited)');
        assert.equal(limited.status, 1, limited.stderr);
        assert.equal(limited.stderr, `knowhub: backup to ${file} failed: the copy failed; nothing was written there\n`);
        assert.equal(fs.readFileSync(file, 'utf8'), 'precious');
        assert.deepEqual(fs.readdirSync(dir), ['kh.db']);

        const nodir = path.join(dir, 'missing', 'kh.db');
        const failed = backup(nodir);
        assert.equal(failed.status, 1);
        assert.equal(failed.stderr, `knowhub: backup: ${nodir}: No such file or directory\n`);
        assert.equal(fs.existsSync(path.join(dir, 'missing')), false);
        for (const args of [[], ['--force'], [file, 'other'], [file, '--bogus']]) assert.equal(backup(...args).status, 2, args.join(' '));
    });
});

describe('knowhub login-link and init without admin.token', () => {
    test('login-link says to run init; init writes a new admin token there that works; init again keeps it', async () => {
        const tokenFile = path.join(lite.dir, 'admin.token');
        const saved = fs.readFileSync(tokenFile, 'utf8');
        fs.rmSync(tokenFile);
        try {
            const link = knowhub(lite.dir, ['login-link']);
            assert.equal(link.status, 1);
            assert.equal(link.stderr, `knowhub: no admin token in ${tokenFile}: run \`knowhub init\` (with the same KNOWHUB_DATA), which writes a new one there, then login-link again\n`);
            const init = knowhub(lite.dir, ['init']);
            assert.equal(init.status, 0, init.stderr);
            assert.match(init.stderr, /admin\.token is missing: a new admin token goes there/);
            const token = fs.readFileSync(tokenFile, 'utf8').trim();
            assert.match(token, /^kh_[0-9a-f]{16}_\S+$/);
            assert.equal((fs.statSync(tokenFile).mode & 0o777).toString(8), '600');
            const me = ok(await lite.api('GET', '/api/auth/me', { token }));
            assert.equal(me.space, 'default');
            assert.equal(me.role, 'admin');
            const link2 = knowhub(lite.dir, ['login-link']);
            assert.equal(link2.status, 0, link2.stderr);
            assert.equal(link2.stdout, `http://127.0.0.1:8080/#token=${token}\n`);
            const init2 = knowhub(lite.dir, ['init']);
            assert.equal(init2.status, 0);
            assert.match(init2.stderr, /already initialised; the admin token is in /);
            assert.equal(fs.readFileSync(tokenFile, 'utf8').trim(), token);
        } finally {
            fs.writeFileSync(tokenFile, saved, { mode: 0o600 });
        }
    });
});

describe('which store a node runs', () => {
    const backend = onPostgres ? 'postgresql' : 'sqlite';
    test(`GET /api/health names the store (${backend}) and nothing more about it`, async () => {
        const r = await s.api('GET', '/api/health');
        assert.equal(r.status, 200);
        assert.equal(r.json.status, 'success');
        // node: this process's name, shown to loopback (tests/http/node_identity.test.mjs)
        assert.deepEqual(Object.keys(r.json.data).sort(), ['node', 'ok', 'schema', 'store', 'version']);
        assert.equal(r.json.data.store, backend);
        assert.equal(typeof r.json.data.node, 'string');
    });

    test('the startup line names the store, a PostgreSQL password never', () => {
        const log = s.log();
        const line = log.split('\n').find((l) => l.includes('serving on'));
        assert.ok(line, log);
        if (onPostgres) assert.match(line, /, store postgresql .*dbname=/);
        else assert.equal(line, `knowhub: serving on ${s.socket()} with ${line.match(/with (\d+) threads/)[1]} threads, store sqlite ${s.dir}/knowhub.db`);
    });

    test('knowhub version: build, stores and libraries, and the store of this configuration', () => {
        const r = knowhub(lite.dir, ['version']);
        assert.equal(r.status, 0, r.stderr);
        const out = lines(r.stdout);
        assert.match(out[0], /^knowhub \d+\.\d+\.\d+$/);
        assert.match(out[1], /^stores: sqlite \(SQLite 3\.\d+\.\d+\), postgresql \(libpq \d+\.\d+\)$/);
        assert.match(out[2], /^libraries: json-c [\d.]+, libcurl [\d.]+, libyaml [\d.]+, libsodium [\d.]+, libarchive [\d.]+$/);
        assert.equal(out[3], `this configuration: store sqlite ${lite.dir}/knowhub.db`);
        const url = 'postgresql://kh:s3cret-pw@db.example:5433/knowhub?sslmode=require';
        const pg = knowhubInput(lite.dir, ['version'], '', { KNOWHUB_DATABASE_URL: url });
        assert.equal(pg.status, 0, pg.stderr);
        assert.match(pg.stdout, /^this configuration: store postgresql user=kh password=\*\*\* dbname=knowhub host=db\.example port=5433 sslmode=require$/m);
        assert.doesNotMatch(pg.stdout, /s3cret/);
        assert.equal(knowhub(lite.dir, ['version', 'extra']).status, 2);
    });
});
