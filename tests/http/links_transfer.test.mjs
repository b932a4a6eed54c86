// Typed links beyond REST (docs/conflicts.md "Links in front matter" and
// "Links through export and import"): the file view's front matter shows an
// entry's outgoing links and a write with those keys makes them; links
// survive an export -> import (JSON Lines and a knowledge tree); an import
// runs the conflict check on what it writes.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { ok } from './lib/expect.mjs';
import { fileView, knowhub, outputLines, tempDir } from './lib/files_helpers.mjs';

let s;
before(async () => (s = await startStack()));
after(async () => s?.stop());

let n = 0;
const space = (prefix = 'lt') => {
    const name = `${prefix}-${++n}`;
    const admin = s.token(name, 'admin', 'lt-admin');
    return { name, admin, agent: s.token(name, 'agent', 'lt-agent'), files: fileView(s, admin) };
};
const doc = (title, body, extra = '') => `---\ntitle: ${title}\n${extra}---\n${body}\n`;
const links = async (v, id) => ok(await s.api('GET', `/api/knowledge/${id}/links`, { token: v.admin })).items;
const outLinks = async (v, id) =>
    (await links(v, id)).filter((l) => l.direction === 'out').map((l) => [l.type, `${l.other.category}/${l.other.path}`, l.other.status]).sort();

/** Four documents a-d in experiences/ of v; a links to b (supersedes), c (contradicts), d (refines) and rules/r.md (related). */
async function linkedSpace(v) {
    const ids = {};
    for (const [p, t] of [['a.md', 'Deploy with blue green'], ['b.md', 'Deploy in place'], ['c.md', 'Deploy on Fridays'], ['d.md', 'Blue green for the API']])
        ids[p] = ok(await v.files.write('experiences', p, doc(t, `Notes about ${t.toLowerCase()} and nothing else ${p}.`))).id;
    ids['r.md'] = ok(await v.files.write('rules', 'r.md', doc('Deploy rule', 'Every deploy has a rollback plan.', 'description: rollbacks\nalwaysApply: true\n'))).id;
    for (const [to, type] of [['b.md', 'supersedes'], ['c.md', 'contradicts'], ['d.md', 'refines'], ['r.md', 'related']])
        ok(await s.api('POST', `/api/knowledge/${ids['a.md']}/links`, { token: v.admin, body: { to: ids[to], type, reason: `a ${type} ${to}` } }));
    return ids;
}

const ALL_FOUR = [
    ['contradicts', 'experiences/c.md', 'active'],
    ['refines', 'experiences/d.md', 'active'],
    ['related', 'rules/r.md', 'active'],
    ['supersedes', 'experiences/b.md', 'merged'],
];

