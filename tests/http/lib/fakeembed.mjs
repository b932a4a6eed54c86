// fakeembed.mjs: a fake OpenAI-compatible embeddings server on loopback for the
// tests (the only fake besides fakellm.mjs). It answers POST /v1/embeddings
// with deterministic vectors from a small hashed bag of concepts (concepts.mjs,
// zh/en synonym groups), in a mode the test sets:
//   const emb = await startFakeEmbed({ dim: 64 });
//   startStack({ KNOWHUB_EMBED_URL: emb.url, KNOWHUB_EMBED_MODEL: 'model-a' })
//   emb.mode('down');          // ok, down (503), slow (35 s or opts.delayMs), lie-count,
//                              // lie-dim, lie-nan, nonjson, 401, 429, wordy (a 500 whose
//                              // message is WORDY: 1,445 bytes of Chinese after 5 of ASCII)
//   emb.maxBatch = 8;          // more inputs than that -> 413
//   emb.dimFor = { 'model-b': 32 };
//   emb.calls                  // [{model, inputs, authorization, path, method, encoding_format}]
//   await emb.close();
// embed(text, dim, model) is exported so tests can compute the expected vectors.
//
// A text's vector: each concept found (English phrases after light stemming,
// Chinese terms as substrings, longest match first) adds a pseudo-random unit
// vector seeded by the concept id, weight 1; each other English word of 3+
// letters and each Chinese bigram left uncovered adds a hashed unit vector,
// weight 0.35 (stop words excluded); each feature counts once per text. The
// model name seeds a fixed permutation and sign flip of the coordinates (so
// two models give different vectors with the same geometry); the sum is
// normalised. A text with no feature gets a fixed non-zero vector.
import http from 'node:http';
import { CONCEPTS } from './concepts.mjs';

export const UNKNOWN_WEIGHT = 0.35;

// ---------- hashing and pseudo-random vectors ----------

function fnv1a(str) {
    let h = 0x811c9dc5;
    for (const b of Buffer.from(str, 'utf8')) {
        h ^= b;
        h = Math.imul(h, 0x01000193) >>> 0;
    }
    return h >>> 0;
}

function xorshift(seedStr) {
    let s = fnv1a(seedStr) || 0x9e3779b9;
    const next = () => {
        s ^= s << 13;
        s >>>= 0;
        s ^= s >>> 17;
        s ^= s << 5;
        s >>>= 0;
        return s / 4294967296;
    };
    for (let i = 0; i < 8; i++) next(); // warm-up: similar seeds drift apart
    return next;
}

const unitCache = new Map();

/** A deterministic pseudo-random unit vector (sum of 4 uniforms ~ gaussian-ish). */
function unitVector(seedStr, dim) {
    const key = `${dim}\u0000${seedStr}`;
    let v = unitCache.get(key);
    if (v) return v;
    const next = xorshift(seedStr);
    v = new Float64Array(dim);
    let n = 0;
    for (let i = 0; i < dim; i++) {
        v[i] = next() + next() + next() + next() - 2;
        n += v[i] * v[i];
    }
    n = Math.sqrt(n) || 1;
    for (let i = 0; i < dim; i++) v[i] /= n;
    if (unitCache.size > 200000) unitCache.clear();
    unitCache.set(key, v);
    return v;
}

const modelCache = new Map();

/** The model's fixed transform: a permutation of the coordinates and a sign per coordinate. */
function modelTransform(model, dim) {
    const key = `${dim}\u0000${model}`;
    let t = modelCache.get(key);
    if (t) return t;
    const next = xorshift(`model:${model}`);
    const perm = Array.from({ length: dim }, (_, i) => i);
    for (let i = dim - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        [perm[i], perm[j]] = [perm[j], perm[i]];
    }
    const sign = Array.from({ length: dim }, () => (next() < 0.5 ? -1 : 1));
    t = { perm, sign };
    modelCache.set(key, t);
    return t;
}

/** The message of mode 'wordy': cut at any byte count not 5 + 3k, it splits a character. */
export const WORDY = 'Err: ' + '嵌入服务暂时不可用，请稍后再试。'.repeat(30);

// ---------- text analysis ----------

