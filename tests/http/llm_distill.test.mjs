// POST /api/knowledge/distill-experience: the reference's validation order
// and messages; with the LLM (prompt intent, language from Accept-Language,
// fenced / prose / too long answers) and without it (a deterministic local
// distillation, source: distill-local); the file named after the title in the
// category_hint folder, never over an existing one (-2, -3).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { startFakeLlm } from './lib/fakellm.mjs';
import { ID_RE, err, ok } from './lib/expect.mjs';
import { callsOf, experienceContext, llmEnv, said, utcDate } from './lib/llmtest.mjs';

const distill = (st, token, body, lang) =>
    st.api('POST', '/api/knowledge/distill-experience', { token, body, headers: lang ? { 'Accept-Language': lang } : {} });
const read = async (st, token, path) => ok(await st.api('POST', '/api/knowledge/read', { token, body: { category: 'experiences', path } })).content;
const experiences = async (st, token) => ok(await st.api('POST', '/api/knowledge/list', { token, body: { category: 'experiences' } })).items;
/** The reference's file name for a title. */
// The slug of a mostly-ASCII title (docs/knowledge-files.md): its ASCII words,
// lower-cased, joined by '-', at most 60 bytes, cut before a word.
const fileName = (title) => {
    let out = '';
    for (const w of title.toLowerCase().match(/[a-z0-9]+/g) || []) {
        if ((out ? out.length + 1 : 0) + w.length > 60) break;
        out += (out ? '-' : '') + w;
    }
    return `${out}.md`;
};
/** Front matter and body of a document. */
function split(doc) {
    const m = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(doc);
    assert.ok(m, `no front matter: ${doc}`);
    return { fm: m[1], body: m[2] };
}

// One stack without an LLM for the validation and the local distillation.
let n;
before(async () => {
    n = await startStack();
});
after(async () => {
    await n?.stop();
});

describe('validation, in the reference order', () => {
    let a;
    before(() => {
        a = n.token('validate', 'agent', 'distill-validate');
    });

    const Q = 'How did sales grow?';
    const table = [
        [{}, "'experience_context' is required"],
        [{ experience_context: 'text' }, "'experience_context' is required"],
        [{ experience_context: null }, "'experience_context' is required"],
        [{ experience_context: [] }, "'experience_context' is required"],
        [{ experience_context: {}, model: 'gpt-evil' }, "'experience_context.user_question' is required"],
        [{ experience_context: { dialog: 'x', interaction: 'y' } }, "'experience_context.user_question' is required"],
        [{ experience_context: { user_question: '' } }, "'experience_context.user_question' is required"],
        [{ experience_context: { user_question: 5 } }, "'experience_context.user_question' is required"],
        [{ experience_context: { user_question: Q, dialog: 'x', interaction: 'y' } }, "'experience_context.dialog' must be a list"],
        [{ experience_context: { user_question: Q, dialog: {}, result_summary: 'x' } }, "'experience_context.dialog' must be a list"],
        [{ experience_context: { user_question: Q, dialog: [], interaction: 'y' } }, "'experience_context.interaction' must be a list"],
        [{ experience_context: { user_question: Q, interaction: {} } }, "'experience_context.interaction' must be a list"],
        [{ experience_context: { user_question: Q, dialog: [], interaction: [] }, model: 'gpt-evil' }, "'experience_context.result_summary' is required"],
        [{ experience_context: { user_question: Q, result_summary: [] } }, "'experience_context.result_summary' is required"],
        [{ experience_context: { user_question: Q, result_summary: 'x' } }, "'experience_context.result_summary' is required"],
        [{ experience_context: { user_question: Q, result_summary: {} }, model: 'gpt-evil' }, "'model' is not one of the allowed models"],
    ];
    test('each failing check answers its message, the earliest first', async () => {
        for (const [body, message] of table) {
            const x = err(await distill(n, a, body), 'INVALID_REQUEST');
            assert.equal(x.message, message, JSON.stringify(body));
            assert.equal(x.retry, false);
        }
    });

    test('timeout_seconds above 0 (at most 600), category_hint a string', async () => {
        const ctx = { experience_context: experienceContext() };
        for (const t of [0, -1, '5', true, 601, [1]]) {
            const x = err(await distill(n, a, { ...ctx, timeout_seconds: t }), 'INVALID_REQUEST');
            assert.match(x.message, /timeout_seconds/);
        }
        for (const h of [5, ['x'], { f: 1 }]) {
            const x = err(await distill(n, a, { ...ctx, category_hint: h }), 'INVALID_REQUEST');
            assert.match(x.message, /category_hint/);
        }
        assert.deepEqual(await experiences(n, a), [], 'nothing was saved');
        // Optional fields may be absent or null.
        const d = ok(await distill(n, a, { experience_context: { user_question: 'Minimal?', result_summary: {} }, timeout_seconds: 0.5, category_hint: null, model: null }));
        assert.equal(d.source, 'distill-local');
    });

    test('a reader may not distill', async () => {
        const r = await distill(n, n.token('validate', 'reader'), { experience_context: experienceContext() });
        err(r, 'FORBIDDEN', 403);
    });
});

