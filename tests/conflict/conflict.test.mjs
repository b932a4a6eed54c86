// The local contradiction detector's benchmark (tests/conflict/bench.mjs on
// tests/conflict/pairs.jsonl through build/conflict_eval). It checks that the
// benchmark runs and that every pair gets a verdict, and prints the figures
// (docs/conflicts.md "The local detector" gives them); it never fails on them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LABELS, SPLITS, figures, report, run } from './bench.mjs';

const HAN = /[\u4e00-\u9fff]/;

test('the labelled pairs: 200+, en and zh about 2:1, both splits, every label, hard negatives', () => {
    const rows = run();
    assert.ok(rows.length >= 200, `${rows.length} pairs`);
    const zh = rows.filter((r) => HAN.test(r.a.content + r.b.content)).length;
    assert.ok(zh >= rows.length / 4 && zh <= rows.length / 2, `${zh} Chinese pairs of ${rows.length}`);
    for (const split of SPLITS) {
        const part = rows.filter((r) => r.split === split);
        const second = split !== 'dev' && split !== 'heldout';
        assert.ok(part.length >= (second ? 40 : 100), `${split}: ${part.length}`);
        for (const l of LABELS)
            assert.ok(part.filter((r) => r.label === l).length >= (second ? 3 : 15), `${split}: ${l}`);
    }
    assert.ok(rows.filter((r) => r.split === 'heldout2' && /same-entity/.test(r.note)).length >= 30,
        'heldout2: same-entity unrelated pairs');
    assert.ok(rows.every((r) => SPLITS.includes(r.split) && LABELS.includes(r.label)));
    assert.ok(rows.every((r) => typeof r.note === 'string' && r.note !== ''), 'every pair has a note');
    assert.ok(rows.filter((r) => /same-entity/.test(r.note)).length >= 20, 'same-entity unrelated pairs');
    const keys = rows.map((r) => JSON.stringify([r.a, r.b]));
    assert.equal(new Set(keys).size, rows.length, 'no pair twice');
});

test('every pair gets a verdict and a reason; the figures per split are printed', () => {
    const rows = run();
    for (const r of rows) {
        assert.ok(LABELS.includes(r.verdict), `line ${r.line}: ${r.verdict}`);
        assert.ok(r.reason && r.reason.length > 10, `line ${r.line}: reason`);
    }
    const lines = [];
    for (const split of SPLITS)
        lines.push(report(split, figures(rows.filter((r) => r.split === split))));
    lines.push(report('overall', figures(rows)));
    const h = figures(rows.filter((r) => r.split === 'heldout'));
    const c = h.labels.contradiction;
    lines.push(`heldout contradiction: precision ${c.precision.toFixed(2)} recall ${c.recall.toFixed(2)} ` +
        `false-positive rate ${h.contradiction_fp.rate.toFixed(2)} (${h.contradiction_fp.fp}/${h.contradiction_fp.of})`);
    console.log(lines.join('\n'));
});

// The bars on the set kept in the repository (issue 25; docs/conflicts.md
// "Measured figures"): contradiction precision at least 0.9 at recall at least
// 0.6, and no unrelated pair that shares an entity called a contradiction (a
// contradiction queues a conflict item whose decision may be a supersede). A
// new held-out set is committed and run before any change made for it; should
// its first run break a bar, that run is the figure docs/conflicts.md reports,
// and the change it calls for is judged on the next set.
test('the bars on the whole set: precision >= 0.9 at recall >= 0.6, no same-entity pair called a contradiction', () => {
    const f = figures(run());
    const c = f.labels.contradiction;
    assert.ok(c.precision >= 0.9, `precision ${c.precision}`);
    assert.ok(c.recall >= 0.6, `recall ${c.recall}`);
    assert.equal(f.same_entity.contradiction, 0, `${f.same_entity.contradiction} of ${f.same_entity.pairs} same-entity pairs called a contradiction`);
});
