// Hardening round 2 (issue 12), the store's part: each test is a defect that
// was seen, kept as a regression test through the real stack.
//  - a rename never writes back a document it read earlier: in every round of
//    a write and a rename at once, the acknowledged write's text is in the
//    document it names, wherever that went (a rename that came first moved
//    the old text, and the write made a new document at the old path);
//  - expected_updated never lets a write through when the document changed
//    twice within one second;
//  - the file view refuses paths export cannot write (segments over 255
//    bytes, a file beside a folder of the same name);
//  - only admins change a rule's score;
//  - a store error in an authorization check is an error answer, never a pass;
//  - "." and ".." are refused as client-chosen ids (sessions, tables, traces);
//  - (issue 23) a data directory whose path holds '=' is SQLite's: only
//    KNOWHUB_DATABASE_URL names a PostgreSQL database.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BIN, onPostgres, run, startStack } from './lib/stack.mjs';
import { assertCommon, err, ok } from './lib/expect.mjs';
import { fileView } from './lib/files_helpers.mjs';
import { casesFault, sql } from './lib/llmtest.mjs';

let s, admin, agent, editor;
before(async () => {
    s = await startStack();
    admin = fileView(s, s.admin);
    agent = fileView(s, s.token('default', 'agent', 'hard-bot'));
    editor = fileView(s, s.token('default', 'editor', 'hard-ed'));
});
after(async () => {
    await s?.stop();
});

const doc = (body) => `---\ntitle: T\n---\n\n${body}\n`;

describe('rename never undoes a write', () => {
    test('write and rename at once: the acknowledged write survives, wherever the document went', async () => {
        const lost = [];
        const order = { renameFirst: 0, writeFirst: 0, conflict: 0 };
        for (let i = 0; i < 16; i++) {
            const from = `race/r${i}.md`;
            const first = await agent.put('experiences', from, doc(`old ${i}`));
            const [w, r] = await Promise.all([
                agent.write('experiences', from, doc(`new ${i}`)),
                agent.rename('experiences', from, `moved/r${i}.md`),
            ]);
            const wd = ok(w);
            assertCommon(r);
            if (r.json.status === 'error') assert.equal(r.json.error.code, 'CONFLICT', r.text);
            // The written document: the first one (renamed or not), or a new
            // one at the old path when the rename came first.
            const now = ok(await agent.entry(wd.id));
            if (now.content !== `new ${i}`) lost.push({ i, content: now.content, rename: r.json });
            if (wd.id !== first.id) {
                order.renameFirst++;
                assert.equal(now.path, from, `round ${i}: the write after the rename is at the old path`);
                assert.equal(r.json.status, 'success', `round ${i}: the rename came first: ${r.text}`);
                const moved = ok(await agent.entry(first.id));
                assert.deepEqual([moved.path, moved.content], [`moved/r${i}.md`, `old ${i}`], `round ${i}: the rename moved the old text`);
            } else {
                order[r.json.status === 'success' ? 'writeFirst' : 'conflict']++;
                assert.equal(now.path, r.json.status === 'success' ? `moved/r${i}.md` : from, `round ${i}: where the document went`);
            }
        }
        console.log(`# write and rename at once, 16 rounds: ${JSON.stringify(order)}`);
        assert.deepEqual(lost, [], 'a rename wrote back the text it had read before the write');
    });

    test('a rename changes only where the document is: its text, tags and score stay', async () => {
        const d = await agent.put('experiences', 'keep/a.md', doc('body stays'));
        ok(await s.api('PUT', `/api/knowledge/${d.id}`, { token: agent.token, body: { update_score: 5 } }));
        const before = ok(await agent.entry(d.id));
        const moved = ok(await agent.rename('experiences', 'keep/a.md', 'keep/b.md', { expected_version: before.version }));
        assert.equal(moved.id, d.id);
        const after = ok(await agent.entry(d.id));
        assert.equal(after.content, 'body stays');
        assert.equal(after.eval.score, 5);
        assert.equal(after.path, 'keep/b.md');
        assert.equal(after.version, before.version + 1);
        const [rev] = ok(await agent.revisions(d.id)).items;
        assert.equal(rev.reason, 'rename');
        // A stale expected_version is a CONFLICT and moves nothing.
        err(await agent.rename('experiences', 'keep/b.md', 'keep/c.md', { expected_version: before.version }), 'CONFLICT');
        assert.equal(ok(await agent.entry(d.id)).path, 'keep/b.md');
    });
});

