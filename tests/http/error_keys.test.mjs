// error_keys.test.mjs: errors a person can meet carry a stable key and its
// params next to the English message (docs/api.md, "Errors"), from knowhub
// and from nginx's own JSON pages; the panel translates them with
// i18n/{en,zh}/common.json "errors.<key>", filling its {{placeholders}} from
// the params: so every error provoked here has both strings, en and zh use
// the same placeholders, and each placeholder is a param the server sent
// with that error.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { errKey, ok } from './lib/expect.mjs';
import { ROOT, startStack } from './lib/stack.mjs';

const I18N = Object.fromEntries(['en', 'zh'].map((l) => [l, JSON.parse(fs.readFileSync(path.join(ROOT, `i18n/${l}/common.json`), 'utf8'))]));
const placeholders = (text) => [...new Set([...text.matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1]))].sort();

/** The panel's strings of an error the server sent: errors.<key> in en and
 * zh, with the same placeholders, each one a param of the error. */
function assertStrings(e) {
    const [en, zh] = ['en', 'zh'].map((lang) => I18N[lang].errors && I18N[lang].errors[e.key]);
    assert.equal(typeof en, 'string', `i18n/en: errors.${e.key} is missing`);
    assert.equal(typeof zh, 'string', `i18n/zh: errors.${e.key} is missing`);
    assert.deepEqual(placeholders(zh), placeholders(en), `errors.${e.key}: en and zh name other params`);
    const unsent = placeholders(en).filter((name) => !Object.hasOwn(e.params, name));
    assert.deepEqual(unsent, [], `errors.${e.key} names params the server did not send (it sent ${JSON.stringify(e.params)})`);
}

function keyed(r, code, key, params, status = 200) {
    const e = errKey(r, code, key, params, status);
    assertStrings(e);
    return e;
}

async function waitFor(fn, ms) {
    const end = Date.now() + ms;
    while (Date.now() < end) {
        if (await fn()) return true;
        await new Promise((r) => setTimeout(r, 50));
    }
    return false;
}

