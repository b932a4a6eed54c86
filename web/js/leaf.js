// leaf.js: the analysis-session rules of seed 004 section 7 and REFERENCE.md
// section 6, as pure functions (no DOM) so they are tested on their own.
//
// A session is a list of tables. A derived table names its parent in
// derive.trigger.tableId. The "Save as Experience" button belongs only on a
// leaf derived table: derived, and no non-anchored table derives from it.
// The experience context is built from the visible chain that ends at the
// leaf: deleted tables are not in the list any more (the server re-parents
// their children), so they can never be included; execution attempts travel
// as summaries, never as code.

export const parentId = (table) => (table && table.derive && table.derive.trigger ? table.derive.trigger.tableId ?? null : null);

export function isLeafDerivedTable(table, tables) {
    if (!table || !table.derive) return false;
    return !tables.some((t) => t !== table && !t.anchored && parentId(t) === table.id);
}

/** The chain from the root to leaf, walking parents; stops at a missing parent, a cycle or the root. */
export function visibleChain(leaf, tables) {
    const byId = new Map(tables.map((t) => [t.id, t]));
    const chain = [leaf];
    const seen = new Set([leaf.id]);
    let cur = leaf;
    while (cur.derive) {
        const pid = parentId(cur);
        if (pid === null || seen.has(pid) || !byId.has(pid)) break;
        seen.add(pid);
        cur = byId.get(pid);
        chain.push(cur);
    }
    return chain.reverse();
}

/** The interaction entries of one table (DF keeps them in derive.trigger). */
export function interactionOf(table) {
    const d = table.derive || {};
    const v = (d.trigger && d.trigger.interaction) || d.interaction || table.interaction;
    return Array.isArray(v) ? v : [];
}

export function dialogOf(table) {
    const d = table.derive || {};
    const v = d.dialog || table.dialog;
    return Array.isArray(v) ? v : [];
}

export function chartOf(table) {
    const d = table.derive || {};
    return (d.trigger && d.trigger.chart) || table.chart || null;
}

export function chartType(table) {
    const c = chartOf(table);
    if (!c) return undefined;
    const type = c.mark || c.chartType || c.chart_type;
    return type && type !== 'auto' ? String(type) : undefined;
}

export function rowCount(table) {
    if (table.virtual && typeof table.virtual.rowCount === 'number') return table.virtual.rowCount;
    return Array.isArray(table.rows) ? table.rows.length : 0;
}

/** The fields of a table: names, else the keys of its first row. */
export function fieldsOf(table) {
    if (Array.isArray(table.names)) return table.names.map(String);
    if (Array.isArray(table.fields)) return table.fields.map((f) => String(f && typeof f === 'object' ? f.name : f));
    const r = Array.isArray(table.rows) && table.rows[0];
    return r && typeof r === 'object' ? Object.keys(r) : [];
}

/** The user's question of a list of interaction entries. */
export function userQuestion(interaction) {
    const prompt = interaction.find((e) => e && e.from === 'user' && e.role === 'prompt');
    const any = prompt || interaction.find((e) => e && e.from === 'user');
    const text = any && (any.content ?? any.displayContent);
    return text ? String(text) : '';
}