describe('links in front matter', () => {
    test('a read shows the outgoing links; a document without links reads byte for byte as written', async () => {
        const v = space();
        const plain = doc('Plain note', 'Nothing links here.');
        ok(await v.files.write('experiences', 'plain.md', plain));
        assert.equal(ok(await v.files.read('experiences', 'plain.md')).content, plain);
        const ids = await linkedSpace(v);
        const a = ok(await v.files.read('experiences', 'a.md'));
        assert.match(a.content, /^---\ntitle: Deploy with blue green\n/);
        assert.match(a.content, /\nsupersedes: \[experiences\/b\.md\]\ncontradicts: \[experiences\/c\.md\]\nrefines: \[experiences\/d\.md\]\nrelated: \[rules\/r\.md\]\n---\nNotes about/);
        // the other side shows no key: the front matter holds outgoing links only
        assert.doesNotMatch(ok(await v.files.read('experiences', 'c.md')).content, /contradicts|supersedes|refines|related/);
        assert.ok(ids['a.md']);
    });

    test('a write with link keys makes them; an absent key leaves links alone; an empty list removes them', async () => {
        const v = space();
        const b = ok(await v.files.write('experiences', 'b.md', doc('Cache headers', 'Set cache headers on static files.')));
        const c = ok(await v.files.write('experiences', 'f/c.md', doc('Cache busting', 'Add a hash to static file names.')));
        const a = ok(await v.files.write('experiences', 'a.md', doc('CDN setup', 'Put the CDN in front of static files.', 'related: [b.md, experiences/f/c.md]\n')));
        assert.deepEqual(a.links, { added: 2, removed: 0, warnings: [] });
        assert.deepEqual(await outLinks(v, a.id), [['related', 'experiences/b.md', 'active'], ['related', 'experiences/f/c.md', 'active']]);
        const l = (await links(v, a.id))[0];
        assert.equal(l.reason, 'front matter');
        // the document as read writes back unchanged
        const read = ok(await v.files.read('experiences', 'a.md'));
        const again = ok(await v.files.write('experiences', 'a.md', read.content));
        assert.deepEqual(again.links, { added: 0, removed: 0, warnings: [] });
        // no key: links unchanged, and no links answer
        const nokey = ok(await v.files.write('experiences', 'a.md', doc('CDN setup', 'Put the CDN in front of all static files.')));
        assert.equal(nokey.links, undefined);
        assert.equal((await outLinks(v, a.id)).length, 2);
        // one listed: the other goes
        const one = ok(await v.files.write('experiences', 'a.md', doc('CDN setup', 'Put the CDN in front of all static files.', 'related: experiences/f/c.md\n')));
        assert.deepEqual(one.links, { added: 0, removed: 1, warnings: [] });
        assert.deepEqual(await outLinks(v, a.id), [['related', 'experiences/f/c.md', 'active']]);
        const none = ok(await v.files.write('experiences', 'a.md', doc('CDN setup', 'Put the CDN in front of all static files.', 'related: []\n')));
        assert.deepEqual(none.links, { added: 0, removed: 1, warnings: [] });
        assert.deepEqual(await outLinks(v, a.id), []);
        assert.ok(b.id && c.id);
    });

    test('supersedes retires its target; unknown paths and refused links are warnings, the write stands', async () => {
        const v = space();
        const old = ok(await v.files.write('experiences', 'old.md', doc('Quarter for revenue', 'Group revenue by the fiscal quarter.')));
        const w = ok(await v.files.write('experiences', 'new.md', doc('Quarter for revenue', 'Group revenue by the calendar quarter.', 'supersedes: [old.md]\nrelated: [nowhere.md]\n')));
        assert.equal(w.links.added, 1);
        assert.deepEqual(w.links.warnings.map((x) => [x.type, x.path, x.code]), [['related', 'nowhere.md', 'link_target_not_found']]);
        // the old entry is retired: gone from reads, in the trash as merged into the new one
        assert.equal((await s.api('GET', `/api/knowledge/${old.id}`, { token: v.admin })).json.status, 'error');
        const trash = ok(await s.api('POST', '/api/knowledge/trash', { token: v.admin, body: {} })).items;
        assert.ok(trash.some((t) => t.path === 'old.md'), JSON.stringify(trash));
        assert.match(ok(await v.files.read('experiences', 'new.md')).content, /\nsupersedes: \[experiences\/old\.md\]\n/);
        // writing it back keeps the retired target linked (its path is free, the link names it)
        const back = ok(await v.files.write('experiences', 'new.md', ok(await v.files.read('experiences', 'new.md')).content));
        assert.deepEqual(back.links, { added: 0, removed: 0, warnings: [] });
        // an agent may not supersede: a warning, its write is done
        const agentFiles = fileView(s, v.agent);
        ok(await agentFiles.write('experiences', 'x.md', doc('Chart colours', 'Use the brand palette for charts.')));
        const y = ok(await agentFiles.write('experiences', 'y.md', doc('Chart colours 2', 'Use a colour blind palette for charts.', 'supersedes: [x.md]\n')));
        assert.deepEqual(y.links.warnings.map((x) => [x.type, x.path, x.code]), [['supersedes', 'x.md', 'role_forbidden']]);
        assert.equal(ok(await v.files.read('experiences', 'x.md')).path, 'x.md');
        // removing the key's entry brings the superseded one back
        const un = ok(await v.files.write('experiences', 'new.md', doc('Quarter for revenue', 'Group revenue by the calendar quarter.', 'supersedes: []\n')));
        assert.deepEqual(un.links, { added: 0, removed: 1, warnings: [] });
        assert.equal(ok(await s.api('GET', `/api/knowledge/${old.id}`, { token: v.admin })).id, old.id);
    });
});

