// Jobs are shared fairly between spaces (issue 23). One agent queued 600
// slim jobs in half a second, and for 141 s no other space's job ran and no
// space's new entries were embedded: the job thread ran every queued job
// before any embedding, and a space could queue without end. Now a space has
// at most one queued or running job of a kind (a second request answers with
// it, `existing: true`; twenty at once make one job), a forced backfill
// while a plain one waits makes that one forced (paid once), and after each
// job the thread embeds a batch, so new entries get their vectors while jobs
// wait. The LLM is the fake one, slow on purpose (each merge fails after
// 1.2 s, leaving the entries as they were), so the jobs stay queued long
// enough to be seen.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { startFakeLlm } from './lib/fakellm.mjs';
import { startFakeEmbed } from './lib/fakeembed.mjs';
import { ok } from './lib/expect.mjs';
import { sleep, waitFor, waitJob } from './lib/llmtest.mjs';

const SPACES = ['fair-1', 'fair-2', 'fair-3', 'fair-4'];
const SCENARIO = 'Load a very large CSV file with pandas by reading it in chunks with the right encoding to avoid memory errors';
const TEXT = 'Use read_csv with chunksize and encoding utf-8, then concatenate the chunks afterwards carefully.';

describe('fair jobs', () => {
    let s, llm, emb;
    const tok = {};
    before(async () => {
        llm = await startFakeLlm();
        emb = await startFakeEmbed({ dim: 32 });
        s = await startStack({
            KNOWHUB_LLM_BASE_URL: llm.url,
            KNOWHUB_LLM_API_KEY: 'sk-test',
            KNOWHUB_EMBED_URL: emb.url,
            KNOWHUB_EMBED_MODEL: 'model-a',
        });
        for (const space of [...SPACES, 'fair-z']) tok[space] = s.token(space, 'editor', `${space}-bot`);
        // two near-duplicates per space: each slim job merges one group (one LLM call)
        for (const space of SPACES) {
            for (const tail of ['', ' Quickly.'])
                ok(await s.api('POST', '/api/knowledge', {
                    token: tok[space],
                    body: { scenario: SCENARIO, content: `${TEXT}${tail}` },
                }));
        }
        for (const space of SPACES)
            await waitFor(async () => ok(await s.api('GET', '/api/embeddings', { token: tok[space] })).embedded === 2, 15000, `${space} embedded`);
        for (const space of SPACES) {
            const plan = ok(await s.api('POST', '/api/knowledge/slim', { token: tok[space], body: { dry_run: true } }));
            assert.equal(plan.groups.length, 1, JSON.stringify(plan));
        }
        // each merge fails after 1.2 s: the job takes that long and leaves its
        // entries as they were (nothing of theirs to embed again)
        llm.mode('slim', 'slow', { delayMs: 1200, status: 500 });
    });
    after(async () => {
        await s?.stop();
        await llm?.stop();
        await emb?.close();
    });

    const slim = async (space) => ok(await s.api('POST', '/api/knowledge/slim', { token: tok[space], body: {} }));
    const jobs = async (space) => ok(await s.api('GET', '/api/jobs', { token: tok[space] })).items;

    test('one open job per space and kind; a forced backfill merges into a waiting one; embedding is not starved by jobs', async () => {
        const first = {};
        for (const space of SPACES) {
            first[space] = await slim(space);
            assert.equal(first[space].existing, false, space);
        }
        // fair-2 asks again while its job waits: the same job answers
        const again = await slim('fair-2');
        assert.equal(again.id, first['fair-2'].id);
        assert.equal(again.existing, true);
        // twenty at once in fair-3: one job
        const burst = await Promise.all(Array.from({ length: 20 }, () => slim('fair-3')));
        assert.deepEqual([...new Set(burst.map((j) => j.id))], [first['fair-3'].id]);
        assert.ok(burst.every((j) => j.existing));
        assert.equal((await jobs('fair-3')).filter((j) => j.kind === 'slim').length, 1);

        // a plain backfill queued in fair-4, then a forced one: merged, forced
        const plain = ok(await s.api('POST', '/api/embeddings/backfill', { token: tok['fair-4'], body: {} }));
        assert.equal(plain.existing, false);
        const forced = ok(await s.api('POST', '/api/embeddings/backfill', { token: tok['fair-4'], body: { force: true } }));
        assert.equal(forced.id, plain.id);
        assert.equal(forced.existing, true);
        if (forced.status === 'queued') assert.equal(forced.params.force, true, JSON.stringify(forced));

        // a new entry elsewhere gets its vector while most slim jobs still wait
        ok(await s.api('POST', '/api/knowledge', { token: tok['fair-z'], body: { scenario: 'Plot a histogram of order values', content: 'Use bins=50.' } }));
        await waitFor(async () => ok(await s.api('GET', '/api/embeddings', { token: tok['fair-z'] })).embedded === 1, 20000, 'fair-z embedded');
        const open = [];
        for (const space of SPACES) {
            const j = ok(await s.api('GET', `/api/jobs/${first[space].id}`, { token: tok[space] }));
            if (j.status === 'queued' || j.status === 'running') open.push(space);
        }
        assert.ok(open.length >= 2, `the entry waited for the jobs: only ${open.join(', ') || 'none'} still open`);

        // every job ends; afterwards a new slim is a new job
        for (const space of SPACES) assert.equal((await waitJob(s, tok[space], first[space].id, 30000)).status, 'done', space);
        const backfill = await waitJob(s, tok['fair-4'], plain.id, 30000);
        assert.equal(backfill.status, 'done', JSON.stringify(backfill));
        assert.equal(backfill.params.force, true, 'the merged backfill ran forced');
        await sleep(10);
        const next = await slim('fair-2');
        assert.notEqual(next.id, first['fair-2'].id);
        assert.equal(next.existing, false);
        await waitJob(s, tok['fair-2'], next.id, 30000);
    });
});
