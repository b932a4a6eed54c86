// One error type (issue 23): every error a client reads has one shape,
// {code, message, retry} and, when it has one, {key, params}: the REST
// envelope, an MCP tool's error, a batch_update item, a slim group that
// failed, a job's error. And `retry` is the error's own: an LLM error that
// trying again cannot mend (a key too long to send) says retry: false even
// though its code is LLM_SERVICE_ERROR, which is otherwise retryable (the
// envelope used to derive retry from the code alone).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { startFakeLlm } from './lib/fakellm.mjs';
import { startFakeEmbed } from './lib/fakeembed.mjs';
import { err, ok } from './lib/expect.mjs';
import { waitJob } from './lib/llmtest.mjs';

/** The one shape: code, message, retry; key and params together or neither. */
function assertShape(e, what) {
    assert.equal(typeof e?.code, 'string', `${what}: ${JSON.stringify(e)}`);
    assert.equal(typeof e.message, 'string', what);
    assert.ok(e.message.length > 0, what);
    assert.equal(typeof e.retry, 'boolean', `${what}: retry ${JSON.stringify(e)}`);
    assert.equal('key' in e, 'params' in e, `${what}: key and params go together`);
    if ('key' in e) {
        assert.equal(typeof e.key, 'string', what);
        assert.equal(typeof e.params, 'object', what);
    }
    return e;
}

describe('one error shape everywhere', () => {
    let s, llm, emb, t;
    before(async () => {
        llm = await startFakeLlm();
        emb = await startFakeEmbed({ dim: 16 });
        s = await startStack({
            KNOWHUB_LLM_BASE_URL: llm.url,
            KNOWHUB_LLM_API_KEY: 'sk-test',
            KNOWHUB_EMBED_URL: emb.url,
            KNOWHUB_EMBED_MODEL: 'model-a',
        });
        t = s.token('shape', 'editor', 'shape-bot');
    });
    after(async () => {
        await s?.stop();
        await llm?.stop();
        await emb?.close();
    });

    test('a batch_update item: its store error with key and params, its evolve error with retry', async () => {
        const e = ok(await s.api('POST', '/api/knowledge', { token: t, body: { scenario: 'When a shape is checked', content: 'Look at every field.' } }));
        llm.mode('evolve', '401');
        const d = ok(await s.api('POST', '/api/knowledge/batch_update', {
            token: t,
            body: { feedback_list: [{ knowledge_id: 'knowledge-20200101-00000000', is_effective: true }, { knowledge_id: e.id, is_effective: false, feedback: 'Say more.' }, 7] },
        }));
        const [missing, evolved, bad] = d.results;
        const nf = assertShape(missing.error, 'missing entry');
        assert.equal(nf.code, 'NOT_FOUND');
        assert.equal(nf.key, 'not_found');
        assert.equal(nf.retry, false);
        const ev = assertShape(evolved.evolve_error, 'evolve error');
        assert.equal(ev.code, 'LLM_AUTH_FAILED');
        assert.equal(ev.retry, false);
        assert.equal(assertShape(bad.error, 'not an object').code, 'INVALID_REQUEST');
        llm.mode('evolve', 'ok');
    });

    test("a slim group's failure and a job's error", async () => {
        for (const tail of ['', ' Again.'])
            ok(await s.api('POST', '/api/knowledge', {
                token: t,
                body: { scenario: 'Load a very large CSV file with pandas by reading it in chunks with the right encoding', content: `Use read_csv with chunksize and encoding utf-8, then concatenate the chunks.${tail}` },
            }));
        llm.mode('slim', '500');
        const job = await waitJob(s, t, ok(await s.api('POST', '/api/knowledge/slim', { token: t, body: {} })).id, 30000);
        assert.equal(job.status, 'done', JSON.stringify(job));
        assert.ok(job.result.failed_groups.length >= 1, JSON.stringify(job.result));
        const g = assertShape(job.result.failed_groups[0].error, 'slim group');
        assert.equal(g.code, 'LLM_SERVICE_ERROR');
        assert.equal(g.retry, true);
        llm.mode('slim', 'ok');

        emb.mode('401');
        const failed = await waitJob(s, t, ok(await s.api('POST', '/api/embeddings/backfill', { token: t, body: { force: true } })).id, 40000);
        assert.equal(failed.status, 'failed', JSON.stringify(failed));
        assert.equal(assertShape(failed.error, 'job error').retry, false);
        emb.mode('ok');
    });

    test('an MCP tool error has the REST shape: retry, key and params', async () => {
        const r = await s.api('POST', '/mcp', {
            token: t,
            body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'knowledge_save', arguments: { scenario: 'x', content: 'y', idempotency_key: 'has space' } } },
        });
        assert.equal(r.status, 200, r.text);
        assert.equal(r.json.result.isError, true, r.text);
        const e = assertShape(r.json.result.structuredContent.error, 'MCP tool error');
        assert.equal(e.key, 'idempotency_key_invalid');
        assert.equal(e.retry, false);
        assert.equal(typeof e.request_id, 'string');
    });
});

describe("retry is the error's own", () => {
    let s, llm;
    before(async () => {
        llm = await startFakeLlm();
        // a key longer than a request may carry: no retry will send it
        s = await startStack({ KNOWHUB_LLM_BASE_URL: llm.url, KNOWHUB_LLM_API_KEY: `sk-${'k'.repeat(5000)}` });
    });
    after(async () => {
        await s?.stop();
        await llm?.stop();
    });

    test('LLM_SERVICE_ERROR that trying again cannot mend says retry: false', async () => {
        const t = s.token('own', 'agent', 'own-bot');
        const e = ok(await s.api('POST', '/api/knowledge', { token: t, body: { scenario: 'When a key is too long', content: 'Nothing is sent.' } }));
        const x = err(await s.api('PUT', `/api/knowledge/${e.id}`, { token: t, body: { evolve_feedback: 'Add more.' } }), 'LLM_SERVICE_ERROR');
        assert.equal(x.retry, false, JSON.stringify(x));
        assert.match(x.message, /too long/);
        assert.equal(llm.calls.length, 0, 'nothing was sent');
    });
});