describe('links in revisions', () => {
    test('a revision keeps the link keys it was written with; a revert to it applies them again', async () => {
        const v = space();
        const b = ok(await v.files.write('experiences', 'b.md', doc('Retry budget', 'Retry failed calls with a budget.')));
        const a1 = ok(await v.files.write('experiences', 'a.md', doc('Backoff', 'Back off exponentially between retries.', 'related: [b.md]\n')));
        const a2 = ok(await v.files.write('experiences', 'a.md', doc('Backoff', 'Back off exponentially between retries.', 'related: []\n')));
        assert.deepEqual(a2.links, { added: 0, removed: 1, warnings: [] });
        const revs = ok(await s.api('GET', `/api/knowledge/${a1.id}/revisions`, { token: v.admin })).items;
        const first = revs.find((r) => r.version === a1.version);
        assert.match(JSON.stringify(first), /related: \[b\.md\]/, 'the revision holds the link keys');
        const back = ok(await s.api('POST', `/api/knowledge/${a1.id}/revert`, { token: v.admin, body: { version: a1.version } }));
        assert.deepEqual(back.links, { added: 1, removed: 0, warnings: [] });
        assert.deepEqual(await outLinks(v, a1.id), [['related', 'experiences/b.md', 'active']]);
        assert.ok(b.id);
    });
});

describe('links through export and import', () => {
    test('JSON Lines: all four types survive GET /api/knowledge/export -> knowhub import, the superseded entry retired again', async () => {
        const v = space();
        await linkedSpace(v);
        const r = await s.api('GET', '/api/knowledge/export', { token: v.admin });
        assert.equal(r.status, 200);
        const lines = r.text.trim().split('\n').map((x) => JSON.parse(x));
        // the superseded entry is in the export (after the one that superseded it)
        assert.deepEqual(lines.map((x) => `${x.category}/${x.path}`), ['experiences/a.md', 'experiences/b.md', 'experiences/c.md', 'experiences/d.md', 'rules/r.md']);
        const file = path.join(tempDir(), 'export.jsonl');
        fs.writeFileSync(file, r.text);
        const w = space('lt-in');
        const imp = knowhub(s.dir, ['import', file, '--space', w.name]);
        assert.equal(imp.status, 0, imp.stdout + imp.stderr);
        assert.match(imp.stderr, /4 link\(s\) made from front matter, 0 not made/);
        const a = ok(await w.files.read('experiences', 'a.md'));
        assert.deepEqual(await outLinks(w, a.id), ALL_FOUR);
        // b is retired in the new space too, and the lists do not show it
        const list = ok(await w.files.list('experiences')).items.map((x) => x.path);
        assert.deepEqual(list.sort(), ['a.md', 'c.md', 'd.md']);
        // importing the export again changes nothing
        const again = knowhub(s.dir, ['import', file, '--space', w.name, '--on-conflict', 'overwrite']);
        assert.equal(again.status, 0, again.stdout + again.stderr);
        assert.deepEqual(await outLinks(w, a.id), ALL_FOUR);
    });

    test('a knowledge tree: knowhub export DIR -> knowhub import DIR keeps the links', async () => {
        const v = space();
        await linkedSpace(v);
        const dir = path.join(tempDir(), 'tree');
        const ex = knowhub(s.dir, ['export', dir, '--space', v.name]);
        assert.equal(ex.status, 0, ex.stdout + ex.stderr);
        assert.match(fs.readFileSync(path.join(dir, 'experiences/a.md'), 'utf8'), /\nsupersedes: \[experiences\/b\.md\]\n/);
        assert.ok(fs.existsSync(path.join(dir, 'experiences/b.md')));
        const w = space('lt-tree');
        const imp = knowhub(s.dir, ['import', dir, '--space', w.name]);
        assert.equal(imp.status, 0, imp.stdout + imp.stderr);
        const a = ok(await w.files.read('experiences', 'a.md'));
        assert.deepEqual(await outLinks(w, a.id), ALL_FOUR);
    });

    test('an import with an unknown link target says so in a line and imports the document', async () => {
        const src = tempDir();
        fs.mkdirSync(path.join(src, 'experiences'));
        fs.writeFileSync(path.join(src, 'experiences/a.md'), doc('Alone', 'A note that names a missing one.', 'related: [experiences/missing.md]\n'));
        const w = space('lt-miss');
        const imp = knowhub(s.dir, ['import', src, '--space', w.name]);
        assert.equal(imp.status, 0, imp.stdout + imp.stderr);
        assert.deepEqual(outputLines(imp.stdout), ['imported experiences/a.md', 'unlinked experiences/a.md: related experiences/missing.md: No document at this path']);
    });
});

