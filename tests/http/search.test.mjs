// Search through nginx (docs/search.md): the file view's POST /api/knowledge/search
// with every search case of the reference (REFERENCE.md section 2), Chinese
// queries, FTS5 syntax in queries, the entry view's two-stage
// GET /api/knowledge/search (validation, shape, min_score, quality rerank
// moved by helpful/harmful feedback), POST /api/knowledge/context on the same
// search, and the index kept in step with write, rename, delete, revert,
// import and entry-view saves.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { err, ok } from './lib/expect.mjs';
import { fileView, knowhub, tempDir, writeTree } from './lib/files_helpers.mjs';

let s;
before(async () => {
    s = await startStack();
});
after(async () => {
    await s?.stop();
});

/** A fresh space with an admin file view and a reader token (each call a new space). */
let spaceNo = 0;
function freshSpace() {
    const space = `search-${++spaceNo}`;
    const admin = fileView(s, s.token(space, 'admin', 'search-admin'));
    const reader = s.token(space, 'reader', 'search-reader');
    return { space, admin, reader };
}

/** POST /api/knowledge/search as token; returns the raw response. */
const searchRaw = (token, body) => s.api('POST', '/api/knowledge/search', { token, body });
/** POST /api/knowledge/search that must succeed; returns the results. */
async function search(token, body) {
    const d = ok(await searchRaw(token, typeof body === 'string' ? { query: body } : body));
    assert.deepEqual(Object.keys(d), ['results']);
    assert.ok(Array.isArray(d.results));
    return d.results;
}
/** GET /api/knowledge/search with query parameters (object or raw string). */
function entriesRaw(token, params) {
    const qs = typeof params === 'string' ? params : new URLSearchParams(params).toString();
    return s.api('GET', `/api/knowledge/search?${qs}`, { token });
}
async function entries(token, params) {
    const d = ok(await entriesRaw(token, params));
    assert.deepEqual(Object.keys(d).sort(), ['count', 'results', 'routing']);
    assert.equal(d.routing, 'lexical');
    assert.equal(d.count, d.results.length);
    return d.results;
}

const SAMPLE_MD =
    '---\ntitle: ROI Calculation\ntags: [finance, computation]\ncreated: 2026-04-26\nupdated: 2026-04-26\n' +
    'source: manual\nalwaysApply: false\n---\n\nROI = (revenue - cost) / cost\n';
const SAMPLE_MD_SKILL =
    '---\ntitle: Handle Missing Values\ntags: [data-cleaning, pandas]\ncreated: 2026-04-26\nupdated: 2026-04-26\n' +
    'source: agent_summarized\nsource_session: sess-abc\n---\n\n' +
    'When encountering missing values in a DataFrame, consider:\n1. Drop rows if < 5% missing\n2. Fill with median for numeric columns\n';

const near = (a, b) => Math.abs(a - b) < 1e-6;

// ---------------------------------------------------------------- the reference's cases

