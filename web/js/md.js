// md.js: a small Markdown renderer for the editor's live preview. It builds
// DOM nodes (never HTML text), so nothing typed can become markup; links are
// kept only for http(s), mailto and relative targets. Saved documents are
// shown with the server's rendering (libcmark, safe mode) instead.
import { h } from './dom.js';

const SAFE_URL = /^(https?:|mailto:|\/|#|\.\/|[^:]*$)/i;

/** Inline Markdown: code, bold, italic, links. */
function inline(text) {
    const out = [];
    const re = /`([^`]+)`|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|_([^_\s][^_]*)_|\[([^\]]+)\]\(([^)\s]+)\)/g;
    let last = 0;
    let m;
    while ((m = re.exec(text))) {
        if (m.index > last) out.push(text.slice(last, m.index));
        if (m[1] !== undefined) out.push(h('code', { text: m[1] }));
        else if (m[2] !== undefined || m[3] !== undefined) out.push(h('strong', {}, inline(m[2] ?? m[3])));
        else if (m[4] !== undefined || m[5] !== undefined) out.push(h('em', {}, inline(m[4] ?? m[5])));
        else if (SAFE_URL.test(m[7])) out.push(h('a', { href: m[7], rel: 'noopener noreferrer', target: '_blank' }, inline(m[6])));
        else out.push(h('a', {}, inline(m[6])));
        last = re.lastIndex;
    }
    if (last < text.length) out.push(text.slice(last));
    return out;
}

/** Render Markdown text into a DocumentFragment. */
export function renderMarkdown(src) {
    const frag = document.createDocumentFragment();
    const lines = String(src || '').replace(/\r\n/g, '\n').split('\n');
    let i = 0;
    const isBlank = (l) => !l.trim();
    while (i < lines.length) {
        const line = lines[i];
        if (isBlank(line)) {
            i++;
            continue;
        }
        let m;
        if ((m = /^\s{0,3}(```|~~~)\s*(\S*)/.exec(line))) {
            const fence = m[1];
            const code = [];
            i++;
            while (i < lines.length && !lines[i].trim().startsWith(fence)) code.push(lines[i++]);
            i++;
            frag.append(h('pre', {}, h('code', { text: code.join('\n') })));
        } else if ((m = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line))) {
            frag.append(h(`h${m[1].length}`, {}, inline(m[2])));
            i++;
        } else if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) {
            frag.append(h('hr'));
            i++;
        } else if (/^\s{0,3}>/.test(line)) {
            const quoted = [];
            while (i < lines.length && /^\s{0,3}>/.test(lines[i])) quoted.push(lines[i++].replace(/^\s{0,3}>\s?/, ''));
            frag.append(h('blockquote', {}, renderMarkdown(quoted.join('\n'))));
        } else if (/^\s{0,3}([-*+]|\d+[.)])\s+/.test(line)) {
            const ordered = /^\s{0,3}\d/.test(line);
            const list = h(ordered ? 'ol' : 'ul');
            const itemRe = ordered ? /^\s{0,3}\d+[.)]\s+(.*)$/ : /^\s{0,3}[-*+]\s+(.*)$/;
            while (i < lines.length && itemRe.test(lines[i])) {
                let text = itemRe.exec(lines[i++])[1];
                while (i < lines.length && /^\s{2,}\S/.test(lines[i]) && !itemRe.test(lines[i])) text += ` ${lines[i++].trim()}`;
                list.append(h('li', {}, inline(text)));
            }
            frag.append(list);
        } else {
            const para = [];
            while (
                i < lines.length &&
                !isBlank(lines[i]) &&
                !/^\s{0,3}(#{1,6}\s|```|~~~|>|[-*+]\s|\d+[.)]\s)/.test(lines[i])
            )
                para.push(lines[i++].trim());
            if (!para.length) para.push(lines[i++].trim());
            frag.append(h('p', {}, inline(para.join(' '))));
        }
    }
    return frag;
}
