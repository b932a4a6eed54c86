// tokens: an admin lists, creates and revokes the tokens of its own space
// (GET/POST /api/tokens, DELETE /api/tokens/{id}); every caller lists the
// spaces it may use (GET /api/spaces). Scoped to the caller's space, admins
// only, audited, and a revoked token is refused at once.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { BIN, startStack, tokenId } from './lib/stack.mjs';
import { err, errKey, ok, TIME_RE } from './lib/expect.mjs';

let s;
before(async () => {
    s = await startStack();
});
after(async () => {
    await s?.stop();
});

const list = async (token = s.admin) => ok(await s.api('GET', '/api/tokens', { token }));
const create = (body, token = s.admin) => s.api('POST', '/api/tokens', { token, body });
const revoke = (id, token = s.admin) => s.api('DELETE', `/api/tokens/${id}`, { token });
const auditLines = () =>
    fs
        .readFileSync(path.join(s.dir, 'logs/audit.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));

describe('tokens of the space', () => {
    test('an admin creates a token, shown once, that works at once with its role', async () => {
        const d = ok(await create({ role: 'agent', label: 'ci bot' }));
        assert.match(d.token, /^kh_[0-9a-f]{16}_\S+$/);
        assert.equal(d.id, tokenId(d.token));
        assert.deepEqual({ space: d.space, role: d.role, label: d.label }, { space: 'default', role: 'agent', label: 'ci bot' });
        assert.match(d.created_at, TIME_RE);
        const me = ok(await s.api('GET', '/api/auth/me', { token: d.token }));
        assert.deepEqual(me, { space: 'default', role: 'agent', token_id: d.id });
        // The list shows it, never its secret or hash.
        const l = await list();
        const row = l.items.find((x) => x.id === d.id);
        assert.deepEqual(Object.keys(row).sort(), ['created_at', 'current', 'id', 'label', 'last_used_at', 'revoked_at', 'role', 'state']);
        assert.equal(row.state, 'valid');
        assert.equal(row.current, false);
        assert.match(row.last_used_at, TIME_RE, 'the /api/auth/me call above used it');
        assert.ok(!JSON.stringify(l).includes(d.token.slice('kh_'.length + 17)), 'the secret is in the list');
        // Audited with the admin as the actor, the id and never the secret.
        const a = auditLines().find((x) => x.action === 'token.create' && x.target === d.id);
        assert.ok(a, 'no audit line for the new token');
        assert.equal(a.actor, `token:${tokenId(s.admin)}:first-start admin`);
        assert.equal(a.space, 'default');
        assert.ok(!fs.readFileSync(path.join(s.dir, 'logs/audit.jsonl'), 'utf8').includes(d.token), 'the token is in the audit log');
    });

    test('the list holds the caller space alone, newest first, and marks the caller', async () => {
        const other = s.token('tok-other', 'admin', 'other space');
        const mine = ok(await create({ role: 'reader' })).id;
        const l = await list();
        assert.ok(!l.items.some((x) => x.id === tokenId(other)), 'another space\'s token is listed');
        // Newest first, by creation time (to the second): the new one is in the newest second.
        const times = l.items.map((x) => x.created_at);
        assert.deepEqual(times, [...times].sort().reverse(), 'newest first');
        assert.ok(l.items.filter((x) => x.created_at === times[0]).some((x) => x.id === mine), 'the new token is not among the newest');
        assert.equal(l.total, l.items.length);
        assert.equal(l.truncated, false);
        assert.deepEqual(l.items.filter((x) => x.current).map((x) => x.id), [tokenId(s.admin)]);
        const theirs = await list(other);
        assert.deepEqual(theirs.items.map((x) => x.id), [tokenId(other)]);
    });

    test('bad input answers its error and creates nothing', async () => {
        const before = (await list()).total;
        errKey(await create({ role: 'god' }), 'INVALID_REQUEST', 'invalid_role', { role: 'god' });
        err(await create({}), 'INVALID_REQUEST');
        err(await create({ role: 7 }), 'INVALID_REQUEST');
        errKey(await create({ role: 'agent', label: 'x'.repeat(201) }), 'LIMIT_EXCEEDED', 'field_too_long', { field: 'label', max: 200, got: 201 });
        err(await create({ role: 'agent', label: ['a'] }), 'INVALID_REQUEST');
        err(await s.api('POST', '/api/tokens', { token: s.admin, rawBody: '{"role":' }), 'INVALID_REQUEST');
        assert.equal((await list()).total, before);
    });

    test('only admins: an editor, an agent and a reader are refused, a reader lists its spaces', async () => {
        for (const role of ['editor', 'agent', 'reader']) {
            const t = s.token('default', role, `not admin ${role}`);
            err(await s.api('GET', '/api/tokens', { token: t }), 'FORBIDDEN', 403);
            err(await create({ role: 'admin' }, t), 'FORBIDDEN', 403);
            err(await revoke(tokenId(s.admin), t), 'FORBIDDEN', 403);
            assert.deepEqual(ok(await s.api('GET', '/api/spaces', { token: t })), {
                items: [{ name: 'default', role, current: true }],
                current: 'default',
            });
        }
        err(await s.api('GET', '/api/tokens'), 'UNAUTHORIZED', 401);
        err(await s.api('GET', '/api/spaces'), 'UNAUTHORIZED', 401);
    });
});

describe('revoking', () => {
    test('a revoked token is refused on its next request, and stays listed as revoked', async () => {
        const d = ok(await create({ role: 'agent', label: 'to revoke' }));
        ok(await s.api('GET', '/api/knowledge?limit=1', { token: d.token }));
        assert.deepEqual(ok(await revoke(d.id)), { id: d.id, revoked: true });
        err(await s.api('GET', '/api/knowledge?limit=1', { token: d.token }), 'UNAUTHORIZED', 401);
        const row = (await list()).items.find((x) => x.id === d.id);
        assert.equal(row.state, 'revoked');
        assert.match(row.revoked_at, TIME_RE);
        errKey(await revoke(d.id), 'NOT_FOUND', 'not_found');
        const a = auditLines().find((x) => x.action === 'token.revoke' && x.target === d.id);
        assert.equal(a.actor, `token:${tokenId(s.admin)}:first-start admin`);
        // The operator's list agrees.
        const cli = spawnSync(BIN, ['token', 'list'], { env: { ...process.env, ...s.cliEnv() }, encoding: 'utf8' });
        assert.match(cli.stdout, new RegExp(`^${d.id} .* revoked `, 'm'));
    });

    test('another space\'s token is not found and keeps working', async () => {
        const theirs = s.token('tok-other2', 'agent', 'not yours');
        errKey(await revoke(tokenId(theirs)), 'NOT_FOUND', 'not_found');
        ok(await s.api('GET', '/api/knowledge?limit=1', { token: theirs }));
    });

    test('the caller\'s own token is a CONFLICT and keeps working; a malformed id is not found', async () => {
        errKey(await revoke(tokenId(s.admin)), 'CONFLICT', 'token_self_revoke');
        await list();
        for (const bad of ['nothex0000000000', '123', 'ABCDEF0123456789', 'a'.repeat(300)])
            err(await revoke(bad), 'NOT_FOUND');
    });

    test('an admin revokes another admin of its space', async () => {
        const second = ok(await create({ role: 'admin', label: 'second admin' }));
        ok(await revoke(tokenId(s.admin), second.token));
        err(await s.api('GET', '/api/tokens', { token: s.admin }), 'UNAUTHORIZED', 401);
        s.admin = second.token; /* the rest of the file goes on with the second admin */
        assert.ok((await list()).items.some((x) => x.id === second.id && x.current));
    });
});
