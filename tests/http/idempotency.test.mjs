// Idempotency-Key on creates (issue 23): after a PostgreSQL crash one
// committed create was answered "503, retry", and the retry made a second
// entry. With the Idempotency-Key header (REST) or the idempotency_key
// argument (MCP's knowledge_save), the same request again returns the entry
// the first made ("replayed": true) and creates nothing; the same key with
// another body is a CONFLICT; keys are per space; ten at once make one
// entry. A kill -9 between the commit and the answer is the crash case:
// the retry after the restart finds the entry.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { err, errKey, ok } from './lib/expect.mjs';
import { restart } from './lib/llmtest.mjs';

describe('Idempotency-Key', () => {
    let s, t, other;
    before(async () => {
        s = await startStack();
        t = s.token('idem', 'agent', 'idem-bot');
        other = s.token('idem-other', 'agent', 'other-bot');
    });
    after(async () => {
        await s?.stop();
    });

    const create = (token, body, key) =>
        s.api('POST', '/api/knowledge', { token, body, headers: key === undefined ? {} : { 'Idempotency-Key': key } });
    const count = async (token) => ok(await s.api('GET', '/api/knowledge?limit=100', { token })).items.length;
    const body = (n) => ({ scenario: `When a retry must not duplicate ${n}`, content: 'Send the same Idempotency-Key again.' });

    test('the same key and body: the first entry, replayed, nothing new', async () => {
        const first = ok(await create(t, body(1), 'order-42'));
        assert.equal(first.replayed, undefined);
        const again = ok(await create(t, body(1), 'order-42'));
        assert.equal(again.id, first.id);
        assert.equal(again.replayed, true);
        assert.equal(again.scenario, first.scenario);
        assert.equal(await count(t), 1);
        // without a key, the same body is a new entry, as always
        ok(await create(t, body(1)));
        assert.equal(await count(t), 2);
    });

    test('the same key with another body is a CONFLICT that changes nothing; another space has its own keys', async () => {
        const before = await count(t);
        errKey(await create(t, body(2), 'order-42'), 'CONFLICT', 'idempotency_key_reused');
        assert.equal(await count(t), before);
        const elsewhere = ok(await create(other, body(2), 'order-42'));
        assert.equal(elsewhere.replayed, undefined);
        assert.equal(await count(other), 1);
    });

    test('bad keys are INVALID_REQUEST and create nothing', async () => {
        const before = await count(t);
        for (const key of ['x'.repeat(129), 'has space', 'tab\there'])
            errKey(await create(t, body(3), key), 'INVALID_REQUEST', 'idempotency_key_invalid');
        errKey(await create(t, { ...body(3), idempotency_key: 'b-1' }, 'h-1'), 'INVALID_REQUEST', 'idempotency_key_invalid');
        err(await create(t, { ...body(3), idempotency_key: 42 }), 'INVALID_REQUEST');
        assert.equal(await count(t), before);
    });

    test('ten requests with one key at once: one entry, every answer its id', async () => {
        const before = await count(t);
        const answers = await Promise.all(Array.from({ length: 10 }, () => create(t, body(4), 'burst-1')));
        const ids = new Set(answers.map((r) => ok(r).id));
        assert.equal(ids.size, 1, JSON.stringify([...ids]));
        assert.equal(await count(t), before + 1);
    });

    test("MCP knowledge_save's idempotency_key: the same entry again", async () => {
        const call = async (id) => {
            const r = await s.api('POST', '/mcp', {
                token: t,
                body: { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'knowledge_save', arguments: { ...body(5), idempotency_key: 'mcp-7' } } },
            });
            assert.equal(r.status, 200, r.text);
            const result = r.json.result;
            assert.ok(!result.isError, JSON.stringify(result));
            return JSON.parse(result.content[0].text);
        };
        const a = await call(1);
        const b = await call(2);
        assert.equal(b.id ?? b.data?.id, a.id ?? a.data?.id);
        const found = ok(await s.api('GET', '/api/knowledge?limit=100', { token: t })).items.filter((i) => i.scenario === body(5).scenario);
        assert.equal(found.length, 1);
    });

    test('a retry after knowhub was killed (kill -9) and started again finds the entry', async () => {
        const first = ok(await create(t, body(6), 'crash-1'));
        process.kill(s.knowhubPid(), 'SIGKILL');
        restart(s);
        const again = ok(await create(t, body(6), 'crash-1'));
        assert.equal(again.id, first.id);
        assert.equal(again.replayed, true);
    });
});
