// time: an entry's expires_at, review_after and pinned (issue 25,
// docs/conflicts.md "Time: expiry, review-by dates and pins"), through
// nginx, on SQLite and (KNOWHUB_TEST_PG) PostgreSQL, with the wall clock
// fixed by KNOWHUB_NOW (Stack.restartKnowhub moves it): the fields on the
// entry view, bad values, the expiry boundary on every read path (one
// second before: found; at it: gone from the searches, the context and the
// rules, still readable, in the stale view), the answer cache's horizon,
// renewal, review_after queueing (one review_due proposal, approve clears).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { errKey, ok } from './lib/expect.mjs';
import { mcpTool, readsHolding, roleTokens } from './lib/reads.mjs';
import { knowhub } from './lib/files_helpers.mjs';

const T0 = '2031-03-01T12:00:00Z';
let s;
before(async () => {
    s = await startStack({ KNOWHUB_NOW: T0 });
});
after(async () => {
    await s?.stop();
});

let spaces = 0;
const space = () => roleTokens(s, `time${++spaces}`);
const create = async (token, body) => ok(await s.api('POST', '/api/knowledge', { token, body }));
const get = async (token, id) => ok(await s.api('GET', `/api/knowledge/${id}`, { token }));
const put = (token, id, body) => s.api('PUT', `/api/knowledge/${id}`, { token, body });
const stale = async (token, q = '') => ok(await s.api('GET', `/api/knowledge/stale${q}`, { token }));
const at = (moment) => s.restartKnowhub({ KNOWHUB_NOW: moment });
const searchIds = async (token, word) =>
    ok(await s.api('GET', `/api/knowledge/search?q=${word}&top_k=10`, { token })).results.map((r) => r.id);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

describe('the fields', () => {
    test('set on create, returned by id and in lists, changed and cleared by PUT', async () => {
        await at(T0);
        const v = space();
        const k = await create(v.agent, {
            scenario: 'Rotating the staging certificates',
            content: 'Renew the staging certificates with certbot.',
            expires_at: '2031-06-01',
            review_after: '2031-04-01T08:30:00Z',
            pinned: true,
        });
        assert.deepEqual([k.expires_at, k.review_after, k.pinned], ['2031-06-01T00:00:00Z', '2031-04-01T08:30:00Z', true]);
        const g = await get(v.reader, k.id);
        assert.deepEqual([g.expires_at, g.review_after, g.pinned], [k.expires_at, k.review_after, true]);
        const listed = ok(await s.api('GET', '/api/knowledge?limit=10', { token: v.reader })).items.find((i) => i.id === k.id);
        assert.deepEqual([listed.expires_at, listed.review_after, listed.pinned], [k.expires_at, k.review_after, true]);
        const u = ok(await put(v.agent, k.id, { expires_at: null, pinned: false }));
        assert.deepEqual([u.expires_at, u.review_after, u.pinned], [null, '2031-04-01T08:30:00Z', false]);
        const plain = await create(v.agent, { scenario: 'No time at all', content: 'Nothing expires here.' });
        assert.deepEqual([plain.expires_at, plain.review_after, plain.pinned], [null, null, false]);
    });

    test('bad values are INVALID_REQUEST invalid_time naming the field', async () => {
        const v = space();
        for (const [field, value] of [
            ['expires_at', '2031-02-30'],
            ['expires_at', 'tomorrow'],
            ['review_after', '2031-04-01T25:00:00Z'],
            ['review_after', '2031-04-01T08:00:00+02:00'],
            ['expires_at', 20310401],
            ['pinned', 'yes'],
        ]) {
            const r = await s.api('POST', '/api/knowledge', { token: v.agent, body: { scenario: 'x', content: 'y', [field]: value } });
            errKey(r, 'INVALID_REQUEST', 'invalid_time', { field });
        }
        const k = await create(v.agent, { scenario: 'x', content: 'y' });
        errKey(await put(v.agent, k.id, { review_after: '31/12/2031' }), 'INVALID_REQUEST', 'invalid_time', { field: 'review_after' });
        // a rule's time is a rule's change: admins only
        const rule = await create(v.admin, { category: 'rules', path: 'r.md', scenario: 'r', content: 'Rule.', always_apply: true });
        errKey(await put(v.editor, rule.id, { expires_at: '2031-05-01' }), 'FORBIDDEN', 'rules_admin_only', {}, 403);
    });
});

