// Every tool through the SDK client with valid arguments (structuredContent
// checked, and equal to what the REST route answers), wrong arguments, roles
// and spaces. A tool error is a result with isError and the REST error code.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack } from '../http/lib/stack.mjs';
import { TOOL_NAMES, connect, rawPost, rpc, tool, toolError } from './lib/mcp.mjs';

let s;
let admin; // SDK client with the admin token
let agent; // SDK client with an agent token of the same space
const called = new Set();

async function call(client, name, args) {
    called.add(name);
    return tool(client, name, args);
}

before(async () => {
    s = await startStack();
    admin = await connect(s, s.admin);
    agent = await connect(s, s.token('default', 'agent', 'mcp-agent'));
});
after(async () => {
    await admin?.close();
    await agent?.close();
    await s?.stop();
});

describe('every tool with valid arguments', () => {
    let saved;
    let other;

    test('knowledge_save returns the new entry', async () => {
        saved = await call(agent, 'knowledge_save', {
            scenario: 'Load a CSV larger than memory with pandas',
            content: 'Use pandas read_csv with chunksize and explicit dtypes; concatenate the chunks.',
            tags_type: ['tool', 'strategy'],
            urls: ['https://example.com/pandas'],
            agent_id: 'research_agent',
            score: 4,
            message_id: 'msg-17',
            tags: ['pandas', 'csv'],
        });
        assert.match(saved.id, /^knowledge-\d{8}-[0-9a-f]{8}$/);
        assert.equal(saved.scenario, 'Load a CSV larger than memory with pandas');
        assert.deepEqual(saved.tags, { type: ['tool', 'strategy'], labels: ['pandas', 'csv'] });
        assert.deepEqual(saved.source.urls, ['https://example.com/pandas']);
        assert.equal(saved.source.agent_id, 'research_agent');
        assert.equal(saved.message_id, 'msg-17');
        assert.equal(saved.eval.score, 4);
        assert.equal(saved.category, 'experiences');
        assert.equal(saved.path, 'load-a-csv-larger-than-memory-with-pandas.md', 'named after the title, no agent folder');
        other = await call(agent, 'knowledge_save', {
            scenario: 'Plot a quarterly sales trend',
            content: 'Group by quarter, sum revenue, draw a line chart with the quarter on the x axis.',
            tags_type: ['plan'],
        });
        // The same entry through REST: one implementation.
        const rest = await s.api('GET', `/api/knowledge/${saved.id}`, { token: s.admin });
        assert.equal(rest.json.data.content, saved.content);
    });

    test('knowledge_list lists them, exactly as GET /api/knowledge does', async () => {
        const list = await call(agent, 'knowledge_list', { limit: 10 });
        assert.equal(list.total, 2);
        assert.deepEqual(list.items.map((e) => e.id).sort(), [saved.id, other.id].sort());
        const rest = await s.api('GET', '/api/knowledge?limit=10', { token: s.admin });
        assert.deepEqual(list, rest.json.data);
        const plans = await call(agent, 'knowledge_list', { tags_type: ['plan'], category: 'experiences', offset: 0 });
        assert.deepEqual(plans.items.map((e) => e.id), [other.id]);
    });

    test('knowledge_search finds by meaning of the words, with quality fields', async () => {
        const r = await call(agent, 'knowledge_search', { q: 'csv pandas memory', top_k: 3, min_score: 3 });
        assert.equal(r.count, 1);
        assert.equal(r.routing, 'lexical');
        assert.equal(r.results[0].id, saved.id);
        assert.equal(r.results[0].quality_score, 4);
        assert.deepEqual(r.results[0].metrics.helpful, 0);
        const typed = await call(agent, 'knowledge_search', { q: 'quarterly sales', tags_type: ['tool'] });
        assert.equal(typed.count, 0, 'tags_type filters');
        const rest = await s.api('GET', '/api/knowledge/search?q=csv%20pandas%20memory&top_k=3&min_score=3', { token: s.admin });
        assert.deepEqual(r, rest.json.data);
    });

    test('knowledge_update adds a case and sets the score', async () => {
        const r = await call(agent, 'knowledge_update', {
            knowledge_id: saved.id,
            add_helpful_case: { case_id: 'case-1', scenario: 'a 5 GB export', result: 'loaded in chunks' },
            update_score: 5,
        });
        assert.equal(r.id, saved.id);
        assert.deepEqual(r.applied, { add_helpful_case: 'added', update_score: 5 });
        assert.equal(r.eval.helpful, 1);
        assert.equal(r.eval.score, 5);
        const again = await call(agent, 'knowledge_update', {
            knowledge_id: saved.id,
            add_helpful_case: { case_id: 'case-1', scenario: 'a 5 GB export', result: 'loaded in chunks' },
        });
        assert.equal(again.applied.add_helpful_case, 'duplicate');
        assert.equal(again.eval.helpful, 1);
    });

    test('knowledge_save and knowledge_update set an entry\'s time (docs/conflicts.md "Time")', async () => {
        // a space of its own: the default space's counts are checked below
        const timed = await connect(s, s.token('mcp-time', 'agent', 'mcp-time'));
        try {
            const t = await call(timed, 'knowledge_save', { scenario: 'Rotating the tinderbox keys', content: 'Rotate tinderbox keys monthly.', expires_at: '2999-01-01', pinned: true });
            assert.deepEqual([t.expires_at, t.review_after, t.pinned], ['2999-01-01T00:00:00Z', null, true]);
            // MCP drops null arguments: an empty text clears
            const u = await call(timed, 'knowledge_update', { knowledge_id: t.id, expires_at: '', review_after: '2999-06-01T10:00:00Z' });
            assert.deepEqual([u.expires_at, u.review_after, u.pinned], [null, '2999-06-01T10:00:00Z', true]);
            const bad = await toolError(timed, 'knowledge_update', { knowledge_id: t.id, review_after: 'next week' });
            assert.match(JSON.stringify(bad), /review_after/);
        } finally {
            await timed.close();
        }
    });

    test('knowledge_batch_update applies each item on its own', async () => {
        const r = await call(agent, 'knowledge_batch_update', {
            feedback_list: [
                { knowledge_id: saved.id, is_effective: true },
                { knowledge_id: other.id, is_effective: false },
                { knowledge_id: 'knowledge-20000101-00000000', is_effective: true },
            ],
        });
        assert.equal(r.succeeded, 2);
        assert.equal(r.failed, 1);
        assert.equal(r.results[0].counted, 'helpful');
        assert.equal(r.results[1].counted, 'harmful');
        assert.equal(r.results[2].error.code, 'NOT_FOUND');
    });

    test('knowledge_read reads the file view of an entry', async () => {
        const r = await call(agent, 'knowledge_read', { category: 'experiences', path: saved.path });
        assert.equal(r.id, saved.id);
        assert.equal(r.category, 'experiences');
        assert.equal(r.path, saved.path);
        assert.match(r.content, /^---\n/);
        assert.ok(r.content.includes(saved.content));
        assert.equal(typeof r.html, 'string');
        const rest = await s.api('POST', '/api/knowledge/read', { token: s.admin, body: { category: 'experiences', path: saved.path } });
        assert.deepEqual(r, rest.json.data);
    });

    test('knowledge_rules returns the always-apply rules and the block', async () => {
        const empty = await call(agent, 'knowledge_rules', {});
        assert.deepEqual(empty, { rules: [], block: '' });
        // An admin writes a rule (rules are an admin's); agents read it through the tool.
        const w = await s.api('POST', '/api/knowledge/write', {
            token: s.admin,
            body: { category: 'rules', path: 'units.md', content: '---\ntitle: Money units\nalwaysApply: true\n---\n\nReport money in EUR with two decimals.' },
        });
        assert.equal(w.json.status, 'success', w.text);
        const r = await call(agent, 'knowledge_rules');
        assert.equal(r.rules.length, 1);
        assert.equal(r.rules[0].title, 'Money units');
        assert.ok(r.block.includes('Report money in EUR'));
        const rest = await s.api('GET', '/api/knowledge/rules', { token: s.admin });
        assert.deepEqual(r, rest.json.data);
    });

    test('knowledge_context gives the rules block and the relevant knowledge', async () => {
        const r = await call(agent, 'knowledge_context', { question: 'How do I plot the quarterly sales trend?', max_results: 3 });
        assert.ok(r.rules_block.includes('Report money in EUR'));
        assert.ok(r.knowledge.some((k) => k.path === other.path), JSON.stringify(r.knowledge));
        assert.ok(r.knowledge_block.length > 0);
        const tables = await call(agent, 'knowledge_context', { question: 'sales', table_names: ['sales_data'] });
        assert.equal(typeof tables.knowledge_block, 'string');
    });

    test('knowledge_slim: dry_run answers the plan, otherwise a job starts', async () => {
        const plan = await call(agent, 'knowledge_slim', { dry_run: true, threshold: 0.9 });
        assert.equal(plan.dry_run, true);
        assert.equal(plan.threshold, 0.9);
        assert.ok(Array.isArray(plan.groups));
        const job = await call(agent, 'knowledge_slim', { threshold: 0.9 });
        assert.match(job.id, /^job-[0-9a-f]+$/);
        assert.equal(job.kind, 'slim');
        assert.ok(['queued', 'running', 'done'].includes(job.status), job.status);
        // The job started through MCP runs in knowhub's job thread to the end.
        let state;
        for (let i = 0; i < 100; i++) {
            state = (await s.api('GET', `/api/jobs/${job.id}`, { token: s.admin })).json.data;
            if (state.status === 'done' || state.status === 'failed') break;
            await new Promise((r) => setTimeout(r, 100));
        }
        assert.equal(state.id, job.id);
        assert.equal(state.status, 'done', JSON.stringify(state));
    });

    test('trace_eval_prompt and trace_submit_evaluation', async () => {
        const found = await call(agent, 'knowledge_search', { q: 'pandas csv', trace_id: 'trace-tools', goal_id: '1', sequence: 3 });
        assert.equal(found.logged, true);
        const p = await call(agent, 'trace_eval_prompt', { trace_id: 'trace-tools', goal: 'load the export' });
        assert.equal(p.trace_id, 'trace-tools');
        assert.equal(p.pending, 1);
        assert.equal(p.language, 'en');
        assert.ok(p.prompt.includes(saved.id));
        const ev = await call(agent, 'trace_submit_evaluation', {
            trace_id: 'trace-tools',
            trigger: 'task_completion',
            evaluations: [{ knowledge_id: saved.id, eval_status: 'unused', reason: 'not needed in the end' }],
        });
        assert.equal(ev.strategy, 'structured');
        assert.equal(ev.updated.length, 1);
    });

    test('knowledge_review_list and knowledge_review_decide: the queue for editors, one decision wins', async () => {
        const space = 'mcp-tools-review';
        const admin = s.token(space, 'admin', 'mcp-review-admin');
        assert.equal((await s.api('PUT', '/api/review/policy', { token: admin, body: { policy: 'agent_writes' } })).json.status, 'success');
        const bot = await connect(s, s.token(space, 'agent', 'mcp-review-agent'));
        const editor = await connect(s, s.token(space, 'editor', 'mcp-review-editor'));
        try {
            const held = await call(bot, 'knowledge_save', { scenario: 'Review me', content: 'Pending until an editor approves.' });
            assert.deepEqual([held.status, held.kind], ['pending', 'create']);
            assert.equal((await call(bot, 'knowledge_list', {})).total, 0, 'pending is not listed');
            const e = await toolError(bot, 'knowledge_review_list', {});
            assert.equal(e.code, 'FORBIDDEN');
            const q = await call(editor, 'knowledge_review_list', {});
            assert.deepEqual(q.items.map((p) => p.id), [held.proposal_id]);
            // the same queue through REST
            const rest = await s.api('GET', '/api/review?state=pending', { token: admin });
            assert.deepEqual(rest.json.data.items, q.items);
            const d = await call(editor, 'knowledge_review_decide', { proposal_id: held.proposal_id, decision: 'approve' });
            assert.equal(d.state, 'approved');
            assert.equal((await call(bot, 'knowledge_list', {})).items[0].id, d.result_id);
            const again = await toolError(editor, 'knowledge_review_decide', { proposal_id: held.proposal_id, decision: 'reject', reason: 'late' });
            assert.equal(again.code, 'CONFLICT');
            // an editor's instructions say what waits
            await call(bot, 'knowledge_save', { scenario: 'Review me too', content: 'Another one.' });
            const fresh = await connect(s, s.token(space, 'editor', 'mcp-review-editor2'));
            try {
                assert.match(fresh.getInstructions(), /review queue holds 1 pending and 0 quarantined/);
            } finally {
                await fresh.close();
            }
            assert.doesNotMatch(bot.getInstructions(), /review queue/);
        } finally {
            await bot.close();
            await editor.close();
        }
    });

    test('knowledge_review_decide: a conflict item is dismissed or superseded through MCP', async () => {
        const space = 'mcp-tools-conflict-items';
        const bot = await connect(s, s.token(space, 'agent', 'mcp-citems-agent'));
        const editor = await connect(s, s.token(space, 'editor', 'mcp-citems-editor'));
        try {
            const body = (w) => ({ scenario: 'Serve JSON answers through the nginx proxy', content: `${w} enable gzip compression on the nginx proxy for JSON answers.` });
            const a = await call(bot, 'knowledge_save', body('Always'));
            const b = await call(bot, 'knowledge_save', body('Never'));
            const c = b.conflicts.find((x) => x.id === a.id);
            const q = await call(editor, 'knowledge_review_list', {});
            assert.deepEqual(q.items.map((p) => [p.id, p.kind]), [[c.review_id, 'conflict']]);
            const wrong = await toolError(editor, 'knowledge_review_decide', { proposal_id: c.review_id, decision: 'approve' });
            assert.equal(wrong.code, 'INVALID_REQUEST');
            const d = await call(editor, 'knowledge_review_decide', { proposal_id: c.review_id, decision: 'supersede', keep: b.id });
            assert.deepEqual([d.state, d.result_id], ['approved', b.id]);
            assert.ok(!(await call(bot, 'knowledge_search', { query: 'gzip compression nginx' })).results.some((r) => r.id === a.id));
        } finally {
            await bot.close();
            await editor.close();
        }
    });

    test('knowledge_link: a supersede hides the old entry from knowledge_search, removing the link brings it back; conflicts_with', async () => {
        const space = 'mcp-tools-links';
        const bot = await connect(s, s.token(space, 'agent', 'mcp-links-agent'));
        const editor = await connect(s, s.token(space, 'editor', 'mcp-links-editor'));
        try {
            const a = await call(bot, 'knowledge_save', { scenario: 'Quarterly wintercress report', content: 'Use the calendar quarter.' });
            const b = await call(bot, 'knowledge_save', { scenario: 'Quarterly wintercress report', content: 'Use the fiscal quarter.' });
            // the save's conflict check found a, and linked b contradicts a
            assert.deepEqual(b.conflicts.map((x) => [x.id, x.verdict, x.link]), [[a.id, 'contradiction', 'contradicts']]);
            const c = await call(bot, 'knowledge_link', { action: 'add', id: a.id, to: b.id, type: 'contradicts', reason: 'calendar or fiscal' });
            assert.deepEqual([c.from, c.to, c.type, c.added], [a.id, b.id, 'contradicts', true]);
            const hits = (await call(bot, 'knowledge_search', { query: 'wintercress quarter', min_score: 1 })).results;
            assert.deepEqual(Object.fromEntries(hits.map((h) => [h.id, h.conflicts_with])), { [a.id]: [b.id], [b.id]: [a.id] });
            const no = await toolError(bot, 'knowledge_link', { action: 'add', id: a.id, to: b.id, type: 'supersedes' });
            assert.equal(no.code, 'FORBIDDEN');
            assert.equal((await call(editor, 'knowledge_link', { action: 'add', id: a.id, to: b.id, type: 'supersedes' })).added, true);
            const after = (await call(bot, 'knowledge_search', { query: 'wintercress quarter', min_score: 1 })).results;
            assert.deepEqual(after.map((h) => [h.id, h.conflicts_with]), [[a.id, []]]);
            const ls = await call(bot, 'knowledge_link', { action: 'list', id: b.id });
            assert.deepEqual(ls.items.map((i) => [i.type, i.direction]), [['contradicts', 'out'], ['contradicts', 'in'], ['supersedes', 'in']]);
            assert.equal((await call(editor, 'knowledge_link', { action: 'remove', id: a.id, to: b.id, type: 'supersedes' })).removed, true);
            const back = (await call(bot, 'knowledge_search', { query: 'wintercress quarter', min_score: 1 })).results;
            assert.deepEqual(back.map((h) => h.id).sort(), [a.id, b.id].sort());
        } finally {
            await bot.close();
            await editor.close();
        }
    });

    test('every listed tool was called', async () => {
        const { tools } = await agent.listTools();
        assert.deepEqual([...called].sort(), tools.map((t) => t.name).sort());
        assert.deepEqual([...called].sort(), [...TOOL_NAMES].sort());
    });
});

