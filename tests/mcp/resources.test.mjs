// MCP resources and completion through the official SDK client: the list
// page by page (nextCursor), every URI form read and equal to what its REST
// route answers, the templates, completion of paths, ids, tags and traces,
// errors for bad URIs, traversal and unknown ids, and role and space
// isolation.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack } from '../http/lib/stack.mjs';
import { connect, rawPost, rpc, rpcError, tool } from './lib/mcp.mjs';

const BULK = 120; // more than two pages, more than one completion answer
const PAGE = 50;

let s;
let admin;
let reader;
let other; // a reader of another space
let otherAdmin;
let saved; // an entry an agent saved (knowledge_save)

const rules = [
    ['naming.md', '---\ntitle: Naming\nalwaysApply: true\ndescription: How to name things\n---\nUse snake_case for SQL columns.\n'],
    ['always.md', '---\ntitle: Always\nalwaysApply: true\n---\nNever print secrets.\n'],
    ['optional.md', '---\ntitle: Optional\nalwaysApply: false\ndescription: Only when asked\n---\nPrefer CTEs over subqueries.\n'],
];
const experiences = [
    ['etl/csv chunks.md', '---\ntitle: CSV in chunks\ntags: [pandas, csv]\n---\nRead big CSV files with chunksize.\n'],
    ['数据/中文 笔记.md', '---\ntitle: 中文笔记\ntags: [中文]\n---\n按季度汇总收入。\n'],
];
for (let i = 0; i < BULK; i++) {
    experiences.push([`bulk/e-${String(i).padStart(3, '0')}.md`, `---\ntitle: Bulk ${i}\n---\nBody ${i}.\n`]);
}

