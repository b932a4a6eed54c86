// Two nodes embedding one queue (docs/operations.md "PostgreSQL and several
// nodes"): the embed queue is not claimed row by row, so each node's job
// thread would take the same entries and the embeddings server would be paid
// twice for one vector. One node at a time embeds (the embedding turn, a lease
// row renewed around each call): every entry's text reaches the server exactly once, whichever node
// sent it, and both nodes' searches find the entries by meaning. Needs
// KNOWHUB_TEST_PG.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { onPostgres, startNodes } from './lib/nodes.mjs';
import { startFakeEmbed } from './lib/fakeembed.mjs';
import { waitFor } from './lib/llmtest.mjs';
import { ok } from './lib/expect.mjs';

const SKIP = !onPostgres && 'needs a PostgreSQL cluster (KNOWHUB_TEST_PG, see docs/testing.md)';
const ENTRIES = 40;

describe('two nodes, one embed queue', { skip: SKIP }, () => {
    let c, emb;
    before(async () => {
        // Slow replies (150 ms) and small batches: both job threads are awake
        // with entries queued for many rounds, the case a missing turn would show.
        emb = await startFakeEmbed({ dim: 32, delayMs: 150 });
        emb.mode('slow');
        emb.maxBatch = 4;
        c = await startNodes({
            nodes: 2,
            env: {
                KNOWHUB_EMBED_URL: emb.url,
                KNOWHUB_EMBED_MODEL: 'model-a',
                KNOWHUB_EMBED_BATCH: '4',
            },
        });
    });
    after(async () => {
        await c?.stop();
        await emb?.close();
    });

    test(`${ENTRIES} entries written through both nodes are embedded once each`, async () => {
        const titles = [];
        for (let i = 0; i < ENTRIES; i++) {
            const title = `queue entry ${i} about warehouse shipment ${i % 7}`;
            titles.push(title);
            const node = c.node[i % 2];
            ok(await node.api('POST', '/api/knowledge', {
                token: c.admin,
                body: { category: 'experiences', title, scenario: `case ${i}`, content: `body ${i}` },
            }));
        }
        await waitFor(async () => {
            const st = ok(await c.node[0].api('GET', '/api/embeddings', { token: c.admin }));
            return st.embedded === ENTRIES && st.queued === 0;
        }, 60000);
        const sent = emb.calls.filter((call) => call.path.endsWith('/embeddings')).flatMap((call) => call.inputs);
        const mine = sent.filter((text) => titles.some((t) => text.includes(t)));
        assert.equal(mine.length, ENTRIES, `texts sent: ${mine.length} for ${ENTRIES} entries`);
        assert.equal(new Set(mine).size, ENTRIES);
        // Both nodes see the same vectors.
        for (const n of c.node) {
            const st = ok(await n.api('GET', '/api/embeddings', { token: c.admin }));
            assert.equal(st.embedded, ENTRIES, n.name);
        }
    });
});
