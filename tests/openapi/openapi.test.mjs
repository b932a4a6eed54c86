// docs/openapi.yaml, KnowHub's OpenAPI 3.1 description, kept honest four ways:
// - the route table (fcgi/app/routes.c) and the file's operations are walked
//   both ways: a route without an operation, an operation without a route, or
//   another least role (x-knowhub-role) fails;
// - the file validates with an OpenAPI 3.1 validator, every $ref resolves,
//   and the error codes it lists are the ones the C code has;
// - nginx serves it at GET /api/openapi.yaml, byte for byte, without a token;
// - live answers of a real nginx + knowhub validate against its schemas (ajv,
//   JSON Schema 2020-12), with undescribed fields refused: a field the server
//   sends that the file does not name fails as much as a missing one.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import YAML from 'yaml';
import Ajv2020 from 'ajv/dist/2020.js';
import { Validator } from '@seriousme/openapi-schema-validator';
import { ROOT, startStack } from '../http/lib/stack.mjs';
import { ok } from '../http/lib/expect.mjs';

const SPEC_PATH = path.join(ROOT, 'docs/openapi.yaml');
const SPEC_TEXT = fs.readFileSync(SPEC_PATH, 'utf8');
const SPEC = YAML.parse(SPEC_TEXT);
const ROUTES_TEXT = fs.readFileSync(path.join(ROOT, 'fcgi/app/routes.c'), 'utf8');
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

/** The rows of the route table: [{method, path, role}]. Throws when a row of
 * the table's initializer does not parse, so a new row format cannot hide. */
export function parseRoutes(text) {
    const start = text.indexOf('table[] = {');
    const end = text.indexOf('\n};', start);
    assert.ok(start >= 0 && end > start, 'routes.c: no `table[] = {...};`');
    const rows = [];
    for (const line of text.slice(start, end).split('\n').slice(1)) {
        const t = line.trim();
        if (!t || t.startsWith('/*') || t.startsWith('*') || t.startsWith('//')) continue;
        const m = /^\{\s*"([A-Z]+)"\s*,\s*"([^"]+)"\s*,\s*ROLE_([A-Z]+)\s*,\s*\w+\s*,\s*[01]\s*\},?$/.exec(t);
        assert.ok(m, `routes.c: a row this test cannot read: ${t}`);
        rows.push({ method: m[1], path: m[2], role: m[3].toLowerCase() });
    }
    return rows;
}

/** The operations of an OpenAPI document: [{method, path, role}]. */
export function specOperations(spec) {
    const ops = [];
    for (const [p, item] of Object.entries(spec.paths || {}))
        for (const m of METHODS)
            if (item[m]) ops.push({ method: m.toUpperCase(), path: p, role: item[m]['x-knowhub-role'] });
    return ops;
}

/** What differs between the route table and the document (empty: nothing). */
export function compare(routes, ops) {
    const problems = [];
    const key = (r) => `${r.method} ${r.path}`;
    const byKey = new Map(ops.map((o) => [key(o), o]));
    const seen = new Set();
    for (const r of routes) {
        if (seen.has(key(r))) problems.push(`route ${key(r)} is twice in the table`);
        seen.add(key(r));
        const o = byKey.get(key(r));
        if (!o) problems.push(`route ${key(r)} (${r.role}) is not in docs/openapi.yaml`);
        else if (o.role !== r.role) problems.push(`${key(r)}: x-knowhub-role is ${o.role}, the route table says ${r.role}`);
    }
    for (const o of ops) if (!seen.has(key(o))) problems.push(`docs/openapi.yaml describes ${key(o)}, which is no route`);
    return problems;
}

