// migrate_to.test.mjs: `knowhub migrate-to URL` moves an SQLite stack's
// database into PostgreSQL (docs/operations.md "Moving to PostgreSQL"):
// filled through the API, stopped, migrated (a checksum line per table, all
// "ok"), then served from PostgreSQL with the same entries, versions,
// counters, revisions, typed links, search results (lexical, by meaning, hybrid; en and
// zh), embeddings (no entry queued again), traces, sessions, logins, tokens.
// A second migrate-to into the same database is refused and changes nothing.
// Needs a running PostgreSQL: KNOWHUB_TEST_PG, the socket directory of a
// throwaway cluster (scripts/pgcluster.sh, docs/testing.md); it runs in the
// PostgreSQL pass of test.sh and skips in the SQLite one.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { BIN, PG_SOCK, ROOT, assertNoBugs, createDatabase, dropDatabase, startStack, tokenId } from './lib/stack.mjs';
import { err, ok } from './lib/expect.mjs';
import { startFakeEmbed } from './lib/fakeembed.mjs';

const skip = PG_SOCK ? false : 'needs KNOWHUB_TEST_PG (the socket directory of a running PostgreSQL cluster)';
// The source must be SQLite in the PostgreSQL pass too: startStack's
// { sqlite: true }, and an empty KNOWHUB_DATABASE_URL (no URL) for the CLI.
const SQLITE = { KNOWHUB_DATABASE_URL: '' };
const TABLES = ['spaces', 'tokens', 'knowledge', 'knowledge_cases', 'knowledge_revisions', 'knowledge_feedback', 'audit', 'traces', 'knowledge_log', 'trace_rollups', 'logins', 'sessions', 'llm_calls', 'jobs', 'vectors', 'embed_queue', 'review_policies', 'token_reviews', 'proposals', 'knowledge_links', 'evidence_policy', 'knowledge_time'];

const cleanup = [];
after(async () => {
    for (const f of cleanup.reverse()) await f();
});

function psql(db, query) {
    const r = spawnSync('psql', ['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-h', PG_SOCK, '-U', 'knowhub', '-d', db, '-c', query], { encoding: 'utf8', timeout: 30000 });
    if (r.status !== 0) throw new Error(`psql: ${r.stderr}`);
    return r.stdout.trim();
}

/** A knowhub command on data directory dir, on its SQLite database unless env
 * says otherwise; its stderr shows no bug, whatever its exit status. */
function knowhub(dir, args, env = {}) {
    const r = spawnSync(BIN, args, { encoding: 'utf8', timeout: 120000, env: { ...process.env, KNOWHUB_DATA: dir, ...SQLITE, ...env } });
    assertNoBugs(r.stderr, `knowhub ${args.join(' ')}`);
    return r;
}

function newToken(dir, space, role) {
    const r = knowhub(dir, ['token', 'create', '--space', space, '--role', role]);
    assert.equal(r.status, 0, r.stderr);
    return r.stdout.trim();
}

/** Both stacks embed with the fake server (vectors: a float32 blob per entry). */
const embedEnv = (emb) => ({ KNOWHUB_EMBED_URL: emb.url, KNOWHUB_EMBED_MODEL: 'model-a', KNOWHUB_EMBED_KEY: 'sk-embed-test' });

/** GET /api/embeddings until every active entry has its vector. */
async function embedded(s, token) {
    for (const until = Date.now() + 20000; ; ) {
        const st = ok(await s.api('GET', '/api/embeddings', { token }));
        if (st.stale === 0 && st.queued === 0 && st.embedded === st.entries) return st;
        if (Date.now() > until) throw new Error(`not all embedded: ${JSON.stringify(st)}`);
        await new Promise((r) => setTimeout(r, 50));
    }
}

