// Hostile and broken input: every bad request gets the error envelope, changes
// nothing, and leaves the server answering.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { err, ok } from './lib/expect.mjs';

let s, agent, entry, entrySnapshot, baseTotal;

before(async () => {
    s = await startStack();
    agent = s.token('default', 'agent', 'fuzzer');
    entry = ok(await s.api('POST', '/api/knowledge', { token: agent, body: { scenario: 'baseline', content: 'baseline content', tags_type: ['tool'] } }));
    entrySnapshot = ok(await s.api('GET', `/api/knowledge/${entry.id}`, { token: agent }));
    baseTotal = ok(await s.api('GET', '/api/knowledge', { token: agent })).total;
});
after(async () => {
    await s?.stop();
});

/** Nothing in the default space changed, and the server still answers. */
async function unchanged() {
    ok(await s.api('GET', '/api/health'));
    assert.equal(ok(await s.api('GET', '/api/knowledge', { token: agent })).total, baseTotal);
    assert.deepEqual(ok(await s.api('GET', `/api/knowledge/${entry.id}`, { token: agent })), entrySnapshot);
}

/** Expect an application error (or a protocol one), then check nothing changed. */
async function bad(promise, code, status = 200) {
    const e = err(await promise, code, status);
    await unchanged();
    return e;
}

const create = (opts) => s.api('POST', '/api/knowledge', { token: agent, ...opts });
const update = (opts) => s.api('PUT', `/api/knowledge/${entry.id}`, { token: agent, ...opts });
const good = { scenario: 'a scenario', content: 'some content' };

describe('malformed bodies', () => {
    const bodies = {
        malformed: '{"scenario": "x", content: "y"}',
        truncated: '{"scenario": "x", "content": "y"',
        'truncated string': '{"scenario": "x',
        'lone brace': '{',
        'trailing garbage': '{"scenario":"x","content":"y"} garbage',
        'two objects': '{"scenario":"x","content":"y"}{}',
        'trailing comma': '{"scenario":"x","content":"y",}',
        'single quotes': "{'scenario':'x','content':'y'}",
        'JSON array': '[{"scenario":"x","content":"y"}]',
        'JSON string': '"scenario"',
        'JSON number': '42',
        'JSON null': 'null',
        'JSON true': 'true',
        'NaN score': '{"scenario":"x","content":"y","score":NaN}',
        'comment': '{"scenario":"x", /* c */ "content":"y"}',
        'form encoded': 'scenario=x&content=y',
        'deeply nested arrays': '['.repeat(1000) + ']'.repeat(1000),
        'deeply nested objects': '{"a":'.repeat(1000) + '1' + '}'.repeat(1000),
        'deep inside a valid body': '{"scenario":"x","content":"y","extra":' + '['.repeat(1000) + ']'.repeat(1000) + '}',
    };
    for (const [name, rawBody] of Object.entries(bodies)) {
        test(`${name}: INVALID_REQUEST on create and update`, async () => {
            await bad(create({ rawBody }), 'INVALID_REQUEST');
            await bad(update({ rawBody }), 'INVALID_REQUEST');
            await bad(s.api('POST', '/api/knowledge/batch_update', { token: agent, rawBody }), 'INVALID_REQUEST');
            await bad(s.api('POST', `/api/knowledge/${entry.id}/revert`, { token: s.admin, rawBody }), 'INVALID_REQUEST');
        });
    }

    test('the nesting error says so', async () => {
        const e = await bad(create({ rawBody: '['.repeat(1000) + ']'.repeat(1000) }), 'INVALID_REQUEST');
        assert.match(e.message, /nest|deep/i);
        const a = await bad(create({ rawBody: '[1]' }), 'INVALID_REQUEST');
        assert.match(a.message, /object/i);
    });

    test('an empty body is an empty object', async () => {
        const e = await bad(create({ rawBody: '' }), 'INVALID_REQUEST');
        assert.match(e.message, /scenario/);
    });
});

