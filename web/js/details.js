// details.js: one document in full (the main area of the knowledge view):
// the server-rendered body, score, helpful and harmful with their cases and a
// chart over time, where it was injected and how it was judged, and every
// revision with a diff to the current text and "restore this version".
import { knowledge } from './api.js';
import { cumulativeChart } from './charts.js';
import { clear, errorText, h, toast } from './dom.js';
import { icon } from './icons.js';
import { lineDiff } from './diff.js';
import { linksView } from './links.js';
import { openEditor } from './editor.js';
import { leaveHome, renderHome } from './home.js';
import { fmtDate, fmtDateTime, fmtNumber, parseTime, t } from './i18n.js';
import { reasonLabel, statusChip, triggerLabel } from './labels.js';
import { categoryChip, removeItem, sourceLabel } from './panel.js';
import { notifyChanged, findItem } from './store.js';
import { canWrite, whyReadOnly } from './who.js';

let root = null;
let current = null; // {category, path}
let shown = null; // the data on screen
let selectedVersion = null;
let onShown = () => {};
let token = 0;

export function mountDetails(el, shownFn) {
    root = el;
    onShown = shownFn;
    renderEmpty();
    window.addEventListener('lang-changed', () => (shown ? render() : renderEmpty()));
    window.addEventListener('knowledge-changed', (e) => {
        const c = e.detail && e.detail.category;
        if (current && (!c || c === current.category)) showDetails(current.category, current.path, { quiet: true });
        else if (!current) renderEmpty();
    });
}

export function currentDoc() {
    return current;
}

/** Nothing open: the home screen (home.js). */
function renderEmpty() {
    renderHome(root, (category, path) => showDetails(category, path));
}

/** Show the document at category/path (null: nothing). */
export async function showDetails(category, path, { quiet = false } = {}) {
    const my = ++token;
    if (!category || !path) {
        current = shown = null;
        onShown(null, null);
        renderEmpty();
        return;
    }
    if (!current || current.category !== category || current.path !== path) selectedVersion = null;
    leaveHome();
    current = { category, path };
    onShown(category, path);
    if (!quiet) clear(root).append(h('p', { class: 'muted loading', text: t('app.loading') }));
    try {
        const doc = await knowledge.read(category, path);
        const [entry, revs, links] = await Promise.all([
            knowledge.entry(doc.id).catch(() => null),
            knowledge.revisions(doc.id).catch(() => ({ items: [] })),
            knowledge.links(doc.id).catch(() => ({ items: [] })),
        ]);
        if (my !== token) return;
        shown = { doc, entry, revisions: revs.items || [], links: links.items || [] };
        render();
    } catch (e) {
        if (my !== token) return;
        if (e.code === 'TABLE_NOT_FOUND' || e.code === 'NOT_FOUND') {
            current = shown = null;
            onShown(null, null);
            renderEmpty();
            return;
        }
        clear(root).append(h('p', { class: 'form-error', text: errorText('knowledge.failedToLoad', e) }));
    }
}

/** Show a document by its entry id (from traces). */
export async function showDetailsById(id) {
    try {
        const e = await knowledge.entry(id);
        await showDetails(e.category, e.path);
    } catch (e) {
        toast(errorText('knowledge.failedToLoad', e), 'error');
    }
}

function stat(labelKey, value, cls = '') {
    return h('div', { class: ['stat', cls] }, h('span', { class: 'stat-value', text: value }), h('span', { class: 'stat-label', text: t(labelKey) }));
}

