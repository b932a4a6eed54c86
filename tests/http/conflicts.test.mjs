// The conflict check on every write (docs/conflicts.md "The check on every
// write"): a save through the entry view (POST /api/knowledge) or the file
// view (POST /api/knowledge/write) answers `conflicts`, the live entries of
// the same category that the local detector finds the new one duplicates,
// contradicts or refines, with the reason; unrelated ones and other
// categories are left out; nothing is retired; a contradiction becomes a
// contradicts link (actor conflict-check), so a search shows both sides.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { ok } from './lib/expect.mjs';

let s;
before(async () => (s = await startStack()));
after(async () => s?.stop());

let n = 0;
const space = () => {
    const name = `conflicts-${++n}`;
    return { admin: s.token(name, 'admin', 'conflicts-admin'), agent: s.token(name, 'agent', 'conflicts-agent') };
};
const save = async (token, body) => ok(await s.api('POST', '/api/knowledge', { token, body }));

describe('the conflict check of a write', () => {
    test('opposite advice on the same target is a contradiction, with its reason; both stay live', async () => {
        const v = space();
        const a = await save(v.agent, { scenario: 'Serve JSON answers through the nginx proxy', content: 'Always enable gzip compression on the nginx proxy for JSON answers.' });
        assert.deepEqual(a.conflicts, []);
        const b = await save(v.agent, { scenario: 'Serve JSON answers through the nginx proxy', content: 'Never enable gzip compression on the nginx proxy for JSON answers.' });
        assert.equal(b.conflicts.length, 1, JSON.stringify(b.conflicts));
        const c = b.conflicts[0];
        assert.deepEqual([c.id, c.verdict, c.category], [a.id, 'contradiction', 'experiences']);
        assert.match(c.reason, /compression|gzip/);
        assert.ok(c.similarity > 0 && c.similarity <= 1);
        assert.equal(c.link, 'contradicts');
        // nothing is retired
        assert.equal(ok(await s.api('GET', `/api/knowledge/${a.id}`, { token: v.agent })).id, a.id);
        // the link, made by the check, and both sides in a search
        const links = ok(await s.api('GET', `/api/knowledge/${a.id}/links`, { token: v.agent })).items;
        assert.deepEqual(links.map((l) => [l.from, l.to, l.type, l.direction, l.actor]), [[b.id, a.id, 'contradicts', 'in', 'conflict-check']]);
        assert.equal(links[0].reason, c.reason);
        const hits = ok(await s.api('GET', '/api/knowledge/search?q=gzip+compression+nginx&top_k=5', { token: v.agent })).results;
        assert.deepEqual(hits.map((h) => [h.id, h.conflicts_with]).sort(), [[a.id, [b.id]], [b.id, [a.id]]].sort());
    });

    test('a different number for the same key and unit is a contradiction; the same text a duplicate', async () => {
        const v = space();
        const a = await save(v.agent, { scenario: 'Call the billing API from a batch job', content: 'Set the HTTP client timeout to 30 s for the billing API.' });
        const b = await save(v.agent, { scenario: 'Call the billing API from a batch job', content: 'Set the HTTP client timeout to 90 s for the billing API.' });
        assert.deepEqual(b.conflicts.map((c) => [c.id, c.verdict]), [[a.id, 'contradiction']]);
        const d = await save(v.agent, { scenario: 'Call the billing API from a batch job', content: 'Set the HTTP client timeout to 30 s for the billing API.' });
        const dup = d.conflicts.find((c) => c.id === a.id);
        assert.equal(dup?.verdict, 'duplicate', JSON.stringify(d.conflicts));
        assert.equal(dup.link, undefined, 'only a contradiction is linked');
    });

    test('unrelated entries and other categories are not listed (but an always-apply rule is, against_rule)', async () => {
        const v = space();
        const rule = await save(v.admin, { category: 'rules', path: 'gzip.md', scenario: 'Serve JSON answers through the nginx proxy', content: 'Always enable gzip compression on the nginx proxy for JSON answers.' });
        await save(v.agent, { scenario: 'Plot revenue by month', content: 'Resample by month and plot a line chart.' });
        const b = await save(v.agent, { scenario: 'Serve JSON answers through the nginx proxy', content: 'Never enable gzip compression on the nginx proxy for JSON answers.' });
        // an experience is also judged against the space's always-apply rules (the rule flag)
        assert.deepEqual(b.conflicts.map((c) => [c.id, c.category, c.verdict, c.against_rule]), [[rule.id, 'rules', 'contradiction', true]]);
        // a rule is judged within the rules only
        const r2 = await save(v.admin, { category: 'rules', path: 'gzip-2.md', scenario: 'Plot revenue by month', content: 'Never resample by month for a line chart.' });
        assert.deepEqual(r2.conflicts.filter((c) => c.category !== 'rules'), []);
    });

    test('the file view write answers conflicts too', async () => {
        const v = space();
        const w1 = ok(await s.api('POST', '/api/knowledge/write', { token: v.admin, body: { category: 'experiences', path: 'ops/vacuum.md', content: '---\ntitle: Vacuum the events table\n---\nAlways run VACUUM ANALYZE on the events table after a bulk delete.\n' } }));
        assert.deepEqual(w1.conflicts, []);
        const w2 = ok(await s.api('POST', '/api/knowledge/write', { token: v.admin, body: { category: 'experiences', path: 'ops/no-vacuum.md', content: '---\ntitle: Vacuum the events table\n---\nNever run VACUUM ANALYZE on the events table after a bulk delete.\n' } }));
        assert.deepEqual(w2.conflicts.map((c) => [c.id, c.path, c.verdict]), [[w1.id, 'ops/vacuum.md', 'contradiction']]);
        // writing the same document again: it is not its own conflict
        const again = ok(await s.api('POST', '/api/knowledge/write', { token: v.admin, body: { category: 'experiences', path: 'ops/vacuum.md', content: '---\ntitle: Vacuum the events table\n---\nAlways run VACUUM ANALYZE on the events table after a bulk delete.\n' } }));
        assert.ok(!again.conflicts.some((c) => c.id === w1.id));
    });
});