describe('wrong arguments are tool errors with INVALID_REQUEST', () => {
    test('each tool without its required arguments', async () => {
        const { tools } = await agent.listTools();
        let checked = 0;
        for (const t of tools) {
            if (!t.inputSchema.required?.length) continue;
            const e = await toolError(agent, t.name, {});
            assert.equal(e.code, 'INVALID_REQUEST', `${t.name}: ${e.message}`);
            assert.match(e.message, /required|must be/, t.name);
            checked++;
        }
        assert.ok(checked >= 8, `${checked} tools have required arguments`);
        // Null counts as absent.
        const e = await toolError(agent, 'knowledge_search', { q: null });
        assert.equal(e.message, "'query' is required");
    });

    test('wrong types and out-of-range values', async () => {
        const cases = [
            ['knowledge_search', { q: 'x', top_k: 'many' }, /top_k/],
            ['knowledge_search', { q: 'x', top_k: 1.5 }, /top_k/],
            ['knowledge_search', { q: 'x', min_score: 9 }, /min_score/],
            ['knowledge_search', { q: 'x', tags_type: ['bogus'] }, /tags_type/],
            ['knowledge_search', { q: 'x', sequence: -1 }, /sequence/],
            ['knowledge_search', { q: 'x', trace_id: 'no spaces allowed' }, /trace_id/],
            ['knowledge_save', { scenario: 's', content: 42 }, /content/],
            ['knowledge_save', { scenario: ['s'], content: 'c' }, /scenario/],
            ['knowledge_save', { scenario: 's', content: 'c', tags_type: 'tool' }, /tags_type/],
            ['knowledge_save', { scenario: 's', content: 'c', score: '4' }, /score/],
            ['knowledge_update', { knowledge_id: 42, update_score: 3 }, /knowledge_id/],
            ['knowledge_update', { knowledge_id: 'knowledge-20000101-00000000' }, /Nothing to update/],
            ['knowledge_update', { knowledge_id: 'knowledge-20000101-00000000', update_score: 'high' }, /update_score/],
            ['knowledge_batch_update', { feedback_list: 'all good' }, /feedback_list/],
            ['knowledge_list', { limit: 'ten' }, /limit/],
            ['knowledge_list', { limit: 0 }, /limit/],
            ['knowledge_list', { category: 'bogus' }, /category/],
            ['knowledge_slim', { dry_run: 'yes' }, /dry_run/],
            ['knowledge_slim', { threshold: 5 }, /threshold/],
            ['knowledge_read', { category: 'experiences', path: 7 }, /path/],
            ['knowledge_read', { category: 'experiences', path: '../passwd.md' }, /traversal/],
            ['knowledge_read', { category: 'experiences', path: 'a/b/c.md' }, /sub-directories/],
            ['knowledge_context', { question: 5 }, /question/],
            ['knowledge_context', { question: 'q', max_results: 'x' }, /max_results/],
            ['trace_eval_prompt', { trace_id: 7 }, /trace_id/],
            ['trace_eval_prompt', { trace_id: 'bad id!' }, /trace_id/],
            ['trace_submit_evaluation', { trace_id: 't', trigger: 'whenever' }, /trigger/],
            ['trace_submit_evaluation', { trace_id: 't', trigger: 'compression' }, /output/],
            ['trace_submit_evaluation', { trace_id: 't', trigger: 'compression', output: 7 }, /output/],
            ['trace_submit_evaluation', { trace_id: 't', trigger: 'compression', evaluations: 'x' }, /evaluations/],
        ];
        for (const [name, args, re] of cases) {
            const e = await toolError(agent, name, args);
            assert.equal(e.code, 'INVALID_REQUEST', `${name} ${JSON.stringify(args)}: ${e.code} ${e.message}`);
            assert.match(e.message, re, `${name} ${JSON.stringify(args)}`);
        }
    });

    test('application errors keep their REST code', async () => {
        assert.equal((await toolError(agent, 'knowledge_update', { knowledge_id: 'knowledge-20000101-00000000', update_score: 3 })).code, 'NOT_FOUND');
        assert.equal((await toolError(agent, 'trace_eval_prompt', { trace_id: 'never-seen' })).code, 'NOT_FOUND');
        assert.equal((await toolError(agent, 'knowledge_read', { category: 'experiences', path: 'none.md' })).code, 'TABLE_NOT_FOUND');
        assert.equal((await toolError(agent, 'knowledge_save', { scenario: 's', content: 'x'.repeat(2001) })).code, 'LIMIT_EXCEEDED');
        const some = (await tool(agent, 'knowledge_list', { limit: 1, category: 'experiences' })).items[0];
        assert.equal((await toolError(agent, 'knowledge_update', { knowledge_id: some.id, evolve_feedback: 'better' })).code, 'LLM_NOT_CONFIGURED');
        const e = await toolError(agent, 'trace_submit_evaluation', { trace_id: 'trace-tools', trigger: 'compression', output: 'I think it all went fine.' });
        assert.equal(e.code, 'INVALID_REQUEST');
        assert.match(e.message, /No evaluation JSON/);
    });

    test('arguments that are not an object, sent raw', async () => {
        for (const args of [[], 'q=x', 5]) {
            const r = await rawPost(s, rpc(1, 'tools/call', { name: 'knowledge_search', arguments: args }), { token: s.admin });
            assert.equal(r.json.result.isError, true, JSON.stringify(args));
            assert.equal(r.json.result.structuredContent.error.code, 'INVALID_REQUEST');
        }
    });

    test('after all that the server still answers', async () => {
        assert.deepEqual(await agent.ping(), {});
        const h = await s.api('GET', '/api/health');
        assert.equal(h.status, 200, h.text);
    });
});