describe('POST /api/knowledge/search: the reference behaviour', () => {
    let v, reader;
    before(async () => {
        ({ admin: v, reader } = freshSpace());
        await v.put('rules', 'roi.md', SAMPLE_MD);
        await v.put('experiences', 'cleaning/missing.md', SAMPLE_MD_SKILL);
        await v.put('rules', 'always-roi.md', '---\ntitle: ROI Always Rule\ntags: [finance]\n---\nAlways show ROI.\n');
        await v.put('experiences', 'sales/quarterly-trend.md', '---\ntitle: Sales trend\ntags: [sales]\n---\n\nCompare each period with the same period last year.\n');
    });

    test('results: category, title, tags, path, snippet, source, score', async () => {
        const r = await search(reader, 'ROI');
        assert.equal(r[0].title, 'ROI Calculation');
        for (const key of ['category', 'title', 'tags', 'path', 'snippet', 'source', 'score']) assert.ok(key in r[0], key);
        assert.equal(r[0].category, 'rules');
        assert.equal(r[0].path, 'roi.md');
        assert.deepEqual(r[0].tags, ['finance', 'computation']);
        assert.equal(r[0].snippet, 'ROI = (revenue - cost) / cost');
        assert.equal(r[0].source, 'manual');
        // title 100 + stem 30 + body 10 + the whole query in the title 50
        assert.equal(r[0].score, 190);
    });

    test('by title, by tag, by filename, by body', async () => {
        assert.equal((await search(reader, 'ROI'))[0].title, 'ROI Calculation');
        const byTag = await search(reader, 'pandas');
        assert.equal(byTag[0].title, 'Handle Missing Values');
        assert.ok(near(byTag[0].score, (50 + 50) * 0.9), String(byTag[0].score));
        const byFile = await search(reader, 'quarterly');
        assert.deepEqual(byFile.map((x) => [x.path, x.score]), [['sales/quarterly-trend.md', 30]]);
        const byBody = await search(reader, 'revenue');
        assert.equal(byBody[0].title, 'ROI Calculation');
        assert.equal(byBody[0].score, 10);
    });

    test('a 3-letter prefix of a word in a filename finds it', async () => {
        assert.deepEqual((await search(reader, 'qua')).map((x) => x.path), ['sales/quarterly-trend.md']);
        assert.ok((await search(reader, 'mis')).some((x) => x.path === 'cleaning/missing.md'));
    });

    test('case-insensitive (and full-width folded)', async () => {
        for (const q of ['roi', 'Roi', 'ROI', 'rOi', 'ＲＯＩ']) {
            const r = await search(reader, q);
            assert.equal(r[0].title, 'ROI Calculation', q);
            assert.equal(r[0].score, 190, q);
        }
    });

    test('no match, empty and stop-word-only queries give []', async () => {
        for (const query of ['xyznonexistent', '', '   ', '\t\n', 'the', 'the of and to', 'How do I find it?', 'ok', 'a b c', '的', '的 了 和 是 在 帮我 请', '帮我'])
            assert.deepEqual(await search(reader, { query }), [], JSON.stringify(query));
        for (const body of [{}, { query: null }]) assert.deepEqual(await search(reader, body), []);
    });

    test('alwaysApply rules are skipped; alwaysApply: false rules are searched', async () => {
        const r = await search(reader, 'ROI Always Rule');
        assert.ok(!r.some((x) => x.path === 'always-roi.md'));
        assert.deepEqual(await search(reader, 'always'), []);
        assert.ok((await search(reader, 'ROI')).some((x) => x.path === 'roi.md'));
    });

    test('category filter', async () => {
        assert.deepEqual((await search(reader, { query: 'ROI', categories: ['rules'] })).map((x) => x.path), ['roi.md']);
        assert.deepEqual(await search(reader, { query: 'ROI', categories: ['experiences'] }), []);
        assert.deepEqual((await search(reader, { query: 'pandas', categories: ['experiences'] })).map((x) => x.path), ['cleaning/missing.md']);
        assert.deepEqual(await search(reader, { query: 'pandas', categories: ['rules'] }), []);
        for (const categories of [null, [], ['rules', 'experiences']])
            assert.equal((await search(reader, { query: 'ROI revenue pandas', categories })).length, 2);
        assert.equal(err(await searchRaw(reader, { query: 'ROI', categories: 'rules' }), 'INVALID_REQUEST').message, "'categories' must be a list");
        assert.equal(err(await searchRaw(reader, { query: 'ROI', categories: ['bad'] }), 'INVALID_REQUEST').message, "Invalid categories: {'bad'}");
    });

    test('another space sees none of it', async () => {
        const other = freshSpace();
        assert.deepEqual(await search(other.reader, 'ROI'), []);
        assert.deepEqual(await entries(other.reader, { q: 'ROI' }), []);
    });
});

