// review_twonode: issue 24's review queue on two knowhub nodes of one
// PostgreSQL database (tests/http/lib/nodes.mjs). A write held on node B is
// in node A's queue; approved on node A it is served by node B at once, its
// cached answers included (B read them, proposal pending, just before); two
// reviewers deciding one proposal on the two nodes at once: exactly one wins.
// Needs KNOWHUB_TEST_PG (test.sh's PostgreSQL pass sets it).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { onPostgres, startNodes } from './lib/nodes.mjs';
import { errKey, ok } from './lib/expect.mjs';

const SKIP = !onPostgres && 'needs a PostgreSQL cluster (KNOWHUB_TEST_PG, see docs/testing.md)';

describe('the review queue on two nodes', { skip: SKIP }, () => {
    let c, a, b, admin, editor, agent, reader;
    before(async () => {
        c = await startNodes({ nodes: 2 });
        [a, b] = c.node;
        admin = c.token('twin', 'admin', 'admin');
        editor = c.token('twin', 'editor', 'editor');
        agent = c.token('twin', 'agent', 'agent');
        reader = c.token('twin', 'reader', 'reader');
        ok(await a.api('PUT', '/api/review/policy', { token: admin, body: { policy: 'agent_writes' } }));
    });
    after(async () => {
        await c?.stop();
    });

    /** What node n serves a reader about word: the cached list, both searches and /context. */
    async function served(n, word) {
        const reads = await Promise.all([
            n.api('GET', '/api/knowledge?limit=100', { token: reader }),
            n.api('GET', `/api/knowledge/search?q=${word}`, { token: reader }),
            n.api('POST', '/api/knowledge/search', { token: reader, body: { query: word } }),
            n.api('POST', '/api/knowledge/context', { token: reader, body: { question: `deploy ${word}` } }),
        ]);
        return reads.map((r) => (ok(r), r.text.includes(word)));
    }

    test('held on B, in A\'s queue; approved on A, served by B at once', async () => {
        const word = 'twinfeather';
        assert.equal(ok(await b.api('GET', '/api/review/policy', { token: editor })).policy, 'agent_writes');
        const held = ok(await b.api('POST', '/api/knowledge', { token: agent, body: { scenario: `deploy ${word}`, content: `restart ${word} workers first` } }));
        assert.equal(held.status, 'pending');
        // B's answers are computed (and cached) with the proposal pending
        assert.deepEqual(await served(b, word), [false, false, false, false]);
        assert.deepEqual(await served(b, word), [false, false, false, false]);
        const q = ok(await a.api('GET', '/api/review?state=pending', { token: editor }));
        assert.deepEqual(q.items.map((p) => p.id), [held.proposal_id]);
        assert.deepEqual(ok(await b.api('GET', '/api/overview', { token: reader })).review, { pending: 1, quarantined: 0 });
        ok(await a.api('POST', `/api/review/${held.proposal_id}/decide`, { token: editor, body: { decision: 'approve' } }));
        assert.deepEqual(await served(b, word), [true, true, true, true], 'node B served a stale answer after the approval on A');
        assert.deepEqual(ok(await b.api('GET', '/api/overview', { token: reader })).review, { pending: 0, quarantined: 0 });
    });

    test('two reviewers on two nodes decide one proposal: exactly one wins', async () => {
        const editor2 = c.token('twin', 'editor', 'editor2');
        for (let i = 0; i < 6; i++) {
            const held = ok(await a.api('POST', '/api/knowledge', { token: agent, body: { scenario: `race ${i} twinrace`, content: `twinrace number ${i}` } }));
            const rs = await Promise.all([
                a.api('POST', `/api/review/${held.proposal_id}/decide`, { token: editor, body: { decision: 'approve' } }),
                b.api('POST', `/api/review/${held.proposal_id}/decide`, { token: editor2, body: i % 2 ? { decision: 'reject', reason: 'no' } : { decision: 'approve' } }),
            ]);
            const wins = rs.filter((r) => r.json?.status === 'success');
            assert.equal(wins.length, 1, rs.map((r) => r.text).join('\n'));
            errKey(rs.find((r) => r.json?.status !== 'success'), 'CONFLICT', 'already_decided', { id: held.proposal_id });
            const live = ok(await b.api('GET', '/api/knowledge?limit=100', { token: reader })).items.filter((e) => e.content === `twinrace number ${i}`);
            assert.equal(live.length, wins[0].json.data.state === 'approved' ? 1 : 0, 'one entry per approval, none for a rejection');
        }
    });
});
