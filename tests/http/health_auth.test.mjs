// health, request ids, routing (404/405), authentication (401) and roles (403),
// and the isolation of spaces.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ROOT, startStack, tokenId } from './lib/stack.mjs';
import { assertCommon, err, ok, REQUEST_ID_RE } from './lib/expect.mjs';

let s;
before(async () => {
    s = await startStack();
});
after(async () => {
    await s?.stop();
});

async function create(token, body = {}) {
    return s.api('POST', '/api/knowledge', {
        token,
        body: { scenario: 'auth test scenario', content: 'auth test content', ...body },
    });
}

async function total(token = s.admin) {
    return ok(await s.api('GET', '/api/knowledge?limit=1', { token })).total;
}

describe('health', () => {
    test('GET /api/health needs no token and reports the schema', async () => {
        const d = ok(await s.api('GET', '/api/health'));
        assert.equal(d.ok, true);
        assert.equal(typeof d.version, 'string');
        assert.ok(Number.isInteger(d.schema) && d.schema >= 1, `schema ${d.schema}`);
    });

    test('a token, even a bad one, does not matter for /api/health', async () => {
        ok(await s.api('GET', '/api/health', { token: 'kh_garbage' }));
    });

    test('GET /api/auth/me names the space, role and token id', async () => {
        const d = ok(await s.api('GET', '/api/auth/me', { token: s.admin }));
        assert.deepEqual(d, { space: 'default', role: 'admin', token_id: tokenId(s.admin) });
        const reader = s.token('team-a', 'reader', 'me test');
        assert.deepEqual(ok(await s.api('GET', '/api/auth/me', { token: reader })), {
            space: 'team-a',
            role: 'reader',
            token_id: tokenId(reader),
        });
    });
});

describe('request ids', () => {
    test('a plain caller id is echoed in the header and in error bodies', async () => {
        const id = 'client-req.0001_abc';
        const r = await s.api('GET', '/api/health', { headers: { 'X-Request-Id': id } });
        ok(r);
        assert.equal(r.headers['x-request-id'], id);
        const e = await s.api('GET', '/api/no-such-thing', { headers: { 'X-Request-Id': id } });
        assert.equal(err(e, 'NOT_FOUND', 404).request_id, id);
        const u = await s.api('GET', '/api/knowledge', { headers: { 'X-Request-Id': id } });
        assert.equal(err(u, 'UNAUTHORIZED', 401).request_id, id);
    });

    test('hostile or odd ids are replaced, never reflected', async () => {
        const hostile = [
            '<script>alert(1)</script>',
            'short',
            'x'.repeat(65),
            'id with spaces 123',
            'abc;def=ghi123',
            '../../etc/passwd',
            'abcdefgh\tijk',
            '%0d%0aSet-Cookie:x=1',
        ];
        for (const id of hostile) {
            const r = await s.api('GET', '/api/knowledge/nope', {
                headers: { 'X-Request-Id': id },
                token: s.admin,
            });
            const e = err(r, 'NOT_FOUND');
            assert.notEqual(r.headers['x-request-id'], id);
            assert.match(r.headers['x-request-id'], REQUEST_ID_RE);
            assert.ok(!r.text.includes(id), `body reflects ${id}`);
            assert.equal(e.request_id, r.headers['x-request-id']);
        }
    });

    test('without a caller id each response gets a fresh one', async () => {
        const ids = new Set();
        for (let i = 0; i < 5; i++) ids.add((await s.api('GET', '/api/health')).headers['x-request-id']);
        assert.equal(ids.size, 5);
    });

    test('every kind of response carries X-Request-Id', async () => {
        const responses = [
            await s.api('GET', '/api/health'),
            await s.api('GET', '/api/knowledge', { token: s.admin }),
            await s.api('GET', '/api/knowledge/knowledge-20200101-00000000', { token: s.admin }),
            await s.api('GET', '/api/knowledge'),
            await s.api('POST', '/api/knowledge', { token: s.token('default', 'reader'), body: {} }),
            await s.api('GET', '/api/missing'),
            await s.api('PATCH', '/api/knowledge'),
        ];
        assert.deepEqual(
            responses.map((r) => r.status),
            [200, 200, 200, 401, 403, 404, 405],
        );
        for (const r of responses) assertCommon(r);
        const page = await s.api('GET', '/');
        assert.match(page.headers['x-request-id'] || '', REQUEST_ID_RE);
    });
});

