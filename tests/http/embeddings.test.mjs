// Optional embeddings and hybrid search (issue 15), black-box through nginx
// against the fake embeddings server (lib/fakeembed.mjs) on loopback:
// GET /api/knowledge/search?mode=lexical|vector|hybrid and the file view's
// POST /api/knowledge/search {mode}; GET /api/embeddings; POST
// /api/embeddings/backfill (a job); vectors written by the job thread after
// create/update, dropped on delete, back on revert; re-embedding on a model
// change; a failing, slow or lying server answered lexically with a warning
// (never an error, never a stored vector) and the breaker's recovery; batches
// halved on 413; the query cache; the usage ledger rows; the LLM router
// choosing among the fused candidates.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { startFakeEmbed } from './lib/fakeembed.mjs';
import { err, ok } from './lib/expect.mjs';
import { restart, sleep, sql, waitJob } from './lib/llmtest.mjs';

const DIM = 384;
const KEY = 'sk-embed-test';

/** The environment of a stack using the fake embeddings server. */
const embedEnv = (emb, extra = {}) => ({
    KNOWHUB_EMBED_URL: emb.url,
    KNOWHUB_EMBED_MODEL: 'model-a',
    KNOWHUB_EMBED_KEY: KEY,
    ...extra,
});

const create = async (s, token, body) => ok(await s.api('POST', '/api/knowledge', { token, body }));
const status = async (s, token) => ok(await s.api('GET', '/api/embeddings', { token }));

/** GET /api/knowledge/search; returns the data (must succeed). */
async function search(s, token, q, mode, extra = {}) {
    const params = { q, top_k: '5', ...extra };
    if (mode) params.mode = mode;
    const r = await s.api('GET', `/api/knowledge/search?${new URLSearchParams(params)}`, { token });
    assert.equal(r.status, 200, r.text);
    return ok(r);
}

/** POST /api/knowledge/search (the file view); returns the data. */
async function searchFiles(s, token, body) {
    return ok(await s.api('POST', '/api/knowledge/search', { token, body }));
}

