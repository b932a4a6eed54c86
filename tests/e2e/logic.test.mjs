// The panel's pure logic, run in node on the same files the browser loads:
// the leaf rule and the experience context (web/js/leaf.js), the front
// matter the editor writes (web/js/fm.js) and the revision diff (web/js/diff.js).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildExperienceContext, forest, isLeafDerivedTable, summarizeCode, visibleChain } from '../../web/js/leaf.js';
import { buildDocument, editableBody, parseTags, patchFront, splitDocument } from '../../web/js/fm.js';
import { lineDiff } from '../../web/js/diff.js';
import { plainPassage, windowed } from '../../web/js/snippet.js';

const q = (text, role = 'prompt') => ({ from: 'user', to: 'data-agent', role, content: text });
const derived = (id, parent, extra = {}) => ({
    id,
    names: ['a', 'b'],
    rows: [{ a: 1, b: 2 }],
    derive: { source: [parent], code: `${id} = ${parent}.groupby("a").sum()`, trigger: { tableId: parent, interaction: [q(`question of ${id}`)] }, dialog: [{ role: 'user', content: `dialog of ${id}` }], ...extra },
});
const root = { id: 'root', names: ['a', 'b'], rows: [] };

describe('the leaf rule', () => {
    test('only derived tables without a non-anchored child are leaves', () => {
        const a = derived('a', 'root');
        const b = derived('b', 'a');
        const c = { ...derived('c', 'a'), anchored: true };
        const tables = [root, a, b, c];
        assert.equal(isLeafDerivedTable(root, tables), false, 'the source table is not derived');
        assert.equal(isLeafDerivedTable(a, tables), false, 'a has the non-anchored child b');
        assert.equal(isLeafDerivedTable(b, tables), true);
        assert.equal(isLeafDerivedTable(c, tables), true, 'an anchored table is a leaf of its own');
        assert.equal(isLeafDerivedTable(a, [root, a, c]), true, 'an anchored child does not continue the chain');
    });

    test('after a derive the leaf moves to the new table', () => {
        const tables = [root, derived('a', 'root'), derived('b', 'a')];
        assert.deepEqual(tables.filter((t) => isLeafDerivedTable(t, tables)).map((t) => t.id), ['b']);
        tables.push(derived('c', 'b'));
        assert.deepEqual(tables.filter((t) => isLeafDerivedTable(t, tables)).map((t) => t.id), ['c']);
    });

    test('the chain is walked root-first and stops at a missing parent or a cycle', () => {
        const tables = [root, derived('a', 'root'), derived('b', 'a'), derived('c', 'b')];
        assert.deepEqual(visibleChain(tables[3], tables).map((t) => t.id), ['root', 'a', 'b', 'c']);
        const orphan = derived('x', 'gone');
        assert.deepEqual(visibleChain(orphan, [orphan]).map((t) => t.id), ['x']);
        const p = derived('p', 'q');
        const r = derived('q', 'p');
        assert.deepEqual(visibleChain(p, [p, r]).map((t) => t.id), ['q', 'p']);
        assert.equal(forest([p, r]).length, 1, 'a cycle is still drawn');
    });
});

