// links: typed links between entries (issue 25, docs/conflicts.md "Typed
// links and supersede"), through nginx, on SQLite and (KNOWHUB_TEST_PG)
// PostgreSQL. Each route and its roles, isolation between spaces, an add
// done twice or at once is one link, bad input; `A supersedes B` retires B
// from every read path and a revert of B, or the removal of the link,
// brings it back; search results carry conflicts_with, REST and MCP.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { err, errKey, ok } from './lib/expect.mjs';
import { mcpTool, readsHolding, roleTokens } from './lib/reads.mjs';

let s;
before(async () => {
    s = await startStack();
});
after(async () => {
    await s?.stop();
});

let spaces = 0;
const space = () => roleTokens(s, `links${++spaces}`);
const write = async (token, path, content, category = 'experiences') =>
    ok(await s.api('POST', '/api/knowledge/write', { token, body: { category, path, content } })).id;
const links = (token, id) => s.api('GET', `/api/knowledge/${id}/links`, { token });
const link = (token, id, body) => s.api('POST', `/api/knowledge/${id}/links`, { token, body });
const unlink = (token, id, to, type) => s.api('DELETE', `/api/knowledge/${id}/links/${to}/${type}`, { token });
const mcpData = async (token, name, args) => {
    const r = await mcpTool(s, token, name, args);
    assert.equal(r.status, 200, r.text);
    assert.ok(!r.json.result.isError, r.text);
    return r.json.result.structuredContent;
};
const search = async (token, word) => ok(await s.api('GET', `/api/knowledge/search?q=${word}&top_k=10`, { token })).results;
const holding = (token, word) => readsHolding(s, token, word);
const trash = async (token) => ok(await s.api('POST', '/api/knowledge/trash', { token, body: {} })).items.map((i) => i.path);

