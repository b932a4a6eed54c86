// Token budgets through MCP (docs/agents.md "Token budgets"): the
// knowledge_context and knowledge_rules tools take budget_tokens, answer
// exactly what REST answers, and their structuredContent conforms to the
// listed outputSchema (the SDK client validates it, and ajv again); a wrong
// budget is an isError result with REST's INVALID_REQUEST.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Ajv from 'ajv';
import { startStack } from '../http/lib/stack.mjs';
import { checkResult, connect, toolError } from './lib/mcp.mjs';

let s;
let agent;
let tools;
const ajv = new Ajv({ strict: true, allErrors: true });
const SPACE = 'mcp-budget';

/** A tool call the SDK validated, checked again against its outputSchema. */
async function call(name, args) {
    const r = checkResult(await agent.callTool({ name, arguments: args }));
    assert.ok(!r.isError, `${name}: ${r.content[0].text}`);
    const validate = ajv.compile(tools[name].outputSchema);
    assert.ok(validate(r.structuredContent), `${name}: ${ajv.errorsText(validate.errors)}`);
    return r.structuredContent;
}

async function rest(method, p, body) {
    const r = await s.api(method, p, { token: s.token(SPACE, 'reader', 'mcp-budget-reader'), body });
    assert.equal(r.json.status, 'success', JSON.stringify(r.json));
    return r.json.data;
}

before(async () => {
    s = await startStack();
    const admin = s.token(SPACE, 'admin', 'mcp-budget-admin');
    const write = async (category, path, content) => {
        const r = await s.api('POST', '/api/knowledge/write', { token: admin, body: { category, path, content } });
        assert.equal(r.json.status, 'success', JSON.stringify(r.json));
    };
    await write('rules', 'language.md', '---\ntitle: Answer in the user\'s language\n---\nAnswer in the language the user wrote in.\n');
    await write('rules', 'queries.md', '---\ntitle: Bounded queries\n---\nNever run a query without a LIMIT on a table with more than ten million rows: events, page_views and ledger_entries all qualify. ' +
        'Always filter partitioned tables by their partition column (event_date, created_day); a scan of every partition costs forty dollars.\n');
    for (let i = 0; i < 8; i++)
        await write('experiences', `joins/join-${i}.md`,
            `---\ntitle: Joining large tables, lesson ${i}\ndescription: Lesson ${i} about joins of large tables.\n---\n` +
            // each lesson's own words (its number), so no two bodies are near-duplicates
            `${`Filter both sides of a large join before joining, as lesson ${i} says; a join of large tables without filters scans everything. `.repeat(4 + i)}\n`);
    await write('experiences', 'joins/join-copy.md', '---\ntitle: "Joining large tables, LESSON 0!"\n---\nThe same lesson about large table joins again.\n');
    agent = await connect(s, s.token(SPACE, 'agent', 'mcp-budget-agent'));
    tools = Object.fromEntries((await agent.listTools()).tools.map((t) => [t.name, t]));
});
after(async () => {
    await agent?.close();
    await s?.stop();
});