describe('encoding', () => {
    const withBytes = (before, bytes, after) => Buffer.concat([Buffer.from(before), Buffer.from(bytes), Buffer.from(after)]);

    test('invalid UTF-8 bytes in the body are refused', async () => {
        for (const bytes of [[0xff], [0xfe, 0xff], [0xc3], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0x80]]) {
            await bad(create({ rawBody: withBytes('{"scenario":"a', bytes, '","content":"c"}') }), 'INVALID_REQUEST');
            await bad(update({ rawBody: withBytes('{"add_helpful_case":{"case_id":"', bytes, '"}}') }), 'INVALID_REQUEST');
        }
        // Invalid bytes in an ignored field are refused too: the whole body must be UTF-8.
        await bad(create({ rawBody: withBytes('{"scenario":"a","content":"c","junk":"', [0xff], '"}') }), 'INVALID_REQUEST');
    });

    test('a raw NUL byte in the body is refused', async () => {
        await bad(create({ rawBody: withBytes('{"scenario":"a', [0], '","content":"c"}') }), 'INVALID_REQUEST');
    });

    test('"\\u0000" inside any string field is refused', async () => {
        const nul = 'a\u0000b';
        for (const field of ['scenario', 'content', 'agent_id', 'message_id', 'title', 'path', 'category'])
            await bad(create({ body: { ...good, [field]: nul } }), 'INVALID_REQUEST');
        await bad(create({ body: { ...good, tags_type: ['tool\u0000'] } }), 'INVALID_REQUEST');
        await bad(create({ body: { ...good, urls: ['https://a\u0000b'] } }), 'INVALID_REQUEST');
        await bad(create({ body: { ...good, tags: ['x\u0000'] } }), 'INVALID_REQUEST');
        for (const key of ['case_id', 'scenario', 'result', 'agent_id', 'trace_id', 'goal_id'])
            await bad(update({ body: { add_helpful_case: { case_id: 'nul-test', [key]: nul } } }), 'INVALID_REQUEST');
        await bad(update({ body: { evolve_feedback: nul } }), 'INVALID_REQUEST');
        const b = ok(await s.api('POST', '/api/knowledge/batch_update', { token: agent, body: { feedback_list: [{ knowledge_id: entry.id, is_effective: true, feedback: nul }, { knowledge_id: `${entry.id}\u0000x`, is_effective: true }] } }));
        // A NUL must not cut the id short and count on the entry it prefixes.
        assert.equal(b.succeeded, 0, JSON.stringify(b.results));
        assert.deepEqual(b.results.map((r) => r.error.code), ['INVALID_REQUEST', 'INVALID_REQUEST']);
        const c = ok(await s.api('POST', '/api/knowledge/batch_update', { token: agent, body: { feedback_list: [{ knowledge_id: entry.id, is_effective: true, case_id: 'a\u0000b' }] } }));
        assert.equal(c.results[0].error?.code, 'INVALID_REQUEST', JSON.stringify(c.results));
        await unchanged();
    });

    test('a lone surrogate escape is refused or replaced, never stored broken', async () => {
        const tok = s.token('surrogates', 'agent');
        const r = await s.api('POST', '/api/knowledge', { token: tok, rawBody: '{"scenario":"a\\ud800b","content":"c"}' });
        if (r.json?.status === 'success') {
            assert.equal(r.json.data.scenario, 'a\ufffdb');
            assert.ok(!r.raw.includes(Buffer.from([0xed, 0xa0, 0x80])));
        } else {
            err(r, 'INVALID_REQUEST');
        }
        const pair = ok(await s.api('POST', '/api/knowledge', { token: tok, rawBody: '{"scenario":"a\\ud83d\\ude00b","content":"c"}' }));
        assert.equal(pair.scenario, 'a😀b');
        await unchanged();
    });

    test('a byte order mark before the JSON is refused', async () => {
        await bad(create({ rawBody: '\ufeff' + JSON.stringify(good) }), 'INVALID_REQUEST');
    });
});

