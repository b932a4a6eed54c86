// The vector index's memory budget (issue 23, fcgi/service/vindex.c),
// black-box through nginx against the fake embeddings server:
// KNOWHUB_VECTOR_SPACE_BYTES caps one space's vectors in memory (a space over
// it is searched by words, with a warning saying so, and by meaning again once
// it fits); KNOWHUB_VECTOR_BYTES caps every space's together (the least
// recently searched space is evicted and reloads on its next search, with the
// same answers); GET /api/embeddings and /metrics show the figures; and a
// search that meets the index being loaded by another thread is never kept in
// the answer cache, so the next one sees the whole index.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { startFakeEmbed } from './lib/fakeembed.mjs';
import { metrics, ok } from './lib/expect.mjs';
import { restart, sleep } from './lib/llmtest.mjs';
import { knowhub, tempDir, writeTree } from './lib/files_helpers.mjs';

// At 384 dimensions one vector takes 1,932 bytes of the index (float32s,
// int8 codes, a scale, an id pointer) besides its id and its share of the id
// map: 5 vectors hold about 45 KB, 10 about 57 KB, 20 about 78 KB, 40 about
// 123 KB.
const DIM = 384;
const Q = 'how to fill in missing values';
// Found by meaning only: none of Q's words (the fake embeds both near "missing values").
const ZH = { scenario: '缺失值处理：用前向填充补全空值', content: '先按日期排序，再前向填充，最后检查是否还有空白。' };
// Found by words and by meaning.
const EN = { scenario: 'Fill missing values with forward fill', content: 'Sort by date, forward fill the gaps, then check nothing is left blank.' };

const embedEnv = (emb, extra = {}) => ({
    KNOWHUB_EMBED_URL: emb.url,
    KNOWHUB_EMBED_MODEL: 'model-a',
    KNOWHUB_EMBED_BATCH: '256',
    ...extra,
});

const create = async (s, token, body) => ok(await s.api('POST', '/api/knowledge', { token, body }));
const status = async (s, token) => ok(await s.api('GET', '/api/embeddings', { token }));
const ids = (d) => d.results.map((r) => r.id);
const hit = (d, id) => d.results.find((r) => r.id === id);

/** GET /api/knowledge/search in hybrid mode: {d: data, cache: X-Cache}. */
async function search(s, token, q, extra = {}) {
    const params = new URLSearchParams({ q, top_k: '5', mode: 'hybrid', ...extra });
    const r = await s.api('GET', `/api/knowledge/search?${params}`, { token });
    assert.equal(r.status, 200, r.text);
    return { d: ok(r), cache: r.headers['x-cache'] };
}

/** Import n experiences about nothing the queries ask into space (the CLI: no write rate). */
function importFillers(s, space, n, tag) {
    const files = {};
    for (let i = 0; i < n; i++) files[`experiences/${tag}-${i}.md`] = `---\ntitle: ${tag} note ${i}\n---\nzorblat quixel flumph ${tag} ${i}`;
    // scaffolding, all alike: the conflict check is not what these tests measure
    const r = knowhub(s.dir, ['import', writeTree(tempDir('knowhub-vb-'), files), '--space', space, '--no-conflict-check']);
    assert.equal(r.status, 0, r.stdout + r.stderr);
}

/** Wait until every active entry of the token's space (n of them) has a vector. */
async function waitEmbedded(s, token, n, timeoutMs = 60000) {
    const until = Date.now() + timeoutMs;
    for (;;) {
        const st = await status(s, token);
        if (st.entries === n && st.embedded === n && st.queued === 0 && st.stale === 0) return st;
        if (Date.now() > until) throw new Error(`timed out waiting for ${n} vectors: ${JSON.stringify(st)}`);
        await sleep(100);
    }
}


// ---------------------------------------------------------------------------

