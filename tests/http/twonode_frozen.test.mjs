// One node's trouble stays its own (docs/reliability.md "A frozen node"):
// two nodes on one PostgreSQL database, one of them frozen (SIGSTOP) where
// it holds something every node needs.
//   - frozen inside an embeddings call, holding the embedding turn (a lease
//     row, read here): the other node embeds its new entries once the lease
//     has run out (KNOWHUB_EMBED_TIMEOUT + 15 s), not never;
//   - a turn held on and on by a node that embeds nothing of a space (a
//     lease row written here): that space's backfill job fails
//     SERVICE_UNAVAILABLE, retry, after two leases, instead of waiting forever;
//   - frozen inside a write transaction, holding the writers' lock (caught
//     by SIGSTOP in a write storm, seen in pg_locks and pg_stat_activity as
//     "idle in transaction"): the other node's writes succeed again once the
//     server ends the frozen session (idle_in_transaction_session_timeout,
//     15 s), not after 60 s; how long they failed is printed;
//   - SIGCONT: the frozen node answers its next request, and every write
//     answered 200 by either node is there.
// Needs KNOWHUB_TEST_PG (the nodes' sessions are told apart by
// application_name in their URLs).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { onPostgres, startNodes } from './lib/nodes.mjs';
import { startFakeEmbed } from './lib/fakeembed.mjs';
import { sleep, sql, waitFor, waitJob } from './lib/llmtest.mjs';
import { ok } from './lib/expect.mjs';

const SKIP = !onPostgres && 'needs a PostgreSQL cluster (KNOWHUB_TEST_PG, see docs/testing.md)';
const EMBED_TIMEOUT_S = 3;
const LEASE_MS = EMBED_TIMEOUT_S * 1000 + 15000; // turn_lease_ms, fcgi/service/embed.c
const IDLE_TIMEOUT_MS = 15000; // idle_in_transaction_session_timeout, fcgi/store/pg.c
const WRITER_LOCK = '7162200414'; // PG_WRITER_LOCK, fcgi/store/store_int.h
const MARGIN_MS = 10000;