describe('wrong types', () => {
    const createCases = {
        scenario: [1, true, [], {}, ['x'], '', '   \n'],
        content: [1, false, [], { a: 1 }, ''],
        tags_type: ['tool', 1, {}, [1], [['tool']], [null], ['nope']],
        urls: ['https://example.com', 1, {}, [1], [{}]],
        agent_id: [1, [], {}, true],
        score: ['3', 3.5, true, [], {}, 0, 6, -3, 1e3, 'x'],
        message_id: [1, [], {}],
        title: [1, [], {}],
        tags: [1, {}, [1], [[]]],
        category: [1, [], 'Rules', 'notes', ''],
        path: [1, [], {}],
        description: [1, []],
        always_apply: ['true', 1, 0, []],
    };
    for (const [field, values] of Object.entries(createCases)) {
        test(`create: bad ${field}`, async () => {
            for (const v of values) {
                const e = await bad(create({ body: { ...good, [field]: v } }), 'INVALID_REQUEST');
                assert.ok(e.message.includes(field) || /tags_type|category/i.test(e.message), `${field}=${JSON.stringify(v)}: ${e.message}`);
            }
        });
    }

    test('create: a score written as a float or out of 64 bits is not an integer 1..5', async () => {
        for (const v of ['4.0', '4e0', '3.5', '18446744073709551619', '-9223372036854775809', '0x3', '03'])
            await bad(create({ rawBody: `{"scenario":"s","content":"c","score":${v}}` }), 'INVALID_REQUEST');
        for (const v of ['4.0', '1e0', '18446744073709551621'])
            await bad(update({ rawBody: `{"update_score":${v}}` }), 'INVALID_REQUEST');
    });

    test('create: null means absent (defaults) for optional fields, missing for required ones', async () => {
        await bad(create({ body: { ...good, scenario: null } }), 'INVALID_REQUEST');
        await bad(create({ body: { ...good, content: null } }), 'INVALID_REQUEST');
        await bad(create({ body: { content: 'c' } }), 'INVALID_REQUEST');
        await bad(create({ body: { scenario: 's' } }), 'INVALID_REQUEST');
        const tok = s.token('nulls', 'agent');
        const d = ok(await s.api('POST', '/api/knowledge', { token: tok, body: { ...good, score: null, tags_type: null, urls: null, agent_id: null, category: null, path: null } }));
        assert.equal(d.eval.score, 3);
        assert.equal(d.category, 'experiences');
        assert.deepEqual(d.tags.type, []);
    });

    test('update: bad field types', async () => {
        const cases = [
            { add_helpful_case: 'x' },
            { add_helpful_case: [] },
            { add_helpful_case: 1 },
            { add_harmful_case: true },
            { add_helpful_case: { case_id: 1 } },
            { add_helpful_case: { case_id: 'ok', scenario: [] } },
            { add_helpful_case: { case_id: 'ok', result: {} } },
            { add_harmful_case: { case_id: 'ok', agent_id: 5 } },
            { update_score: '4' },
            { update_score: 4.5 },
            { update_score: 0 },
            { update_score: 6 },
            { update_score: 'x' },
            { update_score: false },
            { evolve_feedback: 1 },
            { evolve_feedback: ['x'] },
            { add_helpful_case: { case_id: 'ok' }, update_score: 'x' },
            { add_helpful_case: { case_id: 'ok' }, add_harmful_case: 'x' },
        ];
        for (const body of cases) await bad(update({ body }), 'INVALID_REQUEST');
    });

    test('unknown fields are ignored', async () => {
        const tok = s.token('unknown-fields', 'agent');
        const d = ok(await s.api('POST', '/api/knowledge', { token: tok, body: { ...good, foo: 1, nested: { a: [1, 2] }, id: 'knowledge-20000101-00000000', eval: { score: 5, helpful: 99 }, status: 'deleted', version: 42, created_at: '1999-01-01 00:00:00' } }));
        assert.equal(d.foo, undefined);
        assert.equal(d.nested, undefined);
        assert.notEqual(d.id, 'knowledge-20000101-00000000');
        assert.equal(d.eval.score, 3);
        assert.equal(d.eval.helpful, 0);
        assert.equal(d.status, 'active');
        assert.equal(d.version, 1);
        assert.notEqual(d.created_at, '1999-01-01 00:00:00');
        const u = ok(await s.api('PUT', `/api/knowledge/${d.id}`, { token: tok, body: { add_helpful_case: { case_id: 'c', color: 'red' }, helpful: 1000 } }));
        assert.equal(u.eval.helpful, 1);
        await unchanged();
    });
});

