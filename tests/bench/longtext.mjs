// longtext.mjs: a long-text retrieval benchmark: KnowHub's lexical search over
// entries with long content, beside a plain BM25 computed by this script.
//
// Usage (Node 20, no npm packages; build knowhub first):
//   node tests/bench/longtext.mjs                        every tests/bench/longtext/*.json
//   ... [--data DIR]          another directory of data files
//   ... [--rankings LIST]     KNOWHUB_RANKING values, one stack each (default reference,bm25f,fused)
//   ... [--json FILE]         also write every figure and every question's results as JSON
//   ... [--verbose]           print every answerable question missed in the top 5
// KNOWHUB_BIN selects the binary (default build/knowhub, see tests/http/lib/stack.mjs).
//
// Data: each DIR/*.json is one set, {space, lang: "en"|"zh", entries: [{key, title,
// tags, scenario, content}], questions: [{q, answers: [keys]}]}; a question whose
// answers are [] has no answer in its set ("unanswerable"). Keys are unique per
// file, every answer key must exist and every file has its own space; otherwise
// the script exits 2 before starting anything. It also exits 2 when an entry's
// content is over the server's limit for experiences (POST /api/knowledge/limits:
// 2,000 characters today), naming every such entry.
//
// For each ranking R it starts nginx + knowhub with KNOWHUB_RANKING=R in a
// temporary directory, gives each file its space and an editor token, creates its
// entries with POST /api/knowledge, and asks every question twice, top 10 (fixed):
//   entry view  GET /api/knowledge/search?q=..&top_k=10&min_score=1&mode=lexical
//               (the results' `relevance` is recorded)
//   file view   POST /api/knowledge/search {query, max_results: 10, mode: "lexical"}
//               (its `score`; `mode` is dropped when the file view refuses it)
// then stops the stack. Beside them, "reference BM25 (script)" is Okapi BM25
// computed here over each file's entries alone (k1 = 1.2, b = 0.75, idf =
// ln(1 + (N - df + 0.5) / (df + 0.5)), one field: title, scenario and content;
// its tokenizer is described at tokenize() below); an entry scoring > 0 is found.
//
// Figures, per system and view, overall, per file and per language:
//   R@5, R@10  over answerable questions: |answers in the top k| / |answers|, averaged
//   MRR@10     over answerable questions: 1 / rank of the first answer in the top 10
//              (0 when none is there), averaged
//   FP         over unanswerable questions: the share that got at least one result
//   ms         the median client-side latency of one search (nginx included)
// The calibration tables (entry view, each ranking) drop the results whose
// relevance is below a floor and show what R@5 and FP become: how well a
// relevance floor would tell "no answer here" from a weak answer. The floors are
// the 0, 0.1, .. 0.9 quantiles of the answerable questions' top-1 relevance (or
// each distinct value when there are ten or fewer).
// The figures are reported, never judged: the exit status is 0 unless the stack or
// the data fail. Entry ids are random and ties are broken by them, so entries the
// ranking scores (nearly) alike can swap from run to run and the figures move a
// little; compare systems within one run.
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { startStack } from '../http/lib/stack.mjs';
import { createServed, dataOf } from './lib/envelope.mjs';
import { loadSets } from './lib/longtext-data.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const TOP_K = 10;

function usage(msg) {
    if (msg) console.error(`longtext.mjs: ${msg}`);
    console.error('usage: node tests/bench/longtext.mjs [--data DIR] [--rankings reference,bm25f,fused] [--json FILE] [--verbose]');
    process.exit(2);
}

function parseArgs(argv) {
    const o = { data: path.join(HERE, 'longtext'), rankings: ['reference', 'bm25f', 'fused'], json: null, verbose: false };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        const val = () => {
            if (i + 1 >= argv.length) usage(`${a} needs a value`);
            return argv[++i];
        };
        if (a === '--data') o.data = val();
        else if (a === '--rankings') o.rankings = val().split(',').map((x) => x.trim()).filter(Boolean);
        else if (a === '--json') o.json = val();
        else if (a === '--verbose' || a === '-v') o.verbose = true;
        else if (a === '--help' || a === '-h') usage();
        else usage(`unknown argument ${a}`);
    }
    if (!o.rankings.length) usage('--rankings is empty');
    if (new Set(o.rankings).size !== o.rankings.length) usage('--rankings names one ranking twice');
    return o;
}

