// The CLI on PostgreSQL (docs/operations.md "PostgreSQL and several nodes"):
// `knowhub check` checks the PostgreSQL database (histories, paths, search
// terms, vectors, sequences, the generation, every statement) and says ok;
// `knowhub backup` is SQLite's online copy and says to use pg_dump instead,
// writing nothing; a database at an older schema version (9) is migrated
// when the CLI opens it. PostgreSQL only (KNOWHUB_TEST_PG).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BIN, assertNoBugs, onPostgres, startStack } from './lib/stack.mjs';
import { ok } from './lib/expect.mjs';

const SKIP = !onPostgres && 'needs PostgreSQL (KNOWHUB_TEST_PG)';

describe('the CLI on PostgreSQL', { skip: SKIP }, () => {
    let s;
    const cli = (...args) => {
        const r = spawnSync(BIN, args, { env: { ...process.env, ...s.cliEnv() }, encoding: 'utf8', timeout: 30000 });
        assertNoBugs(r.stderr, `knowhub ${args.join(' ')}`);
        return r;
    };
    before(async () => {
        s = await startStack();
        for (let i = 0; i < 5; i++)
            ok(await s.api('POST', '/api/knowledge', {
                token: s.admin,
                body: { category: 'experiences', title: `checked ${i}`, content: `body ${i}`, scenario: 's' },
            }));
    });
    after(async () => {
        await s?.stop();
    });

    test('knowhub check names each check and says ok', () => {
        const r = cli('check');
        assert.equal(r.status, 0, r.stdout + r.stderr);
        for (const name of ['revisions', 'knowledge_terms', 'sequences', 'generation', 'statements'])
            assert.match(r.stdout, new RegExp(`^${name}: (ok|all prepare)`, 'm'), r.stdout);
        assert.match(r.stdout, /^ok$/m);
    });

    test('a database left at schema version 9 is brought to the latest when a node opens it', () => {
        const psql = (sql) => spawnSync('psql', ['-X', '-q', '-t', '-A', '-v', 'ON_ERROR_STOP=1', '-d', s.databaseUrl, '-c', sql], { encoding: 'utf8', timeout: 30000 });
        const first = cli('check');
        const latest = Number(/^schema version: (\d+)$/m.exec(first.stdout)?.[1]);
        assert.ok(latest >= 10, first.stdout);
        assert.equal(psql('UPDATE schema_version SET version = 9').status, 0);
        assert.equal(psql('SELECT version FROM schema_version').stdout.trim(), '9');
        const r = cli('check');
        assert.equal(r.status, 0, r.stdout + r.stderr);
        assert.match(r.stdout, new RegExp(`^schema version: ${latest}$`, 'm'), r.stdout);
        assert.equal(psql('SELECT version FROM schema_version').stdout.trim(), String(latest));
    });

    test('knowhub backup refuses and points to pg_dump, writing nothing', () => {
        const file = path.join(s.dir, 'copy.db');
        const r = cli('backup', file);
        assert.equal(r.status, 2, r.stderr);
        assert.match(r.stderr, /pg_dump/);
        assert.equal(fs.existsSync(file), false);
    });
});
