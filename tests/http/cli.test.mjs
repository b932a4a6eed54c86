// cli.test.mjs: the content commands of the knowhub binary (search, get, add,
// list, delete, traces, sessions) against a running nginx + knowhub, in remote
// mode (--url, --token-file, KNOWHUB_TOKEN) and in local mode (the data
// directory's admin token): tables and --json, every exit status of the
// documented table (0 ok, 1 server/network, 2 usage, 3 not found, 4 auth,
// 5 refused), --help on stdout with 0 for every command, and the budgets
// (an input file too large is refused before anything is sent, an answer
// over 16 MiB is refused, a token never taken from the command line).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BIN, assertNoBugs, freePort, startStack } from './lib/stack.mjs';
import { ID_RE, ok } from './lib/expect.mjs';

const CONTENT_COMMANDS = ['search', 'get', 'add', 'list', 'delete', 'traces', 'sessions'];
const OPERATOR_COMMANDS = ['serve', 'init', 'token', 'import', 'export', 'backup', 'check', 'login-link', 'migrate-to', 'version'];

// The CLI's own variables are cleared, so the caller's shell cannot steer a test.
const CLEAN = ['KNOWHUB_URL', 'KNOWHUB_TOKEN', 'KNOWHUB_TOKEN_FILE', 'KNOWHUB_HOST', 'KNOWHUB_PORT', 'KNOWHUB_DATA', 'COLUMNS'];