describe('a frozen node', { skip: SKIP }, () => {
    let c, emb, db;
    const frozen = new Set();
    const acknowledged = []; // ids of writes answered 200, by either node
    const freeze = (n) => {
        n.kill('SIGSTOP');
        frozen.add(n);
    };
    const thaw = (n) => {
        if (frozen.delete(n)) n.kill('SIGCONT');
    };
    const create = (n, title, opts = {}) =>
        n.api('POST', '/api/knowledge', {
            token: c.admin,
            body: { category: 'experiences', title, scenario: `scenario of ${title}`, content: `content of ${title}` },
            ...opts,
        });

    before(async () => {
        emb = await startFakeEmbed({ dim: 16 });
        c = await startNodes({
            nodes: 2,
            env: {
                KNOWHUB_EMBED_URL: emb.url,
                KNOWHUB_EMBED_MODEL: 'model-a',
                KNOWHUB_EMBED_TIMEOUT: String(EMBED_TIMEOUT_S),
                KNOWHUB_WRITE_RATE: '0',
            },
        });
        db = { databaseUrl: c.databaseUrl };
        // Each node's sessions named after it in pg_stat_activity.
        for (const n of c.node) n.restart({ KNOWHUB_DATABASE_URL: `${c.databaseUrl}&application_name=knowhub-${n.name}` });
        for (const n of c.node) ok(await n.api('GET', '/api/jobs', { token: c.admin }));
    });
    after(async () => {
        for (const n of [...frozen]) thaw(n);
        await c?.stop();
        await emb?.close();
    });

    test('frozen holding the embedding turn: the other node embeds once the lease has run out', async () => {
        const [a, b] = c.node;
        const ids = [];
        let holder = null;
        let frozenAt = 0;
        // Slow answers: whichever node takes the turn first sits in its call
        // (at most KNOWHUB_EMBED_TIMEOUT), the other waits. Freeze the
        // holder while it is in the call; retry when the call ended first.
        emb.mode('slow', { delayMs: 60000 });
        for (let attempt = 0; attempt < 5 && !holder; attempt++) {
            const calls = emb.calls.length;
            ids.push(ok(await create(b, `turn entry ${attempt}`)).id);
            await waitFor(() => emb.calls.length > calls, 20000, 'an embeddings call');
            const [row] = sql(db, 'SELECT node FROM embed_turn WHERE expires_at > clock_timestamp()');
            const n = c.node.find((x) => x.name === row?.node);
            if (!n) continue;
            freeze(n);
            frozenAt = Date.now();
            // Still its turn, still in the call (the fake answers in 60 s).
            const [again] = sql(db, 'SELECT node, (extract(epoch FROM expires_at - clock_timestamp()) * 1000)::bigint AS left_ms FROM embed_turn');
            if (again?.node === n.name && Number(again.left_ms) > 0) holder = n;
            else thaw(n);
        }
        assert.ok(holder, 'no node was caught inside its embeddings call holding the turn in 5 attempts');
        const other = holder === a ? b : a;
        emb.mode('ok');
        for (let i = 0; i < 3; i++) ids.push(ok(await create(other, `after the freeze ${i}`)).id);
        const list = ids.map((id) => `'${id}'`).join(',');
        const embedded = () =>
            Number(sql(db, `SELECT count(*) AS n FROM knowledge k JOIN vectors v ON v.knowledge_seq = k.seq WHERE v.dim > 0 AND k.id IN (${list})`)[0].n);
        let took = null;
        while (Date.now() - frozenAt < LEASE_MS + MARGIN_MS) {
            if (embedded() === ids.length) {
                took = Date.now() - frozenAt;
                break;
            }
            await sleep(200);
        }
        const [turn] = sql(db, 'SELECT node FROM embed_turn');
        console.log(`# frozen holder ${holder.name}: ${other.name} embedded ${ids.length} entries ${took === null ? 'not' : `${took} ms`} after the freeze (lease ${LEASE_MS} ms); the turn is now ${turn?.node}'s`);
        assert.notEqual(took, null, `${other.name} embedded ${embedded()} of ${ids.length} entries in ${LEASE_MS + MARGIN_MS} ms after ${holder.name} froze holding the turn`);
        assert.equal(turn.node, other.name, 'the other node took the turn over');
        thaw(holder);
        // The thawed node answers, and takes no turn its lease no longer gives it.
        ok(await holder.api('GET', `/api/knowledge/${ids[0]}`, { token: c.admin }));
        const st = ok(await holder.api('GET', '/api/embeddings', { token: c.admin }));
        assert.equal(st.queued, 0, JSON.stringify(st));
        acknowledged.push(...ids);
    });

    test('a turn held on and on while nothing of the space is embedded: the backfill fails after two leases, retry', async () => {
        const b = c.node[1];
        // A node (not one of these) that keeps renewing its lease and embeds nothing.
        sql(db, "INSERT INTO embed_turn(id, node, expires_at) VALUES(1, 'ghost-node', clock_timestamp() + interval '1 hour') ON CONFLICT(id) DO UPDATE SET node = excluded.node, expires_at = excluded.expires_at");
        const id = ok(await create(b, 'waiting for the ghost')).id;
        acknowledged.push(id);
        const t0 = Date.now();
        const job = await waitJob(b, c.admin, ok(await b.api('POST', '/api/embeddings/backfill', { token: c.admin, body: {} })).id, 2 * LEASE_MS + 3 * MARGIN_MS);
        const waited = Date.now() - t0;
        console.log(`# backfill behind a held turn: ${job.status} after ${waited} ms: ${JSON.stringify(job.error)}`);
        assert.equal(job.status, 'failed', JSON.stringify(job));
        assert.equal(job.error.code, 'SERVICE_UNAVAILABLE', JSON.stringify(job.error));
        assert.equal(job.error.retry, true);
        assert.match(job.error.message, /ghost-node/);
        assert.ok(waited >= 2 * LEASE_MS - 1000 && waited < 2 * LEASE_MS + 2 * MARGIN_MS, `failed after ${waited} ms`);
        // The lease given up, the entry is embedded.
        sql(db, 'DELETE FROM embed_turn');
        await waitFor(() => Number(sql(db, `SELECT count(*) AS n FROM knowledge k JOIN vectors v ON v.knowledge_seq = k.seq WHERE k.id = '${id}'`)[0].n) === 1, LEASE_MS + MARGIN_MS, 'the entry embedded');
    });

    test('frozen inside a write transaction: the other node writes again within the idle timeout', async () => {
        const [a, b] = c.node;
        let stormOn = true;
        let seq = 0;
        // A write storm on A: 8 clients, one write after another each.
        const storm = Array.from({ length: 8 }, async (_, k) => {
            while (stormOn) {
                const title = `storm ${k}-${seq++}`;
                try {
                    const r = await create(a, title, { timeout: 120000 });
                    if (r.status === 200 && r.json?.status === 'success') acknowledged.push(r.json.data.id);
                } catch {
                    /* not answered: not acknowledged */
                }
            }
        });
        await sleep(1000);
        // SIGSTOP at random moments until A is caught holding the writers'
        // lock with its transaction idle (waiting for A's next statement).
        const held = `SELECT a.pid, a.state, (extract(epoch FROM clock_timestamp() - a.state_change) * 1000)::bigint AS idle_ms
            FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
              AND ((l.classid::bigint << 32) | l.objid::bigint) = ${WRITER_LOCK}
              AND a.application_name = 'knowhub-${a.name}'`;
        let caught = null;
        let attempts = 0;
        for (; attempts < 40 && !caught; attempts++) {
            await sleep(50 + Math.floor(Math.random() * 250));
            freeze(a);
            for (let look = 0; look < 5 && !caught; look++) {
                const [row] = sql(db, held);
                if (row?.state === 'idle in transaction') caught = { ...row, at: Date.now() - Number(row.idle_ms) };
                else if (!row) break; // A holds no lock: not this time
                else await sleep(50);
            }
            if (!caught) thaw(a);
        }
        console.log(`# ${caught ? `caught ${a.name} idle in its write transaction (backend ${caught.pid}) at attempt ${attempts}` : `${a.name} not caught holding the writers' lock in ${attempts} attempts`}`);
        assert.ok(caught, `${a.name} was not caught inside a write transaction in ${attempts} SIGSTOPs`);
        // B writes, 4 clients, until the first success; each failure must be a 503 retry.
        const start = Date.now();
        let firstOk = null;
        const failures = [];
        const writers = Array.from({ length: 4 }, async (_, k) => {
            for (let i = 0; firstOk === null && Date.now() - start < 75000; i++) {
                const r = await create(b, `while ${a.name} is frozen ${k}-${i}`, { timeout: 90000 });
                if (r.status === 200) {
                    acknowledged.push(r.json.data.id);
                    firstOk ??= Date.now();
                } else {
                    failures.push({ status: r.status, code: r.json?.error?.code, retry: r.json?.error?.retry, at: Date.now() - start });
                }
            }
        });
        await Promise.all(writers);
        const sinceIdle = firstOk === null ? null : firstOk - caught.at;
        console.log(
            `# ${b.name}'s writes failed ${firstOk === null ? 'for over 75 s' : `for ${firstOk - start} ms`} after ${a.name} froze in its transaction ` +
                `(${sinceIdle} ms after that transaction went idle; idle timeout ${IDLE_TIMEOUT_MS} ms): ${failures.length} refused (${[...new Set(failures.map((f) => `${f.status} ${f.code} retry ${f.retry}`))].join(', ')})`,
        );
        assert.notEqual(firstOk, null, `${b.name} wrote nothing for 75 s while ${a.name} was frozen in its transaction`);
        assert.ok(sinceIdle < IDLE_TIMEOUT_MS + MARGIN_MS, `${b.name}'s first write succeeded ${sinceIdle} ms after ${a.name}'s transaction went idle`);
        for (const f of failures) assert.ok(f.status === 503 && f.retry === true, JSON.stringify(f));
        // The frozen session is gone from the server.
        assert.equal(sql(db, `SELECT count(*) AS n FROM pg_stat_activity WHERE pid = ${caught.pid}`)[0].n, 0);
        // SIGCONT: A's storm ends, its next request works.
        stormOn = false;
        thaw(a);
        await Promise.all(storm);
        const next = ok(await create(a, `after the thaw of ${a.name}`));
        acknowledged.push(next.id);
        ok(await a.api('GET', `/api/knowledge/${next.id}`, { token: c.admin }));
    });

    test('no write answered 200 by either node is lost', () => {
        assert.ok(acknowledged.length > 10, `${acknowledged.length} acknowledged writes`);
        const list = acknowledged.map((id) => `'${id}'`).join(',');
        const found = Number(sql(db, `SELECT count(*) AS n FROM knowledge WHERE status = 'active' AND id IN (${list})`)[0].n);
        console.log(`# ${found} of ${acknowledged.length} acknowledged writes found`);
        assert.equal(found, new Set(acknowledged).size);
    });
});
