// Disk full and read-only database. Writes answer a clear error
// (SERVICE_UNAVAILABLE, HTTP 503, retry: true) and change nothing, reads keep
// working, and once the disk is writable again writes succeed, every write
// acknowledged before is there and `knowhub check` is clean.
//
// How it is simulated here (both need root; without the capability the test
// is skipped and says why):
// - read-only: `chattr +i` on knowhub.db and knowhub.db-wal while knowhub
//   serves (CAP_LINUX_IMMUTABLE; writes through the open descriptors then fail
//   with EPERM, as on a read-only remount); `chattr -i` restores.
// - disk full: knowhub is stopped, its database moved to a 16 MiB tmpfs
//   (`mount -t tmpfs`, CAP_SYS_ADMIN) mounted inside the data directory with
//   knowhub.db a symbolic link to it (SQLite follows it and keeps -wal and
//   -shm beside the real file), knowhub restarted; a filler file then takes
//   every free byte in the middle of a write storm; removing it restores.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startStack } from '../http/lib/stack.mjs';
import { err, ok } from '../http/lib/expect.mjs';
import { assertCheckClean, killKnowhub, startKnowhub, waitFor } from './lib.mjs';

const sh = (cmd, args) => spawnSync(cmd, args, { encoding: 'utf8', timeout: 30000 });

/** Why a file cannot be made immutable here, or null when it can. */
function chattrUnsupported() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'knowhub-chattr-'));
    const f = path.join(dir, 'probe');
    fs.writeFileSync(f, 'x');
    try {
        const r = sh('chattr', ['+i', f]);
        if (r.error) return `chattr not available (${r.error.code})`;
        if (r.status !== 0) return `chattr +i refused: ${r.stderr.trim()}`;
        sh('chattr', ['-i', f]);
        return null;
    } finally {
        sh('chattr', ['-i', f]);
        fs.rmSync(dir, { recursive: true, force: true });
    }
}

