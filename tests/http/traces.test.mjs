// traces.test.mjs: the feedback loop of seed 000 over REST — search with a
// trace logs injections, pending, the eval prompt (en/zh), raw evaluator
// replies in every shape, the roll-up into counters exactly once, the next
// search reordered, and concurrent evaluations losing and double-counting nothing.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { err, ok } from './lib/expect.mjs';

let s, agent, reader;
before(async () => {
    s = await startStack();
    agent = s.token('loop', 'agent', 'loop-agent');
    reader = s.token('loop', 'reader', 'loop-reader');
});
after(async () => {
    await s?.stop();
});

const api = (method, path, body, token = agent) => s.api(method, path, { token, body });
const save = async (scenario, score = 3) =>
    ok(await api('POST', '/api/knowledge', { scenario, content: `${scenario}: the method.`, score })).id;
const search = async (q, extra = '') =>
    ok(await api('GET', `/api/knowledge/search?q=${encodeURIComponent(q)}&top_k=5&min_score=1${extra}`));
const entry = async (id) => ok(await api('GET', `/api/knowledge/${id}`));
const evaluate = (trace, body, token = agent) => api('POST', `/api/traces/${trace}/evaluations`, body, token);
const verdicts = (list) => JSON.stringify({ evaluations: list });

test('the whole loop: inject, pending, prompt, raw replies, counters once, reranked', async () => {
    const a = await save('Tundra sled route planning by wind', 4);
    const b = await save('Tundra sled route planning by snow depth', 3);
    ok(await api('POST', '/api/traces', { trace_id: 'loop-1', task: 'Plan a sled route across the tundra' }));

    // Goal focus: the search logs every returned entry.
    const first = await search('tundra sled route', '&trace_id=loop-1&goal_id=1&sequence=42');
    assert.equal(first.logged, true);
    assert.deepEqual(first.results.map((r) => r.id), [a, b]); // score 4 above 3
    const log = ok(await api('GET', '/api/traces/loop-1/knowledge_log'));
    assert.equal(log.trace_id, 'loop-1');
    assert.equal(log.entries.length, 2);
    for (const e of log.entries) {
        assert.deepEqual(Object.keys(e).sort(), ['content', 'eval_result', 'evaluated_at', 'evaluated_at_trigger', 'goal_id', 'injected_at', 'injected_at_sequence', 'knowledge_id', 'task'].sort());
        assert.equal(e.goal_id, '1');
        assert.equal(e.injected_at_sequence, 42);
        assert.match(e.injected_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/);
        assert.equal(e.eval_result, null);
        assert.equal(e.evaluated_at, null);
    }
    assert.equal(ok(await api('GET', '/api/traces/loop-1/knowledge_log/pending')).entries.length, 2);

    // The prompt: mission, goal, every pending entry, the five statuses, JSON format.
    const en = ok(await api('GET', '/api/traces/loop-1/eval_prompt?goal=choose%20a%20route'));
    assert.equal(en.language, 'en');
    assert.equal(en.pending, 2);
    for (const part of ['Plan a sled route across the tundra', 'choose a route', a, b, 'irrelevant', 'unused', 'helpful', 'harmful', 'neutral', '"evaluations"'])
        assert.ok(en.prompt.includes(part), part);
    const zh = ok(await s.api('GET', '/api/traces/loop-1/eval_prompt', { token: agent, headers: { 'Accept-Language': 'zh-CN,zh;q=0.9' } }));
    assert.equal(zh.language, 'zh');
    assert.match(zh.prompt, /知识评估助手/);

    // A raw reply with prose and a fenced block: b helpful, a harmful.
    const reply = `Looking back at the run:\n\`\`\`json\n${verdicts([
        { knowledge_id: b, eval_status: 'helpful', reason: 'Snow depth decided the route {really}.' },
        { knowledge_id: a, eval_status: 'harmful', reason: 'Wind data was stale.' },
        { knowledge_id: 'knowledge-20200101-deadbeef', eval_status: 'helpful' },
        { knowledge_id: a, eval_status: 'great' },
    ])}\n\`\`\`\nDone.`;
    const done = ok(await evaluate('loop-1', { trigger: 'goal_completion', output: reply }));
    assert.equal(done.strategy, 'fenced');
    assert.deepEqual(done.updated.map((u) => [u.knowledge_id, u.eval_status, u.counted]), [[b, 'helpful', true], [a, 'harmful', true]]);
    assert.deepEqual(done.unmatched.map((u) => u.index), [2, 3]);
    assert.match(done.unmatched[0].reason, /no pending injection/);
    assert.match(done.unmatched[1].reason, /unknown eval_status/);

    const after1 = ok(await api('GET', '/api/traces/loop-1/knowledge_log'));
    const byId = Object.fromEntries(after1.entries.map((e) => [e.knowledge_id, e]));
    assert.deepEqual(byId[b].eval_result, { eval_status: 'helpful', reason: 'Snow depth decided the route {really}.' });
    assert.equal(byId[b].evaluated_at_trigger, 'goal_completion');
    assert.equal(ok(await api('GET', '/api/traces/loop-1/knowledge_log/pending')).entries.length, 0);

    const eb = await entry(b);
    const ea = await entry(a);
    assert.equal(eb.eval.helpful, 1);
    assert.equal(ea.eval.harmful, 1);
    assert.equal(eb.eval.helpful_history[0].case_id, 'trace:loop-1');
    assert.equal(eb.eval.helpful_history[0].scenario, 'Plan a sled route across the tundra');
    assert.equal(eb.injections[0].eval_status, 'helpful');

    // The same reply again changes nothing: nothing is pending.
    const again = ok(await evaluate('loop-1', { trigger: 'goal_completion', output: reply }));
    assert.deepEqual(again.updated, []);
    assert.equal((await entry(b)).eval.helpful, 1);

    // Reranked: b (3 + 1) now above a (4 - 2).
    const next = await search('tundra sled route');
    assert.deepEqual(next.results.map((r) => r.id), [b, a]);
    assert.deepEqual(next.results.map((r) => r.quality_score), [4, 2]);

    // A second goal of the same trace: injected again, judged helpful again — counted once per trace.
    await search('tundra sled route', '&trace_id=loop-1&goal_id=2&sequence=50');
    const second = ok(await evaluate('loop-1', { trigger: 'task_completion', evaluations: [{ knowledge_id: b, eval_status: 'helpful', reason: 'again' }] }));
    assert.equal(second.strategy, 'structured');
    assert.equal(second.updated[0].counted, false);
    assert.equal((await entry(b)).eval.helpful, 1);
});

