// Whole-space scans read a page at a time (fcgi/store/files.c: 256 entries
// after a (category, path) key, in one read snapshot), so an export or a file
// list of a large space never holds the space in memory on PostgreSQL, which
// hands results over whole. The pages join up exactly: every entry once, in
// byte order of category then path, across page boundaries and names that
// sort close together. On both backends.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { ok } from './lib/expect.mjs';

const EXPERIENCES = 600; // over two pages
const RULES = 3;

describe('scans in pages', () => {
    let s;
    const paths = [];
    before(async () => {
        s = await startStack();
        for (let i = 0; i < EXPERIENCES; i++) {
            // names that sort close together and across a folder: a/..., a-..., a.md
            const name = i % 3 === 0 ? `p${String(i).padStart(4, '0')}` : i % 3 === 1 ? `P-${i}` : `p_${i}`;
            const path = i % 5 === 0 ? `dir${i % 2}/${name}.md` : `${name}.md`;
            paths.push(path);
            ok(await s.api('POST', '/api/knowledge/write', {
                token: s.admin,
                body: { category: 'experiences', path, content: `---\ntitle: entry ${i}\n---\n\nbody ${i}\n` },
            }));
        }
        for (let i = 0; i < RULES; i++)
            ok(await s.api('POST', '/api/knowledge/write', {
                token: s.admin,
                body: { category: 'rules', path: `rule-${i}.md`, content: `---\ntitle: rule ${i}\n---\n\nrule body ${i}\n` },
            }));
    });
    after(async () => {
        await s?.stop();
    });

    const bytewise = (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b));

    test(`the file view lists all ${EXPERIENCES} experiences once, by path`, async () => {
        const d = ok(await s.api('POST', '/api/knowledge/list', { token: s.admin, body: { category: 'experiences' } }));
        const got = d.items.map((it) => it.path);
        assert.equal(got.length, EXPERIENCES);
        assert.equal(new Set(got).size, EXPERIENCES);
        assert.deepEqual(got, [...paths].sort(bytewise));
    });

    test('the export streams every active entry once, by category then path', async () => {
        const r = await s.api('GET', '/api/knowledge/export', { token: s.admin });
        assert.equal(r.status, 200, r.text.slice(0, 300));
        const lines = r.text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
        assert.equal(lines.length, EXPERIENCES + RULES);
        assert.equal(new Set(lines.map((e) => e.id)).size, EXPERIENCES + RULES);
        const keys = lines.map((e) => [e.category, e.path]);
        const sorted = [...keys].sort((a, b) => bytewise(a[0], b[0]) || bytewise(a[1], b[1]));
        assert.deepEqual(keys, sorted);
        assert.deepEqual(keys.slice(-RULES).map((k) => k[0]), Array(RULES).fill('rules'));
    });
});
