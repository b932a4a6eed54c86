// MCP prompts through the official SDK client: the list by role and in the
// caller's language, start_task (rules + context for a goal) in en and zh,
// evaluate_trace equal to GET /api/traces/{id}/eval_prompt, distill_experience
// over a trace or a text, review_pending for editors and admins only, and
// the errors of prompts/get.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack } from '../http/lib/stack.mjs';
import { connect, rawPost, rpc, rpcError, tool } from './lib/mcp.mjs';

let s;
let admin;
let editor;
let agent;
let reader;
let readerZh; // a reader whose client sends Accept-Language: zh-CN
let other; // an editor of another space
const written = []; // what the agent saved, oldest first


const textOf = (r) => {
    assert.equal(r.messages.length, 1);
    assert.equal(r.messages[0].role, 'user');
    assert.equal(r.messages[0].content.type, 'text');
    return r.messages[0].content.text;
};

before(async () => {
    s = await startStack();
    const w = async (category, path, content) => {
        const r = await s.api('POST', '/api/knowledge/write', { token: s.admin, body: { category, path, content } });
        assert.equal(r.json.status, 'success', r.text);
    };
    await w('rules', 'secrets.md', '---\ntitle: No secrets\nalwaysApply: true\n---\nNever print an API key.\n');
    await w('experiences', 'quarterly-revenue.md', '---\ntitle: Quarterly revenue\ntags: [finance]\n---\nGroup revenue by quarter and compare year over year.\n');
    admin = await connect(s, s.admin);
    editor = await connect(s, s.token('default', 'editor', 'p-editor'));
    const agentToken = s.token('default', 'agent', 'p-agent');
    agent = await connect(s, agentToken);
    const readerToken = s.token('default', 'reader', 'p-reader');
    reader = await connect(s, readerToken);
    readerZh = await connect(s, readerToken, { 'Accept-Language': 'zh-CN,zh;q=0.9' });
    other = await connect(s, s.token('other', 'editor', 'p-other'));
    for (const [scenario, tags] of [['Retry a flaky HTTP call', ['http']], ['Cache quarterly revenue per region', ['finance']], ['Name SQL columns', ['sql']]]) {
        written.push(await tool(agent, 'knowledge_save', { scenario, content: `${scenario}: what worked.`, tags }));
        await new Promise((r) => setTimeout(r, 1100)); // created_at has seconds
    }
    assert.equal((await s.api('POST', '/api/traces', { token: s.admin, body: { trace_id: 'trace-p', task: 'Build the revenue report' } })).status, 200);
    for (const e of written.slice(0, 2)) {
        const r = await s.api('POST', '/api/traces/trace-p/knowledge_log', { token: s.admin, body: { knowledge_id: e.id, goal_id: 'g1' } });
        assert.equal(r.status, 200, r.text);
    }
});
after(async () => {
    for (const c of [admin, editor, agent, reader, readerZh, other]) await c?.close();
    await s?.stop();
});

describe('prompts/list', () => {
    test('review_pending only for editors and admins; every prompt declares its arguments', async () => {
        const names = async (c) => (await c.listPrompts()).prompts.map((p) => p.name);
        assert.deepEqual(await names(admin), ['start_task', 'evaluate_trace', 'distill_experience', 'review_pending']);
        assert.deepEqual(await names(editor), ['start_task', 'evaluate_trace', 'distill_experience', 'review_pending']);
        assert.deepEqual(await names(agent), ['start_task', 'evaluate_trace', 'distill_experience']);
        assert.deepEqual(await names(reader), ['start_task', 'evaluate_trace', 'distill_experience']);
        const start = (await admin.listPrompts()).prompts[0];
        assert.deepEqual(start.arguments.map((a) => [a.name, a.required]), [['goal', true], ['language', false], ['budget_tokens', false]]);
        assert.equal(start.title, 'Start a task with KnowHub');
    });

    test('titles and descriptions in the caller\'s language', async () => {
        const zh = (await readerZh.listPrompts()).prompts;
        assert.equal(zh[0].title, '用 KnowHub 开始任务');
        assert.match(zh[0].arguments[0].description, /[\u4e00-\u9fff]/);
        const r = await rawPost(s, rpc(1, 'prompts/list', { cursor: 'x' }), { token: s.admin });
        assert.equal(r.json.error.code, -32602);
    });
});