const STOP_EN = new Set(
    `the and for with from that this these those into onto are was were been being have has had not but you your
    our its their them they then than when what which who whom how why can could should would will may might must
    all any each some more most other such only also very just one two about over after before use using used via
    etc there here his her she him out off own same too get got let does did doing done make made want need like
    way ways data thing things something way please within without while because same both either neither
    whether every much many few lot lots new old per yet still again`
        .split(/\s+/)
        .filter(Boolean),
);

// Generic Chinese words: they cover their characters but add nothing.
const STOP_ZH = [
    '数据', '使用', '方法', '如何', '怎么', '怎样', '进行', '可以', '需要', '一个', '问题', '什么', '时候',
    '如果', '然后', '因为', '所以', '这个', '那个', '没有', '不是', '我们', '你们', '他们', '以及', '或者',
    '并且', '其中', '通过', '对于', '关于', '已经', '应该', '能够', '时候', '一些', '这些', '那些', '所有',
];
const STOP_ZH_CHARS = new Set([...'的了和是在把将对与及或也就都而被让给从到这那个中上下为以用等吗呢啊我你他她它们其之于得地着过很再又']);

const CJK_RE = /[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]/;

/** Light stemming: strip -ies/-ing/-ed/-es/-ly/-s (twice at most), undouble, drop a final e. */
export function stem(word) {
    const once = (w) => {
        if (w.length >= 5 && w.endsWith('ies')) return w.slice(0, -3) + 'y';
        if (w.length >= 6 && w.endsWith('ing')) return undouble(w.slice(0, -3));
        if (w.length >= 5 && w.endsWith('ed')) return undouble(w.slice(0, -2));
        if (w.length >= 5 && w.endsWith('es')) return w.slice(0, -2);
        if (w.length >= 6 && w.endsWith('ly') && !w.endsWith('ply')) return w.slice(0, -2);
        if (w.length >= 4 && w.endsWith('s') && !/(ss|us|is)$/.test(w)) return w.slice(0, -1);
        return w;
    };
    const undouble = (w) => (w.length > 3 && /([b-df-hj-kmnp-rtv-y])\1$/.test(w) ? w.slice(0, -1) : w);
    let w = once(word);
    if (w !== word) w = once(w);
    if (w.length >= 4 && w.endsWith('e') && !w.endsWith('ee')) w = w.slice(0, -1);
    return w;
}

function tokens(text) {
    return text.match(/[a-z0-9]+/g) || [];
}

function normalise(text) {
    return String(text ?? '')
        .normalize('NFKC')
        .toLowerCase();
}

// ---------- the compiled lexicon ----------

const LEX = (() => {
    const en = new Map(); // stemmed phrase -> Set(concept id)
    const zh = new Map(); // term -> Set(concept id) (null id: a stop word)
    let maxLen = 1;
    for (const group of CONCEPTS) {
        const id = group[0];
        for (const term of group) {
            const t = normalise(term);
            if (CJK_RE.test(t)) {
                if (!zh.has(t)) zh.set(t, new Set());
                zh.get(t).add(id);
            } else {
                const key = tokens(t).map(stem).join(' ');
                if (!key) continue;
                if (!en.has(key)) en.set(key, new Set());
                en.get(key).add(id);
                maxLen = Math.max(maxLen, key.split(' ').length);
            }
        }
    }
    for (const s of STOP_ZH) if (!zh.has(s)) zh.set(s, null);
    const zhTerms = [...zh.entries()].sort((a, b) => b[0].length - a[0].length || (a[0] < b[0] ? -1 : 1));
    return { en, zhTerms, maxLen };
})();

/**
 * The features of a text: {concepts: Set(concept id), words: Set(unknown feature)}.
 * Exported for tests and for looking at why two texts are (not) close.
 */
