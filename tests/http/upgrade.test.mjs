// upgrade.test.mjs: opening a database made by an older knowhub (the fixture
// tests/fixtures/schema-v5.db, see its README) backs it up, migrates it and
// keeps every row; a database from a newer knowhub is refused, untouched, by
// serve and by every sub-command that opens it; a backup that cannot be
// written refuses the migration.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { err, ok } from './lib/expect.mjs';
import { BIN, ROOT, assertNoBugs, onPostgres, startStack } from './lib/stack.mjs';

// Every test here is about SQLite database files (the schema-v5 fixture,
// PRAGMA user_version, the .db backups); none applies to PostgreSQL.
const SQLITE_ONLY = { skip: onPostgres && 'SQLite only: migrates and versions SQLite database files (the schema-v5 fixture, user_version, .db backups)' };

const FIXTURE = path.join(ROOT, 'tests/fixtures/schema-v5.db');
const IDS = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures/schema-v5.json'), 'utf8'));
const TABLES = ['knowledge', 'knowledge_revisions', 'knowledge_cases', 'traces', 'knowledge_log', 'sessions', 'tokens', 'logins', 'audit'];

function sqlite(db, query) {
    const r = spawnSync('sqlite3', ['-json', db, query], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`sqlite3 failed: ${r.stderr}`);
    return r.stdout.trim() ? JSON.parse(r.stdout) : [];
}
const userVersion = (db) => spawnSync('sqlite3', [db, 'PRAGMA user_version'], { encoding: 'utf8' }).stdout.trim();
const counts = (db) => Object.fromEntries(TABLES.map((t) => [t, sqlite(db, `SELECT count(*) AS n FROM ${t}`)[0].n]));
const sha256 = (file) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** A knowhub command on dir; its stderr shows no bug, whatever its exit status. */
function knowhub(dir, args, timeout = 15000) {
    const r = spawnSync(BIN, args, { env: { ...process.env, KNOWHUB_DATA: dir }, encoding: 'utf8', timeout });
    assertNoBugs(r.stderr, `knowhub ${args.join(' ')}`);
    return r;
}

/** A data directory holding a copy of the fixture (and its admin token). */
function fixtureDir(dir = fs.mkdtempSync(path.join(os.tmpdir(), 'knowhub-upgrade-'))) {
    fs.copyFileSync(FIXTURE, path.join(dir, 'knowhub.db'));
    fs.writeFileSync(path.join(dir, 'admin.token'), `${IDS.admin}\n`, { mode: 0o600 });
    return dir;
}

/** The schema version this knowhub creates. */
function latestVersion() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'knowhub-upgrade-'));
    try {
        const r = knowhub(dir, ['init']);
        assert.equal(r.status, 0, r.stderr);
        return Number(userVersion(path.join(dir, 'knowhub.db')));
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
}

test('the fixture is a schema version 5 database with rows in every table', SQLITE_ONLY, () => {
    assert.equal(userVersion(FIXTURE), '5');
    for (const [table, n] of Object.entries(counts(FIXTURE))) assert.ok(n > 0, `${table} is empty in the fixture`);
    assert.ok(latestVersion() > 5, 'this knowhub should know a newer schema than the fixture');
});

test('a schema v5 database is backed up, migrated and keeps its data', SQLITE_ONLY, async () => {
    const before = counts(FIXTURE);
    const s = await startStack({}, { prepare: (dir) => fixtureDir(dir) });
    const db = path.join(s.dir, 'knowhub.db');
    try {
        const log = s.log();
        const latest = latestVersion();
        assert.match(log, new RegExp(`migrated the database \\S+ from schema version 5 to ${latest} \\(backup of version 5: \\S+/backups/knowhub-v5-\\d{8}T\\d{6}Z\\.db\\)`), log);

        // The backup: one file, the old version, the old rows.
        const backups = fs.readdirSync(path.join(s.dir, 'backups'));
        assert.equal(backups.length, 1, backups.join(', '));
        assert.match(backups[0], /^knowhub-v5-\d{8}T\d{6}Z\.db$/);
        const backup = path.join(s.dir, 'backups', backups[0]);
        assert.equal(userVersion(backup), '5');
        assert.deepEqual(counts(backup), before);
        assert.equal((fs.statSync(backup).mode & 0o077), 0, 'the backup is for the owner only');

        // The migrated database: same rows, the new version.
        assert.equal(userVersion(db), String(latest));
        assert.deepEqual(counts(db), before);

        // Through the API: the tokens still authenticate (the revoked one does not).
        for (const token of [IDS.admin, IDS.editor, IDS.reader]) ok(await s.api('GET', '/api/auth/me', { token }));
        err(await s.api('GET', '/api/auth/me', { token: IDS.revoked }), 'UNAUTHORIZED', 401);

        const entry = ok(await s.api('GET', `/api/knowledge/${IDS.entry_id}`, { token: IDS.reader }));
        assert.equal(entry.title, 'Warm the cache after restart');
        assert.equal(entry.scenario, 'Cold cache after a restart makes the first searches slow');
        assert.deepEqual(entry.tags, { labels: ['cache', 'restart'], type: ['strategy'] });
        assert.equal(entry.eval.score, 5);
        assert.deepEqual(entry.eval.helpful_history.map((c) => c.case_id), ['case-1', 'trace:trace-fixture-1']);
        assert.equal(entry.injections.length, 1);
        assert.equal(entry.version, 2);
        const revisions = ok(await s.api('GET', `/api/knowledge/${IDS.entry_id}/revisions`, { token: IDS.reader }));
        assert.equal((revisions.items || revisions).length, 2);

        const read = ok(await s.api('POST', '/api/knowledge/read', { token: IDS.reader, body: { category: 'experiences', path: 'deploy/rollback.md' } }));
        assert.match(read.content, /Redeploy the previous tag/);
        const rules = ok(await s.api('POST', '/api/knowledge/list', { token: IDS.reader, body: { category: 'rules' } }));
        assert.ok(JSON.stringify(rules).includes('style.md'), JSON.stringify(rules));

        // Migration 6 indexed the old entries: searching finds them.
        const found = ok(await s.api('POST', '/api/knowledge/search', { token: IDS.reader, body: { query: 'rollback deploy' } }));
        assert.ok(JSON.stringify(found).includes('rollback.md'), JSON.stringify(found));

        const log5 = ok(await s.api('GET', '/api/traces/trace-fixture-1/knowledge_log', { token: IDS.reader }));
        assert.ok(JSON.stringify(log5).includes(IDS.entry_id), JSON.stringify(log5));
        const session = ok(await s.api('GET', '/api/sessions/session-fixture', { token: IDS.reader }));
        assert.equal(session.title, 'Cache analysis');
    } finally {
        await s.stop().catch(() => {});
    }
});

