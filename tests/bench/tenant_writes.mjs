// tenant_writes.mjs: what one agent token can write in a few seconds with
// MCP batches (issue 23's finding: 5,000 entries with 50 requests in 4 s),
// with the per-token write rate off and at its defaults, and what a second
// space's agent meanwhile gets. Two stacks, one run; prints the figures.
// A measurement, not a test.
//   KNOWHUB_BIN=build/knowhub node tests/bench/tenant_writes.mjs [REQUESTS] [SAVES_PER_REQUEST]
import { startStack } from '../http/lib/stack.mjs';

const requests = Number(process.argv[2] || 50);
const per = Number(process.argv[3] || 100);
const save = (i, j) => ({
    jsonrpc: '2.0',
    id: j + 1,
    method: 'tools/call',
    params: { name: 'knowledge_save', arguments: { scenario: `When flood ${i}-${j} happens`, content: `Flood body ${i}-${j}.` } },
});

async function run(label, env) {
    const s = await startStack(env);
    try {
        const attacker = s.token('flood', 'agent', 'flooder');
        const other = s.token('quiet', 'agent', 'quiet-bot');
        let created = 0, refused = 0, otherOk = 0, otherMs = 0;
        const t0 = Date.now();
        for (let i = 0; i < requests; i++) {
            const r = await s.api('POST', '/mcp', { token: attacker, body: Array.from({ length: per }, (_, j) => save(i, j)) });
            for (const x of r.json || []) x.result?.isError ? refused++ : created++;
            if (i % 10 === 9) {
                const t = Date.now();
                const o = await s.api('POST', '/api/knowledge', { token: other, body: { scenario: `quiet ${i}`, content: 'still here' } });
                otherMs += Date.now() - t;
                if (o.json?.status === 'success') otherOk++;
            }
        }
        const seconds = (Date.now() - t0) / 1000;
        console.log(`${label}: ${requests} MCP requests of ${per} saves in ${seconds.toFixed(1)} s: ${created} entries created, ${refused} refused (RATE_LIMITED); the other space's agent: ${otherOk} of ${Math.floor(requests / 10)} creates passed, ${(otherMs / Math.max(1, Math.floor(requests / 10))).toFixed(0)} ms each`);
    } finally {
        await s.stop();
    }
}

await run('write rate off (before)', { KNOWHUB_WRITE_RATE: '0', KNOWHUB_SPACE_ENTRIES: '0' });
await run('defaults (100 items/s, burst 1000)', {});