describe('POST /api/knowledge/search: ranking', () => {
    let v, reader;
    before(async () => {
        ({ admin: v, reader } = freshSpace());
    });

    test('max_results: default 10, 1..50, else INVALID_REQUEST', async () => {
        const order = [7, 3, 12, 0, 9, 14, 1, 5, 11, 2, 8, 13, 4, 10, 6];
        for (const i of order)
            await v.put('rules', `test-rule-${String(i).padStart(2, '0')}.md`,
                `---\ntitle: Test ${i}\ntags: [common]\nalwaysApply: false\n---\nBody about common topic.\n`);
        assert.equal((await search(reader, 'common')).length, 10);
        assert.equal((await search(reader, { query: 'common', max_results: 5 })).length, 5);
        assert.equal((await search(reader, { query: 'common', max_results: 1 })).length, 1);
        const all = await search(reader, { query: 'common', max_results: 50 });
        assert.equal(all.length, 15);
        // equal scores: newest updated_at first, then by path; the same answer every time
        const updated = {};
        for (const x of all) updated[x.path] = ok(await v.entry(x.id)).updated_at;
        const want = all.map((x) => x.path).sort((a, b) => (updated[a] === updated[b] ? (a < b ? -1 : 1) : updated[a] < updated[b] ? 1 : -1));
        assert.ok(all.every((x) => x.score === all[0].score));
        assert.deepEqual(all.map((x) => x.path), want);
        for (let i = 0; i < 3; i++)
            assert.deepEqual((await search(reader, { query: 'common', max_results: 5 })).map((x) => x.path), want.slice(0, 5));
        for (const max_results of [0, 51, -1, 'x', 2.5, true])
            assert.equal(err(await searchRaw(reader, { query: 'common', max_results }), 'INVALID_REQUEST').message,
                "'max_results' must be an integer between 1 and 50", JSON.stringify(max_results));
    });

    test('ties on score: the most recently updated first', async () => {
        const sleep = () => new Promise((r) => setTimeout(r, 1100)); // updated_at has one-second resolution
        await v.put('experiences', 'tie/a.md', '---\ntitle: Tiebreak sample\n---\nx\n');
        await v.put('experiences', 'tie/b.md', '---\ntitle: Tiebreak sample\n---\nx\n');
        await sleep();
        await v.put('experiences', 'tie/a.md', '---\ntitle: Tiebreak sample\n---\ny\n');
        assert.deepEqual((await search(reader, 'tiebreak')).map((x) => x.path), ['tie/a.md', 'tie/b.md']);
        await sleep();
        await v.put('experiences', 'tie/b.md', '---\ntitle: Tiebreak sample\n---\ny\n');
        assert.deepEqual((await search(reader, 'tiebreak')).map((x) => x.path), ['tie/b.md', 'tie/a.md']);
    });

    test('scores descend', async () => {
        await v.put('experiences', 'desc/widget.md', '---\ntitle: Widget\ntags: [widget]\n---\nWidget care.\n');
        await v.put('experiences', 'desc/other.md', '---\ntitle: Other\ntags: [widget]\n---\nx\n');
        await v.put('experiences', 'desc/body.md', '---\ntitle: Body\n---\nAll about the widget.\n');
        const r = await search(reader, 'widget');
        assert.deepEqual(r.map((x) => x.path), ['desc/widget.md', 'desc/other.md', 'desc/body.md']);
        for (let i = 1; i < r.length; i++) assert.ok(r[i - 1].score >= r[i].score);
    });

    test('manual above distilled (x0.9 for any other source)', async () => {
        await v.put('experiences', 'src/gizmo-agent.md', '---\ntitle: Gizmo pricing\ntags: [pricing]\nsource: agent_summarized\n---\nHow gizmos are priced.\n');
        await v.put('experiences', 'src/gizmo-manual.md', '---\ntitle: Gizmo pricing\ntags: [pricing]\nsource: manual\n---\nHow gizmos are priced.\n');
        const r = await search(reader, 'gizmo pricing');
        assert.deepEqual(r.map((x) => [x.path, x.source]), [['src/gizmo-manual.md', 'manual'], ['src/gizmo-agent.md', 'agent_summarized']]);
        assert.ok(near(r[1].score, r[0].score * 0.9));
    });

    test('table names: +30 per name in a tag, even without a query match', async () => {
        await v.put('experiences', 'tables/returns-a.md', '---\ntitle: Sprocket returns\ntags: [sprockets]\n---\nx\n');
        await v.put('experiences', 'tables/returns-b.md', '---\ntitle: Sprocket returns\ntags: [sprockets, orders_2024]\n---\nx\n');
        let r = await search(reader, 'sprocket returns');
        assert.deepEqual(r.map((x) => x.path), ['tables/returns-a.md', 'tables/returns-b.md']);
        r = await search(reader, { query: 'sprocket returns', table_names: ['orders'] });
        assert.deepEqual(r.map((x) => x.path), ['tables/returns-b.md', 'tables/returns-a.md']);
        assert.ok(near(r[0].score, r[1].score + 30));
        // the reference's verified value: "zzz" with tag sales_data_2024 and [sales_data, SALES] = 60
        await v.put('experiences', 'tables/sales.md', '---\ntitle: Quarterly figures\ntags: [sales_data_2024]\n---\nx\n');
        r = await search(reader, { query: 'zzz', table_names: ['sales_data', 'SALES'] });
        assert.equal(r[0].path, 'tables/sales.md');
        assert.equal(r[0].score, 60);
        assert.equal(err(await searchRaw(reader, { query: 'x', table_names: 'orders' }), 'INVALID_REQUEST').code, 'INVALID_REQUEST');
    });
});