/** Run knowhub with args; input goes to its stdin. Resolves {status, stdout, stderr}. */
function knowhub(args, { env = {}, input = '' } = {}) {
    const base = { ...process.env };
    for (const k of CLEAN) delete base[k];
    return new Promise((resolve, reject) => {
        const p = spawn(BIN, args, { env: { ...base, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        const timer = setTimeout(() => p.kill('SIGKILL'), 90000);
        p.stdout.on('data', (d) => (stdout += d));
        p.stderr.on('data', (d) => (stderr += d));
        p.on('error', reject);
        p.on('close', (status) => {
            clearTimeout(timer);
            assertNoBugs(stderr, `knowhub ${args.join(' ')}`);
            resolve({ status, stdout, stderr });
        });
        p.stdin.on('error', () => {}); // a command that does not read its stdin
        p.stdin.end(input);
    });
}

let s, tmp, adminFile, agentFile, readerFile, agent;
// Remote mode: the stack's URL and a token file, nothing from the data directory.
const remote = (file = agentFile) => ['--url', s.base, '--token-file', file];

before(async () => {
    s = await startStack();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'knowhub-cli-'));
    agent = s.token('clispace', 'agent', 'cli-agent');
    agentFile = path.join(tmp, 'agent.token');
    fs.writeFileSync(agentFile, agent + '\n', { mode: 0o600 });
    readerFile = path.join(tmp, 'reader.token');
    fs.writeFileSync(readerFile, s.token('clispace', 'reader', 'cli-reader') + '\n', { mode: 0o600 });
    adminFile = path.join(tmp, 'admin.token');
    fs.writeFileSync(adminFile, s.token('clispace', 'admin', 'cli-admin') + '\n', { mode: 0o600 });
});
after(async () => {
    await s?.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const entries = async () => ok(await s.api('GET', '/api/knowledge?limit=100', { token: agent })).items;

describe('help and usage', () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
        test(`knowhub ${args.join(' ')}: the usage on stdout, exit 0, content and operator commands apart`, async () => {
            const r = await knowhub(args);
            assert.equal(r.status, 0, r.stderr);
            assert.equal(r.stderr, '');
            const content = r.stdout.indexOf('Content commands');
            const operator = r.stdout.indexOf('Operator commands');
            assert.ok(content >= 0 && operator > content, r.stdout);
            for (const c of CONTENT_COMMANDS) assert.match(r.stdout.slice(content, operator), new RegExp(`^  ${c} `, 'm'));
            for (const c of OPERATOR_COMMANDS) assert.match(r.stdout.slice(operator), new RegExp(`^  ${c} `, 'm'));
        });
    }

    test('every command --help and help COMMAND: stdout, exit 0', async () => {
        for (const c of [...CONTENT_COMMANDS, ...OPERATOR_COMMANDS]) {
            for (const args of [[c, '--help'], ['help', c]]) {
                const r = await knowhub(args);
                assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
                assert.equal(r.stderr, '', args.join(' '));
                assert.ok(r.stdout.startsWith(`usage: knowhub ${c}`), `${args.join(' ')}: ${r.stdout}`);
            }
        }
        // A content command's help says the exit statuses; -h works anywhere in the line.
        const r = await knowhub(['search', 'some query', '--limit', '3', '-h']);
        assert.equal(r.status, 0);
        assert.match(r.stdout, /Exit status: 0 ok; 1 server or network error; 2 usage; 3 not found;/);
    });

    test('a wrong command line: the usage on stderr, exit 2, nothing on stdout', async () => {
        const cases = [
            [[], /usage: knowhub COMMAND/],
            [['bogus'], /no command 'bogus'/],
            [['help', 'bogus'], /no command 'bogus'/],
            [['serve', 'extra'], /usage: knowhub COMMAND/],
            [['search'], /search: missing argument/],
            [['get'], /get: missing argument/],
            [['get', 'a', 'b'], /get: unexpected argument 'b'/],
            [['list', '--bogus'], /list: unknown option '--bogus'/],
            [['list', '--title', 'x'], /list: unknown option '--title'/],
            [['list', '--limit'], /--limit needs a value/],
            [['list', '--limit', '0'], /--limit must be a whole number from 1 to 100/],
            [['list', '--limit', '5x'], /--limit must be a whole number/],
            [['list', '--category', 'notes'], /--category must be rule or experience/],
            [['list', '--page', '2', '--offset', '4'], /give --offset or --page, not both/],
            [['list', '--limit', '2', '--limit', '3'], /--limit given twice/],
            [['search', 'q', '--limit', '51'], /--limit must be a whole number from 1 to 50/],
            [['add'], /add needs --title/],
            [['add', '--title', 't', '--category', 'notes'], /--category must be rule or experience/],
            [['list', '--token', 'kh_x'], /--token is refused: a token on the command line is seen by every user/],
            [['list', '--token=kh_x'], /--token is refused/],
            [['list', '--url', 'ftp://example.com'], /the URL must start with http:\/\/ or https:\/\//],
        ];
        for (const [args, re] of cases) {
            // list gets a working URL and token first, so only its own mistake counts.
            const r = await knowhub(args[0] === 'list' && !args.includes('--url') ? ['list', ...remote(), ...args.slice(1)] : args);
            assert.equal(r.status, 2, `${args.join(' ')}: ${r.status} ${r.stderr}`);
            assert.equal(r.stdout, '', args.join(' '));
            assert.match(r.stderr, re, args.join(' '));
        }
    });
});

describe('content commands in remote mode', () => {
    let fromFile, fromStdin;

    test('add from a file and from stdin prints the new id; the entry is as given', async () => {
        const file = path.join(tmp, 'walrus.md');
        fs.writeFileSync(file, 'Count walruses from the air at low tide.\nUse the haul-out photos.');
        let r = await knowhub(['add', '--title', 'Walrus census method', '--tags', 'survey, arctic', '--file', file, ...remote()]);
        assert.equal(r.status, 0, r.stderr);
        fromFile = r.stdout.trim();
        assert.match(fromFile, ID_RE);
        r = await knowhub(['add', '--title', 'Narwhal tusk sampling', '--scenario', 'Sampling narwhal tusks', ...remote()], {
            input: 'Take the sample from the base of the tusk.',
        });
        assert.equal(r.status, 0, r.stderr);
        fromStdin = r.stdout.trim();
        assert.match(fromStdin, ID_RE);
        // --file - is stdin too.
        r = await knowhub(['add', '--title', 'Seal colony mapping', '--file', '-', ...remote()], { input: 'Map the colony at dawn.' });
        assert.equal(r.status, 0, r.stderr);

        const a = ok(await s.api('GET', `/api/knowledge/${fromFile}`, { token: agent }));
        assert.equal(a.title, 'Walrus census method');
        assert.equal(a.scenario, 'Walrus census method');
        assert.equal(a.content, 'Count walruses from the air at low tide.\nUse the haul-out photos.');
        assert.deepEqual(a.tags.labels, ['survey', 'arctic']);
        assert.equal(a.category, 'experiences');
        const b = ok(await s.api('GET', `/api/knowledge/${fromStdin}`, { token: agent }));
        assert.equal(b.scenario, 'Sampling narwhal tusks');
        assert.equal(b.content, 'Take the sample from the base of the tusk.');
    });

    test('search finds it: a table for people, the data with --json', async () => {
        let r = await knowhub(['search', 'walrus census', ...remote()]);
        assert.equal(r.status, 0, r.stderr);
        const lines = r.stdout.trimEnd().split('\n');
        assert.match(lines[0], /^ID\s+CATEGORY\s+SCORE\s+RELEVANCE\s+TITLE$/);
        assert.equal(lines.length, 2, r.stdout);
        assert.match(lines[1], new RegExp(`^${fromFile}\\s+experiences\\s+3\\s+[0-9.]+\\s+Walrus census method$`));

        r = await knowhub(['search', 'walrus census', '--json', ...remote()]);
        assert.equal(r.status, 0, r.stderr);
        const data = JSON.parse(r.stdout);
        assert.deepEqual(data.results.map((x) => x.id), [fromFile]);
        assert.equal(data.count, 1);
        // The same data the API gives (pretty printed), not a summary of it.
        const api = ok(await s.api('GET', '/api/knowledge/search?q=walrus%20census', { token: agent }));
        assert.deepEqual(data.results.map((x) => x.id), api.results.map((x) => x.id));
        assert.match(r.stdout, /^\{\n {2}"/);

        // Options reach the server: a category without a match finds nothing (exit 0).
        r = await knowhub(['search', 'walrus census', '--category', 'rule', ...remote()]);
        assert.equal(r.status, 0, r.stderr);
        assert.equal(r.stdout, '');
        assert.match(r.stderr, /nothing found/);
        // A mode the server does not know is its INVALID_REQUEST: exit 5.
        r = await knowhub(['search', 'walrus', '--mode', 'psychic', ...remote()]);
        assert.equal(r.status, 5);
        assert.match(r.stderr, /^knowhub: INVALID_REQUEST: .*mode/m);
    });

    test('get prints the title, the metadata and the content; --json the entry', async () => {
        let r = await knowhub(['get', fromFile, ...remote()]);
        assert.equal(r.status, 0, r.stderr);
        const out = r.stdout;
        assert.ok(out.startsWith('Walrus census method\n'), out);
        assert.match(out, new RegExp(`^id: +${fromFile}$`, 'm'));
        assert.match(out, /^category: +experiences$/m);
        assert.match(out, /^tags: +survey, arctic$/m);
        assert.match(out, /^score: +3 \(helpful 0, harmful 0\)$/m);
        assert.match(out, /\ncontent:\nCount walruses from the air at low tide.\nUse the haul-out photos.\n$/);
        r = await knowhub(['get', fromFile, '--json', ...remote()]);
        assert.equal(r.status, 0, r.stderr);
        assert.deepEqual(JSON.parse(r.stdout), ok(await s.api('GET', `/api/knowledge/${fromFile}`, { token: agent })));
    });

    test('list pages through the entries with --limit, --offset and --page', async () => {
        for (let i = 1; i <= 3; i++) {
            const r = await knowhub(['add', '--title', `Ice floe note ${i}`, ...remote()], { input: `Floe thickness ${i}.` });
            assert.equal(r.status, 0, r.stderr);
        }
        const all = (await entries()).map((e) => e.id);
        assert.equal(all.length, 6);
        let r = await knowhub(['list', '--limit', '2', ...remote()]);
        assert.equal(r.status, 0, r.stderr);
        const rows = r.stdout.trimEnd().split('\n');
        assert.match(rows[0], /^ID\s+CATEGORY\s+SCORE\s+UPDATED\s+TITLE$/);
        assert.deepEqual(rows.slice(1).map((l) => l.split(/\s+/)[0]), all.slice(0, 2));
        assert.match(r.stderr, /entries 1-2 of 6; the next page: --offset 2/);

        const page2 = await knowhub(['list', '--limit', '2', '--page', '2', '--json', ...remote()]);
        const offset2 = await knowhub(['list', '--limit', '2', '--offset', '2', '--json', ...remote()]);
        assert.equal(page2.status, 0, page2.stderr);
        assert.equal(page2.stdout, offset2.stdout);
        const data = JSON.parse(page2.stdout);
        assert.equal(data.total, 6);
        assert.equal(data.offset, 2);
        assert.deepEqual(data.items.map((e) => e.id), all.slice(2, 4));

        r = await knowhub(['list', '--limit', '2', '--page', '3', ...remote()]);
        assert.match(r.stderr, /entries 5-6 of 6\n/);
        assert.doesNotMatch(r.stderr, /next page/);
        r = await knowhub(['list', '--category', 'rule', ...remote()]);
        assert.equal(r.status, 0);
        assert.equal(r.stdout.trimEnd().split('\n').length, 1); // the header alone
        assert.match(r.stderr, /no entries here \(0 in all\)/);
    });

    test('a table fits the width ($COLUMNS, else 100) and shows control characters as ?', async () => {
        const r0 = await s.api('POST', '/api/knowledge', {
            token: agent,
            body: { title: `Bell \u001b]0;owned\u0007 ${'long title '.repeat(15)}`, scenario: 'Bell', content: 'x' },
        });
        const id = ok(r0).id;
        for (const [columns, width] of [[undefined, 100], ['80', 80]]) {
            const r = await knowhub(['list', ...remote()], { env: columns ? { COLUMNS: columns } : {} });
            assert.equal(r.status, 0, r.stderr);
            assert.doesNotMatch(r.stdout, /[\u0000-\u0008\u000b-\u001f\u007f]/);
            const line = r.stdout.split('\n').find((l) => l.startsWith(id));
            // The title gets what the other columns leave: 30 of 100, 10 of 80.
            assert.ok(line.endsWith(width === 100 ? 'Bell ?]0;owned? long title lo\u2026' : 'Bell ?]0;\u2026'), line);
            assert.equal([...line].length, width, line);
            assert.ok(line.endsWith('\u2026'), line);
        }
        const r = await knowhub(['delete', id, ...remote()]);
        assert.equal(r.status, 0, r.stderr);
    });

    test('delete, then get and delete again: exit 3 (not found)', async () => {
        const id = (await entries()).find((e) => e.title === 'Ice floe note 1').id;
        let r = await knowhub(['delete', id, ...remote()]);
        assert.equal(r.status, 0, r.stderr);
        assert.match(r.stdout, new RegExp(`^deleted ${id} \\(version 2\\)\\n$`));
        for (const args of [['get', id], ['delete', id], ['get', 'knowledge-20000101-00000000']]) {
            r = await knowhub([...args, ...remote()]);
            assert.equal(r.status, 3, `${args.join(' ')}: ${r.stderr}`);
            assert.equal(r.stdout, '');
            assert.match(r.stderr, /^knowhub: NOT_FOUND: /);
        }
        // --json deletes say the server's data.
        const other = (await entries()).find((e) => e.title === 'Ice floe note 2').id;
        r = await knowhub(['delete', other, '--json', ...remote()]);
        assert.equal(r.status, 0, r.stderr);
        assert.deepEqual(JSON.parse(r.stdout), { id: other, status: 'deleted', version: 2 });
    });

    test('traces and sessions: lists, one with its log or tables', async () => {
        const id = (await entries()).find((e) => e.title === 'Walrus census method').id;
        ok(await s.api('GET', '/api/knowledge/search?q=walrus%20census&trace_id=cli-trace-1&goal_id=g7&task=Count%20the%20herd', { token: agent }));
        let r = await knowhub(['traces', ...remote()]);
        assert.equal(r.status, 0, r.stderr);
        assert.match(r.stdout, /^TRACE\s+CREATED\s+INJECTED\s+PENDING\s+TASK\n/);
        assert.match(r.stdout, /^cli-trace-1\s+\S+\s+1\s+1\s+Count the herd$/m);
        r = await knowhub(['traces', 'cli-trace-1', ...remote()]);
        assert.equal(r.status, 0, r.stderr);
        assert.match(r.stdout, /^trace: +cli-trace-1\ntask: +Count the herd\n/);
        assert.match(r.stdout, new RegExp(`^${id}\\s+g7\\s+\\S+\\s+-\\s+Walrus census method$`, 'm'));
        r = await knowhub(['traces', 'cli-trace-1', '--json', ...remote()]);
        const both = JSON.parse(r.stdout);
        assert.equal(both.trace.trace_id, 'cli-trace-1');
        assert.deepEqual(both.knowledge_log.entries.map((e) => e.knowledge_id), [id]);
        r = await knowhub(['traces', 'no-such-trace', ...remote()]);
        assert.equal(r.status, 3);

        const sess = ok(await s.api('POST', '/api/sessions', {
            token: agent,
            body: { title: 'Herd analysis', tables: [{ id: 't1', name: 'Counts' }, { id: 't2', name: 'By beach', parent_id: 't1' }] },
        }));
        r = await knowhub(['sessions', ...remote()]);
        assert.equal(r.status, 0, r.stderr);
        assert.match(r.stdout, new RegExp(`^${sess.id}\\s+\\S+\\s+Herd analysis$`, 'm'));
        r = await knowhub(['sessions', sess.id, ...remote()]);
        assert.equal(r.status, 0, r.stderr);
        assert.match(r.stdout, /^title: +Herd analysis$/m);
        assert.match(r.stdout, /^t2\s+t1\s+By beach$/m);
        r = await knowhub(['sessions', sess.id, '--json', ...remote()]);
        assert.deepEqual(JSON.parse(r.stdout).tables.map((t) => t.id), ['t1', 't2']);
        r = await knowhub(['sessions', 'session-none', ...remote()]);
        assert.equal(r.status, 3);
    });
});

describe('exit statuses of failures', () => {
    test('auth: no token, a wrong or revoked token, a missing token file: exit 4', async () => {
        const revoked = s.token('clispace', 'agent', 'cli-revoked');
        s.revoke(revoked);
        const cases = [
            [['list', '--url', s.base], {}, /no token: give --token-file FILE, or set KNOWHUB_TOKEN or KNOWHUB_TOKEN_FILE/],
            [['list', '--url', s.base], { KNOWHUB_TOKEN: 'kh_0000000000000000_wrong' }, /^knowhub: UNAUTHORIZED: /],
            [['list', '--url', s.base], { KNOWHUB_TOKEN: revoked }, /^knowhub: UNAUTHORIZED: /],
            [['list', '--url', s.base], { KNOWHUB_TOKEN: 'two words' }, /KNOWHUB_TOKEN is not a token/],
            [['list', '--url', s.base, '--token-file', path.join(tmp, 'none')], {}, /cannot read the token file .*none/],
            [['list', '--url', s.base], { KNOWHUB_TOKEN_FILE: path.join(tmp, 'none') }, /cannot read the token file .*KNOWHUB_TOKEN_FILE/],
        ];
        for (const [args, env, re] of cases) {
            const r = await knowhub(args, { env });
            assert.equal(r.status, 4, `${JSON.stringify(env)}: ${r.stderr}`);
            assert.equal(r.stdout, '');
            assert.match(r.stderr, re);
        }
        // KNOWHUB_TOKEN and KNOWHUB_TOKEN_FILE work (the URL from KNOWHUB_URL).
        for (const env of [{ KNOWHUB_TOKEN: agent }, { KNOWHUB_TOKEN_FILE: agentFile }]) {
            const r = await knowhub(['list', '--json'], { env: { ...env, KNOWHUB_URL: s.base } });
            assert.equal(r.status, 0, r.stderr);
            assert.equal(JSON.parse(r.stdout).total, (await entries()).length);
        }
    });

    test('a reader token is refused on add and delete: exit 4, nothing written', async () => {
        const before = (await entries()).length;
        let r = await knowhub(['add', '--title', 'Reader try', ...remote(readerFile)], { input: 'no' });
        assert.equal(r.status, 4, r.stderr);
        assert.match(r.stderr, /^knowhub: FORBIDDEN: /);
        const id = (await entries())[0].id;
        r = await knowhub(['delete', id, ...remote(readerFile)]);
        assert.equal(r.status, 4, r.stderr);
        assert.equal((await entries()).length, before);
        // A rule is for admins: an agent is refused (4), an admin may (0).
        const rule = ['add', '--title', 'Always cite the survey', '--category', 'rule', '--path', 'cite.md'];
        r = await knowhub([...rule, ...remote()], { input: 'Cite the survey year.' });
        assert.equal(r.status, 4, r.stderr);
        r = await knowhub([...rule, ...remote(adminFile)], { input: 'Cite the survey year.' });
        assert.equal(r.status, 0, r.stderr);
        r = await knowhub(['list', '--category', 'rule', '--json', ...remote()]);
        assert.deepEqual(JSON.parse(r.stdout).items.map((e) => e.title), ['Always cite the survey']);
        // get shows a rule's own fields.
        r = await knowhub(['get', JSON.parse(r.stdout).items[0].id, ...remote(readerFile)]);
        assert.equal(r.status, 0, r.stderr);
        assert.match(r.stdout, /^category: +rules\npath: +cite\.md\ndescription: +-\nalways: +true\n/m);
    });

    test('refused requests: content over the limit, a path conflict: exit 5 with the server error', async () => {
        let r = await knowhub(['add', '--title', 'Too long', ...remote()], { input: 'x'.repeat(2001) });
        assert.equal(r.status, 5, r.stderr);
        assert.match(r.stderr, /^knowhub: LIMIT_EXCEEDED: experiences body exceeds 2000 characters \(got 2001\)$/m);
        r = await knowhub(['add', '--title', 'Bad path', '--path', '../x.md', ...remote()], { input: 'y' });
        assert.equal(r.status, 5, r.stderr);
        assert.match(r.stderr, /^knowhub: INVALID_REQUEST: /m);
        r = await knowhub(['add', '--title', 'Same path', '--path', 'dup/same.md', ...remote()], { input: 'y' });
        assert.equal(r.status, 0, r.stderr);
        r = await knowhub(['add', '--title', 'Same path', '--path', 'dup/same.md', ...remote()], { input: 'y' });
        assert.equal(r.status, 5, r.stderr);
        assert.match(r.stderr, /^knowhub: CONFLICT: /m);
    });

    describe('against a fake server', () => {
        let fake, fakeUrl, hits, mode;
        before(async () => {
            hits = [];
            const port = await freePort();
            fake = http.createServer((req, res) => {
                hits.push({ method: req.method, url: req.url, auth: req.headers.authorization });
                req.resume();
                if (mode === 'html') {
                    res.writeHead(502, { 'Content-Type': 'text/html' });
                    res.end('<html><head><title>502 Bad Gateway</title></head><body>bad</body></html>');
                } else if (mode === 'notjson') {
                    res.writeHead(200, { 'Content-Type': 'text/plain' });
                    res.end('hello');
                } else if (mode === 'huge') {
                    // 17 MiB of one JSON string: more than the CLI takes.
                    res.writeHead(200, { 'Content-Type': 'application/json' });
                    res.write('{"status":"success","data":"');
                    const chunk = 'a'.repeat(1 << 20);
                    for (let i = 0; i < 17; i++) res.write(chunk);
                    res.end('"}');
                } else if (mode === 'redirect') {
                    res.writeHead(302, { Location: `${s.base}/api/knowledge` });
                    res.end();
                } else if (mode === 'odd') {
                    // KnowHub's envelope around data of other shapes than the commands expect.
                    res.writeHead(200, { 'Content-Type': 'application/json' });
                    const data = { items: 'x', results: 5, tables: {}, entries: [1, 'a', null], tags: 'x', eval: [], total: 'many' };
                    res.end(JSON.stringify({ status: 'success', data }));
                } else if (mode === 'busy') {
                    res.writeHead(503, { 'Content-Type': 'application/json' });
                    res.end(JSON.stringify({ status: 'error', error: { code: 'SERVICE_UNAVAILABLE', message: 'busy\u001b[2J now', retry: true } }));
                }
            });
            await new Promise((r) => fake.listen(port, '127.0.0.1', r));
            fakeUrl = `http://127.0.0.1:${port}`;
        });
        after(() => new Promise((r) => fake.close(r)));

        test('a file over 64 KiB is refused before anything is sent: exit 5', async () => {
            const big = path.join(tmp, 'big.md');
            fs.writeFileSync(big, 'z'.repeat(64 * 1024 + 1));
            hits.length = 0;
            let r = await knowhub(['add', '--title', 'Big', '--file', big, '--url', fakeUrl, '--token-file', agentFile]);
            assert.equal(r.status, 5);
            assert.match(r.stderr, /^knowhub: LIMIT_EXCEEDED: .*big\.md is larger than 64 KiB, the most add reads .*nothing was sent$/m);
            r = await knowhub(['add', '--title', 'Big', '--url', fakeUrl, '--token-file', agentFile], { input: 'z'.repeat(70000) });
            assert.equal(r.status, 5);
            assert.match(r.stderr, /stdin is larger than 64 KiB/);
            assert.equal(hits.length, 0);
            // Exactly 64 KiB is read and sent (and the server says what it thinks of it).
            fs.writeFileSync(big, 'z'.repeat(64 * 1024));
            r = await knowhub(['add', '--title', 'Big', '--file', big, ...remote()]);
            assert.equal(r.status, 5);
            assert.match(r.stderr, /^knowhub: LIMIT_EXCEEDED: .*\(got 65536\)$/m);
            r = await knowhub(['add', '--title', 'x', '--file', path.join(tmp, 'absent.md'), ...remote()]);
            assert.equal(r.status, 2);
            assert.match(r.stderr, /cannot open .*absent\.md/);
        });

        test('network and server failures: exit 1 with a clear message', async () => {
            const dead = `http://127.0.0.1:${await freePort()}`;
            let r = await knowhub(['list', '--url', dead, '--token-file', agentFile]);
            assert.equal(r.status, 1);
            assert.equal(r.stdout, '');
            assert.match(r.stderr, new RegExp(`^knowhub: cannot reach ${dead}: Couldn't connect to server\\n$`));

            mode = 'html';
            r = await knowhub(['list', '--url', fakeUrl, '--token-file', agentFile]);
            assert.equal(r.status, 1);
            assert.equal(r.stderr, 'knowhub: HTTP 502: 502 Bad Gateway\n');
            mode = 'notjson';
            r = await knowhub(['list', '--url', fakeUrl, '--token-file', agentFile]);
            assert.equal(r.status, 1);
            assert.match(r.stderr, /answered HTTP 200 without KnowHub's JSON/);
            mode = 'busy';
            r = await knowhub(['list', '--url', fakeUrl, '--token-file', agentFile]);
            assert.equal(r.status, 1);
            assert.equal(r.stderr, 'knowhub: SERVICE_UNAVAILABLE: busy?[2J now\n');
            mode = 'huge';
            r = await knowhub(['list', '--json', '--url', fakeUrl, '--token-file', agentFile]);
            assert.equal(r.status, 1);
            assert.equal(r.stdout, '');
            assert.match(r.stderr, /the answer of .* is larger than 16 MiB; nothing was printed/);
            // Data of unexpected shapes prints as empty, never crashes (json-c asserts on types).
            mode = 'odd';
            for (const args of [['list'], ['search', 'q'], ['get', 'k'], ['traces'], ['traces', 't'], ['sessions'], ['sessions', 's']]) {
                r = await knowhub([...args, '--url', fakeUrl, '--token-file', agentFile]);
                assert.equal(r.status, 0, `${args.join(' ')}: ${r.status} ${r.stderr}`);
            }
            // A redirect is not followed (the token would go along): the 302 is an error.
            mode = 'redirect';
            hits.length = 0;
            r = await knowhub(['list', '--url', fakeUrl, '--token-file', agentFile]);
            assert.notEqual(r.status, 0);
            assert.equal(hits.length, 1);
            assert.equal(hits[0].auth, `Bearer ${agent}`);
            assert.equal(hits[0].url, '/api/knowledge');
        });
    });
});

describe('local mode', () => {
    test('without --url: the local server with $KNOWHUB_DATA/admin.token', async () => {
        const env = { KNOWHUB_DATA: s.dir, KNOWHUB_HOST: '127.0.0.1', KNOWHUB_PORT: String(s.port) };
        let r = await knowhub(['add', '--title', 'Local admin note'], { env, input: 'Written in local mode.' });
        assert.equal(r.status, 0, r.stderr);
        const id = r.stdout.trim();
        // The admin token's space is "default", not the agent's.
        r = await knowhub(['get', id, '--json'], { env });
        assert.equal(r.status, 0, r.stderr);
        assert.equal(JSON.parse(r.stdout).content, 'Written in local mode.');
        r = await knowhub(['get', id, ...remote()]);
        assert.equal(r.status, 3);
        // A URL one chose never gets the local admin token.
        r = await knowhub(['list', '--url', s.base], { env });
        assert.equal(r.status, 4);
        assert.match(r.stderr, /no token/);
        r = await knowhub(['list'], { env: { ...env, KNOWHUB_URL: s.base } });
        assert.equal(r.status, 4);
        // No admin token in the data directory: said, exit 4.
        const empty = fs.mkdtempSync(path.join(tmp, 'data-'));
        r = await knowhub(['list'], { env: { ...env, KNOWHUB_DATA: empty } });
        assert.equal(r.status, 4);
        assert.match(r.stderr, /admin\.token does not exist/);
    });
});
