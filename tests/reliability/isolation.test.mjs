// Isolation: two spaces x four roles (reader, agent, editor, admin) tour every
// route of fcgi/app/routes.c. Each role limit holds (403 exactly below the route's
// role, admin-only rules), and no request of one space ever reads or changes
// the other's entries, files, rules, traces, sessions, jobs or LLM usage: the
// answer is NOT_FOUND / TABLE_NOT_FOUND or empty, never the other's data, and
// a full snapshot of the victim space is the same after the tour. Also: a
// token revoked mid-run through the API is refused on the very next request,
// by the CLI (another process) within the bound a server keeps a verified
// token in memory (KNOWHUB_TOKEN_CACHE_MS, 1 s), the rate limit
// (KNOWHUB_RATE_LIMIT_LOOPBACK=1) answers 429 JSON and recovers, and the
// security headers are on static files and on every kind of API answer.
// Embeddings are on (the fake server): searches are hybrid, each space's
// vectors are its own, and the embeddings' status and backfill are toured too.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BIN, ROOT, assertNoBugs, startStack, tokenId } from '../http/lib/stack.mjs';
import { startFakeLlm } from '../http/lib/fakellm.mjs';
import { startFakeEmbed } from '../http/lib/fakeembed.mjs';
import { assertCommon, err, ok } from '../http/lib/expect.mjs';
import { assertSecurityHeaders, rank, rawHttp, ROLES, routeTable, sleep, waitFor } from './lib.mjs';

let s, llm, emb;
const spaces = {};
const routes = routeTable();
const figures = { requests: 0, forbidden: 0, crossSpaceDenied: 0 };

/** The two spaces: their mark (a word only in their own content, never sent by the other), names and tokens. */
function makeSpace(name, mark, prefix) {
    const tokens = Object.fromEntries(ROLES.map((r) => [r, s.token(name, r, `isolation ${r}`)]));
    return {
        name,
        mark,
        prefix,
        tokens,
        docPath: `${prefix}-dir/doc.md`,
        targetPath: `${prefix}-dir/target.md`,
        rulePath: `${prefix}-rule.md`,
        trace: { shared: `trace-${prefix}-shared`, only: `trace-${prefix}-only` },
        session: { shared: `session-${prefix}-shared`, only: `session-${prefix}-only` },
        entryIds: [],
        jobIds: [],
        llmCalls: 0,
    };
}

/** Fill a space with one of everything, all carrying its mark. */
async function populate(sp) {
    const { agent, admin } = sp.tokens;
    const M = sp.mark;
    const calls0 = llm.calls.length;
    const api = (m, p, token, body) => s.api(m, p, { token, body });
    const e1 = ok(await api('POST', '/api/knowledge', agent, { scenario: `sharedword ${M} first scenario`, content: `${M} content sharedword one`, tags_type: ['tool'], tags: [`${M}-tag`], agent_id: `${sp.prefix}-agent` }));
    const e2 = ok(await api('POST', '/api/knowledge', agent, { scenario: `sharedword ${M} second scenario`, content: `${M} content sharedword two`, tags_type: ['plan'] }));
    ok(await api('PUT', `/api/knowledge/${e1.id}`, agent, { add_helpful_case: { case_id: `${M}-case`, scenario: `${M} case`, result: `${M} result` }, update_score: 4 }));
    const b = ok(await api('POST', '/api/knowledge/batch_update', agent, { feedback_list: [{ knowledge_id: e2.id, is_effective: false, feedback: `${M} feedback`, case_id: `${M}-harm` }] }));
    assert.equal(b.succeeded, 1);
    const rule = ok(await api('POST', '/api/knowledge', admin, { category: 'rules', path: sp.rulePath, scenario: `${M} rule`, content: `${M} always do this`, description: `${M} rule description` }));
    const doc = ok(await api('POST', '/api/knowledge/write', agent, { category: 'experiences', path: sp.docPath, content: `---\ntitle: ${M} document\ntags: [${M}]\n---\n\nsharedword ${M} body of the document` }));
    const target = ok(await api('POST', '/api/knowledge/write', agent, { category: 'experiences', path: sp.targetPath, content: `sharedword ${M} target body` }));
    const gone = ok(await api('POST', '/api/knowledge/write', agent, { category: 'experiences', path: `${sp.prefix}-dir/gone.md`, content: `${M} deleted body` }));
    assert.equal(ok(await api('POST', '/api/knowledge/delete', agent, { category: 'experiences', path: `${sp.prefix}-dir/gone.md` })), null);
    sp.e1 = e1.id;
    sp.ruleId = rule.id;
    sp.entryIds.push(e1.id, e2.id, rule.id, doc.id, target.id, gone.id);
    for (const t of [sp.trace.shared, sp.trace.only]) {
        ok(await api('POST', '/api/traces', agent, { trace_id: t, task: `${M} task of ${t}` }));
        const found = ok(await api('GET', `/api/knowledge/search?q=sharedword&min_score=1&trace_id=${t}&goal_id=g1&sequence=3`, agent));
        assert.ok(found.count >= 2 && found.logged === true, JSON.stringify(found));
    }
    const ev = ok(await api('POST', `/api/traces/${sp.trace.only}/evaluations`, agent, { trigger: 'goal_completion', evaluations: [{ knowledge_id: e1.id, eval_status: 'helpful', reason: `${M} reason` }] }));
    assert.equal(ev.updated.length, 1);
    for (const id of [sp.session.shared, sp.session.only])
        ok(await api('POST', '/api/sessions', agent, { id, title: `${M} session`, tables: [{ id: 't1', names: [`${M}_field`] }, { id: 't2', derive: { trigger: { tableId: 't1' } }, dialog: [`${M} said`] }] }));
    const job = ok(await api('POST', '/api/knowledge/slim', agent, { threshold: 0.95 }));
    sp.jobIds.push(job.id);
    await waitFor(async () => ['done', 'failed'].includes(ok(await api('GET', `/api/jobs/${job.id}`, agent)).status), 20000, 'the slim job');
    // One pending proposal (docs/review.md), left in the queue with the policy back to off.
    ok(await api('PUT', '/api/review/policy', admin, { policy: 'agent_writes' }));
    const held = ok(await api('POST', '/api/knowledge', agent, { scenario: `${M} proposed scenario`, content: `${M} proposed content` }));
    assert.equal(held.status, 'pending');
    sp.proposalId = held.proposal_id;
    ok(await api('PUT', '/api/review/policy', admin, { policy: 'off' }));
    // Evidence ageing (docs/conflicts.md): a half-life of the space's own.
    sp.halfLife = 30 + sp.mark.length; // 39 and 41
    ok(await api('PUT', '/api/evidence/policy', admin, { half_life_days: sp.halfLife }));
    sp.llmCalls = llm.calls.length - calls0;
    assert.ok(sp.llmCalls > 0, 'the searches used the (fake) LLM router, so the space has usage');
}

