// hardening_cache_mcp.test.mjs: issue 12, round 2. The answer cache keys on a
// digest and is bounded in bytes (padded requests do not pin memory); /mcp
// batches and calls have a response-size and a time budget, invalid request
// ids are answered with id null, tool arguments are checked by type (no
// joined arrays), knowledge_search takes `query` (and `q`); duplicate JSON
// keys are refused everywhere.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { err, ok } from './lib/expect.mjs';

let s;
before(async () => {
    s = await startStack({ KNOWHUB_THREADS: '2' });
});
after(async () => {
    await s?.stop();
});

const mcp = (body, token = s.admin) =>
    s.api('POST', '/mcp', {
        token,
        rawBody: typeof body === 'string' ? body : JSON.stringify(body),
        headers: { Accept: 'application/json, text/event-stream' },
        timeout: 120000,
    });
const rpc = (id, method, params) => ({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
const call = (id, name, args) => rpc(id, 'tools/call', { name, arguments: args });

// A sanitizer build keeps freed memory in quarantine: its RSS says nothing of the cache.
const sanitized = (pid) => /libasan|libubsan/.test(fs.readFileSync(`/proc/${pid}/maps`, 'utf8'));

function status(pid, field) {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return Number(m[1]) * 1024;
}

describe('duplicate JSON keys', () => {
    test('a REST body with a duplicate key is INVALID_REQUEST naming the key, at any depth', async () => {
        const cases = [
            ['{"scenario":"a","content":"b","scenario":"c"}', 'scenario'],
            ['{"scenario":"a","content":"b","tags":["x"],"urls":[],"add":{"k":1,"k":2}}', 'k'],
            ['{"scenario":"a","\\u0063ontent":"b","content":"c"}', 'content'],
        ];
        for (const [body, key] of cases) {
            const e = err(await s.api('POST', '/api/knowledge', { token: s.admin, rawBody: body }), 'INVALID_REQUEST');
            assert.match(e.message, new RegExp(`[Dd]uplicate key '${key}'`), body);
        }
        // nothing was saved
        assert.equal(ok(await s.api('GET', '/api/knowledge', { token: s.admin })).total, 0);
        // the same key in sibling objects is fine
        const r = await s.api('POST', '/api/knowledge/search', { token: s.admin, rawBody: '{"query":"x","a":{"k":1},"b":{"k":2}}' });
        ok(r);
    });

    test('an /mcp body with a duplicate key is -32600 naming the key, with id null', async () => {
        for (const body of [
            '{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list"}',
            '[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"knowledge_list","name":"knowledge_rules"}}]',
        ]) {
            const r = await mcp(body);
            assert.equal(r.status, 200, r.text);
            assert.equal(r.json.id, null, r.text);
            assert.equal(r.json.error.code, -32600, r.text);
            assert.match(r.json.error.message, /duplicate key '(method|name)'/, r.text);
            assert.equal(r.json.error.data.request_id, r.headers['x-request-id']);
        }
    });
});

describe('answer cache memory', () => {
    test('padded searches (1 MB of unknown fields) are not cached and do not pin memory', async () => {
        const pad = 'p'.repeat(1000 * 1000);
        const body = (i) => JSON.stringify({ query: `parquet ${i}`, pad });
        // the same padded request twice: never a hit (large requests are not cached)
        for (let i = 0; i < 4; i++) {
            const r = await s.api('POST', '/api/knowledge/search', { token: s.admin, rawBody: body(0) });
            ok(r);
            assert.equal(r.headers['x-cache'], 'miss');
        }
        const pid = s.knowhubPid();
        const before = status(pid, 'VmRSS');
        const t0 = Date.now();
        for (let i = 0; i < 64; i++) ok(await s.api('POST', '/api/knowledge/search', { token: s.admin, rawBody: body(i) }));
        const grew = status(pid, 'VmRSS') - before;
        console.log(`# 64 padded searches: RSS +${(grew / 1048576).toFixed(1)} MB, VmHWM ${(status(pid, 'VmHWM') / 1048576).toFixed(1)} MB, ${Date.now() - t0} ms`);
        if (!sanitized(pid)) assert.ok(grew < 24 * 1048576, `RSS grew by ${(grew / 1048576).toFixed(1)} MB`);
    });

    test('small searches are still cached (hit), and a write still shows at once', async () => {
        const q = '/api/knowledge/search?q=parquet%20partition&min_score=1';
        let hits = 0;
        for (let i = 0; i < 12; i++) if ((await s.api('GET', q, { token: s.admin })).headers['x-cache'] === 'hit') hits++;
        assert.ok(hits > 0);
        ok(await s.api('POST', '/api/knowledge', { token: s.admin, body: { scenario: 'Parquet partition sizes', content: 'x' } }));
        for (let i = 0; i < 4; i++)
            assert.ok(ok(await s.api('GET', q, { token: s.admin })).results.some((r) => r.scenario === 'Parquet partition sizes'));
    });
});

describe('MCP request ids and arguments', () => {
    test('an invalid id (object, array, float, bool) is answered with id null', async () => {
        for (const id of [{ a: 1 }, [1], 1.5, true, false]) {
            const r = await mcp(rpc(id, 'ping'));
            assert.equal(r.json.error?.code, -32600, JSON.stringify(id));
            assert.equal(r.json.id, null, `${JSON.stringify(id)} echoed: ${r.text}`);
            const b = await mcp([rpc(id, 'ping'), rpc(7, 'ping')]);
            assert.deepEqual(b.json.map((m) => m.id), [null, 7], b.text);
        }
        // valid ids are echoed
        for (const id of ['a', 42, null]) assert.equal((await mcp(rpc(id, 'ping'))).json.id, id);
    });

    test('an array or object where a string (or number) is expected is an error, never joined', async () => {
        const cases = [
            ['knowledge_search', { q: ['parquet', 'partition'] }, 'q'],
            ['knowledge_search', { query: ['parquet'] }, 'query'],
            ['knowledge_search', { q: 'x', trace_id: ['t1', 't2'], goal_id: '1' }, 'trace_id'],
            ['knowledge_search', { q: 'x', category: ['rules', 'experiences'] }, 'category'],
            ['knowledge_search', { q: 'x', top_k: [5] }, 'top_k'],
            ['knowledge_search', { q: 'x', min_score: { v: 1 } }, 'min_score'],
            ['knowledge_search', { q: 'x', task: ['a'] }, 'task'],
            ['knowledge_list', { limit: [1, 2] }, 'limit'],
            ['knowledge_list', { category: ['rules'] }, 'category'],
            ['knowledge_list', { tags_type: 'tool' }, 'tags_type'],
            ['knowledge_list', { tags_type: [['tool']] }, 'tags_type'],
            ['trace_eval_prompt', { trace_id: 'tr', goal: ['g1', 'g2'] }, 'goal'],
            ['knowledge_update', { knowledge_id: ['knowledge-20000101-00000000'], update_score: 3 }, 'knowledge_id'],
            ['knowledge_save', { scenario: 's', content: 'c', urls: 'http://x' }, 'urls'],
            ['knowledge_slim', { dry_run: true, threshold: '0.5' }, 'threshold'],
            // a list item is one value: "tool,plan" never reaches REST as two
            ['knowledge_list', { tags_type: ['tool,plan'] }, 'tags_type'],
            ['knowledge_search', { q: 'x', tags_type: ['tool', 'plan,usecase'] }, 'tags_type'],
            ['knowledge_list', { category: 'rules,experiences' }, 'category'],
        ];
        for (const [name, args, key] of cases) {
            const r = await mcp(call(1, name, args));
            const res = r.json.result;
            assert.equal(res?.isError, true, `${name} ${JSON.stringify(args)}: ${r.text.slice(0, 300)}`);
            assert.equal(res.structuredContent.error.code, 'INVALID_REQUEST');
            assert.match(res.structuredContent.error.message, new RegExp(`'${key}'`), `${name} ${JSON.stringify(args)}`);
        }
        // A list where the schema says list is still fine.
        const r = await mcp(call(2, 'knowledge_list', { tags_type: ['tool', 'plan'], limit: 1 }));
        assert.equal(r.json.result.isError, undefined, r.text);
    });

    test('knowledge_search takes query (the seed signature) and q as an alias', async () => {
        ok(await s.api('POST', '/api/knowledge', { token: s.admin, body: { scenario: 'Avro schema evolution rules', content: 'add fields with defaults' } }));
        const byQuery = await mcp(call(1, 'knowledge_search', { query: 'avro schema evolution', min_score: 1 }));
        assert.equal(byQuery.json.result.isError, undefined, byQuery.text);
        assert.equal(byQuery.json.result.structuredContent.results.length, 1);
        const byQ = await mcp(call(2, 'knowledge_search', { q: 'avro schema evolution', min_score: 1 }));
        assert.deepEqual(byQ.json.result.structuredContent.results, byQuery.json.result.structuredContent.results);
        // neither: required names query
        const none = await mcp(call(3, 'knowledge_search', {}));
        assert.match(none.json.result.structuredContent.error.message, /'query' is required/);
        // both, and they differ: refused
        const both = await mcp(call(4, 'knowledge_search', { query: 'a', q: 'b' }));
        assert.equal(both.json.result.isError, true);
        // the schema (MCP and GET /api/tools) says so
        const list = await mcp(rpc(5, 'tools/list'));
        const schema = list.json.result.tools.find((t) => t.name === 'knowledge_search').inputSchema;
        assert.deepEqual(schema.required, ['query']);
        assert.equal(schema.properties.query.type, 'string');
        assert.equal(schema.properties.q.type, 'string');
        const openai = ok(await s.api('GET', '/api/tools', { token: s.admin })).tools.find((t) => t.function.name === 'knowledge_search');
        assert.deepEqual(openai.function.parameters.required, ['query']);
    });
});

describe('MCP budgets', () => {
    before(async () => {
        // 100 entries of 2000 characters that JSON escapes six-fold: each list of
        // 100 is over a megabyte, and its MCP result holds it twice.
        const content = '\u0001'.repeat(2000);
        for (let i = 0; i < 100; i++)
            ok(await s.api('POST', '/api/knowledge', { token: s.admin, body: { scenario: `Big entry ${i}`, content } }));
    });

    test('a batch of big lists stays within its response budget; later items get -32001, earlier keep results', async () => {
        const n = 10;
        const t0 = Date.now();
        const r = await mcp(Array.from({ length: n }, (_, i) => call(i + 1, 'knowledge_list', { limit: 100 })));
        const ms = Date.now() - t0;
        assert.equal(r.status, 200, r.text.slice(0, 300));
        assert.ok(r.raw.length <= 4 * 1024 * 1024, `answer of ${r.raw.length} bytes`);
        assert.equal(r.json.length, n);
        assert.deepEqual(r.json.map((m) => m.id), Array.from({ length: n }, (_, i) => i + 1));
        const done = r.json.filter((m) => m.result);
        const refused = r.json.filter((m) => m.error);
        assert.ok(done.length >= 1 && refused.length >= 1, `${done.length} done, ${refused.length} refused`);
        // results first, then only errors: once over budget, nothing more runs
        assert.ok(r.json.slice(0, done.length).every((m) => m.result));
        for (const m of done) assert.equal(m.result.structuredContent.items.length, 100);
        for (const m of refused) {
            assert.equal(m.error.code, -32001);
            assert.match(m.error.message, /[Bb]udget exceeded: response size/);
            assert.equal(m.error.data.request_id, r.headers['x-request-id']);
        }
        console.log(`# batch of ${n} big lists: ${r.raw.length} bytes, ${ms} ms, ${done.length} done`);
    });

    test('40 big lists: bounded time and memory, never a 500', async () => {
        const pid = s.knowhubPid();
        const rss0 = status(pid, 'VmRSS');
        const t0 = Date.now();
        const r = await mcp(Array.from({ length: 40 }, (_, i) => call(i, 'knowledge_list', { limit: 100 })));
        const ms = Date.now() - t0;
        const grew = status(pid, 'VmRSS') - rss0;
        console.log(`# batch of 40 big lists: HTTP ${r.status}, ${r.raw.length} bytes, ${ms} ms, RSS +${(grew / 1048576).toFixed(1)} MB`);
        assert.equal(r.status, 200, r.text.slice(0, 300));
        assert.equal(r.json.length, 40);
        for (const m of r.json) assert.ok(m.result || m.error.data.request_id, JSON.stringify(m).slice(0, 200));
        assert.ok(r.raw.length <= 4 * 1024 * 1024);
    });

    test('small budgets (KNOWHUB_MCP_BUDGET_BYTES, _MS): a single call over the size budget, a batch past its time', async () => {
        const t = await startStack({ KNOWHUB_MCP_BUDGET_BYTES: '65536', KNOWHUB_MCP_BUDGET_MS: '1' });
        try {
            const content = '\u0001'.repeat(2000);
            for (let i = 0; i < 20; i++)
                ok(await t.api('POST', '/api/knowledge', { token: t.admin, body: { scenario: `Big entry ${i}`, content } }));
            const post = (body) =>
                t.api('POST', '/mcp', { token: t.admin, rawBody: JSON.stringify(body), headers: { Accept: 'application/json, text/event-stream' } });
            // one call: its answer (~500 KB) is over 64 KiB: an error with the id and request id, not a 500
            const one = await post(call('big', 'knowledge_list', { limit: 20 }));
            assert.equal(one.status, 200, one.text.slice(0, 300));
            assert.equal(one.json.id, 'big');
            assert.equal(one.json.error.code, -32001);
            assert.match(one.json.error.message, /response size \(65536 bytes/);
            assert.equal(one.json.error.data.request_id, one.headers['x-request-id']);
            // a small answer still fits
            assert.equal((await post(call(2, 'knowledge_list', { limit: 1 }))).json.result.structuredContent.items.length, 1);
            // a batch of writes past 1 ms: the first runs, the rest get the time error
            const r = await post(Array.from({ length: 30 }, (_, i) => call(i, 'knowledge_save', { scenario: `Timed ${i}`, content: 'c' })));
            assert.equal(r.json.length, 30);
            assert.ok(r.json[0].result && !r.json[0].result.isError, JSON.stringify(r.json[0]));
            const late = r.json.filter((m) => m.error);
            assert.ok(late.length > 0, 'no message was past the time budget');
            for (const m of late) {
                assert.equal(m.error.code, -32001);
                assert.match(m.error.message, /time \(1 ms/);
                assert.equal(m.error.data.request_id, r.headers['x-request-id']);
            }
            // what ran is saved, what did not is not
            const saved = ok(await t.api('GET', '/api/knowledge?limit=100', { token: t.admin })).items.filter((k) => k.scenario.startsWith('Timed'));
            assert.equal(saved.length, 30 - late.length);
        } finally {
            await t.stop();
        }
    });
});

describe('answers that grow with the data have a cap', () => {
    test('revisions: the newest 100 by default, limit at most 1000, with total and offset', async () => {
        const id = ok(await s.api('POST', '/api/knowledge', { token: s.admin, body: { scenario: 'Revised often', content: 'v0' } })).id;
        for (let i = 1; i <= 104; i++)
            ok(await s.api('PUT', `/api/knowledge/${id}`, { token: s.admin, body: { update_score: (i % 5) + 1 } }));
        const all = ok(await s.api('GET', `/api/knowledge/${id}/revisions`, { token: s.admin }));
        assert.equal(all.id, id);
        assert.equal(all.items.length, 100);
        assert.equal(all.total, 105);
        assert.equal(all.limit, 100);
        assert.equal(all.offset, 0);
        const versions = all.items.map((r) => r.version);
        assert.deepEqual(versions, [...versions].sort((a, b) => b - a), 'newest first');
        const rest = ok(await s.api('GET', `/api/knowledge/${id}/revisions?limit=10&offset=100`, { token: s.admin }));
        assert.equal(rest.items.length, 5);
        assert.equal(rest.total, 105);
        assert.ok(rest.items[0].version < versions.at(-1));
        err(await s.api('GET', `/api/knowledge/${id}/revisions?limit=1001`, { token: s.admin }), 'INVALID_REQUEST');
        // revert still finds any version, however old
        ok(await s.api('POST', `/api/knowledge/${id}/revert`, { token: s.admin, body: { version: 1 } }));
    });
});