// ---------------------------------------------------------------- data

/** Every DIR/*.json, checked (lib/longtext-data.mjs); exits 2 on bad data. */
function loadData(dir) {
    try {
        return loadSets(dir);
    } catch (e) {
        if (!e.badData) throw e;
        console.error(`longtext.mjs: bad data: ${e.message}`);
        process.exit(2);
    }
}

/** The line that states the data. */
function describeData(sets) {
    const entries = sets.flatMap((s) => s.entries);
    const questions = sets.flatMap((s) => s.questions);
    const answerable = questions.filter((q) => q.answers.length).length;
    const meanLen = entries.reduce((n, e) => n + [...e.content].length, 0) / entries.length;
    const langs = [...new Set(sets.map((s) => s.lang))].map((l) => `${l} ${sets.filter((s) => s.lang === l).length}`).join(', ');
    return `data: ${sets.length} files (${langs}), ${entries.length} entries, ${questions.length} questions ` +
        `(${answerable} answerable, ${questions.length - answerable} unanswerable), mean content length ${Math.round(meanLen)} characters`;
}

// ---------------------------------------------------------------- the reference BM25

// Standard English stop words (the reference tokenizer drops them); the last line is what
// remains of a contraction once the apostrophe splits it ("doesn't" -> "doesn").
const STOP = new Set(`
a about above after again against all also am an and any are as at be because been before being below between
both but by can cannot could did do does doing down during each either few for from further get got had has
have having he her here hers herself him himself his how however i if in into is it its itself just let may me
might more most must my myself neither no nor not now of off on once only or other ought our ours ourselves
out over own same shall she should so some such than that the their theirs them themselves then there these
they this those through to too under until up upon very via was we were what when where whether which while
who whom whose why will with within without would you your yours yourself yourselves
aren couldn didn doesn don hadn hasn haven isn mustn shouldn wasn weren wouldn
`.split(/\s+/).filter(Boolean));

const HAN = /\p{Script=Han}/u;
// Runs of letters, digits and _; a Han character ends a word (so "roi分析" is the word "roi" and the Han run "分析").
const RUN_RE = /[\p{L}\p{N}_]+/gu;
const HAN_SPLIT_RE = /(\p{Script=Han}+)/u;

/**
 * The reference tokenizer: lower-case; words are runs of [\p{L}\p{N}_] cut at
 * every Han character; words of 2 characters or fewer and stop words are
 * dropped; each Han run becomes its overlapping character bigrams (a lone Han
 * character stays a unigram). No stemming.
 */
function tokenize(text) {
    const out = [];
    for (const run of text.toLowerCase().match(RUN_RE) || []) {
        for (const part of run.split(HAN_SPLIT_RE)) {
            if (!part) continue;
            const chars = [...part];
            if (HAN.test(chars[0])) {
                if (chars.length === 1) out.push(part);
                for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i] + chars[i + 1]);
            } else if (chars.length > 2 && !STOP.has(part)) {
                out.push(part);
            }
        }
    }
    return out;
}

/** The BM25 index of one file's entries: term frequencies, lengths, document frequencies. */
function bm25Index(entries) {
    const docs = entries.map((e) => {
        const toks = tokenize(`${e.title}\n${e.scenario || ''}\n${e.content}`);
        const tf = new Map();
        for (const t of toks) tf.set(t, (tf.get(t) || 0) + 1);
        return { key: e.key, tf, len: toks.length };
    });
    const df = new Map();
    for (const d of docs) for (const t of d.tf.keys()) df.set(t, (df.get(t) || 0) + 1);
    const avgdl = docs.reduce((n, d) => n + d.len, 0) / docs.length || 1;
    return { docs, df, avgdl, n: docs.length };
}

/** The top 10 of one question: [{key, score}], score > 0, ties in file order. */
function bm25Search(index, q, k1 = 1.2, b = 0.75) {
    const terms = [...new Set(tokenize(q))];
    const scored = [];
    index.docs.forEach((d, i) => {
        let score = 0;
        for (const t of terms) {
            const f = d.tf.get(t);
            if (!f) continue;
            const df = index.df.get(t);
            const idf = Math.log(1 + (index.n - df + 0.5) / (df + 0.5));
            score += idf * (f * (k1 + 1)) / (f + k1 * (1 - b + b * d.len / index.avgdl));
        }
        if (score > 0) scored.push({ key: d.key, score, i });
    });
    scored.sort((x, y) => y.score - x.score || x.i - y.i);
    return scored.slice(0, TOP_K).map(({ key, score }) => ({ key, score: Number(score.toFixed(4)) }));
}