async function write(token, category, path, content) {
    const r = await s.api('POST', '/api/knowledge/write', { token, body: { category, path, content } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.error, undefined, r.text);
}

// The URI of a document as the server writes it: the path percent-encoded, '/' kept.
const uriOf = (category, path) => `knowhub://${category}/${path.split('/').map(encodeURIComponent).join('/')}`;


before(async () => {
    s = await startStack();
    for (const [p, c] of rules) await write(s.admin, 'rules', p, c);
    for (const [p, c] of experiences) await write(s.admin, 'experiences', p, c);
    admin = await connect(s, s.admin);
    reader = await connect(s, s.token('default', 'reader', 'res-reader'));
    const agent = await connect(s, s.token('default', 'agent', 'res-agent'));
    saved = await tool(agent, 'knowledge_save', { scenario: 'Join two tables on a key', content: 'Use an inner join on the key; check duplicates first.', tags: ['sql'] });
    await agent.close();
    const otherAdminToken = s.token('other', 'admin', 'other-admin');
    await write(otherAdminToken, 'experiences', 'theirs.md', '---\ntitle: Theirs\ntags: [secret-tag]\n---\nOnly for space other.\n');
    other = await connect(s, s.token('other', 'reader', 'other-reader'));
    otherAdmin = await connect(s, otherAdminToken);
    // A trace with one pending injection.
    assert.equal((await s.api('POST', '/api/traces', { token: s.admin, body: { trace_id: 'trace-res', task: 'Clean a CSV' } })).status, 200);
    const inj = await s.api('POST', '/api/traces/trace-res/knowledge_log', { token: s.admin, body: { knowledge_id: saved.id, goal_id: 'g1' } });
    assert.equal(inj.status, 200, inj.text);
});
after(async () => {
    for (const c of [admin, reader, other, otherAdmin]) await c?.close();
    await s?.stop();
});

describe('initialize', () => {
    test('announces resources (subscriptions and list changes on GET /mcp), prompts and completions', async () => {
        const caps = admin.getServerCapabilities();
        assert.deepEqual(caps.resources, { subscribe: true, listChanged: true });
        assert.deepEqual(caps.prompts, { listChanged: false });
        assert.deepEqual(caps.completions, {});
        assert.ok(caps.tools);
    });
});

describe('resources/list', () => {
    test('the rules block first, then every document, rules then experiences by path, page by page', async () => {
        const pages = [];
        let cursor;
        do {
            const r = await reader.listResources(cursor ? { cursor } : {});
            pages.push(r.resources);
            cursor = r.nextCursor;
            assert.ok(pages.length < 10, 'the list ends');
        } while (cursor);
        assert.equal(pages[0][0].uri, 'knowhub://rules');
        assert.equal(pages[0][0].mimeType, 'text/markdown');
        assert.equal(pages[0].length, PAGE + 1, 'the first page: the block and a page of documents');
        for (const p of pages.slice(1, -1)) assert.equal(p.length, PAGE);
        const all = pages.flat();
        const byte = (a, b) => (Buffer.compare(Buffer.from(a), Buffer.from(b)));
        const expected = [
            'knowhub://rules',
            ...rules.map(([p]) => p).sort(byte).map((p) => uriOf('rules', p)),
            ...[...experiences.map(([p]) => p), saved.path].sort(byte).map((p) => uriOf('experiences', p)),
        ];
        assert.deepEqual(all.map((r) => r.uri), expected);
        const naming = all.find((r) => r.uri === 'knowhub://rules/naming.md');
        assert.deepEqual(naming, { uri: 'knowhub://rules/naming.md', name: 'naming.md', title: 'Naming', description: 'How to name things', mimeType: 'text/markdown' });
        assert.ok(all.some((r) => r.uri === 'knowhub://experiences/%E6%95%B0%E6%8D%AE/%E4%B8%AD%E6%96%87%20%E7%AC%94%E8%AE%B0.md'));
    });

    test('a cursor that was never given is -32602; one page is at most 50 documents', async () => {
        for (const cursor of ['nonsense', 'tables/x.md', 'rules/', 'x'.repeat(5000)]) {
            const e = await rpcError(reader.listResources({ cursor }));
            assert.equal(e.code, -32602, cursor.slice(0, 20));
        }
        const r = await rawPost(s, rpc(1, 'resources/list', { cursor: 42 }), { token: s.admin });
        assert.equal(r.json.error.code, -32602);
        assert.equal(r.json.error.data.code, 'INVALID_REQUEST');
    });

    test('another space lists only its own documents', async () => {
        const r = await other.listResources();
        assert.deepEqual(r.resources.map((x) => x.uri), ['knowhub://rules', 'knowhub://experiences/theirs.md']);
        assert.equal(r.nextCursor, undefined);
    });
});

describe('resources/read', () => {
    test('knowhub://rules is the block GET /api/knowledge/rules gives', async () => {
        const rest = await s.api('GET', '/api/knowledge/rules', { token: s.admin });
        const r = await reader.readResource({ uri: 'knowhub://rules' });
        assert.deepEqual(r.contents, [{ uri: 'knowhub://rules', mimeType: 'text/markdown', text: rest.json.data.block }]);
        assert.match(r.contents[0].text, /Never print secrets\./);
        assert.match(r.contents[0].text, /snake_case/);
        assert.doesNotMatch(r.contents[0].text, /CTEs/, 'only always-apply rules');
        // a space with no rules: an empty block
        assert.equal((await other.readResource({ uri: 'knowhub://rules' })).contents[0].text, '');
    });

    test('a document by its path is the Markdown POST /api/knowledge/read gives, however its path is encoded', async () => {
        for (const [category, path] of [['rules', 'naming.md'], ['experiences', '数据/中文 笔记.md'], ['experiences', 'etl/csv chunks.md']]) {
            const rest = await s.api('POST', '/api/knowledge/read', { token: s.admin, body: { category, path } });
            for (const uri of [uriOf(category, path), `knowhub://${category}/${encodeURIComponent(path)}`]) {
                const r = await reader.readResource({ uri });
                assert.deepEqual(r.contents, [{ uri, mimeType: 'text/markdown', text: rest.json.data.content }], uri);
                assert.match(r.contents[0].text, /^---\n/, 'with its front matter');
            }
        }
    });

    test('knowhub://entries/{id} is the document of the entry', async () => {
        const rest = await s.api('POST', '/api/knowledge/read', { token: s.admin, body: { category: 'experiences', path: saved.path } });
        const uri = `knowhub://entries/${saved.id}`;
        const r = await reader.readResource({ uri });
        assert.deepEqual(r.contents, [{ uri, mimeType: 'text/markdown', text: rest.json.data.content }]);
        assert.match(r.contents[0].text, /Use an inner join/);
    });

    test('knowhub://traces/{id}/pending is the JSON of GET .../knowledge_log/pending', async () => {
        const rest = await s.api('GET', '/api/traces/trace-res/knowledge_log/pending', { token: s.admin });
        const uri = 'knowhub://traces/trace-res/pending';
        const r = await reader.readResource({ uri });
        assert.equal(r.contents.length, 1);
        assert.equal(r.contents[0].mimeType, 'application/json');
        const got = JSON.parse(r.contents[0].text);
        assert.deepEqual(got.entries, rest.json.data.entries);
        assert.equal(got.total, 1);
        assert.equal(got.entries[0].knowledge_id, saved.id);
    });

    test('a URI of no known form, a bad escape or a traversal is -32602', async () => {
        for (const uri of [
            'http://example.com/x', 'knowhub://', 'knowhub://nope/x', 'knowhub://rules/', 'knowhub://rulesx',
            'knowhub://rules/../../etc/passwd', 'knowhub://rules/%2e%2e/%2e%2e/etc/passwd', 'knowhub://experiences/a/../../b.md',
            'knowhub://rules/a%zz.md', 'knowhub://rules/a%00.md', 'knowhub://rules/a.md?x=1', 'knowhub://rules/a.md#top',
            'knowhub://entries/', 'knowhub://entries/a/b', 'knowhub://entries/..', 'knowhub://traces/t1', 'knowhub://traces//pending',
            'knowhub://traces/bad id/pending', `knowhub://rules/${'a'.repeat(5000)}.md`,
        ]) {
            const e = await rpcError(reader.readResource({ uri }));
            assert.equal(e.code, -32602, `${uri.slice(0, 60)}: ${e.message}`);
            assert.equal(e.data.code, 'INVALID_REQUEST', uri.slice(0, 60));
        }
        const traversal = await rpcError(reader.readResource({ uri: 'knowhub://experiences/../secret.md' }));
        assert.match(traversal.message, /traversal/i);
        for (const params of [{}, { uri: 7 }, { uri: null }]) {
            const r = await rawPost(s, rpc(2, 'resources/read', params), { token: s.admin });
            assert.equal(r.json.error.code, -32602, JSON.stringify(params));
        }
    });

    test('a document, entry or trace that does not exist is -32002 (resource not found)', async () => {
        for (const uri of ['knowhub://rules/none.md', 'knowhub://experiences/etl/none.md', 'knowhub://entries/knowledge-20990101-deadbeef', 'knowhub://traces/no-such-trace/pending']) {
            const e = await rpcError(reader.readResource({ uri }));
            assert.equal(e.code, -32002, uri);
            assert.equal(e.data.code, 'NOT_FOUND', uri);
            assert.match(e.message, /Resource not found/);
        }
    });

    test('nobody reads another space: by id, by path, or a trace', async () => {
        for (const uri of [`knowhub://entries/${saved.id}`, uriOf('experiences', saved.path), 'knowhub://rules/always.md', 'knowhub://traces/trace-res/pending']) {
            for (const c of [other, otherAdmin]) {
                const e = await rpcError(c.readResource({ uri }));
                assert.equal(e.code, -32002, uri);
            }
        }
        // and the other way round
        const e = await rpcError(reader.readResource({ uri: 'knowhub://experiences/theirs.md' }));
        assert.equal(e.code, -32002);
        assert.match((await otherAdmin.readResource({ uri: 'knowhub://experiences/theirs.md' })).contents[0].text, /Only for space other/);
    });

    test('an answer over the byte budget is the budget error, never a cut resource', async () => {
        const small = await startStack({ KNOWHUB_MCP_BUDGET_BYTES: '65536' }); // the smallest budget
        const body = '汉'.repeat(1990); // about 6 KB of UTF-8
        try {
            const w = await small.api('POST', '/api/knowledge/write', { token: small.admin, body: { category: 'experiences', path: 'big.md', content: `---\ntitle: Big\n---\n${body}\n` } });
            assert.equal(w.json.status, 'success', w.text);
            const batch = Array.from({ length: 15 }, (_, i) => rpc(i, 'resources/read', { uri: 'knowhub://experiences/big.md' }));
            const r = await rawPost(small, batch, { token: small.admin });
            assert.equal(r.status, 200);
            assert.ok(Buffer.byteLength(r.text) <= 65536, `${Buffer.byteLength(r.text)}`);
            assert.equal(r.json.length, 15);
            const read = r.json.filter((x) => x.result);
            assert.ok(read.length >= 5 && read.length < 15, `${read.length} read`);
            for (const x of read) assert.ok(x.result.contents[0].text.endsWith(`${body}\n`), 'whole');
            for (const x of r.json.filter((y) => !y.result)) assert.equal(x.error.code, -32001);
        } finally {
            await small.stop();
        }
    });
});

describe('resources/templates/list', () => {
    test('the four templates', async () => {
        const r = await reader.listResourceTemplates();
        assert.deepEqual(r.resourceTemplates.map((t) => [t.uriTemplate, t.mimeType]), [
            ['knowhub://rules/{path}', 'text/markdown'],
            ['knowhub://experiences/{path}', 'text/markdown'],
            ['knowhub://entries/{id}', 'text/markdown'],
            ['knowhub://traces/{id}/pending', 'application/json'],
        ]);
        for (const t of r.resourceTemplates) {
            assert.equal(typeof t.name, 'string');
            assert.equal(typeof t.description, 'string');
        }
    });
});

describe('completion/complete', () => {
    const complete = (c, ref, name, value, context) => c.complete({ ref, argument: { name, value }, ...(context ? { context } : {}) }).then((r) => r.completion);
    const res = (uri) => ({ type: 'ref/resource', uri });
    const prompt = (name) => ({ type: 'ref/prompt', name });

    test('paths of the template\'s category that begin with the value, at most 100, with total and hasMore', async () => {
        assert.deepEqual(await complete(reader, res('knowhub://rules/{path}'), 'path', 'na'), { values: ['naming.md'], total: 1, hasMore: false });
        assert.deepEqual(await complete(reader, res('knowhub://rules/{path}'), 'path', ''), { values: ['always.md', 'naming.md', 'optional.md'], total: 3, hasMore: false });
        const bulk = await complete(reader, res('knowhub://experiences/{path}'), 'path', 'bulk/');
        assert.equal(bulk.values.length, 100);
        assert.equal(bulk.total, BULK);
        assert.equal(bulk.hasMore, true);
        assert.equal(bulk.values[0], 'bulk/e-000.md');
        assert.deepEqual(await complete(reader, res('knowhub://experiences/{path}'), 'path', 'bulk/e-11'),
            { values: Array.from({ length: 10 }, (_, i) => `bulk/e-11${i}.md`), total: 10, hasMore: false });
        assert.deepEqual(await complete(reader, res('knowhub://experiences/{path}'), 'path', '数据/'), { values: ['数据/中文 笔记.md'], total: 1, hasMore: false });
        assert.deepEqual(await complete(reader, res('knowhub://experiences/{path}'), 'path', 'naming'), { values: [], total: 0, hasMore: false }, 'rules are not experiences');
    });

    test('entry ids, trace ids and tags; enumerations', async () => {
        const ids = await complete(reader, res('knowhub://entries/{id}'), 'id', saved.id.slice(0, -2));
        assert.ok(ids.values.includes(saved.id));
        assert.deepEqual(await complete(reader, res('knowhub://traces/{id}/pending'), 'id', 'trace-r'), { values: ['trace-res'], total: 1, hasMore: false });
        assert.deepEqual(await complete(reader, prompt('evaluate_trace'), 'trace_id', ''), { values: ['trace-res'], total: 1, hasMore: false });
        assert.deepEqual(await complete(reader, prompt('start_task'), 'language', 'z'), { values: ['zh'], total: 1, hasMore: false });
        assert.deepEqual(await complete(reader, prompt('start_task'), 'goal', 'any'), { values: [], total: 0, hasMore: false });
        assert.deepEqual(await complete(admin, prompt('review_pending'), 'category', ''), { values: ['experiences', 'rules'], total: 2, hasMore: false });
        assert.deepEqual(await complete(admin, prompt('review_pending'), 'tag', ''), { values: ['csv', 'pandas', 'sql', '中文'], total: 4, hasMore: false });
        assert.deepEqual(await complete(admin, prompt('review_pending'), 'tag', 'p'), { values: ['pandas'], total: 1, hasMore: false });
        assert.deepEqual(await complete(admin, prompt('review_pending'), 'tag', '', { arguments: { category: 'rules' } }), { values: [], total: 0, hasMore: false });
    });

    test('nothing of another space is completed', async () => {
        assert.deepEqual(await complete(other, res('knowhub://entries/{id}'), 'id', saved.id), { values: [], total: 0, hasMore: false });
        assert.deepEqual(await complete(other, res('knowhub://experiences/{path}'), 'path', ''), { values: ['theirs.md'], total: 1, hasMore: false });
        assert.deepEqual(await complete(other, res('knowhub://traces/{id}/pending'), 'id', ''), { values: [], total: 0, hasMore: false });
        assert.deepEqual(await complete(otherAdmin, prompt('review_pending'), 'tag', ''), { values: ['secret-tag'], total: 1, hasMore: false });
    });

    test('an unknown ref or argument, a prompt above the role, bad params: -32602', async () => {
        for (const [c, ref, name] of [
            [reader, res('knowhub://nope/{x}'), 'x'],
            [reader, res('knowhub://rules/{path}'), 'id'],
            [reader, prompt('no_such_prompt'), 'x'],
            [reader, prompt('start_task'), 'nope'],
        ]) {
            const e = await rpcError(complete(c, ref, name, ''));
            assert.equal(e.code, -32602, JSON.stringify(ref));
        }
        const refused = await rpcError(complete(reader, prompt('review_pending'), 'tag', ''));
        assert.equal(refused.code, -32602);
        assert.equal(refused.data.code, 'FORBIDDEN');
        for (const params of [{}, { ref: { type: 'ref/resource', uri: 'knowhub://rules/{path}' } }, { ref: { type: 'ref/other' }, argument: { name: 'x', value: '' } },
            { ref: { type: 'ref/resource', uri: 'knowhub://rules/{path}' }, argument: { name: 'path', value: 'x'.repeat(2000) } },
            { ref: { type: 'ref/resource', uri: 'knowhub://rules/{path}' }, argument: { name: 'path', value: 5 } }]) {
            const r = await rawPost(s, rpc(3, 'completion/complete', params), { token: s.admin });
            assert.equal(r.json.error.code, -32602, JSON.stringify(params).slice(0, 80));
        }
    });
});
