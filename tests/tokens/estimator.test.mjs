// The C token estimator (fcgi/domain/tokcount.c, run through the
// bench_tokcount binary built beside knowhub) against a real tokenizer:
// gpt-tokenizer's o200k_base (GPT-4o's), on the English and Chinese
// fixtures of tests/fixtures/tokens (rules, experiences, Markdown with
// code and tables). Each fixture and each language's total must be within
// +-10% of the oracle (docs/agents.md "Token budgets" gives the figures).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { encode } from 'gpt-tokenizer';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const fixtures = path.join(root, 'tests/fixtures/tokens');
const bin = path.join(path.dirname(process.env.KNOWHUB_BIN || path.join(root, 'build/knowhub')),
    'bench_tokcount');
const BOUND = 0.10;

function estimates(files) {
    const out = execFileSync(bin, files, { encoding: 'utf8' });
    return new Map(out.trim().split('\n').map((line) => {
        const [file, bytes, tokens] = line.split(' ');
        return [file, { bytes: Number(bytes), tokens: Number(tokens) }];
    }));
}

const files = fs.readdirSync(fixtures).filter((f) => f.endsWith('.md')).sort()
    .map((f) => path.join(fixtures, f));

test('the fixtures are there, several kB each, in both languages', () => {
    const names = files.map((f) => path.basename(f));
    for (const lang of ['en', 'zh'])
        assert.ok(names.filter((n) => n.startsWith(`${lang}-`)).length >= 3, `${lang} fixtures`);
    for (const f of files)
        assert.ok(fs.statSync(f).size >= 2500, `${f} holds at least 2.5 kB`);
});

test('the estimate is within 10% of o200k_base on each fixture and on each language', () => {
    const est = estimates(files);
    const totals = { en: { est: 0, oracle: 0 }, zh: { est: 0, oracle: 0 } };
    const rows = [];
    for (const f of files) {
        const oracle = encode(fs.readFileSync(f, 'utf8')).length;
        const e = est.get(f).tokens;
        const lang = path.basename(f).slice(0, 2);
        totals[lang].est += e;
        totals[lang].oracle += oracle;
        const err = e / oracle - 1;
        rows.push(`${path.basename(f)}: oracle ${oracle}, estimate ${e}, ${(err * 100).toFixed(1)}%`);
        assert.ok(Math.abs(err) <= BOUND, `${path.basename(f)}: ${e} vs ${oracle} (${(err * 100).toFixed(1)}%)`);
    }
    for (const [lang, t] of Object.entries(totals)) {
        const err = t.est / t.oracle - 1;
        rows.push(`${lang} total: oracle ${t.oracle}, estimate ${t.est}, ${(err * 100).toFixed(1)}%`);
        assert.ok(Math.abs(err) <= BOUND, `${lang} total: ${t.est} vs ${t.oracle}`);
    }
    console.log(rows.join('\n'));
});

test('the estimator sees what it is given: more text, more tokens; empty, none', () => {
    const dir = fs.mkdtempSync('/tmp/knowhub-tokcount-');
    try {
        const empty = path.join(dir, 'empty.txt');
        const one = path.join(dir, 'one.txt');
        const two = path.join(dir, 'two.txt');
        const text = fs.readFileSync(files[0], 'utf8');
        fs.writeFileSync(empty, '');
        fs.writeFileSync(one, text);
        fs.writeFileSync(two, text + text);
        const est = estimates([empty, one, two]);
        assert.equal(est.get(empty).tokens, 0);
        assert.ok(est.get(two).tokens >= 2 * est.get(one).tokens - 1);
        assert.ok(est.get(two).tokens <= 2 * est.get(one).tokens + 1);
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
});
