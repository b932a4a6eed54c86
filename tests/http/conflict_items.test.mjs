// Conflict items in the review queue (docs/conflicts.md "Conflict items and
// their resolution"): a contradiction the write check links (or a
// contradicts link a person or agent adds) waits for an editor as a
// proposal of kind conflict, one per pair; GET /api/review/{id} shows both
// sides; supersede, narrow or dismiss decide it; the other decisions are
// invalid for it. The rule flag (an experience against an always-apply
// rule) and the LLM's verdict with the local detector as its fallback.
// SQLite, and PostgreSQL with KNOWHUB_TEST_PG.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { startFakeLlm } from './lib/fakellm.mjs';
import { callsOf, llmEnv, sql } from './lib/llmtest.mjs';
import { err, ok } from './lib/expect.mjs';
import { readPaths, roleTokens } from './lib/reads.mjs';

let s;
before(async () => (s = await startStack()));
after(async () => s?.stop());

let n = 0;
const space = (stack = s) => roleTokens(stack, `citems-${++n}`);
const save = async (token, body, stack = s) => ok(await stack.api('POST', '/api/knowledge', { token, body }));
const GZIP = { scenario: 'Serve JSON answers through the nginx proxy' };
const pair = async (v, stack = s, word = 'gzip') => {
    const a = await save(v.agent, { ...GZIP, content: `Always enable ${word} compression on the nginx proxy for JSON answers.` }, stack);
    const b = await save(v.agent, { ...GZIP, content: `Never enable ${word} compression on the nginx proxy for JSON answers.` }, stack);
    return { a, b, c: b.conflicts.find((c) => c.id === a.id) };
};
const items = async (v, stack = s) => ok(await stack.api('GET', '/api/review?state=pending&limit=100', { token: v.editor, stack })).items.filter((p) => p.kind === 'conflict');
const decide = (v, id, body, token = v.editor) => s.api('POST', `/api/review/${id}/decide`, { token, body });
const links = async (v, id) => ok(await s.api('GET', `/api/knowledge/${id}/links`, { token: v.reader })).items.map((l) => [l.from, l.to, l.type]);