/** What a client sees of the knowhub stack s: every answer compared before and after. */
async function snapshot(s, token, ids) {
    const get = async (p) => ok(await s.api('GET', p, { token }));
    // an answer as it is, error or not (a deleted entry is NOT_FOUND), without its request id
    const raw = async (p) => {
        const j = (await s.api('GET', p, { token })).json;
        if (j.error) delete j.error.request_id;
        return j;
    };
    const post = async (p, body) => ok(await s.api('POST', p, { token, body }));
    const out = { entries: {}, revisions: {}, search: {} };
    for (const id of ids) {
        out.entries[id] = await raw(`/api/knowledge/${id}`);
        out.revisions[id] = await raw(`/api/knowledge/${id}/revisions`);
    }
    out.list = await get('/api/knowledge?limit=100');
    out.trash = await post('/api/knowledge/trash', {});
    for (const q of ['sled route', 'tundra wind', '数据库 迁移', '索引', 'nothing-matches-this'])
        out.search[q] = (await get(`/api/knowledge/search?q=${encodeURIComponent(q)}&top_k=10&min_score=1&mode=lexical`)).results.map((r) => r.id);
    out.searchPost = (await post('/api/knowledge/search', { query: '迁移 数据库' })).results.map((r) => r.id);
    for (const mode of ['vector', 'hybrid'])
        for (const q of ['sled route', '数据库 迁移'])
            out.search[`${mode}: ${q}`] = (await get(`/api/knowledge/search?q=${encodeURIComponent(q)}&top_k=10&mode=${mode}`)).results.map((r) => r.id);
    const st = await embedded(s, token);
    out.embeddings = [st.entries, st.embedded, st.queued, st.stale, st.model];
    out.trace = await get('/api/traces/mig-1');
    out.log = await get('/api/traces/mig-1/knowledge_log');
    out.session = await get('/api/sessions/mig-session');
    return out;
}