/** Poll GET /api/embeddings until cond(status) holds; returns the status. */
async function waitStatus(s, token, cond, what, timeoutMs = 15000) {
    const until = Date.now() + timeoutMs;
    for (;;) {
        const st = await status(s, token);
        if (cond(st)) return st;
        if (Date.now() > until) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(st)}`);
        await sleep(50);
    }
}

/** Wait until every active entry of the token's space has a vector of the model. */
const waitEmbedded = (s, token, timeoutMs) =>
    waitStatus(s, token, (st) => st.stale === 0 && st.queued === 0 && st.embedded === st.entries, 'all embedded', timeoutMs);

/** The text knowhub embeds for an entry: scenario, title, content head. */
const entryText = (e) => `${e.scenario}\n${e.title}\n${e.content.slice(0, 1000)}`;

/** The inputs the fake saw (from call index `from` on). */
const inputsSeen = (emb, from = 0) => emb.calls.slice(from).flatMap((c) => c.inputs);

const ids = (d) => d.results.map((r) => r.id);
const hit = (d, id) => d.results.find((r) => r.id === id);

// ---------------------------------------------------------------------------

describe('without an embeddings server, then batches against a small server', () => {
    let s, emb, t;
    before(async () => {
        s = await startStack();
        emb = await startFakeEmbed({ dim: DIM });
        t = s.token('plain', 'editor', 'plain-bot');
    });
    after(async () => {
        await s?.stop();
        await emb?.close();
    });

    test('unset: lexical search as before; hybrid answers lexically with LLM_NOT_CONFIGURED; bad mode; status; backfill', async () => {
        const e = await create(s, t, { scenario: 'Read a large CSV file with pandas in chunks', content: 'Use read_csv with chunksize.' });
        const plain = await search(s, t, 'pandas csv chunks');
        assert.ok(ids(plain).includes(e.id));
        assert.ok(!('mode' in plain) && !('warnings' in plain), JSON.stringify(plain));
        const lexical = await search(s, t, 'pandas csv chunks', 'lexical');
        assert.deepEqual(ids(lexical), ids(plain));

        const hybrid = await search(s, t, 'pandas csv chunks', 'hybrid');
        assert.equal(hybrid.mode, 'hybrid');
        assert.deepEqual(ids(hybrid), ids(plain), 'the lexical answer');
        assert.deepEqual(hit(hybrid, e.id).found_by, ['lexical']);
        assert.equal(hybrid.warnings.length, 1);
        assert.equal(hybrid.warnings[0].code, 'LLM_NOT_CONFIGURED');
        assert.ok(hybrid.warnings[0].message.length > 0);
        const vec = await search(s, t, 'pandas csv chunks', 'vector');
        assert.equal(vec.warnings[0].code, 'LLM_NOT_CONFIGURED');
        assert.ok(ids(vec).includes(e.id));

        const files = await searchFiles(s, t, { query: 'pandas csv chunks', mode: 'hybrid' });
        assert.equal(files.warnings[0].code, 'LLM_NOT_CONFIGURED');
        assert.deepEqual(files.results.map((r) => r.id), [e.id]);

        err(await s.api('GET', '/api/knowledge/search?q=pandas&mode=bogus', { token: t }), 'INVALID_REQUEST');
        err(await s.api('POST', '/api/knowledge/search', { token: t, body: { query: 'pandas', mode: 'bogus' } }), 'INVALID_REQUEST');

        const st = await status(s, t);
        assert.equal(st.configured, false);
        assert.equal(st.model, null);
        assert.equal(st.embedded, 0);
        err(await s.api('POST', '/api/embeddings/backfill', { token: t, body: {} }), 'LLM_NOT_CONFIGURED');
        assert.deepEqual(ok(await s.api('GET', '/api/jobs', { token: t })).items, []);
    });

    test('batch: KNOWHUB_EMBED_BATCH=16 against a server taking 4 -> 413s, then everything in batches of <= 4', async () => {
        // Entries written while unconfigured are embedded after a restart with a server.
        for (let i = 0; i < 11; i++)
            await create(s, t, { scenario: `Batch entry ${i}: aggregate sales per region and month`, content: `Group by region, then sum; variant ${i}.` });
        emb.reset();
        emb.maxBatch = 4;
        restart(s, embedEnv(emb, { KNOWHUB_EMBED_BATCH: '16' }));
        const st = await waitEmbedded(s, t, 20000);
        assert.equal(st.configured, true);
        assert.equal(st.entries, 12);
        assert.equal(st.embedded, 12);
        assert.equal(st.dimension, DIM);
        assert.ok(st.batch <= 4, `batch ${st.batch}`);
        const sizes = emb.calls.map((c) => c.inputs.length);
        assert.ok(sizes.some((n) => n > 4), `a batch over 4 was tried first: ${sizes}`);
        const lastBig = sizes.findLastIndex((n) => n > 4);
        assert.ok(sizes.slice(lastBig + 1).every((n) => n <= 4), `then only small batches: ${sizes}`);
        // Every entry's text reached the server in an accepted (<= 4) batch.
        const accepted = emb.calls.filter((c) => c.inputs.length <= 4).flatMap((c) => c.inputs);
        const all = ok(await s.api('GET', '/api/knowledge?limit=100', { token: t })).items;
        assert.equal(all.length, 12);
        for (const e of all) {
            const full = ok(await s.api('GET', `/api/knowledge/${e.id}`, { token: t }));
            assert.ok(accepted.includes(entryText(full)), `not embedded: ${full.title}`);
        }
        assert.equal(st.failed, 0);
    });

    test('backfill against a server refusing the batch size: halves and goes on to the end', async () => {
        // A fresh process starts again at KNOWHUB_EMBED_BATCH=16.
        emb.reset();
        emb.maxBatch = 4;
        restart(s, embedEnv(emb, { KNOWHUB_EMBED_BATCH: '16' }));
        emb.mode('down');
        for (let i = 0; i < 6; i++)
            await create(s, t, { scenario: `Backfill batch entry ${i}: count orders per customer`, content: `Group orders by customer id (${i}).` });
        await waitStatus(s, t, (x) => x.last_error !== null && x.queued === 6, 'a failed attempt');
        emb.mode('ok');
        const started = ok(await s.api('POST', '/api/embeddings/backfill', { token: t, body: {} }));
        const job = await waitJob(s, t, started.id, 20000);
        assert.equal(job.status, 'done', JSON.stringify(job));
        assert.equal(job.result.queued, 6);
        assert.equal(job.progress, job.total, JSON.stringify(job));
        assert.equal(job.result.embedded, 6, JSON.stringify(job));
        assert.ok(emb.calls.some((c) => c.inputs.length > 4), 'a refused batch was tried');
        const st = await waitEmbedded(s, t);
        assert.equal(st.embedded, 18);
    });

    test('a text the server refuses even alone is counted failed, found lexically, and retried by a forced backfill', async () => {
        await waitEmbedded(s, t, 20000);
        emb.maxBatch = 0; // every request is "too large"
        const e = await create(s, t, { scenario: 'Refused text: quarterly inventory turnover', content: 'Cost of goods sold over average inventory.' });
        const st = await waitStatus(s, t, (x) => x.failed === 1 && x.queued === 0, 'the entry marked failed');
        assert.equal(st.stale, 0);
        assert.equal(st.embedded, 18);
        assert.deepEqual(sql(s, `SELECT v.dim FROM vectors v JOIN knowledge k ON k.seq = v.knowledge_seq WHERE k.id = '${e.id}'`), [{ dim: 0 }]);
        assert.ok(ids(await search(s, t, 'inventory turnover', 'lexical')).includes(e.id));
        emb.maxBatch = 4;
        const job = await waitJob(s, t, ok(await s.api('POST', '/api/embeddings/backfill', { token: t, body: { force: true } })).id, 20000);
        assert.equal(job.status, 'done', JSON.stringify(job));
        assert.equal(job.result.queued, 19);
        const after = await waitEmbedded(s, t);
        assert.deepEqual([after.embedded, after.failed, after.stale], [19, 0, 0]);
        assert.deepEqual(hit(await search(s, t, 'inventory turnover', 'hybrid'), e.id)?.found_by, ['lexical', 'vector']);
    });
});

// ---------------------------------------------------------------------------

describe('with the fake embeddings server', () => {
    let s, emb;
    before(async () => {
        emb = await startFakeEmbed({ dim: DIM });
        s = await startStack(embedEnv(emb, { KNOWHUB_EMBED_TIMEOUT: '1' }));
    });
    after(async () => {
        await s?.stop();
        await emb?.close();
    });

    test('vectors are written after create; text, key and model sent; a content change re-embeds, feedback does not', async () => {
        const t = s.token('write', 'agent', 'write-bot');
        const st0 = await status(s, t);
        assert.equal(st0.configured, true);
        assert.equal(st0.model, 'model-a');
        const from = emb.calls.length;
        const e = await create(s, t, {
            scenario: 'Convert timestamps to UTC before comparing them',
            title: 'UTC timestamps',
            content: 'Localize naive datetimes, then convert them to UTC with tz_convert.',
            path: 'tz/utc.md',
        });
        const st = await waitEmbedded(s, t);
        assert.equal(st.entries, 1);
        assert.equal(st.embedded, 1);
        assert.equal(st.dimension, DIM);
        assert.equal(st.last_error, null);
        // The in-memory index loads on the first search by meaning.
        assert.ok(hit(await search(s, t, 'timestamps UTC', 'vector'), e.id)?.found_by.includes('vector'));
        const idx = (await status(s, t)).index;
        assert.ok(idx.vectors >= 1 && idx.bytes >= idx.vectors * DIM * 4, JSON.stringify(idx));
        const call = emb.calls.slice(from).find((c) => c.inputs.includes(entryText(e)));
        assert.ok(call, `the fake never got ${JSON.stringify(entryText(e))}: ${JSON.stringify(inputsSeen(emb, from))}`);
        assert.equal(call.authorization, `Bearer ${KEY}`);
        assert.equal(call.model, 'model-a');
        assert.equal(call.method, 'POST');
        assert.equal(call.path, '/v1/embeddings');
        assert.equal(call.encoding_format, 'float');
        const row = sql(s, `SELECT v.model, v.dim, v.version FROM vectors v JOIN knowledge k ON k.seq = v.knowledge_seq WHERE k.id = '${e.id}'`);
        assert.deepEqual(row, [{ model: 'model-a', dim: DIM, version: e.version }]);

        // A content change: a new call with the new text.
        const at = emb.calls.length;
        ok(await s.api('POST', '/api/knowledge/write', { token: t, body: { category: 'experiences', path: 'tz/utc.md', content: 'Use pytz or zoneinfo; never compare naive and aware datetimes.' } }));
        const changed = ok(await s.api('GET', `/api/knowledge/${e.id}`, { token: t }));
        assert.notEqual(changed.content, e.content);
        await waitStatus(s, t, (x) => x.stale === 0 && x.queued === 0 && inputsSeen(emb, at).includes(entryText(changed)), 're-embedded');

        // Reverting to the first text embeds that text again (the stored vector is the new text's).
        const at1 = emb.calls.length;
        const reverted = ok(await s.api('POST', `/api/knowledge/${e.id}/revert`, { token: t, body: { version: 1 } }));
        assert.equal(reverted.content, e.content);
        await waitStatus(s, t, (x) => x.stale === 0 && x.queued === 0 && inputsSeen(emb, at1).includes(entryText(e)), 're-embedded after revert');
        const old = await search(s, t, 'Localize naive datetimes tz_convert', 'vector');
        assert.ok(old.results[0].vector_score > 0.5, JSON.stringify(old.results));

        // Feedback changes nothing the vector stands for: no call.
        const at2 = emb.calls.length;
        ok(await s.api('PUT', `/api/knowledge/${e.id}`, { token: t, body: { add_helpful_case: { case_id: 'c1', result: 'worked' } } }));
        ok(await s.api('PUT', `/api/knowledge/${e.id}`, { token: t, body: { update_score: 4 } }));
        await waitEmbedded(s, t);
        await sleep(600); // several idle rounds of the job thread
        assert.deepEqual(inputsSeen(emb, at2).filter((x) => x.includes('zoneinfo') || x.includes('UTC')), []);
        assert.equal((await status(s, t)).embedded, 1);
    });

    describe('by meaning', () => {
        let t, zh, en, other, rule;
        const Q = 'how to fill in missing values';
        before(async () => {
            t = s.token('meaning', 'agent', 'meaning-bot');
            const admin = s.token('meaning', 'admin');
            zh = await create(s, t, { scenario: '缺失值处理：用前向填充补全空值', content: '先按日期排序，再前向填充，最后检查是否还有空白。' });
            en = await create(s, t, { scenario: 'Fill missing values with forward fill', content: 'Sort by date, forward fill the gaps, then check nothing is left blank.' });
            other = await create(s, t, { scenario: 'Deploy the service behind nginx with TLS', content: 'Terminate TLS at nginx and proxy to the FastCGI socket.' });
            await create(s, t, { scenario: 'Customer churn rate per quarter', content: 'Count customers lost in the quarter over those at its start.' });
            rule = await create(s, admin, { scenario: '空值必须先补全再汇总', content: '所有空值先填充，再聚合。', category: 'rules', path: 'fill-first.md', always_apply: false });
            await create(s, admin, { scenario: '缺失值一律填充为零', content: '空白单元格填充零。', category: 'rules', path: 'zero.md', always_apply: true });
            await waitEmbedded(s, t);
        });

        test('paraphrase and cross-lingual: an English query finds a Chinese entry by vector that lexical mode misses', async () => {
            const lexical = await search(s, t, Q, 'lexical');
            assert.ok(!ids(lexical).includes(zh.id), 'the Chinese entry has none of the words');
            const vector = await search(s, t, Q, 'vector');
            assert.equal(vector.mode, 'vector');
            assert.ok(!('warnings' in vector), JSON.stringify(vector.warnings));
            const z = hit(vector, zh.id);
            assert.ok(z, `not found by vector: ${JSON.stringify(vector.results.map((r) => [r.title, r.vector_score]))}`);
            assert.deepEqual(z.found_by, ['vector']);
            assert.ok(z.vector_score > hit(vector, other.id)?.vector_score || !hit(vector, other.id));
            // The two experiences about missing values come before the unrelated one.
            const order = ids(vector);
            const show = JSON.stringify(vector.results.map((r) => [r.title, r.vector_score]));
            if (order.includes(other.id)) assert.ok(order.indexOf(zh.id) < order.indexOf(other.id) && order.indexOf(en.id) < order.indexOf(other.id), show);
            const exp = await search(s, t, Q, 'vector', { category: 'experiences' });
            assert.deepEqual(new Set(ids(exp).slice(0, 2)), new Set([zh.id, en.id]), show);
            for (const r of vector.results) {
                assert.equal(typeof r.vector_score, 'number');
                assert.equal(typeof r.lexical_score, 'number');
            }
            // A paraphrase without the entry's words: still found by meaning.
            const para = await search(s, t, 'impute the blanks', 'vector', { category: 'experiences' });
            assert.ok(ids(para).slice(0, 2).includes(en.id), JSON.stringify(para.results.map((r) => r.title)));
        });

        test('hybrid: found_by both when both match; the vector-only hit is listed too', async () => {
            const h = await search(s, t, Q, 'hybrid');
            assert.equal(h.mode, 'hybrid');
            assert.ok(!('warnings' in h));
            assert.deepEqual(hit(h, en.id)?.found_by, ['lexical', 'vector'], JSON.stringify(h.results));
            assert.ok(hit(h, en.id).lexical_score > 0 && hit(h, en.id).vector_score > 0);
            assert.deepEqual(hit(h, zh.id)?.found_by, ['vector']);
            assert.equal(hit(h, zh.id).lexical_score, 0);
            assert.equal(ids(h)[0], en.id, 'matched both ways: first');
            // The default mode with a server configured is hybrid.
            const d = await search(s, t, Q);
            assert.equal(d.mode, 'hybrid');
            assert.deepEqual(ids(d), ids(h));
        });

        test('the entry view filters vector-only hits by category', async () => {
            const r = await search(s, t, Q, 'vector', { category: 'experiences' });
            assert.ok(r.results.length > 0);
            assert.ok(r.results.every((x) => x.category === 'experiences'), JSON.stringify(r.results.map((x) => x.category)));
        });

        test('file view: vector hits obey categories and skip alwaysApply rules', async () => {
            const all = await searchFiles(s, t, { query: Q, mode: 'vector', max_results: 10 });
            assert.equal(all.mode, 'vector');
            assert.ok(!all.results.some((r) => r.path === 'zero.md'), `an alwaysApply rule: ${JSON.stringify(all.results.map((r) => r.path))}`);
            const z = all.results.find((r) => r.id === zh.id);
            assert.ok(z, JSON.stringify(all.results.map((r) => r.title)));
            assert.deepEqual(z.found_by, ['vector']);
            assert.equal(typeof z.vector_score, 'number');
            assert.equal(typeof z.score, 'number');

            const exp = await searchFiles(s, t, { query: Q, mode: 'vector', categories: ['experiences'], max_results: 10 });
            assert.ok(exp.results.length > 0);
            assert.ok(exp.results.every((r) => r.category === 'experiences'), JSON.stringify(exp.results.map((r) => r.category)));
            const rules = await searchFiles(s, t, { query: Q, mode: 'vector', categories: ['rules'], max_results: 10 });
            assert.deepEqual(rules.results.map((r) => r.id), [rule.id], 'only the rule that is not always applied');
            const hy = await searchFiles(s, t, { query: Q, mode: 'hybrid', categories: ['rules'], max_results: 10 });
            assert.deepEqual(hy.results.map((r) => r.id), [rule.id]);
        });

        test('delete: gone from vector results at once; revert brings it back', async () => {
            const before = await search(s, t, Q, 'vector');
            assert.ok(ids(before).includes(zh.id));
            ok(await s.api('DELETE', `/api/knowledge/${zh.id}`, { token: t }));
            for (const mode of ['vector', 'hybrid']) {
                const gone = await search(s, t, Q, mode);
                assert.ok(!ids(gone).includes(zh.id), `${mode}: still found after delete`);
            }
            const files = await searchFiles(s, t, { query: Q, mode: 'vector', max_results: 10 });
            assert.ok(!files.results.some((r) => r.id === zh.id));
            assert.equal((await status(s, t)).entries, 5);

            const at = emb.calls.length;
            const back = ok(await s.api('POST', `/api/knowledge/${zh.id}/revert`, { token: t, body: {} }));
            assert.equal(back.status, 'active');
            const again = await search(s, t, Q, 'vector');
            assert.deepEqual(hit(again, zh.id)?.found_by, ['vector'], 'back at once: its vector still stands for its text');
            const st = await waitEmbedded(s, t);
            assert.equal(st.entries, 6);
            assert.ok(!inputsSeen(emb, at).includes(entryText(zh)), 'the same text is not embedded again');
        });

        test('query cache: the same query twice -> one embed call for it', async () => {
            const q = 'deduplicate the customer table before the join';
            const n = () => emb.calls.filter((c) => c.inputs.length === 1 && c.inputs[0] === q).length;
            assert.equal(n(), 0);
            const a = await search(s, t, q, 'hybrid');
            assert.equal(n(), 1);
            const b = await search(s, t, q, 'hybrid');
            const c = await search(s, t, q, 'vector');
            await searchFiles(s, t, { query: q, mode: 'vector' });
            assert.equal(n(), 1, 'answered from the cache');
            assert.deepEqual(ids(b), ids(a));
            assert.ok(!('warnings' in c));
        });

        test('vector search never crosses spaces', async () => {
            const o = s.token('meaning-elsewhere', 'agent', 'elsewhere-bot');
            const mine = await create(s, o, { scenario: 'Rotate the API keys every quarter', content: 'Revoke the old keys a day later.' });
            await waitEmbedded(s, o);
            for (const mode of ['vector', 'hybrid']) {
                // The other space's entries are near Q; this space has none near it.
                const d = await search(s, o, Q, mode);
                assert.ok(ids(d).every((id) => id === mine.id), `${mode}: ${JSON.stringify(d.results.map((r) => r.title))}`);
                const f = await searchFiles(s, o, { query: Q, mode, max_results: 10 });
                assert.ok(f.results.every((r) => r.id === mine.id), JSON.stringify(f.results.map((r) => r.title)));
                // Its own entry is found by meaning.
                assert.deepEqual(ids(await search(s, o, 'rotating API keys', mode)), [mine.id]);
            }
            assert.equal((await status(s, o)).entries, 1);
            const empty = s.token('meaning-empty', 'reader');
            assert.deepEqual(ids(await search(s, empty, Q, 'vector')), []);
            const st = await status(s, empty);
            assert.deepEqual([st.entries, st.embedded, st.stale], [0, 0, 0]);
        });

        test('ledger: /api/llm/usage has embed and embed_query rows', async () => {
            const u = ok(await s.api('GET', '/api/llm/usage', { token: t }));
            const embed = u.items.find((i) => i.purpose === 'embed');
            const query = u.items.find((i) => i.purpose === 'embed_query');
            assert.ok(embed, JSON.stringify(u.items));
            assert.ok(query, JSON.stringify(u.items));
            assert.equal(embed.model, 'model-a');
            assert.equal(query.model, 'model-a');
            assert.ok(embed.calls >= 1 && embed.errors === 0 && embed.prompt_tokens > 0);
            assert.ok(query.calls >= 1 && query.errors === 0 && query.prompt_tokens > 0, JSON.stringify(query));
            // Another space's ledger has none of them.
            const empty = ok(await s.api('GET', '/api/llm/usage', { token: s.token('meaning-other', 'reader') }));
            assert.deepEqual(empty.items, []);
        });
    });

    describe('a failing server', () => {
        let t, base;
        const MODES = [['down'], ['slow', { delayMs: 3000 }], ['lie-count'], ['lie-dim'], ['lie-nan'], ['nonjson']];
        before(async () => {
            t = s.token('failing', 'agent', 'failing-bot');
            base = await create(s, t, { scenario: 'Parse dates with an explicit format string', content: 'Pass format= to to_datetime; it is faster and safer.' });
            await create(s, t, { scenario: 'Plot a monthly revenue chart', content: 'Resample by month and draw a line chart.' });
            await waitEmbedded(s, t);
        });

        /** Wait until the breaker lets calls through, then reset its backoff with a good query. */
        async function healthy(tag) {
            emb.mode('ok');
            await waitStatus(s, t, (st) => st.retry_in_ms === 0, 'the breaker to close');
            const d = await search(s, t, `revenue chart recovery ${tag}`, 'hybrid');
            assert.ok(!('warnings' in d), `after ${tag}: ${JSON.stringify(d.warnings)}`);
            assert.ok(d.results.some((r) => r.found_by.includes('vector')));
        }

        for (const [mode, opts] of MODES) {
            // BUG (fcgi/service/embed.c, embed_query): the query's call gets QUERY_TIMEOUT_MS
            // (5 s) even when KNOWHUB_EMBED_TIMEOUT is lower, so a 3 s answer is waited for.
            test(`search while the server is ${mode}: 200, the lexical answer, a warning`, async () => {
                await healthy(`before-${mode}`);
                const q = `dates format ${mode}`;
                const lexical = await search(s, t, q, 'lexical');
                emb.mode(mode, opts);
                const t0 = Date.now();
                const d = await search(s, t, q, 'hybrid');
                const took = Date.now() - t0;
                assert.equal(d.mode, 'hybrid');
                assert.ok(Array.isArray(d.warnings) && d.warnings.length === 1, JSON.stringify(d));
                assert.equal(typeof d.warnings[0].code, 'string');
                assert.notEqual(d.warnings[0].code, 'SERVICE_UNAVAILABLE', 'the server was really asked');
                assert.ok(d.warnings[0].message.length > 0);
                assert.deepEqual(ids(d), ids(lexical), 'the lexical answer');
                assert.deepEqual(hit(d, base.id)?.found_by, ['lexical']);
                if (mode === 'slow') assert.ok(took < 2500, `KNOWHUB_EMBED_TIMEOUT=1 but the search took ${took} ms`);
                // Until the breaker passes, searches skip the server: SERVICE_UNAVAILABLE.
                const at = emb.calls.length;
                const again = await search(s, t, `${q} again`, 'vector');
                assert.equal(again.warnings?.[0]?.code, 'SERVICE_UNAVAILABLE', JSON.stringify(again));
                assert.ok(ids(again).includes(base.id));
                assert.equal(emb.calls.length, at, 'no call while the breaker is open');
                const fileView = await searchFiles(s, t, { query: q, mode: 'hybrid' });
                assert.equal(fileView.warnings?.[0]?.code, 'SERVICE_UNAVAILABLE');
                const st = await status(s, t);
                assert.ok(st.last_error && typeof st.last_error.code === 'string', JSON.stringify(st));
                assert.ok(st.retry_in_ms > 0 && st.retry_in_ms <= 2000, `retry_in_ms ${st.retry_in_ms}`);
                await healthy(`after-${mode}`);
                assert.equal((await status(s, t)).last_error, null);
            });
        }

        for (const [mode, opts] of MODES) {
            test(`an entry embedded while the server is ${mode}: no vector stored, last_error set, then recovered`, async () => {
                await healthy(`write-${mode}`);
                const st0 = await status(s, t);
                const at = emb.calls.length;
                emb.mode(mode, opts);
                const e = await create(s, t, { scenario: `Write-path probe ${mode}: convert currency amounts`, content: `Multiply by the rate of the day (${mode}).` });
                const text = entryText(e);
                const failed = await waitStatus(s, t, (st) => st.last_error !== null && inputsSeen(emb, at).includes(text), 'the failed attempt');
                assert.equal(failed.embedded, st0.embedded, 'no vector from a failed or lying answer');
                assert.equal(failed.entries, st0.entries + 1);
                assert.ok(failed.stale >= 1);
                assert.equal(typeof failed.last_error.message, 'string');
                assert.deepEqual(sql(s, `SELECT v.dim FROM vectors v JOIN knowledge k ON k.seq = v.knowledge_seq WHERE k.id = '${e.id}'`), []);
                // Searches still answer, lexically.
                const d = await search(s, t, 'convert currency amounts', 'hybrid');
                assert.ok(ids(d).includes(e.id));
                assert.ok(d.warnings?.length === 1, JSON.stringify(d));
                // Back to ok: the breaker passes (~2 s) and the entry gets its vector.
                emb.mode('ok');
                const st = await waitStatus(s, t, (x) => x.stale === 0 && x.embedded === st0.embedded + 1 && x.last_error === null, 'recovery', 15000);
                assert.equal(st.failed, 0);
                assert.equal(st.dimension, DIM);
                // The operator's log says when it failed and when it came back.
                const log = fs.readFileSync(path.join(s.dir, 'logs/knowhub.log'), 'utf8');
                assert.match(log, /the embeddings server failed \(LLM_[A-Z_]+: .*\); searches answer by words until it is back\n(.|\n)*the embeddings server is back\n/);
                const v = await search(s, t, `Write-path probe ${mode} convert currency amounts`, 'vector');
                assert.deepEqual(hit(v, e.id)?.found_by, ['vector']);
            });
        }
    });
});

// ---------------------------------------------------------------------------

describe('backfill and a model change', () => {
    let s, emb, t, env, entries;
    before(async () => {
        emb = await startFakeEmbed({ dim: DIM, dimFor: { 'model-b': 320 } });
        env = embedEnv(emb);
        s = await startStack(env);
        t = s.token('backfill', 'editor', 'backfill-bot');
    });
    after(async () => {
        await s?.stop();
        await emb?.close();
    });

    test('backfill with progress: entries created while the server was down get embedded by the job', async () => {
        emb.mode('down');
        const texts = [
            ['Remove duplicate rows before counting customers', 'drop_duplicates on the customer id.'],
            ['Read an Excel workbook with several sheets', 'read_excel with sheet_name=None.'],
            ['按月汇总销售额', '先把日期转成月份，再分组求和。'],
            ['Fix a UnicodeDecodeError when reading a CSV', 'Pass encoding="gbk" or detect it first.'],
            ['Speed up a slow SQL query with an index', 'Add an index on the filtered column.'],
        ];
        entries = [];
        for (const [scenario, content] of texts) entries.push(await create(s, t, { scenario, content }));
        const down = await waitStatus(s, t, (st) => st.last_error !== null, 'a failed attempt');
        assert.equal(down.embedded, 0);
        assert.equal(down.stale, 5);
        assert.equal(down.queued, 5);

        err(await s.api('POST', '/api/embeddings/backfill', { token: s.token('backfill', 'reader'), body: {} }), 'FORBIDDEN', 403);
        err(await s.api('POST', '/api/embeddings/backfill', { token: t, body: { force: 'yes' } }), 'INVALID_REQUEST');

        // A backfill while the server stays down ends as a failed job (after a few tries), not hanging.
        const doomed = ok(await s.api('POST', '/api/embeddings/backfill', { token: t, body: {} }));
        const failed = await waitJob(s, t, doomed.id, 30000);
        assert.equal(failed.status, 'failed', JSON.stringify(failed));
        assert.equal(typeof failed.error?.code, 'string', JSON.stringify(failed));
        assert.equal((await status(s, t)).embedded, 0);

        emb.mode('ok');
        const started = ok(await s.api('POST', '/api/embeddings/backfill', { token: t, body: {} }));
        assert.equal(started.kind, 'embed');
        const job = await waitJob(s, t, started.id, 20000);
        assert.equal(job.status, 'done', JSON.stringify(job));
        assert.equal(job.total, 5);
        assert.equal(job.progress, job.total);
        assert.equal(job.result.embedded, 5);
        assert.equal(job.result.queued, 5);
        assert.equal(job.result.model, 'model-a');
        assert.equal(job.result.dimension, DIM);
        const st = await status(s, t);
        assert.deepEqual([st.entries, st.embedded, st.stale, st.queued, st.failed], [5, 5, 0, 0, 0]);
        assert.equal(st.last_error, null);
        for (const e of entries) assert.ok(inputsSeen(emb).includes(entryText(e)), e.title);

        // Nothing to do: a job with nothing queued, and no call.
        const at = emb.calls.length;
        const idle = await waitJob(s, t, ok(await s.api('POST', '/api/embeddings/backfill', { token: t, body: {} })).id);
        assert.equal(idle.status, 'done');
        assert.equal(idle.result.queued, 0);
        assert.equal(emb.calls.length, at);

        // force: true re-embeds everything.
        const forced = await waitJob(s, t, ok(await s.api('POST', '/api/embeddings/backfill', { token: t, body: { force: true } })).id);
        assert.equal(forced.status, 'done', JSON.stringify(forced));
        assert.equal(forced.result.queued, 5);
        assert.equal(forced.result.embedded, 5);
        assert.equal(forced.progress, forced.total);
        const again = inputsSeen(emb, at);
        for (const e of entries) assert.ok(again.includes(entryText(e)), `not re-embedded: ${e.title}`);
        assert.equal((await waitEmbedded(s, t)).embedded, 5);
    });

    test('a model change re-embeds everything with the new model and dimension; search works', async () => {
        const at = emb.calls.length;
        env = { ...env, KNOWHUB_EMBED_MODEL: 'model-b' };
        restart(s, env);
        const st = await waitStatus(s, t, (x) => x.model === 'model-b' && x.stale === 0 && x.embedded === 5, 'model-b vectors', 20000);
        assert.equal(st.dimension, 320);
        assert.equal(st.entries, 5);
        const seen = emb.calls.slice(at);
        assert.ok(seen.length > 0 && seen.every((c) => c.model === 'model-b'), JSON.stringify(seen.map((c) => c.model)));
        for (const e of entries) assert.ok(seen.some((c) => c.inputs.includes(entryText(e))), `not re-embedded: ${e.title}`);
        const rows = sql(s, 'SELECT model, dim, count(*) AS n FROM vectors GROUP BY model, dim');
        assert.deepEqual(rows, [{ model: 'model-b', dim: 320, n: 5 }]);

        const d = await search(s, t, 'monthly sales totals', 'vector');
        assert.ok(!('warnings' in d), JSON.stringify(d.warnings));
        assert.equal(d.results[0].id, entries[2].id, JSON.stringify(d.results.map((r) => r.title)));
        assert.deepEqual(d.results[0].found_by, ['vector']);
        const h = await search(s, t, 'duplicate customers', 'hybrid');
        assert.deepEqual(hit(h, entries[0].id)?.found_by, ['lexical', 'vector']);
    });

    test('after a restart, a first answer of another dimension than the stored vectors is refused', async () => {
        // A fresh process knows no dimension from the server yet, but the store
        // holds model-b's vectors of 320: a lying first answer must not set it.
        const at0 = emb.calls.length;
        restart(s, env);
        const st0 = await waitEmbedded(s, t);
        assert.equal(st0.dimension, 320);
        await sleep(500);
        assert.equal(emb.calls.length, at0, 'a restart with the same model embeds nothing again');
        const at = emb.calls.length;
        emb.mode('lie-dim');
        const e = await create(s, t, { scenario: 'Round money amounts to two decimals', content: 'Use Decimal and quantize.' });
        await waitStatus(s, t, (x) => inputsSeen(emb, at).includes(entryText(e)) && x.queued === 0 || x.last_error !== null, 'an attempt');
        emb.mode('ok');
        await waitStatus(s, t, (x) => x.stale === 0 && x.queued === 0, 'settled', 15000);
        // Later good answers are taken: the next entry gets its vector, searches work.
        const e2 = await create(s, t, { scenario: 'Format numbers with thousands separators', content: 'Use f"{x:,}".' });
        const st2 = await waitStatus(s, t, (x) => (x.stale === 0 && x.queued === 0 && x.embedded === 7) || x.last_error !== null, 'the next entry embedded', 15000);
        assert.equal(st2.last_error, null, JSON.stringify(st2));
        const v = await search(s, t, 'Round money amounts to two decimals', 'vector');
        assert.ok(!('warnings' in v), JSON.stringify(v.warnings));
        assert.equal(v.results[0].id, e.id);
        assert.ok(ids(await search(s, t, 'thousands separators when formatting numbers', 'vector')).includes(e2.id));
        assert.equal(st2.dimension, 320, JSON.stringify(st2));
        assert.deepEqual(sql(s, 'SELECT DISTINCT dim FROM vectors'), [{ dim: 320 }], 'a vector of the lying dimension was stored');
    });
});

describe('the LLM router over the fused candidates', () => {
    let s, emb, llm;
    before(async () => {
        const { startFakeLlm } = await import('./lib/fakellm.mjs');
        llm = await startFakeLlm();
        emb = await startFakeEmbed({ dim: DIM });
        s = await startStack(embedEnv(emb, { KNOWHUB_LLM_BASE_URL: llm.url, KNOWHUB_LLM_API_KEY: 'sk-test' }));
    });
    after(async () => {
        await s?.stop();
        await emb?.close();
        await llm?.stop();
    });

    test('the router is offered what only the meaning found, and may pick it', async () => {
        const t = s.admin;
        const zh = await create(s, t, { scenario: '缺失值处理：用前向填充补全空值', content: '先按日期排序，再前向填充，最后检查是否还有空白。' });
        await create(s, t, { scenario: 'Deploy the nightly report job', content: 'Schedule it with cron and alert on failure.' });
        await waitEmbedded(s, t);
        const q = 'how should I deal with missing values in my table';
        const calls0 = llm.calls.length;
        const d = await search(s, t, q);
        assert.equal(d.mode, 'hybrid');
        const routeCall = llm.calls.slice(calls0).find((c) => c.purpose === 'route');
        assert.ok(routeCall, 'the LLM router was asked');
        const offered = routeCall.messages.filter((m) => m.role === 'user').map((m) => m.content).join('\n');
        assert.ok(offered.includes('缺失值处理'), `the vector-only candidate is offered to the router: ${offered.slice(0, 400)}`);
        assert.equal(d.routing, 'llm');
        // The fake router keeps every handle offered: the Chinese entry comes back, found by meaning.
        assert.ok(d.results.some((r) => r.id === zh.id && r.found_by.includes('vector')), JSON.stringify(d.results.map((r) => [r.id, r.found_by])));
    });
});

describe('KNOWHUB_EMBED_MIN_SIMILARITY', () => {
    let emb;
    before(async () => {
        emb = await startFakeEmbed({ dim: DIM });
    });
    after(async () => {
        await emb?.close();
    });

    /** A stack with three entries, all embedded; the vector hits of one query as [id, score]. */
    async function hits(env) {
        const s = await startStack(embedEnv(emb, env));
        try {
            const t = s.admin;
            await create(s, t, { scenario: 'Handle missing values in a column before averaging', content: 'Count the nulls, then decide to drop or fill them.' });
            await create(s, t, { scenario: 'Fill blank cells before summing a sheet', content: 'Empty cells break sums: fill them with zero when zero is meant.' });
            await create(s, t, { scenario: 'Deploy the nightly report job', content: 'Schedule it with cron and alert on failure.' });
            await waitEmbedded(s, t);
            const d = await search(s, t, 'missing values', 'vector', { min_score: '1' });
            return d.results.map((r) => [r.id, r.vector_score]);
        } finally {
            await s.stop();
        }
    }

    test('a hit by meaning alone needs the configured similarity (default: a positive one)', async () => {
        const all = await hits({});
        assert.ok(all.length >= 2, JSON.stringify(all));
        for (const [, score] of all) assert.ok(score > 0, `the default keeps positive similarities only: ${JSON.stringify(all)}`);
        const scores = all.map(([, v]) => v).sort((a, b) => b - a);
        const floor = (scores[0] + scores[scores.length - 1]) / 2;
        const some = await hits({ KNOWHUB_EMBED_MIN_SIMILARITY: floor.toFixed(4) });
        assert.ok(some.length >= 1 && some.length < all.length, `${JSON.stringify(some)} of ${JSON.stringify(all)} at ${floor}`);
        for (const [, score] of some) assert.ok(score >= floor - 1e-4, JSON.stringify(some));
    });
});
