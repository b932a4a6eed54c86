// panel.js: the knowledge panel (REFERENCE.md section 6, KnowledgePanel):
// a search box (Enter runs it, a clear button, results with a category chip,
// title and the passage where the query's words stand, marked; a search that
// finds nothing says so), then the Rules and Experiences sections, collapsible,
// with a count and a "+" each. Experiences are grouped by folder, loose files
// first. A pin marks an always-applied rule, a robot a document that was not
// written by hand. Hovering an item shows edit and delete (with confirmation).
import { plainPassage, windowed } from './snippet.js';
import { knowledge } from './api.js';
import { $, append, clear, confirmDialog, errorText, h, toast } from './dom.js';
import { icon } from './icons.js';
import { openEditor } from './editor.js';
import { fmtNumber, t } from './i18n.js';
import { CATEGORIES, notifyChanged, state, subscribe } from './store.js';
import { canWrite, whyReadOnly } from './who.js';

const COLLAPSE_KEY = 'knowhub.collapsed';
let collapsed = {};
try {
    collapsed = JSON.parse(localStorage.getItem(COLLAPSE_KEY) || '{}') || {};
} catch {
    collapsed = {};
}

let root = null;
let onOpen = () => {};
let selected = null; // {category, path}
let lastQuery = '';
let searched = ''; // the query the shown results answer
let results = null; // null: no search shown
let degraded = false; // the search fell back to words (its answer had warnings)

const SECTION_TITLE = { rules: 'knowledge.rules', experiences: 'knowledge.experiences' };
const SECTION_DESC = { rules: 'knowledge.rulesDescription', experiences: 'knowledge.experiencesDescription' };

const stripMd = (name) => name.replace(/\.md$/, '');
const baseName = (path) => path.slice(path.lastIndexOf('/') + 1);

/** The label of a document's source, or null for a hand-written one. */
export function sourceLabel(source) {
    if (!source || source === 'manual') return null;
    if (source === 'distill' || source === 'distill-local') return t('panel.sourceDistill');
    if (source === 'agent' || source === 'agent_summarized') return t('knowledge.sourceAgent');
    return `${t('knowledge.source')}: ${source}`;
}

export function categoryChip(category) {
    return h('span', { class: `chip chip-${category}`, text: t(SECTION_TITLE[category] || category) });
}

/** Mount the panel into el; open(category, path) shows a document. */
export function mountPanel(el, open) {
    root = el;
    onOpen = open;
    subscribe(() => render());
    window.addEventListener('lang-changed', () => render());
    render();
}

export function selectItem(category, path) {
    selected = category && path ? { category, path } : null;
    for (const li of root.querySelectorAll('.item')) {
        li.classList.toggle('selected', !!selected && li.dataset.category === selected.category && li.dataset.path === selected.path);
    }
}

function render() {
    if (!root) return;
    const focused = document.activeElement && document.activeElement.id === 'kb-search' ? document.activeElement : null;
    const caret = focused ? [focused.selectionStart, focused.selectionEnd] : null;
    append(clear(root), [
        h('div', { class: 'panel-head' }, h('h2', { class: 'panel-title', text: t('knowledge.title') })),
        searchBox(),
        results ? resultsList() : null,
        h('div', { class: 'sections', hidden: !!results }, CATEGORIES.map(section)),
    ]);
    const total = state.items.rules.length + state.items.experiences.length;
    if (!results && total === 0 && state.loaded.rules && state.loaded.experiences)
        root.append(h('p', { class: 'empty-state', text: t('knowledge.emptyState') }));
    if (focused) {
        const input = $('#kb-search', root);
        input.focus();
        input.setSelectionRange(caret[0], caret[1]);
    }
}