describe('budget_tokens on the MCP tools', () => {
    test('both tools list budget_tokens with its bounds', () => {
        for (const name of ['knowledge_context', 'knowledge_rules'])
            assert.deepEqual(tools[name].inputSchema.properties.budget_tokens, { type: 'integer', minimum: 100, maximum: 200000 });
    });

    test('knowledge_context with a budget: REST\'s answer, within the budget, valid against its outputSchema', async () => {
        const question = 'How do I join large tables?';
        for (const budget_tokens of [300, 600, 2000]) {
            const d = await call('knowledge_context', { question, budget_tokens });
            assert.deepEqual(d, await rest('POST', '/api/knowledge/context', { question, budget_tokens }));
            assert.equal(d.budget_tokens, budget_tokens);
            assert.equal(d.over_budget, false);
            assert.ok(d.tokens_used <= budget_tokens, `${d.tokens_used} > ${budget_tokens}`);
            assert.equal(d.knowledge.length + d.omitted.length, 9);
            assert.deepEqual(d.omitted.filter((o) => o.reason === 'duplicate').length, 1);
            for (const k of d.knowledge) assert.equal(k.uri, `knowhub://entries/${k.id}`);
        }
        // a small budget gives summaries, a large one whole entries
        const small = await call('knowledge_context', { question, budget_tokens: 300 });
        assert.ok(small.knowledge.length > 0 && small.knowledge.every((k) => k.form === 'summary'), JSON.stringify(small.knowledge));
        const large = await call('knowledge_context', { question, budget_tokens: 20000 });
        assert.ok(large.knowledge.every((k) => k.form === 'full'));
        assert.equal(large.knowledge.length, 8);
    });

    test('knowledge_rules and knowledge_context over the budget: the rules whole, over_budget, the knowledge omitted', async () => {
        const plain = await call('knowledge_rules', {});
        assert.deepEqual(Object.keys(plain).sort(), ['block', 'rules']);
        const d = await call('knowledge_rules', { budget_tokens: 1000 });
        assert.deepEqual(d, await rest('GET', '/api/knowledge/rules?budget_tokens=1000'));
        assert.deepEqual([d.over_budget, d.block, d.rules], [false, plain.block, plain.rules]);
        const over = await call('knowledge_rules', { budget_tokens: 100 });
        assert.deepEqual([over.over_budget, over.block, over.rules, over.omitted], [true, plain.block, plain.rules, []]);
        assert.equal(over.tokens_used, d.tokens_used);
        assert.ok(over.tokens_used > 100);
        const question = 'How do I join large tables?';
        const ctx = await call('knowledge_context', { question, budget_tokens: 100 });
        assert.deepEqual(ctx, await rest('POST', '/api/knowledge/context', { question, budget_tokens: 100 }));
        assert.deepEqual([ctx.over_budget, ctx.rules_block, ctx.knowledge, ctx.knowledge_block], [true, plain.block, [], '']);
        assert.equal(ctx.tokens_used, over.tokens_used);
        assert.deepEqual(ctx.omitted.map((o) => o.reason).sort(), [...Array(8).fill('budget'), 'duplicate']);
    });

    test('a budgeted result\'s text is the blocks the budget counted, not the JSON again', async () => {
        const question = 'How do I join large tables?';
        for (const [name, args] of [['knowledge_context', { question, budget_tokens: 600 }], ['knowledge_rules', { budget_tokens: 1000 }]]) {
            const r = checkResult(await agent.callTool({ name, arguments: args }));
            const text = r.content[0].text;
            assert.ok(!text.startsWith('{'), `${name}: ${text.slice(0, 80)}`);
            // The JSON of the same answer is far longer: the text is what the model reads.
            assert.ok(text.length * 1.5 < JSON.stringify(r.structuredContent).length, `${name}: ${text.length} vs ${JSON.stringify(r.structuredContent).length}`);
        }
        // Without a budget the text is the JSON, as before.
        const plain = checkResult(await agent.callTool({ name: 'knowledge_rules', arguments: {} }));
        assert.deepEqual(JSON.parse(plain.content[0].text), plain.structuredContent);
    });

    test('a wrong budget_tokens is an isError result with INVALID_REQUEST', async () => {
        for (const name of ['knowledge_context', 'knowledge_rules']) {
            for (const budget_tokens of [99, 200001]) {
                const e = await toolError(agent, name, { question: 'joins', budget_tokens });
                assert.equal(e.code, 'INVALID_REQUEST');
                assert.equal(e.message, "'budget_tokens' must be an integer between 100 and 200000");
            }
            for (const budget_tokens of ['500', 1.5, true]) {
                const e = await toolError(agent, name, { question: 'joins', budget_tokens });
                assert.equal(e.code, 'INVALID_REQUEST');
                assert.match(e.message, /budget_tokens/);
            }
        }
    });
});
