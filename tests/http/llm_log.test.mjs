// The reasoning log (KNOWHUB_AGENT_LOG, REFERENCE.md section 4): JSON lines
// under $KNOWHUB_DATA/agent-logs/<UTC date>/<safe identity>/<session>-<purpose>.jsonl,
// "on" without message bodies, "verbose" with them (and never the key),
// "off" touching no file, date directories older than 30 days removed at start.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startStack, tokenId } from './lib/stack.mjs';
import { startFakeLlm } from './lib/fakellm.mjs';
import { err, ok } from './lib/expect.mjs';
import { experienceContext, llmEnv, restart, utcDate, waitJob } from './lib/llmtest.mjs';

let llm;
before(async () => {
    llm = await startFakeLlm();
});
after(async () => {
    await llm?.stop();
});

/** Every file under dir, relative, sorted. */
function files(dir) {
    if (!fs.existsSync(dir)) return [];
    return fs.readdirSync(dir, { recursive: true }).filter((f) => fs.statSync(path.join(dir, f)).isFile()).sort();
}
const lines = (file) => fs.readFileSync(file, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
const AUTO = ['step_type', 'ts', 'session_id', 'agent_type', 'identity_id'];

async function newEntry(s, token, scenario = 'log pandas csv') {
    return ok(await s.api('POST', '/api/knowledge', { token, body: { scenario, content: 'Use read_csv.' } }));
}

/** The identity directory of a token: "token:<id>:<label>" made file-safe. */
function identityDir(token, label) {
    const safe = `token${tokenId(token)}${label}`.replace(/[ \t]/g, '_').replace(/[^A-Za-z0-9_.-]/g, '');
    return safe.replace(/^[._]+|[._]+$/g, '');
}

describe('KNOWHUB_AGENT_LOG=on', () => {
    let s, a;
    const label = 'user alice@example.com';
    before(async () => {
        s = await startStack(llmEnv(llm, { KNOWHUB_AGENT_LOG: 'on' }));
        a = s.token('default', 'agent', label);
    });
    after(async () => {
        await s?.stop();
    });

    test('one file per request and purpose, lines without message bodies', async () => {
        const e = await newEntry(s, a);
        llm.reset();
        const feedback = 'FEEDBACK-BODY-should-not-be-logged';
        ok(await s.api('PUT', `/api/knowledge/${e.id}`, { token: a, body: { evolve_feedback: feedback }, headers: { 'X-Request-Id': 'log-on-0001' } }));
        const root = path.join(s.dir, 'agent-logs');
        const date = utcDate();
        const dir = identityDir(a, label);
        assert.equal(dir, `token${tokenId(a)}user_aliceexample.com`);
        const rel = path.join(date, dir, 'log-on-0001-evolve.jsonl');
        assert.deepEqual(files(root), [rel]);
        const file = path.join(root, rel);
        assert.equal(fs.statSync(file).mode & 0o777, 0o600);
        const text = fs.readFileSync(file, 'utf8');
        assert.ok(!text.includes(feedback), 'on: no prompt text');
        assert.ok(!text.includes('Evolved after feedback'), 'on: no answer text');
        assert.ok(!text.includes('sk-test'));
        const [req, res, ...rest] = lines(file);
        assert.equal(rest.length, 0);
        assert.equal(req.step_type, 'llm_request');
        assert.equal(res.step_type, 'llm_response');
        for (const l of [req, res]) {
            assert.ok(!('messages' in l), JSON.stringify(l));
            assert.equal(l.session_id, 'log-on-0001');
            assert.equal(l.agent_type, 'evolve');
            assert.equal(l.identity_id, `token:${tokenId(a)}:${label}`);
            assert.match(l.ts, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}/);
            assert.equal(l.ts.slice(0, 10), date);
            assert.equal(l.model, 'anthropic/claude-sonnet-4.5');
            for (const k of AUTO) assert.ok(k in l, k);
        }
        assert.equal(req.purpose, 'evolve');
        assert.equal(res.finish_reason, 'stop');
        assert.equal(res.prompt_tokens, 100);
        assert.equal(res.completion_tokens, 20);
        assert.ok(Number.isInteger(res.latency_ms));
    });

    test('a failed call logs its error code; a second request gets its own file', async () => {
        const e = await newEntry(s, a);
        llm.mode('evolve', '401');
        err(await s.api('PUT', `/api/knowledge/${e.id}`, { token: a, body: { evolve_feedback: 'x' }, headers: { 'X-Request-Id': 'log-on-0002' } }), 'LLM_AUTH_FAILED');
        llm.reset();
        const file = path.join(s.dir, 'agent-logs', utcDate(), identityDir(a, label), 'log-on-0002-evolve.jsonl');
        const [, res] = lines(file);
        assert.equal(res.error, 'LLM_AUTH_FAILED');
        // (the conflict check of the saves judges with the LLM too: its own files)
        assert.equal(files(path.join(s.dir, 'agent-logs')).filter((f) => !f.endsWith('-conflict.jsonl')).length, 2);
    });

    test('a request id that is not file-safe is made safe', async () => {
        const e = await newEntry(s, a);
        ok(await s.api('PUT', `/api/knowledge/${e.id}`, { token: a, body: { evolve_feedback: 'x' }, headers: { 'X-Request-Id': '..log.on.0003' } }));
        const dir = path.join(s.dir, 'agent-logs', utcDate(), identityDir(a, label));
        const names = fs.readdirSync(dir);
        assert.ok(names.every((n) => !n.startsWith('.')), names.join(','));
        assert.ok(names.includes('log.on.0003-evolve.jsonl'), names.join(','));
    });
});