describe('routing', () => {
    test('unknown routes are 404 with the JSON envelope, token or not', async () => {
        for (const [method, path] of [
            ['GET', '/api/nope'],
            ['POST', '/api/nope'],
            ['GET', '/api/knowledge/x/y/z'],
            ['GET', '/api/knowledge/x/revisions/1'],
            ['DELETE', '/api/knowledge/x/y'],
            ['GET', '/api/health/'],
            ['GET', '/api/'],
        ]) {
            err(await s.api(method, path), 'NOT_FOUND', 404);
            err(await s.api(method, path, { token: s.admin }), 'NOT_FOUND', 404);
        }
    });

    test('a known route with the wrong method is 405 with Allow (HEAD next to GET)', async () => {
        const cases = [
            ['PATCH', '/api/knowledge', ['GET', 'HEAD', 'POST']],
            ['PUT', '/api/knowledge', ['GET', 'HEAD', 'POST']],
            ['DELETE', '/api/knowledge', ['GET', 'HEAD', 'POST']],
            ['GET', '/api/knowledge/batch_update', ['POST']],
            ['PUT', '/api/knowledge/batch_update', ['POST']],
            ['POST', '/api/knowledge/knowledge-20200101-00000000', ['DELETE', 'GET', 'HEAD', 'PUT']],
            ['PATCH', '/api/knowledge/abc', ['DELETE', 'GET', 'HEAD', 'PUT']],
            ['POST', '/api/knowledge/abc/revisions', ['GET', 'HEAD']],
            ['GET', '/api/knowledge/abc/revert', ['POST']],
            ['POST', '/api/health', ['GET', 'HEAD']],
            ['DELETE', '/api/auth/me', ['GET', 'HEAD']],
        ];
        for (const [method, path, allowed] of cases) {
            for (const token of [undefined, s.admin]) {
                const r = await s.api(method, path, { token });
                const e = err(r, 'METHOD_NOT_ALLOWED', 405);
                assert.ok(r.headers.allow, `${method} ${path}: no Allow header`);
                const allow = r.headers.allow.split(',').map((m) => m.trim()).sort();
                assert.deepEqual(allow, allowed, `${method} ${path}`);
                assert.ok(e.message.includes(method));
            }
        }
    });

    test('405 changes nothing', async () => {
        const before = await total();
        err(await s.api('PATCH', '/api/knowledge', { token: s.admin, body: { scenario: 'a', content: 'b' } }), 'METHOD_NOT_ALLOWED', 405);
        err(await s.api('PUT', '/api/knowledge', { token: s.admin, body: { scenario: 'a', content: 'b' } }), 'METHOD_NOT_ALLOWED', 405);
        assert.equal(await total(), before);
    });
});

describe('every route of fcgi/app/routes.c', () => {
    // Read the route table itself, so a new route is covered the day it lands.
    const table = fs.readFileSync(path.join(ROOT, 'fcgi/app/routes.c'), 'utf8');
    const routes = [...table.matchAll(/\{\s*"([A-Z]+)",\s*"(\/api\/[^"]*)",\s*ROLE_([A-Z]+),\s*\w+\s*(?:,\s*\d+\s*)?\}/g)].map(
        ([, method, pattern, role]) => ({ method, pattern, role, path: pattern.replace(/\{[a-z_]+\}/g, 'knowledge-20200101-00000000') }),
    );

    test('the table was found', () => {
        assert.ok(routes.length >= 10, `only ${routes.length} routes parsed`);
        for (const [m, p] of [['GET', '/api/health'], ['GET', '/api/knowledge'], ['POST', '/api/knowledge'], ['PUT', '/api/knowledge/{id}'], ['DELETE', '/api/knowledge/{id}'], ['POST', '/api/knowledge/batch_update'], ['GET', '/api/knowledge/{id}/revisions'], ['POST', '/api/knowledge/{id}/revert']])
            assert.ok(routes.some((r) => r.method === m && r.pattern === p), `${m} ${p} missing`);
    });

    test('without a token: 401 (the public routes, health and login, aside)', async () => {
        for (const r of routes) {
            const res = await s.api(r.method, r.path, { body: r.method === 'GET' || r.method === 'DELETE' ? undefined : {} });
            if (r.role === 'NONE') {
                // Public: answered by its handler (login with {} says which field is missing).
                assert.equal(res.status, 200, `${r.method} ${r.pattern}: ${res.status}`);
                assert.notEqual(res.json?.error?.code, 'UNAUTHORIZED');
            } else {
                err(res, 'UNAUTHORIZED', 401);
                assert.match(res.headers['www-authenticate'] || '', /^Bearer\b/, `${r.method} ${r.pattern}`);
            }
        }
    });

    test('a reader is 403 exactly on the routes above the reader role', async () => {
        const reader = s.token('routes-space', 'reader', 'route walker');
        for (const r of routes) {
            const res = await s.api(r.method, r.path, { token: reader, body: r.method === 'GET' || r.method === 'DELETE' ? undefined : {} });
            if (r.role === 'NONE' || r.role === 'READER') {
                assert.equal(res.status, 200, `${r.method} ${r.pattern}: ${res.status} ${res.text.slice(0, 200)}`);
                assert.ok(res.headers['x-request-id'], `${r.method} ${r.pattern}: no X-Request-Id`);
            } else {
                err(res, 'FORBIDDEN', 403);
            }
        }
    });

    test('another method on each path: 405 with an Allow that names the route', async () => {
        for (const r of routes) {
            const other = ['PATCH', 'PUT', 'DELETE', 'POST', 'GET'].find((m) => !routes.some((x) => x.method === m && x.path === r.path));
            const res = await s.api(other, r.path);
            err(res, 'METHOD_NOT_ALLOWED', 405);
            const allow = (res.headers.allow || '').split(',').map((m) => m.trim());
            assert.ok(allow.includes(r.method), `${other} ${r.path}: Allow ${res.headers.allow}`);
            assert.ok(!allow.includes(other), `${other} ${r.path}: Allow ${res.headers.allow}`);
        }
    });
});

