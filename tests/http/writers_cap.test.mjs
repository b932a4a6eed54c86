// A write lock held long leaves threads for readers (issue 23): a
// PostgreSQL node frozen while holding the writers' lock made reads on the
// other node wait 9.5 s behind waiting writers, though reads never wait
// for the lock itself: every worker thread was taken by a writer waiting
// its turn. Now at most half the threads wait the whole busy timeout; a
// writer past that waits a second at most, then is answered 503 db_busy
// (retry: true) (a burst of short writes still goes through:
// concurrency.test.mjs). The lock is held
// from outside, as a frozen node would: on SQLite by an sqlite3 process in
// BEGIN IMMEDIATE, on PostgreSQL by a psql session with the advisory lock.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { onPostgres, startStack } from './lib/stack.mjs';
import { ok } from './lib/expect.mjs';
import { sleep } from './lib/llmtest.mjs';

const WRITER_LOCK = '7162200414'; // PG_WRITER_LOCK, fcgi/store/store_int.h

/** Hold the write lock from another process; resolves with a release function once held. */
async function holdWriteLock(s) {
    const p = onPostgres
        ? spawn('psql', [s.databaseUrl, '-X', '-q', '-c', `SELECT pg_advisory_lock(${WRITER_LOCK})`, '-c', 'SELECT pg_sleep(5)'], { stdio: ['ignore', 'ignore', 'pipe'] })
        : spawn('sqlite3', [path.join(s.dir, 'knowhub.db')], { stdio: ['pipe', 'ignore', 'pipe'] });
    if (!onPostgres) p.stdin.write('PRAGMA busy_timeout = 5000;\nBEGIN IMMEDIATE;\n');
    await sleep(800); // the other process has it
    return async () => {
        // PostgreSQL: the session lets go when its 5 s sleep ends (a killed psql
        // would leave its backend sleeping with the lock)
        if (!onPostgres) p.stdin.end('COMMIT;\n.quit\n');
        await new Promise((r) => (p.exitCode !== null || p.signalCode !== null ? r() : p.on('exit', r)));
    };
}

describe('writers waiting for the write lock never take every thread', () => {
    let s;
    before(async () => {
        s = await startStack({ KNOWHUB_THREADS: '4' }); // at most 2 writers wait
    });
    after(async () => {
        await s?.stop();
    });

    test('a read is answered at once while four writers queue behind a lock held elsewhere; the writers past the cap are refused within a second', async () => {
        const entry = ok(await s.api('POST', '/api/knowledge', { token: s.admin, body: { scenario: 'Before the lock', content: 'c' } }));
        const release = await holdWriteLock(s);
        let writes;
        try {
            const t0 = Date.now();
            writes = Array.from({ length: 4 }, (_, i) =>
                s.api('POST', '/api/knowledge', { token: s.admin, body: { scenario: `While locked ${i}`, content: 'c' }, timeout: 40000 }).then((r) => ({ r, ms: Date.now() - t0 })),
            );
            await sleep(500);
            const t1 = Date.now();
            const read = await s.api('GET', `/api/knowledge/${entry.id}`, { token: s.admin, timeout: 40000 });
            const readMs = Date.now() - t1;
            assert.equal(read.status, 200, read.text);
            assert.ok(readMs < 3000, `the read waited ${readMs} ms behind the writers`);
            await sleep(3500);
        } finally {
            await release();
        }
        const done = await Promise.all(writes);
        const refused = done.filter(({ r }) => r.status === 503);
        const written = done.filter(({ r }) => r.status === 200 && r.json?.status === 'success');
        assert.ok(refused.length >= 1, `a writer past the cap is refused: ${done.map(({ r, ms }) => `${r.status}/${ms}ms`).join(' ')}`);
        for (const { r, ms } of refused) {
            assert.equal(r.json.error.code, 'SERVICE_UNAVAILABLE');
            assert.equal(r.json.error.retry, true);
            assert.ok(ms < 3000, `refused within a second, not after the busy timeout (${ms} ms)`);
        }
        assert.equal(refused.length + written.length, 4, done.map(({ r }) => r.text.slice(0, 120)).join('\n'));
        const titles = ok(await s.api('GET', '/api/knowledge?limit=20', { token: s.admin })).items.map((e) => e.scenario);
        assert.equal(titles.filter((t) => t.startsWith('While locked')).length, written.length, 'each answered write is there, no refused one');
    });
});