describe('roles and spaces: the same tokens as REST', () => {
    test("a reader reads, but every writing tool is FORBIDDEN", async () => {
        const reader = await connect(s, s.token('default', 'reader', 'mcp-reader'));
        try {
            const list = await tool(reader, 'knowledge_list', { category: 'experiences' });
            assert.equal(list.total, 2);
            assert.ok((await tool(reader, 'knowledge_search', { q: 'pandas' })).count >= 1);
            assert.equal((await tool(reader, 'knowledge_rules')).rules.length, 1);
            assert.equal((await tool(reader, 'trace_eval_prompt', { trace_id: 'trace-tools' })).pending, 0);
            const id = list.items[0].id;
            for (const [name, args] of [
                ['knowledge_save', { scenario: 'a reader writes', content: 'it must not' }],
                ['knowledge_update', { knowledge_id: id, update_score: 1 }],
                ['knowledge_batch_update', { feedback_list: [{ knowledge_id: id, is_effective: false }] }],
                ['knowledge_slim', { dry_run: true }],
                ['knowledge_search', { q: 'pandas', trace_id: 'trace-reader' }], // logging an injection writes
                ['trace_submit_evaluation', { trace_id: 'trace-tools', trigger: 'task_completion', evaluations: [] }],
            ]) {
                const e = await toolError(reader, name, args);
                assert.equal(e.code, 'FORBIDDEN', `${name}: ${e.message}`);
            }
            const after = await tool(reader, 'knowledge_list', { category: 'experiences' });
            assert.equal(after.total, 2, 'nothing was written');
        } finally {
            await reader.close();
        }
    });

    test('an agent may not write a rule; an admin may', async () => {
        const e = await toolError(agent, 'knowledge_save', { scenario: 'r', content: 'Always cite.', category: 'rules', path: 'cite.md' });
        assert.equal(e.code, 'FORBIDDEN');
        // Arguments beyond the schema pass through to the REST body as they are.
        const rule = await tool(admin, 'knowledge_save', { scenario: 'r', content: 'Always cite the source table.', category: 'rules', path: 'cite.md' });
        assert.equal(rule.category, 'rules');
        assert.ok((await tool(agent, 'knowledge_rules')).block.includes('Always cite the source table.'));
    });

    test("another space's token sees none of this space's knowledge", async () => {
        const c = await connect(s, s.token('other-team', 'agent', 'other'));
        try {
            const list = await tool(c, 'knowledge_list', {});
            assert.equal(list.total, 0);
            assert.equal((await tool(c, 'knowledge_search', { q: 'pandas csv memory' })).count, 0);
            assert.deepEqual(await tool(c, 'knowledge_rules'), { rules: [], block: '' });
            const ctx = await tool(c, 'knowledge_context', { question: 'quarterly sales trend' });
            assert.deepEqual(ctx.knowledge, []);
            const mine = (await tool(admin, 'knowledge_list', {})).items[0];
            assert.equal((await toolError(c, 'knowledge_update', { knowledge_id: mine.id, update_score: 1 })).code, 'NOT_FOUND');
            assert.equal((await toolError(c, 'knowledge_read', { category: 'experiences', path: mine.path })).code, 'TABLE_NOT_FOUND');
            assert.equal((await toolError(c, 'trace_eval_prompt', { trace_id: 'trace-tools' })).code, 'NOT_FOUND');
            const b = await tool(c, 'knowledge_batch_update', { feedback_list: [{ knowledge_id: mine.id, is_effective: false }] });
            assert.equal(b.results[0].error.code, 'NOT_FOUND');
            // Its own knowledge stays its own.
            const own = await tool(c, 'knowledge_save', { scenario: 'other team pandas note', content: 'their own pandas csv memory trick' });
            assert.equal((await tool(c, 'knowledge_list', {})).total, 1);
            const back = await tool(admin, 'knowledge_search', { q: 'pandas csv memory' });
            assert.ok(!back.results.some((r) => r.id === own.id));
            const untouched = await tool(admin, 'knowledge_list', { limit: 100 });
            assert.equal(untouched.items.find((e) => e.id === mine.id).eval.score, mine.eval.score);
        } finally {
            await c.close();
        }
    });
});