/** Everything a space's admin can read about it, as one object. */
async function snapshot(sp) {
    const token = sp.tokens.admin;
    const get = async (m, p, body) => {
        const r = await s.api(m, p, { token, body });
        return m === 'GET' && p.startsWith('/api/knowledge/export') ? r.text : ok(r);
    };
    const snap = {};
    const list = await get('GET', '/api/knowledge?limit=100');
    snap.list = list;
    snap.entries = {};
    for (const id of sp.entryIds) {
        const one = await s.api('GET', `/api/knowledge/${id}`, { token });
        snap.entries[id] = {
            entry: one.json?.status === 'success' ? one.json.data : one.json?.error?.code,
            revisions: await get('GET', `/api/knowledge/${id}/revisions`),
            helpful: await get('GET', `/api/knowledge/${id}/cases?kind=helpful`),
            harmful: await get('GET', `/api/knowledge/${id}/cases?kind=harmful`),
        };
    }
    snap.files = {
        experiences: await get('POST', '/api/knowledge/list', { category: 'experiences' }),
        rules: await get('POST', '/api/knowledge/list', { category: 'rules' }),
        trash: await get('POST', '/api/knowledge/trash', {}),
        doc: await get('POST', '/api/knowledge/read', { category: 'experiences', path: sp.docPath }),
        target: await get('POST', '/api/knowledge/read', { category: 'experiences', path: sp.targetPath }),
    };
    snap.rules = await get('GET', '/api/knowledge/rules');
    snap.export = (await get('GET', '/api/knowledge/export')).split('\n').sort();
    snap.traces = await get('GET', '/api/traces?limit=100');
    for (const t of [sp.trace.shared, sp.trace.only]) {
        snap[t] = await get('GET', `/api/traces/${t}`);
        snap[`${t}/log`] = await get('GET', `/api/traces/${t}/knowledge_log`);
    }
    snap.sessions = await get('GET', '/api/sessions');
    for (const id of [sp.session.shared, sp.session.only]) snap[id] = await get('GET', `/api/sessions/${id}`);
    snap.jobs = await get('GET', '/api/jobs');
    for (const id of sp.jobIds) snap[id] = await get('GET', `/api/jobs/${id}`);
    snap.usage = await get('GET', '/api/llm/usage');
    snap.reviewPolicy = await get('GET', '/api/review/policy');
    snap.evidencePolicy = await get('GET', '/api/evidence/policy');
    snap.review = await get('GET', '/api/review?limit=100');
    snap.proposal = await get('GET', `/api/review/${sp.proposalId}`);
    return snap;
}

const isErr = (r, code) => r.json?.status === 'error' && r.json.error.code === code;

/**
 * One probe per route: the request an attacker of space `att` sends about the
 * victim `vic`'s objects, and what it must answer when the role may call it.
 * A route without a probe fails the tour, so a new route needs one here.
 */
