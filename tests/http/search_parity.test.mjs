// Search parity (docs/search.md "On PostgreSQL"): the same knowledge on SQLite
// (FTS5) and on PostgreSQL (a GIN index over tsvectors of KnowHub's own
// tokens) gives the same answers — the same entries, in the same order, with
// the same scores — for both searches, over English, Chinese, identifiers,
// prefixes and category filters. Runs only when the suite runs on PostgreSQL
// (KNOWHUB_TEST_PG): it starts one stack on each backend.
// A second pair of stacks holds the long-text benchmark's entries
// (tests/bench/longtext/*.json, one space per file) and compares 100 of its
// questions, English and Chinese, answerable and not, in both views.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { onPostgres, startStack } from './lib/stack.mjs';
import { loadSets } from '../bench/lib/longtext-data.mjs';
import { createServed } from '../bench/lib/envelope.mjs';
import { ok } from './lib/expect.mjs';
import { canon, corpus, queries, scores } from './lib/search-corpus.mjs';

const SKIP = !onPostgres && 'needs PostgreSQL (KNOWHUB_TEST_PG): compares it with SQLite';

let lite, pg, liteAdmin, pgAdmin;
const LIMIT = 50;

describe('search parity: SQLite and PostgreSQL answer alike', { skip: SKIP }, () => {
    before(async () => {
        [lite, pg] = await Promise.all([startStack({}, { sqlite: true }), startStack()]);
        liteAdmin = lite.admin;
        pgAdmin = pg.admin;
        for (const body of corpus(360)) {
            ok(await lite.api('POST', '/api/knowledge', { token: liteAdmin, body }));
            ok(await pg.api('POST', '/api/knowledge', { token: pgAdmin, body }));
        }
    });
    after(async () => {
        await lite?.stop();
        await pg?.stop();
    });

    test('the file view (POST /api/knowledge/search): same results, same order, same scores', async () => {
        let compared = 0, nonEmpty = 0;
        for (const query of queries()) {
            const body = { query, max_results: LIMIT };
            const a = ok(await lite.api('POST', '/api/knowledge/search', { token: liteAdmin, body }));
            const b = ok(await pg.api('POST', '/api/knowledge/search', { token: pgAdmin, body }));
            assert.deepEqual(scores(b.results, 'score'), scores(a.results, 'score'), `query ${query}`);
            assert.deepEqual(canon(b.results, 'score', LIMIT), canon(a.results, 'score', LIMIT), `query ${query}`);
            compared++;
            if (a.results.length) nonEmpty++;
        }
        assert.ok(nonEmpty >= compared * 0.8, `${nonEmpty} of ${compared} queries found something`);
    });

    test('the entry view (GET /api/knowledge/search): same results and order, with filters', async () => {
        let nonEmpty = 0;
        const qs = queries();
        for (const [i, q] of qs.entries()) {
            const params = new URLSearchParams({ q, top_k: String(LIMIT), min_score: '1' });
            if (i % 4 === 0) params.set('category', 'experiences');
            const a = ok(await lite.api('GET', `/api/knowledge/search?${params}`, { token: liteAdmin }));
            const b = ok(await pg.api('GET', `/api/knowledge/search?${params}`, { token: pgAdmin }));
            assert.deepEqual(scores(b.results, 'relevance'), scores(a.results, 'relevance'), `query ${q}`);
            assert.deepEqual(canon(b.results, 'relevance', LIMIT), canon(a.results, 'relevance', LIMIT), `query ${q}`);
            if (a.results.length) nonEmpty++;
        }
        assert.ok(nonEmpty >= qs.length * 0.8, `${nonEmpty} of ${qs.length} queries found something`);
    });

    test('edits, deletes and reverts keep both indexes in step', async () => {
        // The same changes on both: retitle, delete, revert; then the searches agree again.
        for (const s of [lite, pg]) {
            const token = s === lite ? liteAdmin : pgAdmin;
            const list = ok(await s.api('GET', '/api/knowledge?limit=30', { token }));
            const sorted = list.items.sort((x, y) => x.title.localeCompare(y.title));
            const [edit, gone, back] = sorted;
            // a rewrite through the file view: a new title, words and tag
            ok(await s.api('POST', '/api/knowledge/write', {
                token,
                body: {
                    category: edit.category,
                    path: edit.path,
                    content: '---\ntitle: zebra_parity 斑马 rewritten\ntags: [zebra_tag]\n---\n\nstriped 斑马 body\n',
                },
            }));
            ok(await s.api('DELETE', `/api/knowledge/${gone.id}`, { token }));
            ok(await s.api('DELETE', `/api/knowledge/${back.id}`, { token }));
            ok(await s.api('POST', `/api/knowledge/${back.id}/revert`, { token, body: { version: 1 } }));
        }
        for (const query of ['zebra_parity', '斑马', 'zebra_tag', 'striped', ...queries().slice(0, 30)]) {
            const body = { query, max_results: LIMIT };
            const a = ok(await lite.api('POST', '/api/knowledge/search', { token: liteAdmin, body }));
            const b = ok(await pg.api('POST', '/api/knowledge/search', { token: pgAdmin, body }));
            assert.deepEqual(canon(b.results, 'score', LIMIT), canon(a.results, 'score', LIMIT), `query ${query}`);
        }
        const z = ok(await pg.api('POST', '/api/knowledge/search', { token: pgAdmin, body: { query: 'zebra_parity' } }));
        assert.equal(z.results.length, 1);
    });
});