test('server errors carry a key and params; each key has an en and a zh string with those params', async () => {
    const s = await startStack();
    try {
        const admin = s.admin;
        const reader = s.token('default', 'reader');
        const write = (body, token = admin) => s.api('POST', '/api/knowledge/write', { token, body });

        // field limits
        keyed(await write({ category: 'experiences', path: 'a.md', content: `---\ntitle: ${'t'.repeat(201)}\n---\nbody\n` }), 'INVALID_REQUEST', 'front_matter_too_long', { field: 'title', max: 200, got: 201 });
        keyed(await write({ category: 'experiences', path: 'a.md', content: 'x'.repeat(2001) }), 'INVALID_REQUEST', 'body_too_long', { category: 'experiences', max: 2000, got: 2001 });
        keyed(await write({ category: 'experiences', path: 'a.md', content: 7 }), 'INVALID_REQUEST', 'field_not_string', { field: 'content' });
        keyed(await write({ category: 'experiences', content: 'x' }), 'INVALID_REQUEST', 'field_required', { field: 'path' });
        keyed(await s.api('POST', '/api/knowledge', { token: admin, body: { scenario: 's', title: 't'.repeat(201), content: 'c' } }), 'LIMIT_EXCEEDED', 'field_too_long', { field: 'title', max: 200, got: 201 });
        keyed(await s.api('POST', '/api/knowledge', { token: admin, body: { content: 'c' } }), 'INVALID_REQUEST', 'field_required', { field: 'scenario' });
        keyed(await s.api('POST', '/api/knowledge', { token: admin, body: { scenario: 's', content: 'c', expires_at: 'soon' } }), 'INVALID_REQUEST', 'invalid_time', { field: 'expires_at' });
        keyed(await s.api('GET', '/api/traces?limit=0', { token: admin }), 'INVALID_REQUEST', 'field_not_integer', { field: 'limit', min: 1, max: 100 });

        // paths
        keyed(await write({ category: 'experiences', path: 'a.txt', content: 'x' }), 'INVALID_REQUEST', 'path_not_md', {});
        keyed(await write({ category: 'experiences', path: '../a.md', content: 'x' }), 'INVALID_REQUEST', 'path_traversal', { path: '../a.md' });
        keyed(await write({ category: 'experiences', path: `${'n'.repeat(256)}.md`, content: 'x' }), 'INVALID_REQUEST', 'path_too_long', { max: 255 });
        keyed(await write({ category: 'experiences', path: `${'名'.repeat(90)}.md`, content: 'x' }), 'INVALID_REQUEST', 'name_too_long', { max: 255, got: 273 });
        keyed(await write({ category: 'rules', path: 'a/b.md', content: 'x' }), 'INVALID_REQUEST', 'path_rules_flat', {});
        keyed(await write({ category: 'notes', path: 'a.md', content: 'x' }), 'INVALID_REQUEST', 'invalid_category', { category: 'notes' });
        ok(await write({ category: 'experiences', path: 'ops.md/deploy.md', content: 'x' }));
        ok(await write({ category: 'experiences', path: 'solo.md', content: 'x' }));
        keyed(await write({ category: 'experiences', path: 'ops.md', content: 'x' }), 'CONFLICT', 'path_is_folder', { category: 'experiences', path: 'ops.md' });
        keyed(await write({ category: 'experiences', path: 'solo.md/a.md', content: 'x' }), 'CONFLICT', 'path_is_document', { category: 'experiences', path: 'solo.md' });

        // conflict, not found, forbidden, front matter
        keyed(await write({ category: 'experiences', path: 'solo.md', content: 'y', expected_version: 7 }), 'CONFLICT', 'version_conflict', { version: 1 });
        keyed(await s.api('POST', '/api/knowledge/read', { token: admin, body: { category: 'experiences', path: 'none.md' } }), 'TABLE_NOT_FOUND', 'file_not_found', {});
        keyed(await s.api('GET', '/api/knowledge/knowledge-20260101-00000000', { token: admin }), 'NOT_FOUND', 'not_found', {});
        keyed(await write({ category: 'experiences', path: 'r.md', content: 'x' }, reader), 'FORBIDDEN', 'role_forbidden', { role: 'reader' }, 403);
        const editor = s.token('default', 'editor');
        keyed(await write({ category: 'rules', path: 'r.md', content: 'x' }, editor), 'FORBIDDEN', 'rules_admin_only', {}, 403);
        keyed(await write({ category: 'experiences', path: 'fm.md', content: '---\na: &x 1\nb: *x\n---\nbody\n' }), 'INVALID_REQUEST', 'front_matter_refused', { reason: 'YAML anchors and aliases (&name, *name) are not accepted' });

        // login and the request itself
        keyed(await s.api('POST', '/api/auth/login', { body: { token: 'kh_0123456789abcdef_nope' } }), 'UNAUTHORIZED', 'token_invalid', {}, 401);
        keyed(await s.api('GET', '/api/knowledge'), 'UNAUTHORIZED', 'token_required', {}, 401);
        keyed(await s.api('DELETE', '/api/health', { token: admin }), 'METHOD_NOT_ALLOWED', 'method_not_allowed', { method: 'DELETE', allowed: 'GET, HEAD' }, 405);
        keyed(await s.api('POST', '/api/knowledge', { token: admin, rawBody: '{"scenario":' }), 'INVALID_REQUEST', 'body_malformed', { reason: 'unexpected end of data' });
        // nginx's own pages: 405 (TRACE), 413
        const trace = await s.api('TRACE', '/api/knowledge', { token: admin });
        keyed(trace, 'METHOD_NOT_ALLOWED', 'method_refused', { allowed: trace.headers.allow }, 405);
        assert.ok(trace.headers.allow && !/TRACE/.test(trace.headers.allow), trace.headers.allow);
        keyed(await s.api('POST', '/api/knowledge', { token: admin, rawBody: 'x'.repeat(1024 * 1024 + 10) }), 'PAYLOAD_TOO_LARGE', 'payload_too_large', { max: 1048576 }, 413);

        // knowhub gone: nginx's 503 page
        process.kill(s.knowhubPid(), 'SIGTERM');
        assert.ok(await waitFor(() => s.log().includes('knowhub: stopped'), 10000), 'knowhub did not stop');
        keyed(await s.api('GET', '/api/health'), 'SERVICE_UNAVAILABLE', 'service_unavailable', {}, 503);
    } finally {
        await s.stop();
    }
});

test('the rate limit page (nginx 429) carries its key', async () => {
    const s = await startStack({ KNOWHUB_RATE_LIMIT: '2r/s', KNOWHUB_RATE_BURST: '1', KNOWHUB_RATE_LIMIT_LOOPBACK: '1' });
    try {
        let limited = null;
        for (let i = 0; i < 20 && !limited; i++) {
            const r = await s.api('GET', '/api/health');
            if (r.status === 429) limited = r;
        }
        assert.ok(limited, 'no 429 after 20 quick requests');
        keyed(limited, 'RATE_LIMITED', 'rate_limited', {}, 429);
    } finally {
        await s.stop();
    }
});
