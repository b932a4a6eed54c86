// fm.js: the front matter of a knowledge document, as the editor needs it
// (pure functions, no DOM). The block is found with the reference's regex;
// the editor changes only the keys it shows (title, tags, description,
// alwaysApply, updated) and keeps every other line as written. Values are
// written JSON-quoted, which is valid YAML.

const FM_RE = /^---[ \t]*\r?\n([\s\S]*?\r?\n)---[ \t]*\r?\n?/;

/** {front: text between the fences (or null), body} */
export function splitDocument(text) {
    const m = FM_RE.exec(text || '');
    if (!m) return { front: null, body: text || '' };
    return { front: m[1], body: text.slice(m[0].length) };
}

/** The body as the editor shows it: without the blank line after the front matter. */
export function editableBody(text) {
    return splitDocument(text).body.replace(/^(\r?\n)+/, '');
}

const KEY_RE = /^(?:"([^"]*)"|'([^']*)'|([^\s#'"\-][^:]*?))\s*:(?:\s|$)/;

/** Top-level blocks: [{key, lines}]; continuation lines stay with their key. */
function blocks(front) {
    const out = [];
    if (!front) return out;
    const lines = front.replace(/\r?\n$/, '').split(/\r?\n/);
    for (const line of lines) {
        const m = /^\S/.test(line) ? KEY_RE.exec(line) : null;
        if (m) out.push({ key: (m[1] ?? m[2] ?? m[3]).trim(), lines: [line] });
        else if (out.length) out[out.length - 1].lines.push(line);
        else out.push({ key: null, lines: [line] });
    }
    return out;
}

const YAML_WORDS = /^(y|n|yes|no|true|false|on|off|null)$/i;

/** YAML text of a value: dates and plain words bare, other strings and lists JSON-quoted. */
export function yamlValue(v) {
    if (typeof v === 'boolean') return v ? 'true' : 'false';
    if (typeof v === 'string' && (/^\d{4}-\d{2}-\d{2}$/.test(v) || (/^[a-z][a-z_-]*$/.test(v) && !YAML_WORDS.test(v)))) return v;
    if (Array.isArray(v)) return `[${v.map((x) => JSON.stringify(String(x))).join(', ')}]`;
    return JSON.stringify(String(v));
}

/**
 * Change keys of a front matter text. updates: {key: value | undefined};
 * undefined removes the key. New keys go at the end, in the given order.
 */
export function patchFront(front, updates) {
    const bs = blocks(front || '');
    const done = new Set();
    const out = [];
    for (const b of bs) {
        if (b.key !== null && Object.prototype.hasOwnProperty.call(updates, b.key)) {
            if (done.has(b.key)) continue; // a duplicated key: keep one
            done.add(b.key);
            const v = updates[b.key];
            if (v !== undefined) out.push(`${b.key}: ${yamlValue(v)}`);
        } else {
            out.push(...b.lines);
        }
    }
    for (const [k, v] of Object.entries(updates)) {
        if (!done.has(k) && v !== undefined) out.push(`${k}: ${yamlValue(v)}`);
    }
    return out.length ? `${out.join('\n')}\n` : '';
}

/** Does the front matter set this key itself (not a default)? */
export function hasKey(front, key) {
    return blocks(front || '').some((b) => b.key === key);
}

/** "a, b ,, c" -> ["a", "b", "c"] (also splits on the Chinese comma). */
export function parseTags(text) {
    return String(text || '')
        .split(/[,，]/)
        .map((s) => s.trim())
        .filter(Boolean);
}

/**
 * The full document the editor saves.
 * f: {category, title, tags: [], description, alwaysApply, body}; previous: the
 * stored text when editing (its other keys are kept), else null.
 */
export function buildDocument(f, previous, today = new Date().toISOString().slice(0, 10)) {
    const old = previous ? splitDocument(previous).front : null;
    const updates = {};
    updates.title = f.title && f.title.trim() ? f.title.trim() : undefined;
    updates.tags = f.tags || [];
    if (f.category === 'rules') {
        updates.description = f.description || '';
        updates.alwaysApply = f.alwaysApply !== false;
    }
    let front;
    if (old !== null) {
        updates.updated = today;
        front = patchFront(old, updates);
    } else {
        Object.assign(updates, { created: today, updated: today, source: 'manual' });
        front = patchFront('', updates);
    }
    let body = String(f.body || '').replace(/\r\n/g, '\n');
    if (body && !body.endsWith('\n')) body += '\n';
    return `---\n${front}---\n\n${body}`;
}