describe('authentication (401)', () => {
    const protectedRoutes = [
        ['GET', '/api/auth/me'],
        ['GET', '/api/knowledge'],
        ['POST', '/api/knowledge', { scenario: 'x', content: 'y' }],
        ['POST', '/api/knowledge/batch_update', { feedback_list: [] }],
        ['GET', '/api/knowledge/knowledge-20200101-00000000'],
        ['PUT', '/api/knowledge/knowledge-20200101-00000000', { update_score: 4 }],
        ['DELETE', '/api/knowledge/knowledge-20200101-00000000'],
        ['GET', '/api/knowledge/knowledge-20200101-00000000/revisions'],
        ['POST', '/api/knowledge/knowledge-20200101-00000000/revert', { version: 1 }],
    ];

    function unauthorized(r) {
        err(r, 'UNAUTHORIZED', 401);
        assert.match(r.headers['www-authenticate'] || '', /^Bearer\b/);
    }

    test('every protected route needs a token', async () => {
        for (const [method, path, body] of protectedRoutes) unauthorized(await s.api(method, path, { body }));
    });

    test('forged and malformed tokens are refused', async () => {
        const real = s.admin;
        const id = tokenId(real);
        const secret = real.slice(20);
        const flipped = secret.slice(0, -1) + (secret.endsWith('A') ? 'B' : 'A');
        const authorizations = [
            `Bearer kh_0123456789abcdef_${secret}`, // unknown id
            `Bearer kh_${id}_${flipped}`, // wrong secret
            `Bearer kh_${id}_`, // empty secret
            `Bearer kh_${id}`, // no secret
            `Bearer kh_${id.toUpperCase()}_${secret}`, // id must be lower-case hex
            `Bearer kh_${id.slice(0, 15)}_${secret}`, // short id
            `Bearer kh_${id}_${secret}${'x'.repeat(200)}`, // over-long secret
            `Bearer ${real.slice(3)}`, // no prefix
            'Bearer',
            'Bearer ',
            'Bearer abc',
            `Basic ${Buffer.from('admin:admin').toString('base64')}`,
            real, // no scheme
            `Token ${real}`,
            `Bearer ${real}x`,
        ];
        for (const authorization of authorizations) {
            for (const [method, path, body] of protectedRoutes.slice(0, 3)) {
                unauthorized(await s.api(method, path, { body, headers: { Authorization: authorization } }));
            }
        }
        // The genuine token still works, with any case of the scheme.
        ok(await s.api('GET', '/api/auth/me', { headers: { Authorization: `bearer ${real}` } }));
        ok(await s.api('GET', '/api/auth/me', { headers: { Authorization: `Bearer ${real}` } }));
    });

    test('401 writes nothing', async () => {
        const before = await total();
        unauthorized(
            await s.api('POST', '/api/knowledge', {
                headers: { Authorization: 'Bearer kh_0123456789abcdef_nope' },
                body: { scenario: 'x', content: 'y' },
            }),
        );
        assert.equal(await total(), before);
    });

    // The server keeps a verified token in memory 1 s at most
    // (KNOWHUB_TOKEN_CACHE_MS): a revocation through its API drops it at
    // once; one by the CLI (another process) is seen within that bound.
    test('a token revoked through the API is refused at once', async () => {
        const tok = s.token('default', 'agent', 'to be revoked by the API');
        ok(await s.api('GET', '/api/auth/me', { token: tok }));
        ok(await s.api('GET', '/api/auth/me', { token: tok }));
        ok(await s.api('DELETE', `/api/tokens/${tokenId(tok)}`, { token: s.admin }));
        unauthorized(await s.api('GET', '/api/auth/me', { token: tok }));
    });

    test('a token revoked by the CLI while the server runs is refused within the bound (1 s)', async () => {
        const tok = s.token('default', 'agent', 'to be revoked');
        const other = s.token('default', 'agent', 'stays');
        ok(await s.api('GET', '/api/auth/me', { token: tok }));
        const made = ok(await create(tok));
        s.revoke(tokenId(tok));
        const t0 = Date.now();
        while ((await s.api('GET', '/api/auth/me', { token: tok })).status === 200 && Date.now() - t0 < 3000)
            await new Promise((r) => setTimeout(r, 20));
        assert.ok(Date.now() - t0 <= 1300, `refused after ${Date.now() - t0} ms`);
        for (const [method, path, body] of protectedRoutes) unauthorized(await s.api(method, path, { token: tok, body }));
        unauthorized(await s.api('GET', `/api/knowledge/${made.id}`, { token: tok }));
        // Other tokens are untouched, and the entry it made stays.
        ok(await s.api('GET', '/api/auth/me', { token: other }));
        ok(await s.api('GET', `/api/knowledge/${made.id}`, { token: other }));
    });
});