describe('limits', () => {
    test('content over 2000 characters is LIMIT_EXCEEDED; exactly 2000 Chinese characters pass', async () => {
        await bad(create({ body: { ...good, content: 'x'.repeat(2001) } }), 'LIMIT_EXCEEDED');
        await bad(create({ body: { ...good, content: '知'.repeat(2001) } }), 'LIMIT_EXCEEDED');
        await bad(create({ body: { ...good, content: '😀'.repeat(2001) } }), 'LIMIT_EXCEEDED');
        await bad(create({ body: { ...good, content: 'x'.repeat(9000) } }), 'LIMIT_EXCEEDED');
        const tok = s.token('limits', 'agent');
        for (const content of ['知'.repeat(2000), '😀'.repeat(2000), 'x'.repeat(2000)]) {
            const d = ok(await s.api('POST', '/api/knowledge', { token: tok, body: { ...good, content } }));
            assert.equal(d.content, content);
            assert.equal([...d.content].length, 2000);
        }
    });

    test('scenario, ids, lists and case texts have limits', async () => {
        await bad(create({ body: { ...good, scenario: 's'.repeat(2001) } }), 'LIMIT_EXCEEDED');
        await bad(create({ body: { ...good, agent_id: 'a'.repeat(257) } }), 'LIMIT_EXCEEDED');
        await bad(create({ body: { ...good, message_id: 'm'.repeat(257) } }), 'LIMIT_EXCEEDED');
        await bad(create({ body: { ...good, title: 't'.repeat(201) } }), 'LIMIT_EXCEEDED');
        await bad(create({ body: { ...good, urls: Array(33).fill('https://example.com') } }), 'LIMIT_EXCEEDED');
        await bad(create({ body: { ...good, urls: ['https://example.com/' + 'p'.repeat(2100)] } }), 'LIMIT_EXCEEDED');
        await bad(create({ body: { ...good, tags_type: Array(11).fill('tool') } }), 'LIMIT_EXCEEDED');
        await bad(create({ body: { ...good, tags: Array(33).fill('t') } }), 'LIMIT_EXCEEDED');
        await bad(update({ body: { add_helpful_case: { case_id: 'c'.repeat(257) } } }), 'LIMIT_EXCEEDED');
        await bad(update({ body: { add_helpful_case: { case_id: 'ok', scenario: 's'.repeat(4001) } } }), 'LIMIT_EXCEEDED');
        await bad(update({ body: { evolve_feedback: 'f'.repeat(4001) } }), 'LIMIT_EXCEEDED');
        const tok = s.token('limits2', 'agent');
        ok(await s.api('POST', '/api/knowledge', { token: tok, body: { ...good, scenario: '场'.repeat(2000), agent_id: 'a'.repeat(256) } }));
    });

    test('a body over 1 MiB is HTTP 413 with the JSON envelope', async () => {
        const big = JSON.stringify({ ...good, content: 'x'.repeat(1100 * 1024) });
        const id = 'big-body-request-1';
        const r = await create({ rawBody: big, headers: { 'X-Request-Id': id } });
        const e = err(r, 'PAYLOAD_TOO_LARGE', 413);
        assert.equal(e.request_id, id);
        assert.equal(r.headers['x-request-id'], id);
        await unchanged();
        // Without a token, and chunked without a Content-Length, the same.
        await bad(s.api('POST', '/api/knowledge', { rawBody: big }), 'PAYLOAD_TOO_LARGE', 413);
        await bad(create({ rawBody: big, chunked: true }), 'PAYLOAD_TOO_LARGE', 413);
        await bad(update({ rawBody: 'y'.repeat(1024 * 1024 + 1) }), 'PAYLOAD_TOO_LARGE', 413);
    });

    test('a body of exactly 1 MiB reaches the server', async () => {
        let raw = JSON.stringify({ ...good, content: 'x'.repeat(1024 * 1024 - 60) });
        raw = raw.padEnd(1024 * 1024, ' ');
        assert.equal(Buffer.byteLength(raw), 1024 * 1024);
        const e = await bad(create({ rawBody: raw }), 'LIMIT_EXCEEDED');
        assert.match(e.message, /content/);
    });
});