function searchBox() {
    const input = h('input', {
        id: 'kb-search',
        type: 'search',
        class: 'search-input',
        placeholder: t('knowledge.searchPlaceholder'),
        'aria-label': t('knowledge.search'),
        value: lastQuery,
        autocomplete: 'off',
    });
    const clearBtn = h('button', {
        type: 'button',
        class: 'icon-btn search-clear',
        title: t('panel.clearSearch'),
        'aria-label': t('panel.clearSearch'),
        hidden: !lastQuery && !results,
    }, icon('x'));
    input.addEventListener('input', () => {
        lastQuery = input.value;
        clearBtn.hidden = !input.value && !results;
    });
    input.addEventListener('keydown', (e) => {
        if (e.key === 'Enter') {
            e.preventDefault();
            runSearch(input.value);
        } else if (e.key === 'Escape') {
            resetSearch();
        }
    });
    clearBtn.addEventListener('click', () => {
        resetSearch();
        $('#kb-search', root).focus();
    });
    return h('div', { class: 'search', role: 'search' }, h('span', { class: 'search-icon' }, icon('search')), input, clearBtn);
}

function resetSearch() {
    lastQuery = '';
    results = null;
    render();
}

async function runSearch(query) {
    lastQuery = query;
    if (!query.trim()) {
        resetSearch();
        return;
    }
    try {
        const d = await knowledge.search(query.trim());
        results = d.results || [];
        searched = query.trim();
        degraded = Array.isArray(d.warnings) && d.warnings.length > 0;
    } catch (e) {
        results = null;
        toast(errorText('knowledge.failedToSearch', e), 'error');
    }
    render();
}

function resultsList() {
    const note = degraded ? h('p', { class: 'muted meaning-unavailable', text: t('panel.meaningUnavailable') }) : null;
    if (!results.length) {
        return h(
            'div',
            { class: 'results' },
            note ? h('div', { class: 'results-head' }, note) : null,
            h(
                'div',
                { class: 'no-results', role: 'status' },
                h('p', { class: 'no-results-title', text: t('knowledge.noSearchResults') }),
                h('p', { class: 'muted no-results-detail', text: t('panel.nothingRelevant', { query: searched }) }),
            ),
        );
    }
    const head = h('div', { class: 'results-head' }, h('span', { text: t('panel.results', { count: results.length }) }), note);
    return h(
        'div',
        { class: 'results' },
        head,
        h(
            'ul',
            { class: 'result-list' },
            results.map((r) =>
                h(
                    'li',
                    { class: 'result', dataset: { category: r.category, path: r.path } },
                    h(
                        'button',
                        { type: 'button', class: 'result-main', onclick: () => onOpen(r.category, r.path) },
                        h(
                            'span',
                            { class: 'result-top' },
                            categoryChip(r.category),
                            h('span', { class: 'result-title', text: r.title }),
                            // Found by meaning alone: none of the words matched.
                            Array.isArray(r.found_by) && !r.found_by.includes('lexical')
                                ? h('span', { class: 'chip chip-meaning', text: t('panel.foundByMeaning') })
                                : null,
                        ),
                        resultText(r),
                    ),
                ),
            ),
        ),
    );
}

/** What a result shows of its content: the passage where the query's words
 * stand, as plain text (snippet.js: no Markdown syntax, cut at a word), the
 * words marked; or (from a server without passages) the snippet's start. */
function resultText(r) {
    const p = r.passage;
    if (!p || typeof p.text !== 'string' || !p.text.trim()) {
        const w = windowed(plainPassage(String(r.snippet || ''), []), 120);
        const el = h('span', { class: 'result-snippet', text: w.text });
        if (w.cutAfter) el.append(h('span', { class: 'ellipsis ellipsis-after', text: '\u2026' }));
        return el;
    }
    const { before, after } = passageEnds(p, String(r.snippet || ''), r.content);
    const w = windowed(plainPassage(p.text, p.highlights));
    const el = h('span', { class: 'result-snippet result-passage', dataset: { offset: String(p.offset || 0) } });
    if (before || w.cutBefore) el.append(h('span', { class: 'ellipsis ellipsis-before', text: '\u2026' }));
    el.append(...markedNodes(w.text, w.highlights));
    if (after || w.cutAfter) el.append(h('span', { class: 'ellipsis ellipsis-after', text: '\u2026' }));
    return el;
}

