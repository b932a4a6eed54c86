// Jobs held by a node for a lease, with two knowhub processes on one
// database (KNOWHUB_NODE, KNOWHUB_JOB_LEASE): a process starting never takes
// a live job of another; when the node running a slim job is killed (-9),
// the other takes it over once the lease ran out and finishes it, each
// group merged once; every answer names its node (X-KnowHub-Node). The
// second process is stopped like the stack's: it exits 0 on SIGTERM and its
// stderr shows no sanitizer report or internal error.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BIN, bugLines, startStack } from './lib/stack.mjs';
import { startFakeLlm } from './lib/fakellm.mjs';
import { ok } from './lib/expect.mjs';
import { llmEnv, sleep, sql, waitFor } from './lib/llmtest.mjs';

const LEASE = 4; // seconds; each merge (the fake LLM) takes 1 s, well inside it
const SCEN = ['Load a very large CSV file with pandas by reading it in chunks', 'Plot a monthly revenue trend line chart with matplotlib', 'Join two sales tables on the customer id and check the row counts'];
const TEXT = ['Use read_csv with chunksize and concatenate the chunks.', 'Resample by month, plot as a line, label the axes.', 'Merge on customer_id, then compare counts before and after.'];

describe('jobs across two processes on one database', () => {
    let s, llm, b, bLog, bExit;
    before(async () => {
        llm = await startFakeLlm();
        llm.mode('slim', 'slow', { delayMs: 1000 });
        s = await startStack({ ...llmEnv(llm), KNOWHUB_NODE: 'node-a', KNOWHUB_JOB_LEASE: String(LEASE) });
    });
    after(async () => {
        if (b && b.exitCode === null && b.signalCode === null) b.kill('SIGTERM'); // the test failed before stopping it
        await s?.stop();
        await llm?.stop();
    });

    test('each authenticated answer names its node; anonymous ones do not (the host name by default)', async () => {
        const r = await s.api('GET', '/api/jobs', { token: s.admin });
        assert.equal(r.headers['x-knowhub-node'], 'node-a');
        assert.equal((await s.api('GET', '/api/health')).headers['x-knowhub-node'], undefined);
        assert.equal((await s.api('GET', '/api/jobs')).headers['x-knowhub-node'], undefined); // 401
    });

    test('kill -9 of the node running a slim job: the other takes it over after the lease, each group merged once', async () => {
        const t = s.token('lease', 'agent', 'lease-bot');
        const ids = [];
        for (let g = 0; g < 3; g++)
            for (let i = 0; i < 2; i++)
                ids.push(ok(await s.api('POST', '/api/knowledge', { token: t, body: { scenario: SCEN[g] + (i ? ' indeed' : ''), content: TEXT[g] } })).id);
        const plan = ok(await s.api('POST', '/api/knowledge/slim', { token: t, body: { dry_run: true } }));
        assert.equal(plan.groups.length, 3, JSON.stringify(plan.groups.map((x) => x.members?.length)));
        const job = ok(await s.api('POST', '/api/knowledge/slim', { token: t, body: {} }));
        const row = () => sql(s, `SELECT status, node, progress, total FROM jobs WHERE id = '${job.id}'`)[0];
        await waitFor(() => row().status === 'running' && row().node === 'node-a', 10000, 'node A running the job');

        // Node B starts on the same database: it must not take A's live job.
        b = spawn(BIN, ['serve'], {
            env: { ...process.env, ...llmEnv(llm), ...s.cliEnv(), KNOWHUB_SOCKET: path.join(s.dir, 'run/b.sock'), KNOWHUB_NODE: 'node-b', KNOWHUB_JOB_LEASE: String(LEASE), KNOWHUB_ACCESS_LOG: 'off' },
            stdio: ['ignore', 'ignore', 'pipe'],
        });
        bLog = '';
        b.stderr.on('data', (d) => (bLog += d));
        bExit = new Promise((resolve) => b.on('exit', (code, signal) => resolve({ code, signal })));
        await sleep(1500);
        assert.equal(row().node, 'node-a', 'a starting node left the live job alone');

        // A dies mid-job; B takes it over once the lease ran out and finishes it.
        const killedAt = Date.now();
        process.kill(s.knowhubPid(), 'SIGKILL');
        await waitFor(() => row().node === 'node-b', (LEASE + 5) * 1000, 'node B taking the job over');
        assert.ok(Date.now() - killedAt >= (LEASE - 1) * 1000 - 600, 'not before the lease ran out');
        await waitFor(() => row().status === 'done', 20000, 'the job done by node B');

        // Each group merged once: one active survivor per group, its members tombstones into it.
        const rows = sql(s, `SELECT id, status, merged_into FROM knowledge WHERE space = 'lease'`);
        const active = rows.filter((r) => r.status === 'active');
        assert.equal(active.length, 3, JSON.stringify(rows));
        for (const m of rows.filter((r) => r.status === 'merged')) assert.ok(active.some((a) => a.id === m.merged_into), JSON.stringify(m));
        assert.equal(rows.filter((r) => r.status === 'merged').length, 3);
        // A merge writes one "merge" revision on the survivor and one on the member: once each.
        const merges = sql(s, `SELECT knowledge_id, count(*) AS n FROM knowledge_revisions WHERE space = 'lease' AND reason = 'merge' GROUP BY knowledge_id`);
        assert.equal(merges.length, 6, JSON.stringify(merges));
        assert.ok(merges.every((m) => m.n === 1), `no group merged twice: ${JSON.stringify(merges)}`);
        const done = sql(s, `SELECT result FROM jobs WHERE id = '${job.id}'`)[0];
        assert.deepEqual(JSON.parse(done.result).failed_groups, []);

        // Node B stops cleanly, and what it logged shows no bug.
        b.kill('SIGTERM');
        let timer;
        const end = await Promise.race([bExit, new Promise((r) => (timer = setTimeout(r, 15000, { code: 'still running 15 s after SIGTERM' })))]);
        clearTimeout(timer);
        assert.deepEqual(end, { code: 0, signal: null }, `node B's exit; its stderr:\n${bLog.slice(-2000)}`);
        assert.match(bLog, /knowhub: stopped/);
        assert.deepEqual(bugLines(bLog), [], "node B's stderr");
    });
});