describe('roles (403)', () => {
    let reader, agent, editor, id;
    before(async () => {
        reader = s.token('default', 'reader', 'r');
        agent = s.token('default', 'agent', 'a');
        editor = s.token('default', 'editor', 'e');
        id = ok(await create(s.admin, { scenario: 'role matrix' })).id;
    });

    function forbidden(r) {
        const e = err(r, 'FORBIDDEN', 403);
        assert.equal(r.headers['www-authenticate'], undefined);
        return e;
    }

    test('a reader reads but never writes', async () => {
        ok(await s.api('GET', '/api/knowledge', { token: reader }));
        ok(await s.api('GET', `/api/knowledge/${id}`, { token: reader }));
        ok(await s.api('GET', `/api/knowledge/${id}/revisions`, { token: reader }));
        const before = ok(await s.api('GET', `/api/knowledge/${id}`, { token: s.admin }));
        const n = await total();
        forbidden(await create(reader));
        forbidden(await s.api('PUT', `/api/knowledge/${id}`, { token: reader, body: { add_helpful_case: { case_id: 'r1' } } }));
        forbidden(await s.api('PUT', `/api/knowledge/${id}`, { token: reader, body: { update_score: 5 } }));
        forbidden(await s.api('DELETE', `/api/knowledge/${id}`, { token: reader }));
        forbidden(
            await s.api('POST', '/api/knowledge/batch_update', {
                token: reader,
                body: { feedback_list: [{ knowledge_id: id, is_effective: true }] },
            }),
        );
        forbidden(await s.api('POST', `/api/knowledge/${id}/revert`, { token: reader, body: { version: 1 } }));
        assert.equal(await total(), n);
        assert.deepEqual(ok(await s.api('GET', `/api/knowledge/${id}`, { token: s.admin })), before);
    });

    test('agents and editors may not create, delete or revert rules; admins may', async () => {
        const n = await total();
        for (const tok of [agent, editor]) {
            const e = forbidden(await create(tok, { category: 'rules', path: 'no-rule.md' }));
            assert.match(e.message, /admin/i);
        }
        assert.equal(await total(), n);
        const rule = ok(await create(s.admin, { category: 'rules', path: 'a-rule.md', content: 'Always cite sources.' }));
        assert.equal(rule.category, 'rules');
        assert.equal(rule.path, 'a-rule.md');
        assert.equal(await total(), n + 1);
        for (const tok of [agent, editor]) {
            forbidden(await s.api('DELETE', `/api/knowledge/${rule.id}`, { token: tok }));
            forbidden(await s.api('POST', `/api/knowledge/${rule.id}/revert`, { token: tok, body: { version: 1 } }));
        }
        const still = ok(await s.api('GET', `/api/knowledge/${rule.id}`, { token: editor }));
        assert.equal(still.status, 'active');
        assert.equal(still.version, 1);
        ok(await s.api('DELETE', `/api/knowledge/${rule.id}`, { token: s.admin }));
        for (const tok of [agent, editor])
            forbidden(await s.api('POST', `/api/knowledge/${rule.id}/revert`, { token: tok, body: { version: 1 } }));
        err(await s.api('GET', `/api/knowledge/${rule.id}`, { token: s.admin }), 'NOT_FOUND');
        ok(await s.api('POST', `/api/knowledge/${rule.id}/revert`, { token: s.admin, body: { version: 1 } }));
        ok(await s.api('GET', `/api/knowledge/${rule.id}`, { token: agent }));
    });

    // docs/api.md: agent and editor may create, change, delete and revert experiences.
    test('agents and editors create, change, delete and revert experiences', async () => {
        for (const tok of [agent, editor]) {
            const mine = ok(await create(tok, { scenario: 'made by a non-admin' })).id;
            ok(await s.api('PUT', `/api/knowledge/${mine}`, { token: tok, body: { update_score: 4 } }));
            ok(
                await s.api('POST', '/api/knowledge/batch_update', {
                    token: tok,
                    body: { feedback_list: [{ knowledge_id: mine, is_effective: true }] },
                }),
            );
            assert.equal(ok(await s.api('DELETE', `/api/knowledge/${mine}`, { token: tok })).status, 'deleted');
            err(await s.api('GET', `/api/knowledge/${mine}`, { token: tok }), 'NOT_FOUND');
            ok(await s.api('POST', `/api/knowledge/${mine}/revert`, { token: tok, body: { version: 2 } }));
            const d = ok(await s.api('GET', `/api/knowledge/${mine}`, { token: tok }));
            assert.equal(d.status, 'active');
            assert.equal(d.eval.score, 4);
            assert.equal(d.eval.helpful, 1);
        }
    });
});

