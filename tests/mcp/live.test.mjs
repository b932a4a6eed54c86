// Live updates: MCP sessions (Mcp-Session-Id), resources/subscribe and
// unsubscribe, and the server's messages on GET /mcp (the streamable HTTP
// transport's server-to-client stream) as the official SDK client receives
// them: notifications/resources/updated within a second of a REST edit, on
// one node (SQLite) and across two nodes on one PostgreSQL (an edit made on
// the other node), list_changed on create and delete, imports (REST and the
// CLI on the same database) told like edits; the stream's limits (per token,
// per process, off), heartbeats, a client that leaves, a token revoked,
// DELETE /mcp.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ResourceListChangedNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startStack } from '../http/lib/stack.mjs';
import { onPostgres, startNodes } from '../http/lib/nodes.mjs';
import { connect, rawPost } from './lib/mcp.mjs';
import { knowhub, tempDir } from '../http/lib/files_helpers.mjs';
import fs from 'node:fs';
import path from 'node:path';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A connected SDK client that records the resource notifications it receives, with their arrival time. */
async function listener(s, token) {
    const c = await connect(s, token);
    c.updates = [];
    c.listChanges = [];
    c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => c.updates.push({ uri: n.params.uri, at: Date.now() }));
    c.setNotificationHandler(ResourceListChangedNotificationSchema, () => c.listChanges.push(Date.now()));
    // The SDK opens GET /mcp after initialized; wait until the stream is there.
    await streamOpen(c);
    return c;
}

/** Resolve once the client's GET stream has been answered (its first comment arrives at once). */
async function streamOpen(c, ms = 3000) {
    const t0 = Date.now();
    while (Date.now() - t0 < ms) {
        if (c.knowhubTransport.sessionId && c.knowhubTransport._abortController) break;
        await sleep(20);
    }
    await sleep(150); // the GET's head has arrived well within this on loopback
}

/** Wait until pred() holds (polling), or fail after ms with what. */
async function until(pred, ms, what) {
    const t0 = Date.now();
    while (!pred()) {
        if (Date.now() - t0 > ms) assert.fail(`not within ${ms} ms: ${what}`);
        await sleep(10);
    }
    return Date.now() - t0;
}

/** Edit a rule's text through the file view (POST /api/knowledge/write), as the panel does. */
async function editRule(api, token, path, content) {
    const r = await api('POST', '/api/knowledge/write', { token, body: { category: 'rules', path, content } });
    assert.equal(r.json?.status, 'success', JSON.stringify(r.json));
}

async function createRule(api, token, path, content) {
    const r = await api('POST', '/api/knowledge', { token, body: { category: 'rules', path, scenario: `rule ${path}`, content } });
    assert.equal(r.json?.status, 'success', JSON.stringify(r.json));
    return r.json.data.id;
}