function render() {
    const { doc, entry, revisions } = shown;
    const f = doc.fields || {};
    const cat = doc.category;
    const why = whyReadOnly(cat);
    const ev = (entry && entry.eval) || { score: 0, helpful: 0, harmful: 0, helpful_history: [], harmful_history: [] };
    const src = sourceLabel(f.source);

    const actions = h('div', { class: 'detail-actions' });
    actions.append(
        h('button', {
            type: 'button',
            class: 'btn detail-edit',
            text: t('panel.edit'),
            title: why ? t(why) : '',
            onclick: () => openEditor({ category: cat, path: doc.path }),
        }),
    );
    if (canWrite(cat)) {
        actions.append(
            h('button', {
                type: 'button',
                class: 'btn btn-danger-outline detail-delete',
                text: t('panel.delete'),
                onclick: () => removeItem(cat, findItem(cat, doc.path) || { path: doc.path, title: f.title }),
            }),
        );
    }

    const header = h(
        'header',
        { class: 'detail-head' },
        h(
            'div',
            { class: 'detail-title-row' },
            categoryChip(cat),
            cat === 'rules' && f.alwaysApply ? h('span', { class: 'mark pin', title: t('knowledge.alwaysApply') }, icon('pin', t('knowledge.alwaysApply'))) : null,
            src ? h('span', { class: 'mark robot', title: src }, icon('robot', src)) : null,
            h('h2', { class: 'detail-title', text: f.title || doc.path }),
        ),
        h(
            'dl',
            { class: 'meta' },
            meta('details.path', h('code', { text: doc.path })),
            f.tags && f.tags.length ? meta('knowledge.tags', h('span', { class: 'tags' }, f.tags.map((x) => h('span', { class: 'tag', text: x })))) : null,
            cat === 'rules' && f.description ? meta('knowledge.description', f.description) : null,
            cat === 'rules' ? meta('knowledge.alwaysApply', t(f.alwaysApply ? 'app.yes' : 'app.no')) : null,
            meta('knowledge.source', src || t('knowledge.sourceManual')),
            f.created ? meta('details.created', fmtDate(f.created)) : null,
            meta('details.updated', fmtDateTime(doc.updated_at)),
            meta('details.version', fmtNumber(doc.version)),
        ),
        actions,
    );

    const body = h('div', { class: 'markdown rendered' });
    body.innerHTML = doc.html; // rendered by the server with libcmark in safe mode (no raw HTML, no javascript: links)

    const quality = ev.score + ev.helpful - 2 * ev.harmful;
    const stats = h(
        'div',
        { class: 'stats' },
        stat('details.score', `${fmtNumber(ev.score)} / ${fmtNumber(5)}`, 'stat-score'),
        stat('status.helpful', fmtNumber(ev.helpful), 'stat-helpful'),
        stat('status.harmful', fmtNumber(ev.harmful), 'stat-harmful'),
        stat('details.quality', fmtNumber(quality), 'stat-quality'),
    );

    clear(root).append(
        h(
            'article',
            { class: 'detail', dataset: { id: doc.id, category: cat, path: doc.path } },
            header,
            h('section', { class: 'card' }, body),
            h('section', { class: 'card feedback' }, h('h3', { text: t('details.feedback') }), stats, feedbackChart(ev), cases(ev)),
            h('section', { class: 'card injections' }, h('h3', { text: t('details.injections') }), injections(entry)),
            h('section', { class: 'card revisions' }, h('h3', { text: t('details.revisions') }), revisionsView(doc, revisions, why)),
            h('section', { class: 'card links' }, h('h3', { text: t('details.links') }), linksView(doc, shown.links, showDetails, linksChanged)),
        ),
    );
}

/** After a link changed: reload the lists of the categories it touched (a
 * supersede retires the other entry), this document's details with them. */
function linksChanged(categories) {
    for (const c of new Set(categories.filter(Boolean))) notifyChanged(c);
}

function meta(labelKey, value) {
    return h('div', { class: 'meta-row' }, h('dt', { text: t(labelKey) }), h('dd', {}, value));
}

function feedbackChart(ev) {
    const helpful = (ev.helpful_history || []).map((c) => parseTime(c.created_at));
    const harmful = (ev.harmful_history || []).map((c) => parseTime(c.created_at));
    if (!helpful.length && !harmful.length) return null;
    return cumulativeChart(
        [
            { label: t('status.helpful'), cls: 'series-helpful', times: helpful },
            { label: t('status.harmful'), cls: 'series-harmful', times: harmful },
        ],
        { title: t('details.overTime') },
    );
}

function caseList(titleKey, list, cls) {
    return h(
        'div',
        { class: ['case-list', cls] },
        h('h4', { text: t(titleKey) }),
        list && list.length
            ? h(
                  'ul',
                  {},
                  list
                      .slice()
                      .reverse()
                      .map((c) =>
                          h(
                              'li',
                              { class: 'case' },
                              h('span', { class: 'case-when', text: fmtDateTime(c.created_at) }),
                              c.scenario ? h('span', { class: 'case-scenario', text: c.scenario }) : null,
                              c.result ? h('span', { class: 'case-result', text: c.result }) : null,
                              c.trace_id ? h('span', { class: 'case-trace muted', text: `${t('details.trace')}: ${c.trace_id}` }) : null,
                          ),
                      ),
              )
            : h('p', { class: 'muted', text: t('details.noCases') }),
    );
}