describe('KNOWHUB_VECTOR_SPACE_BYTES: a space over its cap is searched by words, one under it by meaning', () => {
    const CAP = 100000; // 5 vectors fit, 40 do not, 10 do
    let s, emb, small, big, zhSmall, zhBig, enBig;
    before(async () => {
        emb = await startFakeEmbed({ dim: DIM });
        s = await startStack(embedEnv(emb, { KNOWHUB_VECTOR_SPACE_BYTES: String(CAP) }));
        small = s.token('vb-small', 'agent');
        big = s.token('vb-big', 'agent');
        zhSmall = await create(s, small, ZH);
        await create(s, small, EN);
        zhBig = await create(s, big, ZH);
        enBig = await create(s, big, EN);
        importFillers(s, 'vb-small', 3, 'small');
        importFillers(s, 'vb-big', 38, 'big');
        await waitEmbedded(s, small, 5);
        await waitEmbedded(s, big, 40);
    });
    after(async () => {
        await s?.stop();
        await emb?.close();
    });

    test('under its cap: found by meaning; GET /api/embeddings shows the vectors held and the cap', async () => {
        const { d } = await search(s, small, Q);
        assert.ok(!('warnings' in d), JSON.stringify(d.warnings));
        assert.deepEqual(hit(d, zhSmall.id)?.found_by, ['vector'], JSON.stringify(d.results));
        const st = await status(s, small);
        assert.equal(st.index.vectors, 5);
        assert.equal(st.index.cap, CAP);
        assert.equal(st.index.over, false);
        assert.equal(st.index.evicted, false);
        assert.ok(st.index.bytes > 5 * DIM * 5 && st.index.bytes <= CAP, `bytes ${st.index.bytes}`);
    });

    test('over its cap: answered by words with an over_budget warning, the query never embedded, nothing held', async () => {
        const calls = emb.calls.length;
        const { d } = await search(s, big, Q);
        assert.equal(d.mode, 'hybrid');
        assert.equal(d.warnings?.length, 1, JSON.stringify(d));
        assert.equal(d.warnings[0].code, 'LIMIT_EXCEEDED');
        assert.equal(d.warnings[0].semantic, 'over_budget');
        assert.match(d.warnings[0].message, /KNOWHUB_VECTOR_SPACE_BYTES/);
        assert.deepEqual(ids(d), [enBig.id], 'the words alone: the entry by meaning is left out');
        assert.deepEqual(hit(d, enBig.id).found_by, ['lexical']);
        assert.equal(emb.calls.length, calls, 'no embedding call for a space whose vectors are not held');
        // A degraded answer is not cached: the same search says so again.
        const again = await search(s, big, Q);
        assert.equal(again.cache, 'miss');
        assert.equal(again.d.warnings?.[0]?.semantic, 'over_budget');

        const st = await status(s, big);
        assert.equal(st.embedded, 40, 'the vectors are stored, only not held in memory');
        assert.equal(st.index.over, true);
        assert.equal(st.index.vectors, 0);
        assert.equal(st.index.bytes, 0);
        assert.ok(st.index.needed > CAP, JSON.stringify(st.index));
        assert.equal(st.index.cap, CAP);
        const m = await metrics(s);
        assert.equal(m.knowhub_vector_index_space_cap_bytes, CAP);
        assert.equal(m.knowhub_vector_index_budget_bytes, 1024 * 1024 * 1024, 'the default: 1 GiB');
        assert.equal(m.knowhub_vector_index_spaces_over_cap, 1);
        assert.equal(m.knowhub_vector_index_vectors, 5, 'the small space only');
        assert.ok(m.knowhub_vector_index_bytes <= CAP);
    });

    test('the file view says so too', async () => {
        const d = ok(await s.api('POST', '/api/knowledge/search', { token: big, body: { query: Q, mode: 'hybrid' } }));
        assert.equal(d.warnings?.[0]?.semantic, 'over_budget', JSON.stringify(d));
        assert.ok(!d.results.some((r) => r.id === zhBig.id));
    });

    test('deleting entries brings it under its cap: searched by meaning again', async () => {
        const items = ok(await s.api('GET', '/api/knowledge?limit=100', { token: big })).items;
        const fillers = items.filter((i) => i.id !== zhBig.id && i.id !== enBig.id);
        assert.equal(fillers.length, 38);
        for (const f of fillers.slice(0, 30)) ok(await s.api('DELETE', `/api/knowledge/${encodeURIComponent(f.id)}`, { token: big }));
        const { d } = await search(s, big, Q);
        assert.ok(!('warnings' in d), JSON.stringify(d.warnings));
        assert.deepEqual(hit(d, zhBig.id)?.found_by, ['vector'], JSON.stringify(d.results));
        const st = await status(s, big);
        assert.equal(st.index.over, false);
        assert.equal(st.index.vectors, 10);
        assert.ok(!('needed' in st.index));
        assert.equal((await metrics(s)).knowhub_vector_index_spaces_over_cap, 0);
    });
});

