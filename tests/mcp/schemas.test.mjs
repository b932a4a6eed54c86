// Tool annotations and output schemas: every tool in tools/list carries the
// MCP hints (the table below mirrors docs/agents.md) and an outputSchema that
// its structuredContent, success or error, conforms to. Checked twice: by the
// SDK client itself (it validates callTool results once it has listed the
// tools) and explicitly with ajv, so a schema that accepts nothing or
// everything cannot pass.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Ajv from 'ajv';
import { ROOT, startStack } from '../http/lib/stack.mjs';
import { TOOL_NAMES, checkResult, connect } from './lib/mcp.mjs';

// [readOnlyHint, destructiveHint, idempotentHint], as docs/agents.md says.
const HINTS = {
    knowledge_search: [false, false, false],
    knowledge_save: [false, false, false],
    knowledge_update: [false, true, false],
    knowledge_batch_update: [false, true, false],
    knowledge_list: [true, false, true],
    knowledge_slim: [false, true, false],
    knowledge_read: [true, false, true],
    knowledge_rules: [true, false, true],
    knowledge_context: [true, false, true],
    trace_eval_prompt: [true, false, true],
    trace_submit_evaluation: [false, false, false],
    knowledge_review_list: [true, false, true],
    knowledge_review_decide: [false, true, false],
    knowledge_link: [false, true, true],
};

let s;
let agent;
let tools; // name -> the listed tool
const ajv = new Ajv({ strict: true, allErrors: true });
const validators = {};

/** The result of a call through the SDK client (which validates it), checked again with ajv. */
async function callChecked(name, args) {
    const r = checkResult(await agent.callTool({ name, arguments: args }));
    const valid = validators[name](r.structuredContent);
    assert.ok(valid, `${name}: ${ajv.errorsText(validators[name].errors)} in ${JSON.stringify(r.structuredContent)}`);
    return r;
}

before(async () => {
    s = await startStack();
    agent = await connect(s, s.token('default', 'agent', 'mcp-schemas'));
    // Listing the tools makes the SDK client validate every later callTool.
    tools = Object.fromEntries((await agent.listTools()).tools.map((t) => [t.name, t]));
});
after(async () => {
    await agent?.close();
    await s?.stop();
});

