// pgbench.mjs: what the PostgreSQL benchmarks (nodes.mjs, scale.mjs) share:
// a throwaway cluster (scripts/pgcluster.sh in a temporary directory, stopped
// and removed by stopCluster, by an exit handler, and by a watchdog if the
// process is killed outright), the seeded entries and queries (the same from
// a fixed seed everywhere), seeding through HTTP, and the figures' helpers.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isError, send } from './load.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const PGCLUSTER = path.join(ROOT, 'scripts/pgcluster.sh');

// ---- the throwaway PostgreSQL cluster ----
let pgDir = '';
/** The running cluster's directory (its socket in DIR/sock), '' when none. */
export const clusterDir = () => pgDir;

export function pgBin() {
    const dirs = fs.existsSync('/usr/lib/postgresql') ? fs.readdirSync('/usr/lib/postgresql').sort((x, y) => Number(y) - Number(x)) : [];
    for (const d of dirs) if (fs.existsSync(`/usr/lib/postgresql/${d}/bin/pg_ctl`)) return `/usr/lib/postgresql/${d}/bin`;
    return '';
}

/** Run SQL on database db of the cluster; its rows, tab-separated. */
export function psql(db, sql) {
    const r = spawnSync('psql', ['-X', '-q', '-A', '-t', '-F', '\t', '-v', 'ON_ERROR_STOP=1', '-h', `${pgDir}/sock`, '-U', 'knowhub', '-d', db, '-c', sql], {
        encoding: 'utf8',
        timeout: 120000,
    });
    if (r.error) throw r.error;
    if (r.status !== 0) throw new Error(`psql: ${r.stderr.trim()}`);
    return r.stdout;
}

export function stopCluster() {
    if (!pgDir) return;
    spawnSync('bash', [PGCLUSTER, 'stop', pgDir], { stdio: 'inherit', timeout: 60000 });
    pgDir = '';
}

/** Start the cluster; pgStats loads pg_stat_statements (a restart). Sets
 * KNOWHUB_TEST_PG for tests/http/lib/stack.mjs (import it afterwards). */
