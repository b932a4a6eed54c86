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

/** Rows of an SQL query on the stack's database, as objects column: value
 * (the sqlite3 CLI's -json, or psql on a stack on PostgreSQL); a statement
 * that returns no rows (UPDATE, ...) gives []. */
export function sql(s, query) {
    if (s.databaseUrl) return pgSql(s.databaseUrl, query);
    const r = spawnSync('sqlite3', ['-json', path.join(s.dir, 'knowhub.db'), query], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`sqlite3 failed: ${r.stderr}`);
    return r.stdout.trim() ? JSON.parse(r.stdout) : [];
}

// A store fault for the tests of partial reads: knowledge_cases becomes a view
// whose helpful rows fail to read (SQLite: json_extract of bad JSON;
// PostgreSQL: a division by zero), so only an entry with a helpful case
// fails. sql(s, casesFault(s).plant), then sql(s, casesFault(s).unplant).
export function casesFault(s) {
    const pg = Boolean(s.databaseUrl);
    return {
        plant: pg
            ? `ALTER TABLE knowledge_cases RENAME TO kc_real;
           CREATE VIEW knowledge_cases AS SELECT seq, space, knowledge_id, kind, case_id, scenario,
             CASE WHEN kind = 'helpful' THEN (1 / (length(kind) - 7))::text ELSE result END AS result,
             agent_id, trace_id, goal_id, created_at FROM kc_real;`
            : `PRAGMA legacy_alter_table = ON; ALTER TABLE knowledge_cases RENAME TO kc_real;
           CREATE VIEW knowledge_cases AS SELECT seq, space, knowledge_id, kind, case_id, scenario,
             CASE WHEN kind = 'helpful' THEN json_extract('not json', '$') ELSE result END AS result,
             agent_id, trace_id, goal_id, created_at FROM kc_real;`,
        unplant: `${pg ? '' : 'PRAGMA legacy_alter_table = ON; '}DROP VIEW knowledge_cases; ALTER TABLE kc_real RENAME TO knowledge_cases;`,
    };
}

function psql(url, query) {
    return spawnSync('psql', ['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-d', url, '-c', query], { encoding: 'utf8', maxBuffer: 256 << 20 });
}

// As sqlite3 -json shows them: a boolean as 0/1, a json/jsonb column as its text.
const sqliteShape = (v) => (typeof v === 'boolean' ? Number(v) : v !== null && typeof v === 'object' ? JSON.stringify(v) : v);

/** sql() on PostgreSQL: a single SELECT (or WITH ... SELECT) is read as one
 * JSON object per row (row_to_json keeps the column order and the row order);
 * anything else is run as it is. */
function pgSql(url, query) {
    const q = query.trim().replace(/;\s*$/, '');
    if (/^(select|with)\b/i.test(q) && !q.includes(';')) {
        const r = psql(url, `SELECT row_to_json(t) FROM (${q}) t`);
        if (r.status === 0)
            return r.stdout
                .split('\n')
                .filter((l) => l.trim())
                .map((l) => Object.fromEntries(Object.entries(JSON.parse(l)).map(([k, v]) => [k, sqliteShape(v)])));
        // e.g. WITH ... INSERT, which cannot be a subquery: run it as it is.
    }
    const r = psql(url, query);
    if (r.status !== 0) throw new Error(`psql failed: ${r.stderr}`);
    return [];
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
    const db = s.databaseUrl ? { KNOWHUB_DATABASE_URL: s.databaseUrl } : {};
    const opts = { env: { ...process.env, KNOWHUB_BIN: BIN, ...db, ...env }, encoding: 'utf8', timeout: 30000 };
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
