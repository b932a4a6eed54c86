// review: issue 24's review queue. With a space's review policy on, an
// agent's write becomes a proposal: absent from every read route and MCP
// tool for every caller, in the queue for editors and admins; an approval
// is a real write by the reviewer, then it is everywhere; a rejected one
// never was; two decisions of one proposal: exactly one wins. Policy off
// (the default): writes as before.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BIN, run, startStack, tokenId } from './lib/stack.mjs';
import { err, errKey, ok } from './lib/expect.mjs';
import { answersOf, roleTokens } from './lib/reads.mjs';

let s;
before(async () => {
    s = await startStack();
});
after(async () => {
    await s?.stop();
});

let spaces = 0;
/** A fresh space with an admin, an editor, an agent and a reader. */
function space() {
    const name = `review${++spaces}`;
    return roleTokens(s, name);
}
const setPolicy = async (v, policy) =>
    ok(await s.api('PUT', '/api/review/policy', { token: v.admin, body: { policy } }));
const save = (v, word, token = v.agent) =>
    s.api('POST', '/api/knowledge', {
        token,
        body: { scenario: `when deploying ${word}`, content: `restart the ${word} workers first`, tags_type: ['strategy'], agent_id: 'bot-7' },
    });
const fileWrite = (v, token, category, path, content, extra = {}) =>
    s.api('POST', '/api/knowledge/write', { token, body: { category, path, content, ...extra } });
const decide = (v, id, body, token = v.editor) => s.api('POST', `/api/review/${id}/decide`, { token, body });
const mcp = (token, name, args) =>
    s.api('POST', '/mcp', {
        token,
        body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
        headers: { Accept: 'application/json, text/event-stream' },
    });

/** Every read of the knowledge a reader has, each route and MCP tool by
 * name: {name: answer text}. */
async function everyRead(token, word) {
    const reads = {
        'GET /api/knowledge': s.api('GET', '/api/knowledge?limit=100', { token }),
        'POST /api/knowledge/list': s.api('POST', '/api/knowledge/list', { token, body: { category: 'experiences' } }),
        'GET /api/knowledge/search': s.api('GET', `/api/knowledge/search?q=${word}`, { token }),
        'POST /api/knowledge/search': s.api('POST', '/api/knowledge/search', { token, body: { query: word } }),
        'POST /api/knowledge/context': s.api('POST', '/api/knowledge/context', { token, body: { question: `deploying ${word}` } }),
        'GET /api/knowledge/rules': s.api('GET', '/api/knowledge/rules', { token }),
        'GET /api/knowledge/export': s.api('GET', '/api/knowledge/export', { token }),
        'POST /api/knowledge/trash': s.api('POST', '/api/knowledge/trash', { token, body: {} }),
        'GET /api/overview': s.api('GET', '/api/overview', { token }),
        'mcp knowledge_search': mcp(token, 'knowledge_search', { query: word }),
        'mcp knowledge_list': mcp(token, 'knowledge_list', { limit: 100 }),
        'mcp knowledge_context': mcp(token, 'knowledge_context', { question: `deploying ${word}` }),
        'mcp knowledge_rules': mcp(token, 'knowledge_rules', {}),
    };
    return answersOf(reads);
}
const holding = (reads, word) => Object.keys(reads).filter((k) => reads[k].includes(word));

describe('the policy', () => {
    test('off by default: an agent writes at once, the answer as before', async () => {
        const v = space();
        assert.deepEqual(ok(await s.api('GET', '/api/review/policy', { token: v.editor })), {
            policy: 'off',
            policies: ['off', 'agent_writes', 'llm_writes', 'all'],
            promote_after: 3,
        });
        const d = ok(await save(v, 'zephyrine'));
        assert.match(d.id, /^knowledge-/);
        assert.equal(d.status, 'active');
        assert.equal(ok(await s.api('GET', '/api/review', { token: v.editor })).total, 0);
    });

    test('set by admins only, one of four', async () => {
        const v = space();
        err(await s.api('PUT', '/api/review/policy', { token: v.editor, body: { policy: 'all' } }), 'FORBIDDEN', 403);
        errKey(await s.api('PUT', '/api/review/policy', { token: v.admin, body: { policy: 'some' } }), 'INVALID_REQUEST', 'invalid_review_policy', { field: 'policy' });
        assert.equal((await setPolicy(v, 'agent_writes')).policy, 'agent_writes');
        assert.equal(ok(await s.api('GET', '/api/review/policy', { token: v.admin })).policy, 'agent_writes');
        err(await s.api('GET', '/api/review/policy', { token: v.agent }), 'FORBIDDEN', 403);
    });
});