const PROBES = {
    'GET /api/health': () => ({ m: 'GET', p: '/api/health', check: (r) => assert.equal(ok(r).ok, true) }),
    'GET /api/auth/me': (att, role) => ({ m: 'GET', p: '/api/auth/me', check: (r) => assert.deepEqual(ok(r), { space: att.name, role, token_id: tokenId(att.tokens[role]) }) }),
    'POST /api/auth/login': (att, role) => ({ m: 'POST', p: '/api/auth/login', body: { token: att.tokens[role] }, check: (r) => assert.equal(ok(r).space, att.name) }),
    'POST /api/auth/logout': () => ({ m: 'POST', p: '/api/auth/logout', body: {}, check: (r) => ok(r) }),
    'GET /api/knowledge': (att) => ({ m: 'GET', p: '/api/knowledge?limit=100', check: (r) => assert.ok(ok(r).items.some((e) => e.id === att.e1), 'its own entries are listed') }),
    'POST /api/knowledge': (att, role, vic) => ({ m: 'POST', p: '/api/knowledge', body: { scenario: 'sharedword created in the tour', content: 'tour content', path: vic.docPath.replace('doc', `created-${role}`) }, check: (r) => assert.ok(att.entryIds.push(ok(r).id)) }),
    'POST /api/knowledge/batch_update': (att, role, vic) => ({
        m: 'POST',
        p: '/api/knowledge/batch_update',
        body: { feedback_list: [{ knowledge_id: vic.e1, is_effective: true, case_id: `tour-${role}` }, { knowledge_id: vic.ruleId, is_effective: false, feedback: 'tour feedback' }] },
        check: (r) => {
            const d = ok(r);
            assert.equal(d.succeeded, 0);
            assert.ok(d.results.every((x) => x.status === 'error' && x.error.code === 'NOT_FOUND'), JSON.stringify(d));
        },
    }),
    'POST /api/knowledge/limits': () => ({ m: 'POST', p: '/api/knowledge/limits', body: {}, check: (r) => assert.ok(ok(r).limits) }),
    'POST /api/knowledge/list': (att) => ({ m: 'POST', p: '/api/knowledge/list', body: { category: 'experiences' }, check: (r) => assert.ok(ok(r).items.some((i) => i.path === att.docPath)) }),
    'POST /api/knowledge/read': (att, role, vic) => ({ m: 'POST', p: '/api/knowledge/read', body: { category: 'experiences', path: vic.docPath }, check: (r) => err(r, 'TABLE_NOT_FOUND') }),
    // Writing at the victim's path makes the attacker's own document there; the victim's stays as it was.
    'POST /api/knowledge/write': (att, role, vic) => ({ m: 'POST', p: '/api/knowledge/write', body: { category: 'experiences', path: vic.targetPath, content: `written by ${att.name} as ${role}` }, check: (r) => att.entryIds.push(ok(r).id) }),
    'POST /api/knowledge/rename': (att, role, vic) => ({ m: 'POST', p: '/api/knowledge/rename', body: { category: 'experiences', path: vic.docPath, new_path: `${att.prefix}-dir/stolen-${role}.md` }, check: (r) => err(r, 'TABLE_NOT_FOUND') }),
    'POST /api/knowledge/delete': (att, role, vic) => ({ m: 'POST', p: '/api/knowledge/delete', body: { category: 'experiences', path: vic.docPath }, check: (r) => err(r, 'TABLE_NOT_FOUND') }),
    'POST /api/knowledge/preview': () => ({ m: 'POST', p: '/api/knowledge/preview', body: { content: '# sharedword preview\n\nnothing stored' }, check: (r) => assert.match(ok(r).html, /sharedword preview/) }),
    'POST /api/knowledge/trash': () => ({ m: 'POST', p: '/api/knowledge/trash', body: {}, check: (r) => assert.ok(ok(r).items.length >= 1) }),
    'GET /api/knowledge/rules': (att) => ({ m: 'GET', p: '/api/knowledge/rules', check: (r) => assert.ok(ok(r).block.includes(att.mark)) }),
    'GET /api/knowledge/export': (att) => ({
        m: 'GET',
        p: '/api/knowledge/export',
        check: (r) => {
            assert.equal(r.status, 200);
            assert.match(r.headers['content-type'] || '', /ndjson/);
            const ids = r.text.split('\n').filter(Boolean).map((l) => JSON.parse(l).id);
            assert.ok(ids.includes(att.e1));
        },
    }),
    'POST /api/knowledge/context': (att) => ({ m: 'POST', p: '/api/knowledge/context', body: { question: 'sharedword document' }, check: (r) => assert.ok(JSON.stringify(ok(r)).includes(att.mark)) }),
    'POST /api/knowledge/search': (att) => ({ m: 'POST', p: '/api/knowledge/search', body: { query: 'sharedword' }, check: (r) => assert.ok(ok(r).results.length > 0) }),
    'POST /api/knowledge/distill-experience': (att) => ({
        m: 'POST',
        p: '/api/knowledge/distill-experience',
        body: { experience_context: { user_question: 'How did sales grow?', dialog: [], interaction: [], result_summary: { output_fields: ['region'] } }, category_hint: `${att.prefix}-distilled` },
        check: (r) => att.entryIds.push(ok(r).id),
    }),
    'POST /api/knowledge/slim': () => ({ m: 'POST', p: '/api/knowledge/slim', body: { dry_run: true }, check: (r) => assert.equal(ok(r).dry_run, true) }),
    'GET /api/knowledge/search': (att, role, vic) => ({
        m: 'GET',
        p: `/api/knowledge/search?q=sharedword&min_score=1&top_k=50${rank(role) >= rank('agent') ? `&trace_id=${vic.trace.shared}&goal_id=tour` : ''}`,
        check: (r) => {
            const d = ok(r);
            assert.ok(d.count > 0 && d.results.every((e) => !vic.entryIds.includes(e.id)));
        },
    }),
    'GET /api/knowledge/{id}': (att, role, vic) => ({ m: 'GET', p: `/api/knowledge/${vic.e1}`, check: (r) => err(r, 'NOT_FOUND') }),
    'PUT /api/knowledge/{id}': (att, role, vic) => ({ m: 'PUT', p: `/api/knowledge/${vic.e1}`, body: { add_harmful_case: { case_id: `tour-${role}`, scenario: 's', result: 'r' }, update_score: 1 }, check: (r) => err(r, 'NOT_FOUND') }),
    'DELETE /api/knowledge/{id}': (att, role, vic) => ({ m: 'DELETE', p: `/api/knowledge/${vic.e1}`, check: (r) => err(r, 'NOT_FOUND') }),
    'GET /api/knowledge/{id}/revisions': (att, role, vic) => ({ m: 'GET', p: `/api/knowledge/${vic.e1}/revisions`, check: (r) => err(r, 'NOT_FOUND') }),
    'GET /api/knowledge/{id}/cases': (att, role, vic) => ({ m: 'GET', p: `/api/knowledge/${vic.e1}/cases?kind=helpful`, check: (r) => err(r, 'NOT_FOUND') }),
    'POST /api/knowledge/{id}/revert': (att, role, vic) => ({ m: 'POST', p: `/api/knowledge/${vic.ruleId}/revert`, body: { version: 1 }, check: (r) => err(r, 'NOT_FOUND') }),
    'GET /api/knowledge/{id}/links': (att, role, vic) => ({ m: 'GET', p: `/api/knowledge/${vic.e1}/links`, check: (r) => err(r, 'NOT_FOUND') }),
    'POST /api/knowledge/{id}/links': (att, role, vic) => ({ m: 'POST', p: `/api/knowledge/${att.e1}/links`, body: { to: vic.e1, type: 'contradicts' }, check: (r) => err(r, 'NOT_FOUND') }),
    'DELETE /api/knowledge/{id}/links/{to}/{type}': (att, role, vic) => ({ m: 'DELETE', p: `/api/knowledge/${vic.e1}/links/${att.e1}/related`, check: (r) => err(r, 'NOT_FOUND') }),
    'GET /api/knowledge/stale': (att, role, vic) => ({ m: 'GET', p: '/api/knowledge/stale?limit=200', check: (r) => assert.ok(!JSON.stringify(ok(r)).includes(vic.e1), 'another space\'s entries are not its stale ones') }),
    // The same trace id in another space is another trace: the victim's keeps its task.
    'POST /api/traces': (att, role, vic) => ({ m: 'POST', p: '/api/traces', body: { trace_id: vic.trace.shared, task: `tour task ${role}` }, check: (r) => assert.equal(ok(r).trace_id, vic.trace.shared) }),
    'GET /api/traces': (att) => ({ m: 'GET', p: '/api/traces?limit=100', check: (r) => assert.ok(ok(r).items.some((t) => t.trace_id === att.trace.only)) }),
    'GET /api/traces/{trace_id}': (att, role, vic) => ({ m: 'GET', p: `/api/traces/${vic.trace.only}`, check: (r) => err(r, 'NOT_FOUND') }),
    'GET /api/traces/{trace_id}/knowledge_log': (att, role, vic) => ({ m: 'GET', p: `/api/traces/${vic.trace.only}/knowledge_log`, check: (r) => err(r, 'NOT_FOUND') }),
    'POST /api/traces/{trace_id}/knowledge_log': (att, role, vic) => ({ m: 'POST', p: `/api/traces/${vic.trace.only}/knowledge_log`, body: { knowledge_id: vic.e1, goal_id: 'tour' }, check: (r) => err(r, 'NOT_FOUND') }),
    'GET /api/traces/{trace_id}/knowledge_log/pending': (att, role, vic) => ({ m: 'GET', p: `/api/traces/${vic.trace.only}/knowledge_log/pending`, check: (r) => err(r, 'NOT_FOUND') }),
    'GET /api/traces/{trace_id}/eval_prompt': (att, role, vic) => ({ m: 'GET', p: `/api/traces/${vic.trace.only}/eval_prompt`, check: (r) => err(r, 'NOT_FOUND') }),
    'POST /api/traces/{trace_id}/evaluations': (att, role, vic) => ({
        m: 'POST',
        p: `/api/traces/${vic.trace.only}/evaluations`,
        body: { trigger: 'task_completion', evaluations: [{ knowledge_id: vic.e1, eval_status: 'harmful', reason: 'tour' }] },
        check: (r) => err(r, 'NOT_FOUND'),
    }),
    'GET /api/sessions': (att) => ({ m: 'GET', p: '/api/sessions', check: (r) => assert.ok(ok(r).items.some((x) => x.id === att.session.only)) }),
    // The same session id in another space is another session.
    'POST /api/sessions': (att, role, vic) => ({ m: 'POST', p: '/api/sessions', body: { id: vic.session.shared, title: `tour ${role}`, tables: [{ id: 't1' }] }, check: (r) => assert.equal(ok(r).title, `tour ${role}`) }),
    'GET /api/sessions/{id}': (att, role, vic) => ({ m: 'GET', p: `/api/sessions/${vic.session.only}`, check: (r) => err(r, 'NOT_FOUND') }),
    'DELETE /api/sessions/{id}': (att, role, vic) => ({ m: 'DELETE', p: `/api/sessions/${vic.session.only}`, check: (r) => err(r, 'NOT_FOUND') }),
    'DELETE /api/sessions/{id}/tables/{table_id}': (att, role, vic) => ({ m: 'DELETE', p: `/api/sessions/${vic.session.only}/tables/t1`, check: (r) => err(r, 'NOT_FOUND') }),
    'GET /api/jobs': (att) => ({ m: 'GET', p: '/api/jobs', check: (r) => assert.deepEqual(ok(r).items.map((j) => j.id), att.jobIds) }),
    'GET /api/jobs/{id}': (att, role, vic) => ({ m: 'GET', p: `/api/jobs/${vic.jobIds[0]}`, check: (r) => err(r, 'NOT_FOUND') }),
    'GET /api/llm/usage': () => ({ m: 'GET', p: '/api/llm/usage', check: (r) => assert.equal(ok(r).configured, true) }),
    'GET /api/embeddings': () => ({
        m: 'GET',
        p: '/api/embeddings',
        check: (r) => {
            const d = ok(r);
            assert.ok(d.configured === true && d.embedded <= d.entries, JSON.stringify(d));
        },
    }),
    // A backfill is a job of the caller's space: listed first from now on.
    'POST /api/embeddings/backfill': (att) => ({ m: 'POST', p: '/api/embeddings/backfill', body: {}, check: (r) => att.jobIds.unshift(ok(r).id) }),
    // Tokens and spaces: a space's admin sees, makes and revokes its own tokens only; the
    // victim's admin token survives a revoke (the victim's snapshot is read with it).
    'GET /api/spaces': (att) => ({ m: 'GET', p: '/api/spaces', check: (r) => assert.deepEqual(ok(r).items.map((x) => x.name), [att.name]) }),
    'GET /api/tokens': (att, role, vic) => ({
        m: 'GET',
        p: '/api/tokens',
        check: (r) => {
            const ids = ok(r).items.map((x) => x.id);
            assert.ok(ids.includes(tokenId(att.tokens.admin)));
            assert.ok(!Object.values(vic.tokens).some((t) => ids.includes(tokenId(t))), 'a victim token is listed');
        },
    }),
    'POST /api/tokens': (att) => ({ m: 'POST', p: '/api/tokens', body: { role: 'reader', label: 'tour' }, check: (r) => assert.equal(ok(r).space, att.name) }),
    'DELETE /api/tokens/{id}': (att, role, vic) => ({ m: 'DELETE', p: `/api/tokens/${tokenId(vic.tokens.admin)}`, check: (r) => err(r, 'NOT_FOUND') }),
    // The import writes into the caller's own space alone; an editor's rules are refused by name.
    'POST /api/knowledge/import': (att, role) => ({
        m: 'POST',
        p: '/api/knowledge/import?format=agents_md&on_conflict=rename',
        rawBody: `## ${att.prefix} imported rule\n\nimported by the tour as ${role}\n`,
        headers: { 'Content-Type': 'text/markdown' },
        check: (r) => {
            const d = ok(r);
            assert.equal(d.space, att.name);
            if (role === 'admin') assert.equal(d.imported, 1, JSON.stringify(d));
            else assert.deepEqual(d.report, [`refused AGENTS.md section 1 (${att.prefix} imported rule): rules are written by admins only`]);
        },
    }),
    'GET /api/overview': (att, role, vic) => ({
        m: 'GET',
        p: '/api/overview',
        check: (r) => {
            const d = ok(r);
            const listed = [...d.recent, ...d.most_injected, ...d.most_harmful].map((x) => x.id);
            assert.ok(listed.length > 0 && !listed.some((id) => vic.entryIds.includes(id)), JSON.stringify(d));
        },
    }),
    // The live streams: without Accept: text/event-stream the tour's plain GET is refused
    // (405, or INVALID_REQUEST for the panel's); what a stream carries across spaces is
    // tests/mcp/live.test.mjs's ("another space edits"). DELETE /mcp without a session: 404.
    'GET /mcp': () => ({ m: 'GET', p: '/mcp', check: (r) => assert.equal(r.status, 405) }),
    'DELETE /mcp': () => ({ m: 'DELETE', p: '/mcp', check: (r) => assert.equal(r.status, 404) }),
    'GET /api/events': () => ({ m: 'GET', p: '/api/events', check: (r) => err(r, 'INVALID_REQUEST') }),
    'GET /api/tools': () => ({ m: 'GET', p: '/api/tools', check: (r) => assert.ok(JSON.stringify(ok(r)).includes('knowledge_search')) }),
    // Metrics: open to loopback (the tour's case) whatever the token; counts only, never a space's data.
    'GET /metrics': () => ({ m: 'GET', p: '/metrics', check: (r) => assert.ok(r.status === 200 && r.text.includes('# TYPE knowhub_http_requests_total counter'), r.text.slice(0, 200)) }),
    // The review queue (docs/review.md): the caller's own space's alone.
    'GET /api/review/policy': () => ({ m: 'GET', p: '/api/review/policy', check: (r) => assert.equal(ok(r).policy, 'off') }),
    'PUT /api/review/policy': () => ({ m: 'PUT', p: '/api/review/policy', body: { policy: 'off' }, check: (r) => assert.equal(ok(r).policy, 'off') }),
    // Evidence ageing (docs/conflicts.md): the caller's own space's half-life alone.
    'GET /api/evidence/policy': (att) => ({ m: 'GET', p: '/api/evidence/policy', check: (r) => assert.equal(ok(r).half_life_days, att.halfLife) }),
    'PUT /api/evidence/policy': (att) => ({ m: 'PUT', p: '/api/evidence/policy', body: { half_life_days: att.halfLife }, check: (r) => assert.equal(ok(r).half_life_days, att.halfLife) }),
    'GET /api/review': (att) => ({ m: 'GET', p: '/api/review?state=pending', check: (r) => assert.deepEqual(ok(r).items.map((x) => x.id), [att.proposalId]) }),
    'GET /api/review/{id}': (att, role, vic) => ({ m: 'GET', p: `/api/review/${vic.proposalId}`, check: (r) => err(r, 'NOT_FOUND') }),
    'POST /api/review/{id}/decide': (att, role, vic) => ({ m: 'POST', p: `/api/review/${vic.proposalId}/decide`, body: { decision: 'approve' }, check: (r) => err(r, 'NOT_FOUND') }),
    // MCP tools run with the caller's role and space: a batch reaching for the victim's entry and file.
    'POST /mcp': (att, role, vic) => ({
        m: 'POST',
        p: '/mcp',
        body: [
            { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'knowledge_update', arguments: { knowledge_id: vic.e1, update_score: 1 } } },
            { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'knowledge_read', arguments: { category: 'experiences', path: vic.docPath } } },
            { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'knowledge_search', arguments: { q: 'sharedword', min_score: 1 } } },
            // Resources, completion and prompts: the victim's entry by id and by path, and the lists (assertNoLeak checks them).
            { jsonrpc: '2.0', id: 4, method: 'resources/read', params: { uri: `knowhub://entries/${vic.e1}` } },
            { jsonrpc: '2.0', id: 5, method: 'resources/read', params: { uri: `knowhub://experiences/${vic.docPath.split('/').map(encodeURIComponent).join('/')}` } },
            { jsonrpc: '2.0', id: 6, method: 'resources/list' },
            { jsonrpc: '2.0', id: 7, method: 'completion/complete', params: { ref: { type: 'ref/resource', uri: 'knowhub://entries/{id}' }, argument: { name: 'id', value: 'knowledge-' } } },
            { jsonrpc: '2.0', id: 8, method: 'prompts/get', params: { name: 'review_pending', arguments: {} } },
        ],
        check: (r) => {
            assert.equal(r.status, 200);
            const [upd, read, search, byId, byPath, list, ids, review] = [...r.json].sort((a, b) => a.id - b.id);
            const code = (x) => x.result?.structuredContent?.error?.code;
            assert.equal(code(upd), rank(role) >= rank('agent') ? 'NOT_FOUND' : 'FORBIDDEN', JSON.stringify(upd));
            assert.equal(code(read), 'TABLE_NOT_FOUND', JSON.stringify(read));
            assert.ok(!search.result.isError && JSON.stringify(search).includes(att.mark), JSON.stringify(search).slice(0, 300));
            assert.equal(byId.error?.code, -32002, JSON.stringify(byId));
            assert.equal(byPath.error?.code, -32002, JSON.stringify(byPath));
            assert.ok(list.result.resources.some((x) => x.uri === `knowhub://experiences/${att.docPath.split('/').map(encodeURIComponent).join('/')}`), 'its own document is listed');
            assert.ok(ids.result.completion.values.includes(att.e1), 'its own ids are completed');
            if (rank(role) >= rank('editor')) assert.ok(review.result.messages.length === 1, JSON.stringify(review).slice(0, 300));
            else assert.equal(review.error?.data?.code, 'FORBIDDEN', JSON.stringify(review));
        },
    }),
};