describe('KNOWHUB_AGENT_LOG=verbose', () => {
    let s, a;
    before(async () => {
        s = await startStack(llmEnv(llm, { KNOWHUB_AGENT_LOG: 'VERBOSE', KNOWHUB_LLM_API_KEY: 'sk-verbose-secret' }));
        a = s.token('default', 'agent', 'verbose-bot');
    });
    after(async () => {
        await s?.stop();
    });

    test('prompts and answers are kept; the key and the Authorization header never are', async () => {
        const e = await newEntry(s, a, 'verbose pandas csv');
        llm.reset();
        ok(await s.api('PUT', `/api/knowledge/${e.id}`, { token: a, body: { evolve_feedback: 'Mention the encoding.' }, headers: { 'X-Request-Id': 'log-vb-0001' } }));
        assert.equal(llm.calls[0].authorization, 'Bearer sk-verbose-secret');
        const file = path.join(s.dir, 'agent-logs', utcDate(), identityDir(a, 'verbose-bot'), 'log-vb-0001-evolve.jsonl');
        const [req, res] = lines(file);
        assert.deepEqual(req.messages.map((m) => m.role), ['system', 'user']);
        assert.match(req.messages[1].content, /Mention the encoding\./);
        assert.match(req.messages[1].content, /Use read_csv\./);
        assert.equal(res.messages, '## Method\nEvolved after feedback: Mention the encoding.');
        for (const k of AUTO) assert.ok(k in req && k in res, k);
    });

    test('every purpose is logged: route, distill, and slim from the job thread', async () => {
        llm.reset();
        ok(await s.api('GET', '/api/knowledge/search?q=verbose%20pandas', { token: a, headers: { 'X-Request-Id': 'log-vb-route' } }));
        ok(await s.api('POST', '/api/knowledge/distill-experience', {
            token: a,
            body: { experience_context: experienceContext({ user_question: 'password=hunter2 in the question text' }) },
            headers: { 'X-Request-Id': 'log-vb-distill' },
        }));
        const b = s.token('slimspace', 'agent', 'slim-bot');
        const text = { scenario: 'merge these twin entries about csv encoding in pandas', content: 'Pass encoding to read_csv when the file is latin-1.' };
        for (let i = 0; i < 2; i++) ok(await s.api('POST', '/api/knowledge', { token: b, body: text }));
        const job = ok(await s.api('POST', '/api/knowledge/slim', { token: b, body: {} }));
        assert.equal((await waitJob(s, b, job.id)).status, 'done');
        const day = path.join(s.dir, 'agent-logs', utcDate());
        const all = files(day);
        assert.ok(all.includes(path.join(identityDir(a, 'verbose-bot'), 'log-vb-route-route.jsonl')), all.join('\n'));
        assert.ok(all.includes(path.join(identityDir(a, 'verbose-bot'), 'log-vb-distill-distill.jsonl')), all.join('\n'));
        assert.ok(all.includes(path.join(identityDir(b, 'slim-bot'), `${job.id}-slim.jsonl`)), all.join('\n'));
        const route = lines(path.join(day, identityDir(a, 'verbose-bot'), 'log-vb-route-route.jsonl'));
        assert.equal(route[0].model, 'google/gemini-2.0-flash-001');
        assert.match(route[0].messages[1].content, /^Query: verbose pandas/);
        // Redaction is by key, not by scanning strings (the reference's rule).
        const distill = lines(path.join(day, identityDir(a, 'verbose-bot'), 'log-vb-distill-distill.jsonl'));
        assert.match(distill[0].messages[1].content, /password=hunter2/);
        for (const f of all) {
            const t = fs.readFileSync(path.join(day, f), 'utf8');
            assert.ok(!t.includes('sk-verbose-secret') && !/Bearer/i.test(t), f);
        }
    });
});

