// The MCP framing of POST /mcp: the SDK client's handshake, protocol-version
// negotiation, ping, tools/list, JSON-RPC errors, batches, notifications, the
// HTTP side (401, 405) and GET /api/tools.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { startStack } from '../http/lib/stack.mjs';
import { TOOL_NAMES, connect, rawPost, rpc } from './lib/mcp.mjs';

let s;
before(async () => {
    s = await startStack();
});
after(async () => {
    await s?.stop();
});

const INIT_PARAMS = (protocolVersion) => ({
    protocolVersion,
    capabilities: {},
    clientInfo: { name: 'raw-fetch', version: '1' },
});

describe('the SDK client', () => {
    test('connects with a token, negotiates a version both speak, pings and lists the tools', async () => {
        const c = await connect(s, s.admin);
        try {
            // The SDK asks for its latest version; KnowHub answers the latest it speaks.
            assert.equal(c.knowhubTransport.protocolVersion, '2025-06-18');
            assert.deepEqual(c.getServerVersion(), { name: 'knowhub', version: '0.1.0' });
            assert.deepEqual(c.getServerCapabilities().tools, { listChanged: false });
            assert.match(c.getInstructions(), /knowledge_search/);
            assert.deepEqual(await c.ping(), {});

            const { tools } = await c.listTools();
            assert.deepEqual(tools.map((t) => t.name).sort(), [...TOOL_NAMES].sort());
            for (const t of tools) {
                assert.ok(t.description.length > 40, `${t.name} has a description for a model`);
                const schema = t.inputSchema;
                assert.equal(schema.type, 'object', `${t.name}: inputSchema is an object schema`);
                assert.equal(typeof schema.properties, 'object', `${t.name}: has properties`);
                for (const r of schema.required ?? [])
                    assert.ok(r in schema.properties, `${t.name}: required '${r}' is a property`);
                for (const [k, p] of Object.entries(schema.properties))
                    assert.ok(p.type || p.enum, `${t.name}.${k} has a type or an enum`);
            }
            const byName = Object.fromEntries(tools.map((t) => [t.name, t.inputSchema]));
            // query, as in the seed's signature; q is kept as an alias
            assert.deepEqual(byName.knowledge_search.required, ['query']);
            assert.equal(byName.knowledge_search.properties.q.type, 'string');
            assert.deepEqual(byName.knowledge_save.required, ['scenario', 'content']);
            assert.deepEqual(byName.trace_submit_evaluation.required, ['trace_id', 'trigger']);
            assert.deepEqual(byName.trace_submit_evaluation.properties.trigger.enum,
                ['goal_completion', 'compression', 'task_completion']);
        } finally {
            await c.close();
        }
    });

    test('an unknown tool is a JSON-RPC error (-32602), and the session goes on', async () => {
        const c = await connect(s, s.admin);
        try {
            await assert.rejects(c.callTool({ name: 'knowledge_destroy', arguments: {} }), (e) => {
                assert.ok(e instanceof McpError);
                assert.equal(e.code, -32602);
                assert.match(e.message, /Unknown tool/);
                return true;
            });
            assert.deepEqual(await c.ping(), {});
        } finally {
            await c.close();
        }
    });

    test('without a token, or with a wrong or revoked one, connect fails with HTTP 401', async () => {
        const reader = s.token('default', 'reader', 'soon-revoked');
        s.revoke(reader);
        for (const token of [null, 'kh_0000000000000000_forged', reader]) {
            await assert.rejects(connect(s, token), (e) => {
                assert.equal(e.code, 401, `${token}: ${e}`);
                return true;
            });
        }
    });
});