function cases(ev) {
    return h('div', { class: 'cases' }, caseList('details.helpfulCases', ev.helpful_history, 'helpful'), caseList('details.harmfulCases', ev.harmful_history, 'harmful'));
}

function injections(entry) {
    const list = (entry && entry.injections) || [];
    if (!list.length) return h('p', { class: 'muted', text: t('details.noInjections') });
    return h(
        'table',
        { class: 'data-table' },
        h(
            'thead',
            {},
            h(
                'tr',
                {},
                ['details.trace', 'details.goal', 'details.injectedAt', 'details.verdict', 'details.reason', 'details.judgedAt'].map((k) => h('th', { text: t(k) })),
            ),
        ),
        h(
            'tbody',
            {},
            list.map((i) =>
                h(
                    'tr',
                    {},
                    h('td', {}, h('code', { text: i.trace_id })),
                    h('td', { text: i.goal_id || '—' }),
                    h('td', { text: fmtDateTime(i.injected_at) }),
                    h('td', {}, statusChip(i.eval_status)),
                    h('td', { text: i.eval_reason || '' }),
                    h('td', { text: i.evaluated_at ? `${fmtDateTime(i.evaluated_at)} · ${triggerLabel(i.evaluated_at_trigger)}` : '—' }),
                ),
            ),
        ),
    );
}

function revisionsView(doc, revisions, why) {
    if (!revisions.length) return h('p', { class: 'muted', text: t('details.noRevisions') });
    const currentVersion = doc.version;
    if (selectedVersion === null || !revisions.some((r) => r.version === selectedVersion))
        selectedVersion = (revisions.find((r) => r.version !== currentVersion) || revisions[0]).version;
    const rev = revisions.find((r) => r.version === selectedVersion);
    const list = h(
        'ul',
        { class: 'revision-list' },
        revisions.map((r) =>
            h(
                'li',
                {},
                h(
                    'button',
                    {
                        type: 'button',
                        class: ['revision', r.version === selectedVersion && 'selected'],
                        dataset: { version: String(r.version) },
                        'aria-pressed': String(r.version === selectedVersion),
                        onclick: () => {
                            selectedVersion = r.version;
                            render();
                        },
                    },
                    h('span', { class: 'rev-version', text: t('details.versionN', { version: r.version }) }),
                    h('span', { class: 'rev-reason', text: reasonLabel(r.reason) }),
                    r.version === currentVersion ? h('span', { class: 'rev-current', text: t('details.current') }) : null,
                    h('span', { class: 'rev-when muted', text: fmtDateTime(r.created_at) }),
                    h('code', { class: 'rev-actor muted', text: r.actor || '' }),
                ),
            ),
        ),
    );
    const oldText = (rev.document && rev.document.document) || '';
    const ops = lineDiff(oldText, doc.content);
    const changed = ops.some((o) => o.op !== 'same');
    const diff = h(
        'pre',
        { class: 'diff', 'aria-label': t('details.diffTitle', { version: rev.version }) },
        ops.map((o) => h('span', { class: `diff-line diff-${o.op}`, text: `${o.op === 'add' ? '+' : o.op === 'del' ? '−' : ' '} ${o.text}\n` })),
    );
    const restore = h('button', {
        type: 'button',
        class: 'btn btn-primary restore-btn',
        text: t('details.restore'),
        disabled: rev.version === currentVersion || !!why || !changed,
        title: why ? t(why) : '',
    });
    restore.addEventListener('click', async () => {
        restore.disabled = true;
        try {
            const e = await knowledge.revert(doc.id, rev.version);
            toast(t('details.restored', { version: rev.version }), 'success');
            selectedVersion = null;
            current = { category: e.category, path: e.path };
            if (e.category !== doc.category) notifyChanged(doc.category);
            notifyChanged(e.category);
        } catch (ex) {
            restore.disabled = false;
            toast(errorText('details.restoreFailed', ex), 'error');
        }
    });
    return h(
        'div',
        { class: 'revisions-body' },
        list,
        h(
            'div',
            { class: 'revision-diff' },
            h('div', { class: 'diff-head' }, h('h4', { text: t('details.diffTitle', { version: rev.version }) }), restore),
            changed ? diff : h('p', { class: 'muted', text: t('details.noDiff') }),
        ),
    );
}
