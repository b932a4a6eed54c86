// The fake embeddings server itself (lib/fakeembed.mjs): the OpenAI reply shape,
// deterministic vectors, zh/en synonyms closer than unrelated texts, the batch
// cap (413), input validation (400) and the failure modes. No knowhub needed.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { cosine, embed, startFakeEmbed } from './lib/fakeembed.mjs';
import { CONCEPTS } from './lib/concepts.mjs';

let emb;
before(async () => {
    emb = await startFakeEmbed({ dim: 64 });
});
after(async () => {
    await emb?.close();
});

async function post(body, { path = '/embeddings', key = 'sk-embed' } = {}) {
    const r = await fetch(emb.url + path, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
        body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await r.text();
    let json = null;
    try {
        json = JSON.parse(text);
    } catch {
        json = null;
    }
    return { status: r.status, type: r.headers.get('content-type'), text, json };
}

test('the reply has the OpenAI shape, one unit vector per input, in order', async () => {
    emb.reset();
    const r = await post({ model: 'model-a', input: ['missing values', '缺失值', 'deploy'], encoding_format: 'float' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.object, 'list');
    assert.equal(r.json.model, 'model-a');
    assert.equal(r.json.data.length, 3);
    r.json.data.forEach((d, i) => {
        assert.equal(d.object, 'embedding');
        assert.equal(d.index, i);
        assert.equal(d.embedding.length, 64);
        assert.ok(Math.abs(Math.hypot(...d.embedding) - 1) < 1e-9);
    });
    assert.deepEqual(r.json.data[2].embedding, embed('deploy', 64, 'model-a'));
    assert.ok(r.json.usage.prompt_tokens > 0 && r.json.usage.total_tokens === r.json.usage.prompt_tokens);
    assert.deepEqual(emb.calls.at(-1), {
        model: 'model-a',
        inputs: ['missing values', '缺失值', 'deploy'],
        authorization: 'Bearer sk-embed',
        path: '/v1/embeddings',
        method: 'POST',
        encoding_format: 'float',
    });
    // a single string input, and a dimension per model
    emb.dimFor = { 'model-b': 32 };
    const one = await post({ model: 'model-b', input: 'hello' });
    assert.equal(one.json.data.length, 1);
    assert.equal(one.json.data[0].embedding.length, 32);
});

test('vectors are deterministic, differ per model, and empty text has a fixed non-zero vector', () => {
    const a = embed('pandas groupby 按月汇总销售额', 64, 'm');
    assert.deepEqual(a, embed('pandas groupby 按月汇总销售额', 64, 'm'));
    assert.notDeepEqual(a, embed('pandas groupby 按月汇总销售额', 64, 'other'));
    const e = embed('', 64, 'm');
    assert.deepEqual(e, embed('', 64, 'm'));
    assert.ok(Math.abs(Math.hypot(...e) - 1) < 1e-9);
    // the same text in a fresh process gives the same numbers
    const lib = new URL('./lib/fakeembed.mjs', import.meta.url).href;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', `import { embed } from '${lib}'; console.log(JSON.stringify(embed('pandas groupby 按月汇总销售额', 64, 'm')))`]);
    assert.deepEqual(JSON.parse(out), a);
    assert.ok(CONCEPTS.length >= 250 && CONCEPTS.length <= 400, `${CONCEPTS.length} concepts`);
});

test('a zh/en synonym pair is closer than an unrelated pair', () => {
    const v = (t) => embed(t, 64, 'model-a');
    const syn = cosine(v('missing values'), v('缺失值'));
    const unrelated = cosine(v('missing values'), v('deploy to production'));
    assert.ok(syn > unrelated + 0.2, `synonyms ${syn} vs unrelated ${unrelated}`);
    assert.ok(cosine(v('convert the time zone to UTC'), v('把时间转换成 UTC 时区')) > cosine(v('convert the time zone to UTC'), v('客户流失率')));
});

test('more inputs than maxBatch -> 413; missing or empty input -> 400; other paths -> 404', async () => {
    emb.reset();
    emb.maxBatch = 8;
    const inputs = Array.from({ length: 9 }, (_, i) => `text ${i}`);
    const big = await post({ model: 'm', input: inputs });
    assert.equal(big.status, 413);
    assert.equal(big.json.error.message, 'batch too large: max 8 inputs');
    assert.equal((await post({ model: 'm', input: inputs.slice(0, 8) })).status, 200);
    for (const body of [{ model: 'm' }, { model: 'm', input: [] }, { model: 'm', input: '' }, { model: 'm', input: [1, 2] }, 'not json']) {
        const r = await post(body);
        assert.equal(r.status, 400, JSON.stringify(body));
        assert.equal(typeof r.json.error.message, 'string');
    }
    assert.equal((await post({ model: 'm', input: 'x' }, { path: '/chat/completions' })).status, 404);
});

test("modes: 'down' 503, 'lie-count' one vector fewer, lie-dim, lie-nan, nonjson, 401, 429, slow", async () => {
    emb.reset();
    emb.mode('down');
    const down = await post({ model: 'm', input: ['a', 'b'] });
    assert.equal(down.status, 503);
    assert.ok(down.json.error.message);
    emb.mode('lie-count');
    const lie = await post({ model: 'm', input: ['a', 'b', 'c'] });
    assert.equal(lie.status, 200);
    assert.equal(lie.json.data.length, 2);
    emb.mode('lie-dim');
    const dims = (await post({ model: 'm', input: ['a', 'b'] })).json.data.map((d) => d.embedding.length);
    assert.deepEqual(dims, [64, 63]);
    emb.mode('lie-nan');
    const nan = (await post({ model: 'm', input: ['a', 'b'] })).json.data;
    assert.equal(nan[0].embedding[0], 'NaN');
    assert.equal(nan[1].embedding[1], null);
    emb.mode('nonjson');
    assert.equal((await post({ model: 'm', input: 'a' })).json, null);
    for (const m of ['401', '429']) {
        emb.mode(m);
        assert.equal((await post({ model: 'm', input: 'a' })).status, Number(m));
    }
    emb.mode('slow', { delayMs: 150 });
    const t0 = Date.now();
    assert.equal((await post({ model: 'm', input: 'a' })).status, 200);
    assert.ok(Date.now() - t0 >= 140);
    emb.mode('ok');
    assert.equal((await post({ model: 'm', input: 'a' })).status, 200);
});