// ---------------------------------------------------------------- Chinese

describe('Chinese queries', () => {
    let v, reader;
    before(async () => {
        ({ admin: v, reader } = freshSpace());
        await v.put('experiences', '库存/周转率.md', '---\ntitle: 月度库存周转率的计算方法\ntags: [库存, 财务]\n---\n\n库存周转率 = 销售成本 / 平均库存余额。按月计算。\n');
        await v.put('experiences', 'finance/roi-guide.md', '---\ntitle: 投资回报率分析指南\ntags: [财务]\n---\n\nROI 用于衡量投资回报：(收益 - 成本) / 成本。\n');
        await v.put('experiences', '杂项/客户.md', '---\ntitle: 客户留存分析\ntags: [客户]\n---\n\n按月统计新老客户的留存情况。\n');
        await v.put('experiences', '杂项/渠道.md', '---\ntitle: 渠道销售对比\ntags: [渠道, 销售]\n---\n\n对比线上与线下渠道的销售额与毛利。\n');
        await v.put('experiences', 'en/retention.md', '---\ntitle: Customer retention analysis\ntags: [customer]\n---\n\nMonthly cohorts, sales channels and inventory reports.\n');
    });

    test('库存周转分析 finds 月度库存周转率的计算方法', async () => {
        const r = await search(reader, '库存周转分析');
        assert.equal(r[0].title, '月度库存周转率的计算方法');
        assert.ok(r[0].score > 0);
    });

    test('帮我分析ROI finds the document about ROI', async () => {
        const r = await search(reader, '帮我分析ROI');
        assert.equal(r[0].path, 'finance/roi-guide.md');
    });

    test('a 2-character query (库存) and a lone character (库)', async () => {
        assert.equal((await search(reader, '库存'))[0].title, '月度库存周转率的计算方法');
        assert.ok((await search(reader, '库')).some((x) => x.title === '月度库存周转率的计算方法'));
    });

    test('English queries never match Chinese text, and Chinese queries no English text', async () => {
        const chinese = new Set(['库存/周转率.md', '杂项/客户.md', '杂项/渠道.md']);
        for (const q of ['customer retention', 'sales', 'channel', 'inventory', 'analysis', 'monthly', 'zzz']) {
            const r = await search(reader, q);
            assert.ok(!r.some((x) => chinese.has(x.path)), `${q}: ${r.map((x) => x.path)}`);
            const e = await entries(reader, { q, min_score: 1, top_k: 50 });
            assert.ok(!e.some((x) => chinese.has(x.path)), `${q}: ${e.map((x) => x.path)}`);
        }
        const r = await search(reader, '客户留存');
        assert.equal(r[0].path, '杂项/客户.md');
        assert.ok(!r.some((x) => x.path === 'en/retention.md'));
    });

    test('the entry view finds the same', async () => {
        assert.equal((await entries(reader, { q: '库存周转分析' }))[0].title, '月度库存周转率的计算方法');
        assert.equal((await entries(reader, { q: '帮我分析ROI' }))[0].path, 'finance/roi-guide.md');
    });
});

// ---------------------------------------------------------------- injection

describe('FTS5 syntax in queries is text: results or [], never an error', () => {
    let v, reader;
    before(async () => {
        ({ admin: v, reader } = freshSpace());
        await v.put('experiences', 'inj/roi.md', '---\ntitle: ROI Calculation\ntags: [finance]\n---\nROI = (revenue - cost) / cost\n');
    });
    const nasty = [
        '" OR 1=1', '" OR ""="', 'NEAR(', 'NEAR(roi cost, 2)', '*', 'roi*', '{title}:', '{title}: roi', 'title:roi',
        '"unbalanced', 'unbalanced"', '"""', '(', ')', 'roi AND', 'AND OR NOT', '-roi', '^roi', 'roi + cost',
        "'; DROP TABLE knowledge; --", 'roi" OR "cost', '{', '}', ':', '\\', '"roi"*', '“roi”', 'NOT roi',
        'knowledge_fts MATCH \'x\'', '%_%', '\u0001roi', '帮我" OR "分析',
    ];

    test('POST /api/knowledge/search', async () => {
        for (const query of nasty) {
            const r = await search(reader, { query });
            for (const x of r) assert.equal(x.path, 'inj/roi.md', query);
        }
        assert.equal((await search(reader, '" OR roi "'))[0].path, 'inj/roi.md');
        assert.equal((await search(reader, '{title}: revenue*'))[0].path, 'inj/roi.md');
        assert.deepEqual(await search(reader, '" OR 1=1'), []);
        for (const t of nasty.slice(0, 10)) await search(reader, { query: 'roi', table_names: [t] });
        // a NUL is not text at all: refused as input, like everywhere else
        err(await searchRaw(reader, { query: 'roi\u0000cost' }), 'INVALID_REQUEST');
    });

    test('GET /api/knowledge/search', async () => {
        for (const q of nasty) {
            const r = await entries(reader, { q, min_score: 1 });
            for (const x of r) assert.equal(x.path, 'inj/roi.md', q);
        }
    });

    test('POST /api/knowledge/context', async () => {
        for (const question of nasty.filter((q) => q.trim())) {
            const d = ok(await s.api('POST', '/api/knowledge/context', { token: reader, body: { question } }));
            assert.ok(Array.isArray(d.knowledge), question);
        }
    });
});