export function features(text) {
    const t = normalise(text);
    const concepts = new Set();
    const words = new Set();

    // English: longest phrase first at each position.
    const toks = tokens(t);
    const stems = toks.map(stem);
    for (let i = 0; i < toks.length; ) {
        let matched = 0;
        for (let n = Math.min(LEX.maxLen, toks.length - i); n >= 1; n--) {
            const ids = LEX.en.get(stems.slice(i, i + n).join(' '));
            if (ids) {
                for (const id of ids) concepts.add(id);
                matched = n;
                break;
            }
        }
        if (matched) {
            i += matched;
            continue;
        }
        const w = toks[i];
        if (w.length >= 3 && /[a-z]/.test(w) && !STOP_EN.has(w) && !STOP_EN.has(stems[i])) words.add(`w:${stems[i]}`);
        i++;
    }

    // Chinese: terms as substrings, longest first; a match wholly inside a longer one is skipped.
    if (CJK_RE.test(t)) {
        const covered = new Uint8Array(t.length);
        for (const [term, ids] of LEX.zhTerms) {
            let at = t.indexOf(term);
            while (at !== -1) {
                let free = false;
                for (let k = at; k < at + term.length; k++) if (!covered[k]) free = true;
                if (free) {
                    if (ids) for (const id of ids) concepts.add(id);
                    covered.fill(1, at, at + term.length);
                }
                at = t.indexOf(term, at + 1);
            }
        }
        let run = '';
        const flush = () => {
            if (run.length === 1) words.add(`z:${run}`);
            for (let k = 0; k + 1 < run.length; k++) words.add(`z:${run.slice(k, k + 2)}`);
            run = '';
        };
        for (let k = 0; k < t.length; k++) {
            const ch = t[k];
            if (!covered[k] && CJK_RE.test(ch) && !STOP_ZH_CHARS.has(ch)) run += ch;
            else flush();
        }
        flush();
    }
    return { concepts, words };
}

/** The embedding of text for a model: a plain array of dim numbers, unit length. */
export function embed(text, dim = 64, model = '') {
    if (!Number.isInteger(dim) || dim < 1) throw new RangeError(`bad dimension ${dim}`);
    const { concepts, words } = features(text);
    const sum = new Float64Array(dim);
    const add = (seed, w) => {
        const u = unitVector(seed, dim);
        for (let i = 0; i < dim; i++) sum[i] += w * u[i];
    };
    for (const id of concepts) add(`c:${id}`, 1);
    for (const f of words) add(f, UNKNOWN_WEIGHT);
    let n = 0;
    for (let i = 0; i < dim; i++) n += sum[i] * sum[i];
    const base = n > 1e-12 ? sum.map((x) => x / Math.sqrt(n)) : unitVector('empty text', dim);
    const { perm, sign } = modelTransform(String(model ?? ''), dim);
    const out = new Array(dim);
    for (let i = 0; i < dim; i++) out[i] = sign[i] * base[perm[i]];
    return out;
}

export function cosine(a, b) {
    let d = 0,
        na = 0,
        nb = 0;
    for (let i = 0; i < a.length; i++) {
        d += a[i] * b[i];
        na += a[i] * a[i];
        nb += b[i] * b[i];
    }
    return d / (Math.sqrt(na * nb) || 1);
}

/** "Tokens" for usage: English words plus CJK characters, at least 1 per input. */
function tokenCount(text) {
    const t = normalise(text);
    const cjk = [...t].filter((c) => CJK_RE.test(c)).length;
    return Math.max(1, tokens(t).length + cjk);
}

// ---------- the server ----------