describe('spaces', () => {
    test("another space's entry is NOT_FOUND for every operation, and stays unchanged", async () => {
        const id = ok(await create(s.admin, { scenario: 'private to default' })).id;
        const before = ok(await s.api('GET', `/api/knowledge/${id}`, { token: s.admin }));
        const outsider = s.token('other-space', 'admin', 'outsider');
        err(await s.api('GET', `/api/knowledge/${id}`, { token: outsider }), 'NOT_FOUND');
        err(await s.api('GET', `/api/knowledge/${id}/revisions`, { token: outsider }), 'NOT_FOUND');
        err(await s.api('PUT', `/api/knowledge/${id}`, { token: outsider, body: { add_helpful_case: { case_id: 'x' } } }), 'NOT_FOUND');
        err(await s.api('PUT', `/api/knowledge/${id}`, { token: outsider, body: { update_score: 1 } }), 'NOT_FOUND');
        err(await s.api('PUT', `/api/knowledge/${id}`, { token: outsider, body: { evolve_feedback: 'x' } }), 'NOT_FOUND');
        err(await s.api('DELETE', `/api/knowledge/${id}`, { token: outsider }), 'NOT_FOUND');
        err(await s.api('POST', `/api/knowledge/${id}/revert`, { token: outsider, body: { version: 1 } }), 'NOT_FOUND');
        const b = ok(
            await s.api('POST', '/api/knowledge/batch_update', {
                token: outsider,
                body: { feedback_list: [{ knowledge_id: id, is_effective: false }] },
            }),
        );
        assert.equal(b.succeeded, 0);
        assert.equal(b.results[0].error.code, 'NOT_FOUND');
        const list = ok(await s.api('GET', '/api/knowledge?limit=100', { token: outsider }));
        assert.equal(list.total, 0);
        assert.deepEqual(list.items, []);
        assert.deepEqual(ok(await s.api('GET', `/api/knowledge/${id}`, { token: s.admin })), before);
    });

    test('each space lists only its own entries', async () => {
        const a = s.token('space-a', 'agent', 'a');
        const b = s.token('space-b', 'agent', 'b');
        const ida = ok(await create(a, { scenario: 'in a' })).id;
        const idb1 = ok(await create(b, { scenario: 'in b 1' })).id;
        const idb2 = ok(await create(b, { scenario: 'in b 2' })).id;
        const la = ok(await s.api('GET', '/api/knowledge', { token: a }));
        const lb = ok(await s.api('GET', '/api/knowledge', { token: b }));
        assert.deepEqual(la.items.map((i) => i.id), [ida]);
        assert.deepEqual(lb.items.map((i) => i.id), [idb2, idb1]);
        assert.equal(la.total, 1);
        assert.equal(lb.total, 2);
    });
});