// ---------------------------------------------------------------- the entry view

describe('GET /api/knowledge/search: two stages', () => {
    let space, agent, admin, reader;
    before(async () => {
        ({ space, reader } = freshSpace());
        agent = s.token(space, 'agent', 'search-agent');
        admin = s.token(space, 'admin', 'search-admin2');
    });
    const create = async (body, token = agent) => ok(await s.api('POST', '/api/knowledge', { token, body }));
    const put = async (id, body) => ok(await s.api('PUT', `/api/knowledge/${id}`, { token: agent, body }));

    test('top_k 1..50 and min_score 1..5, anything else INVALID_REQUEST', async () => {
        for (const top_k of ['0', '51', '-1', 'abc', '5.5', '1e1', ' 5', '5 ', '0x5', '99999999999999999999'])
            assert.equal(err(await entriesRaw(reader, { q: 'x', top_k }), 'INVALID_REQUEST').message,
                "'top_k' must be an integer between 1 and 50", top_k);
        for (const min_score of ['0', '6', '-3', 'x', '3.5'])
            assert.equal(err(await entriesRaw(reader, { q: 'x', min_score }), 'INVALID_REQUEST').message,
                "'min_score' must be an integer between 1 and 5", min_score);
        for (const p of [{ top_k: '1' }, { top_k: '50' }, { min_score: '1' }, { min_score: '5' }, {}])
            await entries(reader, { q: 'x', ...p });
        err(await entriesRaw(reader, { q: 'x', tags_type: 'bogus' }), 'INVALID_REQUEST');
        err(await entriesRaw(reader, { q: 'x', category: 'bogus' }), 'INVALID_REQUEST');
        // a reader may search; without a token nobody may
        err(await s.api('GET', '/api/knowledge/search?q=x', {}), 'UNAUTHORIZED', 401);
        err(await s.api('POST', '/api/knowledge/search', { body: { query: 'x' } }), 'UNAUTHORIZED', 401);
    });

    test('a blank or missing q finds nothing', async () => {
        await create({ scenario: 'Blank query probe', content: 'anything', score: 5 });
        for (const qs of ['', 'q=', 'q=%20%20', 'q=the%20of', 'top_k=5']) assert.deepEqual(await entries(reader, qs), [], qs);
    });

    test('results: id, title, scenario, content, tags, category, path, score, quality_score, metrics', async () => {
        const e = await create({ scenario: 'Parse huge CSV exports', content: 'Read in chunks with explicit dtypes.', tags_type: ['tool'], tags: ['csv'], score: 4, agent_id: 'csv_bot' });
        const r = await entries(reader, { q: 'csv exports' });
        assert.equal(r.length, 1);
        const x = r[0];
        for (const key of ['id', 'title', 'scenario', 'content', 'tags', 'category', 'path', 'score', 'quality_score', 'metrics']) assert.ok(key in x, key);
        assert.equal(x.id, e.id);
        assert.equal(x.title, 'Parse huge CSV exports');
        assert.equal(x.scenario, 'Parse huge CSV exports');
        assert.equal(x.content, 'Read in chunks with explicit dtypes.');
        assert.deepEqual(x.tags.type, ['tool']);
        assert.deepEqual(x.tags.labels, ['csv']);
        assert.equal(x.category, 'experiences');
        assert.equal(x.path, 'parse-huge-csv-exports.md');
        assert.equal(x.score, 4);
        assert.equal(x.quality_score, 4);
        assert.equal(x.metrics.helpful, 0);
        assert.equal(x.metrics.harmful, 0);
    });

    test('min_score drops low-scored entries (default 3)', async () => {
        const low = await create({ scenario: 'Lowscore widget tuning', content: 'x', score: 2 });
        const high = await create({ scenario: 'Lowscore widget calibration', content: 'x', score: 4 });
        assert.deepEqual((await entries(reader, { q: 'lowscore widget' })).map((x) => x.id), [high.id]);
        assert.deepEqual((await entries(reader, { q: 'lowscore widget', min_score: 1 })).map((x) => x.id).sort(), [low.id, high.id].sort());
        assert.deepEqual(await entries(reader, { q: 'lowscore widget', min_score: 5 }), []);
    });

    test('tags_type and category filters', async () => {
        const tool = await create({ scenario: 'Filterprobe with a tool', content: 'x', tags_type: ['tool'] });
        const plan = await create({ scenario: 'Filterprobe with a plan', content: 'x', tags_type: ['plan', 'strategy'] });
        const rule = await create({ scenario: 'Filterprobe rule', content: 'x', category: 'rules', path: 'filterprobe.md' }, admin);
        assert.deepEqual((await entries(reader, { q: 'filterprobe', tags_type: 'tool' })).map((x) => x.id), [tool.id]);
        assert.deepEqual((await entries(reader, 'q=filterprobe&tags_type=tool&tags_type=strategy')).map((x) => x.id).sort(), [tool.id, plan.id].sort());
        assert.deepEqual((await entries(reader, { q: 'filterprobe', tags_type: 'plan,usecase' })).map((x) => x.id), [plan.id]);
        assert.deepEqual((await entries(reader, { q: 'filterprobe', category: 'rules' })).map((x) => x.id), [rule.id]);
        assert.equal((await entries(reader, { q: 'filterprobe', category: 'experiences' })).length, 2);
        assert.equal((await entries(reader, { q: 'filterprobe' })).length, 3);
    });

    test('top_k limits the answer; stage 1 takes 2 x top_k candidates', async () => {
        for (let i = 0; i < 12; i++) await create({ scenario: `Topkprobe case ${i}`, content: 'x', score: 3 });
        assert.equal((await entries(reader, { q: 'topkprobe' })).length, 5);
        assert.equal((await entries(reader, { q: 'topkprobe', top_k: 1 })).length, 1);
        assert.equal((await entries(reader, { q: 'topkprobe', top_k: 50 })).length, 12);
    });

    test('quality rerank: helpful and harmful feedback move an entry', async () => {
        const a = await create({ scenario: 'Rerank gadget setup', content: 'same', score: 3 });
        const b = await create({ scenario: 'Rerank gadget setup', content: 'same', score: 3 });
        const order = async () => (await entries(reader, { q: 'rerank gadget' })).map((x) => [x.id, x.quality_score]);
        // equal relevance and quality: newest first, then by id
        const first = await order();
        assert.deepEqual(first.map((x) => x[0]).sort(), [a.id, b.id].sort());
        assert.deepEqual(first.map((x) => x[1]), [3, 3]);
        const [top, bottom] = first.map((x) => x[0]);
        // helpful feedback on the second lifts it above the first
        await put(bottom, { add_helpful_case: { case_id: 'h1', result: 'worked' } });
        assert.deepEqual(await order(), [[bottom, 4], [top, 3]]);
        // harmful feedback counts twice: 3 + 1 - 2*1 = 2 < 3
        await put(bottom, { add_harmful_case: { case_id: 'x1', result: 'broke' } });
        assert.deepEqual(await order(), [[top, 3], [bottom, 2]]);
        // a repeated case id changes nothing
        await put(bottom, { add_harmful_case: { case_id: 'x1', result: 'broke' } });
        assert.deepEqual(await order(), [[top, 3], [bottom, 2]]);
        // quality below zero: dropped (3 + 1 - 2*3 = -2)
        await put(bottom, { add_harmful_case: { case_id: 'x2' } });
        await put(bottom, { add_harmful_case: { case_id: 'x3' } });
        assert.deepEqual(await order(), [[top, 3]]);
        // batch_update feedback counts too
        ok(await s.api('POST', '/api/knowledge/batch_update', { token: agent, body: { feedback_list: [{ knowledge_id: top, is_effective: true }] } }));
        const after = await entries(reader, { q: 'rerank gadget' });
        assert.equal(after[0].id, top);
        assert.ok(after[0].quality_score >= 4, JSON.stringify(after[0]));
        assert.ok(after[0].metrics.helpful >= 1);
        // a higher score lifts too
        const c = await create({ scenario: 'Rerank gadget setup', content: 'same', score: 5 });
        assert.equal((await entries(reader, { q: 'rerank gadget' }))[0].id, c.id);
        await put(c.id, { update_score: 3 });
        assert.equal((await entries(reader, { q: 'rerank gadget' }))[0].id, top);
    });

    test('always-apply rules are entries too', async () => {
        const r = await create({ scenario: 'Alwaysprobe rule', content: 'x', category: 'rules', path: 'alwaysprobe.md', always_apply: true }, admin);
        assert.deepEqual((await entries(reader, { q: 'alwaysprobe' })).map((x) => x.id), [r.id]);
        assert.deepEqual(await search(reader, 'alwaysprobe'), []);
    });
});

