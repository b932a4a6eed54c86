// Memory budget: hostile bodies that once made knowhub's memory grow with
// what a client chose — YAML alias bombs in front matter, searches padded to
// pin the answer cache, MCP batches of large answers — must each get their
// documented answer while the process's peak RSS (VmHWM) stays under
// BUDGET_MB. The figures go to tests/out/reliability-memory.json.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import { startStack } from '../http/lib/stack.mjs';
import { err, ok } from '../http/lib/expect.mjs';
import { procState, writeOut } from './lib.mjs';

const BUDGET_MB = 256;
let s, pid, reader, editor, agent;
const figures = { budget_mb: BUDGET_MB, phases: {} };

/** knowhub's resident and peak resident memory in MB (from /proc/PID/status). */
function rss() {
    const st = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(st)[1]);
    return { rss_mb: +(kb('VmRSS') / 1024).toFixed(1), peak_mb: +(kb('VmHWM') / 1024).toFixed(1) };
}

/** Fail as soon as the peak passes the budget, naming what was sent last. */
function assertBudget(what) {
    const m = rss();
    assert.ok(m.peak_mb < BUDGET_MB, `${what}: knowhub peak RSS ${m.peak_mb} MB >= ${BUDGET_MB} MB`);
    assert.equal(procState(pid), 'alive', `${what}: knowhub died`);
    return m;
}

/** Front matter whose aliases expand to 10^levels leaves (~50 bytes a level). */
function aliasBomb(levels) {
    const lines = ['---', 'title: bomb', `l0: &l0 [${Array(10).fill('lol').join(', ')}]`];
    for (let i = 1; i <= levels; i++) lines.push(`l${i}: &l${i} [${Array(10).fill(`*l${i - 1}`).join(', ')}]`);
    return `${lines.join('\n')}\n---\nbody\n`;
}

before(async () => {
    s = await startStack();
    pid = s.knowhubPid();
    reader = s.token('memory', 'reader', 'memory');
    editor = s.token('memory', 'editor', 'memory');
    agent = s.token('memory', 'agent', 'memory');
    // 100 entries near the size limits (Chinese text: three bytes a character),
    // so one page of the list is a few MB of JSON.
    const han = '数据分析经验'.repeat(400).slice(0, 1990);
    for (let i = 0; i < 100; i++) {
        ok(await s.api('POST', '/api/knowledge', {
            token: agent,
            body: { scenario: `库存周转 ${i} ${'场景'.repeat(990)}`, content: `${i} ${han}`, tags_type: ['tool'] },
        }));
    }
    figures.phases.start = rss();
});

after(async () => {
    writeOut('reliability-memory.json', figures);
    await s?.stop();
});

test('alias bombs in front matter are refused everywhere front matter is parsed', async () => {
    for (let levels = 3; levels <= 9; levels++) {
        const content = aliasBomb(levels);
        assert.ok(content.length < 700, `bomb of ${levels} levels is ${content.length} bytes`);
        // The preview renders the body alone, or refuses the front matter: either, cheaply.
        const preview = await s.api('POST', '/api/knowledge/preview', { token: reader, body: { content } });
        if (preview.json?.status === 'error') err(preview, 'INVALID_REQUEST');
        else assert.equal(ok(preview).html, '<p>body</p>\n');
        assertBudget(`preview of a ${levels}-level alias bomb`);
        const path = `bombs/bomb-${levels}.md`;
        err(await s.api('POST', '/api/knowledge/write', { token: editor, body: { category: 'experiences', path, content } }), 'INVALID_REQUEST');
        assertBudget(`write of a ${levels}-level alias bomb`);
        err(await s.api('POST', '/api/knowledge/read', { token: reader, body: { category: 'experiences', path } }), 'TABLE_NOT_FOUND');
    }
    figures.phases.alias_bombs = rss();
});

test('searches padded to pin the answer cache keep memory bounded', async () => {
    const pad = 'p'.repeat(900 * 1024);
    const clients = 8;
    const perClient = 40;
    await Promise.all(
        Array.from({ length: clients }, async (_, c) => {
            for (let i = 0; i < perClient; i++) {
                const body = { query: `库存周转 ${c} ${i}`, categories: ['experiences'], max_results: 50, pad: `${c}-${i}-${pad}` };
                const r = await s.api('POST', '/api/knowledge/search', { token: reader, body });
                if (r.json?.status === 'error') err(r, 'INVALID_REQUEST');
                else ok(r);
            }
        }),
    );
    figures.phases.padded_searches = { requests: clients * perClient, body_kb: 900, ...assertBudget('padded searches') };
});

test('MCP batches of large answers stay within the budget and never answer 500', async () => {
    const batch = Array.from({ length: 40 }, (_, i) => ({
        jsonrpc: '2.0',
        id: i + 1,
        method: 'tools/call',
        params: { name: 'knowledge_list', arguments: { limit: 100 } },
    }));
    const init = await s.api('POST', '/mcp', {
        token: agent,
        headers: { Accept: 'application/json, text/event-stream' },
        body: { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'memory', version: '1' } } },
    });
    assert.equal(init.status, 200, init.text.slice(0, 300));
    let answered = 0;
    let refused = 0;
    let maxBytes = 0;
    for (let round = 0; round < 5; round++) {
        const t0 = Date.now();
        const r = await s.api('POST', '/mcp', {
            token: agent,
            headers: { Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2025-06-18' },
            body: batch,
            timeout: 120000,
        });
        const ms = Date.now() - t0;
        assert.equal(r.status, 200, `batch ${round}: HTTP ${r.status} ${r.text.slice(0, 300)}`);
        assert.ok(Array.isArray(r.json), `batch ${round}: not an array: ${r.text.slice(0, 300)}`);
        assert.equal(r.json.length, batch.length, 'one answer per item');
        for (const item of r.json) {
            assert.equal(item.jsonrpc, '2.0');
            assert.ok(item.id >= 1 && item.id <= batch.length, `id ${item.id}`);
            if (item.error) {
                assert.equal(typeof item.error.code, 'number');
                assert.ok(item.error.message.length > 0);
                refused++;
            } else {
                assert.ok(item.result, JSON.stringify(item).slice(0, 200));
                answered++;
            }
        }
        assert.ok(r.json.some((x) => x.result), 'the first items are answered');
        maxBytes = Math.max(maxBytes, r.raw.length);
        assert.ok(ms < 30000, `batch ${round} took ${ms} ms`);
        assertBudget(`MCP batch ${round}`);
    }
    figures.phases.mcp_batches = { batches: 5, items: 5 * batch.length, answered, refused, max_answer_mb: +(maxBytes / 1048576).toFixed(1), ...rss() };
});

test('the server is still whole afterwards', async () => {
    assert.equal(s.knowhubPid(), pid);
    ok(await s.api('GET', '/api/health'));
    const list = ok(await s.api('GET', '/api/knowledge?limit=1', { token: reader }));
    assert.equal(list.total, 100);
    figures.phases.end = assertBudget('the end');
    console.log(`# memory: peak RSS ${figures.phases.end.peak_mb} MB (budget ${BUDGET_MB} MB) after alias bombs of 3-9 levels, ${figures.phases.padded_searches.requests} padded searches, ${figures.phases.mcp_batches.items} MCP batch items (${figures.phases.mcp_batches.refused} refused past the budget, largest answer ${figures.phases.mcp_batches.max_answer_mb} MB)`);
});
