// Seed 000's feedback loop through MCP alone, as an agent runner would run
// it: save knowledge, inject it at goal focus (knowledge_search with a trace),
// get the evaluation prompt when the goal completes, submit the evaluator's
// raw reply, and see the counters move and the next search reordered.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startStack } from '../http/lib/stack.mjs';
import { connect, rawPost, rpc, tool } from './lib/mcp.mjs';

let s;
let c;
before(async () => {
    s = await startStack();
    c = await connect(s, s.token('default', 'agent', 'runner'));
});
after(async () => {
    await c?.close();
    await s?.stop();
});

const Q = 'quarterly ROI of the sales table';
const byId = (results) => Object.fromEntries(results.map((r) => [r.id, r]));

test('the seed-000 loop: search with a trace -> eval prompt -> raw reply -> counters moved, next search reordered', async () => {
    // Knowledge saved by earlier tasks. "wrong" starts with the best score.
    const good = await tool(c, 'knowledge_save', {
        scenario: 'Compute the quarterly ROI of a sales table',
        content: 'ROI = (revenue - full cost) / full cost; include marketing in the cost and report the quarter.',
        tags_type: ['strategy'],
        score: 3,
    });
    const wrong = await tool(c, 'knowledge_save', {
        scenario: 'Compute the quarterly ROI of the sales table quickly',
        content: 'ROI = revenue / cost per quarter of the sales table.',
        tags_type: ['strategy'],
        score: 4,
    });
    const plain = await tool(c, 'knowledge_save', {
        scenario: 'Quarterly sales table: where the ROI columns are',
        content: 'The sales table has revenue and cost columns per quarter.',
        tags_type: ['definition'],
        score: 3,
    });

    // Goal focus (goal "1", message 42): the search logs what it injects.
    const first = await tool(c, 'knowledge_search', { q: Q, top_k: 5, min_score: 3, trace_id: 'trace-roi', goal_id: '1', sequence: 42 });
    assert.equal(first.logged, true);
    assert.equal(first.trace_id, 'trace-roi');
    assert.equal(first.count, 3);
    const ids = first.results.map((r) => r.id);
    assert.equal(ids[0], wrong.id, 'the higher score ranks first before any feedback');
    assert.deepEqual(byId(first.results)[good.id].quality_score, 3);
    assert.deepEqual(byId(first.results)[wrong.id].quality_score, 4);

    // The goal completes: the runner asks for the evaluation prompt.
    const p = await tool(c, 'trace_eval_prompt', { trace_id: 'trace-roi', goal: 'compute the quarterly ROI' });
    assert.equal(p.pending, 3);
    assert.equal(p.language, 'en');
    for (const id of [good.id, wrong.id, plain.id]) assert.ok(p.prompt.includes(id), `the prompt lists ${id}`);
    for (const status of ['irrelevant', 'unused', 'helpful', 'harmful', 'neutral']) assert.ok(p.prompt.includes(status));
    assert.ok(p.prompt.includes('compute the quarterly ROI'));

    // The runner's LLM answers in prose with a fenced block; it goes back as it came.
    const reply = [
        'I reviewed the knowledge injected for this goal.',
        '```json',
        JSON.stringify({
            evaluations: [
                { knowledge_id: good.id, eval_status: 'helpful', reason: 'Its full-cost formula gave the right ROI.' },
                { knowledge_id: wrong.id, eval_status: 'harmful', reason: 'Ignoring marketing cost overstated ROI.' },
                { knowledge_id: plain.id, eval_status: 'neutral', reason: 'Known already.' },
            ],
        }, null, 2),
        '```',
        'That is all.',
    ].join('\n');
    const ev = await tool(c, 'trace_submit_evaluation', { trace_id: 'trace-roi', trigger: 'goal_completion', output: reply });
    assert.equal(ev.trace_id, 'trace-roi');
    assert.equal(ev.trigger, 'goal_completion');
    assert.equal(ev.strategy, 'fenced');
    assert.deepEqual(ev.unmatched, []);
    assert.deepEqual(ev.updated.map((u) => [u.knowledge_id, u.eval_status, u.counted]), [
        [good.id, 'helpful', true],
        [wrong.id, 'harmful', true],
        [plain.id, 'neutral', true],
    ]);
    assert.equal((await tool(c, 'trace_eval_prompt', { trace_id: 'trace-roi' })).pending, 0, 'nothing left to evaluate');

    // The next goal's search: the helpful entry now ranks above the harmful one.
    const next = await tool(c, 'knowledge_search', { q: Q, top_k: 5, min_score: 3, trace_id: 'trace-roi', goal_id: '2', sequence: 57 });
    const r = byId(next.results);
    assert.equal(next.results[0].id, good.id, 'helpful first');
    assert.ok(next.results.findIndex((x) => x.id === good.id) < next.results.findIndex((x) => x.id === wrong.id));
    assert.equal(r[good.id].quality_score, 4); // 3 + 1 helpful
    assert.equal(r[wrong.id].quality_score, 2); // 4 - 2 x 1 harmful
    assert.equal(r[plain.id].quality_score, 3);
    assert.deepEqual([r[good.id].metrics.helpful, r[good.id].metrics.harmful], [1, 0]);
    assert.deepEqual([r[wrong.id].metrics.helpful, r[wrong.id].metrics.harmful], [0, 1]);
    assert.deepEqual(next.results.map((x) => x.id), [good.id, plain.id, wrong.id]);

    // Task end: the same verdicts again, as bare JSON in prose. The goal-2
    // injections are evaluated, but a trace moves an entry's counters once.
    assert.equal((await tool(c, 'trace_eval_prompt', { trace_id: 'trace-roi' })).pending, 3);
    const bare = `Final check. {"evaluations": [{"knowledge_id": "${good.id}", "eval_status": "helpful", "reason": "again"}, ` +
        `{"knowledge_id": "${wrong.id}", "eval_status": "harmful", "reason": "again"}, ` +
        `{"knowledge_id": "knowledge-20000101-00000000", "eval_status": "helpful", "reason": "never injected"}]} Bye.`;
    const end = await tool(c, 'trace_submit_evaluation', { trace_id: 'trace-roi', trigger: 'task_completion', output: bare });
    assert.equal(end.strategy, 'bare');
    assert.deepEqual(end.updated.map((u) => u.counted), [false, false]);
    assert.equal(end.unmatched.length, 1);
    assert.equal(end.unmatched[0].knowledge_id, 'knowledge-20000101-00000000');
    const same = byId((await tool(c, 'knowledge_search', { q: Q })).results);
    assert.equal(same[good.id].quality_score, 4);
    assert.equal(same[wrong.id].quality_score, 2);

    // Another task (compression trigger, structured verdicts) counts again.
    await tool(c, 'knowledge_search', { q: Q, trace_id: 'trace-roi-2', goal_id: '1', sequence: 5 });
    const comp = await tool(c, 'trace_submit_evaluation', {
        trace_id: 'trace-roi-2',
        trigger: 'compression',
        evaluations: [{ knowledge_id: wrong.id, eval_status: 'harmful', reason: 'wrong again' }],
    });
    assert.equal(comp.strategy, 'structured');
    assert.equal(comp.updated[0].counted, true);
    // quality 4 - 2 x 2 = 0: still listed (quality >= 0), last.
    const third = await tool(c, 'knowledge_search', { q: Q });
    assert.deepEqual(third.results.map((x) => x.id), [good.id, plain.id, wrong.id]);
    assert.equal(byId(third.results)[wrong.id].quality_score, 0);
    assert.equal(byId(third.results)[wrong.id].metrics.harmful, 2);

    // The knowledge log, read through REST, shows the seed's fields.
    const log = await s.api('GET', '/api/traces/trace-roi/knowledge_log', { token: s.admin });
    const entries = log.json.data.entries;
    assert.equal(entries.length, 6);
    const g1 = entries.find((e) => e.knowledge_id === good.id && e.goal_id === '1');
    assert.equal(g1.injected_at_sequence, 42);
    assert.deepEqual(g1.eval_result, { eval_status: 'helpful', reason: 'Its full-cost formula gave the right ROI.' });
    assert.equal(g1.evaluated_at_trigger, 'goal_completion');
    const g2 = entries.find((e) => e.knowledge_id === wrong.id && e.goal_id === '2');
    assert.equal(g2.injected_at_sequence, 57);
    assert.equal(g2.evaluated_at_trigger, 'task_completion');
});

test('the evaluation prompt follows Accept-Language (zh) through MCP', async () => {
    const zh = await connect(s, s.token('default', 'agent', 'zh-runner'), { 'Accept-Language': 'zh-CN,zh;q=0.9' });
    try {
        await tool(zh, 'knowledge_search', { q: Q, trace_id: 'trace-zh', goal_id: '1', sequence: 1 });
        const p = await tool(zh, 'trace_eval_prompt', { trace_id: 'trace-zh' });
        assert.equal(p.language, 'zh');
        assert.match(p.prompt, /[\u4e00-\u9fff]/);
    } finally {
        await zh.close();
    }
    // The same in a raw batch: inject and ask, in order, in one POST.
    const token = s.token('default', 'agent', 'batch-runner');
    const r = await rawPost(s, [
        rpc(1, 'tools/call', { name: 'knowledge_search', arguments: { q: Q, trace_id: 'trace-batch', goal_id: '1', sequence: 1 } }),
        rpc(2, 'tools/call', { name: 'trace_eval_prompt', arguments: { trace_id: 'trace-batch' } }),
    ], { token });
    assert.equal(r.json[0].result.structuredContent.logged, true);
    assert.equal(r.json[1].result.structuredContent.pending, r.json[0].result.structuredContent.count);
});