describe('expiry', () => {
    // T0 + 10 minutes: the moment the entries below expire.
    const EXP = '2031-03-01T12:10:00Z';
    const before1 = '2031-03-01T12:09:59Z';
    let v, exp, rule, keep;
    before(async () => {
        await at(T0);
        v = space();
        exp = await create(v.agent, { scenario: 'Deploying marrowfield services', content: 'Run marrowfield migrations before the deploy.', expires_at: EXP });
        keep = await create(v.agent, { scenario: 'Deploying marrowfield dashboards', content: 'Marrowfield dashboards deploy by themselves.' });
        rule = await create(v.admin, {
            category: 'rules',
            path: 'marrowfield-freeze.md',
            scenario: 'marrowfield freeze',
            content: 'No marrowfield deploys on Fridays.',
            always_apply: true,
            expires_at: EXP,
        });
    });

    test('before: on every read path', async () => {
        const holding = await readsHolding(s, v.reader, 'marrowfield');
        for (const path of ['GET /api/knowledge/search', 'POST /api/knowledge/search', 'POST /api/knowledge/context', 'GET /api/knowledge/rules', 'mcp knowledge_search', 'mcp knowledge_context', 'mcp knowledge_rules'])
            assert.ok(holding.includes(path), `${path}: ${holding}`);
        assert.deepEqual(ok(await s.api('GET', '/api/knowledge/stale', { token: v.reader })).items, []);
    });

    test('one second before: found; at the moment: gone from the searches, the context and the rules', async () => {
        // The clock runs on from the moment it is set, a whole second at a
        // time: an entry created after the search says what time it was.
        const probes = space();
        for (let i = 0; ; i++) {
            await at(before1);
            const found = (await searchIds(v.reader, 'marrowfield')).includes(exp.id);
            const probe = await create(probes.agent, { scenario: 'clock probe', content: 'What time is it?' });
            if (probe.created_at < '2031-03-01 12:10:00') {
                assert.ok(found, 'one second before: found');
                break;
            }
            assert.ok(i < 4, `the clock never read ${before1} at the search`);
        }
        await at(EXP);
        const ids = await searchIds(v.reader, 'marrowfield');
        assert.ok(!ids.includes(exp.id) && ids.includes(keep.id), JSON.stringify(ids));
        const rules = ok(await s.api('GET', '/api/knowledge/rules', { token: v.reader }));
        assert.ok(!JSON.stringify(rules).includes('Fridays'), JSON.stringify(rules));
        const holding = await readsHolding(s, v.reader, 'Fridays');
        assert.deepEqual(holding.filter((p) => !/list|GET \/api\/knowledge$/.test(p)), [], `still in ${holding}`);
        const mcp = await mcpTool(s, v.reader, 'knowledge_search', { query: 'marrowfield migrations' });
        assert.ok(!mcp.text.includes(exp.id), mcp.text);
    });

    test('expired: still readable by id and by the file view, listed in the stale view', async () => {
        const g = await get(v.reader, exp.id);
        assert.equal(g.expires_at, EXP);
        const read = ok(await s.api('POST', '/api/knowledge/read', { token: v.reader, body: { category: 'rules', path: 'marrowfield-freeze.md' } }));
        assert.match(read.content, /Fridays/);
        const st = await stale(v.reader);
        assert.equal(st.total, 2);
        assert.deepEqual(
            st.items.map((i) => [i.id, i.why, i.expires_at]).sort(),
            [
                [exp.id, 'expired', EXP],
                [rule.id, 'expired', EXP],
            ].sort(),
        );
        // the files agents read (AGENTS.md) leave it out, and say so
        const md = await s.api('GET', '/api/knowledge/export?format=agents_md', { token: v.reader });
        assert.equal(md.status, 200);
        assert.ok(!md.text.includes('Fridays'), md.text);
        assert.match(md.text, /<!-- left out:\n(.*\n)*- rules\/marrowfield-freeze\.md: expired: agents are not given it\n/);
        assert.ok(Number(md.headers['x-knowhub-left-out']) >= 1);
        const page = await stale(v.reader, '?limit=1&offset=1');
        assert.deepEqual([page.items.length, page.total, page.limit, page.offset], [1, 2, 1, 1]);
        // another space sees none of it
        assert.deepEqual((await stale(space().reader)).items, []);
    });

    test('renew: a new expires_at, or null, brings it back at once', async () => {
        ok(await put(v.agent, exp.id, { expires_at: '2031-09-01' }));
        ok(await put(v.admin, rule.id, { expires_at: null }));
        assert.ok((await searchIds(v.reader, 'marrowfield')).includes(exp.id));
        assert.match(JSON.stringify(ok(await s.api('GET', '/api/knowledge/rules', { token: v.reader }))), /Fridays/);
        assert.deepEqual((await stale(v.reader)).items, []);
    });

    test('the answer cache: a cached search answers differently once the moment passes', async () => {
        const w = space();
        await at('2031-03-01T12:29:58Z');
        const k = await create(w.agent, { scenario: 'Feeding the quernstone cache', content: 'Quernstone caches warm at night.', expires_at: '2031-03-01T12:30:00Z' });
        assert.ok((await searchIds(w.reader, 'quernstone')).includes(k.id));
        // warm every worker's cache with the answer that holds it
        const caches = [];
        for (let i = 0; i < 8; i++) caches.push((await s.api('GET', `/api/knowledge/search?q=quernstone&top_k=10`, { token: w.reader })).headers['x-cache']);
        assert.ok(caches.includes('hit'), caches.join());
        await sleep(2200);
        assert.ok(!(await searchIds(w.reader, 'quernstone')).includes(k.id));
    });

    test('a past expires_at on create is allowed: the entry is stale at once', async () => {
        const w = space();
        const k = await create(w.agent, { scenario: 'Old advice on the ledgerhall', content: 'Ledgerhall runs on Python 2.', expires_at: '2020-01-01' });
        assert.ok(!(await searchIds(w.reader, 'ledgerhall')).includes(k.id));
        assert.deepEqual((await stale(w.reader)).items.map((i) => i.id), [k.id]);
    });
});