/** Why a tmpfs cannot be mounted here, or null when it can. */
function mountUnsupported() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'knowhub-mount-'));
    try {
        const r = sh('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir]);
        if (r.error) return `mount not available (${r.error.code})`;
        if (r.status !== 0) return `mount -t tmpfs refused: ${r.stderr.trim()}`;
        sh('umount', [dir]);
        return null;
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
}

const noChattr = chattrUnsupported();
const noMount = mountUnsupported();

/** What a space looks like to a reader: totals, entries with counters, files, search, traces. */
async function fingerprint(s, token, ids) {
    const list = ok(await s.api('GET', '/api/knowledge?limit=100', { token }));
    const entries = [];
    for (const id of ids) entries.push(ok(await s.api('GET', `/api/knowledge/${id}`, { token })));
    return {
        total: list.total,
        ids: list.items.map((e) => e.id),
        entries,
        files: ok(await s.api('POST', '/api/knowledge/list', { token, body: { category: 'experiences' } })),
        search: ok(await s.api('GET', '/api/knowledge/search?q=diskfull&top_k=50&min_score=1', { token })).results.map((e) => e.id),
        fileSearch: ok(await s.api('POST', '/api/knowledge/search', { token, body: { query: 'diskfull' } })).results.map((e) => e.id),
        read: ok(await s.api('POST', '/api/knowledge/read', { token, body: { category: 'experiences', path: 'disk/doc.md' } })).content,
        traces: ok(await s.api('GET', '/api/traces', { token })).items.map((t) => t.trace_id),
        exportLines: (await s.api('GET', '/api/knowledge/export', { token })).text.split('\n').filter(Boolean).length,
    };
}

async function seed(s, token) {
    const ids = [];
    for (let i = 0; i < 10; i++) ids.push(ok(await s.api('POST', '/api/knowledge', { token, body: { scenario: `diskfull seed ${i}`, content: `diskfull content ${i}` } })).id);
    ok(await s.api('PUT', `/api/knowledge/${ids[0]}`, { token, body: { add_helpful_case: { case_id: 'seed-case', scenario: 's', result: 'r' } } }));
    ok(await s.api('POST', '/api/knowledge/write', { token, body: { category: 'experiences', path: 'disk/doc.md', content: 'diskfull document body' } }));
    ok(await s.api('POST', '/api/traces', { token, body: { trace_id: 'trace-disk', task: 'diskfull task' } }));
    return ids;
}

/** Every kind of write, each of which must be refused with 503 SERVICE_UNAVAILABLE, retry: true. */
function writes(ids, n) {
    return [
        ['POST', '/api/knowledge', { scenario: `refused ${n}`, content: 'refused' }],
        ['PUT', `/api/knowledge/${ids[1]}`, { add_helpful_case: { case_id: `refused-${n}`, scenario: 's', result: 'r' }, update_score: 5 }],
        ['DELETE', `/api/knowledge/${ids[2]}`],
        ['POST', '/api/knowledge/write', { category: 'experiences', path: `disk/refused-${n}.md`, content: 'refused' }],
        ['POST', '/api/knowledge/write', { category: 'experiences', path: 'disk/doc.md', content: 'refused overwrite' }],
        ['POST', '/api/knowledge/rename', { category: 'experiences', path: 'disk/doc.md', new_path: 'disk/renamed.md' }],
        ['POST', '/api/knowledge/delete', { category: 'experiences', path: 'disk/doc.md' }],
        ['POST', `/api/knowledge/${ids[3]}/revert`, { version: 1 }],
        ['POST', '/api/traces', { trace_id: `trace-refused-${n}`, task: 'refused' }],
        ['POST', '/api/traces/trace-disk/knowledge_log', { knowledge_id: ids[4] }],
        ['POST', '/api/sessions', { id: `session-refused-${n}`, tables: [] }],
    ];
}

function assertUnavailable(r, what) {
    const e = err(r, 'SERVICE_UNAVAILABLE', 503);
    assert.equal(e.retry, true, what);
    assert.match(e.message, /read-only|full/, `${what}: ${e.message}`);
    return e;
}

describe('read-only database (chattr +i on knowhub.db and -wal)', { skip: noChattr || false }, () => {
    let s, token, ids, before0, files;
    before(async () => {
        s = await startStack();
        token = s.token('disk', 'agent', 'read-only test');
        ids = await seed(s, token);
        before0 = await fingerprint(s, token, ids);
        files = ['knowhub.db', 'knowhub.db-wal'].map((f) => path.join(s.dir, f));
        for (const f of files) assert.ok(fs.existsSync(f), `${f} missing`);
    });
    after(async () => {
        if (files) sh('chattr', ['-i', ...files]);
        await s?.stop();
    });

    test('writes answer 503 SERVICE_UNAVAILABLE (retry: true), reads answer as before, nothing changes', async () => {
        const r = sh('chattr', ['+i', ...files]);
        assert.equal(r.status, 0, r.stderr);
        try {
            for (let round = 0; round < 2; round++) {
                for (const [m, p, body] of writes(ids, round)) assertUnavailable(await s.api(m, p, { token, body }), `${m} ${p}`);
                // batch_update applies each item on its own: each item says it.
                const b = ok(await s.api('POST', '/api/knowledge/batch_update', { token, body: { feedback_list: [{ knowledge_id: ids[5], is_effective: true, case_id: `ro-${round}` }] } }));
                assert.equal(b.succeeded, 0);
                assert.equal(b.results[0].error.code, 'SERVICE_UNAVAILABLE', JSON.stringify(b));
                assert.deepEqual(await fingerprint(s, token, ids), before0, 'reads while read-only');
            }
            ok(await s.api('GET', '/api/health'));
        } finally {
            assert.equal(sh('chattr', ['-i', ...files]).status, 0);
        }
    });

    test('writable again: writes succeed at once, nothing was lost or half-written, check clean', async () => {
        const d = ok(await s.api('POST', '/api/knowledge', { token, body: { scenario: 'diskfull after', content: 'written after the read-only spell' } }));
        const now = await fingerprint(s, token, ids);
        assert.equal(now.total, before0.total + 1);
        assert.deepEqual(now.entries, before0.entries);
        assert.equal(now.read, before0.read);
        assert.deepEqual(now.traces, before0.traces);
        assert.ok(now.ids.includes(d.id));
        assertCheckClean(s, 'after the read-only spell');
        // And after a restart from that state.
        await killKnowhub(s, 'SIGTERM');
        await startKnowhub(s);
        assert.deepEqual((await fingerprint(s, token, ids)).entries, before0.entries);
        assertCheckClean(s, 'after a restart');
    });
});

describe('disk full (the database on a 16 MiB tmpfs, filled during a write storm)', { skip: noMount || false }, () => {
    let s, token, ids, mnt, filler;
    let mounted = false;
    const umount = () => {
        if (mounted) {
            const r = sh('umount', [mnt]);
            if (r.status !== 0) sh('umount', ['-l', mnt]);
            mounted = false;
        }
    };
    process.on('exit', umount);
    before(async () => {
        s = await startStack();
        token = s.token('disk', 'agent', 'disk full test');
        ids = await seed(s, token);
        await killKnowhub(s, 'SIGTERM'); // a clean stop folds the WAL into knowhub.db
        mnt = path.join(s.dir, 'dbfs');
        fs.mkdirSync(mnt);
        const r = sh('mount', ['-t', 'tmpfs', '-o', 'size=16m,mode=0750', 'tmpfs', mnt]);
        assert.equal(r.status, 0, r.stderr);
        mounted = true;
        for (const f of ['knowhub.db', 'knowhub.db-wal', 'knowhub.db-shm']) {
            const from = path.join(s.dir, f);
            if (!fs.existsSync(from)) continue;
            fs.copyFileSync(from, path.join(mnt, f));
            fs.rmSync(from);
        }
        fs.symlinkSync(path.join(mnt, 'knowhub.db'), path.join(s.dir, 'knowhub.db'));
        await startKnowhub(s);
        assert.ok(fs.existsSync(path.join(mnt, 'knowhub.db-wal')), 'the WAL is on the tmpfs, beside the real file');
        filler = path.join(mnt, 'filler');
    });
    after(async () => {
        if (s && !s.stopped) {
            try {
                await killKnowhub(s, 'SIGTERM');
            } catch {
                /* already gone */
            }
        }
        umount();
        await s?.stop();
    });

    // What the storm got acknowledged, by kind, and every 503 it got.
    const acked = { creates: new Map(), files: new Map(), cases: new Set() };
    const refused = [];
    const refusedKinds = {};
    const other = [];
    let before0;

    /** Take every free byte of the tmpfs. */
    function fill() {
        const fd = fs.openSync(filler, 'a');
        try {
            for (const size of [1 << 20, 64 << 10, 4 << 10, 512]) {
                for (let i = 0; i < 100000; i++) {
                    try {
                        fs.writeSync(fd, Buffer.alloc(size, 1));
                    } catch (e) {
                        if (e.code !== 'ENOSPC') throw e;
                        break;
                    }
                }
            }
        } finally {
            fs.closeSync(fd);
        }
    }

    test('the disk fills during a storm of four kinds of write: every refusal is 503 SERVICE_UNAVAILABLE "full" (retry: true); reads keep working', async () => {
        before0 = await fingerprint(s, token, ids);
        let stop = false;
        const client = async (c) => {
            for (let n = 0; n < 100000 && !stop; n++) {
                const tag = `full-c${c}-n${n}`;
                const k = n % 4;
                const req =
                    k === 0 ? ['POST', '/api/knowledge', { scenario: `storm ${tag}`, content: `${tag} `.repeat(100) }]
                    : k === 1 ? ['PUT', `/api/knowledge/${ids[6]}`, { add_helpful_case: { case_id: tag, scenario: 's'.repeat(500), result: 'r' } }]
                    : k === 2 ? ['POST', '/api/knowledge/write', { category: 'experiences', path: `storm/${tag}.md`, content: `${tag} `.repeat(100) }]
                    : ['POST', '/api/traces', { trace_id: `trace-${tag}`, task: `${tag} `.repeat(50) }];
                const r = await s.api(req[0], req[1], { token, body: req[2] });
                if (r.status === 200 && r.json?.status === 'success') {
                    if (k === 0) acked.creates.set(r.json.data.id, tag);
                    else if (k === 1) acked.cases.add(tag);
                    else if (k === 2) acked.files.set(req[2].path, tag);
                } else if (r.status === 503) {
                    refused.push(r);
                    const kind = `${req[0]} ${req[1].replace(/knowledge-\S+/, '{id}')}`;
                    refusedKinds[kind] = (refusedKinds[kind] || 0) + 1;
                } else {
                    other.push(`${r.status} ${r.text.slice(0, 200)}`);
                }
                if (refused.length >= 60) stop = true;
            }
        };
        const clients = [0, 1, 2, 3].map(client);
        await waitFor(() => acked.creates.size >= 10, 20000, 'writes before the fill');
        fill();
        await waitFor(() => stop, 30000, '60 refused writes on the full disk');
        await Promise.all(clients);
        assert.deepEqual(other, [], 'answers other than success or 503');
        for (const r of refused) {
            assertUnavailable(r, 'a write on a full disk');
            assert.match(r.json.error.message, /full/);
        }
        // Reads answer as before (the storm's own acknowledged writes aside).
        const now = await fingerprint(s, token, ids);
        assert.deepEqual(now.entries.filter((e) => e.id !== ids[6]), before0.entries.filter((e) => e.id !== ids[6]));
        assert.equal(now.read, before0.read);
        assert.equal(now.total, before0.total + acked.creates.size + acked.files.size);
        ok(await s.api('GET', '/api/health'));
        console.log(`# disk full: ${acked.creates.size + acked.files.size + acked.cases.size} writes acknowledged, ${refused.length} refused with 503 once full ${JSON.stringify(refusedKinds)}`);
        assert.ok(Object.keys(refusedKinds).length >= 3, `refusals of several kinds of write: ${JSON.stringify(refusedKinds)}`);
    });

    test('space freed: writes succeed again, every acknowledged write is there, check clean after a restart', async () => {
        fs.rmSync(filler);
        for (let i = 0; i < 20; i++) ok(await s.api('POST', '/api/knowledge', { token, body: { scenario: `after the disk was freed ${i}`, content: 'ok again '.repeat(100) } }));
        await killKnowhub(s, 'SIGTERM');
        await startKnowhub(s);
        const entries = (await s.api('GET', '/api/knowledge/export', { token })).text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
        const byId = new Map(entries.map((e) => [e.id, e]));
        const byPath = new Map(entries.map((e) => [e.path, e]));
        for (const [id, tag] of acked.creates) assert.ok(byId.get(id)?.content.startsWith(tag), `acknowledged ${id} lost`);
        for (const [p, tag] of acked.files) assert.ok(byPath.get(p)?.content.startsWith(tag), `acknowledged file ${p} lost`);
        for (const id of ids) assert.ok(byId.has(id));
        const cases = ok(await s.api('GET', `/api/knowledge/${ids[6]}/cases?kind=helpful&limit=1000`, { token }));
        const have = new Set(cases.items.map((c) => c.case_id));
        for (const c of acked.cases) assert.ok(have.has(c), `acknowledged case ${c} lost`);
        assert.equal(byId.get(ids[6]).eval.helpful, cases.total, 'the counter is the history');
        assert.equal(entries.length, before0.exportLines + acked.creates.size + acked.files.size + 20);
        assertCheckClean(s, 'after the disk was full');
    });
});