describe('tools/list', () => {
    test('every tool has the three hints as documented, openWorldHint false', () => {
        assert.deepEqual(Object.keys(tools).sort(), [...TOOL_NAMES].sort());
        assert.deepEqual(Object.keys(HINTS).sort(), [...TOOL_NAMES].sort());
        for (const [name, t] of Object.entries(tools)) {
            const a = t.annotations;
            assert.equal(typeof a, 'object', name);
            for (const h of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'])
                assert.equal(typeof a[h], 'boolean', `${name}.${h}`);
            assert.deepEqual([a.readOnlyHint, a.destructiveHint, a.idempotentHint], HINTS[name], name);
            assert.equal(a.openWorldHint, false, name);
            if (a.readOnlyHint) assert.equal(a.destructiveHint, false, `${name}: read-only is never destructive`);
        }
    });

    test('the table of docs/agents.md says the same hints', () => {
        const md = fs.readFileSync(path.join(ROOT, 'docs/agents.md'), 'utf8');
        const section = md.split('## Annotations and output schemas')[1].split('\n## ')[0];
        const rows = {};
        for (const m of section.matchAll(/^\| `([a-z_]+)` \| (true|false) \| (true|false) \| (true|false) \|/gm))
            rows[m[1]] = [m[2], m[3], m[4]].map((v) => v === 'true');
        assert.deepEqual(rows, HINTS);
    });

    test('every outputSchema is an object schema that compiles (strict ajv)', () => {
        for (const [name, t] of Object.entries(tools)) {
            assert.equal(t.outputSchema?.type, 'object', name);
            validators[name] = ajv.compile(t.outputSchema);
        }
        assert.equal(Object.keys(validators).length, TOOL_NAMES.length);
    });
});

describe('structuredContent conforms to outputSchema', () => {
    const called = new Set();
    let saved;

    async function ok(name, args) {
        called.add(name);
        const r = await callChecked(name, args);
        assert.ok(!r.isError, `${name} failed: ${r.content[0].text}`);
        return r.structuredContent;
    }

    test('a call of every tool, success path', async () => {
        saved = await ok('knowledge_save', { scenario: 'Join two large tables', content: 'Filter both sides before the join.', tags_type: ['strategy'] });
        const second = await ok('knowledge_save', { scenario: 'Plot a weekly trend', content: 'Resample by week, then draw a line.', idempotency_key: 'k-1' });
        await ok('knowledge_list', { limit: 5 });
        const found = await ok('knowledge_search', { query: 'join large tables', trace_id: 'trace-schemas', goal_id: 'g1', sequence: 1 });
        assert.equal(found.logged, true);
        assert.equal(found.results[0].id, saved.id);
        await ok('knowledge_update', { knowledge_id: saved.id, add_helpful_case: { case_id: 'c1', scenario: 's', result: 'r' }, update_score: 4 });
        await ok('knowledge_batch_update', { feedback_list: [{ knowledge_id: saved.id, is_effective: true }, { knowledge_id: 'knowledge-20000101-00000000', is_effective: false }] });
        await ok('knowledge_read', { category: 'experiences', path: saved.path });
        await ok('knowledge_rules', {});
        await ok('knowledge_context', { question: 'How do I join two large tables?' });
        const p = await ok('trace_eval_prompt', { trace_id: 'trace-schemas', goal: 'join' });
        assert.equal(p.pending, 1);
        await ok('trace_submit_evaluation', { trace_id: 'trace-schemas', trigger: 'task_completion', evaluations: [{ knowledge_id: saved.id, eval_status: 'helpful', reason: 'used' }] });
        // typed links (docs/conflicts.md): add, list, remove
        const l = await ok('knowledge_link', { action: 'add', id: saved.id, to: second.id, type: 'contradicts', reason: 'schemas' });
        assert.equal(l.added, true);
        const ls = await ok('knowledge_link', { action: 'list', id: second.id });
        assert.deepEqual(ls.items.map((i) => [i.direction, i.other.id]), [['in', saved.id]]);
        assert.equal((await ok('knowledge_link', { action: 'remove', id: saved.id, to: second.id, type: 'contradicts' })).removed, true);
        const plan = await ok('knowledge_slim', { dry_run: true });
        assert.equal(plan.dry_run, true);
        const job = await ok('knowledge_slim', {});
        assert.match(job.id, /^job-/);
        // The review queue (docs/review.md): a held save, listed and decided by an editor.
        const space = 'mcp-schemas-review';
        const admin = s.token(space, 'admin', 'mcp-schemas-review');
        assert.equal((await s.api('PUT', '/api/review/policy', { token: admin, body: { policy: 'agent_writes' } })).json.status, 'success');
        const held = await connect(s, s.token(space, 'agent', 'mcp-schemas-held'));
        const editor = await connect(s, s.token(space, 'editor', 'mcp-schemas-editor'));
        try {
            await held.listTools();
            await editor.listTools();
            const h = checkResult(await held.callTool({ name: 'knowledge_save', arguments: { scenario: 'Held', content: 'Held for review.' } })).structuredContent;
            assert.ok(validators.knowledge_save(h), ajv.errorsText(validators.knowledge_save.errors));
            assert.equal(h.status, 'pending');
            for (const [name, args] of [['knowledge_review_list', {}], ['knowledge_review_decide', { proposal_id: h.proposal_id, decision: 'approve' }]]) {
                called.add(name);
                const r = checkResult(await editor.callTool({ name, arguments: args }));
                assert.ok(!r.isError, r.content[0].text);
                assert.ok(validators[name](r.structuredContent), `${name}: ${ajv.errorsText(validators[name].errors)}`);
            }
        } finally {
            await held.close();
            await editor.close();
        }
        assert.deepEqual([...called].sort(), [...TOOL_NAMES].sort());
    });

    test('error results (isError) conform too: NOT_FOUND, INVALID_REQUEST, FORBIDDEN', async () => {
        const cases = [
            ['knowledge_update', { knowledge_id: 'knowledge-20000101-00000000', update_score: 3 }, 'NOT_FOUND'],
            ['knowledge_read', { category: 'experiences', path: 'missing.md' }, 'TABLE_NOT_FOUND'],
            ['trace_submit_evaluation', { trace_id: 't', trigger: 'compression' }, 'INVALID_REQUEST'],
            ['knowledge_search', {}, 'INVALID_REQUEST'],
            ['knowledge_link', { action: 'add', id: saved.id, to: saved.id, type: 'related' }, 'INVALID_REQUEST'],
            ['knowledge_link', { action: 'add', id: saved.id, to: saved.id, type: 'supersedes' }, 'INVALID_REQUEST'],
        ];
        for (const [name, args, code] of cases) {
            const r = await callChecked(name, args);
            assert.equal(r.isError, true, name);
            assert.equal(r.structuredContent.error.code, code, name);
        }
        const reader = await connect(s, s.token('default', 'reader', 'mcp-schemas-reader'));
        try {
            await reader.listTools();
            const r = checkResult(await reader.callTool({ name: 'knowledge_save', arguments: { scenario: 's', content: 'c' } }));
            assert.equal(r.structuredContent.error.code, 'FORBIDDEN');
            assert.ok(validators.knowledge_save(r.structuredContent), ajv.errorsText(validators.knowledge_save.errors));
        } finally {
            await reader.close();
        }
    });

    test('a wrong structuredContent fails the same validators', () => {
        const entry = structuredClone(saved);
        assert.ok(validators.knowledge_save(entry));
        delete entry.id;
        assert.equal(validators.knowledge_save(entry), false, 'an entry without id');
        assert.equal(validators.knowledge_update({ ...saved, version: 'one' }), false, 'a version that is not an integer');
        assert.equal(validators.knowledge_list({ items: [], total: 0, limit: 10 }), false, 'a list without offset');
        assert.equal(validators.knowledge_search({ count: 0, results: [{ id: 'x' }], routing: 'lexical' }), false, 'a hit without its fields');
        assert.equal(validators.knowledge_rules({ error: { code: 'NOT_FOUND', message: 'm' } }), false, 'an error without retry');
        assert.equal(validators.knowledge_rules({}), false, 'nothing');
    });

    test('the SDK client itself rejects a structuredContent that breaks the schema', async () => {
        // The same server, but the wire drops `block` from knowledge_rules' answer.
        const tamper = async (url, init) => {
            const res = await fetch(url, init);
            const body = typeof init?.body === 'string' ? JSON.parse(init.body) : null;
            if (body?.method !== 'tools/call' || !res.headers.get('content-type')?.startsWith('application/json')) return res;
            const j = await res.json();
            delete j.result.structuredContent.block;
            return new Response(JSON.stringify(j), { status: res.status, headers: res.headers });
        };
        const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
        const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
        const client = new Client({ name: 'knowhub-mcp-tamper', version: '1.0.0' });
        await client.connect(
            new StreamableHTTPClientTransport(new URL(`${s.base}/mcp`), {
                requestInit: { headers: { Authorization: `Bearer ${s.admin}` } },
                fetch: tamper,
            }),
        );
        try {
            await client.listTools();
            await assert.rejects(client.callTool({ name: 'knowledge_rules', arguments: {} }), /does not match the tool's output schema/);
        } finally {
            await client.close();
        }
    });
});
