// The entry view of seed 003: create, list, get, update (cases, score, evolve),
// delete, revisions and revert.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack, tokenId } from './lib/stack.mjs';
import { err, ID_RE, ok, TIME_RE } from './lib/expect.mjs';

let s, agent, agentLabel;
before(async () => {
    s = await startStack();
    agentLabel = 'research-bot';
    agent = s.token('default', 'agent', agentLabel);
});
after(async () => {
    await s?.stop();
});

/** obj has these fields with these values (later issues may add more fields). */
function hasFields(obj, expected) {
    for (const [k, v] of Object.entries(expected)) assert.deepEqual(obj?.[k], v, `field ${k}`);
}

const utcDate = () => new Date().toISOString().slice(0, 10).replaceAll('-', '');

async function create(body, token = agent) {
    return s.api('POST', '/api/knowledge', { token, body });
}
async function get(id, token = agent) {
    return s.api('GET', `/api/knowledge/${id}`, { token });
}
async function put(id, body, token = agent) {
    return s.api('PUT', `/api/knowledge/${id}`, { token, body });
}
async function revisions(id, token = s.admin) {
    return ok(await s.api('GET', `/api/knowledge/${id}/revisions`, { token }));
}
async function newEntry(extra = {}) {
    return ok(await create({ scenario: 'entry scenario', content: 'entry content', ...extra }));
}