describe('conflict items', () => {
    test('a contradiction the check links is queued once, with both sides', async () => {
        const v = space();
        const { a, b, c } = await pair(v);
        assert.equal(c.verdict, 'contradiction');
        assert.equal(c.judge, 'local');
        assert.equal(c.against_rule, false);
        assert.equal(c.link, 'contradicts');
        assert.match(c.review_id, /^prop-/);
        const queue = await items(v);
        assert.equal(queue.length, 1);
        const it = queue[0];
        assert.deepEqual([it.id, it.kind, it.state, it.knowledge_id, it.write_path], [c.review_id, 'conflict', 'pending', b.id, 'check']);
        assert.deepEqual(it.conflict, { reason: c.reason, judge: 'local', against_rule: false });
        const full = ok(await s.api('GET', `/api/review/${it.id}`, { token: v.editor }));
        assert.deepEqual(full.sides.map((x) => [x.id, x.status, x.version, x.base_version]), [[b.id, 'active', 1, 1], [a.id, 'active', 1, 1]]);
        assert.match(full.sides[1].document, /Always enable gzip/);
        assert.match(full.sides[0].document, /Never enable gzip/);
        // the same pair again (a third entry saying the same as b adds its own pair, not this one)
        ok(await s.api('POST', `/api/knowledge/${a.id}/links`, { token: v.agent, body: { to: b.id, type: 'contradicts', reason: 'again' } }));
        assert.equal((await items(v)).length, 1, 'one pending item per unordered pair');
        // counts include it
        assert.ok(ok(await s.api('GET', '/api/overview', { token: v.editor })).review.pending >= 1);
        // readers cannot see the queue
        err(await s.api('GET', `/api/review/${it.id}`, { token: v.reader }), 'FORBIDDEN', 403);
    });

    test('a contradicts link added by an agent queues an item (judge link)', async () => {
        const v = space();
        const a = await save(v.agent, { scenario: 'Quarterly revenue report', content: 'Group revenue by the fiscal quarter.' });
        const b = await save(v.agent, { scenario: 'Quarterly revenue report', content: 'Group revenue by the calendar quarter.' });
        const l = ok(await s.api('POST', `/api/knowledge/${a.id}/links`, { token: v.agent, body: { to: b.id, type: 'contradicts', reason: 'fiscal or calendar' } }));
        assert.match(l.review_id, /^prop-/);
        const it = (await items(v)).find((p) => p.id === l.review_id);
        assert.deepEqual([it.knowledge_id, it.write_path, it.conflict.judge, it.conflict.reason], [a.id, 'link', 'link', 'fiscal or calendar']);
        // a related link queues nothing
        const r = ok(await s.api('POST', `/api/knowledge/${a.id}/links`, { token: v.agent, body: { to: b.id, type: 'related' } }));
        assert.equal(r.review_id, undefined);
    });

    test('supersede keeps one side and retires the other from every read path; revert restores it', async () => {
        const v = space();
        const { a, b, c } = await pair(v, s, 'brotli');
        err(await decide(v, c.review_id, { decision: 'supersede' }), 'INVALID_REQUEST');
        err(await decide(v, c.review_id, { decision: 'supersede', keep: 'knowledge-00000000-00000000' }), 'INVALID_REQUEST');
        for (const d of ['approve', 'reject', 'edit', 'merge'])
            assert.equal(err(await decide(v, c.review_id, { decision: d, reason: 'x', document: 'x', into: a.id }), 'INVALID_REQUEST').key ?? 'invalid_decision', 'invalid_decision');
        const done = ok(await decide(v, c.review_id, { decision: 'supersede', keep: b.id, reason: 'never compress here' }));
        assert.deepEqual([done.state, done.decision, done.result_id, done.decided_by.startsWith('token:')], ['approved', 'supersede', b.id, true]);
        assert.deepEqual(done.sides.map((x) => [x.id, x.status]), [[b.id, 'active'], [a.id, 'merged']]);
        assert.ok((await links(v, a.id)).some(([f, t, ty]) => f === b.id && t === a.id && ty === 'supersedes'));
        const reads = await readPaths(s, v.reader, 'brotli');
        assert.deepEqual(Object.keys(reads).filter((k) => reads[k].includes(a.id)), [], 'the superseded side leaves every read path');
        assert.ok(reads['GET /api/knowledge/search'].includes(b.id));
        err(await s.api('GET', `/api/knowledge/${a.id}`, { token: v.reader }), 'NOT_FOUND');
        // again: already decided
        err(await decide(v, c.review_id, { decision: 'dismiss', reason: 'x' }), 'CONFLICT');
        ok(await s.api('POST', `/api/knowledge/${a.id}/revert`, { token: v.editor, body: {} }));
        assert.equal(ok(await s.api('GET', `/api/knowledge/${a.id}`, { token: v.reader })).status, 'active');
    });

    test('narrow rewrites a side as a reviewer write, version-checked, and removes the contradicts link', async () => {
        const v = space();
        const { a, b, c } = await pair(v, s, 'zstd');
        const docA = ok(await s.api('GET', `/api/review/${c.review_id}`, { token: v.editor })).sides[1].document;
        err(await decide(v, c.review_id, { decision: 'narrow' }), 'INVALID_REQUEST');
        err(await decide(v, c.review_id, { decision: 'narrow', documents: { 'knowledge-00000000-00000000': 'x' } }), 'INVALID_REQUEST');
        // a moves meanwhile: base_moved, and the item stays pending
        ok(await s.api('POST', '/api/knowledge/write', { token: v.editor, body: { category: 'experiences', path: a.path, content: docA.replace('JSON answers.', 'JSON answers (measured).') } }));
        const moved = err(await decide(v, c.review_id, { decision: 'narrow', documents: { [a.id]: docA } }), 'CONFLICT');
        assert.equal(moved.key, 'base_moved');
        assert.equal((await items(v)).find((p) => p.id === c.review_id)?.state, 'pending');
        // narrowing b only, which did not move
        const narrowed = docA.replace('Always enable zstd compression on the nginx proxy for JSON answers.', 'Never enable zstd compression for event streams.');
        const done = ok(await decide(v, c.review_id, { decision: 'narrow', documents: { [b.id]: narrowed.replace(/^---[\s\S]*?---\n/, '') } }));
        assert.deepEqual([done.state, done.decision, done.result_id], ['approved', 'narrow', b.id]);
        const nowB = ok(await s.api('GET', `/api/knowledge/${b.id}`, { token: v.reader }));
        assert.equal(nowB.version, 2);
        assert.match(nowB.content, /event streams/);
        assert.deepEqual((await links(v, a.id)).filter(([, , ty]) => ty === 'contradicts'), []);
    });

    test('dismiss removes the link; a side gone meanwhile is said so and the item can be dismissed', async () => {
        const v = space();
        const { a, b, c } = await pair(v, s, 'deflate');
        err(await decide(v, c.review_id, { decision: 'dismiss' }), 'INVALID_REQUEST');
        const done = ok(await decide(v, c.review_id, { decision: 'dismiss', reason: 'different proxies' }));
        assert.deepEqual([done.state, done.decision, done.decision_reason], ['rejected', 'dismiss', 'different proxies']);
        assert.deepEqual(await links(v, a.id), []);
        const hits = ok(await s.api('GET', '/api/knowledge/search?q=deflate+compression+nginx&top_k=5', { token: v.reader })).results;
        assert.ok(hits.every((h) => h.conflicts_with.length === 0));
        // a side deleted meanwhile
        const w = space();
        const p = await pair(w, s, 'lz4');
        ok(await s.api('DELETE', `/api/knowledge/${p.a.id}`, { token: w.editor }));
        const gone = err(await decide(w, p.c.review_id, { decision: 'supersede', keep: p.b.id }), 'CONFLICT');
        assert.equal(gone.key, 'side_gone');
        const full = ok(await s.api('GET', `/api/review/${p.c.review_id}`, { token: w.editor }));
        assert.equal(full.sides[1].status, 'deleted');
        ok(await decide(w, p.c.review_id, { decision: 'dismiss', reason: 'gone' }));
        void b;
    });

    test('of two reviewers deciding one item, one wins', async () => {
        const v = space();
        const { a, b, c } = await pair(v, s, 'snappy');
        const [r1, r2] = await Promise.all([
            decide(v, c.review_id, { decision: 'supersede', keep: a.id }),
            decide(v, c.review_id, { decision: 'supersede', keep: b.id }, v.admin),
        ]);
        const codes = [r1, r2].map((r) => r.json?.status === 'success' ? 'ok' : r.json?.error?.code).sort();
        assert.deepEqual(codes, ['CONFLICT', 'ok']);
    });
});