describe('the experience context', () => {
    test('built from the visible chain only: a deleted middle table is never in it', () => {
        // b was deleted: the server re-parented c to a
        const a = derived('a', 'root');
        const c = derived('c', 'a');
        const ctx = buildExperienceContext(c, [root, a, c]);
        assert.equal(ctx.user_question, 'question of c', 'the question of the table saved from');
        assert.deepEqual(ctx.interaction.map((e) => e.content), ['question of a', 'question of c']);
        assert.deepEqual(ctx.chain, [
            { table: 'a', question: 'question of a', operations: 'groupby, aggregate' },
            { table: 'c', question: 'question of c', operations: 'groupby, aggregate' },
        ]);
        assert.deepEqual(ctx.dialog.map((e) => e.content), ['dialog of a', 'dialog of c']);
        assert.ok(!JSON.stringify(ctx).includes('of b'));
        assert.equal(ctx.context_id, 'c');
        assert.equal(ctx.source_table_id, 'a');
        assert.deepEqual(ctx.result_summary.source_tables, ['a']);
        assert.deepEqual(ctx.result_summary.output_fields, ['a', 'b']);
        assert.equal(ctx.result_summary.output_rows, 1);
    });

    test('the question is the first user prompt, else the first user entry; none hides the button', () => {
        const a = derived('a', 'root');
        a.derive.trigger.interaction = [{ from: 'data-agent', role: 'instruction', content: 'do it', displayContent: 'Do it' }, q('first words', 'clarify'), q('the prompt')];
        assert.equal(buildExperienceContext(a, [root, a]).user_question, 'the prompt');
        assert.equal(buildExperienceContext(a, [root, a]).result_summary.display_instruction, 'Do it');
        a.derive.trigger.interaction = [q('only a reply', 'clarify')];
        assert.equal(buildExperienceContext(a, [root, a]).user_question, 'only a reply');
        a.derive.trigger.interaction = [{ from: 'data-agent', role: 'instruction', content: 'x' }];
        assert.equal(buildExperienceContext(a, [root, a]), null);
        assert.equal(buildExperienceContext(root, [root]), null);
    });

    test('attempts travel as summaries, never as code', () => {
        const a = derived('a', 'root', {
            executionAttempts: [
                { kind: 'transform', attempt: 1, status: 'error', summary: 'dates were text', error: 'AttributeError', code: 'df.groupby(df.d.dt.quarter)', failed_code: 'SECRET_FAILED_CODE = 1' },
                { kind: 'repair', attempt: 2, status: 'success', summary: 'parsed dates', repair_code: 'df["d"] = pd.to_datetime(df["d"])\nSECRET_REPAIR = df.groupby("q").sum()' },
            ],
        });
        const ctx = buildExperienceContext(a, [root, a]);
        const text = JSON.stringify(ctx.execution_attempts);
        assert.doesNotMatch(text, /SECRET|groupby\(|to_datetime\(/);
        for (const at of ctx.execution_attempts) for (const k of ['code', 'failed_code', 'repair_code']) assert.ok(!(k in at), k);
        assert.equal(ctx.execution_attempts[0].failed_code_summary, '1 line');
        assert.equal(ctx.execution_attempts[1].repair_code_summary, '2 lines; groupby, aggregate, datetime');
        assert.equal(summarizeCode(''), undefined);
    });

    test('every attempt of the chain goes, named by its table; the instruction is the leaf\'s', () => {
        const a = derived('a', 'root', { executionAttempts: [{ kind: 'transform', attempt: 1, status: 'error', error: 'KeyError' }, { kind: 'repair', attempt: 2, status: 'success' }] });
        a.derive.trigger.interaction.push({ from: 'data-agent', role: 'instruction', content: 'sum by a' });
        const b = derived('b', 'a', { executionAttempts: [{ kind: 'transform', attempt: 1, status: 'success' }] });
        b.displayId = 'B table';
        b.derive.trigger.interaction.push({ from: 'data-agent', role: 'instruction', content: 'rank b' });
        const ctx = buildExperienceContext(b, [root, a, b]);
        assert.deepEqual(ctx.execution_attempts.map((x) => [x.table, x.attempt, x.status]), [['a', 1, 'error'], ['a', 2, 'success'], ['B table', 1, 'success']]);
        assert.equal(ctx.result_summary.display_instruction, 'rank b');
        assert.equal(ctx.user_question, 'question of b');
        assert.deepEqual(ctx.chain.map((x) => [x.table, x.instruction]), [['a', 'sum by a'], ['B table', 'rank b']]);
    });
});

describe('front matter written by the editor', () => {
    test('a new rule: JSON-quoted values that YAML reads back, created/updated/source', () => {
        const doc = buildDocument({ category: 'rules', title: 'ROI: "full" cost', tags: ['finance', '财务'], description: 'a: b', alwaysApply: false, body: 'Body' }, null, '2026-12-02');
        assert.equal(
            doc,
            '---\ntitle: "ROI: \\"full\\" cost"\ntags: ["finance", "财务"]\ndescription: "a: b"\nalwaysApply: false\ncreated: 2026-12-02\nupdated: 2026-12-02\nsource: manual\n---\n\nBody\n',
        );
        assert.equal(editableBody(doc), 'Body\n');
    });

    test('an edit changes only its keys and keeps the others as written', () => {
        const old = '---\ntitle: Old\ntags:\n  - a\n  - b\ntypes: [tool]\ncreated: 2026-01-01\nsource: agent\n---\n\nold body\n';
        const doc = buildDocument({ category: 'experiences', title: '', tags: ['c'], body: 'new body' }, old, '2026-12-02');
        const { front, body } = splitDocument(doc);
        assert.equal(front, 'tags: ["c"]\ntypes: [tool]\ncreated: 2026-01-01\nsource: agent\nupdated: 2026-12-02\n');
        assert.equal(body, '\nnew body\n');
        assert.equal(patchFront('a: 1\n"b c": 2\n', { 'b c': 'Yes' }), 'a: 1\nb c: "Yes"\n');
        assert.deepEqual(parseTags(' a, b，c ,, '), ['a', 'b', 'c']);
    });
});

describe('revision diff', () => {
    test('lines added and removed, the rest kept', () => {
        const ops = lineDiff('a\nb\nc\nd', 'a\nB\nc\nd\ne');
        assert.deepEqual(ops.map((o) => `${o.op}:${o.text}`), ['same:a', 'del:b', 'add:B', 'same:c', 'same:d', 'add:e']);
        assert.deepEqual(lineDiff('x', 'x').map((o) => o.op), ['same']);
    });
});

describe('search passages as plain text (web/js/snippet.js)', () => {
    const marked = (r) => r.highlights.map(([s, n]) => Array.from(r.text).slice(s, s + n).join(''));

    test('Markdown syntax goes, the marks follow their words', () => {
        const md = '## Revenue *by* region\n\n| region | **revenue** |\n|---|---:|\n| North | 10 |\n\nSee [the guide](https://x.example/a_b) and `df.groupby()`; keep order_date.\n```python\nx = 1\n```\n> - quoted _item_';
        const chars = Array.from(md);
        const at = (w) => [md.indexOf(w), Array.from(w).length];
        const r = plainPassage(md, [at('revenue'), at('Revenue'), at('guide')]);
        assert.equal(r.text, 'Revenue by region region revenue North 10 See the guide and df.groupby(); keep order_date. x = 1 quoted item');
        assert.deepEqual(marked(r), ['Revenue', 'revenue', 'guide']);
        assert.ok(chars.length > r.text.length);
        for (const ch of ['#', '*', '|', '`', '[', '](']) assert.ok(!r.text.includes(ch), ch);
    });

    test('Chinese: headings and bold go, the marks stay on their characters', () => {
        const md = '# 库存周转\n\n**周转率** = 销售成本 / 平均库存；注意用**销售成本**。';
        const r = plainPassage(md, [[md.indexOf('销售成本'), 4]]);
        assert.equal(r.text, '库存周转 周转率 = 销售成本 / 平均库存；注意用销售成本。');
        assert.deepEqual(marked(r), ['销售成本']);
    });

    test('a long passage is cut around the first mark at a word boundary, with the ends said', () => {
        const words = Array.from({ length: 80 }, (_, i) => `word${i}`);
        words[50] = 'needle';
        const text = words.join(' ');
        const w = windowed({ text, highlights: [[text.indexOf('needle'), 6]] }, 100);
        assert.ok(Array.from(w.text).length <= 100);
        assert.ok(w.cutBefore && w.cutAfter);
        assert.deepEqual(marked(w), ['needle']);
        for (const part of w.text.split(' ')) assert.ok(words.includes(part), `a whole word: ${part}`);
        const short = windowed({ text: 'short text', highlights: [] });
        assert.deepEqual(short, { text: 'short text', highlights: [], cutBefore: false, cutAfter: false });
        // CJK: cut at any character
        const zh = '库存'.repeat(150);
        const z = windowed({ text: zh, highlights: [[100, 2]] }, 50);
        assert.equal(Array.from(z.text).length, 50);
    });
});
