// The LLM client (fcgi/llm.c) against the fake OpenAI-compatible server: the
// endpoint, key and model it sends, every failure mapped to its LLM_* code and
// retry flag (429 and 5xx tried once more), the timeout, the reply cap, the
// model allow-list, and the usage ledger (GET /api/llm/usage).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack, freePort } from './lib/stack.mjs';
import { startFakeLlm } from './lib/fakellm.mjs';
import { err, ok } from './lib/expect.mjs';
import { callsOf, experienceContext, llmEnv, utcNow } from './lib/llmtest.mjs';

let llm, s, agent;
before(async () => {
    llm = await startFakeLlm();
    s = await startStack(
        llmEnv(llm, {
            KNOWHUB_LLM_MODEL: 'main-model',
            KNOWHUB_LLM_ROUTER_MODEL: 'router-mini',
            KNOWHUB_LLM_MODELS: 'extra-a, extra-b ,extra-c',
        }),
    );
    agent = s.token('default', 'agent', 'client-bot');
});
after(async () => {
    await s?.stop();
    await llm?.stop();
});

async function newEntry(st, token, over = {}) {
    return ok(await st.api('POST', '/api/knowledge', { token, body: { scenario: 'load a csv file', content: 'Use read_csv.', ...over } }));
}
const evolve = (st, token, id, feedback = 'Mention the encoding.', extra = {}) =>
    st.api('PUT', `/api/knowledge/${id}`, { token, body: { evolve_feedback: feedback, ...extra } });
const distill = (st, token, body, headers = {}) =>
    st.api('POST', '/api/knowledge/distill-experience', { token, body: { experience_context: experienceContext(), ...body }, headers });

describe('the request knowhub sends', () => {
    test('POST <base>/chat/completions with the server key and the configured model', async () => {
        llm.reset();
        const e = await newEntry(s, agent);
        ok(await evolve(s, agent, e.id));
        assert.equal(llm.calls.length, 1);
        const c = llm.calls[0];
        assert.equal(c.path, '/v1/chat/completions');
        assert.equal(c.authorization, 'Bearer sk-test');
        assert.equal(c.model, 'main-model');
        assert.equal(c.purpose, 'evolve');
        assert.deepEqual(c.messages.map((m) => m.role), ['system', 'user']);
    });
});