describe('expected_updated', () => {
    test('two writes in one second: a write guarded by the first one\'s updated_at is a CONFLICT', async () => {
        let tried = 0;
        for (let i = 0; i < 20; i++) {
            const p = `sec/s${i}.md`;
            const a = await agent.put('experiences', p, doc('one'));
            const b = await agent.put('experiences', p, doc('two'));
            if (a.updated_at !== b.updated_at) continue; // crossed a second: try again
            tried++;
            err(await agent.write('experiences', p, doc('three'), { expected_updated: a.updated_at }), 'CONFLICT');
            assert.equal((await agent.get('experiences', p)).content, doc('two'));
            // The token of the latest write lets the next one through.
            ok(await agent.write('experiences', p, doc('three'), { expected_updated: b.updated_token }));
            // The token of an older version does not, even within the same second.
            err(await agent.write('experiences', p, doc('four'), { expected_updated: b.updated_token }), 'CONFLICT');
            break;
        }
        assert.equal(tried, 1, 'never two writes within one second');
    });

    test('read, list and write give updated_token; the plain updated_at still works when unambiguous', async () => {
        const w = await agent.put('experiences', 'tok/a.md', doc('a'));
        assert.match(w.updated_token, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}#\d+$/);
        const r = await agent.get('experiences', 'tok/a.md');
        assert.equal(r.updated_token, w.updated_token);
        const item = ok(await agent.list('experiences')).items.find((x) => x.path === 'tok/a.md');
        assert.equal(item.updated_token, w.updated_token);
        // Wait for the next second so the old form is unambiguous.
        await new Promise((res) => setTimeout(res, 1100));
        const w2 = await agent.put('experiences', 'tok/a.md', doc('b'));
        ok(await agent.write('experiences', 'tok/a.md', doc('c'), { expected_updated: w2.updated_at }));
        err(await agent.write('experiences', 'tok/a.md', doc('d'), { expected_updated: 'not a time' }), 'CONFLICT');
    });
});