// ---------------------------------------------------------------- /context

describe('POST /api/knowledge/context uses the search', () => {
    let v, reader;
    before(async () => {
        ({ admin: v, reader } = freshSpace());
        await v.put('experiences', 'ctx/roi.md', '---\ntitle: ROI Calculation\ntags: [finance]\n---\nROI = (revenue - cost) / cost\n');
        await v.put('experiences', 'ctx/stock.md', '---\ntitle: 月度库存周转率的计算方法\ntags: [sales_data]\n---\n库存周转率 = 销售成本 / 平均库存\n');
        await v.put('rules', 'always.md', '---\ntitle: Always rule\n---\nAlways.\n');
    });
    const context = async (body) => ok(await s.api('POST', '/api/knowledge/context', { token: reader, body }));

    test('the question finds knowledge, Chinese included; table names boost', async () => {
        assert.deepEqual((await context({ question: 'How is ROI computed?' })).knowledge.map((k) => k.path), ['ctx/roi.md']);
        assert.deepEqual((await context({ question: '帮我做库存周转分析' })).knowledge.map((k) => k.path), ['ctx/stock.md']);
        const d = await context({ question: 'zzz', table_names: ['sales_data'] });
        assert.deepEqual(d.knowledge.map((k) => k.path), ['ctx/stock.md']);
        assert.ok(d.knowledge_block.startsWith('[RELEVANT KNOWLEDGE]\n'));
        // the always-apply rule comes through the rules, not the knowledge
        const all = await context({ question: 'always rule' });
        assert.deepEqual(all.knowledge, []);
        assert.deepEqual(all.rules.map((r) => r.title), ['Always rule']);
        assert.deepEqual((await context({ question: 'the of and' })).knowledge, []);
    });
});

