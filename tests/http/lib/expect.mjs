// expect.mjs: assertions on KnowHub's response envelopes (DESIGN.md, "HTTP API").
import assert from 'node:assert/strict';

export const ID_RE = /^knowledge-\d{8}-[0-9a-f]{8}$/;
export const TIME_RE = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
export const REQUEST_ID_RE = /^[A-Za-z0-9._-]{8,64}$/;

function show(r) {
    return `HTTP ${r.status} ${r.text.slice(0, 400)}`;
}

/** Every response: a plain X-Request-Id header and a JSON content type. */
export function assertCommon(r) {
    const rid = r.headers['x-request-id'];
    assert.ok(typeof rid === 'string' && REQUEST_ID_RE.test(rid), `X-Request-Id: ${rid}`);
    assert.match(r.headers['content-type'] || '', /^application\/json/, show(r));
    assert.ok(r.json && typeof r.json === 'object', `not JSON: ${show(r)}`);
}

/** A success envelope (HTTP 200); returns its data. */
export function ok(r) {
    assertCommon(r);
    assert.equal(r.status, 200, show(r));
    assert.equal(r.json.status, 'success', show(r));
    assert.deepEqual(Object.keys(r.json).sort(), ['data', 'status'], show(r));
    return r.json.data;
}

/** An error envelope with code and HTTP status (200 for application errors); returns the error. */
export function err(r, code, status = 200) {
    assertCommon(r);
    assert.equal(r.status, status, show(r));
    assert.equal(r.json.status, 'error', show(r));
    assert.deepEqual(Object.keys(r.json).sort(), ['error', 'status'], show(r));
    const e = r.json.error;
    // key and params (docs/api.md, "Errors") are additive: present together or not at all.
    const keys = Object.keys(e).sort();
    const base = ['code', 'message', 'request_id', 'retry'];
    if ('key' in e || 'params' in e) {
        assert.deepEqual(keys, [...base, 'key', 'params'].sort(), show(r));
        assert.match(e.key, /^[a-z][a-z0-9_]*$/, show(r));
        assert.ok(e.params && typeof e.params === 'object' && !Array.isArray(e.params), show(r));
    } else {
        assert.deepEqual(keys, base, show(r));
    }
    assert.equal(e.code, code, show(r));
    assert.equal(typeof e.message, 'string');
    assert.ok(e.message.length > 0, 'empty error message');
    assert.equal(typeof e.retry, 'boolean');
    assert.equal(e.request_id, r.headers['x-request-id'], 'request_id in body and header differ');
    return e;
}

/** An error envelope with a stable key and exactly these params; returns the error. */
export function errKey(r, code, key, params = {}, status = 200) {
    const e = err(r, code, status);
    assert.equal(e.key, key, show(r));
    assert.deepEqual(e.params, params, show(r));
    return e;
}

/** The unlabelled samples of /metrics (from loopback: the operator's), name -> number. */
export async function metrics(s) {
    const r = await s.api('GET', '/metrics');
    assert.equal(r.status, 200, r.text);
    const m = {};
    for (const line of r.text.split('\n')) {
        const x = /^([a-z_]+) (\S+)$/.exec(line);
        if (x) m[x[1]] = Number(x[2]);
    }
    return m;
}