test('every shape of a raw reply, and what does not parse changes nothing', async () => {
    const k = await save('Permafrost drilling depth rules');
    const shapes = [
        ['whole', verdicts([{ knowledge_id: k, eval_status: 'neutral', reason: 'r' }])],
        ['fenced', `Sure.\n\`\`\`json\n${verdicts([{ knowledge_id: k, eval_status: 'unused', reason: 'r' }])}\n\`\`\``],
        ['bare', `My verdict is ${verdicts([{ knowledge_id: k, eval_status: 'irrelevant', reason: 'a } brace' }])} as said.`],
        ['bare', `{"thinking": "first"} then ${verdicts([{ knowledge_id: k, eval_status: 'neutral', reason: 'two objects' }])}`],
    ];
    for (const [i, [strategy, output]] of shapes.entries()) {
        const t = `shape-${i}`;
        await search('permafrost drilling', `&trace_id=${t}&goal_id=g&sequence=1`);
        const r = ok(await evaluate(t, { trigger: 'compression', output }));
        assert.equal(r.strategy, strategy, output);
        assert.equal(r.updated.length, 1, output);
    }
    const m = (await entry(k)).metrics;
    assert.deepEqual([m.neutral, m.unused, m.irrelevant, m.helpful, m.harmful], [2, 1, 1, 0, 0]);

    // Truncated, prose only, wrong trigger, unknown trace: errors, the log untouched.
    await search('permafrost drilling', '&trace_id=shape-bad&goal_id=g&sequence=1');
    for (const output of ['{"evaluations": [{"knowledge_id": "x"', 'I could not decide.', ''])
        err(await evaluate('shape-bad', { trigger: 'goal_completion', output }), 'INVALID_REQUEST');
    err(await evaluate('shape-bad', { trigger: 'lunch', output: verdicts([]) }), 'INVALID_REQUEST');
    err(await evaluate('nope-trace', { trigger: 'goal_completion', output: verdicts([]) }), 'NOT_FOUND');
    err(await evaluate('bad%20id!', { trigger: 'goal_completion', output: verdicts([]) }), 'INVALID_REQUEST');
    assert.equal(ok(await api('GET', '/api/traces/shape-bad/knowledge_log/pending')).entries.length, 1);
    // A reader may read the log but not evaluate or inject.
    ok(await api('GET', '/api/traces/shape-bad/knowledge_log', undefined, reader));
    err(await evaluate('shape-bad', { trigger: 'goal_completion', output: verdicts([]) }, reader), 'FORBIDDEN', 403);
    err(await s.api('GET', '/api/knowledge/search?q=x&trace_id=shape-bad', { token: reader }), 'FORBIDDEN', 403);
});

