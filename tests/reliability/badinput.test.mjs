// Bad input: a table of hostile requests (truncated and 100k-deep JSON, 10 MB
// bodies and URLs, NUL bytes, invalid and overlong UTF-8, SQL and FTS5 syntax
// in searches, traversal encodings, header injection and request smuggling,
// huge top_k, negative offsets, ...). Each row names the answer it must get
// (the documented error, or a plain success for a search that must treat
// syntax as text); after every row the server is alive (same knowhub PID,
// health 200) and a fingerprint of the data (totals, a known entry with its
// version and counters, a file, traces, sessions, the export) is unchanged.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startStack } from '../http/lib/stack.mjs';
import { err, ok } from '../http/lib/expect.mjs';
import { assertSecurityHeaders, procState, rawHttp } from './lib.mjs';

let s, token, known, pid;

before(async () => {
    s = await startStack();
    token = s.token('hostile', 'agent', 'bad input');
    known = ok(await s.api('POST', '/api/knowledge', { token, body: { scenario: 'known entry for hostile input', content: 'known content', tags_type: ['tool'] } }));
    ok(await s.api('PUT', `/api/knowledge/${known.id}`, { token, body: { add_helpful_case: { case_id: 'known-case', scenario: 's', result: 'r' }, update_score: 4 } }));
    ok(await s.api('POST', '/api/knowledge/write', { token, body: { category: 'experiences', path: 'known/doc.md', content: 'known document body' } }));
    ok(await s.api('POST', '/api/traces', { token, body: { trace_id: 'trace-known', task: 'known task' } }));
    ok(await s.api('POST', '/api/traces/trace-known/knowledge_log', { token, body: { knowledge_id: known.id } }));
    ok(await s.api('POST', '/api/sessions', { token, body: { id: 'session-known', title: 'known', tables: [{ id: 't1' }] } }));
    pid = s.knowhubPid();
});
after(async () => {
    await s?.stop();
});

async function fingerprint() {
    return {
        total: ok(await s.api('GET', '/api/knowledge?limit=1', { token })).total,
        entry: ok(await s.api('GET', `/api/knowledge/${known.id}`, { token })),
        file: ok(await s.api('POST', '/api/knowledge/read', { token, body: { category: 'experiences', path: 'known/doc.md' } })).content,
        files: ok(await s.api('POST', '/api/knowledge/list', { token, body: { category: 'experiences' } })).items.length,
        trace: ok(await s.api('GET', '/api/traces/trace-known/knowledge_log', { token })),
        traces: ok(await s.api('GET', '/api/traces', { token })).total,
        sessions: ok(await s.api('GET', '/api/sessions', { token })).items.map((x) => x.id),
        export: (await s.api('GET', '/api/knowledge/export', { token })).text.split('\n').filter(Boolean).length,
    };
}

// Shorthands: a request with the test's token, raw bytes, a raw socket.
// KNOWN in a path stands for the known entry's id (made in before()).
const api = (m, p, body, extra = {}) => () => s.api(m, p.replace('KNOWN', known.id), { token, body, ...extra });
const rawBody = (m, p, bytes, extra = {}) => () => s.api(m, p, { token, rawBody: typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes, ...extra });
const create = (bytes) => rawBody('POST', '/api/knowledge', bytes);
const search = (q) => api('GET', `/api/knowledge/search?q=${encodeURIComponent(q)}&min_score=1`);
const get = (p) => api('GET', p);
const raw = (head, tail = '') => () => rawHttp(s.port, `${head}\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n${tail}\r\n`);
const deep = (n) => ['['.repeat(n) + ']'.repeat(n), '{"a":'.repeat(n) + '1' + '}'.repeat(n)];
const big = 'x'.repeat(10 << 20);
const E = (status, code) => ({ status, code });
const OK = { status: 200, code: 'success' };
const INVALID = E(200, 'INVALID_REQUEST');