/** Every question of every file through the reference BM25: rows as runKnowHub makes them. */
function runReference(sets) {
    const rows = [];
    for (const set of sets) {
        const index = bm25Index(set.entries);
        for (const q of set.questions) {
            const t0 = performance.now();
            const got = bm25Search(index, q.q);
            rows.push(makeRow(set, q, got, performance.now() - t0));
        }
    }
    return rows;
}

// ---------------------------------------------------------------- KnowHub

/** One question's row: what was asked, what came back, the rank of the first answer. */
function makeRow(set, q, got, ms, error = null) {
    const want = new Set(q.answers);
    const idx = got.findIndex((g) => want.has(g.key));
    const row = { file: set.file, lang: set.lang, q: q.q, answers: q.answers, got, rank: idx < 0 ? 0 : idx + 1, ms: Number(ms.toFixed(2)) };
    if (error) row.error = error;
    return row;
}

/**
 * Exits 2 (a data failure) when an entry's content is over the server's
 * experiences limit (POST /api/knowledge/limits), naming every such entry.
 */
async function checkLimits(s, sets) {
    const token = s.token(sets[0].space, 'reader', 'longtext-bench');
    const r = await s.api('POST', '/api/knowledge/limits', { token, body: {} });
    let max;
    try {
        max = dataOf(r, 'POST /api/knowledge/limits').limits?.experiences;
    } catch {
        return; /* no limits endpoint: the creates will tell */
    }
    if (!Number.isInteger(max)) return;
    const over = [];
    for (const set of sets)
        for (const e of set.entries) {
            const len = [...e.content].length;
            if (len > max) over.push(`${set.file}:${e.key} (${len})`);
        }
    if (over.length) {
        await s.stop().catch(() => {});
        badData(`${over.length} entries have content over the server's ${max}-character limit: ${over.join(', ')}`);
    }
}

/** Creates a file's entries in its space; returns the map id -> key. */
async function createEntries(s, token, set, held) {
    const idToKey = new Map();
    let admin = null;
    const adminToken = () => (admin ??= s.token(set.space, 'admin', 'longtext-bench-reviewer'));
    for (const e of set.entries) {
        const body = {
            title: e.title,
            scenario: e.scenario || '',
            content: e.content,
            tags: e.tags || [],
            category: 'experiences',
            agent_id: 'longtext_bench',
        };
        idToKey.set(await createServed(s, token, adminToken, body, `${set.file}/${e.key}`, held), e.key);
    }
    return idToKey;
}

// The two views: how to ask, and which field of a result is its score.
const VIEWS = {
    entry: {
        score: 'relevance',
        ask: (s, token, q, withMode) => {
            const params = new URLSearchParams({ q, top_k: String(TOP_K), min_score: '1' });
            if (withMode) params.set('mode', 'lexical');
            return s.api('GET', `/api/knowledge/search?${params}`, { token });
        },
    },
    file: {
        score: 'score',
        ask: (s, token, q, withMode) => {
            const body = { query: q, max_results: TOP_K };
            if (withMode) body.mode = 'lexical';
            return s.api('POST', '/api/knowledge/search', { token, body });
        },
    },
};

/**
 * Asks one question in one view; state.withMode turns false (for good) the
 * first time the view refuses `mode` and answers without it.
 * Returns {got, ms} or {error, ms}.
 */
async function askOne(s, token, view, q, idToKey, state) {
    const v = VIEWS[view];
    let t0 = performance.now();
    let r = await v.ask(s, token, q, state.withMode);
    let ms = performance.now() - t0;
    let d;
    try {
        d = dataOf(r, `${view} view`);
    } catch (e) {
        if (!state.withMode || e.code !== 'INVALID_REQUEST' || !/mode/i.test(e.message)) return { error: e.message, ms };
        t0 = performance.now();
        r = await v.ask(s, token, q, false);
        ms = performance.now() - t0;
        try {
            d = dataOf(r, `${view} view`);
        } catch (e2) {
            return { error: e2.message, ms };
        }
        state.withMode = false;
        state.note = `the ${view} view refused mode (${e.message}): asked without it`;
    }
    const got = (d.results || []).slice(0, TOP_K).map((x) => {
        const g = { key: idToKey.get(x.id) ?? `?${x.id ?? x.path}`, score: x[v.score] ?? null };
        if ('weak' in x) g.weak = x.weak;
        return g;
    });
    return { got, ms };
}