/** Checks on every answer the attacker gets: never a 5xx or 401, never the victim's marked text, never a victim id it did not send. */
function assertNoLeak(r, req, vic, what) {
    assert.ok(r.status < 500 && r.status !== 401, `${what}: HTTP ${r.status} ${r.text.slice(0, 200)}`);
    assert.ok(!r.text.includes(vic.mark), `${what}: the victim's text leaked: ${r.text.slice(0, 400)}`);
    const sent = `${req.p} ${JSON.stringify(req.body ?? '')}`;
    for (const id of [...vic.entryIds, ...vic.jobIds, vic.proposalId])
        assert.ok(!r.text.includes(id) || sent.includes(id), `${what}: the victim's id ${id} leaked`);
}

/** Every route, every role of `att`, aimed at `vic`; the victim's snapshot is checked after each route. */
async function tour(att, vic) {
    // The victim's own jobs (backfills from its tour) finish first: its snapshot holds still.
    await waitFor(async () => ok(await s.api('GET', '/api/jobs', { token: vic.tokens.reader })).items.every((j) => ['done', 'failed'].includes(j.status)), 20000, `${vic.name}'s jobs`);
    // ... and its entries embedded: the embedding thread's calls land in its LLM ledger,
    // which the snapshot holds, as late as a second after the writes of its own tour.
    await waitFor(async () => ok(await s.api('GET', '/api/embeddings', { token: vic.tokens.reader })).stale === 0, 20000, `${vic.name}'s vectors`);
    const before = await snapshot(vic);
    const covered = new Set();
    for (const route of routes) {
        const key = `${route.method} ${route.pattern}`;
        const probe = PROBES[key];
        assert.ok(probe, `no isolation probe for ${key}: add one to PROBES`);
        covered.add(key);
        for (const role of ROLES) {
            const req = probe(att, role, vic);
            assert.equal(req.m, route.method, key);
            const what = `${att.name}/${role} ${key}`;
            const r = await s.api(req.m, req.p, { token: att.tokens[role], body: req.body, rawBody: req.rawBody, headers: req.headers });
            figures.requests++;
            assertNoLeak(r, req, vic, what);
            if (rank(role) < rank(route.role)) {
                err(r, 'FORBIDDEN', 403);
                figures.forbidden++;
                continue;
            }
            assert.notEqual(r.status, 403, `${what}: refused a role that may call it: ${r.text.slice(0, 200)}`);
            if (req.m !== 'GET' || !(req.p.startsWith('/api/knowledge/export') || req.p === '/metrics')) {
                if (req.p !== '/mcp') assertCommon(r);
            }
            try {
                req.check(r);
            } catch (e) {
                e.message = `${what}: ${e.message}\n${r.text.slice(0, 400)}`;
                throw e;
            }
            if (r.json?.status === 'error' && /NOT_FOUND/.test(r.json.error.code)) figures.crossSpaceDenied++;
        }
        if (['POST', 'PUT', 'DELETE'].includes(route.method))
            assert.deepEqual(await snapshot(vic), before, `${att.name}'s ${key} changed ${vic.name}`);
    }
    assert.equal(covered.size, routes.length);
    assert.deepEqual(await snapshot(vic), before, `${vic.name} changed during ${att.name}'s tour`);
}