test('migrate-to: an SQLite stack moves to PostgreSQL, checked, and is served the same', { skip, timeout: 240000 }, async () => {
    // ---- an SQLite stack, filled through the API
    const emb = await startFakeEmbed({ dim: 64 });
    cleanup.push(() => emb.close());
    const s = await startStack({ ...SQLITE, ...embedEnv(emb) }, { sqlite: true });
    cleanup.push(() => s.stop());
    const agent = newToken(s.dir, 'default', 'agent');
    const revoked = newToken(s.dir, 'default', 'reader');
    const api = (method, p, body, token = agent) => s.api(method, p, { token, body });

    const texts = [
        ['Tundra sled route planning by wind', 'Check the wind forecast before choosing a sled route.', ['tundra', 'wind']],
        ['Tundra sled route planning by snow depth', 'Deep snow slows the sled: measure it first.', ['tundra', 'snow']],
        ['数据库迁移之前先备份', '迁移数据库之前，先做一次完整备份，再核对每张表的行数。', ['数据库', '迁移']],
        ['建立索引要看查询', '先看慢查询，再为常用的条件建立索引。数据库会更快。', ['索引']],
        ['Empty strings and NULLs differ', "An empty description '' is not a missing one.", []],
    ];
    const ids = [];
    for (const [scenario, content, tags] of texts) ids.push(ok(await api('POST', '/api/knowledge', { scenario, content, tags, score: 3 + (ids.length % 3) })).id);
    // cases, a score, feedback
    ok(await api('PUT', `/api/knowledge/${ids[0]}`, { add_helpful_case: { case_id: 'c1', scenario: 'windy day', result: 'fine' }, add_harmful_case: { case_id: 'c2' } }));
    ok(await api('PUT', `/api/knowledge/${ids[2]}`, { add_helpful_case: { case_id: '案例', scenario: '备份' }, update_score: 5 }));
    ok(await api('POST', '/api/knowledge/batch_update', { feedback_list: [{ knowledge_id: ids[1], is_effective: false, feedback: 'snow depth is not enough' }] }));
    // an edit and a revert: four revisions
    const e = ok(await api('GET', `/api/knowledge/${ids[3]}`));
    ok(await api('POST', '/api/knowledge/write', { category: e.category, path: e.path, content: '---\ntitle: 索引\n---\n\n改写后的内容：索引。\n' }));
    ok(await api('POST', `/api/knowledge/${ids[3]}/revert`, { version: 1 }, s.admin));
    // a deleted entry (in the trash, out of search)
    ok(await s.api('DELETE', `/api/knowledge/${ids[4]}`, { token: s.admin }));
    // a typed link (docs/conflicts.md): its list before and after the move
    ok(await api('POST', `/api/knowledge/${ids[0]}/links`, { to: ids[1], type: 'contradicts', reason: '风 or snow' }));
    const linksBefore = ok(await api('GET', `/api/knowledge/${ids[0]}/links`));
    // an entry's time (docs/conflicts.md "Time"): in its answers before and after
    ok(await api('PUT', `/api/knowledge/${ids[1]}`, { review_after: '2999-01-01', pinned: true }));
    // a trace: injections through a search, evaluations rolled up
    ok(await api('POST', '/api/traces', { trace_id: 'mig-1', task: 'Plan a sled route' }));
    const found = ok(await api('GET', `/api/knowledge/search?q=${encodeURIComponent('tundra sled route')}&top_k=5&min_score=1&trace_id=mig-1&goal_id=1&sequence=7`));
    assert.ok(found.results.length >= 2);
    const verdicts = [
        { knowledge_id: ids[0], eval_status: 'helpful', reason: 'wind mattered' },
        { knowledge_id: ids[1], eval_status: 'unused' },
    ];
    ok(await api('POST', '/api/traces/mig-1/evaluations', { trigger: 'goal_completion', output: JSON.stringify({ evaluations: verdicts }) }));
    // a session, a browser login (a blob key), a revoked token
    ok(await api('POST', '/api/sessions', { id: 'mig-session', title: '会话', tables: [{ id: 't1', note: "quote ' and \\ backslash" }] }));
    const login = await s.api('POST', '/api/auth/login', { body: { token: s.admin }, headers: { Origin: s.base, 'Sec-Fetch-Site': 'same-origin' } });
    ok(login);
    const cookie = { Cookie: login.headers['set-cookie'][0].split(';')[0], 'Sec-Fetch-Site': 'same-origin' };
    ok(await s.api('GET', '/api/auth/me', { headers: cookie }));
    assert.equal(knowhub(s.dir, ['token', 'revoke', tokenId(revoked)]).status, 0);
    err(await s.api('GET', '/api/auth/me', { token: revoked }), 'UNAUTHORIZED', 401);

    // the review queue (docs/review.md): a policy, a token's own, a proposal left pending
    ok(await s.api('PUT', '/api/review/policy', { token: s.admin, body: { policy: 'agent_writes' } }));
    const watched = ok(await s.api('POST', '/api/tokens', { token: s.admin, body: { role: 'agent', label: 'watched', review: 'all' } })).token;
    const held = ok(await api('POST', '/api/knowledge', { scenario: '待审核的经验', content: "Held: quote ' and \\ backslash" }));
    assert.equal(held.status, 'pending');
    ok(await s.api('PUT', '/api/review/policy', { token: s.admin, body: { policy: 'off' } }));
    ok(await s.api('PUT', '/api/evidence/policy', { token: s.admin, body: { half_life_days: 45 } }));
    const queueBefore = ok(await s.api('GET', `/api/review/${held.proposal_id}`, { token: s.admin }));

    await embedded(s, s.admin);
    const before = await snapshot(s, s.admin, ids);
    assert.equal(before.embeddings[1], 4);
    const adminToken = s.admin;

    // ---- stopped, its files kept
    const kept = fs.mkdtempSync(path.join(os.tmpdir(), 'knowhub-migrate-'));
    cleanup.push(() => fs.rmSync(kept, { recursive: true, force: true }));
    const stop = spawnSync('bash', [path.join(ROOT, 'scripts/stack.sh'), 'stop', s.dir], { encoding: 'utf8' });
    assert.equal(stop.status, 0, stop.stderr);
    for (const f of ['knowhub.db', 'knowhub.db-wal', 'admin.token'])
        if (fs.existsSync(path.join(s.dir, f))) fs.copyFileSync(path.join(s.dir, f), path.join(kept, f));
    await s.stop();

    // ---- migrated into a new database
    const { name: db, url } = createDatabase();
    cleanup.push(() => dropDatabase(db));
    const m = knowhub(kept, ['migrate-to', url]);
    assert.equal(m.status, 0, m.stdout + m.stderr);
    const lines = m.stdout.trim().split('\n');
    const rows = {};
    for (const t of TABLES) {
        const line = lines.find((l) => l.startsWith(`${t}: `));
        assert.ok(line, `no line for ${t}:\n${m.stdout}`);
        const [, n, a, b] = line.match(/^\w+: (\d+) rows, checksum ([0-9a-f]{32}) = ([0-9a-f]{32}) ok$/) || [];
        assert.ok(n !== undefined && a === b, line);
        rows[t] = Number(n);
    }
    assert.ok(lines.includes('checks: ok'), m.stdout);
    assert.equal(rows.knowledge, 5);
    assert.equal(rows.tokens, 4);
    // the held write, and the conflict item the contradicts link queued
    assert.deepEqual([rows.review_policies, rows.token_reviews, rows.proposals], [1, 1, 2]);
    assert.equal(rows.spaces, 1);
    assert.ok(rows.knowledge_cases >= 3 && rows.knowledge_feedback >= 1 && rows.trace_rollups >= 1, m.stdout);
    assert.equal(rows.knowledge_revisions, 5 + 1 + 1 + 1); // creates, write, revert, delete
    assert.equal(rows.knowledge_links, 1);
    assert.equal(rows.evidence_policy, 1);
    assert.equal(psql(db, 'SELECT half_life_days FROM evidence_policy'), '45');
    assert.equal(rows.knowledge_time, 1);
    assert.equal(rows.traces, 1);
    assert.equal(rows.knowledge_log, found.results.length);
    assert.equal(rows.sessions, 1);
    assert.equal(rows.logins, 1);
    assert.ok(rows.vectors >= 4, m.stdout); // every active entry's (the deleted one's if it was made in time)
    assert.equal(rows.embed_queue, 0); // all embedded: not one queued again by the copy
    assert.match(m.stderr, /knowhub: knowledge: 5 rows/);
    assert.ok(!m.stdout.includes(db) && !m.stderr.includes(db), 'the URL is not printed');
    assert.equal(psql(db, 'SELECT count(*) FROM knowledge_terms'), '4'); // the active entries

    // ---- a second migrate-to is refused and writes nothing
    const counts = () => psql(db, 'SELECT ' + TABLES.map((t) => `(SELECT count(*) FROM ${t})`).join(" || ',' || ") + " || ',' || (SELECT last_value FROM knowledge_seq_seq)");
    const was = counts();
    const again = knowhub(kept, ['migrate-to', url]);
    assert.equal(again.status, 1);
    assert.match(again.stderr, /already holds data/);
    assert.equal(counts(), was);

    // ---- served from PostgreSQL: the same answers
    // on our database (sqlite: true only keeps startStack from making one of its own)
    const calls = emb.calls.length;
    const p = await startStack({ KNOWHUB_DATABASE_URL: url, ...embedEnv(emb) }, { sqlite: true, prepare: (dir) => fs.copyFileSync(path.join(kept, 'admin.token'), path.join(dir, 'admin.token')) });
    cleanup.push(() => p.stop());
    assert.equal(p.admin, adminToken);
    assert.equal(ok(await p.api('GET', '/api/auth/me', { token: adminToken })).role, 'admin');
    ok(await p.api('GET', '/api/auth/me', { token: agent }));
    err(await p.api('GET', '/api/auth/me', { token: revoked }), 'UNAUTHORIZED', 401);
    ok(await p.api('GET', '/api/auth/me', { headers: cookie })); // the login, found by its hash (a blob key)
    const afterMove = await snapshot(p, adminToken, ids);
    assert.deepEqual(ok(await p.api('GET', `/api/review/${held.proposal_id}`, { token: adminToken })), queueBefore);
    assert.equal(ok(await p.api('POST', '/api/knowledge', { token: watched, body: { scenario: 'watched', content: 'still held' } })).status, 'pending');
    assert.deepEqual(ok(await p.api('GET', `/api/knowledge/${ids[0]}/links`, { token: adminToken })), linksBefore);
    const timed = ok(await p.api('GET', `/api/knowledge/${ids[1]}`, { token: adminToken }));
    assert.deepEqual([timed.review_after, timed.pinned], ['2999-01-01T00:00:00Z', true]);
    assert.deepEqual(afterMove.entries, before.entries);
    assert.deepEqual(afterMove.revisions, before.revisions);
    assert.deepEqual(afterMove.list, before.list);
    assert.deepEqual(afterMove.trash, before.trash);
    assert.deepEqual(afterMove.search, before.search);
    assert.deepEqual(afterMove.searchPost, before.searchPost);
    assert.deepEqual(afterMove.trace, before.trace);
    assert.deepEqual(afterMove.log, before.log);
    assert.deepEqual(afterMove.session, before.session);
    assert.deepEqual(afterMove.embeddings, before.embeddings);
    // the queries were embedded again (a new process), no entry was
    const again2 = emb.calls.slice(calls).flatMap((c) => c.inputs);
    assert.ok(again2.length > 0 && again2.every((t) => !texts.some(([scenario]) => t.startsWith(scenario))), JSON.stringify(again2));
    assert.ok(before.search['数据库 迁移'].includes(ids[2]), JSON.stringify(before.search));
    for (const q of ['sled route', 'tundra wind', '索引', 'vector: sled route', 'hybrid: 数据库 迁移']) assert.ok(before.search[q].length > 0, q);

    // new rows continue after the copied keys (identity sequences set past them)
    const made = ok(await p.api('POST', '/api/knowledge', { token: agent, body: { scenario: 'After the move', content: 'A new entry on PostgreSQL.' } }));
    assert.equal(Number(psql(db, `SELECT seq FROM knowledge WHERE id = '${made.id}'`)), 6);
    assert.deepEqual((ok(await p.api('GET', '/api/knowledge/search?q=after%20move&min_score=1&mode=lexical', { token: agent }))).results.map((r) => r.id), [made.id]);

    // ---- a copy that differs is rolled back: a NUL byte, which SQLite keeps
    // and PostgreSQL's text cannot hold (only where the sqlite3 shell is)
    if (spawnSync('sqlite3', ['-version']).status !== 0) return;
    const bad = fs.mkdtempSync(path.join(os.tmpdir(), 'knowhub-migrate-bad-'));
    cleanup.push(() => fs.rmSync(bad, { recursive: true, force: true }));
    fs.copyFileSync(path.join(kept, 'knowhub.db'), path.join(bad, 'knowhub.db'));
    const nul = spawnSync('sqlite3', [path.join(bad, 'knowhub.db'), `UPDATE knowledge SET description = 'a' || char(0) || 'b' WHERE id = '${ids[0]}'`]);
    assert.equal(nul.status, 0, String(nul.stderr));
    const { name: db2, url: url2 } = createDatabase();
    cleanup.push(() => dropDatabase(db2));
    const m2 = knowhub(bad, ['migrate-to', url2]);
    assert.equal(m2.status, 1, m2.stdout + m2.stderr);
    assert.match(m2.stdout, /^knowledge: 5 rows, checksum ([0-9a-f]{32}) = (?!\1)[0-9a-f]{32} DIFFERS$/m);
    assert.match(m2.stdout, /^tokens: 4 rows, .* ok$/m);
    assert.match(m2.stderr, /nothing was committed: 1 table differs from the source: rolled back/);
    assert.equal(psql(db2, 'SELECT (SELECT count(*) FROM knowledge) + (SELECT count(*) FROM tokens) + (SELECT count(*) FROM knowledge_terms)'), '0');
});
