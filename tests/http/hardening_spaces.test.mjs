// Tenants learn nothing of each other (issue 23): a query another space
// asked is never a hit of the query-vector cache (it was: a reader could
// tell from its own usage ledger, 0 -> 0 instead of 0 -> 1 embed_query
// calls, or from the time, whether anyone searched a text recently), and
// GET /api/embeddings shows the in-memory index of the caller's space only
// (it showed every space's); a reader's query, a row of its space's usage
// ledger, empties no other space's cached answers. /metrics, which covers every space, is the
// operator's: metrics.test.mjs, "who may scrape".
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { startFakeEmbed } from './lib/fakeembed.mjs';
import { ok } from './lib/expect.mjs';
import { waitFor } from './lib/llmtest.mjs';

describe('no signal crosses spaces', () => {
    let s, emb, a, b;
    before(async () => {
        emb = await startFakeEmbed({ dim: 64 });
        s = await startStack({ KNOWHUB_EMBED_URL: emb.url, KNOWHUB_EMBED_MODEL: 'model-a' });
        a = { editor: s.token('tenant-a', 'editor', 'a-bot'), reader: s.token('tenant-a', 'reader', 'a-reader') };
        b = { editor: s.token('tenant-b', 'editor', 'b-bot'), reader: s.token('tenant-b', 'reader', 'b-reader') };
    });
    after(async () => {
        await s?.stop();
        await emb?.close();
    });

    const queryCalls = async (token) =>
        ok(await s.api('GET', '/api/llm/usage', { token })).items.find((i) => i.purpose === 'embed_query')?.calls ?? 0;
    const hybrid = async (token, q) =>
        ok(await s.api('GET', `/api/knowledge/search?${new URLSearchParams({ q, mode: 'hybrid' })}`, { token }));
    const asked = (q) => emb.calls.filter((c) => c.inputs.includes(q)).length;

    test("a query another space asked is not a cache hit: this space's own call and ledger row", async () => {
        const q = 'quarterly inventory turnover by warehouse';
        await hybrid(a.reader, q);
        assert.equal(asked(q), 1);
        assert.equal(await queryCalls(a.reader), 1);
        await hybrid(a.reader, q); // the same space: a hit, no new call
        assert.equal(asked(q), 1);
        assert.equal(await queryCalls(a.reader), 1);

        assert.equal(await queryCalls(b.reader), 0);
        await hybrid(b.reader, q);
        assert.equal(asked(q), 2, "tenant-b's search embedded the query itself");
        assert.equal(await queryCalls(b.reader), 1, "tenant-b's ledger shows its own call");
        await hybrid(b.reader, q);
        assert.equal(asked(q), 2);
    });

    test("a reader's new hybrid queries leave another space's cached answers alone", async () => {
        // Each query is a row of tenant-b's usage ledger; before schema 14
        // that row moved the one cache generation and emptied tenant-a's
        // cached answers too (77 misses in 100 instead of 4).
        const lexical = () => s.api('GET', '/api/knowledge/search?q=inventory+turnover&mode=lexical', { token: a.reader });
        for (let i = 0; i < 24; i++) ok(await lexical()); // every worker thread has the answer
        const callsBefore = await queryCalls(b.reader);
        const ROUNDS = 30;
        let hits = 0;
        for (let i = 0; i < ROUNDS; i++) {
            await hybrid(b.reader, `warehouse question number ${i} of tenant b`);
            const r = await lexical();
            ok(r);
            if (r.headers['x-cache'] === 'hit') hits++;
        }
        console.log(`# tenant-a's repeated search after each of tenant-b's ${ROUNDS} new hybrid queries: ${hits} hits`);
        assert.equal(await queryCalls(b.reader), callsBefore + ROUNDS, "every query is in tenant-b's ledger, read fresh");
        assert.ok(hits >= ROUNDS - 3, `${hits} of ${ROUNDS} answered from the cache`);
    });

    test("GET /api/embeddings counts the caller's space's index only", async () => {
        for (let i = 0; i < 3; i++)
            ok(await s.api('POST', '/api/knowledge', { token: a.editor, body: { scenario: `Tenant A note ${i}`, content: `Inventory detail ${i}.` } }));
        ok(await s.api('POST', '/api/knowledge', { token: b.editor, body: { scenario: 'Tenant B note', content: 'Something else entirely.' } }));
        const embedded = async (token, n) => {
            await waitFor(async () => ok(await s.api('GET', '/api/embeddings', { token })).embedded === n, 15000, `${n} embedded`);
            await hybrid(token, 'inventory detail'); // loads the space's index
            return ok(await s.api('GET', '/api/embeddings', { token })).index;
        };
        const ia = await embedded(a.reader, 3);
        const ib = await embedded(b.reader, 1);
        assert.equal(ia.vectors, 3, JSON.stringify(ia));
        assert.equal(ib.vectors, 1, JSON.stringify(ib));
        assert.ok(ib.bytes > 0 && ib.bytes < ia.bytes, `${ib.bytes} < ${ia.bytes}`);
    });
});