const OPS = [
    ['groupby', /\bgroupby\s*\(|\bGROUP\s+BY\b/i],
    ['merge', /\bmerge\s*\(|\bjoin\s*\(|\bJOIN\b/i],
    ['pivot', /\bpivot(_table)?\s*\(|\bmelt\s*\(/i],
    ['filter', /\.query\s*\(|\.loc\s*\[|\bWHERE\b|\.filter\s*\(/i],
    ['sort', /sort_values\s*\(|\bORDER\s+BY\b/i],
    ['aggregate', /\.(sum|mean|agg|count|median)\s*\(|\b(SUM|AVG|COUNT)\s*\(/i],
    ['fillna', /\bfillna\s*\(|\bdropna\s*\(/i],
    ['datetime', /to_datetime\s*\(|\.dt\./i],
    ['window', /\brolling\s*\(|\bshift\s*\(|\bOVER\s*\(/i],
];

/** A short description of code, never the code: "12 lines; groupby, merge". */
export function summarizeCode(code) {
    if (typeof code !== 'string' || !code.trim()) return undefined;
    const lines = code.split('\n').filter((l) => l.trim() && !/^\s*(#|--|\/\/)/.test(l)).length;
    const ops = OPS.filter(([, re]) => re.test(code)).map(([name]) => name);
    return `${lines} line${lines === 1 ? '' : 's'}${ops.length ? `; ${ops.join(', ')}` : ''}`;
}

const ATTEMPT_KEYS = ['table', 'kind', 'attempt', 'status', 'summary', 'code_summary', 'failed_code_summary', 'repair_code_summary', 'error'];

/** An execution attempt as the structured summary the distiller takes (no code). */
export function attemptSummary(a) {
    const out = {};
    if (!a || typeof a !== 'object') return out;
    for (const k of ATTEMPT_KEYS) {
        if (a[k] !== undefined && a[k] !== null) out[k] = typeof a[k] === 'object' ? JSON.stringify(a[k]) : a[k];
    }
    if (out.code_summary === undefined && a.code) out.code_summary = summarizeCode(a.code);
    if (out.failed_code_summary === undefined && a.failed_code) out.failed_code_summary = summarizeCode(a.failed_code);
    if (out.repair_code_summary === undefined && a.repair_code) out.repair_code_summary = summarizeCode(a.repair_code);
    if (typeof out.error === 'string' && out.error.length > 400) out.error = `${out.error.slice(0, 400)}...`;
    for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
    return out;
}

export function attemptsOf(table) {
    const d = table.derive || {};
    const v = d.executionAttempts || d.execution_attempts;
    return Array.isArray(v) ? v : [];
}

/** The agent's instruction of a list of interaction entries: as shown (short), or in full. */
function instructionOf(interaction, full = false) {
    const e = interaction.find((x) => x && x.from === 'data-agent' && x.role === 'instruction');
    if (!e) return '';
    return String((full ? e.content || e.displayContent : e.displayContent || e.content) || '');
}

/** The operations summarizeCode finds in a table's code ("groupby, merge"), or undefined. */
function operationsOf(table) {
    const d = table.derive || {};
    const s = summarizeCode(d.code);
    return s && s.includes('; ') ? s.slice(s.indexOf('; ') + 2) : undefined;
}

/**
 * The experience_context of the leaf's visible chain, or null when there is
 * no user question (the button is then hidden). The question and the
 * instruction are the leaf's own (the table saved from), else the chain's;
 * `chain` says what was done at each derived table, root first; the
 * attempts are every derived table's, each named by its table.
 */
export function buildExperienceContext(leaf, tables) {
    if (!leaf || !leaf.derive) return null;
    const chain = visibleChain(leaf, tables);
    const interaction = chain.flatMap(interactionOf);
    const dialog = chain.flatMap(dialogOf);
    const question = userQuestion(interactionOf(leaf)) || userQuestion(interaction);
    if (!question) return null;
    const instruction = instructionOf(interactionOf(leaf)) || instructionOf(interaction);
    const d = leaf.derive;
    const name = (t) => String(t.displayId || t.id);
    const summary = {
        display_instruction: instruction || undefined,
        output_variable: d.outputVariable ?? d.output_variable,
        source_tables: Array.isArray(d.source) ? d.source : d.source ? [d.source] : [],
        output_fields: fieldsOf(leaf),
        output_rows: rowCount(leaf),
        chart_type: chartType(leaf),
        code: typeof d.code === 'string' ? d.code : undefined,
    };
    for (const k of Object.keys(summary)) if (summary[k] === undefined) delete summary[k];
    const steps = chain
        .filter((t) => t.derive)
        .map((t) => {
            const own = interactionOf(t);
            const step = { table: name(t), question: userQuestion(own) || undefined, instruction: instructionOf(own, true) || undefined, operations: operationsOf(t) };
            for (const k of Object.keys(step)) if (step[k] === undefined) delete step[k];
            return step;
        });
    const ctx = {
        user_question: question,
        dialog,
        interaction,
        chain: steps,
        result_summary: summary,
        execution_attempts: chain.flatMap((t) => attemptsOf(t).map((a) => attemptSummary({ ...a, table: name(t) }))),
        context_id: leaf.id,
    };
    const pid = parentId(leaf);
    if (pid) ctx.source_table_id = pid;
    return ctx;
}

/**
 * The tables as trees for drawing: [{table, children: [...]}] for each root
 * (a table without a parent in the list). Children keep the list's order.
 */
export function forest(tables) {
    const ids = new Set(tables.map((t) => t.id));
    const kids = new Map();
    const roots = [];
    for (const t of tables) {
        const p = parentId(t);
        if (p !== null && ids.has(p) && p !== t.id) {
            if (!kids.has(p)) kids.set(p, []);
            kids.get(p).push(t);
        } else roots.push(t);
    }
    const seen = new Set();
    const build = (t) => {
        seen.add(t.id);
        return { table: t, children: (kids.get(t.id) || []).filter((c) => !seen.has(c.id)).map(build) };
    };
    const out = roots.map(build);
    // Tables caught in a parent cycle have no root: draw them from anywhere.
    for (const t of tables) if (!seen.has(t.id)) out.push(build(t));
    return out;
}
