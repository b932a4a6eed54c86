// The embedding queue is shared fairly between spaces (issue 23). Each batch
// was the queue's oldest entries, all of one space: a space that imported
// thousands of entries held every other space's new entries back until its
// backlog was drained. Now each batch is of the next space after the last
// served, in name order, wrapping: a space's new entry waits about one batch
// (the one in flight) however long another space's backlog is. Space A
// ("fair-a") queues BACKLOG entries against a slow embeddings server (small
// batches), then space B ("fair-b") writes one: B's vector must come while
// most of A's backlog still waits; and again while A's forced backfill job
// runs (the job thread runs one job to its end: it now lets the other spaces
// have a batch in turn after each of its own). On one node (either backend) and, with
// KNOWHUB_TEST_PG, on two nodes sharing the queue (each with its own turn
// of the rotation).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { onPostgres, startNodes } from './lib/nodes.mjs';
import { startFakeEmbed } from './lib/fakeembed.mjs';
import { ok } from './lib/expect.mjs';
import { sleep } from './lib/llmtest.mjs';

const BACKLOG = 400;
const BATCH = 8;
const DELAY_MS = 250; /* per embeddings call: 8 entries per 250 ms, A's backlog lasts ~12 s */
const WRITERS = 16;

const env = (emb) => ({
    KNOWHUB_EMBED_URL: emb.url,
    KNOWHUB_EMBED_MODEL: 'model-a',
    KNOWHUB_EMBED_BATCH: String(BATCH),
    KNOWHUB_WRITE_RATE: '0', /* A's agent writes hundreds of entries in a few seconds */
});

/**
 * A queues BACKLOG entries, then B writes one. api(method, path, opts) talks
 * to the stack (the front of several nodes); emb is the fake server.
 * Returns the figures: seconds B waited, A's queue when B wrote and when B's
 * vector came, and the embeddings calls between.
 */
async function backlogThenOne(api, emb, tokA, tokB) {
    const status = async (tok) => ok(await api('GET', '/api/embeddings', { token: tok }));
    let next = 0;
    const writer = async () => {
        for (let i = next++; i < BACKLOG; i = next++)
            ok(await api('POST', '/api/knowledge', {
                token: tokA,
                body: { category: 'experiences', title: `Imported note ${i} on warehouse stock`, scenario: `import ${i}`, content: `Row ${i} of the imported stock sheet.` },
            }));
    };
    await Promise.all(Array.from({ length: WRITERS }, writer));
    const queuedBefore = (await status(tokA)).queued;
    const callsBefore = emb.calls.length;
    const start = Date.now();
    const title = 'Fresh note about invoice rounding';
    ok(await api('POST', '/api/knowledge', {
        token: tokB,
        body: { category: 'experiences', title, scenario: 'rounding invoices', content: 'Round half to even.' },
    }));
    const until = start + 120000;
    for (;;) {
        if ((await status(tokB)).embedded === 1) break;
        if (Date.now() > until) throw new Error("timed out waiting for space B's vector");
        await sleep(20);
    }
    const waited = (Date.now() - start) / 1000;
    const queuedAfter = (await status(tokA)).queued;
    const call = emb.calls.findIndex((c, i) => i >= callsBefore && c.inputs.some((t) => t.includes(title)));
    return { queuedBefore, waited, queuedAfter, callsBetween: call - callsBefore };
}

function report(label, f) {
    console.log(
        `# ${label}: space B's one new entry waited ${f.waited.toFixed(2)} s for its vector` +
            ` (${f.callsBetween} embeddings calls before it); space A had ${f.queuedBefore} queued` +
            ` when B wrote, ${f.queuedAfter} still queued when B's vector came`,
    );
}

function check(f) {
    assert.ok(f.queuedBefore >= BACKLOG / 4, `A's backlog was still large when B wrote: ${f.queuedBefore}`);
    assert.ok(f.queuedAfter > 0, `B's entry waited for all of A's backlog (${f.waited.toFixed(2)} s)`);
    assert.ok(f.queuedAfter >= f.queuedBefore - 4 * BATCH, `B's entry waited ${f.queuedBefore - f.queuedAfter} of A's entries`);
    assert.ok(f.callsBetween >= 0 && f.callsBetween <= 3, `B's entry went in the ${f.callsBetween + 1}th call after it was written`);
}