describe('KNOWHUB_AGENT_LOG=off and the 30-day cleanup', () => {
    let s, a;
    before(async () => {
        s = await startStack(llmEnv(llm)); // off is the default
        a = s.token('default', 'agent', 'off-bot');
    });
    after(async () => {
        await s?.stop();
    });

    test('off: LLM calls write no directory and no file', async () => {
        const e = await newEntry(s, a);
        llm.reset();
        ok(await s.api('PUT', `/api/knowledge/${e.id}`, { token: a, body: { evolve_feedback: 'x' } }));
        ok(await s.api('GET', '/api/knowledge/search?q=log%20pandas', { token: a }));
        ok(await s.api('POST', '/api/knowledge/distill-experience', { token: a, body: { experience_context: experienceContext() } }));
        assert.equal(llm.calls.length, 3);
        assert.equal(fs.existsSync(path.join(s.dir, 'agent-logs')), false);
    });

    test('date directories older than 30 days go at start (unless off); other names stay', async () => {
        const root = path.join(s.dir, 'agent-logs');
        const seed = {
            '2000-01-01/old/a.jsonl': true,
            [`${utcDate(-31)}/someone/b.jsonl`]: true,
            [`${utcDate(-29)}/someone/c.jsonl`]: false,
            [`${utcDate()}/someone/d.jsonl`]: false,
            'notes/e.txt': false,
            'old-stuff/f.jsonl': false,
        };
        for (const f of Object.keys(seed)) {
            fs.mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
            fs.writeFileSync(path.join(root, f), '{}\n');
        }
        restart(s, llmEnv(llm, { KNOWHUB_AGENT_LOG: 'off' }));
        assert.deepEqual(files(root), Object.keys(seed).sort(), 'off touches nothing');

        // Any value but off counts as on.
        restart(s, llmEnv(llm, { KNOWHUB_AGENT_LOG: 'yes please' }));
        const kept = Object.keys(seed).filter((f) => !seed[f]);
        assert.deepEqual(files(root), kept.sort());
        assert.ok(!fs.existsSync(path.join(root, '2000-01-01')));

        const e = await newEntry(s, a);
        ok(await s.api('PUT', `/api/knowledge/${e.id}`, { token: a, body: { evolve_feedback: 'Mention it.' }, headers: { 'X-Request-Id': 'log-yes-0001' } }));
        const file = path.join(root, utcDate(), identityDir(a, 'off-bot'), 'log-yes-0001-evolve.jsonl');
        const got = lines(file);
        assert.equal(got.length, 2);
        assert.ok(got.every((l) => !('messages' in l)), 'an unknown value logs like on');
    });
});
