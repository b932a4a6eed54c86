// The conflict check by meaning (docs/conflicts.md "Candidates by meaning"):
// once the embedding job stores a new or changed entry's vector, its nearest
// neighbours of the same category are judged against it like the write's
// word candidates. A contradiction written in other words (here English
// against Chinese, near only through the fake embeddings server's concepts)
// is missed by the write's check and linked and queued by the job; with an
// LLM configured only its verdicts count. SQLite, and PostgreSQL with
// KNOWHUB_TEST_PG. The LLM and the embeddings server are the loopback fakes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { startFakeEmbed } from './lib/fakeembed.mjs';
import { startFakeLlm } from './lib/fakellm.mjs';
import { callsOf, llmEnv, sleep } from './lib/llmtest.mjs';
import { ok } from './lib/expect.mjs';
import { roleTokens } from './lib/reads.mjs';

let s, llm, emb;
before(async () => {
    llm = await startFakeLlm();
    emb = await startFakeEmbed({ dim: 64 });
    s = await startStack(llmEnv(llm, { KNOWHUB_EMBED_URL: emb.url, KNOWHUB_EMBED_MODEL: 'model-a', KNOWHUB_LLM_TIMEOUT: '2' }));
});
after(async () => {
    await s?.stop();
    await llm?.stop();
    await emb?.close();
});

let n = 0;
const space = () => roleTokens(s, `cmeaning-${++n}`);
const save = async (token, body) => ok(await s.api('POST', '/api/knowledge', { token, body }));
const links = async (v, id) => ok(await s.api('GET', `/api/knowledge/${id}/links`, { token: v.reader })).items.map((l) => [l.from, l.to, l.type]);
const conflictItems = async (v) =>
    ok(await s.api('GET', '/api/review?state=pending&limit=100', { token: v.editor })).items.filter((p) => p.kind === 'conflict');

/** Wait until every active entry of the space has a vector. */
async function embedded(token) {
    const until = Date.now() + 20000;
    for (;;) {
        const st = ok(await s.api('GET', '/api/embeddings', { token }));
        if (st.queued === 0 && st.stale === 0 && st.embedded === st.entries) return;
        if (Date.now() > until) throw new Error(`not embedded: ${JSON.stringify(st)}`);
        await sleep(50);
    }
}

// The same advice in two languages, opposite: no word in common (Chinese
// bigrams against English words), near through the concepts (spreadsheet,
// sort, descending, pivot, row).
const EN = {
    title: 'Sort spreadsheet rows descending before the pivot table',
    scenario: 'Preparing a spreadsheet for a pivot table',
    content: 'Always sort the spreadsheet rows in descending order before building the pivot table.',
};
const ZH = {
    title: '透视表之前不要对电子表格记录降序排序',
    scenario: '为透视表准备电子表格',
    content: '在生成透视表之前，不要把电子表格的记录按降序排序。',
};

describe('candidates by meaning', () => {
    test('a contradiction in other words: missed by the write, linked and queued by the embedding job (the LLM judges)', async () => {
        const v = space();
        llm.reset();
        const a = await save(v.agent, EN);
        await embedded(v.reader);
        llm.mode('conflict', 'ok', { verdict: 'contradiction', reason: 'One sorts before the pivot, the other forbids it.' });
        const b = await save(v.agent, ZH);
        assert.equal(b.conflicts.find((c) => c.id === a.id), undefined, 'the write check finds no word in common');
        await embedded(v.reader);
        let got = [];
        for (const until = Date.now() + 5000; Date.now() < until; await sleep(50)) {
            got = await links(v, b.id);
            if (got.length) break;
        }
        assert.deepEqual(got, [[b.id, a.id, 'contradicts']]);
        const queue = await conflictItems(v);
        assert.equal(queue.length, 1);
        assert.deepEqual([queue[0].knowledge_id, queue[0].conflict.judge, queue[0].conflict.reason], [b.id, 'llm', 'One sorts before the pivot, the other forbids it.']);
        const prompt = callsOf(llm, 'conflict').map((c) => c.messages.map((m) => m.content).join('\n')).join('\n');
        assert.match(prompt, /降序/);
        assert.match(prompt, /descending/);
        assert.ok(callsOf(llm, 'conflict').length <= 10, 'at most 5 calls for the write and 5 for the job');
    });

    test('neighbours the LLM calls unrelated, of another category, or an expired one: nothing linked', async () => {
        const v = space();
        llm.reset();
        llm.mode('conflict', 'ok', { verdict: 'unrelated' });
        const a = await save(v.agent, EN);
        const rule = ok(await s.api('POST', '/api/knowledge', { token: v.admin, body: { ...EN, category: 'rules', path: 'spreadsheet-sorting.md' } }));
        await embedded(v.reader);
        const b = await save(v.agent, ZH);
        await embedded(v.reader);
        await sleep(300);
        assert.deepEqual(await links(v, b.id), []);
        assert.deepEqual(await conflictItems(v), []);
        // the job asked about the experience only (the rule is of another category)
        const asked = callsOf(llm, 'conflict').map((c) => c.messages.map((m) => m.content).join('\n'));
        assert.ok(asked.some((p) => p.includes('降序')), 'the job judged the neighbour');
        // an expired neighbour is not a candidate: the LLM now says contradiction, yet nothing comes
        llm.mode('conflict', 'ok', { verdict: 'contradiction' });
        ok(await s.api('PUT', `/api/knowledge/${a.id}`, { token: v.agent, body: { expires_at: '2020-01-01T00:00:00Z' } }));
        const c = await save(v.agent, { ...ZH, content: `${ZH.content}（再次强调）` });
        await embedded(v.reader);
        await sleep(300);
        assert.deepEqual((await links(v, c.id)).filter((l) => l[1] === a.id || l[1] === rule.id), []);
    });
});