describe('the embedding queue is fair across spaces', () => {
    let s, emb;
    before(async () => {
        emb = await startFakeEmbed({ dim: 32, delayMs: DELAY_MS });
        emb.mode('slow');
        s = await startStack(env(emb));
    });
    after(async () => {
        await s?.stop();
        await emb?.close();
    });

    test(`space B's new entry is embedded within about a batch while space A has ${BACKLOG} queued`, async () => {
        const f = await backlogThenOne(s.api.bind(s), emb, s.token('fair-a', 'editor', 'importer'), s.token('fair-b', 'editor', 'writer'));
        report(onPostgres ? 'PostgreSQL' : 'SQLite', f);
        check(f);
    });

    test("space B's new entry is embedded within about a batch while space A's forced backfill runs", async () => {
        // The job thread runs a backfill alone, to its end: a batch of the
        // other spaces in turn goes after each of its own.
        const tokA = s.token('fair-a', 'editor', 'backfiller');
        const tokB = s.token('fair-b', 'editor', 'writer-2');
        const status = async (tok) => ok(await s.api('GET', '/api/embeddings', { token: tok }));
        const job = ok(await s.api('POST', '/api/embeddings/backfill', { token: tokA, body: { force: true } }));
        const jobOf = async () => ok(await s.api('GET', `/api/jobs/${job.id}`, { token: tokA }));
        const until = Date.now() + 30000;
        while ((await jobOf()).status !== 'running') {
            if (Date.now() > until) throw new Error(`the backfill did not start: ${JSON.stringify(await jobOf())}`);
            await sleep(20);
        }
        const queuedBefore = (await status(tokA)).queued;
        const start = Date.now();
        ok(await s.api('POST', '/api/knowledge', {
            token: tokB,
            body: { category: 'experiences', title: 'Second note about invoice rounding', scenario: 'rounding taxes', content: 'Round each line, then sum.' },
        }));
        while ((await status(tokB)).embedded !== 2) {
            if (Date.now() > start + 120000) throw new Error("timed out waiting for space B's vector");
            await sleep(20);
        }
        const f = { waited: (Date.now() - start) / 1000, queuedBefore, queuedAfter: (await status(tokA)).queued };
        const j = await jobOf();
        console.log(
            `# ${onPostgres ? 'PostgreSQL' : 'SQLite'}, backfill: space B's one new entry waited ${f.waited.toFixed(2)} s` +
                ` for its vector; space A's forced backfill had ${f.queuedBefore} queued when B wrote,` +
                ` ${f.queuedAfter} still queued (job ${j.status}) when B's vector came`,
        );
        assert.ok(f.queuedBefore >= BACKLOG / 4, `A's backfill was still large when B wrote: ${f.queuedBefore}`);
        assert.ok(f.queuedAfter > 0 && j.status === 'running', `B's entry waited for A's whole backfill (${f.waited.toFixed(2)} s, job ${j.status})`);
        assert.ok(f.queuedAfter >= f.queuedBefore - 4 * BATCH, `B's entry waited ${f.queuedBefore - f.queuedAfter} of A's entries`);
    });
});

describe('the embedding queue is fair across spaces on two nodes', { skip: !onPostgres && 'needs a PostgreSQL cluster (KNOWHUB_TEST_PG, see docs/testing.md)' }, () => {
    let c, emb;
    before(async () => {
        emb = await startFakeEmbed({ dim: 32, delayMs: DELAY_MS });
        emb.mode('slow');
        c = await startNodes({ nodes: 2, env: env(emb) });
    });
    after(async () => {
        await c?.stop();
        await emb?.close();
    });

    test(`space B's new entry is embedded within about a batch while space A has ${BACKLOG} queued`, async () => {
        const f = await backlogThenOne(c.front.api, emb, c.token('fair-a', 'editor', 'importer'), c.token('fair-b', 'editor', 'writer'));
        report('two nodes on PostgreSQL', f);
        check(f);
        // Each entry's text reached the server once (the turn still holds).
        const sent = emb.calls.flatMap((call) => call.inputs);
        assert.equal(sent.length, new Set(sent).size, 'an entry was embedded twice');
    });
});