// ---------------------------------------------------------------- the index in step

describe('the index follows every write', () => {
    let space, v, reader;
    before(async () => {
        ({ space, admin: v, reader } = freshSpace());
    });
    const paths = async (q) => (await search(reader, q)).map((x) => x.path);
    const entryIds = async (q) => (await entries(reader, { q, min_score: 1 })).map((x) => x.id);

    test('write, overwrite, rename, delete, revert', async () => {
        const w = await v.put('experiences', 'step/zebra-notes.md', '---\ntitle: Zebra crossing\ntags: [traffic]\n---\nPedestrians first.\n');
        assert.deepEqual(await paths('zebra crossing'), ['step/zebra-notes.md']);
        assert.deepEqual(await entryIds('pedestrians'), [w.id]);
        // overwrite: the old words leave the index, the new ones arrive
        await v.put('experiences', 'step/zebra-notes.md', '---\ntitle: Giraffe feeding\ntags: [zoo]\n---\nAcacia leaves.\n');
        for (const q of ['crossing', 'pedestrians', 'traffic']) assert.deepEqual(await paths(q), [], q);
        assert.deepEqual(await paths('giraffe acacia'), ['step/zebra-notes.md']);
        // rename: the file name follows
        ok(await v.rename('experiences', 'step/zebra-notes.md', 'step/okapi-notes.md'));
        assert.deepEqual(await paths('zebra'), []);
        assert.deepEqual(await paths('okapi'), ['step/okapi-notes.md']);
        // delete: gone from both searches
        ok(await v.del('experiences', 'step/okapi-notes.md'));
        assert.deepEqual(await paths('giraffe'), []);
        assert.deepEqual(await entryIds('giraffe'), []);
        // revert to the first version: back, with its first words and path
        ok(await v.revert(w.id, { version: 1 }));
        assert.deepEqual(await paths('zebra crossing'), ['step/zebra-notes.md']);
        assert.deepEqual(await paths('giraffe'), []);
        assert.deepEqual(await paths('okapi'), []);
        // a rename into another category: the category filter follows (and a rule
        // without alwaysApply applies always, so only the entry view finds it)
        ok(await v.rename('experiences', 'step/zebra-notes.md', 'zebra-rule.md', { new_category: 'rules' }));
        assert.deepEqual(await search(reader, { query: 'zebra', categories: ['experiences'] }), []);
        assert.deepEqual(await search(reader, { query: 'zebra', categories: ['rules'] }), []);
        const moved = await entries(reader, { q: 'zebra', category: 'rules', min_score: 1 });
        assert.deepEqual(moved.map((x) => [x.id, x.category, x.path]), [[w.id, 'rules', 'zebra-rule.md']]);
        assert.deepEqual(await entries(reader, { q: 'zebra', category: 'experiences', min_score: 1 }), []);
    });

    test('entry-view saves, deletes and feedback', async () => {
        const agent = s.token(space, 'agent', 'step-agent');
        const e = ok(await s.api('POST', '/api/knowledge', { token: agent, body: { scenario: 'Flange torque settings', content: 'Tighten in a star pattern.', score: 4 } }));
        assert.deepEqual(await entryIds('flange torque'), [e.id]);
        assert.deepEqual(await paths('star pattern'), [e.path]);
        ok(await s.api('PUT', `/api/knowledge/${e.id}`, { token: agent, body: { update_score: 5, add_helpful_case: { case_id: 'c1' } } }));
        assert.deepEqual(await entryIds('flange torque'), [e.id]);
        ok(await s.api('DELETE', `/api/knowledge/${e.id}`, { token: agent }));
        assert.deepEqual(await entryIds('flange torque'), []);
        assert.deepEqual(await paths('flange'), []);
        ok(await s.api('POST', `/api/knowledge/${e.id}/revert`, { token: agent, body: {} }));
        assert.deepEqual(await entryIds('flange torque'), [e.id]);
    });

    test('import (knowhub import while the server runs)', async () => {
        const dir = writeTree(tempDir('knowhub-search-import-'), {
            'experiences/narwhal-facts.md': '---\ntitle: Narwhal facts\ntags: [arctic]\n---\n\nTusks are teeth.\n',
            'rules/walrus.md': '---\ntitle: Walrus rule\nalwaysApply: false\n---\nWalrus body.\n',
        });
        let r = knowhub(s.dir, ['import', dir, '--space', space]);
        assert.equal(r.status, 0, r.stderr);
        assert.deepEqual(await paths('narwhal tusks'), ['narwhal-facts.md']);
        assert.deepEqual(await paths('walrus'), ['walrus.md']);
        fs.writeFileSync(path.join(dir, 'experiences/narwhal-facts.md'), '---\ntitle: Narwhal migration\ntags: [arctic]\n---\n\nThey winter under ice.\n');
        r = knowhub(s.dir, ['import', dir, '--space', space, '--on-conflict', 'overwrite']);
        assert.equal(r.status, 0, r.stderr);
        assert.deepEqual(await paths('tusks'), []);
        assert.deepEqual(await paths('narwhal winter'), ['narwhal-facts.md']);
    });
});

test('the entry view scores the scenario, past the 80 characters of its title', async () => {
    const token = s.token('scenario-space', 'agent', 'scenario-agent');
    const long = 'When a nightly export to the analytics warehouse runs late and downstream dashboards show ' +
        'yesterday, check the upstream okapi replication lag first';
    const e = ok(await s.api('POST', '/api/knowledge', { token, body: { scenario: long, content: 'Look at the lag metric.' } }));
    assert.ok(!e.title.includes('okapi'), 'the word is past the title');
    const r = ok(await s.api('GET', '/api/knowledge/search?q=okapi%20replication&min_score=1', { token }));
    assert.deepEqual(r.results.map((x) => x.id), [e.id]);
    // The file view's reference score reads title, tags, stem and the body's first
    // 200 characters (0 here); BM25F reads the scenario too, so it finds the entry.
    const f = ok(await s.api('POST', '/api/knowledge/search', { token, body: { query: 'okapi replication' } }));
    assert.deepEqual(f.results.map((x) => [x.id, x.score]), [[e.id, 0]]);
    assert.ok(f.results[0].relevance > 0);
});