describe('paths export can write', () => {
    test('a path segment over 255 bytes is refused, 255 bytes pass', async () => {
        const long = `${'é'.repeat(130)}.md`; // 133 characters, 263 bytes
        const e = err(await agent.write('experiences', long, doc('x')), 'INVALID_REQUEST');
        assert.match(e.message, /255 bytes/);
        err(await agent.write('experiences', `f/${long}`, doc('x')), 'INVALID_REQUEST');
        err(await agent.write('experiences', `${'é'.repeat(130)}/a.md`, doc('x')), 'INVALID_REQUEST');
        err(await s.api('POST', '/api/knowledge', { token: agent.token, body: { scenario: 's', content: 'c', path: long } }), 'INVALID_REQUEST');
        const fits = `${'é'.repeat(126)}.md`; // 255 bytes
        ok(await agent.write('experiences', fits, doc('x')));
    });

    test('a file and a folder of the same name cannot both exist', async () => {
        await agent.put('experiences', 'clash.md', doc('file'));
        const e = err(await agent.write('experiences', 'clash.md/inner.md', doc('x')), 'CONFLICT');
        assert.match(e.message, /folder|file/i);
        await agent.put('experiences', 'dir.md/inner.md', doc('in a folder'));
        err(await agent.write('experiences', 'dir.md', doc('x')), 'CONFLICT');
        // Nor by a rename, nor through the entry view.
        await agent.put('experiences', 'loose.md', doc('loose'));
        err(await agent.rename('experiences', 'loose.md', 'dir.md'), 'CONFLICT');
        err(await agent.rename('experiences', 'loose.md', 'clash.md/loose.md'), 'CONFLICT');
        err(await s.api('POST', '/api/knowledge', { token: agent.token, body: { scenario: 's', content: 'c', path: 'clash.md/x.md' } }), 'CONFLICT');
        // A document may move from a file into a folder of its own name.
        ok(await agent.rename('experiences', 'loose.md', 'loose.md/loose.md'));
        // Deleting the file frees the name for a folder.
        ok(await agent.del('experiences', 'clash.md'));
        ok(await agent.write('experiences', 'clash.md/inner.md', doc('x')));
        // distill-experience into a folder named like a document: CONFLICT, nothing written.
        await agent.put('experiences', 'hint.md', doc('a document named like the folder'));
        const before = (await agent.paths('experiences')).length;
        const d = err(await s.api('POST', '/api/knowledge/distill-experience', { token: agent.token, body: { experience_context: { user_question: 'Which region grew?', result_summary: {} }, category_hint: 'hint.md' } }), 'CONFLICT');
        assert.match(d.message, /file or a folder/);
        assert.equal((await agent.paths('experiences')).length, before);
        // A title of 80 four-byte characters still makes a name a file system holds.
        const long = ok(await s.api('POST', '/api/knowledge/distill-experience', { token: agent.token, body: { experience_context: { user_question: '😀'.repeat(100), result_summary: {} } } }));
        assert.ok(Buffer.byteLength(long.path.split('/').pop()) <= 255, long.path);
        // An agent whose id ends in .md gets a derived folder that clashes with no file.
        await agent.put('experiences', 'bot.md', doc('file named like the agent'));
        const e2 = ok(await s.api('POST', '/api/knowledge', { token: agent.token, body: { scenario: 's', content: 'c', agent_id: 'bot.md' } }));
        assert.ok(!e2.path.startsWith('bot.md/'), e2.path);
    });
});

describe('rule scores are for admins', () => {
    test('PUT update_score on a rule: 403 for agents and editors, admins may', async () => {
        const rule = await admin.put('rules', 'score-me.md', '---\ndescription: d\n---\n\nAlways check.\n');
        for (const who of [agent, editor]) {
            err(await s.api('PUT', `/api/knowledge/${rule.id}`, { token: who.token, body: { update_score: 1 } }), 'FORBIDDEN', 403);
            err(await s.api('PUT', `/api/knowledge/${rule.id}`, { token: who.token, body: { update_score: 2, add_helpful_case: { case_id: `c-${who.token.slice(3, 8)}` } } }), 'FORBIDDEN', 403);
        }
        const now = ok(await admin.entry(rule.id));
        assert.equal(now.eval.score, 3);
        assert.equal(now.eval.helpful, 0, 'a refused request changed nothing');
        // Helpful cases on a rule are feedback, not a rule change.
        ok(await s.api('PUT', `/api/knowledge/${rule.id}`, { token: agent.token, body: { add_helpful_case: { case_id: 'ok-1' } } }));
        assert.equal(ok(await s.api('PUT', `/api/knowledge/${rule.id}`, { token: s.admin, body: { update_score: 4 } })).eval.score, 4);
        const exp = await agent.put('experiences', 'score/e.md', doc('e'));
        assert.equal(ok(await s.api('PUT', `/api/knowledge/${exp.id}`, { token: agent.token, body: { update_score: 1 } })).eval.score, 1);
    });
});