describe('KNOWHUB_VECTOR_BYTES: the least recently searched space is evicted and reloads on its next search', () => {
    const BUDGET = 120000; // one space of 20 vectors (about 78 KB), not two
    let s, emb, ta, tb, zhA, zhB;
    before(async () => {
        emb = await startFakeEmbed({ dim: DIM });
        s = await startStack(embedEnv(emb, { KNOWHUB_VECTOR_BYTES: String(BUDGET) }));
        ta = s.token('vb-a', 'agent');
        tb = s.token('vb-b', 'agent');
        zhA = await create(s, ta, ZH);
        await create(s, ta, EN);
        zhB = await create(s, tb, ZH);
        await create(s, tb, EN);
        importFillers(s, 'vb-a', 18, 'a');
        importFillers(s, 'vb-b', 18, 'b');
        await waitEmbedded(s, ta, 20);
        await waitEmbedded(s, tb, 20);
        // The embedding job's conflict check by meaning loaded (and evicted)
        // the indexes while embedding; a fresh process starts with none held.
        s.restartKnowhub();
    });
    after(async () => {
        await s?.stop();
        await emb?.close();
    });

    test('two spaces over the budget: the colder is evicted, reloads with the same answer, and the other goes', async () => {
        const a1 = (await search(s, ta, Q)).d;
        assert.ok(!('warnings' in a1), JSON.stringify(a1.warnings));
        assert.deepEqual(hit(a1, zhA.id)?.found_by, ['vector']);
        let sa = await status(s, ta);
        assert.equal(sa.index.vectors, 20);
        assert.equal(sa.index.evicted, false);

        const b1 = (await search(s, tb, Q)).d;
        assert.ok(!('warnings' in b1), JSON.stringify(b1.warnings));
        assert.deepEqual(hit(b1, zhB.id)?.found_by, ['vector']);
        sa = await status(s, ta);
        assert.equal(sa.index.evicted, true, JSON.stringify(sa.index));
        assert.equal(sa.index.vectors, 0);
        assert.equal(sa.index.bytes, 0);
        assert.equal(sa.index.over, false, 'evicted, not over its cap');
        const sb = await status(s, tb);
        assert.equal(sb.index.vectors, 20);
        assert.equal(sb.index.evicted, false);
        let m = await metrics(s);
        assert.equal(m.knowhub_vector_index_budget_bytes, BUDGET);
        assert.equal(m.knowhub_vector_index_evictions_total, 1);
        assert.equal(m.knowhub_vector_index_vectors, 20);
        assert.ok(m.knowhub_vector_index_bytes > 0 && m.knowhub_vector_index_bytes <= BUDGET, `bytes ${m.knowhub_vector_index_bytes}`);

        // The same search (another cache key): reloaded, the same hits and scores.
        const a2 = (await search(s, ta, Q, { include_weak: 'false' })).d;
        assert.ok(!('warnings' in a2), JSON.stringify(a2.warnings));
        const scored = (d) => d.results.map((r) => [r.id, r.found_by, r.vector_score, r.relevance]);
        assert.deepEqual(scored(a2), scored(a1));
        assert.equal((await status(s, ta)).index.vectors, 20);
        assert.equal((await status(s, tb)).index.evicted, true);
        m = await metrics(s);
        assert.equal(m.knowhub_vector_index_evictions_total, 2);
        assert.ok(m.knowhub_vector_index_bytes <= BUDGET);
    });
});

