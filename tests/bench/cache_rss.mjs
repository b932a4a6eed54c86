// cache_rss.mjs: the answer cache's memory under padded searches. Starts a
// stack (2 worker threads), sends N searches whose bodies carry ~1 MB of an
// unknown field (each a different query), and prints knowhub's VmRSS and
// VmHWM (/proc/PID/status) before and after. A measurement, not a test.
//   KNOWHUB_BIN=build/knowhub node tests/bench/cache_rss.mjs [N]
import fs from 'node:fs';
import { startStack } from '../http/lib/stack.mjs';

const n = Number(process.argv[2] || 64);
const mb = (pid, field) =>
    (Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024).toFixed(1);

const s = await startStack({ KNOWHUB_THREADS: '2' });
try {
    const pid = s.knowhubPid();
    const pad = 'p'.repeat(1000 * 1000);
    await s.api('POST', '/api/knowledge/search', { token: s.admin, body: { query: 'warm up' } });
    console.log(`before: VmRSS ${mb(pid, 'VmRSS')} MB, VmHWM ${mb(pid, 'VmHWM')} MB`);
    const t0 = Date.now();
    for (let i = 0; i < n; i++) {
        const r = await s.api('POST', '/api/knowledge/search', { token: s.admin, rawBody: JSON.stringify({ query: `parquet ${i}`, pad }) });
        if (r.status !== 200) throw new Error(`HTTP ${r.status}`);
    }
    console.log(`after ${n} padded searches (${Date.now() - t0} ms): VmRSS ${mb(pid, 'VmRSS')} MB, VmHWM ${mb(pid, 'VmHWM')} MB`);
} finally {
    await s.stop();
}