describe('front matter', () => {
    test('the file view reads and writes the fields; PUT shows in the read; export -> import keeps them', async () => {
        await at(T0);
        const v = space();
        const doc = '---\ntitle: Vellum backups\nexpires_at: 2031-08-01\nreview_after: 2031-05-01T09:00:00Z\npinned: true\n---\nBack up vellum nightly.\n';
        const w = ok(await s.api('POST', '/api/knowledge/write', { token: v.agent, body: { category: 'experiences', path: 'vellum.md', content: doc } }));
        const g = await get(v.reader, w.id);
        assert.deepEqual([g.expires_at, g.review_after, g.pinned], ['2031-08-01T00:00:00Z', '2031-05-01T09:00:00Z', true]);
        const read = async () => ok(await s.api('POST', '/api/knowledge/read', { token: v.reader, body: { category: 'experiences', path: 'vellum.md' } })).content;
        assert.equal(await read(), doc, 'a document that says its time is read as written');
        ok(await put(v.agent, w.id, { expires_at: '2031-09-01T10:00:00Z', pinned: false }));
        const after = await read();
        assert.match(after, /^expires_at: '?2031-09-01T10:00:00Z'?$/m);
        assert.match(after, /^review_after: '?2031-05-01T09:00:00Z'?$/m);
        assert.doesNotMatch(after, /pinned/);
        assert.match(after, /Back up vellum nightly\./);
        // written back as read: the same time; without the keys: cleared
        ok(await s.api('POST', '/api/knowledge/write', { token: v.agent, body: { category: 'experiences', path: 'vellum.md', content: after } }));
        assert.deepEqual([(await get(v.reader, w.id)).expires_at, (await get(v.reader, w.id)).pinned], ['2031-09-01T10:00:00Z', false]);
        const bad = await s.api('POST', '/api/knowledge/write', { token: v.agent, body: { category: 'experiences', path: 'vellum.md', content: '---\nexpires_at: someday\n---\nx\n' } });
        errKey(bad, 'INVALID_REQUEST', 'invalid_time', { field: 'expires_at' });
        // export (JSON Lines) -> import into another space keeps them
        const exported = await s.api('GET', '/api/knowledge/export', { token: v.reader });
        assert.equal(exported.status, 200);
        const line = exported.text.split('\n').find((l) => l.includes('vellum'));
        assert.equal(JSON.parse(line).expires_at, '2031-09-01T10:00:00Z');
        const file = path.join(s.dir, 'time-export.jsonl');
        fs.writeFileSync(file, exported.text);
        const name2 = `time${++spaces}`;
        const r = knowhub(s.dir, ['import', file, '--space', name2]);
        assert.equal(r.status, 0, r.stderr);
        const v2 = roleTokens(s, name2);
        const item = ok(await s.api('GET', '/api/knowledge?limit=10', { token: v2.reader })).items.find((i) => i.path === 'vellum.md');
        assert.deepEqual([item.expires_at, item.review_after, item.pinned], ['2031-09-01T10:00:00Z', '2031-05-01T09:00:00Z', false]);
    });
});