export async function startFakeEmbed(opts = {}) {
    const calls = [];
    const timers = new Set();
    let mode = 'ok';
    let modeOpts = {};
    const state = {
        maxBatch: opts.maxBatch ?? Infinity,
        dimFor: { ...(opts.dimFor || {}) },
    };
    const defaultDim = opts.dim ?? 64;

    const server = http.createServer((req, res) => {
        let body = '';
        req.setEncoding('utf8');
        req.on('data', (c) => (body += c));
        req.on('end', () => {
            const send = (status, obj, type = 'application/json') => {
                if (res.writableEnded || res.destroyed) return;
                res.writeHead(status, { 'Content-Type': type });
                res.end(typeof obj === 'string' ? obj : JSON.stringify(obj));
            };
            const fail = (status, message, type = 'invalid_request_error', code = null) =>
                send(status, { error: { message, type, param: null, code } });

            let parsed = null;
            try {
                parsed = JSON.parse(body);
            } catch {
                parsed = null;
            }
            const p = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : {};
            const input = p.input;
            const inputs = typeof input === 'string' ? [input] : Array.isArray(input) ? input : [];
            const path = (req.url || '').split('?')[0];
            calls.push({
                model: p.model,
                inputs,
                authorization: req.headers.authorization,
                path: req.url,
                method: req.method,
                encoding_format: p.encoding_format,
            });

            if (path !== '/v1/embeddings') return fail(404, `no route ${req.method} ${req.url}`, 'not_found');
            if (req.method !== 'POST') return fail(405, `method ${req.method} not allowed`);
            switch (mode) {
                case 'down':
                    return fail(503, 'Service Unavailable: the embeddings backend is down', 'server_error');
                case '401':
                    return fail(401, 'Incorrect API key provided', 'invalid_request_error', 'invalid_api_key');
                case '429':
                    return fail(429, 'Rate limit reached for requests', 'requests', 'rate_limit_exceeded');
                case 'wordy':
                    return fail(500, WORDY, 'server_error');
                default:
                    break;
            }
            if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
                return fail(400, 'We could not parse the JSON body of your request.');
            if (typeof p.model !== 'string' || p.model === '') return fail(400, 'you must provide a model parameter');
            if (input === undefined || input === null) return fail(400, "'input' is a required property");
            if (input === '' || (Array.isArray(input) && input.length === 0))
                return fail(400, "'input' must not be empty");
            if (typeof input !== 'string' && !Array.isArray(input))
                return fail(400, "'input' must be a string or an array of strings");
            for (let i = 0; i < inputs.length; i++) {
                if (typeof inputs[i] !== 'string')
                    return fail(400, `'input[${i}]' must be a string (token arrays are not supported)`);
                if (inputs[i] === '') return fail(400, `'input[${i}]' must not be empty`);
            }
            const fmt = p.encoding_format ?? 'float';
            if (fmt !== 'float' && fmt !== 'base64')
                return fail(400, `'encoding_format' must be 'float' or 'base64', got ${JSON.stringify(fmt)}`);
            if (inputs.length > state.maxBatch)
                return fail(413, `batch too large: max ${state.maxBatch} inputs`);

            const dim = state.dimFor[p.model] ?? defaultDim;
            const reply = () => {
                let vectors = inputs.map((text) => embed(text, dim, p.model));
                if (mode === 'lie-count') vectors = vectors.slice(0, -1);
                if (mode === 'lie-dim') vectors[vectors.length - 1] = vectors[vectors.length - 1].slice(0, -1);
                if (mode === 'lie-nan') {
                    vectors[0][0] = 'NaN';
                    const last = vectors[vectors.length - 1];
                    last[Math.min(1, last.length - 1)] = null;
                }
                const tok = inputs.reduce((a, t) => a + tokenCount(t), 0);
                const encode = (v) =>
                    fmt === 'base64' && mode !== 'lie-nan'
                        ? Buffer.from(new Float32Array(v).buffer).toString('base64')
                        : v;
                return {
                    object: 'list',
                    data: vectors.map((v, index) => ({ object: 'embedding', index, embedding: encode(v) })),
                    model: p.model,
                    usage: { prompt_tokens: tok, total_tokens: tok },
                };
            };
            switch (mode) {
                case 'nonjson':
                    return send(200, '<html><body>502 Bad Gateway (but 200)</body></html>', 'text/html');
                case 'slow': {
                    const t = setTimeout(() => {
                        timers.delete(t);
                        send(200, reply());
                    }, modeOpts.delayMs ?? opts.delayMs ?? 35000);
                    timers.add(t);
                    return;
                }
                default:
                    return send(200, reply());
            }
        });
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address();
    const close = () => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        server.closeAllConnections?.();
        return new Promise((resolve) => server.close(() => resolve()));
    };
    return {
        url: `http://127.0.0.1:${port}/v1`,
        port,
        calls,
        get maxBatch() {
            return state.maxBatch;
        },
        set maxBatch(n) {
            state.maxBatch = n == null ? Infinity : n;
        },
        get dimFor() {
            return state.dimFor;
        },
        set dimFor(m) {
            state.dimFor = { ...(m || {}) };
        },
        /** The dimension the server answers for a model name. */
        dimOf(model) {
            return state.dimFor[model] ?? defaultDim;
        },
        mode(m, o) {
            const known = ['ok', 'down', 'slow', 'lie-count', 'lie-dim', 'lie-nan', 'nonjson', '401', '429', 'wordy'];
            if (!known.includes(m)) throw new Error(`fakeembed: unknown mode ${m}`);
            mode = m;
            modeOpts = o || {};
        },
        reset() {
            mode = 'ok';
            modeOpts = {};
            state.maxBatch = opts.maxBatch ?? Infinity;
            state.dimFor = { ...(opts.dimFor || {}) };
            calls.length = 0;
        },
        close,
        stop: close,
    };
}