describe('failures map to LLM_* codes with the reference retry flag', () => {
    // [fake mode, code, retry, HTTP requests the fake sees]
    const table = [
        ['401', 'LLM_AUTH_FAILED', false, 1],
        ['429', 'LLM_RATE_LIMIT', true, 2],
        ['500', 'LLM_SERVICE_ERROR', true, 2],
        ['context', 'LLM_CONTEXT_TOO_LONG', false, 1],
        ['model404', 'LLM_MODEL_NOT_FOUND', false, 1],
        ['filter', 'LLM_CONTENT_FILTERED', false, 1],
        ['nonjson', 'LLM_UNKNOWN_ERROR', false, 1],
        ['empty', 'LLM_UNKNOWN_ERROR', false, 1],
        ['wrongshape', 'LLM_UNKNOWN_ERROR', false, 1],
    ];
    for (const [mode, code, retry, requests] of table) {
        test(`${mode} -> ${code} (retry ${retry}, ${requests} request(s))`, async () => {
            const e = await newEntry(s, agent);
            llm.reset();
            llm.mode('evolve', mode);
            const t0 = Date.now();
            const x = err(await evolve(s, agent, e.id), code);
            const ms = Date.now() - t0;
            assert.equal(x.retry, retry);
            assert.equal(llm.calls.length, requests, `requests seen by the LLM for ${mode}`);
            if (requests === 2) assert.ok(ms >= 450, `the retry waits (backoff): ${ms} ms`);
            assert.match(x.message, /the feedback was stored \(#\d+\) and nothing else was changed/);
            // Neither the URL nor the key ever reaches a client.
            for (const secret of ['sk-test', llm.url, `:${llm.port}`, '127.0.0.1']) assert.ok(!x.message.includes(secret), x.message);
        });
    }

    test('a reply over 4 MiB is cut off: LLM_UNKNOWN_ERROR', async () => {
        const e = await newEntry(s, agent);
        llm.reset();
        llm.mode('evolve', 'long', { length: 5 * 1024 * 1024 });
        const x = err(await evolve(s, agent, e.id), 'LLM_UNKNOWN_ERROR');
        assert.equal(x.retry, false);
        assert.match(x.message, /4 MiB/);
        assert.equal(llm.calls.length, 1);
        llm.reset();
    });

    test('the same codes come back from distill-experience', async () => {
        for (const [mode, code, retry] of [['401', 'LLM_AUTH_FAILED', false], ['429', 'LLM_RATE_LIMIT', true], ['filter', 'LLM_CONTENT_FILTERED', false]]) {
            llm.reset();
            llm.mode('distill', mode);
            const x = err(await distill(s, agent, {}), code);
            assert.equal(x.retry, retry);
        }
        llm.reset();
    });
});

describe('the model: a server-side allow-list, never a URL or a key', () => {
    test('a model outside the allow-list is INVALID_REQUEST and nothing is called', async () => {
        llm.reset();
        for (const model of ['gpt-evil', 'extra', 'extra-a ', 'EXTRA-A', '', 42, ['extra-a'], { model: 'gpt-evil' }, { id: 'nope', endpoint: llm.url }, { model: 'gpt-evil', id: 'main-model' }]) {
            const x = err(await distill(s, agent, { model }), 'INVALID_REQUEST');
            assert.equal(x.message, "'model' is not one of the allowed models", JSON.stringify(model));
            err(await s.api('POST', '/api/knowledge/slim', { token: agent, body: { dry_run: true, model } }), 'INVALID_REQUEST');
        }
        assert.equal(llm.calls.length, 0);
    });

    test('allowed names: the model, the router model and KNOWHUB_LLM_MODELS (trimmed)', async () => {
        for (const model of ['main-model', 'router-mini', 'extra-a', 'extra-b', 'extra-c']) {
            llm.reset();
            ok(await distill(s, agent, { model }));
            assert.deepEqual(callsOf(llm, 'distill').map((c) => c.model), [model]);
        }
    });

    test("the reference's model object: only its name is used, never its endpoint or key", async () => {
        const elsewhere = await freePort();
        for (const model of [
            { id: 'extra-b', endpoint: `http://127.0.0.1:${elsewhere}/v1`, api_key: 'sk-client', base_url: 'http://example.invalid' },
            { model: 'extra-c', api_base: `http://127.0.0.1:${elsewhere}`, key: 'sk-client' },
        ]) {
            llm.reset();
            ok(await distill(s, agent, { model }));
            assert.equal(llm.calls.length, 1, 'the call went to the configured LLM');
            assert.equal(llm.calls[0].model, model.id || model.model);
            assert.equal(llm.calls[0].authorization, 'Bearer sk-test');
            assert.ok(!JSON.stringify(llm.calls[0].messages).includes('sk-client'));
        }
        // An object naming no model uses the configured one; null is no model.
        for (const model of [{}, { endpoint: 'http://example.invalid' }, null]) {
            llm.reset();
            ok(await distill(s, agent, { model }));
            assert.equal(llm.calls[0].model, 'main-model');
        }
    });
});

describe('usage ledger', () => {
    test('GET /api/llm/usage sums calls, errors, tokens and latency per purpose and model', async () => {
        const since = utcNow();
        const sp = s.token('ledger', 'agent', 'ledger-bot');
        const e = await newEntry(s, sp, { scenario: 'ledger pandas csv' });
        llm.reset();
        ok(await evolve(s, sp, e.id)); // evolve/main-model ok
        llm.mode('evolve', '401');
        err(await evolve(s, sp, e.id), 'LLM_AUTH_FAILED'); // evolve/main-model error
        llm.mode('evolve', '429');
        err(await evolve(s, sp, e.id), 'LLM_RATE_LIMIT'); // one call (two HTTP requests), an error
        llm.reset();
        const r = ok(await s.api('GET', '/api/knowledge/search?q=ledger%20pandas', { token: sp })); // route/router-mini ok
        assert.equal(r.routing, 'llm');
        ok(await distill(s, sp, { model: 'extra-a' })); // distill/extra-a ok
        ok(await distill(s, sp, { model: 'extra-a' }));

        const u = ok(await s.api('GET', `/api/llm/usage?since=${since}`, { token: sp }));
        assert.equal(u.since, since);
        assert.equal(u.configured, true);
        const rows = u.items.map(({ purpose, model, calls, errors, prompt_tokens, completion_tokens }) => ({ purpose, model, calls, errors, prompt_tokens, completion_tokens }));
        assert.deepEqual(rows, [
            { purpose: 'distill', model: 'extra-a', calls: 2, errors: 0, prompt_tokens: 200, completion_tokens: 40 },
            { purpose: 'evolve', model: 'main-model', calls: 3, errors: 2, prompt_tokens: 100, completion_tokens: 20 },
            { purpose: 'route', model: 'router-mini', calls: 1, errors: 0, prompt_tokens: 100, completion_tokens: 20 },
        ]);
        for (const i of u.items) {
            assert.ok(Number.isInteger(i.latency_ms_total) && i.latency_ms_total >= 0);
            assert.equal(i.latency_ms_avg, Math.floor(i.latency_ms_total / i.calls));
        }
        const ev = u.items.find((i) => i.purpose === 'evolve');
        assert.ok(ev.latency_ms_total >= 450, 'the 429 call includes its retry in its latency');

        // Per space: the default space's calls are not in "ledger", nor these in a fresh space.
        const other = s.token('ledger-empty', 'reader');
        assert.deepEqual(ok(await s.api('GET', '/api/llm/usage', { token: other })).items, []);
        // A reader may read it; without since everything of the space is summed.
        const all = ok(await s.api('GET', '/api/llm/usage', { token: s.token('ledger', 'reader') }));
        assert.equal(all.since, '');
        assert.deepEqual(all.items.map((i) => i.calls), [2, 3, 1]);
        // A since in the future sums nothing; a date alone works.
        assert.deepEqual(ok(await s.api('GET', '/api/llm/usage?since=2999-01-01', { token: sp })).items, []);
        assert.equal(ok(await s.api('GET', '/api/llm/usage?since=2000-01-01', { token: sp })).items.length, 3);
    });

    test('a bad since is INVALID_REQUEST; no token is 401', async () => {
        for (const since of ['yesterday', '2026', '2026-01-01%27%20OR%201', '2026/01/01'])
            err(await s.api('GET', `/api/llm/usage?since=${since}`, { token: agent }), 'INVALID_REQUEST');
        assert.equal((await s.api('GET', '/api/llm/usage')).status, 401);
    });
});

describe('timeouts (KNOWHUB_LLM_TIMEOUT=2) and no key configured', () => {
    let t, tAgent;
    before(async () => {
        // No KNOWHUB_LLM_API_KEY: no Authorization header at all.
        t = await startStack({ KNOWHUB_LLM_BASE_URL: llm.url, KNOWHUB_LLM_TIMEOUT: '2' });
        tAgent = t.token('default', 'agent', 'slow-bot');
    });
    after(async () => {
        await t?.stop();
    });

    test('a slow LLM is LLM_TIMEOUT (retry true) after the configured 2 s, not retried', async () => {
        const e = await newEntry(t, tAgent);
        llm.reset();
        llm.mode('evolve', 'slow', { delayMs: 3000 });
        const t0 = Date.now();
        const x = err(await evolve(t, tAgent, e.id), 'LLM_TIMEOUT');
        const ms = Date.now() - t0;
        assert.equal(x.retry, true);
        assert.ok(ms >= 1900 && ms < 3500, `answered after ${ms} ms`);
        assert.equal(llm.calls.length, 1);
        assert.equal(llm.calls[0].authorization, undefined, 'no key, no Authorization header');
        const u = ok(await t.api('GET', '/api/llm/usage', { token: tAgent }));
        assert.deepEqual(u.items.map((i) => [i.purpose, i.model, i.calls, i.errors]), [['evolve', 'anthropic/claude-sonnet-4.5', 1, 1]]);
    });

    test('a slow router falls back within the configured 2 s (its own limit is 8 s)', async () => {
        ok(await t.api('POST', '/api/knowledge', { token: tAgent, body: { scenario: 'timeout gizmo', content: 'c' } }));
        llm.reset();
        llm.mode('route', 'slow', { delayMs: 2500 });
        const t0 = Date.now();
        const r = ok(await t.api('GET', '/api/knowledge/search?q=timeout%20gizmo', { token: tAgent }));
        const ms = Date.now() - t0;
        assert.equal(r.routing, 'lexical_fallback');
        assert.equal(r.count, 1);
        assert.ok(ms < 3000, `fell back after ${ms} ms`);
        llm.reset();
    });

    test("distill's timeout_seconds shortens the call", async () => {
        llm.reset();
        llm.mode('distill', 'slow', { delayMs: 3000 });
        const t0 = Date.now();
        const x = err(await distill(t, tAgent, { timeout_seconds: 0.5 }), 'LLM_TIMEOUT');
        const ms = Date.now() - t0;
        assert.equal(x.retry, true);
        assert.ok(ms < 1500, `answered after ${ms} ms`);
        llm.reset();
    });
});

describe('an unreachable LLM', () => {
    test('LLM_SERVICE_ERROR (retry true), tried twice; routing falls back', async () => {
        const u = await startStack({ KNOWHUB_LLM_BASE_URL: `http://127.0.0.1:${await freePort()}/v1`, KNOWHUB_LLM_API_KEY: 'sk-test' });
        try {
            const a = u.token('default', 'agent');
            const e = await newEntry(u, a, { scenario: 'unreachable pandas' });
            const x = err(await evolve(u, a, e.id), 'LLM_SERVICE_ERROR');
            assert.equal(x.retry, true);
            assert.ok(!x.message.includes('127.0.0.1'), x.message);
            const r = ok(await u.api('GET', '/api/knowledge/search?q=unreachable', { token: a }));
            assert.equal(r.routing, 'lexical_fallback');
            assert.deepEqual(r.results.map((i) => i.id), [e.id]);
            const usage = ok(await u.api('GET', '/api/llm/usage', { token: a }));
            assert.deepEqual(usage.items.map((i) => [i.purpose, i.calls, i.errors, i.prompt_tokens]), [['evolve', 1, 1, 0], ['route', 1, 1, 0]]);
        } finally {
            await u.stop();
        }
    });
});

describe('no LLM configured', () => {
    test('usage says configured false and sums nothing; evolve is LLM_NOT_CONFIGURED', async () => {
        const n = await startStack();
        try {
            const a = n.token('default', 'agent');
            const e = await newEntry(n, a);
            const x = err(await evolve(n, a, e.id), 'LLM_NOT_CONFIGURED');
            assert.equal(x.retry, false);
            // A model is checked against the allow-list even without an LLM.
            err(await distill(n, a, { model: 'gpt-evil' }), 'INVALID_REQUEST');
            const u = ok(await n.api('GET', '/api/llm/usage', { token: a }));
            assert.deepEqual(u, { since: '', configured: false, items: [] });
        } finally {
            await n.stop();
        }
    });
});
