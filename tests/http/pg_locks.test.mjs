// The writers' lock on PostgreSQL (docs/operations.md "PostgreSQL and several
// nodes"): every write transaction takes one advisory lock, so writers take
// turns across nodes. A lock held elsewhere past lock_timeout (10 s) answers
// 503 db_busy, retry: true — and the connection goes on serving: the
// transaction BEGIN opened is ended, not left aborted under the next request.
// Reads never wait for it. PostgreSQL only (KNOWHUB_TEST_PG).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { onPostgres, startStack } from './lib/stack.mjs';
import { ok } from './lib/expect.mjs';

const SKIP = !onPostgres && 'needs PostgreSQL (KNOWHUB_TEST_PG): the advisory writers lock';
const WRITER_LOCK = '7162200414'; // PG_WRITER_LOCK, fcgi/store/store_int.h

/** A psql session holding the writers' lock for seconds; resolves when it has it. */
function holdLock(url, seconds) {
    const p = spawn('psql', [url, '-X', '-q', '-c', `SELECT pg_advisory_lock(${WRITER_LOCK})`, '-c', `SELECT pg_sleep(${seconds})`], {
        stdio: ['ignore', 'ignore', 'pipe'],
    });
    return p;
}

describe('the writers lock on PostgreSQL', { skip: SKIP }, () => {
    let s;
    before(async () => {
        // One worker thread: the request after the refused write runs on the same connection.
        s = await startStack({ KNOWHUB_THREADS: '1' });
    });
    after(async () => {
        await s?.stop();
    });

    test('a write waiting past lock_timeout is refused 503 retry, and the connection serves on', async () => {
        const first = ok(await s.api('POST', '/api/knowledge', {
            token: s.admin,
            body: { category: 'experiences', title: 'before the lock', content: 'c', scenario: 's' },
        }));
        const holder = holdLock(s.databaseUrl, 14);
        await new Promise((r) => setTimeout(r, 800)); // the session has the lock
        // reads do not wait
        const t0 = Date.now();
        const read = await s.api('GET', `/api/knowledge/${first.id}`, { token: s.admin });
        assert.equal(read.status, 200, read.text);
        assert.ok(Date.now() - t0 < 2000, `a read waited ${Date.now() - t0} ms`);
        // a write waits lock_timeout, then 503
        const t1 = Date.now();
        const w = await s.api('POST', '/api/knowledge', {
            token: s.admin,
            body: { category: 'experiences', title: 'while locked', content: 'c', scenario: 's' },
            timeout: 30000,
        });
        const waited = Date.now() - t1;
        assert.equal(w.status, 503, w.text);
        assert.equal(w.json.error.code, 'SERVICE_UNAVAILABLE');
        assert.equal(w.json.error.retry, true);
        assert.ok(waited >= 9000 && waited < 13000, `refused after ${waited} ms`);
        // the same (only) connection answers the next requests at once
        const again = await s.api('GET', `/api/knowledge/${first.id}`, { token: s.admin });
        assert.equal(again.status, 200, again.text);
        holder.kill('SIGTERM');
        await new Promise((r) => holder.on('exit', r));
        const after = ok(await s.api('POST', '/api/knowledge', {
            token: s.admin,
            body: { category: 'experiences', title: 'after the lock', content: 'c', scenario: 's' },
        }));
        assert.ok(after.id);
        const list = ok(await s.api('GET', '/api/knowledge?limit=10', { token: s.admin }));
        assert.deepEqual(list.items.map((e) => e.title).sort(), ['after the lock', 'before the lock']);
    });
});