describe('the rule flag', () => {
    test('an experience against an always-apply rule is listed against_rule, and its item says so', async () => {
        const v = space();
        const rule = await save(v.admin, { category: 'rules', path: 'no-gzip.md', scenario: 'Serve JSON answers through the nginx proxy', content: 'Never enable gzip compression on the nginx proxy for JSON answers.' });
        // a rule that is not always applied is not what every agent is told: not judged
        const quiet = await save(v.admin, { category: 'rules', path: 'quiet-gzip.md', always_apply: false, scenario: 'Serve JSON answers through the nginx proxy', content: 'Never enable gzip compression on the nginx proxy for JSON answers, ever.' });
        const e = await save(v.agent, { ...GZIP, content: 'Always enable gzip compression on the nginx proxy for JSON answers.' });
        const c = e.conflicts.find((x) => x.id === rule.id);
        assert.ok(c, JSON.stringify(e.conflicts));
        assert.deepEqual([c.verdict, c.category, c.against_rule, c.link], ['contradiction', 'rules', true, 'contradicts']);
        assert.ok(!e.conflicts.some((x) => x.id === quiet.id), JSON.stringify(e.conflicts));
        const it = (await items(v)).find((p) => p.id === c.review_id);
        assert.equal(it.conflict.against_rule, true);
        assert.deepEqual(it.reasons, ['against_rule', c.reason]);
        // superseding a rule needs an admin
        assert.equal(err(await decide(v, it.id, { decision: 'supersede', keep: e.id }), 'FORBIDDEN', 403).key, 'rules_admin_only');
        ok(await decide(v, it.id, { decision: 'supersede', keep: rule.id }, v.admin));
    });
});