describe('create', () => {
    test('the defaults: score 3, experiences, a path from the title, title from the scenario', async () => {
        const d = ok(await create({ scenario: 'Parse CSV files quickly', content: 'Use a streaming parser.' }));
        assert.match(d.id, ID_RE);
        assert.equal(d.id.slice(10, 18), utcDate());
        assert.equal(d.category, 'experiences');
        assert.equal(d.path, 'parse-csv-files-quickly.md');
        assert.equal(d.title, 'Parse CSV files quickly');
        assert.equal(d.scenario, 'Parse CSV files quickly');
        assert.equal(d.content, 'Use a streaming parser.');
        assert.equal(d.message_id, '');
        assert.deepEqual(d.tags.type, []);
        assert.deepEqual(d.source.urls, []);
        assert.equal(d.source.agent_id, '');
        assert.match(d.source.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
        hasFields(d.eval, { score: 3, helpful: 0, harmful: 0, helpful_history: [], harmful_history: [] });
        hasFields(d.metrics, { helpful: 0, harmful: 0 });
        assert.match(d.created_at, TIME_RE);
        assert.equal(d.updated_at, d.created_at);
        assert.equal(d.status, 'active');
        assert.equal(d.version, 1);
        // created now (UTC), give or take a minute
        const t = Date.parse(d.created_at.replace(' ', 'T') + 'Z');
        assert.ok(Math.abs(Date.now() - t) < 60000, d.created_at);
    });

    test('the full seed-003 body gives the full seed-003 shape', async () => {
        const body = {
            scenario: '在什么场景下要完成什么目标',
            content: '核心知识内容',
            tags_type: ['strategy', 'tool'],
            urls: ['https://example.com', 'https://example.org/a?b=c'],
            agent_id: 'research_agent',
            score: 4,
            message_id: 'msg-xxx',
        };
        const d = ok(await create(body));
        for (const key of ['id', 'message_id', 'tags', 'scenario', 'content', 'source', 'eval', 'metrics', 'created_at', 'updated_at', 'category', 'path', 'title'])
            assert.ok(key in d, `missing ${key}`);
        assert.match(d.id, ID_RE);
        assert.equal(d.message_id, 'msg-xxx');
        assert.deepEqual([...d.tags.type].sort(), ['strategy', 'tool']);
        assert.equal(d.scenario, body.scenario);
        assert.equal(d.content, body.content);
        assert.deepEqual(d.source.urls, body.urls);
        assert.equal(d.source.agent_id, 'research_agent');
        assert.match(d.source.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
        hasFields(d.eval, { score: 4, helpful: 0, harmful: 0, helpful_history: [], harmful_history: [] });
        hasFields(d.metrics, { helpful: 0, harmful: 0 });
        assert.match(d.created_at, TIME_RE);
        assert.match(d.updated_at, TIME_RE);
        assert.equal(d.category, 'experiences');
        assert.equal(d.path, '在什么场景下要完成什么目标.md', 'the title\'s own characters, no agent folder');
        assert.equal(d.title, body.scenario);
        // GET returns the same document; the save's answer adds its conflict check
        assert.deepEqual(d.conflicts, []);
        const { conflicts, ...saved } = d;
        assert.deepEqual(ok(await get(d.id)), saved);
    });

    test('every tags_type is accepted, each once', async () => {
        const all = ['tool', 'usecase', 'definition', 'plan', 'strategy'];
        const d = ok(await create({ scenario: 's', content: 'c', tags_type: [...all, 'tool', 'plan'] }));
        assert.deepEqual([...d.tags.type].sort(), [...all].sort());
        err(await create({ scenario: 's', content: 'c', tags_type: ['tool', 'recipe'] }), 'INVALID_REQUEST');
    });

    test('ids are unique and well-formed', async () => {
        const ids = new Set();
        for (let i = 0; i < 20; i++) {
            const d = ok(await create({ scenario: `unique ${i}`, content: 'c' }));
            assert.match(d.id, ID_RE);
            ids.add(d.id);
        }
        assert.equal(ids.size, 20);
    });

    test('the title: explicit, else the first line of the scenario, at most 80 characters', async () => {
        assert.equal(ok(await create({ scenario: 's', content: 'c', title: 'My title' })).title, 'My title');
        assert.equal(ok(await create({ scenario: '  first line  \nsecond line', content: 'c' })).title, 'first line');
        assert.equal(ok(await create({ scenario: '\n\nafter blank lines\r\nmore', content: 'c' })).title, 'after blank lines');
        const long = '知'.repeat(100);
        const t = ok(await create({ scenario: long, content: 'c' })).title;
        assert.equal([...t].length, 80);
        assert.equal(t, '知'.repeat(80));
        assert.equal(ok(await create({ scenario: 'fallback', content: 'c', title: '' })).title, 'fallback');
    });

    test('a common title: the first free -n (a deleted name is used again), then the id after -99; other names of the slug do not count', async () => {
        const title = 'Lesson learned from the nightly batch';
        // names that share the slug's beginning but are not its -n
        ok(await create({ scenario: 's', content: 'c', title: 'Lesson learned from the nightly batch job' }));
        ok(await create({ scenario: 's', content: 'c', path: 'lesson-learned-from-the-nightly-batch-07.md' }));
        const paths = [];
        for (let i = 0; i < 101; i++) paths.push(ok(await create({ scenario: 's', content: `lesson ${i}`, title })).path);
        assert.equal(paths[0], 'lesson-learned-from-the-nightly-batch.md');
        assert.deepEqual(paths.slice(1, 99), Array.from({ length: 98 }, (_, i) => `lesson-learned-from-the-nightly-batch-${i + 2}.md`));
        assert.match(paths[99], /^knowledge-\d{8}-[0-9a-f]{8}\.md$/);
        assert.match(paths[100], /^knowledge-\d{8}-[0-9a-f]{8}\.md$/);
        // a name freed is the first free one again
        ok(await s.api('POST', '/api/knowledge/delete', { token: agent, body: { category: 'experiences', path: 'lesson-learned-from-the-nightly-batch-5.md' } }));
        assert.equal(ok(await create({ scenario: 's', content: 'again', title })).path, 'lesson-learned-from-the-nightly-batch-5.md');
    });

    test('a path from the title: a short slug, no agent folder, -2 when taken, the id without letters', async () => {
        const d = ok(await create({ scenario: 's', content: 'c', agent_id: '../../etc/x y', title: 'Group and aggregate: revenue per region and quarter — shown as a bar chart' }));
        assert.equal(d.source.agent_id, '../../etc/x y', 'the agent stays in the metadata');
        assert.equal(d.path, 'group-and-aggregate-revenue-per-region-and-quarter-shown-as.md');
        const again = ok(await create({ scenario: 's', content: 'c', agent_id: 'other', title: 'Group and aggregate: revenue per region and quarter — shown as a bar chart!' }));
        assert.equal(again.path, 'group-and-aggregate-revenue-per-region-and-quarter-shown-as-2.md');
        const third = ok(await create({ scenario: 's', content: 'c', title: 'group and aggregate revenue per region and quarter shown as' }));
        assert.equal(third.path, 'group-and-aggregate-revenue-per-region-and-quarter-shown-as-3.md');
        assert.equal(ok(await create({ scenario: 's', content: 'c', title: '按地区汇总：季度收入（柱状图）' })).path, '按地区汇总-季度收入-柱状图.md');
        assert.equal(ok(await create({ scenario: 's', content: 'c', title: 'Pandas groupby 分组' })).path, 'pandas-groupby.md');
        const bare = ok(await create({ scenario: 's', content: 'c', title: '—?!。' }));
        assert.equal(bare.path, `${bare.id}.md`);
        // a folder of the same name is no clash for a document "<slug>.md"
        ok(await create({ scenario: 's', content: 'c', path: 'csv-tricks/one.md' }));
        assert.equal(ok(await create({ scenario: 's', content: 'c', title: 'CSV tricks' })).path, 'csv-tricks.md');
        // the entry's document and the file view agree on the path
        const file = ok(await s.api('POST', '/api/knowledge/read', { token: agent, body: { category: 'experiences', path: d.path } }));
        assert.match(file.content, /title: /);
        // with an Idempotency-Key (one transaction with the key's row): a taken name still gets -n
        const k1 = ok(await s.api('POST', '/api/knowledge', { token: agent, body: { scenario: 's', content: 'c', title: 'Keyed title', idempotency_key: 'labels-k1' } }));
        const k2 = ok(await s.api('POST', '/api/knowledge', { token: agent, body: { scenario: 's', content: 'c', title: 'Keyed title', idempotency_key: 'labels-k2' } }));
        assert.deepEqual([k1.path, k2.path], ['keyed-title.md', 'keyed-title-2.md']);
        const replay = ok(await s.api('POST', '/api/knowledge', { token: agent, body: { scenario: 's', content: 'c', title: 'Keyed title', idempotency_key: 'labels-k2' } }));
        assert.equal(replay.id, k2.id, 'the key replays its entry, no third');
        // an explicit path is still honoured, an existing entry never renamed
        assert.equal(ok(await create({ scenario: 's', content: 'c', title: 'Named', path: 'research_agent/knowledge-20261203-66672e14.md' })).path, 'research_agent/knowledge-20261203-66672e14.md');
        assert.equal(ok(await get(d.id)).path, d.path);
    });

    test('an explicit path is normalised and must be free', async () => {
        const d = ok(await create({ scenario: 's', content: 'c', path: './notes//csv.md' }));
        assert.equal(d.path, 'notes/csv.md');
        const e = err(await create({ scenario: 's2', content: 'c2', path: 'notes/csv.md' }), 'CONFLICT');
        assert.match(e.message, /notes\/csv\.md/);
        // A deleted entry frees its path.
        ok(await s.api('DELETE', `/api/knowledge/${d.id}`, { token: s.admin }));
        assert.equal(ok(await create({ scenario: 's3', content: 'c3', path: 'notes/csv.md' })).path, 'notes/csv.md');
    });

    test('a rule needs a path and keeps its rule fields', async () => {
        err(await create({ scenario: 'r', content: 'c', category: 'rules' }, s.admin), 'INVALID_REQUEST');
        const d = ok(await create({ scenario: 'r', content: 'Be brief.', category: 'rules', path: 'brief.md', description: 'short answers', always_apply: false }, s.admin));
        assert.equal(d.category, 'rules');
        assert.equal(d.description, 'short answers');
        assert.equal(d.always_apply, false);
        err(await create({ scenario: 'r', content: 'c', category: 'notes' }, s.admin), 'INVALID_REQUEST');
        err(await create({ scenario: 'r', content: 'x'.repeat(351), category: 'rules', path: 'long.md' }, s.admin), 'LIMIT_EXCEEDED');
    });
});

describe('list', () => {
    let tok;
    const made = []; // oldest first
    before(async () => {
        tok = s.token('listing', 'agent', 'lister');
        const specs = [
            ['tool'],
            ['plan'],
            ['tool', 'plan'],
            ['strategy'],
            [],
            ['usecase'],
            ['definition', 'tool'],
            ['plan'],
            ['tool'],
            ['strategy', 'usecase'],
            ['tool'],
            ['definition'],
        ];
        for (const [i, t] of specs.entries()) {
            const d = ok(await create({ scenario: `list ${i}`, content: `content ${i}`, tags_type: t }, tok));
            made.push({ id: d.id, types: t });
        }
        const rule = ok(await create({ scenario: 'rule', content: 'r', category: 'rules', path: 'list-rule.md' }, s.token('listing', 'admin')));
        made.push({ id: rule.id, types: [], rule: true });
    });

    const newestFirst = (pred = () => true) => made.filter(pred).map((m) => m.id).reverse();
    const list = async (q) => ok(await s.api('GET', `/api/knowledge${q}`, { token: tok }));

    test('newest first, default limit 10, with total', async () => {
        const d = await list('');
        assert.equal(d.total, made.length);
        assert.equal(d.limit, 10);
        assert.equal(d.offset, 0);
        assert.deepEqual(d.items.map((i) => i.id), newestFirst().slice(0, 10));
        for (const it of d.items) {
            assert.match(it.id, ID_RE);
            assert.equal(typeof it.eval.score, 'number');
            assert.ok('scenario' in it && 'content' in it && 'tags' in it && 'metrics' in it);
        }
    });

    test('limit and offset page through everything once', async () => {
        const seen = [];
        for (let off = 0; off < made.length; off += 5) {
            const d = await list(`?limit=5&offset=${off}`);
            assert.equal(d.total, made.length);
            assert.equal(d.limit, 5);
            assert.equal(d.offset, off);
            seen.push(...d.items.map((i) => i.id));
        }
        assert.deepEqual(seen, newestFirst());
        const beyond = await list('?offset=1000');
        assert.deepEqual(beyond.items, []);
        assert.equal(beyond.total, made.length);
        assert.equal((await list('?limit=100')).items.length, made.length);
        assert.equal((await list('?limit=1')).items.length, 1);
    });

    test('limit and offset bounds', async () => {
        for (const q of ['limit=0', 'limit=101', 'limit=-1', 'limit=abc', 'limit=1.5', 'limit=10x', 'offset=-1', 'offset=x', 'offset=99999999999999999999', 'limit=99999999999999999999'])
            err(await s.api('GET', `/api/knowledge?${q}`, { token: tok }), 'INVALID_REQUEST');
        // Empty values mean the default.
        const d = await list('?limit=&offset=');
        assert.equal(d.limit, 10);
        assert.equal(d.offset, 0);
    });

    test('tags_type filters: one, comma-separated, repeated', async () => {
        const has = (...t) => (m) => m.types.some((x) => t.includes(x));
        assert.deepEqual((await list('?limit=100&tags_type=tool')).items.map((i) => i.id), newestFirst(has('tool')));
        assert.equal((await list('?tags_type=tool')).total, made.filter(has('tool')).length);
        const both = newestFirst(has('tool', 'plan'));
        assert.deepEqual((await list('?limit=100&tags_type=tool,plan')).items.map((i) => i.id), both);
        assert.deepEqual((await list('?limit=100&tags_type=tool&tags_type=plan')).items.map((i) => i.id), both);
        assert.deepEqual((await list('?limit=100&tags_type=tool%2Cplan')).items.map((i) => i.id), both);
        assert.equal((await list('?tags_type=tool,plan')).total, both.length);
        assert.deepEqual((await list('?limit=100&tags_type=definition')).items.map((i) => i.id), newestFirst(has('definition')));
        for (const it of (await list('?limit=100&tags_type=strategy')).items) assert.ok(it.tags.type.includes('strategy'));
        err(await s.api('GET', '/api/knowledge?tags_type=recipe', { token: tok }), 'INVALID_REQUEST');
        err(await s.api('GET', '/api/knowledge?tags_type=tool,recipe', { token: tok }), 'INVALID_REQUEST');
    });

    test('category filter', async () => {
        const rules = await list('?category=rules');
        assert.equal(rules.total, 1);
        assert.deepEqual(rules.items.map((i) => i.id), newestFirst((m) => m.rule));
        const exp = await list('?category=experiences&limit=100');
        assert.equal(exp.total, made.length - 1);
        assert.deepEqual(exp.items.map((i) => i.id), newestFirst((m) => !m.rule));
        assert.equal((await list('?category=experiences&tags_type=tool')).total, made.filter((m) => m.types.includes('tool')).length);
        err(await s.api('GET', '/api/knowledge?category=notes', { token: tok }), 'INVALID_REQUEST');
    });
});

describe('get', () => {
    test('an unknown or malformed id is NOT_FOUND', async () => {
        for (const id of ['knowledge-20200101-00000000', 'nope', 'knowledge-x', '%20', 'a%2Fb'])
            err(await get(id), 'NOT_FOUND');
    });

    test('one entry with both histories', async () => {
        const d = await newEntry();
        ok(await put(d.id, { add_helpful_case: { case_id: 'h1', scenario: 'used it', result: 'worked', agent_id: 'a1', trace_id: 't1', goal_id: 'g1' } }));
        ok(await put(d.id, { add_harmful_case: { case_id: 'x1', scenario: 'misused', result: 'failed' } }));
        const g = ok(await get(d.id));
        assert.equal(g.eval.helpful, 1);
        assert.equal(g.eval.harmful, 1);
        assert.equal(g.eval.helpful_history.length, 1);
        const h = g.eval.helpful_history[0];
        assert.equal(h.case_id, 'h1');
        assert.equal(h.scenario, 'used it');
        assert.equal(h.result, 'worked');
        assert.equal(h.agent_id, 'a1');
        assert.equal(h.trace_id, 't1');
        assert.equal(h.goal_id, 'g1');
        assert.match(h.created_at, TIME_RE);
        assert.deepEqual(g.eval.harmful_history.map((c) => [c.case_id, c.scenario, c.result]), [['x1', 'misused', 'failed']]);
    });
});

describe('update', () => {
    test('add_helpful_case counts once per case_id', async () => {
        const d = await newEntry();
        let r = ok(await put(d.id, { add_helpful_case: { case_id: 'c1', scenario: 's', result: 'r' } }));
        assert.deepEqual(r.applied, { add_helpful_case: 'added' });
        assert.equal(r.eval.helpful, 1);
        assert.equal(r.metrics.helpful, 1);
        r = ok(await put(d.id, { add_helpful_case: { case_id: 'c1', scenario: 'again', result: 'again' } }));
        assert.deepEqual(r.applied, { add_helpful_case: 'duplicate' });
        assert.equal(r.eval.helpful, 1);
        assert.equal(r.metrics.helpful, 1);
        assert.equal(r.eval.helpful_history.length, 1);
        assert.equal(r.eval.helpful_history[0].scenario, 's');
        r = ok(await put(d.id, { add_helpful_case: { case_id: 'c2' } }));
        assert.equal(r.applied.add_helpful_case, 'added');
        assert.equal(r.eval.helpful, 2);
        assert.equal(r.eval.harmful, 0);
        // Counters are not content: no new version, no new revision.
        assert.equal(r.version, d.version);
        assert.equal(r.updated_at, d.updated_at);
        assert.equal((await revisions(d.id)).items.length, 1);
    });

    test('add_harmful_case counts once per case_id, separately from helpful', async () => {
        const d = await newEntry();
        ok(await put(d.id, { add_helpful_case: { case_id: 'same' } }));
        let r = ok(await put(d.id, { add_harmful_case: { case_id: 'same', result: 'bad' } }));
        assert.deepEqual(r.applied, { add_harmful_case: 'added' });
        assert.equal(r.eval.harmful, 1);
        assert.equal(r.metrics.harmful, 1);
        r = ok(await put(d.id, { add_harmful_case: { case_id: 'same' } }));
        assert.deepEqual(r.applied, { add_harmful_case: 'duplicate' });
        assert.equal(r.eval.harmful, 1);
        assert.equal(r.eval.helpful, 1);
    });

    test('cases without a case_id each count', async () => {
        const d = await newEntry();
        for (let i = 0; i < 3; i++) assert.equal(ok(await put(d.id, { add_helpful_case: { scenario: 'anon' } })).applied.add_helpful_case, 'added');
        const g = ok(await get(d.id));
        assert.equal(g.eval.helpful, 3);
        assert.equal(new Set(g.eval.helpful_history.map((c) => c.case_id)).size, 3);
    });

    test('helpful, harmful and score in one request', async () => {
        const d = await newEntry();
        const r = ok(await put(d.id, { add_helpful_case: { case_id: 'a' }, add_harmful_case: { case_id: 'b' }, update_score: 2 }));
        assert.deepEqual(r.applied, { add_helpful_case: 'added', add_harmful_case: 'added', update_score: 2 });
        assert.equal(r.eval.helpful, 1);
        assert.equal(r.eval.harmful, 1);
        assert.equal(r.eval.score, 2);
    });

    test('update_score accepts 1..5 and rejects the rest, changing nothing', async () => {
        const d = await newEntry();
        for (const v of [1, 5, 2]) {
            const r = ok(await put(d.id, { update_score: v }));
            assert.equal(r.applied.update_score, v);
            assert.equal(r.eval.score, v);
        }
        const before = ok(await get(d.id));
        for (const v of [0, 6, -1, 'x', '3', 3.5, true, [3], { v: 3 }, 1e10]) {
            const e = err(await put(d.id, { update_score: v }), 'INVALID_REQUEST');
            assert.match(e.message, /update_score/);
        }
        // A bad score also stops the cases sent with it.
        err(await put(d.id, { add_helpful_case: { case_id: 'with-bad-score' }, update_score: 6 }), 'INVALID_REQUEST');
        assert.deepEqual(ok(await get(d.id)), before);
    });

    test('a score change is a revision; the same score is not', async () => {
        const d = await newEntry({ score: 3 });
        const r = ok(await put(d.id, { update_score: 5 }));
        assert.equal(r.version, 2);
        assert.ok(r.updated_at >= d.updated_at);
        const again = ok(await put(d.id, { update_score: 5 }));
        assert.equal(again.version, 2);
        const revs = await revisions(d.id);
        assert.deepEqual(revs.items.map((v) => [v.version, v.reason]), [[2, 'score'], [1, 'create']]);
        assert.equal(revs.items[0].document.score, 5);
        assert.equal(revs.items[1].document.score, 3);
    });

    test('evolve_feedback without an LLM: LLM_NOT_CONFIGURED and nothing changed', async () => {
        const d = await newEntry({ content: 'original content', score: 4 });
        ok(await put(d.id, { add_helpful_case: { case_id: 'pre' } }));
        const before = ok(await get(d.id));
        const e = err(await put(d.id, { evolve_feedback: 'Mention the edge case with empty files.' }), 'LLM_NOT_CONFIGURED');
        assert.equal(e.retry, false);
        // Sent with other fields, nothing of those is applied either.
        err(
            await put(d.id, {
                evolve_feedback: 'rewrite it',
                add_helpful_case: { case_id: 'with-evolve' },
                add_harmful_case: { case_id: 'with-evolve' },
                update_score: 1,
            }),
            'LLM_NOT_CONFIGURED',
        );
        const now = ok(await get(d.id));
        assert.deepEqual(now, before);
        assert.equal(now.content, 'original content');
        assert.equal(now.eval.score, 4);
        assert.equal(now.eval.helpful, 1);
        assert.equal(now.eval.harmful, 0);
        assert.equal(now.version, before.version);
        assert.equal((await revisions(d.id)).items.length, 1);
        err(await put('knowledge-20200101-00000000', { evolve_feedback: 'x' }), 'NOT_FOUND');
    });

    test('an empty or pointless body is INVALID_REQUEST', async () => {
        const d = await newEntry();
        for (const opts of [{}, { rawBody: '' }, { rawBody: '  \n' }, { body: {} }, { body: { update_score: null } }, { body: { unknown: 1 } }, { body: { add_helpful_case: null } }]) {
            err(await s.api('PUT', `/api/knowledge/${d.id}`, { token: agent, ...opts }), 'INVALID_REQUEST');
        }
        for (const body of [{ add_helpful_case: 'c1' }, { add_harmful_case: [] }, { add_helpful_case: { case_id: 5 } }, { evolve_feedback: 7 }])
            err(await put(d.id, body), 'INVALID_REQUEST');
        const g = ok(await get(d.id));
        assert.equal(g.eval.helpful + g.eval.harmful, 0);
        assert.equal(g.version, 1);
    });

    test('an unknown id is NOT_FOUND', async () => {
        err(await put('knowledge-20200101-00000000', { add_helpful_case: { case_id: 'x' } }), 'NOT_FOUND');
        err(await put('knowledge-20200101-00000000', { update_score: 4 }), 'NOT_FOUND');
    });
});

describe('delete, revisions, revert', () => {
    test('delete is soft: gone from GET and list, kept in revisions', async () => {
        const d = await newEntry({ scenario: 'to delete' });
        const total0 = ok(await s.api('GET', '/api/knowledge', { token: agent })).total;
        const r = ok(await s.api('DELETE', `/api/knowledge/${d.id}`, { token: s.admin }));
        assert.deepEqual(r, { id: d.id, status: 'deleted', version: 2 });
        err(await get(d.id), 'NOT_FOUND');
        const l = ok(await s.api('GET', '/api/knowledge?limit=100', { token: agent }));
        assert.equal(l.total, total0 - 1);
        assert.ok(!l.items.some((i) => i.id === d.id));
        const revs = await revisions(d.id);
        assert.equal(revs.id, d.id);
        assert.deepEqual(revs.items.map((v) => [v.version, v.reason]), [[2, 'delete'], [1, 'create']]);
        assert.equal(revs.items[0].document.status, 'deleted');
        // Gone for every other operation too.
        err(await s.api('DELETE', `/api/knowledge/${d.id}`, { token: s.admin }), 'NOT_FOUND');
        err(await put(d.id, { add_helpful_case: { case_id: 'late' } }), 'NOT_FOUND');
        err(await put(d.id, { update_score: 5 }), 'NOT_FOUND');
        err(await s.api('DELETE', '/api/knowledge/knowledge-20200101-00000000', { token: s.admin }), 'NOT_FOUND');
    });

    test('revisions record create, score and delete, newest first, with actor', async () => {
        const d = await newEntry({ scenario: 'history', content: 'v1 content', score: 2 });
        ok(await put(d.id, { update_score: 4 }));
        ok(await s.api('DELETE', `/api/knowledge/${d.id}`, { token: s.admin }));
        const revs = await revisions(d.id, agent);
        assert.deepEqual(revs.items.map((v) => [v.version, v.reason]), [[3, 'delete'], [2, 'score'], [1, 'create']]);
        const [del, score, created] = revs.items;
        assert.equal(created.actor, `token:${tokenId(agent)}:${agentLabel}`);
        assert.equal(score.actor, created.actor);
        assert.equal(del.actor, `token:${tokenId(s.admin)}:first-start admin`);
        for (const v of revs.items) {
            assert.match(v.created_at, TIME_RE);
            assert.equal(v.document.id, d.id);
            assert.equal(v.document.content, 'v1 content');
        }
        assert.equal(created.document.score, 2);
        assert.equal(score.document.score, 4);
        assert.equal(created.document.status, 'active');
        err(await s.api('GET', '/api/knowledge/knowledge-20200101-00000000/revisions', { token: agent }), 'NOT_FOUND');
    });

    test('revert restores a deleted entry and is itself a revision', async () => {
        const d = await newEntry({ scenario: 'revert me', content: 'keep this', score: 2 });
        ok(await put(d.id, { update_score: 5 }));
        ok(await s.api('DELETE', `/api/knowledge/${d.id}`, { token: s.admin }));
        const total0 = ok(await s.api('GET', '/api/knowledge', { token: agent })).total;
        const r = ok(await s.api('POST', `/api/knowledge/${d.id}/revert`, { token: s.admin, body: { version: 1 } }));
        assert.equal(r.id, d.id);
        assert.equal(r.status, 'active');
        assert.equal(r.content, 'keep this');
        assert.equal(r.eval.score, 2);
        assert.equal(r.version, 4);
        assert.equal(r.path, d.path);
        assert.deepEqual(ok(await get(d.id)), r);
        assert.equal(ok(await s.api('GET', '/api/knowledge', { token: agent })).total, total0 + 1);
        const revs = await revisions(d.id);
        assert.deepEqual(revs.items.map((v) => [v.version, v.reason]), [[4, 'revert'], [3, 'delete'], [2, 'score'], [1, 'create']]);
        // Revert to the score-5 version of an active entry.
        const r2 = ok(await s.api('POST', `/api/knowledge/${d.id}/revert`, { token: s.admin, body: { version: 2 } }));
        assert.equal(r2.eval.score, 5);
        assert.equal(r2.version, 5);
    });

    test('revert without a version restores a deleted entry to its last state', async () => {
        const d = await newEntry({ scenario: 'undelete me', score: 2 });
        ok(await put(d.id, { update_score: 4 }));
        // An active entry needs a version.
        err(await s.api('POST', `/api/knowledge/${d.id}/revert`, { token: agent, body: {} }), 'INVALID_REQUEST');
        ok(await s.api('DELETE', `/api/knowledge/${d.id}`, { token: agent }));
        const r = ok(await s.api('POST', `/api/knowledge/${d.id}/revert`, { token: agent, body: {} }));
        assert.equal(r.status, 'active');
        assert.equal(r.eval.score, 4);
        assert.equal(r.version, 4);
        const revs = await revisions(d.id);
        assert.deepEqual(revs.items.map((v) => v.reason), ['revert', 'delete', 'score', 'create']);
    });

    test('revert errors: unknown version or id, bad version, taken path', async () => {
        const d = await newEntry({ path: 'rev/place.md' });
        const before = ok(await get(d.id));
        err(await s.api('POST', `/api/knowledge/${d.id}/revert`, { token: s.admin, body: { version: 99 } }), 'NOT_FOUND');
        for (const body of [{}, { version: 0 }, { version: -1 }, { version: '1' }, { version: 1.5 }, { version: null }])
            err(await s.api('POST', `/api/knowledge/${d.id}/revert`, { token: s.admin, body }), 'INVALID_REQUEST');
        err(await s.api('POST', '/api/knowledge/knowledge-20200101-00000000/revert', { token: s.admin, body: { version: 1 } }), 'NOT_FOUND');
        assert.deepEqual(ok(await get(d.id)), before);
        assert.equal((await revisions(d.id)).items.length, 1);
        // Delete it, let another entry take its path: the revert is a CONFLICT.
        ok(await s.api('DELETE', `/api/knowledge/${d.id}`, { token: s.admin }));
        const other = await newEntry({ path: 'rev/place.md' });
        err(await s.api('POST', `/api/knowledge/${d.id}/revert`, { token: s.admin, body: { version: 1 } }), 'CONFLICT');
        err(await get(d.id), 'NOT_FOUND');
        assert.equal(ok(await get(other.id)).path, 'rev/place.md');
        assert.equal((await revisions(d.id)).items.length, 2);
    });
});