/**
 * Whether text of the content lies before and after a passage. Before: it
 * starts past the content's first character (offset > 0), unless the snippet
 * (the content's first 500 characters, spaces trimmed) starts with it. After:
 * when the result carries its content (the entry view's do), by its length;
 * else only when the passage lies inside the snippet and ends before it does.
 * Past the snippet the content's length is not in the result, and no trailing
 * ellipsis is claimed.
 */
export function passageEnds(p, snippet, content) {
    const at = snippet.indexOf(p.text);
    const offset = Number(p.offset) || 0;
    const before = offset > 0 && at !== 0;
    if (typeof content === 'string') return { before, after: offset + Array.from(p.text).length < Array.from(content.trimEnd()).length };
    return { before, after: at >= 0 && at + p.text.length < snippet.length };
}

/**
 * text as text nodes with the highlighted runs in <mark> elements, built
 * from text only (never parsed as markup). highlights: [[start, length], ...]
 * in Unicode code points from the start of text; runs past its end are
 * clipped, overlapping ones marked as one.
 */
export function markedNodes(text, highlights) {
    const chars = Array.from(text);
    const runs = (Array.isArray(highlights) ? highlights : [])
        .filter((m) => Array.isArray(m) && Number.isInteger(m[0]) && Number.isInteger(m[1]) && m[0] >= 0 && m[1] > 0)
        .map(([start, length]) => [start, Math.min(start + length, chars.length)])
        .sort((a, b) => a[0] - b[0]);
    const merged = [];
    for (const [s, e] of runs) {
        const last = merged[merged.length - 1];
        if (s >= e) continue;
        if (last && s < last[1]) last[1] = Math.max(last[1], e);
        else merged.push([s, e]);
    }
    const out = [];
    let at = 0;
    for (const [s, e] of merged) {
        if (s > at) out.push(document.createTextNode(chars.slice(at, s).join('')));
        const mark = document.createElement('mark');
        mark.textContent = chars.slice(s, e).join('');
        out.push(mark);
        at = e;
    }
    if (at < chars.length) out.push(document.createTextNode(chars.slice(at).join('')));
    return out;
}

function toggle(category) {
    collapsed[category] = !collapsed[category];
    try {
        localStorage.setItem(COLLAPSE_KEY, JSON.stringify(collapsed));
    } catch {
        /* not remembered */
    }
    render();
}

function section(category) {
    const items = state.items[category] || [];
    const isCollapsed = !!collapsed[category];
    const why = whyReadOnly(category);
    const add = h('button', {
        type: 'button',
        class: 'icon-btn add-btn',
        'aria-label': `${t('knowledge.newItem')}: ${t(SECTION_TITLE[category])}`,
        title: why ? t(why) : t('knowledge.newItem'),
        disabled: !!why,
        dataset: { category },
    }, icon('plus'));
    add.addEventListener('click', () => openEditor({ category }));
    const head = h(
        'div',
        { class: 'section-head' },
        h(
            'button',
            {
                type: 'button',
                class: 'section-toggle',
                'aria-expanded': String(!isCollapsed),
                title: t(isCollapsed ? 'knowledge.expand' : 'knowledge.collapse'),
                onclick: () => toggle(category),
            },
            h('span', { class: 'caret' }, icon(isCollapsed ? 'chevronRight' : 'chevronDown')),
            h('span', { class: 'section-title', text: t(SECTION_TITLE[category]) }),
            h('span', { class: 'count', text: t('knowledge.itemCount', { count: items.length }) }),
        ),
        add,
    );
    const body = h('div', { class: 'section-body', hidden: isCollapsed }, h('p', { class: 'section-desc', text: t(SECTION_DESC[category]) }));
    if (!items.length) body.append(h('p', { class: 'muted no-items', text: t('knowledge.noItems') }));
    else if (category === 'rules') body.append(h('ul', { class: 'item-list' }, items.map((it) => item(category, it))));
    else body.append(...folderGroups(items));
    return h('section', { class: `kb-section section-${category}`, dataset: { category } }, head, body);
}