describe('the conflict check on import', () => {
    test('each imported document is checked; a contradiction is reported and linked', async () => {
        const src = tempDir();
        fs.mkdirSync(path.join(src, 'experiences'));
        fs.writeFileSync(path.join(src, 'experiences/gzip-on.md'), doc('Gzip on the proxy', 'Always enable gzip compression on the nginx proxy for JSON answers.'));
        fs.writeFileSync(path.join(src, 'experiences/gzip-off.md'), doc('Gzip on the proxy', 'Never enable gzip compression on the nginx proxy for JSON answers.'));
        fs.writeFileSync(path.join(src, 'experiences/plot.md'), doc('Plot revenue', 'Resample by month and plot a line chart.'));
        const w = space('lt-check');
        const imp = knowhub(s.dir, ['import', src, '--space', w.name]);
        assert.equal(imp.status, 0, imp.stdout + imp.stderr);
        const conflicts = outputLines(imp.stdout).filter((l) => l.startsWith('conflict '));
        assert.equal(conflicts.length, 1, imp.stdout);
        assert.match(conflicts[0], /^conflict experiences\/gzip-on\.md: contradiction of experiences\/gzip-off\.md \(knowledge-\d{8}-[0-9a-f]{8}\), linked contradicts: opposite polarity/);
        assert.match(imp.stderr, /1 conflict\(s\) found/);
        const on = ok(await w.files.read('experiences', 'gzip-on.md'));
        assert.deepEqual(await outLinks(w, on.id), [['contradicts', 'experiences/gzip-off.md', 'active']]);
        // --no-conflict-check: none
        const x = space('lt-nocheck');
        const quiet = knowhub(s.dir, ['import', src, '--space', x.name, '--no-conflict-check']);
        assert.equal(quiet.status, 0, quiet.stdout + quiet.stderr);
        assert.ok(!quiet.stdout.includes('conflict '), quiet.stdout);
    });
});

describe('the conflict check at approval and in the REST import', () => {
    test('an approved proposal answers conflicts as the write would have, and links a contradiction', async () => {
        const v = space('lt-review');
        const editor = s.token(v.name, 'editor', 'lt-editor');
        const live = ok(await v.files.write('experiences', 'gzip-on.md', doc('Gzip on the proxy', 'Always enable gzip compression on the nginx proxy for JSON answers.')));
        ok(await s.api('PUT', '/api/review/policy', { token: v.admin, body: { policy: 'agent_writes' } }));
        const held = ok(await fileView(s, v.agent).write('experiences', 'gzip-off.md', doc('Gzip on the proxy', 'Never enable gzip compression on the nginx proxy for JSON answers.')));
        assert.ok(held.proposal_id, JSON.stringify(held));
        const d = ok(await s.api('POST', `/api/review/${held.proposal_id}/decide`, { token: editor, body: { decision: 'approve' } }));
        assert.equal(d.state, 'approved');
        assert.deepEqual(d.conflicts.map((c) => [c.id, c.verdict, c.link]), [[live.id, 'contradiction', 'contradicts']]);
        assert.deepEqual(await outLinks(v, d.result_id), [['contradicts', 'experiences/gzip-on.md', 'active']]);
        // a held document's link keys are applied at its approval
        const held3 = ok(await fileView(s, v.agent).write('experiences', 'gzip-json.md', doc('Gzip for JSON', 'Compress JSON answers of more than 1 KB.', 'related: [gzip-on.md]\n')));
        const d3 = ok(await s.api('POST', `/api/review/${held3.proposal_id}/decide`, { token: editor, body: { decision: 'approve' } }));
        assert.deepEqual(d3.links, { added: 1, removed: 0, warnings: [] });
        assert.deepEqual(await outLinks(v, d3.result_id), [['related', 'experiences/gzip-on.md', 'active']]);
        // a rejection writes nothing and checks nothing
        const held2 = ok(await fileView(s, v.agent).write('experiences', 'gzip-maybe.md', doc('Gzip on the proxy', 'Never enable gzip compression on the nginx proxy.')));
        const r = ok(await s.api('POST', `/api/review/${held2.proposal_id}/decide`, { token: editor, body: { decision: 'reject', reason: 'no' } }));
        assert.equal(r.conflicts, undefined);
    });

    test('POST /api/knowledge/import counts the conflicts and reports them', async () => {
        const v = space('lt-rest');
        ok(await v.files.write('rules', 'gzip.md', doc('Gzip on the proxy', 'Always enable gzip compression on the nginx proxy for JSON answers.', 'description: gzip\nalwaysApply: true\n')));
        const md = '# Rules\n\n## Gzip on the proxy\n\nNever enable gzip compression on the nginx proxy for JSON answers.\n';
        const d = ok(await s.api('POST', '/api/knowledge/import?format=agents_md', { token: v.admin, rawBody: md, headers: { 'Content-Type': 'text/markdown' } }));
        assert.equal(d.conflicts, 1, JSON.stringify(d));
        assert.ok(d.report.some((l) => /^conflict rules\/.*: contradiction of rules\/gzip\.md/.test(l)), JSON.stringify(d.report));
    });
});