/** One stack with KNOWHUB_RANKING=ranking: every file's entries and questions, both views. */
async function runKnowHub(ranking, sets) {
    const s = await startStack({ KNOWHUB_RANKING: ranking });
    const out = { entry: { rows: [], errors: 0 }, file: { rows: [], errors: 0 } };
    const state = { entry: { withMode: true }, file: { withMode: true } };
    try {
        await checkLimits(s, sets);
        const t0 = performance.now();
        const work = [];
        const held = [];
        for (const set of sets) {
            const token = s.token(set.space, 'editor', 'longtext-bench');
            work.push({ set, token, idToKey: await createEntries(s, token, set, held) });
        }
        const created = work.reduce((n, w) => n + w.idToKey.size, 0);
        const t1 = performance.now();
        for (const view of Object.keys(VIEWS)) {
            for (const { set, token, idToKey } of work) {
                for (const q of set.questions) {
                    const a = await askOne(s, token, view, q.q, idToKey, state[view]);
                    if (a.error) out[view].errors++;
                    out[view].rows.push(makeRow(set, q, a.got || [], a.ms, a.error));
                }
            }
        }
        const t2 = performance.now();
        console.log(`KnowHub ${ranking}: created ${created} entries in ${((t1 - t0) / 1000).toFixed(1)} s, ` +
            `asked ${out.entry.rows.length} questions x 2 views in ${((t2 - t1) / 1000).toFixed(1)} s`);
        if (held.length) console.log(`  held for review, then approved by an admin: ${held.join('; ')}`);
        for (const view of Object.keys(VIEWS)) {
            if (state[view].note) console.log(`  note: ${state[view].note}`);
            out[view].mode_sent = state[view].withMode;
            if (out[view].errors) {
                const first = out[view].rows.find((r) => r.error);
                console.log(`  ${view} view: ${out[view].errors} searches failed (counted as no result), first: ${first.error}`);
            }
        }
    } finally {
        await s.stop();
    }
    return out;
}

// ---------------------------------------------------------------- figures

const median = (xs) => {
    if (!xs.length) return null;
    const a = [...xs].sort((x, y) => x - y);
    const m = a.length >> 1;
    return a.length % 2 ? a[m] : (a[m - 1] + a[m]) / 2;
};

/** |answers in the first k keys| / |answers|. */
function recallAt(row, k) {
    const want = new Set(row.answers);
    return row.got.slice(0, k).filter((g) => want.has(g.key)).length / want.size;
}

/** R@5, R@10, MRR@10 over the answerable rows; FP over the unanswerable; median latency. */
function figures(rows, timed = true) {
    const ans = rows.filter((r) => r.answers.length);
    const un = rows.filter((r) => !r.answers.length);
    const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
    return {
        n: rows.length,
        answerable: ans.length,
        unanswerable: un.length,
        recall5: mean(ans.map((r) => recallAt(r, 5))),
        recall10: mean(ans.map((r) => recallAt(r, 10))),
        mrr10: mean(ans.map((r) => (r.rank ? 1 / r.rank : 0))),
        fp: un.length ? un.filter((r) => r.got.length > 0).length / un.length : null,
        median_ms: timed ? median(rows.map((r) => r.ms)) : null,
    };
}

/** The groups of the tables: all, then each file, then each language. */
function groupsOf(sets) {
    const groups = [{ name: 'all', test: () => true }];
    for (const s of sets) groups.push({ name: `file ${s.file}`, test: (r) => r.file === s.file });
    for (const l of [...new Set(sets.map((s) => s.lang))].sort()) groups.push({ name: `lang ${l}`, test: (r) => r.lang === l });
    return groups;
}

const pad = (s, w) => String(s).padEnd(w);
const lpad = (s, w) => String(s).padStart(w);
const f3 = (x) => (x === null || x === undefined ? '-' : x.toFixed(3));
const f1 = (x) => (x === null || x === undefined ? '-' : x.toFixed(1));
/** A score for reading: 4 significant digits (33.00000000000001 -> 33). */
const num = (x) => (typeof x === 'number' ? String(Number(x.toPrecision(4))) : String(x));

