// conflict_write.mjs: what the rule flag costs a write (docs/conflicts.md
// "The check on every write"): the latency of POST /api/knowledge through
// nginx for WRITES experiences, one after another, interleaved between a
// space with no rules and one with RULES always-apply rules made of the same words (so the
// rules' search finds candidates and the detector judges them). A
// measurement, never a pass/fail.
//   KNOWHUB_BIN=build/knowhub node tests/bench/conflict_write.mjs
import { startStack } from '../http/lib/stack.mjs';
import { summary, wordsFrom } from './lib/words.mjs';

const WRITES = Number(process.env.WRITES || 300);
const RULES = Number(process.env.RULES || 50);
const { pick } = wordsFrom(7);

/** WRITES creates into each space, interleaved (one here, one there, the first in turn), so drift hits both alike. */
async function writes(s, tokens) {
    const out = tokens.map(() => ({ ms: [], judged: 0 }));
    for (let i = 0; i < WRITES; i++) {
        const body = { scenario: `${pick()} ${pick()} report ${i}`, content: `${i % 2 ? 'Always enable' : 'Never enable'} ${pick()} ${pick()} ${pick()} for the ${pick()} step ${i}.` };
        for (let j = 0; j < tokens.length; j++) {
            const k = (i + j) % tokens.length; // who goes first alternates too
            const t0 = performance.now();
            const r = await s.api('POST', '/api/knowledge', { token: tokens[k], body });
            out[k].ms.push(performance.now() - t0);
            if (r.json?.status !== 'success') throw new Error(r.text.slice(0, 300));
            out[k].judged += (r.json.data.conflicts || []).filter((c) => c.against_rule).length;
        }
    }
    return out;
}

const s = await startStack();
try {
    const plain = s.token('bench-conflict-plain', 'admin', 'bench');
    const ruled = s.token('bench-conflict-rules', 'admin', 'bench');
    for (let i = 0; i < RULES; i++) {
        const body = { category: 'rules', path: `rule-${i}.md`, scenario: `${pick()} ${pick()} report`, content: `${i % 2 ? 'Never enable' : 'Always enable'} ${pick()} ${pick()} for the ${pick()} step.` };
        const r = await s.api('POST', '/api/knowledge', { token: ruled, body });
        if (r.json?.status !== 'success') throw new Error(r.text.slice(0, 300));
    }
    const [a, b] = await writes(s, [plain, ruled]);
    console.log(`${WRITES} experience creates one after another, one client:`);
    console.log(`  no rules in the space: ${summary(a.ms)}`);
    console.log(`  ${RULES} always-apply rules of the same words: ${summary(b.ms)} (${b.judged} items against a rule listed)`);
} finally {
    await s.stop();
}
