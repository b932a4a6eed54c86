// llmtest.mjs: small helpers shared by the llm*.test.mjs files (the LLM
// features against tests/http/lib/fakellm.mjs).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { BIN, ROOT } from './stack.mjs';
import { ok } from './expect.mjs';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The fake LLM's environment for startStack. */
export function llmEnv(llm, extra = {}) {
    return { KNOWHUB_LLM_BASE_URL: llm.url, KNOWHUB_LLM_API_KEY: 'sk-test', ...extra };
}

/** Rows of a read-only SQL query on the stack's database (sqlite3 CLI). */
export function sql(s, query) {
    const r = spawnSync('sqlite3', ['-json', path.join(s.dir, 'knowhub.db'), query], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`sqlite3 failed: ${r.stderr}`);
    return r.stdout.trim() ? JSON.parse(r.stdout) : [];
}

/** The stored free-text feedback of an entry, oldest first. */
export function feedbackRows(s, id) {
    return sql(s, `SELECT feedback, status FROM knowledge_feedback WHERE knowledge_id = '${id}' ORDER BY seq`);
}

/** The calls the fake LLM saw for one purpose. */
export const callsOf = (llm, purpose) => llm.calls.filter((c) => c.purpose === purpose);

/** The text of a call's messages of one role. */
export const said = (call, role) => call.messages.filter((m) => m.role === role).map((m) => m.content).join('\n');

/** Wait until a job is done or failed; returns it. */
export async function waitJob(s, token, id, timeoutMs = 20000) {
    const until = Date.now() + timeoutMs;
    for (;;) {
        const j = ok(await s.api('GET', `/api/jobs/${id}`, { token }));
        if (j.status === 'done' || j.status === 'failed') return j;
        if (Date.now() > until) throw new Error(`job ${id} still ${j.status}: ${JSON.stringify(j)}`);
        await sleep(50);
    }
}

/** Wait until cond() (sync or async) is true (polled every 10 ms). */
export async function waitFor(cond, timeoutMs = 10000, what = 'condition') {
    const until = Date.now() + timeoutMs;
    while (!(await cond())) {
        if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
        await sleep(10);
    }
}

/** Restart knowhub + nginx of a stack on the same data directory and port
 * with another environment (e.g. another KNOWHUB_AGENT_LOG). */
export function restart(s, env = {}) {
    const sh = path.join(ROOT, 'scripts/stack.sh');
    const opts = { env: { ...process.env, KNOWHUB_BIN: BIN, ...env }, encoding: 'utf8', timeout: 30000 };
    s.agent.destroy();
    s.agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    let r = spawnSync('bash', [sh, 'stop', s.dir], { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    assert.equal(r.status, 0, r.stderr);
    r = spawnSync('bash', [sh, 'start', s.dir, '127.0.0.1', String(s.port)], { ...opts, stdio: ['ignore', 'ignore', 'pipe'] });
    assert.equal(r.status, 0, `restart failed: ${r.stderr}`);
}

/** A UTC date YYYY-MM-DD, days from now. */
export const utcDate = (days = 0) => new Date(Date.now() + days * 86400000).toISOString().slice(0, 10);

/** A UTC time "YYYY-MM-DDTHH:MM:SS" now (for ?since=). */
export const utcNow = () => new Date().toISOString().slice(0, 19);

/** An experience_context as the browser builds it (seed 004 section 7). */
export function experienceContext(over = {}) {
    return {
        context_id: 'ctx-sales-1',
        source_table_id: 'sales_by_region',
        user_question: 'How did sales grow per region quarter over quarter?',
        dialog: [
            { role: 'user', content: 'show growth per region' },
            { role: 'assistant', content: 'computing' },
        ],
        interaction: [
            { from: 'user', content: 'Compare quarterly sales growth for each region' },
            { from: 'data-agent', content: 'Grouped by region and quarter, then took the percent change' },
        ],
        result_summary: {
            display_instruction: 'Quarterly growth by region',
            output_variable: 'growth_df',
            source_tables: ['sales'],
            output_fields: ['region', 'quarter', 'growth'],
            output_rows: 12,
            chart_type: 'bar',
            code: "# load the confidential export\ndf = sales.groupby(['region', 'quarter']).sum()\ndf['growth'] = df.pct_change()",
        },
        execution_attempts: [
            { kind: 'transform', attempt: 1, status: 'error', summary: 'first try', error: "KeyError: 'quarter'", repair_code_summary: 'derive the quarter from the date first' },
            { kind: 'transform', attempt: 2, status: 'ok', summary: 'worked' },
        ],
        ...over,
    };
}