describe('the route table and docs/openapi.yaml', () => {
    const routes = parseRoutes(ROUTES_TEXT);

    test('every route is an operation with its least role, and every operation a route', () => {
        assert.ok(routes.length >= 40, `only ${routes.length} routes read from routes.c`);
        assert.deepEqual(compare(routes, specOperations(SPEC)), []);
    });

    test('the check fails on a route added without the file, on a stray operation and on another role', () => {
        // A route added to the table only.
        const added = ROUTES_TEXT.replace(
            '    {"GET", "/api/tools", ROLE_READER, h_tools, 0},',
            '    {"GET", "/api/tools", ROLE_READER, h_tools, 0},\n    {"POST", "/api/tools/run", ROLE_AGENT, h_tools, 0},',
        );
        assert.notEqual(added, ROUTES_TEXT, 'the /api/tools row moved: update this test');
        assert.deepEqual(compare(parseRoutes(added), specOperations(SPEC)), [
            'route POST /api/tools/run (agent) is not in docs/openapi.yaml',
        ]);
        // An operation the table does not have.
        const stray = structuredClone(SPEC);
        stray.paths['/api/health'].delete = { 'x-knowhub-role': 'admin', responses: {} };
        assert.deepEqual(compare(routes, specOperations(stray)), ['docs/openapi.yaml describes DELETE /api/health, which is no route']);
        // A role that differs.
        const role = structuredClone(SPEC);
        role.paths['/api/embeddings/backfill'].post['x-knowhub-role'] = 'agent';
        assert.deepEqual(compare(routes, specOperations(role)), [
            'POST /api/embeddings/backfill: x-knowhub-role is agent, the route table says editor',
        ]);
        // A row in a shape the parser does not know fails loudly.
        assert.throws(() => parseRoutes(ROUTES_TEXT.replace('{"GET", "/api/health"', '{ROUTE_GET, "/api/health"')), /cannot read/);
    });

    test('the path parameters of each operation are the ones of its path', () => {
        for (const [p, item] of Object.entries(SPEC.paths)) {
            const want = [...p.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
            for (const m of METHODS.filter((x) => item[x])) {
                const params = [...(item.parameters || []), ...(item[m].parameters || [])].map((x) => (x.$ref ? resolve(x.$ref) : x));
                const got = params.filter((x) => x.in === 'path').map((x) => x.name).sort();
                assert.deepEqual(got, want, `${m.toUpperCase()} ${p}`);
            }
        }
    });
});

/** The object a local $ref ('#/a/b') points at in the document. */
function resolve(ref, doc = SPEC) {
    assert.ok(ref.startsWith('#/'), `not a local $ref: ${ref}`);
    let o = doc;
    for (const part of ref.slice(2).split('/')) {
        o = o?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
        assert.ok(o !== undefined, `$ref ${ref} points at nothing`);
    }
    return o;
}

describe('docs/openapi.yaml is a valid OpenAPI 3.1 document', () => {
    test('the OpenAPI 3.1 schema validator accepts it', async () => {
        const v = new Validator();
        const res = await v.validate(SPEC_TEXT);
        assert.equal(v.version, '3.1');
        assert.equal(res.valid, true, JSON.stringify(res.errors, null, 1));
    });

    test('the validator refuses a broken copy (the check can fail)', async () => {
        const broken = structuredClone(SPEC);
        broken.paths['/api/health'].get.responses = { ok: 'nope' };
        const res = await new Validator().validate(broken);
        assert.equal(res.valid, false);
    });

    test('every $ref resolves, and every schema compiles as JSON Schema 2020-12', () => {
        const walk = (o) => {
            if (Array.isArray(o)) o.forEach(walk);
            else if (o && typeof o === 'object')
                for (const [k, v] of Object.entries(o)) {
                    if (k === '$ref') resolve(v);
                    else walk(v);
                }
        };
        walk(SPEC);
        const ajv = new Ajv2020({ strict: false, allErrors: true });
        for (const name of Object.keys(SPEC.components.schemas))
            ajv.compile({ $ref: `#/components/schemas/${name}`, components: SPEC.components });
    });

    test('every error code of the C code is in the ErrorCode enum, and no other', () => {
        const codes = new Set();
        for (const m of fs.readFileSync(path.join(ROOT, 'fcgi/base/error.h'), 'utf8').matchAll(/#define E_\w+ "([A-Z_]+)"/g)) codes.add(m[1]);
        const walk = (dir) => {
            for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
                const f = path.join(dir, e.name);
                if (e.isDirectory()) walk(f);
                else if (/\.[ch]$/.test(e.name)) for (const m of fs.readFileSync(f, 'utf8').matchAll(/"(LLM_[A-Z_]+)"/g)) codes.add(m[1]);
            }
        };
        walk(path.join(ROOT, 'fcgi'));
        assert.ok(codes.size >= 20, `only ${codes.size} codes found in fcgi/`);
        assert.deepEqual([...SPEC.components.schemas.ErrorCode.enum].sort(), [...codes].sort());
    });

    test('every operation names its role, a summary, and a 200 (or 202) answer', () => {
        const roles = new Set(['none', 'reader', 'agent', 'editor', 'admin']);
        for (const o of specOperations(SPEC)) {
            const op = SPEC.paths[o.path][o.method.toLowerCase()];
            assert.ok(roles.has(o.role), `${o.method} ${o.path}: x-knowhub-role ${o.role}`);
            assert.ok(op.summary && op.operationId, `${o.method} ${o.path}: summary and operationId`);
            assert.ok(op.responses['200'], `${o.method} ${o.path}: no 200`);
            assert.ok(op.responses['4XX'] && op.responses['5XX'], `${o.method} ${o.path}: the error envelope for 4XX and 5XX`);
            // A public route says so; the others need a token (the document's default).
            if (o.role === 'none') assert.ok(op.security, `${o.method} ${o.path}: public, but no security of its own`);
            else assert.equal(op.security, undefined, `${o.method} ${o.path}`);
        }
    });
});

// --- live answers -------------------------------------------------------------

/** A copy of a schema where every object schema that lists its properties
 * and says nothing of others refuses the others (unevaluatedProperties). */
function strict(o) {
    if (Array.isArray(o)) return o.map(strict);
    if (!o || typeof o !== 'object') return o;
    const c = Object.fromEntries(Object.entries(o).map(([k, v]) => [k, k === 'properties' ? Object.fromEntries(Object.entries(v).map(([n, s]) => [n, strict(s)])) : strict(v)]));
    if (c.properties && !('additionalProperties' in c) && !('unevaluatedProperties' in c)) c.unevaluatedProperties = false;
    return c;
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
const STRICT_COMPONENTS = { schemas: strict(SPEC.components.schemas) };
const validators = new Map();

/** The validator of an operation's answer (status, media type). */
function answerSchema(method, route, status, type = 'application/json') {
    const id = `${method} ${route} ${status} ${type}`;
    if (!validators.has(id)) {
        const op = SPEC.paths[route]?.[method.toLowerCase()];
        assert.ok(op, `docs/openapi.yaml has no ${method} ${route}`);
        let res = op.responses[String(status)] || op.responses[`${String(status)[0]}XX`];
        assert.ok(res, `${method} ${route}: no answer for ${status}`);
        if (res.$ref) res = resolve(res.$ref);
        const schema = res.content?.[type]?.schema;
        assert.ok(schema, `${method} ${route} ${status}: no ${type} schema`);
        validators.set(id, ajv.compile({ ...strict(schema), components: STRICT_COMPONENTS }));
    }
    return validators.get(id);
}

/** The operations a live answer was checked for ("METHOD /route"). */
const checked = new Set();

/** Check one live answer r of `method route` against the document; returns its JSON. */
function conforms(method, route, r, { type = 'application/json' } = {}) {
    checked.add(`${method} ${route}`);
    assert.ok(r.headers['content-type']?.startsWith(type), `${method} ${route}: Content-Type ${r.headers['content-type']}`);
    const v = answerSchema(method, route, r.status, type);
    const ok = v(r.json);
    assert.ok(ok, `${method} ${route} (${r.status}) does not match docs/openapi.yaml:\n${JSON.stringify(v.errors, null, 1)}\n${r.text.slice(0, 2000)}`);
    return r.json;
}

describe('a real nginx + knowhub', () => {
    let s;
    before(async () => {
        s = await startStack();
    });
    after(async () => {
        await s?.stop();
    });

    /** Send a request to `method route` after checking it against the file:
     * each query parameter is one the operation declares, and the JSON body
     * validates against its request body's schema. */
    async function call(method, route, url, opts = {}) {
        const op = SPEC.paths[route]?.[method.toLowerCase()];
        assert.ok(op, `docs/openapi.yaml has no ${method} ${route}`);
        const declared = [...(SPEC.paths[route].parameters || []), ...(op.parameters || [])]
            .map((x) => (x.$ref ? resolve(x.$ref) : x))
            .filter((x) => x.in === 'query')
            .map((x) => x.name);
        for (const name of new URL(url, 'http://x').searchParams.keys())
            assert.ok(declared.includes(name), `${method} ${route}: query parameter '${name}' is not in docs/openapi.yaml`);
        if (opts.body !== undefined) {
            const schema = op.requestBody?.content?.['application/json']?.schema;
            assert.ok(schema, `${method} ${route}: a body was sent, docs/openapi.yaml describes none`);
            const v = ajv.compile({ ...schema, components: SPEC.components });
            assert.ok(v(opts.body), `${method} ${route}: the request body does not match docs/openapi.yaml: ${JSON.stringify(v.errors)}`);
        }
        return s.api(method, url, opts);
    }

    test('GET /api/openapi.yaml is docs/openapi.yaml, as YAML, without a token', async () => {
        const r = await s.api('GET', '/api/openapi.yaml');
        assert.equal(r.status, 200);
        assert.match(r.headers['content-type'], /^application\/yaml(;|$)/);
        assert.ok(r.raw.equals(Buffer.from(SPEC_TEXT)), 'the served bytes differ from docs/openapi.yaml');
        assert.equal(r.headers['x-content-type-options'], 'nosniff');
        assert.match(r.headers['x-request-id'] || '', /^\S{8,}$/);
        // A token changes nothing; HEAD has the headers alone; it cannot be written.
        assert.ok((await s.api('GET', '/api/openapi.yaml', { token: 'kh_garbage' })).raw.equals(Buffer.from(SPEC_TEXT)));
        const h = await s.api('HEAD', '/api/openapi.yaml');
        assert.equal(h.status, 200);
        assert.equal(h.raw.length, 0);
        assert.equal(Number(h.headers['content-length']), Buffer.byteLength(SPEC_TEXT));
        const p = await s.api('POST', '/api/openapi.yaml', { token: s.admin, body: {} });
        assert.equal(p.status, 405);
        conforms('GET', '/api/health', p); // the error envelope, nginx's own
        assert.equal(p.json.error.code, 'METHOD_NOT_ALLOWED');
    });

    test('the entry view, its search and its errors answer as described', async () => {
        const t = s.admin;
        conforms('GET', '/api/health', await call('GET', '/api/health', '/api/health'));
        assert.equal(conforms('GET', '/api/health', await call('GET', '/api/health', '/api/health', { token: t })).data.space.review.pending, 0);
        conforms('GET', '/api/auth/me', await call('GET', '/api/auth/me', '/api/auth/me', { token: t }));
        const body = { scenario: 'Load a CSV larger than memory', content: 'Use read_csv with chunksize.', tags_type: ['tool'], tags: ['pandas'], agent_id: 'oa', urls: ['https://example.com'] };
        const c = conforms('POST', '/api/knowledge', await call('POST', '/api/knowledge', '/api/knowledge', { token: t, body, headers: { 'Idempotency-Key': 'openapi-1' } }));
        assert.equal(c.status, 'success');
        const id = c.data.id;
        const again = conforms('POST', '/api/knowledge', await call('POST', '/api/knowledge', '/api/knowledge', { token: t, body, headers: { 'Idempotency-Key': 'openapi-1' } }));
        assert.equal(again.data.replayed, true);
        const rule = conforms('POST', '/api/knowledge', await call('POST', '/api/knowledge', '/api/knowledge', { token: t, body: { scenario: 'Always cite', content: 'Cite the table.', category: 'rules', path: 'cite.md', description: 'cite' } }));
        assert.equal(rule.data.always_apply, true);
        const put = conforms('PUT', '/api/knowledge/{id}', await call('PUT', '/api/knowledge/{id}', `/api/knowledge/${id}`, { token: t, body: { add_helpful_case: { case_id: 'oa-1', scenario: 's', result: 'r' }, update_score: 4 } }));
        assert.deepEqual(put.data.applied, { add_helpful_case: 'added', update_score: 4 });
        const got = conforms('GET', '/api/knowledge/{id}', await call('GET', '/api/knowledge/{id}', `/api/knowledge/${id}`, { token: t }));
        assert.equal(got.data.eval.helpful_history.length, 1);
        const list = conforms('GET', '/api/knowledge', await call('GET', '/api/knowledge', '/api/knowledge?limit=5', { token: t }));
        assert.equal(list.data.total, 2);
        conforms('GET', '/api/knowledge/{id}/cases', await call('GET', '/api/knowledge/{id}/cases', `/api/knowledge/${id}/cases?kind=helpful`, { token: t }));
        conforms('GET', '/api/knowledge/{id}/revisions', await call('GET', '/api/knowledge/{id}/revisions', `/api/knowledge/${id}/revisions`, { token: t }));
        const batch = conforms('POST', '/api/knowledge/batch_update', await call('POST', '/api/knowledge/batch_update', '/api/knowledge/batch_update', { token: t, body: { feedback_list: [{ knowledge_id: id, is_effective: true, feedback: 'fine' }, { knowledge_id: 'nope', is_effective: false }] } }));
        assert.deepEqual([batch.data.succeeded, batch.data.failed], [1, 1]);
        // Searches: both views, lexical and (without an embeddings server) degraded with a warning, and logging into a trace.
        const se = conforms('GET', '/api/knowledge/search', await call('GET', '/api/knowledge/search', '/api/knowledge/search?q=csv+chunksize&top_k=3', { token: t }));
        assert.equal(se.data.results[0].id, id);
        const logged = conforms('GET', '/api/knowledge/search', await call('GET', '/api/knowledge/search', '/api/knowledge/search?q=csv&mode=hybrid&trace_id=oa-trace&goal_id=g1&sequence=2&task=load', { token: t }));
        assert.equal(logged.data.logged, true);
        assert.ok(logged.data.warnings.length >= 1);
        const sf = conforms('POST', '/api/knowledge/search', await call('POST', '/api/knowledge/search', '/api/knowledge/search', { token: t, body: { query: 'csv', mode: 'hybrid', include_weak: true } }));
        assert.equal(sf.data.results[0].id, id);
        conforms('POST', '/api/knowledge/context', await call('POST', '/api/knowledge/context', '/api/knowledge/context', { token: t, body: { question: 'csv' } }));
        conforms('GET', '/api/knowledge/rules', await call('GET', '/api/knowledge/rules', '/api/knowledge/rules', { token: t }));
        // With a token budget (whole entries here: they are short), and the rules over a small budget.
        const forms = new Set();
        for (const budget_tokens of [100, 5000]) {
            const b = conforms('POST', '/api/knowledge/context', await call('POST', '/api/knowledge/context', '/api/knowledge/context', { token: t, body: { question: 'csv chunksize', budget_tokens } }));
            assert.equal(b.data.budget_tokens, budget_tokens);
            for (const k of b.data.knowledge) forms.add(k.form);
        }
        assert.deepEqual([...forms], ['full']);
        const br = conforms('GET', '/api/knowledge/rules', await call('GET', '/api/knowledge/rules', '/api/knowledge/rules?budget_tokens=100', { token: t }));
        assert.equal(typeof br.data.over_budget, 'boolean');
        // The export: every line an entry.
        const ex = await call('GET', '/api/knowledge/export', '/api/knowledge/export', { token: t });
        assert.equal(ex.status, 200);
        assert.match(ex.headers['content-type'], /^application\/x-ndjson/);
        const line = ajv.compile({ ...strict(resolve('#/components/schemas/Entry')), components: STRICT_COMPONENTS });
        const lines = ex.text.trim().split('\n');
        assert.equal(lines.length, 2);
        for (const l of lines) assert.ok(line(JSON.parse(l)), JSON.stringify(line.errors));
        assert.ok(SPEC.paths['/api/knowledge/export'].get.responses['200'].content['application/x-ndjson']);
        checked.add('GET /api/knowledge/export');
        // The interop formats: AGENTS.md out, back in (into the same space: unchanged), an unknown format.
        const md = await call('GET', '/api/knowledge/export', '/api/knowledge/export?format=agents_md', { token: t });
        assert.equal(md.status, 200);
        assert.match(md.headers['content-type'], /^text\/markdown/);
        assert.ok(SPEC.paths['/api/knowledge/export'].get.responses['200'].content['text/markdown']);
        assert.equal(md.headers['x-knowhub-exported'], '1');
        const cur = await call('GET', '/api/knowledge/export', '/api/knowledge/export?format=cursor', { token: t });
        assert.equal(cur.headers['content-type'], 'application/x-tar');
        assert.ok(SPEC.paths['/api/knowledge/export'].get.responses['200'].content['application/x-tar']);
        conforms('GET', '/api/knowledge/export', await call('GET', '/api/knowledge/export', '/api/knowledge/export?format=zip', { token: t }));
        // back into the same space: the rule's front matter held more than AGENTS.md carries, so its path is taken (skipped)
        const imp = conforms('POST', '/api/knowledge/import', await call('POST', '/api/knowledge/import', '/api/knowledge/import?format=agents_md&on_conflict=skip', { token: t, rawBody: md.raw, headers: { 'Content-Type': 'text/markdown' } }));
        assert.deepEqual([imp.data.imported, imp.data.skipped], [0, 1]);
        const tarIn = conforms('POST', '/api/knowledge/import', await call('POST', '/api/knowledge/import', '/api/knowledge/import?format=cursor', { token: t, rawBody: cur.raw, headers: { 'Content-Type': 'application/x-tar' } }));
        assert.equal(tarIn.data.skipped, 1);
        assert.equal(conforms('POST', '/api/knowledge/import', await call('POST', '/api/knowledge/import', '/api/knowledge/import?format=cursor', { token: t, rawBody: 'not a tar', headers: { 'Content-Type': 'application/x-tar' } })).error.code, 'INVALID_REQUEST');
        // Deletion and revert.
        conforms('DELETE', '/api/knowledge/{id}', await call('DELETE', '/api/knowledge/{id}', `/api/knowledge/${id}`, { token: t }));
        conforms('POST', '/api/knowledge/{id}/revert', await call('POST', '/api/knowledge/{id}/revert', `/api/knowledge/${id}/revert`, { token: t, body: {} }));
        // Error answers: application errors (200), protocol errors (401, 403, 404, 405).
        const bad = conforms('GET', '/api/knowledge', await call('GET', '/api/knowledge', '/api/knowledge?limit=1000', { token: t }));
        assert.equal(bad.error.key, 'field_not_integer');
        const gone = conforms('GET', '/api/knowledge/{id}', await call('GET', '/api/knowledge/{id}', '/api/knowledge/knowledge-20000101-00000000', { token: t }));
        assert.equal(gone.error.code, 'NOT_FOUND');
        const evolve = conforms('PUT', '/api/knowledge/{id}', await call('PUT', '/api/knowledge/{id}', `/api/knowledge/${id}`, { token: t, body: { evolve_feedback: 'shorter' } }));
        assert.equal(evolve.error.code, 'LLM_NOT_CONFIGURED');
        const noToken = await s.api('POST', '/api/knowledge', { body });
        assert.equal(noToken.status, 401);
        conforms('POST', '/api/knowledge', noToken);
        const reader = s.token('default', 'reader', 'openapi');
        const forbidden = await s.api('POST', '/api/knowledge', { token: reader, body });
        assert.equal(forbidden.status, 403);
        conforms('POST', '/api/knowledge', forbidden);
        const none = await s.api('GET', '/api/no-such-thing', { token: t });
        assert.equal(none.status, 404);
        conforms('GET', '/api/health', none);
        const method = await s.api('PATCH', '/api/health');
        assert.equal(method.status, 405);
        conforms('GET', '/api/health', method);
    });

    test('the file view answers as described', async () => {
        const t = s.admin;
        conforms('POST', '/api/knowledge/limits', await call('POST', '/api/knowledge/limits', '/api/knowledge/limits', { token: t, body: {} }));
        const w = conforms('POST', '/api/knowledge/write', await call('POST', '/api/knowledge/write', '/api/knowledge/write', { token: t, body: { category: 'experiences', path: 'oa/doc.md', content: '---\ntitle: A doc\ntags: [x]\n---\nThe **body**.' } }));
        assert.equal(w.data.created, true);
        await call('POST', '/api/knowledge/write', '/api/knowledge/write', { token: t, body: { category: 'rules', path: 'r.md', content: '---\ntitle: R\ndescription: d\n---\nAlways r.' } });
        // link keys in front matter: the answer says what they did
        const linked = conforms('POST', '/api/knowledge/write', await call('POST', '/api/knowledge/write', '/api/knowledge/write', { token: t, body: { category: 'experiences', path: 'oa/linked.md', content: '---\ntitle: Linked\nrelated: [experiences/oa/doc.md, rules/none.md]\n---\nSee the doc.' } }));
        assert.equal(linked.data.links.added, 1);
        assert.equal(linked.data.links.warnings[0].code, 'link_target_not_found');
        for (const category of ['experiences', 'rules']) {
            const l = conforms('POST', '/api/knowledge/list', await call('POST', '/api/knowledge/list', '/api/knowledge/list', { token: t, body: { category } }));
            assert.ok(l.data.items.length >= 1);
        }
        const r = conforms('POST', '/api/knowledge/read', await call('POST', '/api/knowledge/read', '/api/knowledge/read', { token: t, body: { category: 'experiences', path: 'oa/doc.md' } }));
        assert.match(r.data.html, /<strong>body<\/strong>/);
        const missing = conforms('POST', '/api/knowledge/read', await call('POST', '/api/knowledge/read', '/api/knowledge/read', { token: t, body: { category: 'experiences', path: 'oa/none.md' } }));
        assert.equal(missing.error.code, 'TABLE_NOT_FOUND');
        conforms('POST', '/api/knowledge/rename', await call('POST', '/api/knowledge/rename', '/api/knowledge/rename', { token: t, body: { category: 'experiences', path: 'oa/doc.md', new_path: 'oa/doc2.md' } }));
        conforms('POST', '/api/knowledge/preview', await call('POST', '/api/knowledge/preview', '/api/knowledge/preview', { token: t, body: { content: '# Title' } }));
        conforms('POST', '/api/knowledge/delete', await call('POST', '/api/knowledge/delete', '/api/knowledge/delete', { token: t, body: { category: 'experiences', path: 'oa/doc2.md' } }));
        const trash = conforms('POST', '/api/knowledge/trash', await call('POST', '/api/knowledge/trash', '/api/knowledge/trash', { token: t, body: {} }));
        assert.equal(trash.data.items[0].status, 'deleted');
    });

    test('traces, sessions, jobs, embeddings, tools, MCP and metrics answer as described', async () => {
        const t = s.admin;
        const e = conforms('POST', '/api/knowledge', await call('POST', '/api/knowledge', '/api/knowledge', { token: t, body: { scenario: 'ROI of a quarter', content: 'Divide the gain by the full cost.' } }));
        const id = e.data.id;
        const tr = conforms('POST', '/api/traces', await call('POST', '/api/traces', '/api/traces', { token: t, body: { trace_id: 'oa-t', task: 'quarterly ROI' } }));
        assert.equal(tr.data.created, true);
        conforms('GET', '/api/traces', await call('GET', '/api/traces', '/api/traces', { token: t }));
        conforms('GET', '/api/traces/{trace_id}', await call('GET', '/api/traces/{trace_id}', '/api/traces/oa-t', { token: t }));
        const log = conforms('POST', '/api/traces/{trace_id}/knowledge_log', await call('POST', '/api/traces/{trace_id}/knowledge_log', '/api/traces/oa-t/knowledge_log', { token: t, body: { knowledge_id: id, goal_id: 'g1', injected_at_sequence: 4 } }));
        assert.equal(log.data.entries.length, 1);
        conforms('GET', '/api/traces/{trace_id}/knowledge_log/pending', await call('GET', '/api/traces/{trace_id}/knowledge_log/pending', '/api/traces/oa-t/knowledge_log/pending', { token: t }));
        conforms('GET', '/api/traces/{trace_id}/eval_prompt', await call('GET', '/api/traces/{trace_id}/eval_prompt', '/api/traces/oa-t/eval_prompt?goal=roi', { token: t }));
        const output = 'Done:\n```json\n' + JSON.stringify({ evaluations: [{ knowledge_id: id, eval_status: 'helpful', reason: 'used it' }, { knowledge_id: 'nope', eval_status: 'helpful', reason: 'x' }] }) + '\n```';
        const ev = conforms('POST', '/api/traces/{trace_id}/evaluations', await call('POST', '/api/traces/{trace_id}/evaluations', '/api/traces/oa-t/evaluations', { token: t, body: { trigger: 'goal_completion', output } }));
        assert.equal(ev.data.strategy, 'fenced');
        assert.equal(ev.data.unmatched.length, 1);
        const done = conforms('GET', '/api/traces/{trace_id}/knowledge_log', await call('GET', '/api/traces/{trace_id}/knowledge_log', '/api/traces/oa-t/knowledge_log', { token: t }));
        assert.equal(done.data.entries[0].eval_result.eval_status, 'helpful');
        const withInjections = conforms('GET', '/api/knowledge/{id}', await call('GET', '/api/knowledge/{id}', `/api/knowledge/${id}`, { token: t }));
        assert.equal(withInjections.data.injections[0].eval_status, 'helpful');
        // Analysis sessions.
        const tables = [{ id: 't1', names: ['a'] }, { id: 't2', derive: { trigger: { tableId: 't1' } } }];
        conforms('POST', '/api/sessions', await call('POST', '/api/sessions', '/api/sessions', { token: t, body: { id: 'oa-s', title: 'S', tables } }));
        conforms('GET', '/api/sessions', await call('GET', '/api/sessions', '/api/sessions', { token: t }));
        conforms('GET', '/api/sessions/{id}', await call('GET', '/api/sessions/{id}', '/api/sessions/oa-s', { token: t }));
        conforms('DELETE', '/api/sessions/{id}/tables/{table_id}', await call('DELETE', '/api/sessions/{id}/tables/{table_id}', '/api/sessions/oa-s/tables/t2', { token: t }));
        conforms('DELETE', '/api/sessions/{id}', await call('DELETE', '/api/sessions/{id}', '/api/sessions/oa-s', { token: t }));
        // LLM features without an LLM: the local distillation, slim's plan and job.
        const d = conforms('POST', '/api/knowledge/distill-experience', await call('POST', '/api/knowledge/distill-experience', '/api/knowledge/distill-experience', { token: t, body: { experience_context: { user_question: 'ROI by quarter?', dialog: [], interaction: [], result_summary: { output_fields: ['roi'] } } } }));
        assert.equal(d.data.source, 'distill-local');
        const plan = conforms('POST', '/api/knowledge/slim', await call('POST', '/api/knowledge/slim', '/api/knowledge/slim', { token: t, body: { dry_run: true } }));
        assert.equal(plan.data.dry_run, true);
        const job = conforms('POST', '/api/knowledge/slim', await call('POST', '/api/knowledge/slim', '/api/knowledge/slim', { token: t, body: {} }));
        assert.equal(job.data.kind, 'slim');
        let j;
        for (let i = 0; i < 100; i++) {
            j = conforms('GET', '/api/jobs/{id}', await call('GET', '/api/jobs/{id}', `/api/jobs/${job.data.id}`, { token: t }));
            if (j.data.status === 'done' || j.data.status === 'failed') break;
            await new Promise((r) => setTimeout(r, 100));
        }
        assert.equal(j.data.status, 'done');
        conforms('GET', '/api/jobs', await call('GET', '/api/jobs', '/api/jobs', { token: t }));
        conforms('GET', '/api/llm/usage', await call('GET', '/api/llm/usage', '/api/llm/usage', { token: t }));
        conforms('GET', '/api/embeddings', await call('GET', '/api/embeddings', '/api/embeddings', { token: t }));
        const bf = conforms('POST', '/api/embeddings/backfill', await call('POST', '/api/embeddings/backfill', '/api/embeddings/backfill', { token: t, body: {} }));
        assert.equal(bf.error.code, 'LLM_NOT_CONFIGURED');
        const tools = conforms('GET', '/api/tools', await call('GET', '/api/tools', '/api/tools', { token: t }));
        assert.ok(tools.data.tools.some((x) => x.function.name === 'knowledge_search'));
        // MCP: a result, a batch, a JSON-RPC error, a notification.
        conforms('POST', '/mcp', await call('POST', '/mcp', '/mcp', { token: t, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } }));
        const batch = conforms('POST', '/mcp', await call('POST', '/mcp', '/mcp', { token: t, body: [{ jsonrpc: '2.0', id: 'a', method: 'ping' }, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'knowledge_list', arguments: { limit: 1 } } }] }));
        assert.equal(batch.length, 2);
        const listed = batch.find((x) => x.id === 2).result;
        assert.ok(!listed.isError, JSON.stringify(listed));
        assert.ok(Array.isArray(listed.structuredContent.items));
        const rpcErr = conforms('POST', '/mcp', await call('POST', '/mcp', '/mcp', { token: t, body: { jsonrpc: '2.0', id: 3, method: 'sampling/createMessage' } }));
        assert.equal(rpcErr.error.code, -32601);
        // Resources and prompts: a result and an error with its REST code (error.data.code).
        const rules = conforms('POST', '/mcp', await call('POST', '/mcp', '/mcp', { token: t, body: { jsonrpc: '2.0', id: 6, method: 'resources/read', params: { uri: 'knowhub://rules' } } }));
        assert.equal(rules.result.contents[0].uri, 'knowhub://rules');
        const missing = conforms('POST', '/mcp', await call('POST', '/mcp', '/mcp', { token: t, body: { jsonrpc: '2.0', id: 7, method: 'resources/read', params: { uri: 'knowhub://entries/knowledge-20990101-deadbeef' } } }));
        assert.equal(missing.error.code, -32002);
        assert.equal(missing.error.data.code, 'NOT_FOUND');
        const prompts = conforms('POST', '/mcp', await call('POST', '/mcp', '/mcp', { token: t, body: { jsonrpc: '2.0', id: 8, method: 'prompts/list' } }));
        assert.ok(prompts.result.prompts.some((p) => p.name === 'start_task'));
        const parse = conforms('POST', '/mcp', await s.api('POST', '/mcp', { token: t, rawBody: '{"jsonrpc": ' }));
        assert.equal(parse.error.code, -32700);
        const version = await call('POST', '/mcp', '/mcp', { token: t, body: { jsonrpc: '2.0', id: 4, method: 'ping' }, headers: { 'MCP-Protocol-Version': '1999-01-01' } });
        assert.equal(version.status, 400);
        assert.equal(conforms('POST', '/mcp', version).error.code, -32600);
        for (const [r, code] of [
            [await s.api('POST', '/mcp', { body: { jsonrpc: '2.0', id: 5, method: 'ping' } }), 401],
            [await s.api('GET', '/mcp', { token: t }), 405],
        ]) {
            assert.equal(r.status, code);
            assert.equal(conforms('POST', '/mcp', r).status, 'error');
        }
        // The live streams: refused without Accept: text/event-stream (checked as JSON), then
        // opened for real (the head is checked; the stream is left at once).
        assert.equal(conforms('GET', '/mcp', await call('GET', '/mcp', '/mcp', { token: t })).error.code, 'METHOD_NOT_ALLOWED');
        assert.equal(conforms('GET', '/api/events', await call('GET', '/api/events', '/api/events', { token: t })).error.code, 'INVALID_REQUEST');
        for (const route of ['/mcp', '/api/events']) {
            const ac = new AbortController();
            const r = await fetch(`${s.base}${route}`, { headers: { Authorization: `Bearer ${t}`, Accept: 'text/event-stream' }, signal: ac.signal });
            assert.equal(r.status, 200, route);
            assert.ok(SPEC.paths[route].get.responses['200'].content['text/event-stream'], route);
            assert.equal(r.headers.get('content-type'), 'text/event-stream', route);
            ac.abort();
        }
        const unknown = await call('DELETE', '/mcp', '/mcp', { token: t });
        assert.equal(unknown.status, 404);
        assert.equal(conforms('DELETE', '/mcp', unknown).error.code, -32600);
        const ended = await call('DELETE', '/mcp', '/mcp', { token: t, headers: { 'Mcp-Session-Id': 'c'.repeat(32) } });
        assert.equal(ended.status, 204);
        assert.ok(SPEC.paths['/mcp'].delete.responses['204']);
        const note = await call('POST', '/mcp', '/mcp', { token: t, body: { jsonrpc: '2.0', method: 'notifications/initialized' } });
        assert.equal(note.status, 202);
        assert.ok(SPEC.paths['/mcp'].post.responses['202']);
        // Metrics: Prometheus text (loopback through nginx).
        const m = await s.api('GET', '/metrics');
        assert.equal(m.status, 200);
        assert.ok(m.headers['content-type'].startsWith(Object.keys(SPEC.paths['/metrics'].get.responses['200'].content)[0]));
        assert.match(m.text, /^# HELP knowhub_build_info /m);
        checked.add('GET /metrics');
        const remote = await s.api('GET', '/metrics', { headers: { 'X-Forwarded-For': '192.0.2.7' } });
        assert.equal(remote.status, 401);
        assert.equal(conforms('GET', '/metrics', remote).error.code, 'UNAUTHORIZED');
        // Browser login and logout.
        const login = await call('POST', '/api/auth/login', '/api/auth/login', { body: { token: t } });
        conforms('POST', '/api/auth/login', login);
        assert.match(login.headers['set-cookie'].join('\n'), /kh_session=/);
        conforms('POST', '/api/auth/logout', await call('POST', '/api/auth/logout', '/api/auth/logout', { token: t }));
    });

    test('tokens, spaces and the overview answer as described', async () => {
        const t = s.admin;
        const made = conforms('POST', '/api/tokens', await call('POST', '/api/tokens', '/api/tokens', { token: t, body: { role: 'agent', label: 'openapi' } }));
        const l = conforms('GET', '/api/tokens', await call('GET', '/api/tokens', '/api/tokens', { token: t }));
        assert.ok(l.data.items.some((x) => x.id === made.data.id && x.last_used_at === null));
        const bad = conforms('POST', '/api/tokens', await call('POST', '/api/tokens', '/api/tokens', { token: t, body: { role: 'reader', label: 'x'.repeat(200) } }));
        assert.equal(bad.status, 'success');
        conforms('DELETE', '/api/tokens/{id}', await call('DELETE', '/api/tokens/{id}', `/api/tokens/${made.data.id}`, { token: t }));
        const again = conforms('DELETE', '/api/tokens/{id}', await call('DELETE', '/api/tokens/{id}', `/api/tokens/${made.data.id}`, { token: t }));
        assert.equal(again.error.code, 'NOT_FOUND');
        const sp = conforms('GET', '/api/spaces', await call('GET', '/api/spaces', '/api/spaces', { token: s.token('default', 'reader', 'openapi spaces') }));
        assert.equal(sp.data.current, 'default');
        const ov = conforms('GET', '/api/overview', await call('GET', '/api/overview', '/api/overview', { token: t }));
        assert.ok(ov.data.counts.experiences >= 1);
    });

    test('the review queue answers as described, a held write too', async () => {
        const space = 'openapi-review';
        const admin = s.token(space, 'admin', 'openapi review');
        const agent = conforms('POST', '/api/tokens', await call('POST', '/api/tokens', '/api/tokens', { token: admin, body: { role: 'agent', label: 'openapi review agent', review: 'agent_writes' } })).data.token;
        const pol = conforms('PUT', '/api/review/policy', await call('PUT', '/api/review/policy', '/api/review/policy', { token: admin, body: { policy: 'agent_writes' } }));
        assert.equal(pol.data.policy, 'agent_writes');
        conforms('GET', '/api/review/policy', await call('GET', '/api/review/policy', '/api/review/policy', { token: admin }));
        const held = conforms('POST', '/api/knowledge', await call('POST', '/api/knowledge', '/api/knowledge', { token: agent, body: { scenario: 'openapi review', content: 'held for review' } }));
        assert.equal(held.data.status, 'pending');
        const w = conforms('POST', '/api/knowledge/write', await call('POST', '/api/knowledge/write', '/api/knowledge/write', { token: agent, body: { category: 'experiences', path: 'held.md', content: 'held too' } }));
        assert.equal(w.data.status, 'pending');
        const q = conforms('GET', '/api/review', await call('GET', '/api/review', '/api/review?state=pending', { token: admin }));
        assert.equal(q.data.total, 2);
        const one = conforms('GET', '/api/review/{id}', await call('GET', '/api/review/{id}', `/api/review/${held.data.proposal_id}`, { token: admin }));
        assert.equal(one.data.base_document, null);
        // Served to a trace that opts in, and its verdict's promotion.
        const served = conforms('GET', '/api/knowledge/search', await call('GET', '/api/knowledge/search', '/api/knowledge/search?q=openapi+review&trace_id=oa-prom&include_pending=true', { token: agent }));
        assert.equal(served.data.results[0].pending, true);
        const ev = conforms('POST', '/api/traces/{trace_id}/evaluations', await call('POST', '/api/traces/{trace_id}/evaluations', '/api/traces/oa-prom/evaluations', { token: agent, body: { trigger: 'goal_completion', evaluations: [{ knowledge_id: held.data.proposal_id, eval_status: 'helpful', reason: 'fine' }] } }));
        assert.equal(ev.data.updated[0].promotion.helpful_traces, 1);
        const d = conforms('POST', '/api/review/{id}/decide', await call('POST', '/api/review/{id}/decide', `/api/review/${w.data.proposal_id}/decide`, { token: admin, body: { decision: 'approve' } }));
        assert.equal(d.data.state, 'approved');
        assert.ok(Array.isArray(d.data.conflicts), 'an approval answers the conflict check of its write');
        const del = conforms('POST', '/api/knowledge/delete', await call('POST', '/api/knowledge/delete', '/api/knowledge/delete', { token: agent, body: { category: 'experiences', path: 'held.md' } }));
        assert.equal(del.data.kind, 'delete');
        const del2 = conforms('DELETE', '/api/knowledge/{id}', await call('DELETE', '/api/knowledge/{id}', `/api/knowledge/${d.data.result_id}`, { token: agent }));
        assert.equal(del2.data.status, 'pending');
        // a rename and a revert are held too; a rename's view has its old place
        const rn = conforms('POST', '/api/knowledge/rename', await call('POST', '/api/knowledge/rename', '/api/knowledge/rename', { token: agent, body: { category: 'experiences', path: 'held.md', new_path: 'held2.md' } }));
        assert.deepEqual([rn.data.status, rn.data.kind, rn.data.path], ['pending', 'rename', 'held2.md']);
        const rnv = conforms('GET', '/api/review/{id}', await call('GET', '/api/review/{id}', `/api/review/${rn.data.proposal_id}`, { token: admin }));
        assert.deepEqual(rnv.data.from, { category: 'experiences', path: 'held.md' });
        const rv = conforms('POST', '/api/knowledge/{id}/revert', await call('POST', '/api/knowledge/{id}/revert', `/api/knowledge/${d.data.result_id}/revert`, { token: agent, body: { version: 1 } }));
        assert.deepEqual([rv.data.status, rv.data.kind], ['pending', 'update']);
        const again = conforms('POST', '/api/review/{id}/decide', await call('POST', '/api/review/{id}/decide', `/api/review/${w.data.proposal_id}/decide`, { token: admin, body: { decision: 'reject', reason: 'late' } }));
        assert.equal(again.error.key, 'already_decided');
        // under all, an admin's slim holds each merge: its view lists the members
        const twin = { scenario: 'openapi slim twin scenario for a held merge of two entries', content: 'the very same text in both twins, word for word, to merge them' };
        for (let i = 0; i < 2; i++) ok(await s.api('POST', '/api/knowledge', { token: admin, body: twin }));
        ok(await s.api('PUT', '/api/review/policy', { token: admin, body: { policy: 'all' } }));
        const sj = ok(await s.api('POST', '/api/knowledge/slim', { token: admin, body: {} }));
        let job;
        for (let i = 0; i < 100 && !['done', 'failed'].includes(job?.data.status); i++) {
            if (i) await new Promise((r) => setTimeout(r, 100));
            job = conforms('GET', '/api/jobs/{id}', await call('GET', '/api/jobs/{id}', `/api/jobs/${sj.id}`, { token: admin }));
        }
        assert.equal(job.data.result.held_groups.length, 1);
        const sm = conforms('GET', '/api/review/{id}', await call('GET', '/api/review/{id}', `/api/review/${job.data.result.held_groups[0].proposal_id}`, { token: admin }));
        assert.deepEqual([sm.data.kind, sm.data.members.length, sm.data.members[0].status], ['slim_merge', 1, 'active']);
    });

    test('typed links and supersede answer as described, and a search\'s conflicts_with', async () => {
        const t = s.token('openapi-links', 'admin', 'openapi links');
        const save = async (word) => ok(await s.api('POST', '/api/knowledge', { token: t, body: { scenario: `openapi ${word} links`, content: `thistlemoor ${word}` } })).id;
        const [a, b, c] = [await save('alpha'), await save('beta'), await save('gamma')];
        const l = conforms('POST', '/api/knowledge/{id}/links', await call('POST', '/api/knowledge/{id}/links', `/api/knowledge/${a}/links`, { token: t, body: { to: b, type: 'contradicts', reason: 'openapi' } }));
        assert.equal(l.data.added, true);
        const bad = conforms('POST', '/api/knowledge/{id}/links', await call('POST', '/api/knowledge/{id}/links', `/api/knowledge/${a}/links`, { token: t, body: { to: a, type: 'related' } }));
        assert.equal(bad.error.key, 'link_self');
        const hits = conforms('GET', '/api/knowledge/search', await call('GET', '/api/knowledge/search', '/api/knowledge/search?q=thistlemoor', { token: t }));
        assert.deepEqual(hits.data.results.find((h) => h.id === b).conflicts_with, [a]);
        const sup = conforms('POST', '/api/knowledge/{id}/links', await call('POST', '/api/knowledge/{id}/links', `/api/knowledge/${a}/links`, { token: t, body: { to: c, type: 'supersedes' } }));
        assert.equal(sup.data.type, 'supersedes');
        const ls = conforms('GET', '/api/knowledge/{id}/links', await call('GET', '/api/knowledge/{id}/links', `/api/knowledge/${c}/links`, { token: t }));
        assert.deepEqual(ls.data.items.map((i) => [i.direction, i.type, i.other.id]), [['in', 'supersedes', a]]);
        const revs = conforms('GET', '/api/knowledge/{id}/revisions', await call('GET', '/api/knowledge/{id}/revisions', `/api/knowledge/${c}/revisions`, { token: t }));
        assert.equal(revs.data.items[0].reason, 'supersede');
        // explain=true on both searches: the components and what was left out (the superseded one)
        const ex = conforms('GET', '/api/knowledge/search', await call('GET', '/api/knowledge/search', '/api/knowledge/search?q=thistlemoor&explain=true', { token: t }));
        assert.equal(typeof ex.data.results[0].explain.quality.value, 'number');
        assert.ok(ex.data.left_out.some((x) => x.id === c && x.why === 'superseded'));
        const fx = conforms('POST', '/api/knowledge/search', await call('POST', '/api/knowledge/search', '/api/knowledge/search', { token: t, body: { query: 'thistlemoor', explain: true } }));
        assert.equal(typeof fx.data.results[0].explain.relevance.fused, 'number');
        assert.ok(fx.data.left_out.some((x) => x.id === c && x.why === 'superseded'));
        const rm = conforms('DELETE', '/api/knowledge/{id}/links/{to}/{type}', await call('DELETE', '/api/knowledge/{id}/links/{to}/{type}', `/api/knowledge/${a}/links/${c}/supersedes`, { token: t }));
        assert.equal(rm.data.removed, true);
    });

    test('evidence ageing: the policy answers as described, an aged search too', async () => {
        const t = s.token('openapi-evidence', 'admin', 'openapi evidence');
        const id = ok(await s.api('POST', '/api/knowledge', { token: t, body: { scenario: 'openapi evidence', content: 'quillwort ageing' } })).id;
        ok(await s.api('PUT', `/api/knowledge/${id}`, { token: t, body: { add_helpful_case: { case_id: 'oa-ev', scenario: 's', result: 'r' } } }));
        const off = conforms('GET', '/api/evidence/policy', await call('GET', '/api/evidence/policy', '/api/evidence/policy', { token: t }));
        assert.equal(off.data.half_life_days, 0);
        const on = conforms('PUT', '/api/evidence/policy', await call('PUT', '/api/evidence/policy', '/api/evidence/policy', { token: t, body: { half_life_days: 30 } }));
        assert.equal(on.data.half_life_days, 30);
        const aged = conforms('GET', '/api/knowledge/search', await call('GET', '/api/knowledge/search', '/api/knowledge/search?q=quillwort&explain=true', { token: t }));
        assert.equal(aged.data.results[0].explain.quality.half_life_days, 30);
    });

    test('conflict items answer as described: the write check, the item with its sides, its decisions', async () => {
        const t = s.token('openapi-conflicts', 'admin', 'openapi conflicts');
        const body = (w) => ({ scenario: 'Serve JSON answers through the nginx proxy', content: `${w} enable gzip compression on the nginx proxy for JSON answers.` });
        const rule = ok(await s.api('POST', '/api/knowledge', { token: t, body: { category: 'rules', path: 'oa-gzip.md', ...body('Never') } }));
        const a = conforms('POST', '/api/knowledge', await call('POST', '/api/knowledge', '/api/knowledge', { token: t, body: body('Always') }));
        const c = a.data.conflicts.find((x) => x.id === rule.id);
        assert.deepEqual([c.verdict, c.against_rule, c.judge], ['contradiction', true, 'local']);
        const q = conforms('GET', '/api/review', await call('GET', '/api/review', '/api/review?state=pending', { token: t }));
        assert.equal(q.data.items.find((p) => p.id === c.review_id).conflict.against_rule, true);
        const one = conforms('GET', '/api/review/{id}', await call('GET', '/api/review/{id}', `/api/review/${c.review_id}`, { token: t }));
        assert.deepEqual(one.data.sides.map((x) => x.id), [a.data.id, rule.id]);
        const bad = conforms('POST', '/api/review/{id}/decide', await call('POST', '/api/review/{id}/decide', `/api/review/${c.review_id}/decide`, { token: t, body: { decision: 'approve' } }));
        assert.equal(bad.error.key, 'invalid_decision');
        const narrowed = one.data.sides[0].document.replace('JSON answers.', 'JSON answers under 1 KB only.');
        const n = conforms('POST', '/api/review/{id}/decide', await call('POST', '/api/review/{id}/decide', `/api/review/${c.review_id}/decide`, { token: t, body: { decision: 'narrow', documents: { [a.data.id]: narrowed } } }));
        assert.deepEqual([n.data.state, n.data.decision], ['approved', 'narrow']);
    });

    test('an entry\'s time fields and the stale view answer as described', async () => {
        const t = s.token('openapi-time', 'admin', 'openapi time');
        const k = conforms('POST', '/api/knowledge', await call('POST', '/api/knowledge', '/api/knowledge', { token: t, body: { scenario: 'openapi time', content: 'quillbrook expired', expires_at: '2000-01-01', review_after: null, pinned: true } }));
        assert.deepEqual([k.data.expires_at, k.data.review_after, k.data.pinned], ['2000-01-01T00:00:00Z', null, true]);
        const u = conforms('PUT', '/api/knowledge/{id}', await call('PUT', '/api/knowledge/{id}', `/api/knowledge/${k.data.id}`, { token: t, body: { review_after: '2000-02-01T10:00:00Z' } }));
        assert.equal(u.data.review_after, '2000-02-01T10:00:00Z');
        const bad = conforms('PUT', '/api/knowledge/{id}', await call('PUT', '/api/knowledge/{id}', `/api/knowledge/${k.data.id}`, { token: t, body: { expires_at: '2000-02-30' } }));
        assert.equal(bad.error.key, 'invalid_time');
        const st = conforms('GET', '/api/knowledge/stale', await call('GET', '/api/knowledge/stale', '/api/knowledge/stale?limit=5', { token: t }));
        assert.deepEqual(st.data.items.map((i) => [i.id, i.why]), [[k.data.id, 'expired']]);
    });

    test('every operation of the file had a live answer checked above', () => {
        const missing = specOperations(SPEC).map((o) => `${o.method} ${o.path}`).filter((k) => !checked.has(k));
        assert.deepEqual(missing, [], 'operations without a live check in this file');
    });

    test('an answer with a field the file does not describe fails the check', () => {
        const v = answerSchema('GET', '/api/health', 200);
        assert.equal(v({ status: 'success', data: { ok: true, version: '0.1.0', schema: 14, store: 'sqlite' } }), true);
        assert.equal(v({ status: 'success', data: { ok: true, version: '0.1.0', schema: 14, store: 'sqlite', extra: 1 } }), false);
        assert.equal(v({ status: 'success', data: { ok: true, version: '0.1.0' } }), false);
        assert.equal(v({ status: 'error', error: { code: 'NO_SUCH_CODE', message: 'm', retry: false, request_id: 'r' } }), false);
    });
});