export function startCluster({ pgStats = false } = {}) {
    pgDir = fs.mkdtempSync(path.join(os.tmpdir(), 'knowhub-pgbench-'));
    // A watchdog stops the cluster if this process dies without running its handlers.
    spawn('bash', ['-c', 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; bash "$0" stop "$2"', PGCLUSTER, String(process.pid), pgDir], {
        detached: true,
        stdio: 'ignore',
    }).unref();
    // No pipes: the postmaster inherits them and spawnSync would wait for it to exit.
    const errFile = `${pgDir}.start-err`;
    const fd = fs.openSync(errFile, 'w');
    const r = spawnSync('bash', [PGCLUSTER, 'start', pgDir], { stdio: ['ignore', 'ignore', fd], timeout: 120000 });
    fs.closeSync(fd);
    const errText = fs.readFileSync(errFile, 'utf8');
    fs.rmSync(errFile, { force: true });
    if (r.status !== 0) throw new Error(`pgcluster.sh start failed: ${errText}`);
    if (pgStats) {
        psql('postgres', "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'");
        const ctl = [`${pgBin()}/pg_ctl`, '-D', `${pgDir}/data`, '-m', 'fast', '-w', '-s', 'restart'];
        const cmd = process.getuid() === 0 ? ['runuser', '-u', 'postgres', '--', ...ctl] : ctl;
        const rr = spawnSync(cmd[0], cmd.slice(1), { stdio: ['ignore', 'ignore', 'inherit'], timeout: 120000 });
        if (rr.status !== 0) throw new Error('pg_ctl restart failed');
        psql('postgres', 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    }
    process.env.KNOWHUB_TEST_PG = `${pgDir}/sock`;
    return pgDir;
}

/** The postmaster's PID (DIR/data/postmaster.pid), or 0. */
export function postmasterPid() {
    try {
        return Number(fs.readFileSync(`${pgDir}/data/postmaster.pid`, 'utf8').split('\n')[0]) || 0;
    } catch {
        return 0;
    }
}

// ---- seeded text: a fixed pseudo-random generator ----
export function rng(seed) {
    let s = seed >>> 0;
    return () => {
        s = (s + 0x6d2b79f5) >>> 0;
        let t = s;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}
const EN = ('parquet pandas csv schema index vacuum replica cache token socket thread latency retry timeout ' +
    'upload buffer encoding unicode migration backup restore cluster shard queue worker lease deadlock ' +
    'transaction cursor snapshot checkpoint compaction tokenizer stemmer ranking embedding vector prompt ' +
    'agent trace feedback revision export import nginx fastcgi header cookie session login quota budget ' +
    'memory profile benchmark compiler linker sanitizer fuzzing regression release package mirror proxy ' +
    'certificate firewall resolver kernel scheduler filesystem journal archive gzip json yaml markdown ' +
    'spreadsheet chart report invoice customer order payment refund inventory warehouse shipping').split(' ');
const ZH = ('数据 索引 缓存 事务 备份 恢复 迁移 集群 副本 队列 线程 延迟 超时 重试 编码 日志 权限 令牌 会话 ' +
    '报表 订单 支付 退款 库存 仓库 物流 客户 发票 模型 向量 检索 排序 分词 提示 代理 反馈 版本 导出 导入 ' +
    '压缩 归档 证书 防火墙 内核 调度 文件 系统 性能 测试').split(' ');
const TAGS = ['python', 'sql', 'ops', 'search', 'finance', 'logistics', 'web', 'data', '中文', '运维'];
const TYPES = ['tool', 'usecase', 'definition', 'plan', 'strategy'];
const pick = (r, list) => list[Math.floor(r() * list.length)];
function words(r, n) {
    const out = [];
    for (let i = 0; i < n; i++) out.push(r() < 0.3 ? pick(r, ZH) : pick(r, EN));
    return out.join(' ');
}
/** An entry's POST body: label and 4-7 words of scenario, 20-39 of content. */
export function entryBody(r, label) {
    const tags = [...new Set([pick(r, TAGS), pick(r, TAGS)])].slice(0, 1 + Math.floor(r() * 2));
    return {
        scenario: `${label} ${words(r, 4 + Math.floor(r() * 4))}`,
        content: words(r, 20 + Math.floor(r() * 20)),
        tags_type: [pick(r, TYPES)],
        tags,
        agent_id: 'bench-agent',
        score: 3 + Math.floor(r() * 3),
    };
}
/** A search: 1-3 words of the seeded vocabulary, English and Chinese. */
export function query(r) {
    return words(r, 1 + Math.floor(r() * 3));
}

/** POST n entries (the same bodies everywhere, seed 42) with `clients`
 * concurrent clients; returns {ids, seconds}; throws on the first failure. */
export async function seedEntries(port, token, n, clients) {
    const r = rng(42);
    const bodies = Array.from({ length: n }, (_, i) => entryBody(r, `seed ${i}`));
    const ids = [];
    let i = 0;
    let failed = '';
    const client = async () => {
        while (i < bodies.length && !failed) {
            const b = bodies[i++];
            const res = await send(port, token, 'POST', '/api/knowledge', b, clients);
            if (isError(res)) failed = `${res.status} ${res.text.slice(0, 300)}`;
            else ids.push(JSON.parse(res.text).data.id);
        }
    };
    const t0 = Date.now();
    await Promise.all(Array.from({ length: clients }, client));
    if (failed) throw new Error(`seeding failed: ${failed}`);
    return { ids, seconds: (Date.now() - t0) / 1000 };
}

// ---- figures ----
export const median = (xs) => {
    const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
    if (!v.length) return NaN;
    return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};
export const fmtInt = (x) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : 'n/a');
export const fmtMs = (x) => (Number.isFinite(x) ? (x < 10 ? x.toFixed(2) : x.toFixed(1)) : 'n/a');
export const fmtRatio = (x) => (Number.isFinite(x) ? x.toFixed(2) : 'n/a');
export const gitRev = () => {
    const r = spawnSync('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' });
    return r.status === 0 ? r.stdout.trim() : '?';
};
export const loadavg = () => os.loadavg().map((x) => x.toFixed(1)).join(' ');
