// Evolve: PUT /api/knowledge/{id} with evolve_feedback has the LLM rewrite the
// content (a revertable revision "evolve"); batch_update items with feedback
// evolve too while their counter still counts. A failing LLM — or none —
// changes nothing but the stored feedback.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { startFakeLlm } from './lib/fakellm.mjs';
import { err, ok } from './lib/expect.mjs';
import { callsOf, feedbackRows, llmEnv, said, waitFor } from './lib/llmtest.mjs';

let llm, s, a;
before(async () => {
    llm = await startFakeLlm();
    s = await startStack(llmEnv(llm));
    a = s.token('default', 'agent', 'evolve-bot');
});
after(async () => {
    await s?.stop();
    await llm?.stop();
});

const api = (st) => ({
    create: async (body, token) => ok(await st.api('POST', '/api/knowledge', { token, body: { scenario: 'load a latin-1 csv', content: 'Use read_csv.', ...body } })),
    put: (id, body, token) => st.api('PUT', `/api/knowledge/${id}`, { token, body }),
    get: async (id, token) => ok(await st.api('GET', `/api/knowledge/${id}`, { token })),
    revisions: async (id, token) => ok(await st.api('GET', `/api/knowledge/${id}/revisions`, { token })).items,
    batch: async (list, token) => ok(await st.api('POST', '/api/knowledge/batch_update', { token, body: { feedback_list: list } })),
});
const k = api({ api: (...x) => s.api(...x) });
const evolved = (feedback) => `## Method\nEvolved after feedback: ${feedback}`;

