// mcp.mjs: talk to KnowHub's POST /mcp with the official MCP TypeScript SDK
// client (streamable HTTP transport), or raw JSON-RPC over fetch.
//   const c = await connect(s, token);
//   const r = await tool(c, 'knowledge_search', { q: 'ROI' });   // structuredContent, throws on isError
//   await c.close();
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export const TOOL_NAMES = [
    'knowledge_search',
    'knowledge_save',
    'knowledge_update',
    'knowledge_batch_update',
    'knowledge_list',
    'knowledge_slim',
    'knowledge_read',
    'knowledge_rules',
    'knowledge_context',
    'trace_eval_prompt',
    'trace_submit_evaluation',
    'knowledge_review_list',
    'knowledge_review_decide',
    'knowledge_link',
];

/** An SDK client connected to the stack's /mcp with a Bearer token (none when token is null). */
export async function connect(s, token, headers = {}) {
    const h = { ...headers };
    if (token) h.Authorization = `Bearer ${token}`;
    const transport = new StreamableHTTPClientTransport(new URL(`${s.base}/mcp`), {
        requestInit: { headers: h },
    });
    const client = new Client({ name: 'knowhub-mcp-tests', version: '1.0.0' });
    await client.connect(transport);
    client.knowhubTransport = transport;
    return client;
}

/** The text of a budgeted knowledge_rules / knowledge_context result: its blocks, and how many were left out. */
export function budgetedText(d) {
    let t = d.block ?? d.rules_block ?? '';
    if (d.knowledge_block) t += `\n${d.knowledge_block}`;
    if (d.omitted.length) t += `\n(Left out for the budget or as duplicates: ${d.omitted.length}; their ids are in structuredContent.omitted.)\n`;
    return t;
}

/** Check the shape every tool result has: one text content that is the JSON of structuredContent. */
export function checkResult(r) {
    assert.ok(Array.isArray(r.content) && r.content.length === 1, JSON.stringify(r));
    assert.equal(r.content[0].type, 'text');
    assert.equal(typeof r.structuredContent, 'object');
    assert.ok(r.structuredContent !== null && !Array.isArray(r.structuredContent));
    if (r.isError) {
        const { code, message } = r.structuredContent.error;
        assert.equal(r.content[0].text, `${code}: ${message}`);
    } else if (r.structuredContent.budget_tokens !== undefined) {
        // A budgeted answer's text is the blocks the budget counted (docs/agents.md "Token budgets").
        assert.equal(r.content[0].text, budgetedText(r.structuredContent));
    } else {
        const parsed = JSON.parse(r.content[0].text);
        // structuredContent is the data itself, or {data} when the data is not an object.
        const expect = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : { data: parsed };
        assert.deepEqual(r.structuredContent, expect);
    }
    return r;
}

/** Call a tool; returns its structuredContent, failing the test when it is an error. */
export async function tool(client, name, args = {}) {
    const r = checkResult(await client.callTool({ name, arguments: args }));
    assert.ok(!r.isError, `${name} ${JSON.stringify(args)} failed: ${r.content[0].text}`);
    return r.structuredContent;
}

/** Call a tool that must fail as a tool result; returns the error {code, message}. */
export async function toolError(client, name, args = {}) {
    const r = checkResult(await client.callTool({ name, arguments: args }));
    assert.equal(r.isError, true, `${name} ${JSON.stringify(args)} should fail: ${r.content[0].text}`);
    return r.structuredContent.error;
}

/**
 * One raw POST /mcp: body is JSON-encoded unless it is a string or Buffer.
 * Returns {status, headers, text, json}.
 */
export async function rawPost(s, body, { token, headers = {} } = {}) {
    const h = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers };
    if (token) h.Authorization = `Bearer ${token}`;
    const payload = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
    const r = await fetch(`${s.base}/mcp`, { method: 'POST', headers: h, body: payload });
    const text = await r.text();
    let json = null;
    try {
        json = JSON.parse(text);
    } catch {
        json = null;
    }
    return { status: r.status, headers: r.headers, text, json };
}

/** A JSON-RPC request object. */
export function rpc(id, method, params) {
    const m = { jsonrpc: '2.0', id, method };
    if (params !== undefined) m.params = params;
    return m;
}

/** The JSON-RPC error {code, message, data} of an SDK call that must fail (resources, prompts ...). */
export async function rpcError(promise) {
    try {
        await promise;
    } catch (e) {
        return { code: e.code, message: e.message, data: e.data };
    }
    assert.fail('the call should fail');
}
