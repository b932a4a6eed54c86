// The local contradiction detector's benchmark: every pair of
// tests/conflict/pairs.jsonl through build/conflict_eval (fcgi/domain/conflict.c),
// then per split and overall: accuracy, precision and recall per label, the
// false-positive rate of "contradiction" on the pairs that are none, and how
// many same-entity unrelated pairs were called a contradiction (a supersede
// would be proposed). Figures only: it never fails on them.
//   node tests/conflict/bench.mjs [--split dev|heldout|heldout2..6] [--misses]
// KNOWHUB_BIN (the knowhub binary) tells where the build is; else build/.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
export const LABELS = ['duplicate', 'contradiction', 'refinement', 'unrelated'];
export const PAIRS = path.join(here, 'pairs.jsonl');
/** dev tunes; heldout and heldout2..6 were each written before the
 * detector (as it then was) met them, and only measure (README.md). */
export const SPLITS = ['dev', 'heldout', 'heldout2', 'heldout3', 'heldout4', 'heldout5', 'heldout6', 'heldout7', 'heldout8'];

export function evalBinary() {
    return path.join(path.dirname(process.env.KNOWHUB_BIN || path.join(root, 'build/knowhub')),
        'conflict_eval');
}

/** The pairs, and the detector's verdict and reason on each. */
export function run(file = PAIRS) {
    const text = fs.readFileSync(file, 'utf8');
    const pairs = text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l));
    const out = execFileSync(evalBinary(), [], { input: pairs.map((p) => JSON.stringify(p)).join('\n') + '\n',
        encoding: 'utf8', maxBuffer: 64 << 20 });
    const lines = out.split('\n').filter((l) => l !== '');
    return pairs.map((p, i) => {
        const [n, verdict, , , reason] = (lines[i] || '').split('\t');
        return { ...p, line: Number(n), verdict, reason };
    });
}

/** The figures of a list of judged pairs. */
export function figures(rows) {
    const f = { pairs: rows.length, correct: rows.filter((r) => r.verdict === r.label).length, labels: {} };
    f.accuracy = rows.length ? f.correct / rows.length : 0;
    for (const l of LABELS) {
        const tp = rows.filter((r) => r.verdict === l && r.label === l).length;
        const called = rows.filter((r) => r.verdict === l).length;
        const actual = rows.filter((r) => r.label === l).length;
        f.labels[l] = { tp, called, actual, precision: called ? tp / called : null,
            recall: actual ? tp / actual : null };
    }
    const neg = rows.filter((r) => r.label !== 'contradiction');
    const fp = neg.filter((r) => r.verdict === 'contradiction').length;
    f.contradiction_fp = { fp, of: neg.length, rate: neg.length ? fp / neg.length : 0 };
    const same = rows.filter((r) => r.label === 'unrelated' && /same-entity/.test(r.note || ''));
    f.same_entity = { pairs: same.length, contradiction: same.filter((r) => r.verdict === 'contradiction').length,
        duplicate: same.filter((r) => r.verdict === 'duplicate').length };
    return f;
}

const num = (x) => (x === null ? '-' : x.toFixed(2));

export function report(name, f) {
    const lines = [`${name}: ${f.pairs} pairs, accuracy ${num(f.accuracy)} (${f.correct}/${f.pairs})`];
    for (const l of LABELS) {
        const x = f.labels[l];
        lines.push(`  ${l.padEnd(13)} precision ${num(x.precision)} (${x.tp}/${x.called})  recall ${num(x.recall)} (${x.tp}/${x.actual})`);
    }
    lines.push(`  contradiction false positives ${f.contradiction_fp.fp}/${f.contradiction_fp.of} (rate ${num(f.contradiction_fp.rate)})`);
    lines.push(`  same-entity unrelated pairs called contradiction ${f.same_entity.contradiction}/${f.same_entity.pairs}, duplicate ${f.same_entity.duplicate}/${f.same_entity.pairs}`);
    return lines.join('\n');
}

function main() {
    const args = process.argv.slice(2);
    const only = args.includes('--split') ? args[args.indexOf('--split') + 1] : null;
    const t0 = process.hrtime.bigint();
    const rows = run();
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const splits = only ? [only] : SPLITS;
    for (const s of splits)
        console.log(report(s, figures(rows.filter((r) => r.split === s))));
    if (!only)
        console.log(report('overall', figures(rows)));
    console.log(`${rows.length} pairs judged in ${ms.toFixed(0)} ms (with the process start)`);
    if (args.includes('--misses'))
        for (const r of rows.filter((x) => x.verdict !== x.label && (!only || x.split === only)))
            console.log(`MISS ${r.split} line ${r.line}: ${r.label} -> ${r.verdict} (${r.note}): ${r.reason}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url))
    main();