describe('the conflict check in slim', () => {
    test('a member that contradicts its group is split off, listed in the job result and linked; the rest merges', async () => {
        const { waitJob } = await import('./lib/llmtest.mjs');
        const v = space('lt-slim');
        const common = 'The reporting service answers large JSON documents to the dashboards of the finance team every morning, ' +
            'and the proxy in front of it is the nginx instance that the platform team runs on the shared edge hosts in both regions, ' +
            'with its configuration kept in the infrastructure repository and reviewed by the platform team before each release.';
        const mk = async (content, score = 3) => ok(await s.api('POST', '/api/knowledge', { token: v.agent, body: { scenario: 'Serve JSON answers through the nginx proxy', content, score } })).id;
        // the survivor (the best quality) is the group's reference
        const on = await mk(`${common} Always enable gzip compression on the nginx proxy for JSON answers.`, 5);
        const off = await mk(`${common} Never enable gzip compression on the nginx proxy for JSON answers.`);
        const same = await mk(`${common} Always enable gzip compression on the nginx proxy for JSON answers`);
        const plan = ok(await s.api('POST', '/api/knowledge/slim', { token: v.agent, body: { dry_run: true } }));
        const grouped = plan.groups.flatMap((g) => [g.survivor.id, ...g.members.map((m) => m.id)]).sort();
        assert.deepEqual(grouped, [on, off, same].sort(), JSON.stringify(plan.groups));
        const job = await waitJob(s, v.agent, ok(await s.api('POST', '/api/knowledge/slim', { token: v.agent, body: {} })).id);
        assert.equal(job.status, 'done', JSON.stringify(job));
        assert.equal(job.result.conflicts.length, 1, JSON.stringify(job.result));
        const c = job.result.conflicts[0];
        assert.equal(c.verdict, 'contradiction');
        assert.equal(c.link, 'contradicts');
        assert.match(c.reason, /opposite polarity/);
        assert.deepEqual([c.member, c.id], [off, on]);
        const g = job.result.merged_groups[0];
        assert.deepEqual(g.conflicts, job.result.conflicts);
        assert.ok(!g.members.some((m) => m.id === c.member), 'the split member is not among the merged');
        // the contradicting one stays live, linked to the one it contradicts; the duplicate merged
        const live = ok(await s.api('GET', `/api/knowledge/${c.member}`, { token: v.agent }));
        assert.equal(live.id, c.member);
        const l = (await links(v, c.member)).filter((x) => x.type === 'contradicts');
        // (the check of each save linked them already; slim keeps the link, or makes it)
        assert.ok(l.some((x) => x.other.id === c.id && x.actor === 'conflict-check'), JSON.stringify(l));
        assert.deepEqual(g.members.map((m) => m.id), [same]);
        assert.equal((await s.api('GET', `/api/knowledge/${same}`, { token: v.agent })).json.status, 'error', 'the duplicate merged');
    });
});