before(async () => {
    llm = await startFakeLlm();
    emb = await startFakeEmbed({ dim: 256 });
    s = await startStack({ KNOWHUB_LLM_BASE_URL: llm.url, KNOWHUB_LLM_API_KEY: 'sk-test', KNOWHUB_EMBED_URL: emb.url });
    spaces.a = makeSpace('space-a', 'zulualpha', 'alpha');
    spaces.b = makeSpace('space-b', 'yankeebravo', 'bravo');
    await populate(spaces.a);
    await populate(spaces.b);
    // Every entry embedded before the tours, so no snapshot moves under them.
    for (const sp of [spaces.a, spaces.b])
        await waitFor(async () => ok(await s.api('GET', '/api/embeddings', { token: sp.tokens.reader })).stale === 0, 20000, `${sp.name}'s vectors`);
});
after(async () => {
    await s?.stop();
    await llm?.stop();
    await emb?.close();
    console.log(`# isolation: ${figures.requests} tour requests, ${figures.forbidden} refused by role (403), ${figures.crossSpaceDenied} cross-space reaches answered NOT_FOUND`);
});

describe('two spaces, every route, every role', () => {
    test('the route table is read from fcgi/app/routes.c and every route has a probe', () => {
        const keys = routes.map((r) => `${r.method} ${r.pattern}`);
        for (const k of ['GET /api/health', 'POST /mcp', 'PUT /api/knowledge/{id}', 'GET /api/llm/usage', 'DELETE /api/sessions/{id}/tables/{table_id}'])
            assert.ok(keys.includes(k), `${k} missing from the parsed table`);
        assert.deepEqual(keys.filter((k) => !PROBES[k]), [], 'routes without a probe');
        assert.deepEqual(Object.keys(PROBES).filter((k) => !keys.includes(k)), [], 'probes of routes that are gone');
    });

    test('each space sees its own LLM usage only', async () => {
        for (const sp of [spaces.a, spaces.b]) {
            const u = ok(await s.api('GET', '/api/llm/usage', { token: sp.tokens.reader }));
            const chat = u.items.filter((i) => !i.purpose.startsWith('embed'));
            assert.equal(chat.reduce((n, i) => n + i.calls, 0), sp.llmCalls, JSON.stringify(u));
            assert.ok(u.items.some((i) => i.purpose === 'embed'), 'its entries were embedded on its own ledger');
        }
    });

    test('space B x 4 roles tours every route against space A: role limits hold, A unchanged and unseen', async () => {
        await tour(spaces.b, spaces.a);
    });

    test('space A x 4 roles tours every route against space B: role limits hold, B unchanged and unseen', async () => {
        await tour(spaces.a, spaces.b);
    });

    test('rules are admin-only within a space: editor and agent get 403 on every rule change', async () => {
        const sp = spaces.a;
        for (const role of ROLES) {
            const token = sp.tokens[role];
            const rulePath = `tour-${role}-rule.md`;
            const attempts = [
                ['POST', '/api/knowledge', { category: 'rules', path: rulePath, scenario: 'r', content: 'a rule' }],
                ['POST', '/api/knowledge/write', { category: 'rules', path: rulePath.replace('.md', '-w.md'), content: 'a rule' }],
                ['POST', '/api/knowledge/rename', { category: 'rules', path: sp.rulePath, new_path: `renamed-${role}.md` }],
                ['POST', `/api/knowledge/${sp.ruleId}/revert`, { version: 1 }],
                ['DELETE', `/api/knowledge/${sp.ruleId}`],
            ];
            for (const [m, p, body] of attempts) {
                const r = await s.api(m, p, { token, body });
                if (role !== 'admin') {
                    err(r, 'FORBIDDEN', 403);
                    continue;
                }
                ok(r);
                if (p === '/api/knowledge/rename') {
                    // put it back for the next steps
                    ok(await s.api('POST', '/api/knowledge/rename', { token, body: { category: 'rules', path: `renamed-${role}.md`, new_path: sp.rulePath } }));
                }
            }
        }
        // The admin's delete went through: the rule is gone from the rules block, and comes back with revert.
        assert.ok(!ok(await s.api('GET', '/api/knowledge/rules', { token: sp.tokens.reader })).block.includes('always do this'));
        ok(await s.api('POST', `/api/knowledge/${sp.ruleId}/revert`, { token: sp.tokens.admin, body: {} }));
        assert.ok(ok(await s.api('GET', '/api/knowledge/rules', { token: sp.tokens.reader })).block.includes('always do this'));
    });
});