describe('a search while the index loads is never cached: the next one sees the whole index', () => {
    const K = 6; // concurrent searches
    const BULK = 3000; // vectors one refresh loads at once
    let s, emb, t, other, zh;
    before(async () => {
        emb = await startFakeEmbed({ dim: DIM });
        s = await startStack(embedEnv(emb, { KNOWHUB_THREADS: '8' }));
        t = s.token('vb-load', 'agent');
        other = s.token('vb-other', 'agent');
        await create(s, t, EN);
        await create(s, other, EN);
        await create(s, other, ZH);
        importFillers(s, 'vb-load', 10, 'small');
        importFillers(s, 'vb-other', 18, 'other');
        await waitEmbedded(s, t, 11);
        await waitEmbedded(s, other, 20);
    });
    after(async () => {
        await s?.stop();
        await emb?.close();
    });

    /** K searches at once, then 2K one after the other (the threads' caches
     * answer some): the later ones must all hold zh found by meaning. */
    async function race(extra = {}) {
        const answers = await Promise.all(Array.from({ length: K }, () => search(s, t, Q, extra)));
        const loading = answers.filter((a) => a.d.warnings?.[0]?.semantic === 'loading').length;
        for (const { d } of answers) {
            if (d.warnings) {
                assert.equal(d.warnings.length, 1, JSON.stringify(d.warnings));
                assert.equal(d.warnings[0].semantic, 'loading', JSON.stringify(d.warnings));
                assert.equal(d.warnings[0].code, 'SERVICE_UNAVAILABLE');
            } else {
                assert.deepEqual(hit(d, zh.id)?.found_by, ['vector'], `a whole answer: ${JSON.stringify(d.results.map((r) => r.id))}`);
            }
        }
        for (let i = 0; i < 2 * K; i++) {
            const { d, cache } = await search(s, t, Q, extra);
            assert.ok(!('warnings' in d), `repeat ${i} (${cache}): ${JSON.stringify(d.warnings)}`);
            assert.deepEqual(hit(d, zh.id)?.found_by, ['vector'], `repeat ${i} (${cache}): ${JSON.stringify(d.results.map((r) => r.id))}`);
        }
        return loading;
    }

    test('a large change to a loaded index: searches meanwhile wait for it, none answers (or caches) the old index', async () => {
        // Load the index and the query's vector (no embedding call, so no
        // write, in the searches below: their answers keep one generation).
        assert.ok(!('warnings' in (await search(s, t, Q)).d));
        zh = await create(s, t, ZH);
        importFillers(s, 'vb-load', BULK, 'bulk');
        await waitEmbedded(s, t, BULK + 12, 120000);
        const loading = await race();
        assert.equal(loading, 0, 'a loaded index is brought up to date, not searched half-way');
    });

    test('a first load after an eviction: searches meanwhile say "loading" and are not cached', async (t_) => {
        // A budget that holds this space but not the other one beside it.
        const held = (await status(s, t)).index.bytes;
        assert.ok(held > BULK * 1932, `bytes ${held}`);
        restart(s, embedEnv(emb, { KNOWHUB_THREADS: '8', KNOWHUB_VECTOR_BYTES: String(held + 40000) }));
        assert.deepEqual(hit((await search(s, t, Q)).d, zh.id)?.found_by, ['vector']);
        let seen = 0;
        for (let attempt = 0; attempt < 5 && !seen; attempt++) {
            // Searching the other space (a new query: no cached answer) evicts this one.
            const o = (await search(s, other, `${Q} ${attempt}`)).d;
            assert.ok(!('warnings' in o), JSON.stringify(o.warnings));
            assert.equal((await status(s, t)).index.evicted, true);
            seen += await race({ attempt: String(attempt) });
        }
        t_.diagnostic(`searches that met the load: ${seen}`);
        const m = await metrics(s);
        assert.ok(m.knowhub_vector_index_evictions_total >= 2, JSON.stringify(m));
        assert.ok(m.knowhub_vector_index_bytes <= held + 40000);
    });
});
