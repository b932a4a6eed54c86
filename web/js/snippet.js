// snippet.js: a search result's passage as plain text (pure functions, no
// DOM, so they are tested on their own in node). The server's passage is a
// piece of the Markdown body with the query's words at [start, length] in
// code points; here the Markdown syntax goes (headings' #, emphasis, links'
// [](), images' !, code fences and backticks, tables' pipes and delimiter
// rows, quote and list markers), the marks follow the characters they were
// on, and a long text is cut to a window at a word (or CJK character)
// boundary around the first mark.

/** The longest passage shown, in characters: above the server's (about 300, cut at spaces), so a passage is cut here only when it is unusually long. */
export const SNIPPET_CHARS = 320;

const isSpace = (c) => /\s/u.test(c);
/** A character that belongs to a word a cut must not split (Latin letters and digits, not CJK). */
const isWordChar = (c) => /[\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}\p{Nd}_'’-]/u.test(c);
const isAlnum = (c) => c !== undefined && /[\p{L}\p{N}]/u.test(c);

/** Drop the Markdown of one line (cells: [{c, m}]): its line markers, then inline syntax. */
function plainLine(cells) {
    const line = cells.map((x) => x.c).join('');
    if (/^\s*(```|~~~)/.test(line)) return []; // a code fence's marker line
    if (/^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/.test(line) && line.includes('-') && (line.includes('|') || /^\s*-{3,}\s*$/.test(line))) return []; // a table's delimiter row or a rule
    if (/^\s*([*_]\s*){3,}$/.test(line)) return []; // a thematic break
    let from = 0;
    // line markers, nested: "> - ## x"
    for (;;) {
        const rest = line.slice(from);
        const m = /^\s{0,3}(#{1,6}\s+|>\s?|[-*+]\s+(\[[ xX]\]\s+)?|\d{1,9}[.)]\s+)/.exec(rest);
        if (!m || !m[0].length) break;
        from += m[0].length;
    }
    let to = line.length;
    const closing = /\s+#+\s*$/.exec(line.slice(from));
    if (closing && /^\s*#/.test(line)) to = from + closing.index;
    const table = (line.match(/\|/g) || []).length >= 2 || /^\s*\|/.test(line);
    const keep = cells.slice(from, to).map((x) => ({ ...x }));
    const drop = new Set();
    const chars = keep.map((x) => x.c);
    for (let i = 0; i < chars.length; i++) {
        const c = chars[i];
        if (c === '\\' && i + 1 < chars.length && /[\p{P}\p{S}]/u.test(chars[i + 1])) {
            drop.add(i);
            i++; // the escaped character stays, as text
        } else if (c === '`') drop.add(i);
        else if (c === '!' && chars[i + 1] === '[') drop.add(i);
        else if (c === '[') {
            // [text](url): the text stays, the brackets and the url go
            const close = chars.indexOf(']', i + 1);
            if (close > i && chars[close + 1] === '(') {
                const end = chars.indexOf(')', close + 2);
                if (end > close) {
                    drop.add(i);
                    for (let j = close; j <= end; j++) drop.add(j);
                }
            }
        } else if (c === '*' || c === '~') {
            // emphasis and strike-through: a run touching a word on one side
            let j = i;
            while (chars[j] === c) j++;
            const touches = (i > 0 && !isSpace(chars[i - 1])) || (j < chars.length && !isSpace(chars[j]));
            if (touches) for (let k = i; k < j; k++) drop.add(k);
            i = j - 1;
        } else if (c === '_') {
            let j = i;
            while (chars[j] === '_') j++;
            // snake_case stays; _emphasis_ and __bold__ go
            if (!(isAlnum(chars[i - 1]) && isAlnum(chars[j]))) for (let k = i; k < j; k++) drop.add(k);
            i = j - 1;
        } else if (c === '|' && table) {
            keep[i] = { c: ' ', m: false };
        }
    }
    return keep.filter((_, i) => !drop.has(i));
}

/** Plain text of a passage: {text, highlights} with the marks moved along. */
export function plainPassage(text, highlights) {
    const chars = Array.from(String(text ?? ''));
    const marked = new Array(chars.length).fill(false);
    for (const h of Array.isArray(highlights) ? highlights : []) {
        if (!Array.isArray(h) || !Number.isInteger(h[0]) || !Number.isInteger(h[1]) || h[0] < 0 || h[1] <= 0) continue;
        for (let i = h[0]; i < Math.min(chars.length, h[0] + h[1]); i++) marked[i] = true;
    }
    const lines = [[]];
    chars.forEach((c, i) => (c === '\n' ? lines.push([]) : lines[lines.length - 1].push({ c: c === '\r' || c === '\t' ? ' ' : c, m: marked[i] })));
    const cells = [];
    for (const line of lines) {
        const kept = plainLine(line);
        if (!kept.length) continue;
        if (cells.length) cells.push({ c: ' ', m: false });
        cells.push(...kept);
    }
    // one space between words, none at the ends
    const out = [];
    for (const x of cells) {
        if (isSpace(x.c) && (!out.length || isSpace(out[out.length - 1].c))) continue;
        out.push(isSpace(x.c) ? { c: ' ', m: false } : x);
    }
    while (out.length && out[out.length - 1].c === ' ') out.pop();
    return { text: out.map((x) => x.c).join(''), highlights: runsOf(out.map((x) => x.m)) };
}

/** [[start, length], ...] of the true runs of flags. */
function runsOf(flags) {
    const runs = [];
    for (let i = 0; i < flags.length; i++) {
        if (!flags[i]) continue;
        let j = i;
        while (j < flags.length && flags[j]) j++;
        runs.push([i, j - i]);
        i = j;
    }
    return runs;
}

/**
 * At most max characters of a plain passage around its first mark, cut at a
 * word boundary (between two characters of which one is not a word
 * character: a space, punctuation or CJK): {text, highlights, cutBefore,
 * cutAfter}, the highlights moved to the window.
 */
export function windowed({ text, highlights }, max = SNIPPET_CHARS) {
    const chars = Array.from(text);
    if (chars.length <= max) return { text, highlights, cutBefore: false, cutAfter: false };
    const first = highlights.length ? highlights[0][0] : 0;
    let start = Math.max(0, Math.min(first - Math.floor(max / 4), chars.length - max));
    // forward to a word's start (at most 30 characters)
    for (let k = 0; start > 0 && k < 30 && isWordChar(chars[start - 1]) && isWordChar(chars[start]); k++) start++;
    while (start < chars.length && chars[start] === ' ') start++;
    let end = Math.min(chars.length, start + max);
    // back to a word's end (at most 30 characters)
    for (let k = 0; end < chars.length && k < 30 && isWordChar(chars[end - 1]) && isWordChar(chars[end]); k++) end--;
    while (end > start && chars[end - 1] === ' ') end--;
    const hl = highlights
        .map(([s, n]) => [Math.max(s, start), Math.min(s + n, end)])
        .filter(([s, e]) => e > s)
        .map(([s, e]) => [s - start, e - s]);
    return { text: chars.slice(start, end).join(''), highlights: hl, cutBefore: start > 0, cutAfter: end < chars.length };
}