test('the most recent pending injection is the one evaluated; content is cut to 500 characters', async () => {
    const long = '冰'.repeat(700);
    const k = ok(await api('POST', '/api/knowledge', { scenario: 'Glacier crossing', content: long })).id;
    for (const seq of [5, 9, 7])
        ok(await api('POST', '/api/traces/recent/knowledge_log', { knowledge_id: k, goal_id: `g${seq}`, injected_at_sequence: seq }));
    const log = ok(await api('GET', '/api/traces/recent/knowledge_log'));
    assert.equal(log.entries.length, 3);
    assert.equal([...log.entries[0].content].length, 500); // characters, not bytes
    ok(await evaluate('recent', { trigger: 'goal_completion', evaluations: [{ knowledge_id: k, eval_status: 'helpful' }] }));
    const judged = ok(await api('GET', '/api/traces/recent/knowledge_log')).entries.filter((e) => e.eval_result);
    assert.deepEqual(judged.map((e) => e.injected_at_sequence), [9]);
    err(await api('POST', '/api/traces/recent/knowledge_log', { knowledge_id: 'knowledge-20200101-00000000' }), 'NOT_FOUND');

    const list = ok(await api('GET', '/api/traces?limit=100'));
    const t = list.items.find((x) => x.trace_id === 'recent');
    assert.equal(t.injections, 3);
    assert.equal(t.pending, 2);
    assert.equal(t.counts.helpful, 1);
});

test('concurrent evaluations of one trace lose nothing and double-count nothing', async () => {
    const ids = [];
    for (let i = 0; i < 12; i++) ids.push(await save(`Icebreaker convoy spacing rule ${String.fromCharCode(97 + i)}x${i}`));
    ok(await api('POST', '/api/traces', { trace_id: 'race', task: 'Convoy' }));
    for (const id of ids) ok(await api('POST', '/api/traces/race/knowledge_log', { knowledge_id: id, goal_id: '1', injected_at_sequence: 1 }));
    // 8 clients send overlapping verdicts for all 12 entries at once.
    const reply = verdicts(ids.map((id) => ({ knowledge_id: id, eval_status: 'helpful', reason: 'race' })));
    const answers = await Promise.all(Array.from({ length: 8 }, () => evaluate('race', { trigger: 'goal_completion', output: reply })));
    let updated = 0;
    for (const r of answers) updated += ok(r).updated.length;
    assert.equal(updated, 12, 'every injection evaluated exactly once');
    for (const id of ids) assert.equal((await entry(id)).eval.helpful, 1);
    assert.equal(ok(await api('GET', '/api/traces/race/knowledge_log/pending')).entries.length, 0);
});