describe('raw JSON-RPC over POST /mcp', () => {
    test('initialize answers 2025-06-18, 2025-03-26 and 2024-11-05 as asked; anything else gets the latest', async () => {
        for (const [asked, answered] of [
            ['2025-06-18', '2025-06-18'],
            ['2025-03-26', '2025-03-26'],
            ['2024-11-05', '2024-11-05'],
            ['2099-01-01', '2025-06-18'],
        ]) {
            const r = await rawPost(s, rpc(1, 'initialize', INIT_PARAMS(asked)), { token: s.admin });
            assert.equal(r.status, 200);
            assert.match(r.headers.get('content-type'), /^application\/json/);
            assert.equal(r.json.jsonrpc, '2.0');
            assert.equal(r.json.id, 1);
            assert.equal(r.json.result.protocolVersion, answered, `asked ${asked}`);
            assert.equal(r.json.result.serverInfo.name, 'knowhub');
            assert.ok(r.json.result.capabilities.tools);
        }
        // The whole handshake by hand: initialize, the initialized notification, a request.
        const init = await rawPost(s, rpc('a', 'initialize', INIT_PARAMS('2025-03-26')), { token: s.admin });
        assert.equal(init.json.id, 'a');
        const note = await rawPost(s, { jsonrpc: '2.0', method: 'notifications/initialized' }, {
            token: s.admin,
            headers: { 'MCP-Protocol-Version': '2025-03-26' },
        });
        assert.equal(note.status, 202);
        assert.equal(note.text, '');
        const list = await rawPost(s, rpc('b', 'tools/list', {}), {
            token: s.admin,
            headers: { 'MCP-Protocol-Version': '2025-03-26' },
        });
        assert.deepEqual(list.json.result.tools.map((t) => t.name).sort(), [...TOOL_NAMES].sort());
    });

    test('ping answers an empty result; an unknown method is -32601', async () => {
        const ping = await rawPost(s, rpc(7, 'ping'), { token: s.admin });
        assert.deepEqual(ping.json, { jsonrpc: '2.0', id: 7, result: {} });
        const nope = await rawPost(s, rpc('x', 'sampling/createMessage'), { token: s.admin });
        assert.equal(nope.status, 200);
        assert.equal(nope.json.id, 'x');
        assert.equal(nope.json.error.code, -32601);
    });

    test('malformed JSON is a parse error (-32700) with id null', async () => {
        for (const body of ['{"jsonrpc":"2.0","id":1,"method":"ping"', '', '   ', '{"jsonrpc":"2.0"}{}', '{"a":}', '[1,]',
            Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])]) {
            const r = await rawPost(s, body, { token: s.admin });
            assert.equal(r.status, 200, `${body}`);
            // every error carries the request id, as REST errors do
            const data = { request_id: r.headers.get('x-request-id') };
            assert.deepEqual(r.json, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error', data } }, `${body}`);
        }
        // Trailing whitespace is not garbage.
        const ok = await rawPost(s, '{"jsonrpc":"2.0","id":1,"method":"ping"}\r\n ', { token: s.admin });
        assert.deepEqual(ok.json.result, {});
    });

    test('valid JSON that is not a request is -32600', async () => {
        for (const body of ['42', 'null', 'true', '"ping"', '[]']) {
            const r = await rawPost(s, body, { token: s.admin });
            assert.equal(r.status, 200, body);
            assert.equal(r.json.error?.code, -32600, `${body}: ${r.text}`);
            assert.equal(r.json.id, null);
        }
        for (const msg of [
            { id: 1, method: 'ping' }, // no jsonrpc
            { jsonrpc: '1.0', id: 1, method: 'ping' },
            { jsonrpc: '2.0', id: 1 }, // no method
            { jsonrpc: '2.0', id: 1, method: 42 },
            { jsonrpc: '2.0', id: { a: 1 }, method: 'ping' },
        ]) {
            const r = await rawPost(s, msg, { token: s.admin });
            assert.equal(r.json.error?.code, -32600, JSON.stringify(msg));
        }
    });

    test('bad params are -32602', async () => {
        const cases = [
            rpc(1, 'tools/list', []),
            rpc(2, 'tools/call', {}),
            rpc(3, 'tools/call', { name: 42 }),
            rpc(4, 'tools/call', { name: 'no_such_tool', arguments: {} }),
        ];
        for (const msg of cases) {
            const r = await rawPost(s, msg, { token: s.admin });
            assert.equal(r.json.id, msg.id);
            assert.equal(r.json.error?.code, -32602, `${JSON.stringify(msg)}: ${r.text}`);
        }
        // Arguments that are not an object reach the tool: a tool error, not a protocol one.
        const r = await rawPost(s, rpc(5, 'tools/call', { name: 'knowledge_rules', arguments: [1] }), { token: s.admin });
        assert.equal(r.json.result.isError, true);
        assert.equal(r.json.result.structuredContent.error.code, 'INVALID_REQUEST');
    });

    test('notifications and client responses are accepted with 202 and no body', async () => {
        for (const msg of [
            { jsonrpc: '2.0', method: 'notifications/initialized' },
            { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3, reason: 'x' } },
            { jsonrpc: '2.0', method: 'notifications/whatever' },
            { jsonrpc: '2.0', id: 9, result: {} },
            { jsonrpc: '2.0', id: 9, error: { code: -1, message: 'no' } },
        ]) {
            const r = await rawPost(s, msg, { token: s.admin });
            assert.equal(r.status, 202, JSON.stringify(msg));
            assert.equal(r.text, '');
        }
    });

    test('a batch answers each request in order and skips notifications', async () => {
        const r = await rawPost(s, [
            rpc(1, 'ping'),
            { jsonrpc: '2.0', method: 'notifications/initialized' },
            rpc(2, 'tools/list'),
            rpc(3, 'nope'),
            7,
            rpc(4, 'tools/call', { name: 'knowledge_list', arguments: { limit: 1 } }),
        ], { token: s.admin });
        assert.equal(r.status, 200);
        assert.ok(Array.isArray(r.json));
        assert.deepEqual(r.json.map((m) => m.id), [1, 2, 3, null, 4]);
        assert.deepEqual(r.json[0].result, {});
        assert.equal(r.json[1].result.tools.length, TOOL_NAMES.length);
        assert.equal(r.json[2].error.code, -32601);
        assert.equal(r.json[3].error.code, -32600);
        assert.deepEqual(r.json[4].result.structuredContent, { items: [], total: 0, limit: 1, offset: 0 });

        const onlyNotes = await rawPost(s, [
            { jsonrpc: '2.0', method: 'notifications/initialized' },
            { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } },
        ], { token: s.admin });
        assert.equal(onlyNotes.status, 202);
        assert.equal(onlyNotes.text, '');
    });

    test('a batch past 100 messages still answers every request', async () => {
        const msgs = Array.from({ length: 105 }, (_, i) => rpc(i, 'ping'));
        const r = await rawPost(s, msgs, { token: s.admin });
        assert.equal(r.status, 200);
        assert.equal(r.json.length, 105);
        assert.deepEqual(r.json.map((m) => m.id), msgs.map((m) => m.id));
        assert.ok(r.json.slice(0, 100).every((m) => m.result));
        assert.ok(r.json.slice(100).every((m) => m.error?.code === -32600));
    });

    test('HTTP: PUT and PATCH are 405 (Allow: POST, GET, HEAD, DELETE), a GET that takes no events too; no token is 401 with WWW-Authenticate', async () => {
        for (const [method, accept] of [['PUT', 'text/event-stream'], ['PATCH', 'application/json'], ['GET', 'application/json']]) {
            const r = await fetch(`${s.base}/mcp`, {
                method,
                headers: { Authorization: `Bearer ${s.admin}`, Accept: accept },
            });
            assert.equal(r.status, 405, method);
            assert.deepEqual(r.headers.get('allow').split(', ').sort(), ['DELETE', 'GET', 'HEAD', 'POST'], method);
            await r.text();
        }
        const r = await rawPost(s, rpc(1, 'ping'));
        assert.equal(r.status, 401);
        assert.match(r.headers.get('www-authenticate'), /^Bearer/);
        assert.equal(r.json.error.code, 'UNAUTHORIZED');
        const bad = await rawPost(s, rpc(1, 'ping'), { headers: { Authorization: 'Bearer nonsense' } });
        assert.equal(bad.status, 401);
    });
});

