// review_llm: issue 24's llm_writes policy. An LLM's rewrite (evolve, by PUT
// and by batch_update), an LLM's distillation and slim's merges are held as
// proposals whoever asked; an approval applies the rewrite, or the merge
// with its members. Renames, reverts and imports are held too, never done
// unreviewed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { roleTokens } from './lib/reads.mjs';
import { startStack } from './lib/stack.mjs';
import { startFakeLlm } from './lib/fakellm.mjs';
import { errKey, ok } from './lib/expect.mjs';
import { experienceContext, llmEnv, waitJob } from './lib/llmtest.mjs';

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
const space = () => roleTokens(s, `reviewllm${++n}`);
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

    test("slim's merges are held: one slim_merge proposal a group, applied with its members on approval", async () => {
        const v = space();
        const scenario = 'Load a very large CSV file with pandas by reading it in chunks with the right encoding';
        const text = 'Use read_csv with chunksize and encoding utf-8, then concatenate the chunks afterwards.';
        const mk = async (body) => ok(await s.api('POST', '/api/knowledge', { token: v.agent, body })).id;
        const a1 = await mk({ scenario, content: text, score: 5 });
        const a2 = await mk({ scenario, content: `${text} Quickly.`, score: 2 });
        const loner = await mk({ scenario: 'Configure nginx fastcgi buffers for large uploads', content: 'Raise fastcgi_buffers.' });
        await setPolicy(v, 'llm_writes');
        const before = await get(v, a1);
        const started = ok(await s.api('POST', '/api/knowledge/slim', { token: v.admin, body: {} }));
        assert.equal(started.params.hold, true);
        const job = await waitJob(s, v.admin, started.id);
        assert.equal(job.status, 'done');
        assert.deepEqual([job.result.merged_groups, job.result.failed_groups], [[], []]);
        assert.equal(job.result.held_groups.length, 1);
        const held = job.result.held_groups[0];
        assert.deepEqual([held.status, held.kind, held.group.survivor.id], ['pending', 'slim_merge', a1]);
        // nothing merged yet: both live, unchanged
        assert.equal((await get(v, a1)).version, before.version);
        assert.equal((await get(v, a2)).content, `${text} Quickly.`);
        const p = ok(await s.api('GET', `/api/review/${held.proposal_id}`, { token: v.editor }));
        assert.deepEqual([p.kind, p.write_path, p.knowledge_id, p.base_version, p.provenance.source], ['slim_merge', 'slim', a1, before.version, 'slim']);
        assert.deepEqual(p.members.map((m) => [m.id, m.status, m.base_version === m.version]), [[a2, 'active', true]]);
        assert.match(p.document, /Merged: one entry that keeps every method\./);
        assert.match(p.base_document, /Use read_csv with chunksize/);
        // a second run proposes nothing new for the same entries
        const again = await waitJob(s, v.admin, ok(await s.api('POST', '/api/knowledge/slim', { token: v.admin, body: {} })).id);
        assert.deepEqual(again.result.held_groups, []);
        assert.equal(again.result.failed_groups[0].error.code, 'CONFLICT');
        assert.equal(again.result.failed_groups[0].error.proposal_id, held.proposal_id);
        assert.equal(ok(await s.api('GET', '/api/review?state=pending', { token: v.editor })).total, 1);
        // it merges into its own survivor only
        errKey(await s.api('POST', `/api/review/${held.proposal_id}/decide`, { token: v.editor, body: { decision: 'merge', into: loner, document: 'x' } }), 'INVALID_REQUEST', 'invalid_decision', { field: 'decision' });
        const a = ok(await s.api('POST', `/api/review/${held.proposal_id}/decide`, { token: v.editor, body: { decision: 'approve' } }));
        assert.deepEqual([a.state, a.result_id, a.members[0].status], ['approved', a1, 'merged']);
        const merged = await get(v, a1);
        assert.equal(merged.content, 'Merged: one entry that keeps every method.');
        const revs = ok(await s.api('GET', `/api/knowledge/${a1}/revisions`, { token: v.editor })).items;
        assert.equal(revs[0].reason, 'merge');
        assert.match(revs[0].actor, /:editor$/);
        errKey(await s.api('GET', `/api/knowledge/${a2}`, { token: v.editor }), 'NOT_FOUND', 'not_found');
    });

    test('a held slim merge whose member changed is not applied; rejected, nothing moves', async () => {
        const v = space();
        const scenario = 'Plot a monthly revenue trend line chart with matplotlib using a datetime index';
        const text = 'Resample the dataframe by month, then plot it as a line chart and label both axes.';
        const b1 = ok(await s.api('POST', '/api/knowledge', { token: v.agent, body: { scenario, content: text, score: 5 } })).id;
        const b2 = ok(await s.api('POST', '/api/knowledge', { token: v.agent, body: { scenario, content: `${text} Done.` } })).id;
        // all: every write of a token is held, the admin's slim too
        await setPolicy(v, 'all');
        const job = await waitJob(s, v.admin, ok(await s.api('POST', '/api/knowledge/slim', { token: v.admin, body: {} })).id);
        const id = job.result.held_groups[0].proposal_id;
        // the member is edited meanwhile (the CLI-free way: the policy off for a moment)
        await setPolicy(v, 'off');
        const b2path = (await get(v, b2)).path;
        ok(await s.api('POST', '/api/knowledge/write', { token: v.editor, body: { category: 'experiences', path: b2path, content: `${text} Edited.` } }));
        const survivor = await get(v, b1);
        errKey(await s.api('POST', `/api/review/${id}/decide`, { token: v.editor, body: { decision: 'approve' } }), 'CONFLICT', 'member_moved', { id: b2 });
        assert.deepEqual(await get(v, b1), survivor);
        assert.equal((await get(v, b2)).content, `${text} Edited.`);
        const r = ok(await s.api('POST', `/api/review/${id}/decide`, { token: v.editor, body: { decision: 'reject', reason: 'stale' } }));
        assert.equal(r.state, 'rejected');
        assert.equal((await get(v, b2)).status ?? 'active', 'active');
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