/** One table per group, the systems as rows. */
function printTables(systems, groups) {
    const head = `${pad('system', 26)}${pad('view', 7)}${lpad('n', 5)}${lpad('ans', 5)}${lpad('unans', 6)}` +
        `${lpad('R@5', 8)}${lpad('R@10', 8)}${lpad('MRR@10', 8)}${lpad('FP', 8)}${lpad('ms', 8)}`;
    for (const g of groups) {
        console.log(`\n== ${g.name}`);
        if (!systems[0].figures[g.name].n) {
            console.log('(no questions)');
            continue;
        }
        console.log(head);
        console.log('-'.repeat(head.length));
        for (const sys of systems) {
            const f = sys.figures[g.name];
            console.log(`${pad(sys.name, 26)}${pad(sys.view, 7)}${lpad(f.n, 5)}${lpad(f.answerable, 5)}${lpad(f.unanswerable, 6)}` +
                `${lpad(f3(f.recall5), 8)}${lpad(f3(f.recall10), 8)}${lpad(f3(f.mrr10), 8)}${lpad(f3(f.fp), 8)}${lpad(f1(f.median_ms), 8)}`);
        }
    }
    console.log('\nR@k: share of an answerable question\'s answers in the top k, averaged; MRR@10: 1/rank of the first answer (0 beyond 10);');
    console.log('FP: share of unanswerable questions with at least one result; ms: median client-side latency of one search.');
}

// ---------------------------------------------------------------- calibration

/** The value at quantile p of sorted xs (nearest rank, lower). */
const quantile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];

/** R@5 and FP when results with a score below t are dropped, for ~10 quantile thresholds. */
function calibrate(rows) {
    const top1 = (r) => (r.got.length ? r.got[0].score : null);
    const ans = rows.filter((r) => r.answers.length);
    const un = rows.filter((r) => !r.answers.length);
    const ansTop = ans.map(top1).filter((x) => typeof x === 'number').sort((a, b) => a - b);
    const unTop = un.map(top1).filter((x) => typeof x === 'number').sort((a, b) => a - b);
    if (!ansTop.length) return { error: 'no answerable question got a numeric relevance' };
    // Ten or fewer distinct values: each of them; more: the 0, 0.1, .. 0.9 quantiles.
    const distinct = [...new Set(ansTop)];
    const points = [];
    if (distinct.length <= 10) {
        for (const t of distinct) points.push({ p: ansTop.indexOf(t) / ansTop.length, t });
    } else {
        for (let i = 0; i < 10; i++) {
            const t = quantile(ansTop, i / 10);
            if (!points.some((x) => x.t === t)) points.push({ p: ansTop.indexOf(t) / ansTop.length, t });
        }
    }
    const cut = (r, t) => ({ ...r, got: r.got.filter((g) => typeof g.score !== 'number' || g.score >= t) });
    const table = [{ p: null, t: null }, ...points].map(({ p, t }) => {
        const a = t === null ? ans : ans.map((r) => cut(r, t));
        const u = t === null ? un : un.map((r) => cut(r, t));
        return {
            quantile: p,
            threshold: t,
            recall5: a.length ? a.reduce((n, r) => n + recallAt(r, 5), 0) / a.length : null,
            answerable_with_results: a.length ? a.filter((r) => r.got.length).length / a.length : null,
            fp: u.length ? u.filter((r) => r.got.length).length / u.length : null,
        };
    });
    const spread = (xs) => (xs.length ? { min: xs[0], median: median(xs), max: xs[xs.length - 1], n: xs.length } : null);
    const chosen = distinct.length <= 10 ? `each of the ${distinct.length} distinct values` : 'the 0, 0.1, .. 0.9 quantiles (repeats dropped)';
    return { answerable_top1: spread(ansTop), unanswerable_top1: spread(unTop), thresholds: `${chosen} of the answerable top-1 relevance`, table };
}