describe('query strings', () => {
    const badQueries = [
        'limit=%zz',
        'limit=%',
        'limit=%4',
        'tags_type=%ff',
        'tags_type=%C3%28',
        'tags_type=%ED%A0%80',
        'category=%00',
        'x%zz=1',
        'tags_type=\u00ff', // a raw 0xff byte
        'offset=1%G0',
    ];

    test('bad %-escapes and invalid UTF-8 are INVALID_REQUEST', async () => {
        for (const q of badQueries) {
            const e = await bad(s.api('GET', `/api/knowledge?${q}`, { token: agent }), 'INVALID_REQUEST');
            assert.match(e.message, /query/i, q);
            await bad(s.api('GET', `/api/knowledge/${entry.id}?${q}`, { token: agent }), 'INVALID_REQUEST');
            await bad(s.api('PUT', `/api/knowledge/${entry.id}?${q}`, { token: agent, body: { add_helpful_case: { case_id: 'query' } } }), 'INVALID_REQUEST');
        }
    });

    test('authentication comes before query parsing', async () => {
        await bad(s.api('GET', '/api/knowledge?limit=%zz'), 'UNAUTHORIZED', 401);
    });

    test('negative, huge and non-numeric offset and limit', async () => {
        for (const q of ['limit=-5', 'offset=-1', 'limit=1000000', 'offset=100000000000', 'limit=9223372036854775808', 'offset=1e3', 'limit=0x10', 'limit=%205', 'limit=5%20', 'offset=--1'])
            await bad(s.api('GET', `/api/knowledge?${q}`, { token: agent }), 'INVALID_REQUEST');
        const d = ok(await s.api('GET', '/api/knowledge?offset=1000000000', { token: agent }));
        assert.deepEqual(d.items, []);
        assert.equal(d.total, baseTotal);
    });

    test('well-formed escapes and unknown parameters are fine', async () => {
        const d = ok(await s.api('GET', '/api/knowledge?limit=%31&foo=bar&&=x&tags_type=t%6Fol&name=%E7%9F%A5', { token: agent }));
        assert.equal(d.limit, 1);
        assert.deepEqual(d.items.map((i) => i.id), [entry.id]);
    });

    test('an id with invalid UTF-8 or NUL in the path is refused', async () => {
        for (const id of ['%ff', '%C3%28', 'a%C0%80b', '%ED%A0%80']) {
            const r = await s.api('GET', `/api/knowledge/${id}`, { token: agent });
            err(r, 'INVALID_REQUEST');
            await bad(s.api('PUT', `/api/knowledge/${id}`, { token: agent, body: { update_score: 4 } }), 'INVALID_REQUEST');
            await bad(s.api('DELETE', `/api/knowledge/${id}`, { token: s.admin }), 'INVALID_REQUEST');
            await bad(s.api('GET', `/api/knowledge/${id}/revisions`, { token: agent }), 'INVALID_REQUEST');
            await bad(s.api('POST', `/api/knowledge/${id}/revert`, { token: s.admin, body: { version: 1 } }), 'INVALID_REQUEST');
        }
    });
});

