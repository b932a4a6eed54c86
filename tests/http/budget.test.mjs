// Token budgets (docs/agents.md "Token budgets"): budget_tokens on
// POST /api/knowledge/context and GET /api/knowledge/rules, through nginx.
// The rules first and never cut (over_budget when they alone pass the
// budget); then the knowledge in the search's order, duplicates (same
// title, or a body near-identical to an earlier one's) omitted, each whole while it fits, then as a one-line summary with
// its knowhub:// URI, then omitted; tokens_used <= budget_tokens for every
// budget; golden answers at 500, 2,000 and 8,000 tokens on a fixture space;
// without budget_tokens the answers are as they always were.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { startStack } from './lib/stack.mjs';
import { err, ok } from './lib/expect.mjs';
import { fileView } from './lib/files_helpers.mjs';
import { execFileSync } from 'node:child_process';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/tokens');
const fixture = (name) => fs.readFileSync(path.join(fixtures, name), 'utf8');
let s;
let spaceNo = 0;
before(async () => (s = await startStack()));
after(async () => s?.stop());
/** A fresh space: its admin's file view and a reader token. */
const freshSpace = (space = `budget-${++spaceNo}`) => ({
    admin: fileView(s, s.token(space, 'admin', 'budget-admin')),
    reader: s.token(space, 'reader', 'budget-reader'),
});

const QUESTION = 'How do I roll back a failed deployment of the billing service?';

/** The paragraphs of the token fixtures (tests/fixtures/tokens), English
 * and Chinese, without front matter. */
const PARAGRAPHS = fs.readdirSync(fixtures).filter((f) => f.endsWith('.md')).sort()
    .flatMap((f) => fixture(f).replace(/^---\n[\s\S]*?\n---\n/, '').split(/\n\n+/))
    .filter((p) => p.trim() && !p.startsWith('```'));

/** The body of experience i: the paragraphs from the i-th on (every third),
 * up to 1,800 characters. */
function bodyOf(i) {
    let text = '';
    for (let k = 0; k < PARAGRAPHS.length; k++) {
        const p = PARAGRAPHS[(i * 3 + k) % PARAGRAPHS.length];
        if ([...text].length + [...p].length + 2 > 1800) break;
        text += (text ? '\n\n' : '') + p;
    }
    return text;
}

const TITLES = [
    'Rolling back a failed deployment of the billing service',
    'Rollback checklist for a failed deployment',
    'Canary deployments make a rollback cheap',
    'Rolling back a database migration after a failed deployment',
    'Feature flags instead of a rollback',
    'Alerts that call for a rollback of the billing service',
    'Helm rollback of a failed release',
    'Writing the postmortem after a rollback',
    'Rollback of the ingestion workers after a bad configuration',
    'Deployment freezes and emergency rollbacks',
    'Blue-green deployment: switching back is the rollback',
    'Rollback drills every quarter',
    '计费服务发布失败后的回滚 (billing rollback)',
    '回滚之前先确认迁移是否可逆 (rollback and migrations)',
    'Who may approve a rollback of the billing service',
    'Rolling back a failed deployment of the billing service!',
];

/** The fixture space: two short always-apply rules and sixteen experiences
 * about rollbacks (bodies from the token fixtures, about 350 to 700 tokens
 * each), the last one a duplicate title of the first. */
async function fixtureSpace() {
    const { admin, reader } = freshSpace();
    await admin.put('rules', 'answer-language.md', '---\ntitle: Answer in the user\'s language\n---\nAnswer in the language the user wrote in; keep code and identifiers as they are.\n');
    await admin.put('rules', 'no-customer-ids.md', '---\ntitle: No customer identifiers\n---\nCustomer identifiers (customer_id, email, phone) never appear in an answer, a chart title or a file name.\n');
    for (const [i, title] of TITLES.entries())
        await admin.put('experiences', `deploy/note-${String(i).padStart(2, '0')}.md`,
            `---\ntitle: ${JSON.stringify(title)}\ndescription: ${JSON.stringify(`What we learned: ${title.toLowerCase()}.`)}\n---\n` +
            `A note on the rollback of a failed deployment.\n\n${bodyOf(i)}\n`);
    const list = ok(await admin.post('list', { category: 'experiences' })).items;
    const paths = new Map(list.map((i) => [i.id, i.path]));
    return { admin, reader, paths };
}

const context = (token, b) => s.api('POST', '/api/knowledge/context', { token, body: b });
const rules = (token, qs = '') => s.api('GET', `/api/knowledge/rules${qs}`, { token });