describe('GET /api/tools', () => {
    test('the same tools as OpenAI function schemas, with the same input schemas', async () => {
        const r = await s.api('GET', '/api/tools', { token: s.admin });
        assert.equal(r.status, 200);
        assert.equal(r.json.status, 'success');
        const fns = r.json.data.tools;
        assert.deepEqual(fns.map((t) => t.function.name), TOOL_NAMES);
        const c = await connect(s, s.admin);
        try {
            const { tools } = await c.listTools();
            for (const [i, t] of tools.entries()) {
                assert.equal(fns[i].type, 'function');
                assert.equal(fns[i].function.name, t.name);
                assert.equal(fns[i].function.description, t.description);
                assert.deepEqual(fns[i].function.parameters, t.inputSchema);
            }
        } finally {
            await c.close();
        }
        assert.equal((await s.api('GET', '/api/tools')).status, 401);
        const reader = s.token('default', 'reader', 'tools');
        assert.equal((await s.api('GET', '/api/tools', { token: reader })).status, 200);
    });
});

test('an unsupported MCP-Protocol-Version header is a 400 with a JSON-RPC error', async () => {
    const stack = await startStack();
    try {
        const url = `${stack.base}/mcp`;
        const ask = (version) =>
            fetch(url, {
                method: 'POST',
                headers: {
                    Authorization: `Bearer ${stack.admin}`,
                    'Content-Type': 'application/json',
                    Accept: 'application/json, text/event-stream',
                    'MCP-Protocol-Version': version,
                },
                body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
            });
        const bad = await ask('1999-01-01');
        assert.equal(bad.status, 400);
        assert.equal((await bad.json()).error.code, -32600);
        for (const v of ['2025-06-18', '2025-03-26']) assert.equal((await ask(v)).status, 200);
    } finally {
        await stack.stop();
    }
});