describe('paths', () => {
    const cases = [
        ['../x.md', "Path traversal segment '..' in: '../x.md'"],
        ['/etc/passwd.md', 'experiences allows at most one level of sub-directories'],
        ['/x.md', "Absolute path not allowed: '/x.md'"],
        ['a/b/c.md', 'experiences allows at most one level of sub-directories'],
        ['../../../etc/passwd.md', 'experiences allows at most one level of sub-directories'],
        ['a/../b.md', 'experiences allows at most one level of sub-directories'],
        ['x.txt', 'Knowledge files must be .md format'],
        ['x.MD', 'Knowledge files must be .md format'],
        ['x', 'Knowledge files must be .md format'],
        ['.md', 'Knowledge files must be .md format'],
        ['a\\b.md', 'Path contains a backslash or a control character'],
        ['..\\x.md', 'Path contains a backslash or a control character'],
        ['a\tb.md', 'Path contains a backslash or a control character'],
        ['a\nb.md', 'Path contains a backslash or a control character'],
        ['', 'Empty path'],
        ['p'.repeat(300) + '.md', 'Path must be valid UTF-8 of at most 255 characters'],
    ];
    for (const [path, message] of cases) {
        test(`path ${JSON.stringify(path.length > 40 ? path.slice(0, 20) + '…' : path)} is refused`, async () => {
            const e = await bad(create({ body: { ...good, path } }), 'INVALID_REQUEST');
            assert.equal(e.message, message);
        });
    }

    test('rules are flat', async () => {
        const e = await bad(s.api('POST', '/api/knowledge', { token: s.admin, body: { ...good, category: 'rules', path: 'sub/r.md' } }), 'INVALID_REQUEST');
        assert.equal(e.message, 'rules does not allow sub-directories');
        const t = await bad(s.api('POST', '/api/knowledge', { token: s.admin, body: { ...good, category: 'rules', path: '../r.md' } }), 'INVALID_REQUEST');
        assert.equal(t.message, 'rules does not allow sub-directories');
    });

    test('unicode and spaces are allowed in names', async () => {
        const tok = s.token('paths', 'agent');
        const d = ok(await s.api('POST', '/api/knowledge', { token: tok, body: { ...good, path: '笔记/my notes.md' } }));
        assert.equal(d.path, '笔记/my notes.md');
    });
});

describe('injection', () => {
    const evil = ["'; DROP TABLE knowledge; --", "x' OR '1'='1", '" OR ""="', "1; DELETE FROM tokens WHERE 1=1; --", '%27%20OR%201%3D1', "Robert'); DROP TABLE knowledge_cases;--"];

    test('SQL-looking strings are stored verbatim and do nothing', async () => {
        const tok = s.token('injection', 'agent');
        for (const v of evil) {
            const d = ok(await s.api('POST', '/api/knowledge', { token: tok, body: { scenario: v, content: v, agent_id: v, message_id: v, title: v, urls: [v], tags: [v] } }));
            assert.equal(d.scenario, v);
            assert.equal(d.content, v);
            assert.equal(d.source.agent_id, v);
            assert.equal(d.message_id, v);
            assert.equal(d.title, v);
            assert.deepEqual(d.source.urls, [v]);
            const u = ok(await s.api('PUT', `/api/knowledge/${d.id}`, { token: tok, body: { add_helpful_case: { case_id: v, scenario: v, result: v } } }));
            assert.equal(u.eval.helpful_history[0].case_id, v);
            assert.equal(u.eval.helpful_history[0].result, v);
            const { applied, ...entryOnly } = u;
            assert.deepEqual(applied, { add_helpful_case: 'added' });
            assert.deepEqual(ok(await s.api('GET', `/api/knowledge/${d.id}`, { token: tok })), entryOnly);
        }
        assert.equal(ok(await s.api('GET', '/api/knowledge?limit=100', { token: tok })).total, evil.length);
        await unchanged();
    });

    test('SQL-looking ids and query values find nothing and break nothing', async () => {
        for (const v of evil) {
            const enc = encodeURIComponent(v);
            await bad(s.api('GET', `/api/knowledge/${enc}`, { token: agent }), 'NOT_FOUND');
            await bad(s.api('PUT', `/api/knowledge/${enc}`, { token: agent, body: { add_helpful_case: { case_id: 'inj' } } }), 'NOT_FOUND');
            await bad(s.api('DELETE', `/api/knowledge/${enc}`, { token: s.admin }), 'NOT_FOUND');
            await bad(s.api('GET', `/api/knowledge?tags_type=${enc}`, { token: agent }), 'INVALID_REQUEST');
            await bad(s.api('GET', `/api/knowledge?category=${enc}`, { token: agent }), 'INVALID_REQUEST');
            await bad(s.api('GET', `/api/knowledge?limit=${enc}`, { token: agent }), 'INVALID_REQUEST');
            const b = ok(await s.api('POST', '/api/knowledge/batch_update', { token: agent, body: { feedback_list: [{ knowledge_id: v, is_effective: true }] } }));
            assert.equal(b.results[0].error.code, 'NOT_FOUND');
        }
        await unchanged();
        // Tokens survived too.
        ok(await s.api('GET', '/api/auth/me', { token: s.admin }));
    });
});