describe('sessions are never saved over a change in between', () => {
    test('POST /api/sessions with expected_updated_at: CONFLICT when the session changed since', async () => {
        const t = agent.token;
        const a = ok(await s.api('POST', '/api/sessions', { token: t, body: { id: 'occ-s', tables: [{ id: 'src' }] } }));
        // an agent adds a table; a panel that read the first version saves its own change
        const b = ok(await s.api('POST', '/api/sessions', { token: t, body: { id: 'occ-s', tables: [{ id: 'src' }, { id: 'agent-table' }] } }));
        const e = err(await s.api('POST', '/api/sessions', { token: t, body: { id: 'occ-s', tables: [{ id: 'src', anchored: true }], expected_updated_at: a.updated_at } }), 'CONFLICT');
        assert.match(e.message, /reload/);
        assert.deepEqual(ok(await s.api('GET', '/api/sessions/occ-s', { token: t })).tables.map((x) => x.id), ['src', 'agent-table']);
        const c = ok(await s.api('POST', '/api/sessions', { token: t, body: { id: 'occ-s', tables: [...b.tables, { id: 'mine' }], expected_updated_at: b.updated_at } }));
        assert.deepEqual(c.tables.map((x) => x.id), ['src', 'agent-table', 'mine']);
        err(await s.api('POST', '/api/sessions', { token: t, body: { id: 'never-saved', tables: [], expected_updated_at: b.updated_at } }), 'CONFLICT');
        err(await s.api('POST', '/api/sessions', { token: t, body: { tables: [], expected_updated_at: b.updated_at } }), 'INVALID_REQUEST');
    });

    test('deleting a table keeps a table saved meanwhile (the session is replaced only as read)', async () => {
        const t = agent.token;
        // Whichever comes first, the table c saved by the POST survives: [a, b, c] or [b, c].
        for (let i = 0; i < 10; i++) {
            const id = `del-s${i}`;
            ok(await s.api('POST', '/api/sessions', { token: t, body: { id, tables: [{ id: 'a' }, { id: 'b', derive: { trigger: { tableId: 'a' } } }] } }));
            const [d] = await Promise.all([
                s.api('DELETE', `/api/sessions/${id}/tables/a`, { token: t }),
                s.api('POST', '/api/sessions', { token: t, body: { id, tables: [{ id: 'a' }, { id: 'b', derive: { trigger: { tableId: 'a' } } }, { id: 'c' }] } }),
            ]);
            ok(d);
            const now = ok(await s.api('GET', `/api/sessions/${id}`, { token: t })).tables.map((x) => x.id);
            assert.ok(now.includes('c'), `the table saved meanwhile was lost: ${now}`);
        }
    });
});

describe('client-chosen ids', () => {
    test('"." and ".." are refused for sessions, tables and traces', async () => {
        for (const id of ['.', '..']) {
            err(await s.api('POST', '/api/sessions', { token: agent.token, body: { id, tables: [] } }), 'INVALID_REQUEST');
            err(await s.api('POST', '/api/sessions', { token: agent.token, body: { tables: [{ id }] } }), 'INVALID_REQUEST');
            err(await s.api('POST', '/api/traces', { token: agent.token, body: { trace_id: id } }), 'INVALID_REQUEST');
            err(await s.api('GET', `/api/knowledge/search?q=x&trace_id=${id}`, { token: agent.token }), 'INVALID_REQUEST');
            err(await s.api('GET', `/api/traces/${encodeURIComponent(id).replace(/\./g, '%2E')}`, { token: agent.token }), 'INVALID_REQUEST');
        }
        // Dots inside an id are fine.
        ok(await s.api('POST', '/api/sessions', { token: agent.token, body: { id: 'a.b', tables: [{ id: '...' }] } }));
        ok(await s.api('POST', '/api/traces', { token: agent.token, body: { trace_id: 'run..1' } }));
    });
});