// ---------------------------------------------------------------- long text

const LT_TOP = 10; // the benchmark's top 10
const LT_QUESTIONS = 100;

/** Exactly LT_QUESTIONS of the benchmark's questions, evenly spaced over all
 * of them in file order (question floor(i * n / 100)); every eighth is also
 * asked with include_weak. */
function longtextQuestions(sets) {
    const all = sets.flatMap((set) => set.questions.map((q, n) => ({ set, n: n + 1, q: q.q, answers: q.answers })));
    return Array.from({ length: LT_QUESTIONS }, (_, i) => ({ ...all[Math.floor((i * all.length) / LT_QUESTIONS)], weak: i % 8 === 0 }));
}

/** A result list as comparable rows: the benchmark key (from the id, else the
 * path longtext/<key>.md); `order`, the relevance that orders the list (the
 * entry view orders by quality first, the same for all: no feedback here), and
 * `scores`, every score field of the view, each to 6 places (as canon()
 * compares); the weak flag and the passage. */
function ltRows(results, fields, idToKey) {
    return results.map((r) => ({
        key: idToKey.get(r.id) ?? /^longtext\/(.+)\.md$/.exec(r.path ?? '')?.[1] ?? `?${r.id ?? r.path}`,
        order: Number(r.relevance).toFixed(6),
        scores: fields.map((f) => `${f} ${Number(r[f]).toFixed(6)}`).join(', '),
        weak: r.weak ?? false,
        passage: r.passage === undefined ? undefined : JSON.stringify(r.passage),
    }));
}
const ltShow = (rows) => rows.map((r) => `\n      ${r.key}: ${r.scores}${r.weak ? ' (weak)' : ''}`).join('') || ' (none)';

/** What differs between two result lists of one question (SQLite a, PostgreSQL
 * b), or null. Every score field must agree in list order; the keys too,
 * except that a run of entries of equal relevance is compared as a set (their order
 * is by update time and random id, not by backend) and a full list's lowest
 * relevance group is left out of the keys (the limit may cut it anywhere), as
 * canon() does. Each entry in both lists must have the same weak flag and
 * passage. */
function ltDiff(a, b) {
    const why = [];
    if (JSON.stringify(a.map((r) => r.scores)) !== JSON.stringify(b.map((r) => r.scores))) why.push('scores differ');
    // the keys in list order, each run of equal relevance sorted by key
    const canonKeys = (rows) => {
        let keep = rows;
        if (rows.length === LT_TOP) keep = rows.filter((r) => r.order !== rows[rows.length - 1].order);
        const runs = [];
        for (const [i, r] of keep.entries()) {
            if (i && r.order === keep[i - 1].order) runs[runs.length - 1].push(r.key);
            else runs.push([r.key]);
        }
        return runs.map((run) => run.sort().join('=')).join(' ');
    };
    if (canonKeys(a) !== canonKeys(b)) why.push('entries or order differ');
    const inB = new Map(b.map((r) => [r.key, r]));
    for (const r of a) {
        const o = inB.get(r.key);
        if (!o) continue;
        if (r.weak !== o.weak) why.push(`weak flag of ${r.key} differs`);
        if (r.passage !== o.passage) why.push(`passage of ${r.key} differs: sqlite ${r.passage} / postgres ${o.passage}`);
    }
    return why.length ? why.join('; ') : null;
}

