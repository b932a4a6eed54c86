// reads.mjs: what tests of a space's read paths share: one token of each
// role for a space, an MCP tool call, and every read path of the knowledge
// a reader has (REST and MCP), to show what a write hid or brought back.
import assert from 'node:assert/strict';

/** One token of each role for space `name` of stack s: {name, admin, editor, agent, reader}. */
export function roleTokens(s, name) {
    const out = { name };
    for (const role of ['admin', 'editor', 'agent', 'reader']) out[role] = s.token(name, role, role);
    return out;
}

/** A tools/call of MCP tool `name` on stack s, answered as JSON. */
export const mcpTool = (s, token, name, args) =>
    s.api('POST', '/mcp', {
        token,
        body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
        headers: { Accept: 'application/json, text/event-stream' },
    });

/** The answer texts of reads ({name: pending request}), each one a success
 * (REST's envelope, or an MCP result that is no error): {name: text}. */
export async function answersOf(reads) {
    const out = {};
    for (const [name, p] of Object.entries(reads)) {
        const r = await p;
        assert.equal(r.status, 200, `${name}: ${r.text}`);
        assert.ok(!/"status":"error"/.test(r.text.slice(0, 40)) && !/"isError":true/.test(r.text), `${name}: ${r.text}`);
        out[name] = r.text;
    }
    return out;
}

/** Every read path of the knowledge (searches, context, rules, lists; REST
 * and MCP), each asked about `word`: {name: answer text}; each must succeed. */
export async function readPaths(s, token, word) {
    const reads = {
        'GET /api/knowledge/search': s.api('GET', `/api/knowledge/search?q=${word}`, { token }),
        'POST /api/knowledge/search': s.api('POST', '/api/knowledge/search', { token, body: { query: word } }),
        'POST /api/knowledge/context': s.api('POST', '/api/knowledge/context', { token, body: { question: `deploying ${word}` } }),
        'GET /api/knowledge/rules': s.api('GET', '/api/knowledge/rules', { token }),
        'GET /api/knowledge': s.api('GET', '/api/knowledge?limit=100', { token }),
        'POST /api/knowledge/list rules': s.api('POST', '/api/knowledge/list', { token, body: { category: 'rules' } }),
        'POST /api/knowledge/list experiences': s.api('POST', '/api/knowledge/list', { token, body: { category: 'experiences' } }),
        'mcp knowledge_search': mcpTool(s, token, 'knowledge_search', { query: word }),
        'mcp knowledge_context': mcpTool(s, token, 'knowledge_context', { question: `deploying ${word}` }),
        'mcp knowledge_rules': mcpTool(s, token, 'knowledge_rules', {}),
        'mcp knowledge_list': mcpTool(s, token, 'knowledge_list', { limit: 100 }),
    };
    return answersOf(reads);
}

/** The read paths of readPaths(s, token, word) whose answer holds word. */
export const readsHolding = async (s, token, word) => {
    const reads = await readPaths(s, token, word);
    return Object.keys(reads).filter((k) => reads[k].includes(word));
};