describe('authorization fails closed on a store error', () => {
    let f;
    before(async () => {
        f = await startStack();
    });
    after(() => {
        f?.stopSync(); // this stack logs the internal errors the test provokes
    });

    // The fault is planted with SQLite DDL (PRAGMA legacy_alter_table, json_extract, an INSTEAD OF trigger).
    test('revert: when the revisions cannot be read, the answer is an error, not a pass', { skip: onPostgres && 'SQLite only: the store error is planted with SQLite DDL (a view over the renamed table, INSTEAD OF trigger)' }, async () => {
        const fa = fileView(f, f.admin);
        const fg = fileView(f, f.token('default', 'agent', 'fc-bot'));
        // A rule (v1) that an admin moved into experiences (v2): reverting to v1 makes it a rule again.
        const r = await fa.put('rules', 'was-rule.md', '---\ndescription: d\n---\n\nA rule.\n');
        ok(await fa.rename('rules', 'was-rule.md', 'was-rule.md', { new_category: 'experiences' }));
        err(await fg.revert(r.id, { version: 1 }), 'FORBIDDEN', 403);
        // Make the revision list unreadable (its actor column fails for version 1) while
        // single revisions still read and new ones are still written.
        sql(f, `PRAGMA legacy_alter_table = ON; ALTER TABLE knowledge_revisions RENAME TO kr_real;
            CREATE VIEW knowledge_revisions AS SELECT space, knowledge_id, version, document,
              CASE WHEN version = 1 THEN json_extract('not json', '$') ELSE actor END AS actor,
              reason, created_at FROM kr_real;
            CREATE TRIGGER kr_insert INSTEAD OF INSERT ON knowledge_revisions BEGIN
              INSERT INTO kr_real VALUES(new.space, new.knowledge_id, new.version, new.document,
                new.actor, new.reason, new.created_at); END;`);
        const res = await fg.revert(r.id, { version: 1 });
        assertCommon(res);
        assert.equal(res.json.status, 'error', `an agent turned an entry into a rule: ${res.text.slice(0, 300)}`);
        assert.ok([500, 503].includes(res.status) || res.json.error.code === 'FORBIDDEN', res.text);
        assert.equal(ok(await fa.entry(r.id)).category, 'experiences');
    });
});

describe('an entry is never answered without the histories it has', () => {
    let f;
    before(async () => {
        f = await startStack();
    });
    after(() => {
        f?.stopSync(); // this stack logs the store errors the test provokes
    });

    // The fault (casesFault): reading the helpful cases fails.
    test('GET /api/knowledge/{id} when its cases cannot be read: an error, not an empty history, and nothing cached', async () => {
        const t = f.token('default', 'agent', 'hist-bot');
        const e = ok(await f.api('POST', '/api/knowledge', { token: t, body: { scenario: 'When a join duplicates rows', content: 'Check the key is unique first.' } }));
        ok(await f.api('PUT', `/api/knowledge/${e.id}`, { token: t, body: { add_helpful_case: { case_id: 'c-1', result: 'no duplicates' } } }));
        const before = ok(await f.api('GET', `/api/knowledge/${e.id}`, { token: t }));
        assert.equal(before.eval.helpful_history.length, 1, JSON.stringify(before.eval));
        sql(f, casesFault(f).plant);
        try {
            for (let i = 0; i < 2; i++) {
                const r = await f.api('GET', `/api/knowledge/${e.id}`, { token: t });
                assertCommon(r);
                assert.equal(r.json.status, 'error', `answered without its history: ${r.text.slice(0, 300)}`);
                assert.ok([500, 503].includes(r.status), r.text);
                assert.notEqual(r.headers['x-cache'], 'hit');
            }
        } finally {
            sql(f, casesFault(f).unplant);
        }
        const after = ok(await f.api('GET', `/api/knowledge/${e.id}`, { token: t }));
        assert.equal(after.eval.helpful_history.length, 1);
    });
});

describe('the backend comes from KNOWHUB_DATABASE_URL alone', () => {
    test("a data directory with '=' in its path holds an SQLite database", () => {
        const top = fs.mkdtempSync(path.join(os.tmpdir(), 'kh-eq-'));
        try {
            const data = path.join(top, 'team=ops data');
            fs.mkdirSync(data);
            const r = run(BIN, ['token', 'create', '--space', 'eq', '--role', 'admin', '--label', 'eq'], { KNOWHUB_DATA: data });
            assert.equal(r.status, 0, r.stderr);
            assert.match(r.stdout.trim(), /^kh_[0-9a-f]{16}_\S+$/);
            assert.ok(fs.existsSync(path.join(data, 'knowhub.db')), 'the SQLite file is in the data directory');
            assert.doesNotMatch(r.stderr, /PostgreSQL/);
        } finally {
            fs.rmSync(top, { recursive: true, force: true });
        }
    });
});