// A server keeps a verified token in memory for at most BOUND ms: a revoke
// through its API drops it at once, one by the CLI is seen within the bound.
const BOUND = 1000;

describe('revocation takes effect at once (through the API) or within the bound (the CLI)', () => {
    test('the very next request after a revoke through the API is 401, on a reused keep-alive connection too', async () => {
        for (const role of ROLES) {
            const t = s.token('space-a', role, `revoke ${role}`);
            ok(await s.api('GET', '/api/auth/me', { token: t }));
            ok(await s.api('GET', '/api/knowledge', { token: t }));
            const other = s.token('space-a', 'admin', `revoker of ${role}`);
            ok(await s.api('DELETE', `/api/tokens/${tokenId(t)}`, { token: other }));
            const r = await s.api('GET', '/api/knowledge', { token: t });
            err(r, 'UNAUTHORIZED', 401);
            assert.match(r.headers['www-authenticate'] || '', /^Bearer/);
            err(await s.api('POST', '/api/knowledge', { token: t, body: { scenario: 'x', content: 'y' } }), 'UNAUTHORIZED', 401);
        }
    });

    test('after `knowhub token revoke` every request is 401 once the bound has passed', async () => {
        const t = s.token('space-a', 'agent', 'revoke by the CLI');
        ok(await s.api('GET', '/api/knowledge', { token: t }));
        s.revoke(t);
        await sleep(BOUND);
        err(await s.api('GET', '/api/knowledge', { token: t }), 'UNAUTHORIZED', 401);
        err(await s.api('GET', '/api/auth/me', { token: t }), 'UNAUTHORIZED', 401);
    });

    test('a browser login dies with its token', async () => {
        const t = s.token('space-b', 'editor', 'revoke login');
        const login = await s.api('POST', '/api/auth/login', { body: { token: t } });
        const csrf = ok(login).csrf_token;
        const cookie = (login.headers['set-cookie'] || []).map((c) => c.split(';')[0]).join('; ');
        assert.match(cookie, /^kh_session=/);
        assert.equal(ok(await s.api('GET', '/api/auth/me', { headers: { Cookie: cookie } })).space, 'space-b');
        s.revoke(t);
        err(await s.api('GET', '/api/auth/me', { headers: { Cookie: cookie } }), 'UNAUTHORIZED', 401);
        err(await s.api('POST', '/api/sessions', { headers: { Cookie: cookie, 'X-CSRF-Token': csrf }, body: { tables: [] } }), 'UNAUTHORIZED', 401);
    });

    test('revoked by the CLI during a stream of 8 concurrent clients: every request sent once the bound passed after the revoke returned is 401', async () => {
        const t = s.token('space-a', 'agent', 'revoke under load');
        let revokedAt = 0;
        let stop = false;
        const after = [];
        let okBefore = 0;
        const client = async (i) => {
            for (let n = 0; n < 2000 && !stop; n++) {
                const sentAt = performance.now();
                const r = await s.api(n % 2 ? 'GET' : 'PUT', n % 2 ? '/api/knowledge?limit=1' : `/api/knowledge/${spaces.a.e1}`, {
                    token: t,
                    body: n % 2 ? undefined : { add_helpful_case: { case_id: `revoke-${i}-${n}`, scenario: 's', result: 'r' } },
                });
                if (revokedAt && sentAt > revokedAt + BOUND) after.push(r);
                // within the bound the token may still be taken, and then its
                // write rate (100 a second, the default) may answer 429
                else if (revokedAt && sentAt > revokedAt) assert.ok([200, 401].includes(r.status) || r.json?.error?.code === 'RATE_LIMITED', r.text);
                else if (r.status === 200) okBefore++;
                if (after.length >= 40) stop = true;
            }
        };
        const clients = Array.from({ length: 8 }, (_, i) => client(i));
        await waitFor(() => okBefore >= 40, 20000, 'requests before the revoke');
        await new Promise((resolve, reject) => {
            const p = spawn(BIN, ['token', 'revoke', tokenId(t)], { env: { ...process.env, ...s.cliEnv() }, stdio: ['ignore', 'ignore', 'pipe'] });
            let stderr = '';
            p.stderr.on('data', (d) => (stderr += d));
            p.on('error', reject);
            p.on('close', (code) => {
                revokedAt = performance.now();
                try {
                    assertNoBugs(stderr, 'knowhub token revoke');
                    code === 0 ? resolve() : reject(new Error(`revoke exited ${code}: ${stderr}`));
                } catch (e) {
                    reject(e);
                }
            });
        });
        await Promise.all(clients);
        assert.ok(after.length >= 40, `only ${after.length} requests after the revoke`);
        for (const r of after) err(r, 'UNAUTHORIZED', 401);
    });
});