describe('without an LLM: the local distillation', () => {
    let a;
    before(() => {
        a = n.token('default', 'agent', 'distill-local');
    });

    test('English: When to Use / Method / Pitfalls & Tips from the context, source distill-local', async () => {
        const d = ok(await distill(n, a, { experience_context: experienceContext() }, 'en-US,en;q=0.9'));
        assert.equal(d.source, 'distill-local');
        assert.equal(d.category, 'experiences');
        assert.match(d.id, ID_RE);
        assert.equal(d.title, 'Group and aggregate: Quarterly growth by region — shown as a bar chart');
        assert.equal(d.path, fileName(d.title));
        const doc = await read(n, a, d.path);
        const { fm, body } = split(doc);
        assert.match(fm, /^title: /m);
        assert.match(fm, /^tags: \[?.*analysis/m);
        assert.match(fm, new RegExp(`^created: '?${utcDate()}'?$`, 'm'));
        assert.match(fm, /^source: distill-local$/m);
        assert.match(fm, /^source_context: ctx-sales-1$/m);
        const sections = [...body.matchAll(/^## (.*)$/gm)].map((m) => m[1]);
        assert.deepEqual(sections, ['When to Use', 'Method', 'Pitfalls & Tips']);
        assert.match(body, /## When to Use\nHow did sales grow per region quarter over quarter\?/);
        assert.match(body, /1\. Start from sales\./);
        assert.equal(d.path, 'group-and-aggregate-quarterly-growth-by-region-shown-as-a.md');
        // the method is what was done, never the user's questions
        assert.ok(!body.includes('Compare quarterly sales growth for each region'), body);
        assert.match(body, /2\. Grouped by region and quarter, then took the percent change\n/);
        assert.match(body, /### Attempts\n- attempt 1 \(transform\): failed \(error\) — KeyError: 'quarter'; first try\n- attempt 2 \(transform\): succeeded; worked\n/);
        assert.match(body, /Key operations: group and aggregate, percent change\./);
        assert.match(body, /Result fields: region, quarter, growth, shown as a bar chart\./);
        assert.match(body, /- KeyError: 'quarter' → fixed by: derive the quarter from the date first/);
        // A method, not the raw material: no code, no comments from it.
        assert.ok(!body.includes('confidential') && !body.includes('df =') && !body.includes('pct_change()'), body);
        const e = ok(await n.api('GET', `/api/knowledge/${d.id}`, { token: a }));
        assert.equal(e.path, d.path);
        assert.equal(e.category, 'experiences');
        assert.equal(e.title, d.title);
    });

    test('Chinese when Accept-Language is zh; no attempt recorded says so', async () => {
        const ctx = experienceContext({ context_id: 'ctx-zh', execution_attempts: [], result_summary: { output_fields: ['地区', '增长'], chart_type: 'line' }, user_question: '各地区销售增长如何？' });
        const d = ok(await distill(n, a, { experience_context: ctx }, 'zh-CN,zh;q=0.9,en;q=0.8'));
        assert.equal(d.source, 'distill-local');
        assert.equal(d.title, '分析方法: 各地区销售增长如何？ — 以折线图呈现');
        const { body } = split(await read(n, a, d.path));
        assert.deepEqual([...body.matchAll(/^## (.*)$/gm)].map((m) => m[1]), ['适用场景', '方法', '注意事项']);
        assert.match(body, /结果字段：地区, 增长，以折线图呈现。/);
        assert.match(body, /- 没有记录执行尝试；复用前先核对字段口径。/);
        assert.ok(!/没有失败的尝试/.test(body), 'no attempt is not a success');
        // With a failed attempt: "→ 解决：".
        const d2 = ok(await distill(n, a, { experience_context: experienceContext({ context_id: 'ctx-zh2' }) }, 'zh'));
        assert.match(split(await read(n, a, d2.path)).body, /- KeyError: 'quarter' → 解决：derive the quarter from the date first/);
        // Other languages: the local distillation writes English.
        const d3 = ok(await distill(n, a, { experience_context: experienceContext({ context_id: 'ctx-ja' }) }, 'ja-JP'));
        assert.match(split(await read(n, a, d3.path)).body, /^## When to Use$/m);
    });

    test('deterministic, and never a silent overwrite: -2, -3', async () => {
        const ctx = { experience_context: experienceContext({ context_id: 'ctx-dup', result_summary: { display_instruction: 'Duplicate naming check', chart_type: 'pie' } }) };
        const first = ok(await distill(n, a, ctx));
        const doc1 = await read(n, a, first.path);
        const second = ok(await distill(n, a, ctx));
        const third = ok(await distill(n, a, ctx));
        const stem = first.path.slice(0, -3);
        assert.deepEqual([first.path, second.path, third.path], [`${stem}.md`, `${stem}-2.md`, `${stem}-3.md`]);
        assert.equal(new Set([first.id, second.id, third.id]).size, 3);
        assert.equal(await read(n, a, second.path), doc1, 'the same context distills to the same document');
        assert.equal(await read(n, a, first.path), doc1, 'the first file is untouched');
        assert.equal(ok(await n.api('GET', `/api/knowledge/${first.id}`, { token: a })).version, 1);
        // A name taken by a hand-written file is skipped too.
        ok(await n.api('POST', '/api/knowledge/write', { token: a, body: { category: 'experiences', path: 'analysis-handwritten.md', content: '---\ntitle: mine\n---\nmine\n' } }));
        const own = ok(await distill(n, a, { experience_context: { user_question: 'handwritten', result_summary: {} } }));
        assert.equal(own.path, 'analysis-handwritten-2.md');
        assert.match(await read(n, a, 'analysis-handwritten.md'), /\nmine\n$/);
    });

    test('category_hint is the folder (a plain name: no separators, no leading dots)', async () => {
        const ctx = (id) => experienceContext({ context_id: id, result_summary: { display_instruction: 'Folder check' } });
        const a1 = ok(await distill(n, a, { experience_context: ctx('f1'), category_hint: 'sales' }));
        assert.equal(a1.path, 'sales/analysis-folder-check.md');
        const a2 = ok(await distill(n, a, { experience_context: ctx('f2'), category_hint: 'sales' }));
        assert.equal(a2.path, 'sales/analysis-folder-check-2.md');
        const a3 = ok(await distill(n, a, { experience_context: ctx('f3'), category_hint: '../../etc' }));
        assert.equal(a3.path, 'etc/analysis-folder-check.md');
        const a4 = ok(await distill(n, a, { experience_context: ctx('f4'), category_hint: 'a/b\\c' }));
        assert.equal(a4.path, 'abc/analysis-folder-check.md');
        const a5 = ok(await distill(n, a, { experience_context: ctx('f5'), category_hint: ' . ' }));
        assert.equal(a5.path, 'analysis-folder-check.md');
        const a6 = ok(await distill(n, a, { experience_context: ctx('f6'), category_hint: '销售' }));
        assert.equal(a6.path, '销售/analysis-folder-check.md');
        const list = await experiences(n, a);
        for (const p of [a1.path, a2.path, a3.path, a4.path, a5.path, a6.path]) assert.ok(list.some((i) => i.path === p), p);
    });

    test('a chain: titled after the saved table, its steps, every attempt, the failed one said so', async () => {
        const ctx = experienceContext({
            context_id: 'qoq_growth',
            user_question: 'Which region grew fastest quarter over quarter?',
            interaction: [
                { from: 'user', role: 'prompt', content: 'How did revenue develop per region, quarter by quarter?' },
                { from: 'data-agent', role: 'instruction', content: 'Sum revenue by calendar quarter and region' },
                { from: 'data-agent', role: 'summary', content: 'North and East grew every quarter' },
                { from: 'user', role: 'prompt', content: 'Which region grew fastest quarter over quarter?' },
                { from: 'data-agent', role: 'instruction', content: 'Compute quarter-over-quarter growth within each region' },
            ],
            chain: [
                { table: 'revenue_by_quarter', question: 'How did revenue develop per region, quarter by quarter?', instruction: 'Sum revenue by calendar quarter and region', operations: 'groupby, datetime' },
                { table: 'qoq_growth', question: 'Which region grew fastest quarter over quarter?', instruction: 'Compute quarter-over-quarter growth within each region', operations: 'sort' },
            ],
            result_summary: { display_instruction: 'Compute quarter-over-quarter growth within each region', source_tables: ['revenue_by_quarter'], output_fields: ['region', 'quarter', 'qoq_growth'], code: 'df.sort_values(["region"]).pct_change()' },
            execution_attempts: [
                { table: 'revenue_by_quarter', kind: 'transform', attempt: '1', status: 'error', summary: 'order_date was text', error: 'AttributeError: Can only use .dt accessor with datetimelike values' },
                { table: 'revenue_by_quarter', kind: 'repair', attempt: '2', status: 'success', summary: 'parsed order_date first', repair_code_summary: 'to_datetime, then groupby' },
                { table: 'qoq_growth', kind: 'transform', attempt: '1', status: 'success', summary: 'pct_change within each region' },
            ],
        });
        const d = ok(await distill(n, a, { experience_context: ctx }, 'en'));
        assert.equal(d.title, 'Sort: Compute quarter-over-quarter growth within each region');
        assert.equal(d.path, 'sort-compute-quarter-over-quarter-growth-within-each-region.md');
        const { body } = split(await read(n, a, d.path));
        assert.match(body, /## When to Use\nWhich region grew fastest quarter over quarter\?\n/);
        assert.match(body, /1\. Start from revenue_by_quarter\.\n2\. revenue_by_quarter: Sum revenue by calendar quarter and region \(groupby, datetime\)\n3\. qoq_growth: Compute quarter-over-quarter growth within each region \(sort\)\n/);
        assert.ok(!/^\d+\. (How did|Which region)/m.test(body), `no question as a step: ${body}`);
        assert.match(body, /- revenue_by_quarter, attempt 1 \(transform\): failed \(error\) — AttributeError: Can only use \.dt accessor with datetimelike values; order_date was text\n/);
        assert.match(body, /- revenue_by_quarter, attempt 2 \(repair\): succeeded; parsed order_date first\n/);
        assert.match(body, /- qoq_growth, attempt 1 \(transform\): succeeded; pct_change within each region\n/);
        assert.match(body, /## Pitfalls & Tips\n- revenue_by_quarter: AttributeError: Can only use \.dt accessor with datetimelike values → fixed by: to_datetime, then groupby\n/, "the fix is the later attempt that worked, never the failed one's own summary");
        assert.ok(!/No attempt failed/.test(body), body);
        // zh: the same facts in Chinese
        const z = ok(await distill(n, a, { experience_context: { ...ctx, context_id: 'qoq-zh' } }, 'zh-CN'));
        const zb = split(await read(n, a, z.path)).body;
        assert.match(zb, /### 执行尝试\n- revenue_by_quarter，第 1 次 \(transform\)：失败（error） — AttributeError/);
        assert.ok(!/没有失败的尝试/.test(zb), zb);
        // an attempt without a status is not a success either
        const u = ok(await distill(n, a, { experience_context: { ...ctx, context_id: 'qoq-unknown', execution_attempts: [{ attempt: 1, summary: 'ran' }] } }, 'en'));
        const ub = split(await read(n, a, u.path)).body;
        assert.match(ub, /- attempt 1: status not recorded; ran\n/);
        assert.match(ub, /- No attempt is marked as failed \(1 without a status\)/);
        // a failure nothing fixed claims no fix (its own summary is none)
        const unfixed = ok(await distill(n, a, { experience_context: { ...ctx, context_id: 'qoq-unfixed', execution_attempts: [{ attempt: 1, status: 'error', error: 'MemoryError', summary: 'tried all at once' }] } }, 'en'));
        const fb = split(await read(n, a, unfixed.path)).body;
        assert.match(fb, /## Pitfalls & Tips\n- MemoryError\n/);
        assert.ok(!fb.includes('fixed by'), fb);
        // no attempts at all: said so
        const none = ok(await distill(n, a, { experience_context: { ...ctx, context_id: 'qoq-none', execution_attempts: [] } }, 'en'));
        assert.match(split(await read(n, a, none.path)).body, /- No execution attempt was recorded/);
        // a chain that is not a list is refused, nothing saved
        const before = (await experiences(n, a)).length;
        assert.equal(err(await distill(n, a, { experience_context: { ...ctx, chain: 'x' } }), 'INVALID_REQUEST').message, "'experience_context.chain' must be a list");
        assert.equal((await experiences(n, a)).length, before);
    });

    test('file names: a short slug, the title\'s own characters in Chinese, punctuation dropped', async () => {
        const zh = ok(await distill(n, a, { experience_context: experienceContext({ context_id: 'slug-zh', execution_attempts: [], user_question: '《库存》周转率：按月对比？', result_summary: { chart_type: 'line' } }) }, 'zh'));
        assert.equal(zh.title, '分析方法: 《库存》周转率：按月对比？ — 以折线图呈现');
        // at most 60 bytes: cut at a character (3 bytes each here), never inside one
        assert.equal(zh.path, '分析方法-库存-周转率-按月对比-以折线图呈.md');
        assert.ok(Buffer.byteLength(zh.path.slice(0, -3)) <= 60);
        const long = ok(await distill(n, a, { experience_context: experienceContext({ context_id: 'slug-long', result_summary: { display_instruction: 'revenue per region and quarter, with the share of each product line and the running total of the year', chart_type: 'bar' } }) }, 'en'));
        assert.ok(Buffer.byteLength(long.path) <= 63, long.path);
        assert.match(long.path, /^[a-z0-9]+(-[a-z0-9]+)*\.md$/);
        assert.equal(long.path, 'analysis-revenue-per-region-and-quarter-with-the-share-of.md');
    });
});

describe('with an LLM', () => {
    let llm, s, a;
    const CANNED_TITLE = 'Growth analysis: compare quarters per region — percent change reveals leaders';
    before(async () => {
        llm = await startFakeLlm();
        s = await startStack(llmEnv(llm));
        a = s.token('default', 'agent', 'distill-llm');
    });
    after(async () => {
        await s?.stop();
        await llm?.stop();
    });

    test('the LLM writes it: title and tags kept, source distill, the prompt asks for a method', async () => {
        llm.reset();
        const long = `${'Why did the numbers move? '.repeat(30)}END-OF-QUESTION`;
        const d = ok(await distill(s, a, { experience_context: experienceContext({ user_question: long }) }));
        assert.equal(d.source, 'distill');
        assert.equal(d.title, CANNED_TITLE);
        assert.equal(d.path, fileName(CANNED_TITLE));
        const { fm, body } = split(await read(s, a, d.path));
        assert.match(fm, /^tags: \[?.*sales.*growth/m);
        assert.match(fm, /^source: distill$/m);
        assert.match(fm, /^source_context: ctx-sales-1$/m);
        assert.match(fm, new RegExp(`^updated: '?${utcDate()}'?$`, 'm'));
        assert.deepEqual([...body.matchAll(/^## (.*)$/gm)].map((m) => m[1]), ['When to Use', 'Method', 'Pitfalls & Tips']);

        const [call] = callsOf(llm, 'distill');
        assert.equal(llm.calls.length, 1);
        const system = said(call, 'system');
        for (const want of ['transferable methodology', '## When to Use', '## Method', '## Pitfalls & Tips', 'no raw data', 'no secrets', '[Method]: [scenario] — [takeaway]', 'Under 500 words', 'Write the body in English'])
            assert.ok(system.includes(want), `system prompt lacks ${want}`);
        const user = said(call, 'user');
        assert.ok(!user.includes('END-OF-QUESTION'), 'the question is cut at 500 characters');
        assert.match(user, /Compare quarterly sales growth for each region/);
        assert.match(user, /KeyError: 'quarter'/);
        assert.match(user, /Detected operations: group and aggregate, percent change/);
        assert.match(user, /df = sales\.groupby/);
        assert.ok(!user.includes('confidential'), 'code comments are removed');
        assert.match(user, /Dialog: 2 messages/);
    });

    test('the language comes from the first Accept-Language tag', async () => {
        const cases = [['zh-CN,zh;q=0.9', /Chinese/], ['fr-CA', /French/], ['de', /German/], ['pt-BR,en', /Portuguese/], ['en-GB,zh;q=0.5', /English/], ['xx-YY', /English/], ['zhx', /English/], [null, /English/]];
        for (const [lang, want] of cases) {
            llm.reset();
            ok(await distill(s, a, { experience_context: experienceContext({ context_id: `lang-${lang}` }) }, lang));
            assert.match(said(callsOf(llm, 'distill')[0], 'system'), new RegExp(`Write the body in ${want.source}`), String(lang));
        }
    });

    test('a fenced answer, or one wrapped in prose, is unwrapped', async () => {
        for (const mode of ['fenced', 'prose']) {
            llm.reset();
            llm.mode('distill', mode);
            const d = ok(await distill(s, a, { experience_context: experienceContext({ context_id: `wrap-${mode}` }), category_hint: mode }));
            assert.equal(d.title, CANNED_TITLE, mode);
            assert.equal(d.path, `${mode}/${fileName(CANNED_TITLE)}`);
            const doc = await read(s, a, d.path);
            assert.ok(!doc.includes('```') && !doc.includes('Hope that helps') && !doc.includes('Sure!'), doc);
            assert.match(split(doc).fm, /^source_context: wrap-/m);
            assert.match(split(doc).body, /^## When to Use\nComparing growth\.$/m);
        }
        // A document that starts with its front matter keeps its own code blocks.
        llm.mode('distill', 'ok', { content: '---\ntitle: Code kept\ntags: []\n---\n## Method\n```python\ndf.groupby(key)\n```\n' });
        const d = ok(await distill(s, a, { experience_context: experienceContext({ context_id: 'code-kept' }) }));
        assert.equal(d.title, 'Code kept');
        assert.match(split(await read(s, a, d.path)).body, /^\n?## Method\n```python\ndf\.groupby\(key\)\n```\n$/);
        llm.reset();
    });

    test("an answer without front matter gets the reference's fallback title", async () => {
        llm.reset();
        llm.mode('distill', 'ok', { content: '## Quarter growth method\n\nGroup, then compare.\n' });
        const d = ok(await distill(s, a, { experience_context: experienceContext({ context_id: 'nofm' }) }));
        assert.equal(d.title, 'Quarter growth method');
        const { fm } = split(await read(s, a, d.path));
        assert.match(fm, /^tags: \[\]$/m);
        llm.mode('distill', 'ok', { content: '---\ntags: [x]\n---\n' });
        const u = ok(await distill(s, a, { experience_context: experienceContext({ context_id: 'untitled' }) }));
        assert.equal(u.title, 'Untitled Knowledge');
        assert.equal(u.path, 'untitled-knowledge.md');
        llm.reset();
    });

    test('too long: one condensing retry, then LIMIT_EXCEEDED and nothing saved', async () => {
        const count = (await experiences(s, a)).length;
        llm.reset();
        llm.mode('distill', 'long', { length: 2500 });
        const x = err(await distill(s, a, { experience_context: experienceContext({ context_id: 'too-long' }) }), 'LIMIT_EXCEEDED');
        assert.match(x.message, /2000/);
        const calls = callsOf(llm, 'distill');
        assert.equal(calls.length, 2);
        assert.deepEqual(calls[1].messages.map((m) => m.role), ['system', 'user', 'assistant', 'user']);
        assert.match(calls[1].messages[3].content, /2500 characters; the limit is 2000\. Condense/);
        assert.equal((await experiences(s, a)).length, count);
        // Front matter does not count: a 1990-character body fits.
        llm.mode('distill', 'ok', { content: `---\ntitle: Fits exactly\ntags: []\n---\n${'y'.repeat(1990)}\n` });
        llm.calls.length = 0;
        ok(await distill(s, a, { experience_context: experienceContext({ context_id: 'fits' }) }));
        assert.equal(llm.calls.length, 1);
        llm.reset();
    });

    test('the LLM failing: its error, no local fallback, nothing saved', async () => {
        const count = (await experiences(s, a)).length;
        for (const [mode, code, retry] of [['500', 'LLM_SERVICE_ERROR', true], ['401', 'LLM_AUTH_FAILED', false], ['empty', 'LLM_UNKNOWN_ERROR', false]]) {
            llm.reset();
            llm.mode('distill', mode);
            const x = err(await distill(s, a, { experience_context: experienceContext({ context_id: `fail-${mode}` }) }), code);
            assert.equal(x.retry, retry);
        }
        assert.equal((await experiences(s, a)).length, count);
        llm.reset();
    });

    test('the same title twice: -2', async () => {
        llm.reset();
        const one = ok(await distill(s, a, { experience_context: experienceContext(), category_hint: 'twice' }));
        const two = ok(await distill(s, a, { experience_context: experienceContext(), category_hint: 'twice' }));
        assert.equal(two.path, one.path.replace(/\.md$/, '-2.md'));
        assert.notEqual(one.id, two.id);
    });
});