describe('search parity on the long-text benchmark: 100 questions', { skip: SKIP }, () => {
    let ltLite, ltPg;
    const sets = loadSets();
    const questions = longtextQuestions(sets);
    // per set: {lite: {token, idToKey}, pg: {token, idToKey}}
    const loaded = new Map();

    before(async () => {
        [ltLite, ltPg] = await Promise.all([startStack({}, { sqlite: true }), startStack()]);
        const needed = sets.filter((set) => questions.some((q) => q.set === set));
        for (const set of needed) {
            const side = (s) => ({ s, token: s.token(set.space, 'editor', 'longtext-parity'), idToKey: new Map(), held: [] });
            const both = { lite: side(ltLite), pg: side(ltPg) };
            for (const e of set.entries) {
                const body = {
                    category: 'experiences',
                    // a path of its own, the same on both stacks (see corpus())
                    path: `longtext/${e.key}.md`,
                    title: e.title,
                    scenario: e.scenario || '',
                    content: e.content,
                    tags: e.tags || [],
                    agent_id: 'longtext_parity',
                };
                // an entry the screen holds (o007) is approved on both
                await Promise.all(Object.values(both).map(async (x) => {
                    const admin = () => x.s.token(set.space, 'admin', 'longtext-parity-reviewer');
                    x.idToKey.set(await createServed(x.s, x.token, admin, body, `${set.file}/${e.key}`, x.held), e.key);
                }));
            }
            loaded.set(set, both);
        }
    });
    after(async () => {
        await ltLite?.stop();
        await ltPg?.stop();
    });

    const VIEWS = {
        entry: {
            fields: ['relevance', 'score', 'quality_score'],
            ask: (x, q) => {
                const params = new URLSearchParams({ q: q.q, top_k: String(LT_TOP), min_score: '1', mode: 'lexical' });
                if (q.weak) params.set('include_weak', 'true');
                return x.s.api('GET', `/api/knowledge/search?${params}`, { token: x.token });
            },
        },
        file: {
            fields: ['relevance', 'score'],
            ask: (x, q) => {
                const body = { query: q.q, max_results: LT_TOP };
                if (q.weak) body.include_weak = true;
                return x.s.api('POST', '/api/knowledge/search', { token: x.token, body });
            },
        },
    };

    for (const [view, v] of Object.entries(VIEWS)) {
        test(`the ${view} view: the same entries, order, scores and passages on both`, async (t) => {
            const bad = [];
            let nonEmpty = 0, answered = 0, weakSeen = 0, passages = 0, ties = 0;
            for (const q of questions) {
                const { lite: l, pg: p } = loaded.get(q.set);
                const a = ltRows(ok(await v.ask(l, q)).results, v.fields, l.idToKey);
                const b = ltRows(ok(await v.ask(p, q)).results, v.fields, p.idToKey);
                const why = ltDiff(a, b);
                if (why)
                    bad.push(`${q.set.file} question #${q.n}${q.weak ? ' (include_weak)' : ''} "${q.q}": ${why}\n` +
                        `    sqlite:${ltShow(a)}\n    postgres:${ltShow(b)}`);
                if (a.length) nonEmpty++;
                if (a.some((r) => q.answers.includes(r.key))) answered++;
                weakSeen += a.filter((r) => r.weak).length;
                passages += a.filter((r) => r.passage !== undefined).length;
                ties += a.filter((r, i) => i && r.order === a[i - 1].order).length;
            }
            assert.equal(bad.length, 0, `${bad.length} of ${questions.length} questions differ between SQLite and PostgreSQL:\n${bad.join('\n')}`);
            // the comparison compared something: answers found, passages and weak hits seen
            const answerable = questions.filter((q) => q.answers.length).length;
            assert.ok(answered >= answerable * 0.9, `${answered} of ${answerable} answerable questions found an answer`);
            assert.ok(nonEmpty >= answerable, `${nonEmpty} of ${questions.length} questions found something`);
            assert.ok(passages > 0, 'no result had a passage');
            assert.ok(weakSeen > 0, 'include_weak returned no weak hit');
            t.diagnostic(`long text, ${view} view: ${questions.length} questions, ${nonEmpty} with results, ` +
                `${answered} answered, ${passages} passages, ${weakSeen} weak hits, ${ties} tied neighbours`);
        });
    }
});