describe('the routes', () => {
    test('add, list both ways with the other entry, add again, remove', async () => {
        const v = space();
        const a = await write(v.agent, 'quarter-fiscal.md', 'Report by the fiscal quarter.');
        const b = await write(v.agent, 'quarter-calendar.md', 'Report by the calendar quarter.');
        const l = ok(await link(v.agent, a, { to: b, type: 'contradicts', reason: 'fiscal against calendar' }));
        assert.deepEqual(
            [l.from, l.to, l.type, l.reason, l.added, l.actor.startsWith('token:')],
            [a, b, 'contradicts', 'fiscal against calendar', true, true],
        );
        assert.match(l.created_at, /^\d{4}-\d{2}-\d{2}/);
        const again = ok(await link(v.agent, a, { to: b, type: 'contradicts', reason: 'another reason' }));
        assert.deepEqual(again, { ...l, added: false });
        ok(await link(v.agent, b, { to: a, type: 'refines' }));
        const out = ok(await links(v.reader, a)).items;
        assert.deepEqual(
            out.map((i) => [i.from, i.to, i.type, i.direction, i.other.id]),
            [
                [a, b, 'contradicts', 'out', b],
                [b, a, 'refines', 'in', b],
            ],
        );
        assert.deepEqual(out[0].other, { id: b, title: out[0].other.title, path: 'quarter-calendar.md', category: 'experiences', status: 'active' });
        assert.equal(out[1].reason, '');
        const inB = ok(await links(v.reader, b)).items;
        assert.deepEqual(inB.map((i) => [i.type, i.direction, i.other.id]), [['contradicts', 'in', a], ['refines', 'out', a]]);
        assert.deepEqual(ok(await unlink(v.agent, a, b, 'contradicts')), { removed: true });
        assert.deepEqual(ok(await unlink(v.agent, a, b, 'contradicts')), { removed: false });
        assert.deepEqual(ok(await links(v.reader, a)).items.map((i) => i.type), ['refines']);
    });

    test('roles: a reader reads only; supersedes needs an editor; a rule on either side an admin', async () => {
        const v = space();
        const a = await write(v.agent, 'a.md', 'Alpha text.');
        const b = await write(v.agent, 'b.md', 'Beta text.');
        const r = await write(v.admin, 'rule.md', 'A rule text.', 'rules');
        errKey(await link(v.reader, a, { to: b, type: 'related' }), 'FORBIDDEN', 'role_forbidden', { role: 'reader' }, 403);
        errKey(await unlink(v.reader, a, b, 'related'), 'FORBIDDEN', 'role_forbidden', { role: 'reader' }, 403);
        errKey(await link(v.agent, a, { to: b, type: 'supersedes' }), 'FORBIDDEN', 'role_forbidden', { role: 'agent' }, 403);
        errKey(await link(v.editor, a, { to: r, type: 'related' }), 'FORBIDDEN', 'rules_admin_only', {}, 403);
        errKey(await link(v.editor, r, { to: a, type: 'related' }), 'FORBIDDEN', 'rules_admin_only', {}, 403);
        ok(await link(v.admin, r, { to: a, type: 'related' }));
        errKey(await unlink(v.editor, r, a, 'related'), 'FORBIDDEN', 'rules_admin_only', {}, 403);
        assert.deepEqual(ok(await links(v.reader, a)).items.map((i) => i.other.id), [r]);
        ok(await link(v.agent, a, { to: b, type: 'related' }));
        ok(await link(v.editor, a, { to: b, type: 'supersedes' }));
    });

    test('bad input: unknown type, itself, missing fields, oversize reason, invalid UTF-8, unknown entries', async () => {
        const v = space();
        const a = await write(v.agent, 'a.md', 'Alpha text.');
        const b = await write(v.agent, 'b.md', 'Beta text.');
        errKey(await link(v.agent, a, { to: b, type: 'replaces' }), 'INVALID_REQUEST', 'invalid_link_type', { field: 'type' });
        errKey(await link(v.agent, a, { to: b, type: 7 }), 'INVALID_REQUEST', 'field_not_string', { field: 'type' });
        errKey(await unlink(v.agent, a, b, 'replaces'), 'INVALID_REQUEST', 'invalid_link_type', { field: 'type' });
        errKey(await link(v.agent, a, { to: a, type: 'related' }), 'INVALID_REQUEST', 'link_self', { field: 'to' });
        errKey(await link(v.agent, a, { type: 'related' }), 'INVALID_REQUEST', 'field_required', { field: 'to' });
        errKey(await link(v.agent, a, { to: b }), 'INVALID_REQUEST', 'field_required', { field: 'type' });
        errKey(await link(v.agent, a, { to: b, type: 'related', reason: 'x'.repeat(2001) }), 'LIMIT_EXCEEDED', 'field_too_long', {
            field: 'reason',
            max: 2000,
            got: 2001,
        });
        ok(await link(v.agent, a, { to: b, type: 'related', reason: '理'.repeat(2000) }));
        const raw = Buffer.concat([Buffer.from(`{"to":"${b}","type":"refines","reason":"`), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
        err(await s.api('POST', `/api/knowledge/${a}/links`, { token: v.agent, rawBody: raw }), 'INVALID_REQUEST');
        err(await link(v.agent, a, { to: 'knowledge-20260101-00000000', type: 'related' }), 'NOT_FOUND');
        err(await link(v.agent, 'knowledge-20260101-00000000', { to: b, type: 'related' }), 'NOT_FOUND');
        err(await links(v.reader, 'knowledge-20260101-00000000'), 'NOT_FOUND');
        err(await unlink(v.agent, a, 'knowledge-20260101-00000000', 'related'), 'NOT_FOUND');
        // a deleted entry is no longer linked to, and its links stay readable (history)
        ok(await s.api('DELETE', `/api/knowledge/${b}`, { token: v.agent }));
        err(await link(v.agent, a, { to: b, type: 'contradicts' }), 'NOT_FOUND');
        const kept = ok(await links(v.reader, b)).items;
        assert.deepEqual(kept.map((i) => [i.type, i.direction, i.other.id]), [['related', 'in', a]]);
        assert.equal(ok(await links(v.reader, a)).items[0].other.status, 'deleted');
    });

    test('isolation: another space neither sees nor links the entries', async () => {
        const v = space();
        const w = space();
        const a = await write(v.agent, 'a.md', 'Alpha text.');
        const b = await write(v.agent, 'b.md', 'Beta text.');
        const c = await write(w.agent, 'c.md', 'Gamma text.');
        ok(await link(v.agent, a, { to: b, type: 'related' }));
        errKey(await links(w.reader, a), 'NOT_FOUND', 'not_found');
        errKey(await link(w.agent, a, { to: b, type: 'related' }), 'NOT_FOUND', 'not_found');
        errKey(await link(w.agent, c, { to: a, type: 'related' }), 'NOT_FOUND', 'not_found');
        errKey(await link(v.agent, a, { to: c, type: 'related' }), 'NOT_FOUND', 'not_found');
        errKey(await unlink(w.agent, a, b, 'related'), 'NOT_FOUND', 'not_found');
        assert.equal(ok(await links(v.reader, a)).items.length, 1);
    });

    test('the same link added at once from many requests is one link, no error', async () => {
        const v = space();
        const a = await write(v.agent, 'a.md', 'Alpha text.');
        const b = await write(v.agent, 'b.md', 'Beta text.');
        const answers = (await Promise.all(Array.from({ length: 8 }, () => link(v.agent, a, { to: b, type: 'contradicts' })))).map(ok);
        assert.equal(answers.filter((x) => x.added).length, 1);
        assert.equal(new Set(answers.map((x) => x.created_at)).size, 1);
        assert.equal(ok(await links(v.reader, a)).items.length, 1);
        const sup = (await Promise.all(Array.from({ length: 6 }, () => link(v.editor, a, { to: b, type: 'supersedes' })))).map(ok);
        assert.equal(sup.filter((x) => x.added).length, 1);
        const revs = ok(await s.api('GET', `/api/knowledge/${b}/revisions`, { token: v.reader })).items;
        assert.deepEqual(revs.map((r) => r.reason).filter((r) => r === 'supersede'), ['supersede']);
    });
});

describe('supersede', () => {
    test('retires B from every read path; the file view\'s trash lists it; a revert of B brings it back and drops the link', async () => {
        const v = space();
        const a = await write(v.admin, 'quarter-new.md', 'Use the calendar quarter for gravelwick reports.', 'rules');
        const b = await write(v.admin, 'quarter-old.md', 'Use the fiscal quarter for gravelwick reports, says quillfeather.', 'rules');
        // the write check saw the contradiction and linked it (docs/conflicts.md)
        const checked = ok(await links(v.reader, b)).items;
        assert.deepEqual(checked.map((i) => [i.type, i.direction, i.other.id, i.actor]), [['contradicts', 'out', a, 'conflict-check']]);
        const supersedesOf = async (id) => ok(await links(v.reader, id)).items.filter((i) => i.type === 'supersedes');
        const before = (await holding(v.reader, 'quillfeather'));
        assert.deepEqual(before.filter((k) => /search|rules|context/.test(k)).length > 0, true, String(before));
        errKey(await link(v.editor, a, { to: b, type: 'supersedes' }), 'FORBIDDEN', 'rules_admin_only', {}, 403);
        const l = ok(await link(v.admin, a, { to: b, type: 'supersedes', reason: 'calendar now' }));
        assert.equal(l.added, true);
        assert.deepEqual((await holding(v.reader, 'quillfeather')), []);
        assert.ok((await trash(v.reader)).includes('quarter-old.md'));
        // B's own entry is a tombstone: what a merged entry answers
        const gone = await s.api('GET', `/api/knowledge/${b}`, { token: v.reader });
        err(gone, 'NOT_FOUND');
        // a reader learns superseded_by from either side's links
        const ofB = await supersedesOf(b);
        assert.deepEqual(ofB.map((i) => [i.type, i.direction, i.other.id, i.other.status]), [['supersedes', 'in', a, 'active']]);
        const ofA = await supersedesOf(a);
        assert.deepEqual(ofA.map((i) => [i.type, i.direction, i.other.id, i.other.status]), [['supersedes', 'out', b, 'merged']]);
        const revs = ok(await s.api('GET', `/api/knowledge/${b}/revisions`, { token: v.reader })).items;
        assert.equal(revs[0].reason, 'supersede');
        // a retired entry is not linked again, nor is anything linked to it
        errKey(await link(v.admin, b, { to: a, type: 'related' }), 'NOT_FOUND', 'not_found');
        // the revert brings it back everywhere and drops the supersedes link
        ok(await s.api('POST', `/api/knowledge/${b}/revert`, { token: v.admin, body: {} }));
        const back = (await holding(v.reader, 'quillfeather'));
        assert.deepEqual(back, before);
        assert.deepEqual(await supersedesOf(b), []);
        assert.equal(ok(await links(v.reader, b)).items.length, 1, 'the contradicts link stays');
        assert.ok(!(await trash(v.reader)).includes('quarter-old.md'));
    });

    test('removing the supersedes link restores B; an experience needs an editor, not an admin', async () => {
        const v = space();
        const a = await write(v.agent, 'deploy-new.md', 'Deploy with the plumtwist script.');
        const b = await write(v.agent, 'deploy-old.md', 'Deploy with the marrowlight script.');
        const l = ok(await link(v.editor, a, { to: b, type: 'supersedes' }));
        assert.equal(l.added, true);
        assert.deepEqual((await holding(v.reader, 'marrowlight')), []);
        assert.deepEqual((await search(v.reader, 'plumtwist')).map((r) => r.id), [a]);
        errKey(await unlink(v.agent, a, b, 'supersedes'), 'FORBIDDEN', 'role_forbidden', { role: 'agent' }, 403);
        assert.deepEqual(ok(await unlink(v.editor, a, b, 'supersedes')), { removed: true });
        assert.deepEqual((await search(v.reader, 'marrowlight')).map((r) => r.id), [b]);
        const e = ok(await s.api('GET', `/api/knowledge/${b}`, { token: v.reader }));
        assert.equal(e.status, 'active');
        const revs = ok(await s.api('GET', `/api/knowledge/${b}/revisions`, { token: v.reader })).items;
        assert.deepEqual(revs.slice(0, 2).map((r) => r.reason), ['revert', 'supersede']);
        // the link of another type between them is not touched by either
        ok(await link(v.agent, a, { to: b, type: 'related' }));
        ok(await link(v.editor, a, { to: b, type: 'supersedes' }));
        ok(await s.api('POST', `/api/knowledge/${b}/revert`, { token: v.editor, body: {} }));
        assert.deepEqual(ok(await links(v.reader, b)).items.map((i) => i.type), ['related']);
    });

    test('under a review policy that holds the caller, supersedes is refused, other links are not held', async () => {
        const v = space();
        const a = await write(v.agent, 'a.md', 'Alpha text.');
        const b = await write(v.agent, 'b.md', 'Beta text.');
        ok(await s.api('PUT', '/api/review/policy', { token: v.admin, body: { policy: 'all' } }));
        errKey(await link(v.editor, a, { to: b, type: 'supersedes' }), 'FORBIDDEN', 'review_required', { write_path: 'supersede' }, 403);
        assert.equal(ok(await s.api('GET', `/api/knowledge/${b}`, { token: v.reader })).status, 'active');
        ok(await link(v.agent, a, { to: b, type: 'contradicts' }));
        // the link is made at once; what waits is its conflict item (docs/conflicts.md), no held link
        const queue = ok(await s.api('GET', '/api/review', { token: v.editor })).items;
        assert.deepEqual(queue.map((p) => [p.kind, p.knowledge_id]), [['conflict', a]]);
    });
});

describe('conflicts_with', () => {
    test('search results name the active entries they contradict, both ways, REST and MCP', async () => {
        const v = space();
        const a = await write(v.agent, 'fiscal.md', 'Revenue in the larkspire report uses the fiscal quarter.');
        const b = await write(v.agent, 'calendar.md', 'Revenue in the larkspire report uses the calendar quarter.');
        const c = await write(v.agent, 'other.md', 'The larkspire report is due on Monday.');
        // the write check linked b to a (b contradicts a): both sides at once
        let hits = await search(v.reader, 'larkspire');
        assert.equal(hits.length, 3);
        const by = Object.fromEntries(hits.map((h) => [h.id, h.conflicts_with]));
        assert.deepEqual(by, { [a]: [b], [b]: [a], [c]: [] });
        // the other way too, by hand, and a related link: each side still named once
        assert.equal(ok(await link(v.agent, a, { to: b, type: 'contradicts' })).added, true);
        ok(await link(v.agent, c, { to: a, type: 'related' }));
        hits = await search(v.reader, 'larkspire');
        assert.deepEqual(Object.fromEntries(hits.map((h) => [h.id, h.conflicts_with])), by);
        const m = await mcpData(v.reader, 'knowledge_search', { query: 'larkspire' });
        assert.deepEqual(Object.fromEntries(m.results.map((h) => [h.id, h.conflicts_with])), by);
        // a side that is deleted is no longer named
        ok(await s.api('DELETE', `/api/knowledge/${b}`, { token: v.agent }));
        hits = await search(v.reader, 'larkspire');
        assert.deepEqual(Object.fromEntries(hits.map((h) => [h.id, h.conflicts_with])), { [a]: [], [c]: [] });
    });
});