describe('live updates on one node', () => {
    let s;
    before(async () => {
        s = await startStack({ KNOWHUB_STREAMS_PER_TOKEN: '3' });
    });
    after(async () => {
        await s?.stop();
    });

    test('initialize hands out a session id; the capabilities say subscribe and listChanged', async () => {
        const c = await connect(s, s.admin);
        try {
            assert.match(c.knowhubTransport.sessionId, /^[0-9a-f]{32}$/);
            assert.deepEqual(c.getServerCapabilities().resources, { subscribe: true, listChanged: true });
        } finally {
            await c.close();
        }
    });

    test('a subscription to knowhub://rules and to an entry: updated within 1 s of a REST edit, list_changed on create and delete', async () => {
        const id = await createRule(s.api.bind(s), s.admin, 'live-a.md', 'first text');
        const c = await listener(s, s.admin);
        try {
            await c.subscribeResource({ uri: 'knowhub://rules' });
            await c.subscribeResource({ uri: `knowhub://entries/${id}` });
            // The create above may reach this stream too (it opened within the thread's 200 ms look).
            await sleep(300);
            c.listChanges.length = 0;
            const t0 = Date.now();
            await editRule(s.api.bind(s), s.admin, 'live-a.md', 'second text');
            await until(() => c.updates.some((u) => u.uri === 'knowhub://rules') && c.updates.some((u) => u.uri === `knowhub://entries/${id}`), 1000, 'both updates');
            for (const u of c.updates) assert.ok(u.at - t0 <= 1000, `${u.uri} after ${u.at - t0} ms`);
            // Not subscribed: no update for the rule's path resource.
            assert.ok(!c.updates.some((u) => u.uri === 'knowhub://rules/live-a.md'));
            // An edit (no add, no delete) does not change the list.
            assert.equal(c.listChanges.length, 0);

            const created = await createRule(s.api.bind(s), s.admin, 'live-b.md', 'another');
            await until(() => c.listChanges.length >= 1, 1000, 'list_changed on create');
            const before = c.listChanges.length;
            const d = await s.api('DELETE', `/api/knowledge/${created}`, { token: s.admin });
            assert.equal(d.json.status, 'success', JSON.stringify(d.json));
            await until(() => c.listChanges.length > before, 1000, 'list_changed on delete');

            // Unsubscribed from the entry: its next edit says nothing of it, the rules block still updates.
            await c.unsubscribeResource({ uri: `knowhub://entries/${id}` });
            const n = c.updates.length;
            await editRule(s.api.bind(s), s.admin, 'live-a.md', 'third text');
            await until(() => c.updates.slice(n).some((u) => u.uri === 'knowhub://rules'), 1000, 'rules update after unsubscribe');
            await sleep(300);
            assert.ok(!c.updates.slice(n).some((u) => u.uri === `knowhub://entries/${id}`), JSON.stringify(c.updates.slice(n)));
        } finally {
            await c.close();
        }
    });

    test('an import is told like an edit: POST /api/knowledge/import and knowhub import on the same database', async () => {
        const c = await listener(s, s.admin);
        try {
            await c.subscribeResource({ uri: 'knowhub://rules' });
            await sleep(300);
            c.updates.length = 0;
            c.listChanges.length = 0;
            const t0 = Date.now();
            const r = await s.api('POST', '/api/knowledge/import?format=agents_md', { token: s.admin, rawBody: '## Imported live rule\n\nAlways pin the image digest.\n', headers: { 'Content-Type': 'text/markdown' } });
            assert.equal(r.json?.data?.imported, 1, r.text);
            await until(() => c.updates.some((u) => u.uri === 'knowhub://rules') && c.listChanges.length >= 1, 1000, 'updated and list_changed after the REST import');
            assert.ok(c.updates.every((u) => u.at - t0 <= 1000));
            // The CLI writes the database itself (no server asked): the stream thread reads its change rows.
            const dir = tempDir('live-import');
            fs.mkdirSync(path.join(dir, 'rules'), { recursive: true });
            fs.writeFileSync(path.join(dir, 'rules', 'cli-live.md'), '---\ntitle: A rule from the CLI\n---\nRotate the keys every quarter.\n');
            const n = c.updates.length;
            const lists = c.listChanges.length;
            const t1 = Date.now();
            const cli = knowhub(s.dir, ['import', dir]);
            assert.equal(cli.status, 0, cli.stderr);
            await until(() => c.updates.slice(n).some((u) => u.uri === 'knowhub://rules') && c.listChanges.length > lists, 1500, 'updated and list_changed after knowhub import');
            assert.ok(Date.now() - t1 < 1500 + 1000);
        } finally {
            await c.close();
        }
    });

    test('another space edits: a subscriber of this space hears nothing', async () => {
        const other = await s.token('other-space', 'admin');
        const c = await listener(s, s.admin);
        try {
            await c.subscribeResource({ uri: 'knowhub://rules' });
            await createRule(s.api.bind(s), other, 'elsewhere.md', 'not yours');
            await sleep(800);
            assert.deepEqual(c.updates, []);
            assert.deepEqual(c.listChanges, []);
        } finally {
            await c.close();
        }
    });

    test('subscribe needs the session and a knowhub:// URI; errors are -32602 with a reason', async () => {
        const noSession = await rawPost(s, { jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: 'knowhub://rules' } }, { token: s.admin });
        assert.equal(noSession.json.error.code, -32602);
        assert.match(noSession.json.error.message, /Mcp-Session-Id/);
        const headers = { 'Mcp-Session-Id': 'a'.repeat(32) };
        for (const uri of ['http://example.com/x', 'knowhub://', `knowhub://${'x'.repeat(1100)}`, 'knowhub://a b', 42]) {
            const r = await rawPost(s, { jsonrpc: '2.0', id: 2, method: 'resources/subscribe', params: { uri } }, { token: s.admin, headers });
            assert.equal(r.json.error?.code, -32602, `${String(uri).slice(0, 40)}: ${JSON.stringify(r.json)}`);
        }
        const ok = await rawPost(s, { jsonrpc: '2.0', id: 3, method: 'resources/subscribe', params: { uri: 'knowhub://rules' } }, { token: s.admin, headers });
        assert.deepEqual(ok.json.result, {});
    });

    test('GET /mcp without Accept: text/event-stream is 405; a malformed session is 404; DELETE ends the session', async () => {
        const plain = await s.api('GET', '/mcp', { token: s.admin });
        assert.equal(plain.status, 405);
        const bad = await s.api('GET', '/mcp', { token: s.admin, headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': 'nope' } });
        assert.equal(bad.status, 404);
        const session = 'b'.repeat(32);
        await rawPost(s, { jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: 'knowhub://rules' } }, { token: s.admin, headers: { 'Mcp-Session-Id': session } });
        const del = await s.api('DELETE', '/mcp', { token: s.admin, headers: { 'Mcp-Session-Id': session } });
        assert.equal(del.status, 204);
        const again = await s.api('DELETE', '/mcp', { token: s.admin });
        assert.equal(again.status, 404);
    });

    test('a token holds at most KNOWHUB_STREAMS_PER_TOKEN streams (429 LIMIT_EXCEEDED); a client that leaves frees its place', async () => {
        const token = await s.token('default', 'reader');
        const open = [];
        const openOne = async () => {
            const ac = new AbortController();
            const r = await fetch(`${s.base}/api/events`, { headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' }, signal: ac.signal });
            return { r, ac };
        };
        try {
            for (let i = 0; i < 3; i++) {
                const o = await openOne();
                assert.equal(o.r.status, 200);
                open.push(o);
            }
            const over = await openOne();
            assert.equal(over.r.status, 429);
            assert.equal((await over.r.json()).error.code, 'LIMIT_EXCEEDED');
            // One client leaves: nginx closes its connection, the stream thread notices and frees the place.
            open.shift().ac.abort();
            const ms = await (async () => {
                const t0 = Date.now();
                for (;;) {
                    const o = await openOne();
                    if (o.r.status === 200) {
                        open.push(o);
                        return Date.now() - t0;
                    }
                    await o.r.body?.cancel();
                    if (Date.now() - t0 > 3000) assert.fail('the place of a client that left was not freed within 3 s');
                    await sleep(50);
                }
            })();
            assert.ok(ms < 3000, `freed after ${ms} ms`);
        } finally {
            for (const o of open) o.ac.abort();
        }
    });

    test('a revoked token: its streams end', async () => {
        const token = await s.token('default', 'agent');
        const ac = new AbortController();
        const r = await fetch(`${s.base}/api/events`, { headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' }, signal: ac.signal });
        assert.equal(r.status, 200);
        await s.revoke(token);
        const reader = r.body.getReader();
        const t0 = Date.now();
        let done = false;
        try {
            while (!done && Date.now() - t0 < 12000) done = (await reader.read()).done;
        } finally {
            ac.abort();
        }
        assert.ok(done, 'the stream ended');
        assert.ok(Date.now() - t0 < 12000);
    });
});

/** Open GET /api/events with token: {r, ac}. */
async function openEvents(s, token) {
    const ac = new AbortController();
    const r = await fetch(`${s.base}/api/events`, { headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' }, signal: ac.signal });
    return { r, ac };
}

describe("a process's stream limits and heartbeats", () => {
    let s;
    before(async () => {
        s = await startStack({ KNOWHUB_STREAMS_MAX: '2', KNOWHUB_STREAMS_HEARTBEAT: '1' });
    });
    after(async () => {
        await s?.stop();
    });

    test('a silent stream gets a heartbeat comment after KNOWHUB_STREAMS_HEARTBEAT seconds', async () => {
        const o = await openEvents(s, await s.token('default', 'reader'));
        try {
            assert.equal(o.r.status, 200);
            const reader = o.r.body.getReader();
            const dec = new TextDecoder();
            let text = '';
            const t0 = Date.now();
            while (!text.includes(': heartbeat\n\n') && Date.now() - t0 < 4000) {
                const { value, done } = await Promise.race([reader.read(), sleep(4000).then(() => ({ done: true }))]);
                if (done) break;
                text += dec.decode(value, { stream: true });
            }
            assert.ok(text.startsWith(': knowhub live stream\n\n'), JSON.stringify(text));
            assert.ok(text.includes(': heartbeat\n\n'), `no heartbeat within 4 s: ${JSON.stringify(text)}`);
            const ms = Date.now() - t0;
            assert.ok(ms >= 800, `a heartbeat only after a second of silence (${ms} ms)`);
        } finally {
            o.ac.abort();
        }
    });

    test('the process holds at most KNOWHUB_STREAMS_MAX streams, whoever asks (429), and frees a place when one leaves', async () => {
        const open = [];
        try {
            for (const role of ['reader', 'agent']) {
                const o = await openEvents(s, await s.token('default', role));
                assert.equal(o.r.status, 200);
                open.push(o);
            }
            const over = await openEvents(s, await s.token('default', 'editor'));
            assert.equal(over.r.status, 429);
            const body = await over.r.json();
            assert.equal(body.error.code, 'LIMIT_EXCEEDED');
            assert.match(body.error.message, /KNOWHUB_STREAMS_MAX/);
            open.shift().ac.abort();
            const t0 = Date.now();
            for (;;) {
                const o = await openEvents(s, await s.token('default', 'editor'));
                if (o.r.status === 200) {
                    open.push(o);
                    break;
                }
                await o.r.body?.cancel();
                if (Date.now() - t0 > 3000) assert.fail('the place of a client that left was not freed within 3 s');
                await sleep(50);
            }
        } finally {
            for (const o of open) o.ac.abort();
        }
    });
});

describe('streams off (KNOWHUB_STREAMS_MAX=0)', () => {
    let s;
    before(async () => {
        s = await startStack({ KNOWHUB_STREAMS_MAX: '0' });
    });
    after(async () => {
        await s?.stop();
    });

    test('GET /api/events and GET /mcp are 503 SERVICE_UNAVAILABLE; everything else answers', async () => {
        const token = await s.token('default', 'reader');
        const o = await openEvents(s, token);
        assert.equal(o.r.status, 503);
        const body = await o.r.json();
        assert.equal(body.error.code, 'SERVICE_UNAVAILABLE');
        assert.match(body.error.message, /KNOWHUB_STREAMS_MAX=0/);
        const m = await fetch(`${s.base}/mcp`, { headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' } });
        assert.equal(m.status, 503);
        await m.body?.cancel();
        assert.equal((await s.api('GET', '/api/knowledge/search?q=anything', { token })).json.status, 'success');
    });
});

describe('live updates across two nodes on PostgreSQL', () => {
    test('a subscriber on node A hears, within 1 s, a rule edit made through node B', { skip: !onPostgres && 'needs KNOWHUB_TEST_PG (a PostgreSQL cluster: test.sh starts one)' }, async () => {
        const c = await startNodes({ nodes: 2 });
        try {
            const a = { base: `http://127.0.0.1:${c.node[0].port}` };
            const viaB = (method, p, opts) => c.node[1].api(method, p, opts);
            const id = await createRule(viaB, c.admin, 'two-node.md', 'one');
            const l = await listener(a, c.admin);
            try {
                await l.subscribeResource({ uri: 'knowhub://rules' });
                await l.subscribeResource({ uri: 'knowhub://rules/two-node.md' });
                const t0 = Date.now();
                await editRule(viaB, c.admin, 'two-node.md', 'two');
                await until(() => ['knowhub://rules', 'knowhub://rules/two-node.md'].every((u) => l.updates.some((x) => x.uri === u)), 1000, 'updates from the other node');
                for (const u of l.updates) assert.ok(u.at - t0 <= 1000, `${u.uri} after ${u.at - t0} ms`);
                const d = await viaB('DELETE', `/api/knowledge/${id}`, { token: c.admin });
                assert.equal(d.json.status, 'success');
                await until(() => l.listChanges.length >= 1, 1000, 'list_changed from the other node');
            } finally {
                await l.close();
            }
        } finally {
            await c.stop();
        }
    });
});