/** Prints one ranking's calibration. */
function printCalibration(name, cal) {
    console.log(`\n== calibration: ${name}, entry view (relevance floor)`);
    if (cal.error) {
        console.log(`  n/a: ${cal.error}`);
        return;
    }
    const sp = (x) => (x ? `min ${num(x.min)}, median ${num(x.median)}, max ${num(x.max)} (n=${x.n})` : 'none (no result at all)');
    console.log(`  top-1 relevance, answerable:   ${sp(cal.answerable_top1)}`);
    console.log(`  top-1 relevance, unanswerable: ${sp(cal.unanswerable_top1)}`);
    console.log(`  floors: ${cal.thresholds}; quantile: the share of answerable top-1 values below the floor`);
    const head = `  ${lpad('quantile', 9)}${lpad('floor', 12)}${lpad('R@5', 8)}${lpad('ans>0', 8)}${lpad('FP', 8)}`;
    console.log(head);
    for (const r of cal.table) {
        console.log(`  ${lpad(r.quantile === null ? 'none' : r.quantile.toFixed(2), 9)}${lpad(r.threshold === null ? '-' : num(r.threshold), 12)}` +
            `${lpad(f3(r.recall5), 8)}${lpad(f3(r.answerable_with_results), 8)}${lpad(f3(r.fp), 8)}`);
    }
    console.log('  ans>0: share of answerable questions left with at least one result.');
}

// ---------------------------------------------------------------- main

/** Prints each answerable question with no answer in the top 5. */
function printMisses(systems) {
    for (const sys of systems) {
        const misses = sys.rows.filter((r) => r.answers.length && recallAt(r, 5) === 0);
        console.log(`\nmisses: ${sys.name}, ${sys.view} view: ${misses.length} answerable questions with no answer in the top 5`);
        for (const r of misses) {
            const first = r.got[0] ? `${r.got[0].key} (${num(r.got[0].score)}${r.got[0].weak ? ', weak' : ''})` : '(nothing)';
            console.log(`  [${r.file}] ${r.q}\n      want ${r.answers.join(',')}${r.rank ? ` (first at rank ${r.rank})` : ''}; first came ${first}`);
        }
    }
}

async function main() {
    const o = parseArgs(process.argv.slice(2));
    const sets = loadData(o.data);
    const rel = path.relative(process.cwd(), path.resolve(o.data));
    console.log(`longtext bench: ${rel && !rel.startsWith('..') ? rel : path.resolve(o.data)}: ${sets.map((s) => s.file).join(', ')}`);
    console.log(describeData(sets));

    const systems = [{ name: 'reference BM25 (script)', view: '-', rows: runReference(sets), timed: false }];
    const knowhub = {};
    for (const ranking of o.rankings) knowhub[ranking] = await runKnowHub(ranking, sets);
    for (const view of Object.keys(VIEWS))
        for (const ranking of o.rankings)
            systems.push({ name: `KnowHub ${ranking}`, view, ranking, rows: knowhub[ranking][view].rows, timed: true, errors: knowhub[ranking][view].errors });

    const groups = groupsOf(sets);
    for (const sys of systems) {
        sys.figures = {};
        for (const g of groups) sys.figures[g.name] = figures(sys.rows.filter(g.test), sys.timed);
    }
    printTables(systems, groups);

    const calibration = {};
    for (const ranking of o.rankings) {
        calibration[ranking] = calibrate(knowhub[ranking].entry.rows);
        printCalibration(`KnowHub ${ranking}`, calibration[ranking]);
    }
    if (o.verbose) printMisses(systems);

    if (o.json) {
        const out = {
            date: new Date().toISOString(),
            top_k: TOP_K,
            data: {
                dir: path.resolve(o.data),
                summary: describeData(sets),
                files: sets.map((s) => ({
                    file: s.file, space: s.space, lang: s.lang, entries: s.entries.length,
                    answerable: s.questions.filter((q) => q.answers.length).length,
                    unanswerable: s.questions.filter((q) => !q.answers.length).length,
                })),
            },
            rankings: o.rankings,
            systems: systems.map((s) => ({
                name: s.name, view: s.view, ranking: s.ranking ?? null, errors: s.errors ?? 0,
                mode_sent: s.ranking ? knowhub[s.ranking][s.view].mode_sent : null,
                figures: s.figures, questions: s.rows,
            })),
            calibration,
        };
        fs.writeFileSync(o.json, JSON.stringify(out, null, 1) + '\n');
        console.log(`\nfigures written to ${o.json}`);
    }
}

main().catch((e) => {
    console.error(`longtext.mjs: ${e.stack || e.message}`);
    process.exit(1);
});
