// review_llm: issue 24's llm_writes policy. An LLM's rewrite (evolve, by PUT
// and by batch_update) and an LLM's distillation are held as proposals
// whoever asked; an approval applies the rewrite. The write paths that
// cannot be held yet (rename, revert, slim, import) are refused with
// review_required while the policy would hold them, never done unreviewed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { startFakeLlm } from './lib/fakellm.mjs';
import { errKey, ok } from './lib/expect.mjs';
import { experienceContext, llmEnv } from './lib/llmtest.mjs';

let llm, s;
before(async () => {
    llm = await startFakeLlm();
    s = await startStack(llmEnv(llm));
});
after(async () => {
    await s?.stop();
    await llm?.stop();
});

let n = 0;
function space(policy) {
    const name = `reviewllm${++n}`;
    const v = { name, admin: s.token(name, 'admin', 'admin'), editor: s.token(name, 'editor', 'editor'), agent: s.token(name, 'agent', 'agent') };
    return v;
}
const setPolicy = async (v, policy) => ok(await s.api('PUT', '/api/review/policy', { token: v.admin, body: { policy } }));
const get = async (v, id) => ok(await s.api('GET', `/api/knowledge/${id}`, { token: v.editor }));

describe('llm_writes', () => {
    test('an evolve rewrite is a proposal; the case still counts; approval applies the rewrite', async () => {
        const v = space();
        const e = ok(await s.api('POST', '/api/knowledge', { token: v.agent, body: { scenario: 'load a latin-1 csv', content: 'Use read_csv.' } }));
        await setPolicy(v, 'llm_writes');
        // an agent's own write is not an LLM's: done at once
        assert.match(ok(await s.api('POST', '/api/knowledge', { token: v.agent, body: { scenario: 'another', content: 'written by the agent' } })).id, /^knowledge-/);
        const d = ok(await s.api('PUT', `/api/knowledge/${e.id}`, { token: v.editor, body: { evolve_feedback: 'Mention the encoding.', add_helpful_case: { case_id: 'c1' } } }));
        assert.equal(d.applied.evolve_feedback, 'pending');
        assert.equal(d.applied.add_helpful_case, 'added');
        assert.match(d.applied.proposal_id, /^prop-/);
        assert.equal(d.content, 'Use read_csv.');
        assert.equal(d.version, e.version);
        const p = ok(await s.api('GET', `/api/review/${d.applied.proposal_id}`, { token: v.editor }));
        assert.deepEqual([p.kind, p.write_path, p.knowledge_id, p.base_version, p.provenance.source], ['update', 'evolve', e.id, e.version, 'llm']);
        assert.match(p.document, /Evolved after feedback: Mention the encoding\./);
        assert.match(p.base_document, /Use read_csv\./);
        // batch_update's evolve is held the same way
        const b = ok(await s.api('POST', '/api/knowledge/batch_update', { token: v.agent, body: { feedback_list: [{ knowledge_id: e.id, is_effective: false, feedback: 'Say latin-1.' }] } }));
        assert.equal(b.results[0].evolved, false);
        assert.match(b.results[0].proposal_id, /^prop-/);
        assert.equal((await get(v, e.id)).content, 'Use read_csv.');
        // approving the first applies its rewrite, by the reviewer
        const a = ok(await s.api('POST', `/api/review/${d.applied.proposal_id}/decide`, { token: v.editor, body: { decision: 'approve' } }));
        assert.equal(a.result_id, e.id);
        assert.match((await get(v, e.id)).content, /Evolved after feedback: Mention the encoding\./);
        // the second was made against the version the first replaced
        errKey(await s.api('POST', `/api/review/${b.results[0].proposal_id}/decide`, { token: v.editor, body: { decision: 'approve' } }), 'CONFLICT', 'base_moved', { version: e.version + 1 });
    });

    test('a distilled experience is a proposal, approved into its path', async () => {
        const v = space();
        await setPolicy(v, 'llm_writes');
        const d = ok(await s.api('POST', '/api/knowledge/distill-experience', { token: v.agent, body: { experience_context: experienceContext() } }));
        assert.deepEqual([d.status, d.kind, d.category], ['pending', 'create', 'experiences']);
        assert.equal(ok(await s.api('POST', '/api/knowledge/list', { token: v.editor, body: { category: 'experiences' } })).items.length, 0);
        const a = ok(await s.api('POST', `/api/review/${d.proposal_id}/decide`, { token: v.editor, body: { decision: 'approve' } }));
        const read = ok(await s.api('POST', '/api/knowledge/read', { token: v.editor, body: { category: 'experiences', path: d.path } }));
        assert.equal(read.id, a.result_id);
    });

    test('slim is refused while LLM writes are held', async () => {
        const v = space();
        await setPolicy(v, 'llm_writes');
        errKey(await s.api('POST', '/api/knowledge/slim', { token: v.admin, body: {} }), 'FORBIDDEN', 'review_required', { write_path: 'slim' }, 403);
        assert.equal(ok(await s.api('POST', '/api/knowledge/slim', { token: v.admin, body: { dry_run: true } })).dry_run, true);
    });
});

describe('rename, revert and import are held, never done unreviewed', () => {
    test('agent_writes: an agent\'s rename and revert; all: an admin\'s import', async () => {
        const v = space();
        const w = ok(await s.api('POST', '/api/knowledge/write', { token: v.editor, body: { category: 'experiences', path: 'a.md', content: 'one' } }));
        ok(await s.api('POST', '/api/knowledge/write', { token: v.editor, body: { category: 'experiences', path: 'a.md', content: 'two' } }));
        await setPolicy(v, 'agent_writes');
        const rn = ok(await s.api('POST', '/api/knowledge/rename', { token: v.agent, body: { category: 'experiences', path: 'a.md', new_path: 'b.md' } }));
        assert.deepEqual([rn.status, rn.kind, rn.path], ['pending', 'rename', 'b.md']);
        const rv = ok(await s.api('POST', `/api/knowledge/${w.id}/revert`, { token: v.agent, body: { version: 1 } }));
        assert.deepEqual([rv.status, rv.kind, rv.path], ['pending', 'update', 'a.md']);
        // an editor is not held by agent_writes
        ok(await s.api('POST', '/api/knowledge/rename', { token: v.editor, body: { category: 'experiences', path: 'a.md', new_path: 'b.md' } }));
        await setPolicy(v, 'all');
        const r = ok(await s.api('POST', '/api/knowledge/import?format=agents_md', { token: v.admin, rawBody: '## A rule\n\nimported\n', headers: { 'Content-Type': 'text/markdown' } }));
        assert.deepEqual([r.held, r.imported], [1, 0]);
        const read = ok(await s.api('POST', '/api/knowledge/read', { token: v.editor, body: { category: 'experiences', path: 'b.md' } }));
        assert.match(read.content, /two/);
        assert.equal(ok(await s.api('POST', '/api/knowledge/list', { token: v.editor, body: { category: 'rules' } })).items.length, 0);
    });
});