/** The C estimator's count of each text (bench_tokcount, built beside knowhub). */
function estimate(...texts) {
    const dir = fs.mkdtempSync('/tmp/knowhub-budget-');
    try {
        const files = texts.map((t, i) => {
            const f = path.join(dir, `t${i}`);
            fs.writeFileSync(f, t);
            return f;
        });
        const bin = path.join(path.dirname(process.env.KNOWHUB_BIN), 'bench_tokcount');
        return execFileSync(bin, files, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
            .trim().split('\n').map((l) => Number(l.split(' ')[2]));
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
}

/** What a budgeted answer must be, whatever the budget: within it (or over
 * it only for the rules), its tokens the estimate of its blocks, the forms
 * in order (whole, then summaries), every hit either given or omitted once,
 * in the search's order. */
function checkBudgeted(d, budget, order, paths) {
    assert.equal(d.budget_tokens, budget);
    const [rulesTokens, knowledgeTokens] = estimate(d.rules_block, d.knowledge_block);
    assert.equal(d.tokens_used, rulesTokens + knowledgeTokens, `budget ${budget}: tokens_used is the blocks' estimate`);
    assert.equal(d.over_budget, rulesTokens > budget);
    if (!d.over_budget) assert.ok(d.tokens_used <= budget, `budget ${budget}: ${d.tokens_used} tokens used`);
    const forms = d.knowledge.map((k) => k.form).join(' ');
    assert.match(forms, /^(full ?)*(summary ?)*$/, `budget ${budget}: whole first, then summaries: ${forms}`);
    for (const k of d.knowledge) {
        assert.equal(k.uri, `knowhub://entries/${k.id}`);
        assert.equal(paths.get(k.id), k.path);
        if (k.form === 'summary') assert.ok(k.snippet.endsWith(`(read in full: ${k.uri})`), k.snippet);
        assert.ok(d.knowledge_block.includes(k.snippet));
    }
    // each hit once, given or omitted, in the search's order; budget omissions last
    const given = new Set(d.knowledge.map((k) => k.id));
    const omitted = new Map(d.omitted.map((o) => [o.id, o.reason]));
    assert.equal(given.size + omitted.size, order.length);
    assert.deepEqual(order.filter((id) => given.has(id)), d.knowledge.map((k) => k.id));
    const reasons = order.filter((id) => !given.has(id) || omitted.has(id)).map((id) => omitted.get(id));
    assert.ok(reasons.every((r) => r === 'budget' || r === 'duplicate'), reasons.join());
    const firstBudget = order.findIndex((id) => omitted.get(id) === 'budget');
    if (firstBudget >= 0)
        assert.ok(order.slice(firstBudget).every((id) => omitted.has(id)), `budget ${budget}: nothing given after the first omitted for the budget`);
}

describe('budget_tokens on POST /api/knowledge/context', () => {
    let sp, order;
    before(async () => {
        sp = await fixtureSpace();
        // the search's order: the budgeted answers consider 50 hits
        order = ok(await context(sp.reader, { question: QUESTION, budget_tokens: 200000 })).knowledge.map((k) => k.id);
        const dup = [...sp.paths].find(([, p]) => p === 'deploy/note-15.md')[0];
        const unbudgeted = ok(await context(sp.reader, { question: QUESTION, max_results: 50 })).knowledge.map((k) => k.path);
        order = unbudgeted.map((p) => [...sp.paths].find(([, q]) => q === p)[0]);
        assert.ok(order.includes(dup));
    });

    // Golden answers: [path, form] in order, then the omitted [path, reason].
    const GOLDEN = {
        500: {
            knowledge: [['note-00', 'summary'], ['note-03', 'summary'], ['note-01', 'summary'], ['note-05', 'summary'],
                ['note-14', 'summary'], ['note-10', 'summary'], ['note-02', 'summary']],
            omitted: [['note-15', 'duplicate'], ['note-12', 'budget'], ['note-09', 'budget'], ['note-06', 'budget'],
                ['note-11', 'budget'], ['note-08', 'budget'], ['note-07', 'budget'], ['note-04', 'budget'], ['note-13', 'budget']],
        },
        2000: {
            knowledge: [['note-00', 'full'], ['note-03', 'full'], ['note-01', 'full'], ['note-05', 'full']],
            omitted: [['note-15', 'duplicate'], ['note-14', 'budget'], ['note-10', 'budget'], ['note-02', 'budget'],
                ['note-12', 'budget'], ['note-09', 'budget'], ['note-06', 'budget'], ['note-11', 'budget'], ['note-08', 'budget'],
                ['note-07', 'budget'], ['note-04', 'budget'], ['note-13', 'budget']],
        },
        8000: {
            knowledge: [['note-00', 'full'], ['note-03', 'full'], ['note-01', 'full'], ['note-05', 'full'], ['note-14', 'full'],
                ['note-10', 'full'], ['note-02', 'full'], ['note-12', 'full'], ['note-09', 'full'], ['note-06', 'full'],
                ['note-11', 'full'], ['note-08', 'full'], ['note-07', 'full'], ['note-04', 'full'], ['note-13', 'summary']],
            omitted: [['note-15', 'duplicate']],
        },
    };
    const short = (p) => p.replace(/^deploy\//, '').replace(/\.md$/, '');

    for (const budget of [500, 2000, 8000]) {
        test(`the golden answer at ${budget} tokens`, async () => {
            const d = ok(await context(sp.reader, { question: QUESTION, budget_tokens: budget }));
            assert.deepEqual(d.knowledge.map((k) => [short(k.path), k.form]), GOLDEN[budget].knowledge);
            assert.deepEqual(d.omitted.map((o) => [short(sp.paths.get(o.id)), o.reason]), GOLDEN[budget].omitted);
            assert.equal(d.over_budget, false);
            assert.equal(d.rules.length, 2);
            checkBudgeted(d, budget, order, sp.paths);
        });
    }

    test('tokens_used <= budget_tokens for every budget from 100 to 12,000, and the answer is deterministic', async () => {
        let previous = -1;
        for (let budget = 100; budget <= 12000; budget += budget < 1000 ? 37 : 293) {
            const d = ok(await context(sp.reader, { question: QUESTION, budget_tokens: budget }));
            checkBudgeted(d, budget, order, sp.paths);
            // more budget never gives less
            assert.ok(d.tokens_used >= previous, `budget ${budget}: ${d.tokens_used} after ${previous}`);
            previous = d.tokens_used;
        }
        const a = ok(await context(sp.reader, { question: QUESTION, budget_tokens: 3000 }));
        const b = ok(await context(sp.reader, { question: QUESTION, budget_tokens: 3000 }));
        assert.deepEqual(a, b);
    });

    test('a whole entry is its content; a summary its description, one line, and its URI', async () => {
        const d = ok(await context(sp.reader, { question: QUESTION, budget_tokens: 8000 }));
        const full = d.knowledge.find((k) => k.form === 'full');
        const entry = ok(await sp.admin.read('experiences', full.path));
        assert.equal(full.snippet, entry.content.replace(/^---\n[\s\S]*?\n---\n/, '').trim());
        const summary = d.knowledge.find((k) => k.form === 'summary');
        assert.equal(summary.snippet, `What we learned: ${TITLES[13].toLowerCase()}. (read in full: knowhub://entries/${summary.id})`);
        assert.ok(!summary.snippet.includes('\n'));
        assert.ok(d.knowledge_block.includes(`### [knowledge] ${TITLES[13]}\n${summary.snippet}\n`));
    });

    test('without budget_tokens the answer is as it always was', async () => {
        const d = ok(await context(sp.reader, { question: QUESTION }));
        assert.deepEqual(Object.keys(d).sort(), ['knowledge', 'knowledge_block', 'rules', 'rules_block']);
        assert.equal(d.knowledge.length, 5);
        for (const k of d.knowledge) assert.deepEqual(Object.keys(k).sort(), ['category', 'path', 'snippet', 'title']);
        assert.ok(d.knowledge.every((k) => [...k.snippet].length <= 500));
    });

    test('a wrong budget_tokens is INVALID_REQUEST with its bounds, and nothing else is answered', async () => {
        for (const budget_tokens of [99, 0, -5, 200001, '500', 1.5, true, [500], { n: 500 }]) {
            const e = err(await context(sp.reader, { question: QUESTION, budget_tokens }), 'INVALID_REQUEST');
            assert.equal(e.key, 'field_not_integer');
            assert.deepEqual(e.params, { field: 'budget_tokens', min: 100, max: 200000 });
            assert.equal(e.message, "'budget_tokens' must be an integer between 100 and 200000");
        }
        for (const budget_tokens of [100, 200000]) ok(await context(sp.reader, { question: QUESTION, budget_tokens }));
    });

    test('max_results still bounds the hits a budget considers', async () => {
        const d = ok(await context(sp.reader, { question: QUESTION, budget_tokens: 200000, max_results: 3 }));
        // the second hit is the first one's duplicate
        assert.deepEqual(d.knowledge.map((k) => k.id), [order[0], order[2]]);
        assert.deepEqual(d.omitted, [{ id: order[1], reason: 'duplicate' }]);
    });
});

describe('near-duplicates by their text', () => {
    test('a body near-identical to an earlier hit\'s is omitted as a duplicate whatever its title; opposite advice in the same words is not', async () => {
        const { admin, reader } = freshSpace();
        const body = 'When the disk fills up on the billing hosts, rotate the application logs daily with logrotate, compress the rotated files, keep fourteen of them, and let logrotate signal the service to reopen its files instead of restarting it.';
        const flipped = body.replace('rotate the application logs daily', 'never rotate the application logs').replace('instead of restarting it', 'and restart it');
        await admin.write('experiences', 'disk/one.md', `---\ntitle: Disk full on the billing hosts\n---\n${body}\n`);
        await admin.write('experiences', 'disk/two.md', `---\ntitle: Log rotation when a disk fills\n---\n${body} Quickly.\n`);
        await admin.write('experiences', 'disk/three.md', `---\ntitle: What not to do with billing logs\n---\n${flipped}\n`);
        const d = ok(await context(reader, { question: 'disk fills up billing hosts rotate application logs logrotate', budget_tokens: 8000 }));
        // one.md ranks first (the question's words are in its title): two.md is its near-duplicate
        assert.deepEqual(d.knowledge.map((k) => k.path), ['disk/one.md', 'disk/three.md'], JSON.stringify(d));
        const two = ok(await s.api('POST', '/api/knowledge/read', { token: reader, body: { category: 'experiences', path: 'disk/two.md' } }));
        assert.deepEqual(d.omitted, [{ id: two.id, reason: 'duplicate' }]);
    });
});

describe('over budget: the rules alone pass it', () => {
    let reader, admin, paths, ruleTitles;
    before(async () => {
        ({ admin, reader } = freshSpace());
        // every item of the rules fixtures as an always-apply rule (a rule holds 350 characters)
        ruleTitles = [];
        for (const f of ['en-rules.md', 'zh-rules.md']) {
            const items = fixture(f).split(/\n(?=\d+\. |- )|\n\n/).map((t) => t.trim())
                .filter((t) => /^(\d+\. |- )/.test(t) && [...t].length <= 350);
            for (const [i, item] of items.entries()) {
                const title = `${f.slice(0, 2)} rule ${String(i + 1).padStart(2, '0')}`;
                ruleTitles.push(title);
                await admin.put('rules', `${f.slice(0, 2)}-rule-${String(i + 1).padStart(2, '0')}.md`, `---\ntitle: ${title}\n---\n${item.replace(/^(\d+\. |- )/, '')}\n`);
            }
        }
        assert.ok(ruleTitles.length >= 20, `${ruleTitles.length} rules`);
        await admin.put('experiences', 'partitions.md', '---\ntitle: Partition filters\n---\nFilter the events table by event_date: a full scan costs forty dollars.\n');
        await admin.put('experiences', 'revenue.md', '---\ntitle: Revenue numbers\n---\nRevenue comes from finance.revenue_daily, never from the orders table.\n');
        paths = new Map(ok(await admin.post('list', { category: 'experiences' })).items.map((i) => [i.id, i.path]));
    });

    test('/context says over_budget, keeps every rule whole and lists the knowledge it left out', async () => {
        const question = 'events table revenue numbers';
        const plain = ok(await context(reader, { question }));
        assert.equal(plain.knowledge.length, 2);
        const d = ok(await context(reader, { question, budget_tokens: 1000 }));
        assert.equal(d.over_budget, true);
        assert.ok(d.tokens_used > 1000, `${d.tokens_used}`);
        assert.equal(d.rules_block, plain.rules_block);
        assert.deepEqual(d.rules, plain.rules);
        assert.deepEqual(d.rules.map((r) => r.title).sort(), [...ruleTitles].sort());
        assert.deepEqual(d.knowledge, []);
        assert.equal(d.knowledge_block, '');
        assert.deepEqual(d.omitted.map((o) => [paths.get(o.id), o.reason]), plain.knowledge.map((k) => [k.path, 'budget']));
        checkBudgeted(d, 1000, d.omitted.map((o) => o.id), paths);
    });

    test('/rules says over_budget and keeps every rule whole', async () => {
        const plain = ok(await rules(reader));
        assert.deepEqual(Object.keys(plain).sort(), ['block', 'rules']);
        const d = ok(await rules(reader, '?budget_tokens=1000'));
        assert.deepEqual(d.rules, plain.rules);
        assert.equal(d.block, plain.block);
        assert.equal(d.over_budget, true);
        assert.equal(d.budget_tokens, 1000);
        assert.deepEqual(d.omitted, []);
        assert.equal(d.tokens_used, estimate(plain.block)[0]);
        assert.ok(d.tokens_used > 1000);
        const roomy = ok(await rules(reader, '?budget_tokens=5000'));
        assert.equal(roomy.over_budget, false);
        assert.equal(roomy.tokens_used, d.tokens_used);
    });

    test('/rules refuses a wrong budget_tokens with its bounds', async () => {
        for (const q of ['abc', '99', '200001', '1.5', '-1', '1e3']) {
            const e = err(await rules(reader, `?budget_tokens=${q}`), 'INVALID_REQUEST');
            assert.equal(e.key, 'field_not_integer');
            assert.deepEqual(e.params, { field: 'budget_tokens', min: 100, max: 200000 });
        }
        // empty is absent, as for every integer parameter
        assert.deepEqual(Object.keys(ok(await rules(reader, '?budget_tokens='))).sort(), ['block', 'rules']);
    });
});