describe('start_task', () => {
    test('in English: the goal, the rules block, the relevant knowledge with its knowhub:// link', async () => {
        const rules = (await s.api('GET', '/api/knowledge/rules', { token: s.admin })).json.data.block;
        const ctx = (await s.api('POST', '/api/knowledge/context', { token: s.admin, body: { question: 'quarterly revenue report' } })).json.data;
        const r = await reader.getPrompt({ name: 'start_task', arguments: { goal: 'quarterly revenue report' } });
        const text = textOf(r);
        assert.ok(text.startsWith('# Starting a task\n\nGoal: quarterly revenue report\n'), text.slice(0, 80));
        assert.ok(text.includes(rules), 'the rules block as /rules gives it');
        assert.ok(ctx.knowledge.length >= 1);
        for (const k of ctx.knowledge) {
            assert.ok(text.includes(k.title), k.title);
            assert.ok(text.includes(`knowhub://${k.category}/${k.path}`), k.path);
        }
        assert.match(text, /knowhub:\/\/experiences\/quarterly-revenue\.md/);
        assert.match(text, /## While you work/);
        assert.equal(typeof r.description, 'string');
    });

    test('in Chinese: from Accept-Language, or from the language argument (which wins)', async () => {
        const byHeader = textOf(await readerZh.getPrompt({ name: 'start_task', arguments: { goal: 'quarterly revenue' } }));
        assert.ok(byHeader.startsWith('# 开始任务\n\n目标：quarterly revenue'), byHeader.slice(0, 40));
        assert.match(byHeader, /## 工作时/);
        const byArg = textOf(await reader.getPrompt({ name: 'start_task', arguments: { goal: 'quarterly revenue', language: 'zh' } }));
        assert.equal(byArg, byHeader);
        const en = textOf(await readerZh.getPrompt({ name: 'start_task', arguments: { goal: 'quarterly revenue', language: 'en' } }));
        assert.ok(en.startsWith('# Starting a task'));
    });

    test('budget_tokens: the knowledge as /context fills that budget (summaries, then left out); a bad budget is refused', async () => {
        const goal = 'quarterly revenue report';
        const rest = (await s.api('POST', '/api/knowledge/context', { token: s.admin, body: { question: goal, budget_tokens: 100 } })).json.data;
        const text = textOf(await reader.getPrompt({ name: 'start_task', arguments: { goal, budget_tokens: '100' } }));
        for (const k of rest.knowledge) assert.ok(text.includes(k.snippet), `${k.form} ${k.title}`);
        const whole = textOf(await reader.getPrompt({ name: 'start_task', arguments: { goal } }));
        assert.ok(text.length <= whole.length, `${text.length} > ${whole.length}`);
        for (const budget_tokens of ['99', '200001', 'ten', '1e3']) {
            const e = await rpcError(reader.getPrompt({ name: 'start_task', arguments: { goal, budget_tokens } }));
            assert.equal(e.code, -32602, budget_tokens);
            assert.match(e.message, /budget_tokens/);
        }
    });

    test('no match: said so; a goal over 4000 characters or blank is refused', async () => {
        const text = textOf(await reader.getPrompt({ name: 'start_task', arguments: { goal: 'zzqx unmatched words' } }));
        assert.match(text, /Nothing stored matches this goal yet\./);
        for (const goal of ['x'.repeat(4001), '   ']) {
            const e = await rpcError(reader.getPrompt({ name: 'start_task', arguments: { goal } }));
            assert.equal(e.code, -32602);
        }
    });
});

describe('evaluate_trace', () => {
    test('the same text as GET /api/traces/{id}/eval_prompt, en and zh', async () => {
        for (const [lang, header] of [['en', 'en-US'], ['zh', 'zh-CN']]) {
            const rest = await s.api('GET', '/api/traces/trace-p/eval_prompt?goal=g1', { token: s.admin, headers: { 'Accept-Language': header } });
            assert.equal(rest.json.data.language, lang);
            const r = await reader.getPrompt({ name: 'evaluate_trace', arguments: { trace_id: 'trace-p', goal: 'g1', language: lang } });
            assert.equal(textOf(r), rest.json.data.prompt, lang);
            for (const e of written.slice(0, 2)) assert.ok(textOf(r).includes(e.id));
        }
        const zh = textOf(await readerZh.getPrompt({ name: 'evaluate_trace', arguments: { trace_id: 'trace-p' } }));
        assert.match(zh, /知识评估助手/);
    });

    test('an unknown or invalid trace, or no trace_id: -32602', async () => {
        for (const args of [{ trace_id: 'no-such-trace' }, { trace_id: 'bad id' }, {}]) {
            const e = await rpcError(reader.getPrompt({ name: 'evaluate_trace', arguments: args }));
            assert.equal(e.code, -32602, JSON.stringify(args));
        }
        const e = await rpcError(reader.getPrompt({ name: 'evaluate_trace', arguments: { trace_id: 'no-such-trace' } }));
        assert.equal(e.data.code, 'NOT_FOUND');
    });
});

describe('distill_experience', () => {
    const INSTRUCTIONS = /You distill a finished data analysis into a reusable experience/;

    test('over a trace: the distiller\'s instructions, the task and the injected knowledge', async () => {
        const text = textOf(await reader.getPrompt({ name: 'distill_experience', arguments: { trace_id: 'trace-p' } }));
        assert.match(text, INSTRUCTIONS);
        assert.match(text, /Write the body in English\./);
        assert.match(text, /Build the revenue report/);
        for (const e of written.slice(0, 2)) assert.ok(text.includes(e.id));
        assert.match(text, /knowledge_save/);
        const zh = textOf(await reader.getPrompt({ name: 'distill_experience', arguments: { trace_id: 'trace-p', language: 'zh' } }));
        assert.match(zh, /Write the body in Chinese/);
        assert.match(zh, /提炼成一条可复用的经验/);
    });

    test('over a text: an experience_context reads as the server\'s distiller reads it; other text as it is', async () => {
        const context = { user_question: 'Why did sales drop in Q3?', result_summary: { output_fields: ['region', 'sales'], chart_type: 'bar' } };
        const text = textOf(await reader.getPrompt({ name: 'distill_experience', arguments: { text: JSON.stringify(context) } }));
        assert.match(text, INSTRUCTIONS);
        assert.match(text, /User question: Why did sales drop in Q3\?/);
        assert.match(text, /chart "?bar/);
        const plain = textOf(await reader.getPrompt({ name: 'distill_experience', arguments: { text: 'I fixed the flaky test by pinning the clock.' } }));
        assert.match(plain, /I fixed the flaky test by pinning the clock\./);
    });

    test('neither trace_id nor text, or a text over 20000 characters: -32602', async () => {
        for (const args of [{}, { text: 'y'.repeat(20001) }, { trace_id: 'no-such-trace' }]) {
            const e = await rpcError(reader.getPrompt({ name: 'distill_experience', arguments: args }));
            assert.equal(e.code, -32602, JSON.stringify(args).slice(0, 40));
        }
    });
});

describe('review_pending', () => {
    test('an editor gets the agents\' entries, newest first, with their links; nothing written by a person', async () => {
        const text = textOf(await editor.getPrompt({ name: 'review_pending', arguments: {} }));
        assert.match(text, /: 3 entries, the newest 3 below\./);
        const at = written.map((e) => text.indexOf(`knowhub://experiences/${e.path}`));
        assert.ok(at.every((i) => i > 0), JSON.stringify(at));
        assert.ok(at[2] < at[1] && at[1] < at[0], 'newest first');
        assert.doesNotMatch(text, /quarterly-revenue\.md/, 'written by a person');
        assert.doesNotMatch(text, /secrets\.md/);
    });

    test('filtered by tag and category; in Chinese', async () => {
        const byTag = textOf(await admin.getPrompt({ name: 'review_pending', arguments: { tag: 'finance' } }));
        assert.match(byTag, /\(tag finance\): 1 entries, the newest 1 below\./);
        assert.ok(byTag.includes(written[1].path));
        const rules = textOf(await admin.getPrompt({ name: 'review_pending', arguments: { category: 'rules' } }));
        assert.match(rules, /No entry written by an agent matches\./);
        const zh = textOf(await admin.getPrompt({ name: 'review_pending', arguments: { language: 'zh' } }));
        assert.match(zh, /请帮我审阅/);
        const e = await rpcError(admin.getPrompt({ name: 'review_pending', arguments: { category: 'tables' } }));
        assert.equal(e.code, -32602);
    });

    test('refused to an agent or a reader (FORBIDDEN), and another space sees none of it', async () => {
        for (const c of [agent, reader]) {
            const e = await rpcError(c.getPrompt({ name: 'review_pending', arguments: {} }));
            assert.equal(e.code, -32602);
            assert.equal(e.data.code, 'FORBIDDEN');
        }
        const theirs = textOf(await other.getPrompt({ name: 'review_pending', arguments: {} }));
        assert.match(theirs, /: 0 entries, the newest 0 below\./);
        for (const e of written) assert.ok(!theirs.includes(e.id) && !theirs.includes(e.path));
    });
});

describe('prompts/get errors', () => {
    test('an unknown prompt or argument, a non-string value, a bad language: -32602', async () => {
        for (const [name, args] of [['no_such', {}], ['start_task', { goal: 'x', extra: 'y' }], ['start_task', { goal: 'x', language: 'fr' }]]) {
            const e = await rpcError(reader.getPrompt({ name, arguments: args }));
            assert.equal(e.code, -32602, `${name} ${JSON.stringify(args)}`);
        }
        for (const params of [{}, { name: 5 }, { name: 'start_task', arguments: { goal: 7 } }, { name: 'start_task', arguments: ['x'] }, { name: 'start_task', arguments: { goal: 'a\u0000b' } }]) {
            const r = await rawPost(s, rpc(9, 'prompts/get', params), { token: s.admin });
            assert.equal(r.json.error.code, -32602, JSON.stringify(params));
            assert.equal(typeof r.json.error.data.request_id, 'string');
        }
    });
});