describe('evolve with an LLM', () => {
    test('the content is rewritten as a new revision "evolve"; revert restores the old text', async () => {
        const e = await k.create({ tags: ['csv'] }, a);
        ok(await k.put(e.id, { add_harmful_case: { case_id: 'h1', scenario: 'a latin-1 export', result: 'UnicodeDecodeError' } }, a));
        const before = await k.get(e.id, a);
        llm.reset();
        const d = ok(await k.put(e.id, { evolve_feedback: 'Mention the encoding parameter.' }, a));
        assert.deepEqual(d.applied, { evolve_feedback: 'evolved' });
        assert.equal(d.content, evolved('Mention the encoding parameter.'));
        assert.equal(d.version, before.version + 1);
        assert.equal(d.scenario, before.scenario);
        assert.deepEqual(d.eval.harmful, before.eval.harmful);
        assert.deepEqual(d.tags, before.tags);

        // What the LLM was given.
        const [call] = callsOf(llm, 'evolve');
        assert.match(said(call, 'system'), /Rewrite the knowledge entry/);
        assert.match(said(call, 'system'), /at most 2000 characters/);
        assert.match(said(call, 'system'), /no secrets/);
        const user = said(call, 'user');
        assert.match(user, /Scenario: load a latin-1 csv/);
        assert.match(user, /Current content:\nUse read_csv\./);
        assert.match(user, /Cases where it was harmful:\n- a latin-1 export: UnicodeDecodeError/);
        assert.match(user, /Feedback:\nMention the encoding parameter\./);

        const revs = await k.revisions(e.id, a);
        assert.equal(revs[0].reason, 'evolve');
        assert.equal(revs[0].version, d.version);
        assert.equal(revs[0].document.content, d.content);
        assert.deepEqual(feedbackRows(s, e.id), [{ feedback: 'Mention the encoding parameter.', status: 'applied' }]);

        // The file view sees the new body with its front matter kept.
        const file = ok(await s.api('POST', '/api/knowledge/read', { token: a, body: { category: 'experiences', path: d.path } }));
        assert.match(file.content, /^---\n[\s\S]*title: [\s\S]*\n---\n/);
        assert.ok(file.content.endsWith(`${d.content}\n`) || file.content.endsWith(d.content), file.content);

        const back = ok(await s.api('POST', `/api/knowledge/${e.id}/revert`, { token: a, body: { version: before.version } }));
        assert.equal(back.content, 'Use read_csv.');
        assert.equal(back.version, d.version + 1);
        assert.equal((await k.revisions(e.id, a))[0].reason, 'revert');
    });

    test('evolve with cases and a score: all applied together', async () => {
        const e = await k.create({ score: 3 }, a);
        const d = ok(await k.put(e.id, { evolve_feedback: 'Add the chunksize tip.', add_helpful_case: { case_id: 'c1' }, update_score: 5 }, a));
        assert.deepEqual(d.applied, { evolve_feedback: 'evolved', add_helpful_case: 'added', update_score: 5 });
        assert.equal(d.content, evolved('Add the chunksize tip.'));
        assert.equal(d.eval.score, 5);
        assert.equal(d.eval.helpful, 1);
    });

    test('a fenced answer loses its fence', async () => {
        const e = await k.create({}, a);
        llm.mode('evolve', 'fenced');
        const d = ok(await k.put(e.id, { evolve_feedback: 'Fence me.' }, a));
        assert.equal(d.content, evolved('Fence me.'));
        llm.reset();
    });

    test("over the category's limit: one condensing retry, then LIMIT_EXCEEDED and nothing changed", async () => {
        const rule = await k.create({ category: 'rules', path: 'evolve-brief.md', content: 'Be brief.' }, s.admin);
        const before = await k.get(rule.id, s.admin);
        llm.reset();
        llm.mode('evolve', 'long', { length: 400 });
        const x = err(await k.put(rule.id, { evolve_feedback: 'Say more.' }, s.admin), 'LIMIT_EXCEEDED');
        assert.match(x.message, /350/);
        assert.match(x.message, /the feedback was stored \(#\d+\) and nothing else was changed/);
        const calls = callsOf(llm, 'evolve');
        assert.equal(calls.length, 2);
        assert.match(said(calls[0], 'system'), /at most 350 characters/);
        assert.deepEqual(calls[1].messages.map((m) => m.role), ['system', 'user', 'assistant', 'user']);
        assert.equal(calls[1].messages[2].content, 'x'.repeat(400));
        assert.match(calls[1].messages[3].content, /400 characters; the limit is 350\. Condense/);
        assert.deepEqual(await k.get(rule.id, s.admin), before);
        // An experience's limit is 2000: the same 400 characters pass at once.
        const e = await k.create({}, a);
        const d = ok(await k.put(e.id, { evolve_feedback: 'Say more.' }, a));
        assert.equal(d.content, 'x'.repeat(400));
        llm.reset();
    });

    for (const [mode, code] of [['401', 'LLM_AUTH_FAILED'], ['500', 'LLM_SERVICE_ERROR'], ['nonjson', 'LLM_UNKNOWN_ERROR'], ['empty', 'LLM_UNKNOWN_ERROR'], ['wrongshape', 'LLM_UNKNOWN_ERROR'], ['filter', 'LLM_CONTENT_FILTERED']]) {
        test(`the LLM failing (${mode}): ${code}, the feedback stored, nothing else changed`, async () => {
            const e = await k.create({ score: 4 }, a);
            ok(await k.put(e.id, { add_helpful_case: { case_id: 'pre' } }, a));
            const before = await k.get(e.id, a);
            const revs = await k.revisions(e.id, a);
            llm.reset();
            llm.mode('evolve', mode);
            const x = err(
                await k.put(e.id, { evolve_feedback: `feedback during ${mode}`, add_helpful_case: { case_id: 'with-evolve' }, add_harmful_case: { case_id: 'with-evolve' }, update_score: 1 }, a),
                code,
            );
            const m = /the feedback was stored \(#(\d+)\) and nothing else was changed/.exec(x.message);
            assert.ok(m, x.message);
            const now = await k.get(e.id, a);
            assert.deepEqual(now, before);
            assert.equal(now.content, 'Use read_csv.');
            assert.equal(now.eval.score, 4);
            assert.deepEqual([now.eval.helpful, now.eval.harmful], [1, 0]);
            assert.deepEqual(await k.revisions(e.id, a), revs);
            assert.deepEqual(feedbackRows(s, e.id), [{ feedback: `feedback during ${mode}`, status: 'failed' }]);
            assert.equal(Number(m[1]) > 0, true);
            llm.reset();
        });
    }

    test('a rule is rewritten for admins only (its front matter kept); agents get 403', async () => {
        const rule = await k.create({ category: 'rules', path: 'evolve-admin.md', content: 'Be brief.', description: 'short answers', always_apply: true }, s.admin);
        const before = await k.get(rule.id, s.admin);
        llm.reset();
        err(await k.put(rule.id, { evolve_feedback: 'agents may not rewrite rules', add_helpful_case: { case_id: 'r1' } }, a), 'FORBIDDEN', 403);
        assert.equal(llm.calls.length, 0);
        assert.deepEqual(await k.get(rule.id, s.admin), before);
        assert.deepEqual(feedbackRows(s, rule.id), []);
        // Counting on a rule stays open to agents; a batch item counts but does not evolve.
        const d = await k.batch([{ knowledge_id: rule.id, is_effective: false, feedback: 'too terse' }], a);
        assert.equal(d.results[0].status, 'success');
        assert.equal(d.results[0].counted, 'harmful');
        assert.equal(d.results[0].evolved, false);
        assert.equal(d.results[0].evolve_error.code, 'FORBIDDEN');
        assert.equal(llm.calls.length, 0);
        assert.equal((await k.get(rule.id, s.admin)).content, 'Be brief.');
        const g = ok(await k.put(rule.id, { evolve_feedback: 'Say when.' }, s.admin));
        assert.equal(g.content, evolved('Say when.'));
        assert.equal(g.description, 'short answers');
        assert.equal(g.always_apply, true);
        const file = ok(await s.api('POST', '/api/knowledge/read', { token: s.admin, body: { category: 'rules', path: 'evolve-admin.md' } }));
        assert.match(file.content, /^description: short answers$/m);
        assert.match(file.content, /^alwaysApply: true$/m);
        llm.reset();
    });

    test('the entry changing while the LLM writes: CONFLICT, the rewrite and the rest dropped', async () => {
        const e = await k.create({ score: 3 }, a);
        llm.reset();
        llm.mode('evolve', 'slow', { delayMs: 700 });
        const pending = k.put(e.id, { evolve_feedback: 'slow rewrite', add_helpful_case: { case_id: 'lost-race' } }, a);
        await waitFor(() => llm.calls.length === 1, 5000, 'the evolve call');
        const mid = ok(await k.put(e.id, { update_score: 5 }, a));
        const x = err(await pending, 'CONFLICT');
        assert.match(x.message, /changed while the LLM was rewriting it; nothing was changed/);
        const now = await k.get(e.id, a);
        assert.equal(now.content, 'Use read_csv.');
        assert.equal(now.version, mid.version);
        assert.equal(now.eval.score, 5);
        assert.equal(now.eval.helpful, 0);
        assert.deepEqual(feedbackRows(s, e.id).map((f) => f.feedback), ['slow rewrite']);
        llm.reset();
    });

    test('an unknown entry is NOT_FOUND and the LLM is not asked', async () => {
        llm.reset();
        err(await k.put('knowledge-20200101-00000000', { evolve_feedback: 'x' }, a), 'NOT_FOUND');
        assert.equal(llm.calls.length, 0);
    });
});

describe('batch feedback with an LLM', () => {
    test('items with feedback evolve their entry; the counter counts either way', async () => {
        const x = await k.create({ scenario: 'batch x' }, a);
        const y = await k.create({ scenario: 'batch y' }, a);
        const z = await k.create({ scenario: 'batch z' }, a);
        llm.reset();
        const d = await k.batch([
            { knowledge_id: x.id, is_effective: true, feedback: 'worked, add the sep tip' },
            { knowledge_id: y.id, is_effective: false, feedback: 'failed on gzip files' },
            { knowledge_id: z.id, is_effective: true },
            { knowledge_id: z.id, is_effective: true, feedback: '' },
            { knowledge_id: 'knowledge-20200101-00000000', is_effective: true, feedback: 'lost' },
        ], a);
        assert.equal(d.succeeded, 4);
        assert.deepEqual(d.results.map((r) => r.status), ['success', 'success', 'success', 'success', 'error']);
        assert.equal(d.results[0].evolved, true);
        assert.equal(d.results[0].counted, 'helpful');
        assert.equal(d.results[0].feedback, 'stored');
        assert.equal(d.results[1].evolved, true);
        assert.equal(d.results[1].counted, 'harmful');
        for (const i of [2, 3]) {
            assert.ok(!('evolved' in d.results[i]) && !('evolve_error' in d.results[i]), JSON.stringify(d.results[i]));
        }
        assert.equal(d.results[4].error.code, 'NOT_FOUND');
        assert.equal(callsOf(llm, 'evolve').length, 2, 'no call without feedback or for an unknown entry');

        const gx = await k.get(x.id, a);
        assert.equal(gx.content, evolved('worked, add the sep tip'));
        assert.equal(gx.eval.helpful, 1);
        assert.equal((await k.revisions(x.id, a))[0].reason, 'evolve');
        const gy = await k.get(y.id, a);
        assert.equal(gy.content, evolved('failed on gzip files'));
        assert.equal(gy.eval.harmful, 1);
        assert.equal((await k.get(z.id, a)).eval.helpful, 2);
        assert.deepEqual(feedbackRows(s, x.id), [{ feedback: 'worked, add the sep tip', status: 'applied' }]);
        // The harmful case was counted before the rewrite: the LLM saw it.
        assert.match(said(callsOf(llm, 'evolve')[1], 'user'), /Feedback:\nfailed on gzip files/);
    });

    test('the LLM failing: evolved false with evolve_error, the counter still counts, the text stays', async () => {
        const x = await k.create({ scenario: 'batch fail x' }, a);
        const before = await k.get(x.id, a);
        llm.reset();
        llm.mode('evolve', '500');
        const d = await k.batch([
            { knowledge_id: x.id, is_effective: false, feedback: 'wrong for parquet', case_id: 'bf1' },
            { knowledge_id: x.id, is_effective: true },
        ], a);
        assert.equal(d.succeeded, 2);
        const r = d.results[0];
        assert.equal(r.status, 'success');
        assert.equal(r.counted, 'harmful');
        assert.equal(r.added, true);
        assert.equal(r.feedback, 'stored');
        assert.equal(r.evolved, false);
        assert.equal(r.evolve_error.code, 'LLM_SERVICE_ERROR');
        assert.equal(typeof r.evolve_error.message, 'string');
        assert.equal(callsOf(llm, 'evolve').length, 2, 'one retry');
        const now = await k.get(x.id, a);
        assert.equal(now.content, before.content);
        assert.equal(now.version, before.version);
        assert.deepEqual([now.eval.helpful, now.eval.harmful], [1, 1]);
        assert.deepEqual(now.eval.harmful_history.map((c) => c.case_id), ['bf1']);
        assert.equal((await k.revisions(x.id, a)).length, 1);
        assert.deepEqual(feedbackRows(s, x.id), [{ feedback: 'wrong for parquet', status: 'failed' }]);
        llm.reset();
    });
});

describe('evolve without an LLM', () => {
    let n, b, kn;
    before(async () => {
        n = await startStack();
        b = n.token('default', 'agent', 'no-llm-bot');
        kn = api(n);
    });
    after(async () => {
        await n?.stop();
    });

    test('PUT: LLM_NOT_CONFIGURED, the feedback stored (pending), nothing else changed', async () => {
        const e = await kn.create({ score: 2 }, b);
        const before = await kn.get(e.id, b);
        const x = err(await kn.put(e.id, { evolve_feedback: 'keep me for later', update_score: 5, add_helpful_case: { case_id: 'c' } }, b), 'LLM_NOT_CONFIGURED');
        assert.equal(x.retry, false);
        assert.match(x.message, /the feedback was stored \(#\d+\) and nothing else was changed/);
        assert.deepEqual(await kn.get(e.id, b), before);
        assert.deepEqual(feedbackRows(n, e.id), [{ feedback: 'keep me for later', status: 'pending' }]);
    });

    test('batch: the feedback stored, the counter counted, no evolve attempted', async () => {
        const e = await kn.create({}, b);
        const d = await kn.batch([{ knowledge_id: e.id, is_effective: true, feedback: 'nice' }], b);
        const r = d.results[0];
        assert.equal(r.status, 'success');
        assert.equal(r.feedback, 'stored');
        assert.ok(!('evolved' in r) && !('evolve_error' in r), JSON.stringify(r));
        const g = await kn.get(e.id, b);
        assert.equal(g.eval.helpful, 1);
        assert.equal(g.content, 'Use read_csv.');
        assert.deepEqual(feedbackRows(n, e.id), [{ feedback: 'nice', status: 'pending' }]);
    });
});