test('knowhub check is clean after the migration, and a second open makes no second backup', SQLITE_ONLY, () => {
    const dir = fixtureDir();
    try {
        let r = knowhub(dir, ['check']);
        assert.equal(r.status, 0, r.stdout + r.stderr);
        assert.match(r.stdout, /^ok$/m);
        assert.match(r.stderr, /migrated the database .* from schema version 5 to \d+/);
        r = knowhub(dir, ['check']);
        assert.equal(r.status, 0, r.stdout + r.stderr);
        assert.doesNotMatch(r.stderr, /migrated/);
        assert.equal(fs.readdirSync(path.join(dir, 'backups')).length, 1);
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
});

test('a database from a newer knowhub is refused by serve and every sub-command, untouched', SQLITE_ONLY, () => {
    const latest = latestVersion();
    const dir = fixtureDir();
    const db = path.join(dir, 'knowhub.db');
    try {
        // The fixture migrated to today's schema, then marked one version newer.
        assert.equal(knowhub(dir, ['check']).status, 0);
        fs.rmSync(path.join(dir, 'backups'), { recursive: true, force: true });
        assert.equal(spawnSync('sqlite3', [db, `PRAGMA wal_checkpoint(TRUNCATE); PRAGMA user_version = ${latest + 1}`]).status, 0);
        const hash = sha256(db);
        const exportDir = path.join(dir, 'export');
        for (const args of [['serve'], ['init'], ['check'], ['backup', path.join(dir, 'copy.db')], ['token', 'list'], ['token', 'create', '--space', 'default', '--role', 'reader'], ['token', 'revoke', '0123456789abcdef'], ['import', dir], ['export', exportDir]]) {
            const r = knowhub(dir, args);
            assert.notEqual(r.status, 0, `knowhub ${args.join(' ')} should refuse: ${r.stderr}`);
            assert.equal(r.signal, null, `knowhub ${args.join(' ')} did not exit by itself`);
            assert.match(r.stderr, new RegExp(`schema version ${latest + 1}, newer than this knowhub knows \\(${latest}\\)`), `knowhub ${args.join(' ')}: ${r.stderr}`);
            assert.match(r.stderr, /the database was not changed/);
            assert.equal(sha256(db), hash, `knowhub ${args.join(' ')} changed the database`);
            assert.equal(userVersion(db), String(latest + 1));
        }
        assert.ok(!fs.existsSync(path.join(dir, 'backups')), 'no backup of a refused database');
        assert.ok(!fs.existsSync(path.join(dir, 'copy.db')), 'knowhub backup copied a refused database');
        assert.ok(!fs.existsSync(path.join(dir, 'run/knowhub.sock')), 'serve listened');
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
});

test('a backup that cannot be written refuses the migration', SQLITE_ONLY, () => {
    const dir = fixtureDir();
    const db = path.join(dir, 'knowhub.db');
    try {
        fs.writeFileSync(path.join(dir, 'backups'), 'a file where the backups folder should be\n');
        for (const args of [['check'], ['serve']]) {
            const r = knowhub(dir, args);
            assert.equal(r.status, 1, r.stderr);
            assert.match(r.stderr, /needs a migration from schema version 5 to \d+, but the backup before it could not be written to \S+backups\/knowhub-v5-\d{8}T\d{6}Z\.db \(Not a directory\); nothing was migrated/, r.stderr);
            assert.equal(userVersion(db), '5');
        }
        // Once the folder can be made, the migration goes ahead.
        fs.rmSync(path.join(dir, 'backups'));
        assert.equal(knowhub(dir, ['check']).status, 0);
        assert.notEqual(userVersion(db), '5');
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
});