describe('the LLM verdict', () => {
    let llm, t;
    before(async () => {
        llm = await startFakeLlm();
        t = await startStack(llmEnv(llm, { KNOWHUB_LLM_TIMEOUT: '2' }));
    });
    after(async () => {
        await t?.stop();
        await llm?.stop();
    });

    test('its verdict is used (judge llm), at most 5 calls a write, in the ledger', async () => {
        const v = space(t);
        llm.reset();
        const a = await save(v.agent, { scenario: 'Nightly export of the orders table', content: 'Export the orders table at 02:00 with pg_dump.' }, t);
        llm.mode('conflict', 'ok', { verdict: 'contradiction', reason: 'One exports at night, the other forbids it.' });
        const b = await save(v.agent, { scenario: 'Nightly export of the orders table', content: 'Export the orders table at 02:00 with COPY.' }, t);
        const c = b.conflicts.find((x) => x.id === a.id);
        assert.deepEqual([c.verdict, c.judge, c.reason, c.link], ['contradiction', 'llm', 'One exports at night, the other forbids it.', 'contradicts']);
        assert.ok(callsOf(llm, 'conflict').length >= 1 && callsOf(llm, 'conflict').length <= 5);
        const it = (await items({ editor: v.editor }, t)).find((p) => p.id === c.review_id);
        assert.equal(it.conflict.judge, 'llm');
        const prompt = callsOf(llm, 'conflict')[0].messages.map((m) => m.content).join('\n');
        assert.match(prompt, /pg_dump/);
        assert.match(prompt, /COPY/);
        const ledger = sql(t, `SELECT count(*) AS n FROM llm_calls WHERE space = '${v.name}' AND purpose = 'conflict'`);
        assert.equal(Number(ledger[0].n), callsOf(llm, 'conflict').length);
    });

    test('an answer outside the four verdicts, garbage or a dead LLM: the local verdict, and the write succeeds', async () => {
        for (const [mode, opts] of [['ok', { verdict: 'maybe' }], ['hallucinate'], ['nonjson'], ['500']]) {
            const v = space(t);
            llm.reset();
            const a = await save(v.agent, { ...GZIP, content: 'Always enable gzip compression on the nginx proxy for JSON answers.' }, t);
            llm.mode('conflict', mode, opts);
            const b = await save(v.agent, { ...GZIP, content: 'Never enable gzip compression on the nginx proxy for JSON answers.' }, t);
            const c = b.conflicts.find((x) => x.id === a.id);
            assert.deepEqual([c?.verdict, c?.judge], ['contradiction', 'local'], `${mode}: ${JSON.stringify(b.conflicts)}`);
            // the client may retry a 5xx once; a failed call ends the LLM's turn for the write
            assert.ok(callsOf(llm, 'conflict').length <= 2, `${mode}: ${callsOf(llm, 'conflict').length} calls`);
        }
    });

    test('a slow LLM costs one timeout (the server\'s, at most 8 s) and the local verdict answers', async () => {
        const v = space(t);
        llm.reset();
        const a = await save(v.agent, { ...GZIP, content: 'Always enable gzip compression on the nginx proxy for JSON answers.' }, t);
        await save(v.agent, { ...GZIP, content: 'Prefer brotli for JSON answers on the nginx proxy; gzip as the fallback.' }, t);
        llm.mode('conflict', 'slow', { delayMs: 20000 });
        const t0 = Date.now();
        const b = await save(v.agent, { ...GZIP, content: 'Never enable gzip compression on the nginx proxy for JSON answers.' }, t);
        const ms = Date.now() - t0;
        assert.deepEqual([b.conflicts.find((x) => x.id === a.id)?.judge], ['local']);
        assert.ok(ms < 2 * 2000 + 1500, `${ms} ms: one timeout of 2 s (a retry at most), not one per candidate`);
        llm.reset();
    });

    test('KNOWHUB_CONFLICT_LLM_CALLS=1: one call a write, the rest local; =0: none, every verdict local', async () => {
        const v = space(t);
        const a = await save(v.agent, { ...GZIP, content: 'Always enable gzip compression on the nginx proxy for JSON answers.' }, t);
        const a2 = await save(v.agent, { ...GZIP, content: 'Always enable gzip compression on the nginx proxy for all JSON answers.' }, t);
        try {
            t.restartKnowhub({ KNOWHUB_CONFLICT_LLM_CALLS: '1' });
            llm.reset();
            llm.mode('conflict', 'ok', { verdict: 'contradiction', reason: 'The LLM says so.' });
            const b = await save(v.agent, { ...GZIP, content: 'Never enable gzip compression on the nginx proxy for JSON answers.' }, t);
            const judges = [a.id, a2.id].map((id) => b.conflicts.find((x) => x.id === id)?.judge).sort();
            assert.deepEqual(judges, ['llm', 'local'], JSON.stringify(b.conflicts));
            assert.equal(callsOf(llm, 'conflict').length, 1);
            t.restartKnowhub({ KNOWHUB_CONFLICT_LLM_CALLS: '0' });
            llm.reset();
            const c = await save(v.agent, { ...GZIP, content: 'Never ever enable gzip compression on the nginx proxy for JSON answers.' }, t);
            assert.deepEqual([c.conflicts.find((x) => x.id === a.id)?.judge], ['local']);
            assert.equal(callsOf(llm, 'conflict').length, 0);
        } finally {
            t.restartKnowhub({ KNOWHUB_CONFLICT_LLM_CALLS: '5' });
            llm.reset();
        }
    });
});