describe('rate limit and security headers', () => {
    test('KNOWHUB_RATE_LIMIT_LOOPBACK=1 with 5r/s: 429 RATE_LIMITED in JSON with Retry-After, then it recovers', async () => {
        const rl = await startStack({ KNOWHUB_RATE_LIMIT: '5r/s', KNOWHUB_RATE_BURST: '5', KNOWHUB_RATE_LIMIT_LOOPBACK: '1' });
        try {
            const burst = await Promise.all(Array.from({ length: 40 }, () => rl.api('GET', '/api/knowledge?limit=1', { token: rl.admin })));
            const limited = burst.filter((r) => r.status === 429);
            const passed = burst.filter((r) => r.status === 200);
            assert.equal(limited.length + passed.length, 40, burst.map((r) => r.status).join(' '));
            assert.ok(limited.length >= 20 && passed.length >= 1 && passed.length <= 15, `${passed.length} passed, ${limited.length} limited`);
            for (const r of limited) {
                const e = err(r, 'RATE_LIMITED', 429);
                assert.equal(e.retry, true);
                assert.equal(r.headers['retry-after'], '1');
                assertSecurityHeaders(r.headers, '429');
            }
            // /mcp is limited by the same zone; static files are not limited at all.
            const pings = await Promise.all(Array.from({ length: 20 }, () => rl.api('POST', '/mcp', { token: rl.admin, body: { jsonrpc: '2.0', id: 1, method: 'ping' } })));
            assert.ok(pings.some((r) => r.status === 429), pings.map((r) => r.status).join(' '));
            for (const r of pings.filter((x) => x.status === 429)) err(r, 'RATE_LIMITED', 429);
            const statics = await Promise.all(Array.from({ length: 30 }, () => rl.api('GET', '/')));
            assert.ok(statics.every((r) => r.status === 200));
            await sleep(1500);
            ok(await rl.api('GET', '/api/knowledge?limit=1', { token: rl.admin }));
        } finally {
            await rl.stop();
        }
    });

    test('loopback is exempt by default: 100 concurrent requests, no 429', async () => {
        const burst = await Promise.all(Array.from({ length: 100 }, () => s.api('GET', '/api/health')));
        assert.deepEqual([...new Set(burst.map((r) => r.status))], [200]);
    });

    test('security headers on static files and on every kind of API answer', async () => {
        const i18n = fs.existsSync(path.join(ROOT, 'i18n')) ? fs.readdirSync(path.join(ROOT, 'i18n'), { recursive: true }).find((f) => f.endsWith('.json')) : null;
        const cases = [
            ['static /', s.api('GET', '/'), 200],
            ['static /index.html', s.api('GET', '/index.html'), 200],
            ['static /style.css', s.api('GET', '/style.css'), 200],
            ['static missing file', s.api('GET', '/no-such-file.js'), 404],
            ['API success', s.api('GET', '/api/health'), 200],
            ['API application error', s.api('GET', '/api/knowledge/knowledge-20200101-00000000', { token: s.admin }), 200],
            ['API 401', s.api('GET', '/api/knowledge'), 401],
            ['API 403', s.api('POST', '/api/knowledge', { token: spaces.a.tokens.reader, body: {} }), 403],
            ['API 404', s.api('GET', '/api/nope', { token: s.admin }), 404],
            ['API 405', s.api('PATCH', '/api/knowledge', { token: s.admin }), 405],
            ['API 413', s.api('POST', '/api/knowledge', { token: s.admin, rawBody: 'x'.repeat(2 << 20) }), 413],
            ['API export stream', s.api('GET', '/api/knowledge/export', { token: s.admin }), 200],
            ['MCP', s.api('POST', '/mcp', { token: s.admin, body: { jsonrpc: '2.0', id: 1, method: 'ping' } }), 200],
            ["nginx's own 400", rawHttp(s.port, 'GET /api/%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'), 400],
        ];
        if (i18n) cases.push([`static /i18n/${i18n}`, s.api('GET', `/i18n/${i18n}`), 200]);
        for (const [what, p, status] of cases) {
            const r = await p;
            assert.equal(r.status, status, `${what}: ${r.status}`);
            assertSecurityHeaders(r.headers, what);
        }
        // The page itself holds no inline script (the CSP would block it anyway).
        const html = fs.readFileSync(path.join(ROOT, 'web/index.html'), 'utf8');
        for (const tag of html.match(/<script\b[^>]*>/g) || []) assert.match(tag, /\bsrc=/, `inline script in web/index.html: ${tag}`);
        assert.doesNotMatch(html, /\son[a-z]+\s*=\s*["']/i, 'inline event handler in web/index.html');
    });
});