describe('agent_writes', () => {
    test('pending is absent from every read, in the queue for editors; approved it is everywhere', async () => {
        const v = space();
        await setPolicy(v, 'agent_writes');
        const word = 'quillfeather';
        const held = ok(await save(v, word));
        assert.equal(held.status, 'pending');
        assert.match(held.proposal_id, /^prop-/);
        assert.deepEqual({ kind: held.kind, category: held.category }, { kind: 'create', category: 'experiences' });
        for (const token of [v.reader, v.agent, v.editor, v.admin])
            assert.deepEqual(holding(await everyRead(token, word), word), [], 'a pending proposal was served');
        // the queue: editors and admins, never readers or agents
        for (const token of [v.reader, v.agent]) err(await s.api('GET', '/api/review', { token }), 'FORBIDDEN', 403);
        const q = ok(await s.api('GET', '/api/review?state=pending', { token: v.editor }));
        assert.equal(q.total, 1);
        const item = q.items[0];
        assert.equal(item.id, held.proposal_id);
        assert.equal(item.state, 'pending');
        assert.equal(item.write_path, 'entry');
        assert.deepEqual(item.provenance, { token_id: tokenId(v.agent), actor: `token:${tokenId(v.agent)}:agent`, agent_id: 'bot-7', trace_id: '', source: 'agent' });
        const full = ok(await s.api('GET', `/api/review/${held.proposal_id}`, { token: v.admin }));
        assert.match(full.document, new RegExp(`restart the ${word} workers first`));
        assert.equal(full.base_document, null);
        // approved by the editor: a real write, the editor its actor
        const d = ok(await decide(v, held.proposal_id, { decision: 'approve' }));
        assert.equal(d.state, 'approved');
        assert.equal(d.decided_by, `token:${tokenId(v.editor)}:editor`);
        assert.match(d.result_id, /^knowledge-/);
        const revs = ok(await s.api('GET', `/api/knowledge/${d.result_id}/revisions`, { token: v.reader }));
        assert.equal(revs.items[0].actor, `token:${tokenId(v.editor)}:editor`);
        const reads = await everyRead(v.reader, word);
        for (const name of ['GET /api/knowledge', 'POST /api/knowledge/list', 'GET /api/knowledge/search', 'POST /api/knowledge/search', 'POST /api/knowledge/context', 'GET /api/knowledge/export', 'mcp knowledge_search', 'mcp knowledge_list', 'mcp knowledge_context'])
            assert.ok(reads[name].includes(word), `${name} does not serve the approved entry`);
        // decided once: the second decision is a CONFLICT
        errKey(await decide(v, held.proposal_id, { decision: 'reject', reason: 'late' }), 'CONFLICT', 'already_decided', { id: held.proposal_id });
        assert.equal(ok(await s.api('GET', '/api/review?state=pending', { token: v.editor })).total, 0);
    });

    test('an Idempotency-Key\'s retry of a held save gets the same proposal, never a second', async () => {
        const v = space();
        await setPolicy(v, 'agent_writes');
        const body = { scenario: 'when retrying keyedword', content: 'the same proposal' };
        const send = () => s.api('POST', '/api/knowledge', { token: v.agent, body, headers: { 'Idempotency-Key': 'held-key-1' } });
        const first = ok(await send());
        assert.equal(first.status, 'pending');
        const rs = await Promise.all([send(), send(), send()]);
        for (const r of rs) {
            const again = ok(r);
            assert.deepEqual([again.proposal_id, again.replayed, again.state], [first.proposal_id, true, 'pending']);
        }
        assert.equal(ok(await s.api('GET', '/api/review', { token: v.editor })).total, 1);
        // at the same time, a new key: one proposal, the others replay it
        const race = await Promise.all([1, 2, 3, 4].map(() => s.api('POST', '/api/knowledge', { token: v.agent, body, headers: { 'Idempotency-Key': 'held-key-2' } })));
        assert.equal(new Set(race.map((r) => ok(r).proposal_id)).size, 1, race.map((r) => r.text).join('\n'));
        assert.equal(ok(await s.api('GET', '/api/review', { token: v.editor })).total, 2);
        ok(await decide(v, first.proposal_id, { decision: 'approve' }));
        assert.equal(ok(await send()).state, 'approved');
        errKey(await s.api('POST', '/api/knowledge', { token: v.agent, body: { ...body, content: 'another' }, headers: { 'Idempotency-Key': 'held-key-1' } }), 'CONFLICT', 'idempotency_key_reused');
    });

    test('a rejected proposal never was; a rejection needs a reason', async () => {
        const v = space();
        await setPolicy(v, 'agent_writes');
        const word = 'gravelwick';
        const held = ok(await save(v, word));
        errKey(await decide(v, held.proposal_id, { decision: 'reject' }), 'INVALID_REQUEST', 'reason_required', { field: 'reason' });
        const d = ok(await decide(v, held.proposal_id, { decision: 'reject', reason: 'not true' }));
        assert.deepEqual([d.state, d.decision, d.decision_reason, d.result_id], ['rejected', 'reject', 'not true', null]);
        assert.deepEqual(holding(await everyRead(v.admin, word), word), []);
        assert.equal(ok(await s.api('GET', '/api/review?state=rejected', { token: v.editor })).total, 1);
    });

    test('the counts: /api/overview and /api/health of the space, /metrics of every space', async () => {
        const v = space();
        await setPolicy(v, 'agent_writes');
        const gauge = async () => Number(/^knowhub_review_pending (\d+)$/m.exec((await s.api('GET', '/metrics')).text)[1]);
        const before = await gauge();
        assert.deepEqual(ok(await s.api('GET', '/api/overview', { token: v.reader })).review, { pending: 0, quarantined: 0 });
        const a = ok(await save(v, 'countwordone'));
        ok(await save(v, 'countwordtwo'));
        assert.deepEqual(ok(await s.api('GET', '/api/overview', { token: v.reader })).review, { pending: 2, quarantined: 0 });
        assert.equal(await gauge(), before + 2);
        // /api/health: the space's summary with a token, its queue for editors; public without
        assert.deepEqual(ok(await s.api('GET', '/api/health', { token: v.editor })).space, { name: v.name, role: 'editor', review: { pending: 2, quarantined: 0 } });
        assert.deepEqual(ok(await s.api('GET', '/api/health', { token: v.reader })).space, { name: v.name, role: 'reader' });
        assert.equal(ok(await s.api('GET', '/api/health', { token: 'kh_not_a_token' })).space, undefined);
        assert.equal(ok(await s.api('GET', '/api/health')).space, undefined);
        ok(await decide(v, a.proposal_id, { decision: 'reject', reason: 'no' }));
        assert.deepEqual(ok(await s.api('GET', '/api/overview', { token: v.reader })).review, { pending: 1, quarantined: 0 });
        assert.equal(await gauge(), before + 1);
    });

    test('editors and admins write at once; an agent\'s file write, update and delete are held', async () => {
        const v = space();
        await setPolicy(v, 'agent_writes');
        const w = ok(await fileWrite(v, v.editor, 'experiences', 'ops/disk.md', 'Disk fills: rotate the logs.'));
        assert.equal(w.created, true);
        const u = ok(await fileWrite(v, v.agent, 'experiences', 'ops/disk.md', 'Disk fills: rotate the logs, then vacuum.'));
        assert.deepEqual([u.status, u.kind, u.path], ['pending', 'update', 'ops/disk.md']);
        const p = ok(await s.api('GET', `/api/review/${u.proposal_id}`, { token: v.editor }));
        assert.equal(p.knowledge_id, w.id);
        assert.equal(p.base_version, w.version);
        assert.match(p.base_document, /rotate the logs\.\n?$/);
        assert.match(p.document, /then vacuum/);
        const live = ok(await s.api('POST', '/api/knowledge/read', { token: v.reader, body: { category: 'experiences', path: 'ops/disk.md' } }));
        assert.ok(!live.content.includes('vacuum'));
        // the live entry moved meanwhile: approve is a CONFLICT, edit re-bases
        ok(await fileWrite(v, v.editor, 'experiences', 'ops/disk.md', 'Disk fills: rotate the logs daily.'));
        const e = errKey(await decide(v, u.proposal_id, { decision: 'approve' }), 'CONFLICT', 'base_moved', { version: w.version + 1 });
        assert.match(e.message, /edit/);
        assert.equal(ok(await s.api('GET', `/api/review/${u.proposal_id}`, { token: v.editor })).state, 'pending');
        const d = ok(await decide(v, u.proposal_id, { decision: 'edit', document: 'Disk fills: rotate the logs daily, then vacuum.' }));
        assert.deepEqual([d.state, d.decision, d.result_id], ['approved', 'edit', w.id]);
        const now = ok(await s.api('POST', '/api/knowledge/read', { token: v.reader, body: { category: 'experiences', path: 'ops/disk.md' } }));
        assert.match(now.content, /daily, then vacuum/);
        // a delete is held too, and done on approval
        const del = ok(await s.api('POST', '/api/knowledge/delete', { token: v.agent, body: { category: 'experiences', path: 'ops/disk.md' } }));
        assert.deepEqual([del.status, del.kind], ['pending', 'delete']);
        ok(await s.api('POST', '/api/knowledge/read', { token: v.reader, body: { category: 'experiences', path: 'ops/disk.md' } }));
        const gone = ok(await s.api('DELETE', `/api/knowledge/${w.id}`, { token: v.agent }));
        assert.equal(gone.status, 'pending');
        // an edit of a delete keeps the entry, with the reviewer's document
        const kept = ok(await s.api('POST', '/api/knowledge/delete', { token: v.agent, body: { category: 'experiences', path: 'ops/disk.md' } }));
        ok(await decide(v, kept.proposal_id, { decision: 'edit', document: 'Disk fills: rotate the logs daily (kept).' }));
        assert.match(ok(await s.api('POST', '/api/knowledge/read', { token: v.reader, body: { category: 'experiences', path: 'ops/disk.md' } })).content, /\(kept\)/);
        // the first delete was made against an older version: re-based by an edit only
        errKey(await decide(v, del.proposal_id, { decision: 'approve' }), 'CONFLICT', 'base_moved', { version: w.version + 3 });
        ok(await decide(v, gone.proposal_id, { decision: 'reject', reason: 'kept on purpose' }));
        const last = ok(await s.api('POST', '/api/knowledge/delete', { token: v.agent, body: { category: 'experiences', path: 'ops/disk.md' } }));
        ok(await decide(v, last.proposal_id, { decision: 'approve' }));
        err(await s.api('POST', '/api/knowledge/read', { token: v.reader, body: { category: 'experiences', path: 'ops/disk.md' } }), 'TABLE_NOT_FOUND');
        // a change of the entry now deleted: nothing to write into, it stays pending
        errKey(await decide(v, del.proposal_id, { decision: 'edit', document: 'x' }), 'NOT_FOUND', 'not_found');
        assert.equal(ok(await s.api('GET', `/api/review/${del.proposal_id}`, { token: v.editor })).state, 'pending');
    });

    test('a pending file is not there by its path either: REST read, MCP knowledge_read, resources', async () => {
        const v = space();
        await setPolicy(v, 'agent_writes');
        const held = ok(await fileWrite(v, v.agent, 'experiences', 'ops/pendingfile.md', 'Held: rotate the pendingword logs.'));
        assert.equal(held.status, 'pending');
        for (const token of [v.reader, v.editor]) {
            err(await s.api('POST', '/api/knowledge/read', { token, body: { category: 'experiences', path: 'ops/pendingfile.md' } }), 'TABLE_NOT_FOUND');
            const read = await mcp(token, 'knowledge_read', { category: 'experiences', path: 'ops/pendingfile.md' });
            assert.equal(read.json.result.structuredContent.error.code, 'TABLE_NOT_FOUND', read.text);
            const rpc = (method, params) =>
                s.api('POST', '/mcp', { token, body: { jsonrpc: '2.0', id: 2, method, params }, headers: { Accept: 'application/json, text/event-stream' } });
            const res = await rpc('resources/read', { uri: 'knowhub://experiences/ops/pendingfile.md' });
            assert.equal(res.json.error?.code, -32002, res.text);
            const list = await rpc('resources/list', {});
            assert.ok(list.json.result && !list.text.includes('pendingfile'), list.text);
        }
        ok(await decide(v, held.proposal_id, { decision: 'approve' }));
        assert.match(ok(await s.api('POST', '/api/knowledge/read', { token: v.reader, body: { category: 'experiences', path: 'ops/pendingfile.md' } })).content, /pendingword/);
    });

    test('merge into an existing entry writes the reviewer\'s document there', async () => {
        const v = space();
        await setPolicy(v, 'agent_writes');
        const base = ok(await fileWrite(v, v.admin, 'experiences', 'ci/cache.md', 'Clear the CI cache when builds fail oddly.'));
        const held = ok(await save(v, 'tarnbeck'));
        errKey(await decide(v, held.proposal_id, { decision: 'merge', document: 'x' }), 'INVALID_REQUEST', 'into_required', { field: 'into' });
        const d = ok(await decide(v, held.proposal_id, { decision: 'merge', into: base.id, document: 'Clear the CI cache when builds fail oddly; restart the tarnbeck workers first.' }));
        assert.deepEqual([d.state, d.decision, d.result_id], ['approved', 'merge', base.id]);
        const now = ok(await s.api('POST', '/api/knowledge/read', { token: v.reader, body: { category: 'experiences', path: 'ci/cache.md' } }));
        assert.match(now.content, /tarnbeck/);
        assert.equal(now.version, base.version + 1);
    });

    test('two reviewers decide at once: exactly one wins, the other gets CONFLICT', async () => {
        const v = space();
        await setPolicy(v, 'agent_writes');
        const editor2 = s.token(v.name, 'editor', 'editor2');
        for (let i = 0; i < 5; i++) {
            const held = ok(await save(v, `raceword${i}x`));
            const rs = await Promise.all([decide(v, held.proposal_id, { decision: 'approve' }), decide(v, held.proposal_id, { decision: 'reject', reason: 'no' }, editor2)]);
            const wins = rs.filter((r) => r.json.status === 'success');
            assert.equal(wins.length, 1, rs.map((r) => r.text).join('\n'));
            const lost = rs.find((r) => r.json.status !== 'success');
            errKey(lost, 'CONFLICT', 'already_decided', { id: held.proposal_id });
            const live = ok(await s.api('GET', '/api/knowledge?limit=100', { token: v.reader })).items.filter((e) => e.scenario.includes(`raceword${i}x`));
            assert.equal(live.length, wins[0].json.data.state === 'approved' ? 1 : 0);
        }
    });

    test('a reviewer of another space never sees nor decides the proposal', async () => {
        const a = space();
        const b = space();
        await setPolicy(a, 'agent_writes');
        const held = ok(await save(a, 'moorlatch'));
        assert.equal(ok(await s.api('GET', '/api/review', { token: b.admin })).total, 0);
        err(await s.api('GET', `/api/review/${held.proposal_id}`, { token: b.admin }), 'NOT_FOUND');
        err(await decide(b, held.proposal_id, { decision: 'approve' }, b.admin), 'NOT_FOUND');
        assert.equal(ok(await s.api('GET', `/api/review/${held.proposal_id}`, { token: a.editor })).state, 'pending');
    });
});

