// fastcgi.mjs: a minimal FastCGI client (responder role), to talk to knowhub's
// socket directly when a test must control exactly when the request body ends.
import net from 'node:net';

const BEGIN_REQUEST = 1;
const END_REQUEST = 3;
const PARAMS = 4;
const STDIN = 5;
const STDOUT = 6;

export function record(type, content = Buffer.alloc(0), requestId = 1) {
    const pad = (8 - (content.length % 8)) % 8;
    const h = Buffer.alloc(8);
    h.writeUInt8(1, 0);
    h.writeUInt8(type, 1);
    h.writeUInt16BE(requestId, 2);
    h.writeUInt16BE(content.length, 4);
    h.writeUInt8(pad, 6);
    return Buffer.concat([h, content, Buffer.alloc(pad)]);
}

function length(n) {
    if (n < 128) return Buffer.from([n]);
    const b = Buffer.alloc(4);
    b.writeUInt32BE((n | 0x80000000) >>> 0);
    return b;
}

export function params(obj) {
    const parts = [];
    for (const [k, v] of Object.entries(obj)) {
        const kb = Buffer.from(k);
        const vb = Buffer.from(String(v));
        parts.push(length(kb.length), length(vb.length), kb, vb);
    }
    return Buffer.concat(parts);
}

/**
 * The STDOUT records' bytes of what a connection received, as text, and
 * whether END_REQUEST came; a record cut short ends the walk.
 */
export function stdoutOf(all) {
    const out = [];
    let ended = false;
    for (let off = 0; off + 8 <= all.length; ) {
        const type = all.readUInt8(off + 1);
        const len = all.readUInt16BE(off + 4);
        if (off + 8 + len > all.length) break; // cut short
        if (type === STDOUT) out.push(all.subarray(off + 8, off + 8 + len));
        if (type === END_REQUEST) ended = true;
        off += 8 + len + all.readUInt8(off + 6);
    }
    return { stdout: Buffer.concat(out).toString('utf8'), ended };
}

/**
 * Open a FastCGI request on a unix socket. Returns {sendBody(buf), end(),
 * response: Promise<{status, headers, body}>}; the params are sent at once.
 */
export function fcgiRequest(socketPath, env) {
    const sock = net.createConnection(socketPath);
    const chunks = [];
    const response = new Promise((resolve, reject) => {
        sock.on('data', (d) => chunks.push(d));
        sock.on('error', reject);
        sock.on('close', () => {
            const { stdout: text, ended } = stdoutOf(Buffer.concat(chunks));
            const sep = text.indexOf('\r\n\r\n');
            const head = sep < 0 ? text : text.slice(0, sep);
            const headers = {};
            for (const line of head.split('\r\n')) {
                const i = line.indexOf(':');
                if (i > 0) headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
            }
            resolve({ ended, status: parseInt(headers.status, 10), headers, body: sep < 0 ? '' : text.slice(sep + 4) });
        });
    });
    const begin = Buffer.alloc(8);
    begin.writeUInt16BE(1, 0); // responder
    sock.write(record(BEGIN_REQUEST, begin));
    sock.write(record(PARAMS, params(env)));
    sock.write(record(PARAMS));
    return {
        response,
        connected: new Promise((resolve, reject) => {
            sock.once('connect', resolve);
            sock.once('error', reject);
        }),
        sendBody(buf) {
            for (let i = 0; i < buf.length; i += 65535) sock.write(record(STDIN, buf.subarray(i, i + 65535)));
        },
        end() {
            sock.write(record(STDIN));
        },
    };
}
