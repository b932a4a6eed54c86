// The review queue on the live stream (docs/review.md "Counts"): a proposal
// made or decided is a "review" event on GET /api/events for the space's
// editors and admins, within a second, on either backend; a reader's
// stream hears nothing of it (pending knowledge is not served) until the
// approval writes the entry, which every stream is told as a "changed".
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { ok } from './lib/expect.mjs';

let s;
before(async () => {
    s = await startStack();
});
after(async () => {
    await s?.stop();
});

/** GET /api/events with token; resolves with {text (growing), close()} once the head is in. */
function stream(token) {
    return new Promise((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port: s.port, path: '/api/events', headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' } }, (res) => {
            const st = { text: '', close: () => req.destroy() };
            res.setEncoding('utf8');
            res.on('data', (d) => (st.text += d));
            res.on('error', () => {});
            assert.equal(res.statusCode, 200);
            resolve(st);
        });
        req.on('error', reject);
        req.end();
    });
}

async function until(pred, ms, what) {
    const t0 = Date.now();
    while (!pred()) {
        if (Date.now() - t0 > ms) assert.fail(`not within ${ms} ms: ${what}`);
        await new Promise((r) => setTimeout(r, 10));
    }
}

test('a proposal made and decided: a review event for editors within 1 s, nothing for a reader until it is served', async () => {
    const admin = s.token('rlive', 'admin', 'admin');
    const editor = s.token('rlive', 'editor', 'editor');
    const agent = s.token('rlive', 'agent', 'agent');
    const reader = s.token('rlive', 'reader', 'reader');
    ok(await s.api('PUT', '/api/review/policy', { token: admin, body: { policy: 'agent_writes' } }));
    const ed = await stream(editor);
    const rd = await stream(reader);
    try {
        await new Promise((r) => setTimeout(r, 300));
        const held = ok(await s.api('POST', '/api/knowledge', { token: agent, body: { scenario: 'deploys ochreous', content: 'Restart the workers first.' } }));
        assert.equal(held.status, 'pending');
        await until(() => ed.text.includes(`"proposal_id":"${held.proposal_id}","action":"proposed"`), 1000, 'the editor told of the proposal');
        assert.match(ed.text, /event: review\n/);
        await new Promise((r) => setTimeout(r, 300));
        assert.ok(!rd.text.includes('review') && !rd.text.includes(held.proposal_id), rd.text);
        assert.ok(!rd.text.includes('event: changed'), rd.text);

        ok(await s.api('POST', `/api/review/${held.proposal_id}/decide`, { token: editor, body: { decision: 'approve' } }));
        await until(() => ed.text.includes(`"proposal_id":"${held.proposal_id}","action":"decided"`), 1000, 'the editor told of the decision');
        await until(() => rd.text.includes('event: changed') && rd.text.includes('"action":"created"'), 1000, 'the reader told of the entry once it is served');
        assert.ok(!rd.text.includes(held.proposal_id), rd.text);
    } finally {
        ed.close();
        rd.close();
    }
});
