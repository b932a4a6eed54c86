// load.mjs: closed-loop HTTP load for the benchmarks (nodes.mjs, streams.mjs):
// keep-alive clients of Node's http module, each sending its next request as
// soon as the last one is answered; latency percentiles and errors counted
// (non-2xx, KnowHub's error envelope under HTTP 200, socket errors).
import http from 'node:http';

const agents = new Map();
function agentFor(port, clients) {
    if (!agents.has(port)) agents.set(port, new http.Agent({ keepAlive: true, maxSockets: Math.max(64, clients) }));
    return agents.get(port);
}

/** One request through nginx on port with a Bearer token (none when token is empty); {status (0: socket error), text}. */
export function send(port, token, method, reqPath, body, clients = 64) {
    const payload = body === undefined ? null : Buffer.from(JSON.stringify(body));
    const headers = token ? { Authorization: `Bearer ${token}` } : {}; // none: an anonymous request
    if (payload) {
        headers['Content-Type'] = 'application/json';
        headers['Content-Length'] = String(payload.length);
    }
    return new Promise((resolve) => {
        const req = http.request({ host: '127.0.0.1', port, method, path: reqPath, headers, agent: agentFor(port, clients), timeout: 30000 }, (res) => {
            const chunks = [];
            res.on('data', (c) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') }));
            res.on('error', (e) => resolve({ status: 0, text: String(e) }));
        });
        req.on('timeout', () => req.destroy(new Error('timed out')));
        req.on('error', (e) => resolve({ status: 0, text: String(e) }));
        if (payload) req.write(payload);
        req.end();
    });
}

/** Close the keep-alive sockets of every port (at the end of a run). */
export function closeAgents() {
    for (const a of agents.values()) a.destroy();
    agents.clear();
}

export const isError = (r) => r.status < 200 || r.status > 299 || r.text.includes('"status":"error"');

/** C clients in a closed loop for `seconds`; next() gives [method, path, body]. */
export async function load(port, token, next, seconds, clients) {
    const lat = [];
    const err = { non2xx: 0, envelope: 0, socket: 0 };
    let firstError = '';
    const t0 = process.hrtime.bigint();
    const end = t0 + BigInt(seconds) * 1000000000n;
    const client = async () => {
        while (process.hrtime.bigint() < end) {
            const [m, p, b] = next();
            const s = process.hrtime.bigint();
            const r = await send(port, token, m, p, b, clients);
            lat.push(Number(process.hrtime.bigint() - s) / 1e6);
            if (r.status === 0) err.socket++;
            else if (r.status < 200 || r.status > 299) err.non2xx++;
            else if (r.text.includes('"status":"error"')) err.envelope++;
            else continue;
            if (!firstError) firstError = `${m} ${p}: ${r.status} ${r.text.slice(0, 300)}`;
        }
    };
    await Promise.all(Array.from({ length: clients }, client));
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    lat.sort((x, y) => x - y);
    const q = (f) => (lat.length ? lat[Math.min(lat.length - 1, Math.floor(f * lat.length))] : 0);
    const errors = err.non2xx + err.envelope + err.socket;
    return { rps: lat.length / secs, p50: q(0.5), p99: q(0.99), n: lat.length, ok: lat.length - errors, errors, err, firstError };
}