describe('review_after', () => {
    const queue = async (token) => ok(await s.api('GET', '/api/review?state=pending', { token })).items.filter((p) => p.kind === 'review_due');
    const decide = (token, id, body) => s.api('POST', `/api/review/${id}/decide`, { token, body });

    test('before: not queued; past it: one review_due item, not two after two sweeps; approve clears it', async () => {
        await at(T0);
        const v = space();
        const k = await create(v.agent, { scenario: 'Sizing the cobblestone pool', content: 'Keep the cobblestone pool at 40 connections.', review_after: '2031-03-02' });
        assert.deepEqual(await queue(v.editor), []);
        await at('2031-03-02T00:00:01Z');
        const [p] = await queue(v.editor);
        assert.ok(p, 'queued');
        assert.deepEqual([p.knowledge_id, p.provenance.actor, p.write_path, p.provenance.source, p.provenance.token_id], [k.id, 'clock', 'clock', 'clock', null]);
        assert.equal((await queue(v.editor)).length, 1, 'a second sweep adds none');
        ok(await s.api('GET', '/api/health', { token: v.editor }));
        assert.equal((await queue(v.editor)).length, 1);
        // still live meanwhile, and listed as due in the stale view
        assert.ok((await searchIds(v.reader, 'cobblestone')).includes(k.id));
        assert.deepEqual((await stale(v.reader)).items.map((i) => [i.id, i.why]), [[k.id, 'review_due']]);
        const full = ok(await s.api('GET', `/api/review/${p.id}`, { token: v.editor }));
        assert.match(full.document, /review_after: '?2031-03-02T00:00:00Z'?/);
        errKey(await decide(v.editor, p.id, { decision: 'merge', document: full.document, into: k.id }), 'INVALID_REQUEST', 'invalid_decision', { field: 'decision' });
        const d = ok(await decide(v.editor, p.id, { decision: 'approve' }));
        assert.equal(d.state, 'approved');
        const g = await get(v.reader, k.id);
        assert.deepEqual([g.review_after, g.version], [null, k.version]);
        assert.deepEqual(await queue(v.editor), []);
        assert.deepEqual((await stale(v.reader)).items, []);
    });

    test('the job thread sweeps too: the item is there before anyone reads the queue', async () => {
        await at(T0);
        const v = space();
        const k = await create(v.agent, { scenario: 'Pruning the hollowmere logs', content: 'Prune hollowmere logs weekly.', review_after: '2031-03-05' });
        const pending = async () => ok(await s.api('GET', '/api/overview', { token: v.reader })).review.pending;
        assert.equal(await pending(), 0);
        await at('2031-03-05T00:00:05Z'); // the job thread sweeps as it starts, then each minute
        for (let i = 0; (await pending()) !== 1; i++) {
            assert.ok(i < 100, 'no review_due item from the job thread');
            await sleep(100);
        }
        const [p] = await queue(v.editor);
        assert.equal(p.knowledge_id, k.id);
    });

    test('a held write keeps its time: the approval sets it (entry view and file view)', async () => {
        await at(T0);
        const v = space();
        ok(await s.api('PUT', '/api/review/policy', { token: v.admin, body: { policy: 'agent_writes' } }));
        const held = await create(v.agent, { scenario: 'Warming the fernwick cache', content: 'Warm fernwick at dawn.', expires_at: '2031-07-01', pinned: true });
        assert.equal(held.status, 'pending');
        const file = ok(await s.api('POST', '/api/knowledge/write', { token: v.agent, body: { category: 'experiences', path: 'fernwick-logs.md', content: '---\ntitle: Fernwick logs\nreview_after: 2031-08-01\n---\nRotate fernwick logs.\n' } }));
        assert.equal(file.status, 'pending');
        for (const id of [held.proposal_id, file.proposal_id]) ok(await decide(v.editor, id, { decision: 'approve' }));
        const items = ok(await s.api('GET', '/api/knowledge?limit=10', { token: v.reader })).items;
        const a = items.find((i) => i.title === 'Warming the fernwick cache'), b = items.find((i) => i.path === 'fernwick-logs.md');
        assert.deepEqual([a.expires_at, a.review_after, a.pinned], ['2031-07-01T00:00:00Z', null, true]);
        assert.deepEqual([b.expires_at, b.review_after, b.pinned], [null, '2031-08-01T00:00:00Z', false]);
    });

    test('edit writes the reviewer\'s document and its new review_after; reject expires the entry', async () => {
        await at(T0);
        const v = space();
        const a = await create(v.agent, { scenario: 'Tuning the gravelpit cache', content: 'The gravelpit cache holds 10 minutes.', review_after: '2031-03-01T12:00:30Z' });
        const b = await create(v.agent, { scenario: 'Running the gravelpit exporter', content: 'The gravelpit exporter runs hourly.', review_after: '2031-03-01T12:00:30Z' });
        await at('2031-03-01T12:01:00Z');
        const items = await queue(v.editor);
        assert.deepEqual(items.map((p) => p.knowledge_id).sort(), [a.id, b.id].sort());
        const pa = items.find((p) => p.knowledge_id === a.id), pb = items.find((p) => p.knowledge_id === b.id);
        const doc = ok(await s.api('GET', `/api/review/${pa.id}`, { token: v.editor })).document
            .replace(/review_after: .*$/m, 'review_after: 2031-09-01')
            .replace('10 minutes', '5 minutes');
        ok(await decide(v.editor, pa.id, { decision: 'edit', document: doc }));
        const ga = await get(v.reader, a.id);
        assert.equal(ga.review_after, '2031-09-01T00:00:00Z');
        assert.match(ga.content, /5 minutes/);
        errKey(await decide(v.editor, pb.id, { decision: 'reject' }), 'INVALID_REQUEST', 'reason_required', { field: 'reason' });
        ok(await decide(v.editor, pb.id, { decision: 'reject', reason: 'the exporter is gone' }));
        const gb = await get(v.reader, b.id);
        assert.deepEqual([gb.expires_at <= '2031-03-01T12:02:00Z', gb.review_after], [true, null]);
        assert.ok(!(await searchIds(v.reader, 'gravelpit')).includes(b.id));
        assert.deepEqual((await stale(v.reader)).items.map((i) => [i.id, i.why]), [[b.id, 'expired']]);
        assert.deepEqual(await queue(v.editor), []);
    });
});