function folderGroups(items) {
    const loose = [];
    const folders = new Map();
    for (const it of items) {
        const i = it.path.indexOf('/');
        if (i < 0) loose.push(it);
        else {
            const f = it.path.slice(0, i);
            if (!folders.has(f)) folders.set(f, []);
            folders.get(f).push(it);
        }
    }
    const out = [];
    if (loose.length) out.push(h('ul', { class: 'item-list' }, loose.map((it) => item('experiences', it))));
    for (const f of [...folders.keys()].sort((a, b) => a.localeCompare(b))) {
        const list = folders.get(f);
        out.push(
            h(
                'div',
                { class: 'folder', dataset: { folder: f } },
                h(
                    'div',
                    { class: 'folder-head' },
                    h('span', { class: 'folder-icon' }, icon('folder')),
                    h('span', { class: 'folder-name', text: f }),
                    h('span', { class: 'count', text: fmtNumber(list.length) }),
                ),
                h('ul', { class: 'item-list' }, list.map((it) => item('experiences', it))),
            ),
        );
    }
    return out;
}

function item(category, it) {
    const isSel = selected && selected.category === category && selected.path === it.path;
    const src = sourceLabel(it.source);
    const main = h(
        'button',
        { type: 'button', class: 'item-main', onclick: () => onOpen(category, it.path) },
        h(
            'span',
            { class: 'item-line' },
            category === 'rules' && it.alwaysApply
                ? h('span', { class: 'mark pin', title: t('knowledge.alwaysApply') }, icon('pin', t('knowledge.alwaysApply')))
                : null,
            src ? h('span', { class: 'mark robot', title: src }, icon('robot', src)) : null,
            h('span', { class: 'item-title', text: it.title }),
        ),
        h('span', { class: 'item-file', text: stripMd(baseName(it.path)) }),
        category === 'rules' && it.description ? h('span', { class: 'item-desc', text: it.description }) : null,
    );
    const actions = h('span', { class: 'item-actions' });
    actions.append(
        h('button', {
            type: 'button',
            class: 'icon-btn edit-btn',
            title: canWrite(category) ? t('panel.edit') : t(whyReadOnly(category)),
            'aria-label': `${t('panel.edit')}: ${it.title}`,
            onclick: () => openEditor({ category, path: it.path }),
        }, icon('pencil')),
    );
    if (canWrite(category)) {
        actions.append(
            h('button', {
                type: 'button',
                class: 'icon-btn delete-btn',
                title: t('panel.delete'),
                'aria-label': `${t('panel.delete')}: ${it.title}`,
                onclick: () => removeItem(category, it),
            }, icon('trash')),
        );
    }
    return h('li', { class: ['item', isSel && 'selected'], dataset: { category, path: it.path } }, main, actions);
}

export async function removeItem(category, it) {
    const ok = await confirmDialog({
        title: t('knowledge.deleteConfirm', { title: it.title }),
        body: t('knowledge.deleteConfirmBody'),
        confirmLabel: t('panel.delete'),
    });
    if (!ok) return false;
    try {
        await knowledge.remove(category, it.path);
        toast(t('knowledge.deleted'), 'success');
        // the details view, if it shows this document, empties itself on knowledge-changed
        if (results) results = results.filter((r) => !(r.category === category && r.path === it.path));
        notifyChanged(category);
        return true;
    } catch (e) {
        toast(errorText('knowledge.failedToDelete', e), 'error');
        return false;
    }
}