/** [name, request, expected {status, code} ('success': a success envelope), optional extra check]. */
const TABLE = [
    // Broken JSON bodies.
    ['truncated object', create('{"scenario": "x", "content": "y"'), INVALID],
    ['truncated string', create('{"scenario": "x'), INVALID],
    ['a lone brace', create('{'), INVALID],
    ['trailing garbage', create('{"scenario":"x","content":"y"} DROP'), INVALID],
    ['two objects', create('{"scenario":"x","content":"y"}{"a":1}'), INVALID],
    ['a top-level array', create('[{"scenario":"x","content":"y"}]'), INVALID],
    ['NaN as a number', create('{"scenario":"x","content":"y","score":NaN}'), INVALID],
    ['arrays nested 100,000 deep', create(deep(100000)[0]), INVALID, (r) => assert.match(r.json.error.message, /nest|deep/)],
    ['objects nested 100,000 deep', create(deep(100000)[1]), INVALID, (r) => assert.match(r.json.error.message, /nest|deep/)],
    ['100,000 deep inside a valid body', create(`{"scenario":"x","content":"y","extra":${deep(100000)[0]}}`), INVALID],
    ['nested 100,000 deep in batch_update', rawBody('POST', '/api/knowledge/batch_update', `{"feedback_list":${deep(100000)[0]}}`), INVALID],
    ['nested 100,000 deep in evaluations', rawBody('POST', '/api/traces/trace-known/evaluations', `{"trigger":"goal_completion","evaluations":${deep(100000)[0]}}`), INVALID],
    // NUL bytes, invalid and overlong UTF-8.
    ['\\u0000 inside a string', create('{"scenario":"a\\u0000b","content":"c"}'), INVALID],
    ['a raw NUL byte in the body', create('{"scenario":"a\0b","content":"c"}'), INVALID],
    ['invalid UTF-8 (FF)', create('{"scenario":"a\xffb","content":"c"}'), INVALID],
    ['a lone continuation byte (80)', create('{"scenario":"a\x80b","content":"c"}'), INVALID],
    ['overlong "/" (C0 AF)', create('{"scenario":"a\xc0\xafb","content":"c"}'), INVALID],
    ['overlong "/" (E0 80 AF)', create('{"scenario":"a\xe0\x80\xafb","content":"c"}'), INVALID],
    ['overlong "/" (F0 80 80 AF)', create('{"scenario":"a\xf0\x80\x80\xafb","content":"c"}'), INVALID],
    ['overlong NUL (C0 80)', create('{"scenario":"a\xc0\x80b","content":"c"}'), INVALID],
    ['a UTF-16 surrogate as UTF-8 (ED A0 80)', create('{"scenario":"a\xed\xa0\x80b","content":"c"}'), INVALID],
    ['above U+10FFFF (F4 90 80 80)', create('{"scenario":"a\xf4\x90\x80\x80b","content":"c"}'), INVALID],
    ['a truncated sequence at the end (E2 82)', create('{"scenario":"a","content":"c\xe2\x82'), INVALID],
    ['overlong UTF-8 in the file view', rawBody('POST', '/api/knowledge/write', '{"category":"experiences","path":"a\xc0\xaf.md","content":"x"}'), INVALID],
    // Sizes.
    ['a 10 MB string (Content-Length)', create(`{"scenario":"${big}","content":"c"}`), E(413, 'PAYLOAD_TOO_LARGE')],
    ['a 10 MB string (chunked)', rawBody('POST', '/api/knowledge', `{"scenario":"${big}"}`, { chunked: true }), E(413, 'PAYLOAD_TOO_LARGE')],
    ['a 10 MB file write', api('POST', '/api/knowledge/write', { category: 'experiences', path: 'big.md', content: big }), E(413, 'PAYLOAD_TOO_LARGE')],
    ['a 10 MB URL', () => rawHttp(s.port, `GET /api/knowledge/search?q=${'a'.repeat(10 << 20)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`), E(414, 'INVALID_REQUEST')],
    ['a 100 KB header', raw('GET /api/health HTTP/1.1', `X-Big: ${'a'.repeat(100000)}\r\n`), E(400, 'INVALID_REQUEST')],
    ['scenario of 2,001 characters', api('POST', '/api/knowledge', { scenario: 'x'.repeat(2001), content: 'y' }), E(200, 'LIMIT_EXCEEDED')],
    ['content of 2,001 CJK characters (counted as characters)', api('POST', '/api/knowledge', { scenario: 'x', content: '字'.repeat(2001) }), E(200, 'LIMIT_EXCEEDED')],
    ['a search query of 6,000 characters', search('a'.repeat(6000)), E(200, 'LIMIT_EXCEEDED')],
    ['batch_update with 101 items', api('POST', '/api/knowledge/batch_update', { feedback_list: Array.from({ length: 101 }, () => ({ knowledge_id: 'x', is_effective: true })) }), E(200, 'LIMIT_EXCEEDED')],
    ['1,001 evaluations', api('POST', '/api/traces/trace-known/evaluations', { trigger: 'goal_completion', evaluations: Array.from({ length: 1001 }, () => ({ knowledge_id: 'x', eval_status: 'helpful' })) }), E(200, 'LIMIT_EXCEEDED')],
    ['a session of 501 tables', api('POST', '/api/sessions', { id: 'session-big', tables: Array.from({ length: 501 }, (_, i) => ({ id: `t${i}` })) }), E(200, 'LIMIT_EXCEEDED')],
    // Wrong types and values.
    ['score as a string', api('POST', '/api/knowledge', { scenario: 'x', content: 'y', score: '5' }), INVALID],
    ['score 1e309 (infinity)', create('{"scenario":"x","content":"y","score":1e309}'), INVALID],
    ['tags_type with SQL', api('POST', '/api/knowledge', { scenario: 'x', content: 'y', tags_type: ["tool'; DROP TABLE knowledge; --"] }), INVALID],
    ['an empty PUT', api('PUT', '/api/knowledge/KNOWN', {}), INVALID],
    ['update_score 0 with a case (all or nothing)', api('PUT', '/api/knowledge/KNOWN', { add_helpful_case: { case_id: 'never', scenario: 's', result: 'r' }, update_score: 0 }), INVALID],
    // SQL and FTS5 syntax in searches: plain text, never syntax, never an error.
    ['FTS5 NEAR()', search('NEAR(known entry, 2)'), OK],
    ['FTS5 column filter {title}:', search('{title scenario}: known'), OK],
    ['FTS5 an unbalanced quote', search('"known'), OK],
    ['FTS5 a bare *', search('*'), OK, (r) => assert.equal(r.json.data.count, 0)],
    ['FTS5 AND OR NOT ^ operators', search('known AND OR NOT ^entry -x +y'), OK],
    ["SQL ' OR 1=1 --", search("' OR 1=1 --"), OK, (r) => assert.equal(r.json.data.count, 0)],
    ['SQL ; DROP TABLE', search("x'); DROP TABLE knowledge; --"), OK],
    ['SQL UNION SELECT', search("' UNION SELECT hash FROM tokens --"), OK, (r) => assert.doesNotMatch(r.text, /hash|kh_/)],
    ['file view: FTS5 and SQL syntax', api('POST', '/api/knowledge/search', { query: 'known" OR "a" NEAR(x) {title}: * \' OR 1=1 --' }), OK],
    ['file view: a lone surrogate escape', rawBody('POST', '/api/knowledge/search', '{"query":"known \\ud800"}'), OK],
    ['context: SQL in table_names', api('POST', '/api/knowledge/context', { question: 'known', table_names: ["x' OR '1'='1"] }), OK],
    // Query strings: encodings, huge and negative numbers.
    ['q with overlong %C0%AF', get('/api/knowledge/search?q=a%C0%AFb'), INVALID],
    ['q with invalid %FF', get('/api/knowledge/search?q=a%FF'), INVALID],
    ['q with %00', get('/api/knowledge/search?q=a%00b'), INVALID],
    ['q with a bad escape %G1', get('/api/knowledge/search?q=a%G1'), INVALID],
    ['top_k=1000000', get('/api/knowledge/search?q=known&top_k=1000000'), INVALID],
    ['top_k=99999999999999999999999', get('/api/knowledge/search?q=known&top_k=99999999999999999999999'), INVALID],
    ['top_k=-1', get('/api/knowledge/search?q=known&top_k=-1'), INVALID],
    ['top_k=1e3', get('/api/knowledge/search?q=known&top_k=1e3'), INVALID],
    ['top_k=0x10', get('/api/knowledge/search?q=known&top_k=0x10'), INVALID],
    ['min_score=0', get('/api/knowledge/search?q=known&min_score=0'), INVALID],
    ['file view max_results=1e9', api('POST', '/api/knowledge/search', { query: 'known', max_results: 1e9 }), INVALID],
    ['context max_results=-5', api('POST', '/api/knowledge/context', { question: 'known', max_results: -5 }), INVALID],
    ['list offset=-1', get('/api/knowledge?offset=-1'), INVALID],
    ['list limit=100000', get('/api/knowledge?limit=100000'), INVALID],
    ['list limit=-10', get('/api/knowledge?limit=-10'), INVALID],
    ['cases offset=-5', get('/api/knowledge/KNOWN/cases?kind=helpful&offset=-5'), INVALID],
    ['traces offset=-1', get('/api/traces?offset=-1'), INVALID],
    ['jobs limit=999999999999', get('/api/jobs?limit=999999999999'), INVALID],
    ['tags_type with SQL in the query', get("/api/knowledge?tags_type=tool'%20OR%201=1"), INVALID],
    ['category with SQL', get("/api/knowledge?category=rules'--"), INVALID],
    ['usage since with SQL', get("/api/llm/usage?since=2026-01-01'%20OR%201=1"), INVALID],
    // Traversal encodings.
    ['file read ../../etc/passwd.md', api('POST', '/api/knowledge/read', { category: 'experiences', path: '../../etc/passwd.md' }), INVALID],
    ['file read /etc/passwd.md', api('POST', '/api/knowledge/read', { category: 'rules', path: '/etc/passwd.md' }), INVALID],
    ['file read ..\\..\\x.md', api('POST', '/api/knowledge/read', { category: 'experiences', path: '..\\..\\x.md' }), INVALID],
    ['file read %2e%2e/%2e%2e/x.md', api('POST', '/api/knowledge/read', { category: 'experiences', path: '%2e%2e/%2e%2e/x.md' }), INVALID],
    ['file read ../../etc/passwd (no .md)', api('POST', '/api/knowledge/read', { category: 'experiences', path: '../../etc/passwd' }), INVALID],
    ['file write a/../../x.md', api('POST', '/api/knowledge/write', { category: 'experiences', path: 'a/../../x.md', content: 'x' }), INVALID],
    ['file rename to ../x.md', api('POST', '/api/knowledge/rename', { category: 'experiences', path: 'known/doc.md', new_path: '../x.md' }), INVALID],
    ['list category ../rules', api('POST', '/api/knowledge/list', { category: '../rules' }), INVALID],
    ['entry id ..%2f..%2fetc%2fpasswd (nginx folds it to a static path)', get('/api/knowledge/..%2f..%2fetc%2fpasswd'), { status: 404, code: null }, (r) => assert.doesNotMatch(r.text, /root:/)],
    ['static /..%2f..%2fetc%2fpasswd', raw('GET /..%2f..%2fetc%2fpasswd HTTP/1.1'), E(400, 'INVALID_REQUEST')],
    ['static /%2e%2e/%2e%2e/etc/passwd', raw('GET /%2e%2e/%2e%2e/etc/passwd HTTP/1.1'), E(400, 'INVALID_REQUEST')],
    ['static /../../etc/passwd', raw('GET /../../etc/passwd HTTP/1.1'), E(400, 'INVALID_REQUEST')],
    ['i18n alias /i18n/..%2f..%2fetc%2fpasswd', raw('GET /i18n/..%2f..%2fetc%2fpasswd HTTP/1.1'), E(400, 'INVALID_REQUEST')],
    ['i18n alias /i18n../fcgi/main.c', raw('GET /i18n../fcgi/main.c HTTP/1.1'), { status: 404, code: null }, (r) => assert.doesNotMatch(r.text, /#include/)],
    ['entry id overlong %C0%AF', get('/api/knowledge/%C0%AF'), INVALID],
    ['entry id with %00', get('/api/knowledge/a%00b'), E(400, 'INVALID_REQUEST')],
    ['trace id ../x y', get(`/api/traces/${encodeURIComponent('../x y')}`), INVALID],
    ['session id of 7,000 characters', get(`/api/sessions/${'s'.repeat(7000)}`), INVALID],
    // Header injection and request smuggling (raw socket: node refuses to send these).
    ['X-Request-Id with a bare CR', raw('GET /api/health HTTP/1.1', 'X-Request-Id: abcdefgh\rSet-Cookie: evil=1\r\n'), E(400, 'INVALID_REQUEST')],
    ['X-Request-Id with a bare LF (becomes a second request header)', raw('GET /api/health HTTP/1.1', 'X-Request-Id: abcdefgh\nSet-Cookie: evil=1\r\n'), OK, (r) => {
        assert.equal(r.headers['x-request-id'], 'abcdefgh');
        assert.equal(r.headers['set-cookie'], undefined);
    }],
    ['X-Request-Id with %0d%0a encoded', raw('GET /api/knowledge/nope HTTP/1.1', 'X-Request-Id: abcdefgh%0d%0aSet-Cookie:%20evil=1\r\n'), E(200, 'NOT_FOUND'), (r) => {
        assert.match(r.headers['x-request-id'], /^[0-9a-f]{32}$/, 'replaced, not reflected');
        assert.equal(r.headers['set-cookie'], undefined);
    }],
    ['X-Request-Id with a NUL', raw('GET /api/health HTTP/1.1', 'X-Request-Id: abcd\0efgh\r\n'), E(400, 'INVALID_REQUEST')],
    ['Authorization with a CR', () => rawHttp(s.port, `GET /api/knowledge HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\rX-Role: admin\r\nConnection: close\r\n\r\n`), E(400, 'INVALID_REQUEST')],
    ['a forged token with the right id', () => s.api('GET', '/api/knowledge', { token: `${token.slice(0, 20)}forgedsecretforgedsecret` }), E(401, 'UNAUTHORIZED')],
    ['two Content-Length headers', raw('POST /api/knowledge HTTP/1.1', 'Content-Length: 5\r\nContent-Length: 7\r\n'), E(400, 'INVALID_REQUEST')],
    ['Content-Length with Transfer-Encoding (smuggling)', raw('POST /api/knowledge HTTP/1.1', 'Content-Length: 4\r\nTransfer-Encoding: chunked\r\n'), E(400, 'INVALID_REQUEST')],
    ['a negative Content-Length', raw('POST /api/knowledge HTTP/1.1', 'Content-Length: -1\r\n'), E(400, 'INVALID_REQUEST')],
    ['Content-Length: abc', raw('POST /api/knowledge HTTP/1.1', 'Content-Length: abc\r\n'), E(400, 'INVALID_REQUEST')],
    ['an unknown method', raw('FOO /api/knowledge HTTP/1.1'), E(405, 'METHOD_NOT_ALLOWED')],
    ['MCP: a truncated JSON-RPC message', rawBody('POST', '/mcp', '{"jsonrpc":"2.0","id":1,"method":'), { status: 200, code: -32700 }],
    ['MCP: nested 100,000 deep', rawBody('POST', '/mcp', deep(100000)[0]), { status: 200, code: -32700 }],
];

test(`the table holds at least 50 hostile requests (${TABLE.length})`, () => {
    assert.ok(TABLE.length >= 50);
    assert.equal(new Set(TABLE.map((t) => t[0])).size, TABLE.length, 'names are unique');
});

let base;
const answered = {};
for (const [name, send, want, extra] of TABLE) {
    test(`${name}: ${want.status} ${want.code ?? ''}; server alive, data unchanged`, async () => {
        base ??= await fingerprint();
        const r = await send();
        assert.equal(r.status, want.status, `HTTP ${r.status}: ${(r.text || '').slice(0, 300)}`);
        if (want.code === 'success') {
            ok(r);
        } else if (typeof want.code === 'number') {
            assert.equal(r.json?.error?.code, want.code, r.text.slice(0, 300));
        } else if (want.code) {
            err(r, want.code, want.status);
        }
        if (extra) extra(r);
        assertSecurityHeaders(r.headers, name);
        answered[`${r.status} ${want.code ?? 'static'}`] = (answered[`${r.status} ${want.code ?? 'static'}`] || 0) + 1;
        // Alive: the same process, answering; nothing changed.
        assert.equal(s.knowhubPid(), pid);
        assert.equal(procState(pid), 'alive', 'knowhub died');
        ok(await s.api('GET', '/api/health'));
        assert.deepEqual(await fingerprint(), base, `${name} changed the data`);
    });
}

test('summary', () => {
    console.log(`# bad input: ${TABLE.length} hostile requests, answers ${JSON.stringify(answered)}`);
});
