// Text is valid UTF-8 everywhere (issue 23): a text KnowHub echoes or cuts to
// a size (a reader's mode= in an error, an embeddings server's message in a
// job's error and in GET /api/embeddings) is cut at a character boundary,
// never inside one; and a job whose error could not be stored still ends
// (on PostgreSQL such a job stayed `running` until its lease ran out; on
// SQLite its error read back as null). Every answer's bytes are checked
// with a fatal UTF-8 decoder, not only its parsed JSON.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { startFakeEmbed, WORDY } from './lib/fakeembed.mjs';
import { err, ok } from './lib/expect.mjs';
import { waitJob } from './lib/llmtest.mjs';

const strict = new TextDecoder('utf-8', { fatal: true });

/** The answer's body decoded strictly: throws on any invalid byte. */
function valid(r) {
    assert.doesNotThrow(() => strict.decode(r.raw), `invalid UTF-8 in ${r.text.slice(0, 400)}`);
    return r;
}

describe('texts cut to a size stay valid UTF-8', () => {
    let s, emb, t;
    before(async () => {
        emb = await startFakeEmbed({ dim: 32 });
        s = await startStack({ KNOWHUB_EMBED_URL: emb.url, KNOWHUB_EMBED_MODEL: 'model-a' });
        t = s.token('utf8', 'editor', 'utf8-bot');
    });
    after(async () => {
        await s?.stop();
        await emb?.close();
    });

    test("a reader's mode= is echoed whole (at most 64 characters), never cut inside a character", async () => {
        const reader = s.token('utf8', 'reader', 'utf8-reader');
        // 64 characters but 128 to 242 bytes: a cut at 64 bytes splits the last two
        for (const mode of ['é'.repeat(64), 'ab' + '中'.repeat(62), 'x'.repeat(61) + '😀😀😀']) {
            const r = valid(await s.api('GET', `/api/knowledge/search?${new URLSearchParams({ q: 'csv', mode })}`, { token: reader }));
            const e = err(r, 'INVALID_REQUEST');
            const echoed = /^Invalid mode '(.*)' \(expected/su.exec(e.message)?.[1];
            assert.equal(echoed, mode, e.message);
            const f = valid(await s.api('POST', '/api/knowledge/search', { token: reader, body: { query: 'csv', mode } }));
            assert.ok(err(f, 'INVALID_REQUEST').message.includes(`'${echoed}'`), f.text);
        }
    });

    test("an embeddings server's long message: the job fails with it cut at a character, and the status shows it", async () => {
        emb.mode('wordy');
        ok(await s.api('POST', '/api/knowledge', { token: t, body: { scenario: 'When a CSV has a BOM', content: 'Strip it before parsing.' } }));
        const started = ok(await s.api('POST', '/api/embeddings/backfill', { token: t, body: { force: true } }));
        const job = await waitJob(s, t, started.id, 40000);
        assert.equal(job.status, 'failed', JSON.stringify(job));
        const r = valid(await s.api('GET', `/api/jobs/${started.id}`, { token: t }));
        const error = ok(r).error;
        assert.equal(typeof error?.message, 'string', `the job's error is readable: ${r.text.slice(0, 300)}`);
        const head = 'The embeddings server answered HTTP 500: ';
        assert.ok(error.message.startsWith(head), error.message);
        const told = error.message.slice(head.length);
        assert.ok(WORDY.startsWith(told), 'a prefix of the server message, whole characters');
        const bytes = Buffer.byteLength(told);
        assert.ok(bytes <= 300 && bytes >= 297, `about 300 bytes of it (${bytes})`);

        const st = ok(valid(await s.api('GET', '/api/embeddings', { token: t })));
        assert.ok(st.last_error?.message?.startsWith(head + 'Err: 嵌入'), JSON.stringify(st.last_error));
        assert.ok((head + WORDY).startsWith(st.last_error.message), 'whole characters in the status too');
        emb.mode('ok');
    });
});