describe('a token\'s own policy, set at its creation', () => {
    test('POST /api/tokens {review} and knowhub token create --review override the space\'s', async () => {
        const v = space();
        // the space reviews nothing, this agent's writes all
        const made = ok(await s.api('POST', '/api/tokens', { token: v.admin, body: { role: 'agent', label: 'watched', review: 'all' } }));
        assert.equal(made.review, 'all');
        assert.equal(ok(await save(v, 'watchedword', made.token)).status, 'pending');
        assert.match(ok(await save(v, 'freeword')).id, /^knowledge-/);
        errKey(await s.api('POST', '/api/tokens', { token: v.admin, body: { role: 'agent', review: 'often' } }), 'INVALID_REQUEST', 'invalid_review_policy', { field: 'review' });
        // the space reviews agents, this trusted one is not
        await setPolicy(v, 'agent_writes');
        const r = run(BIN, ['token', 'create', '--space', v.name, '--role', 'agent', '--label', 'trusted', '--review', 'off'], s.cliEnv());
        assert.equal(r.status, 0, r.stderr);
        const trusted = r.stdout.trim();
        assert.match(ok(await save(v, 'trustedword', trusted)).id, /^knowledge-/);
        assert.equal(ok(await save(v, 'heldword')).status, 'pending');
        assert.equal(ok(await s.api('GET', '/api/review/policy', { token: v.editor })).policy, 'agent_writes');
        const bad = run(BIN, ['token', 'create', '--space', v.name, '--role', 'agent', '--review', 'sometimes'], s.cliEnv());
        assert.equal(bad.status, 2);
        assert.match(bad.stderr, /invalid review policy/);
    });
});

describe('all', () => {
    test('holds editors\' writes too; the decision itself is written', async () => {
        const v = space();
        await setPolicy(v, 'all');
        const held = ok(await fileWrite(v, v.editor, 'experiences', 'a/b.md', 'Everything is reviewed here.'));
        assert.equal(held.status, 'pending');
        const d = ok(await decide(v, held.proposal_id, { decision: 'approve' }, v.admin));
        const now = ok(await s.api('POST', '/api/knowledge/read', { token: v.reader, body: { category: 'experiences', path: 'a/b.md' } }));
        assert.equal(now.id, d.result_id);
    });
});
