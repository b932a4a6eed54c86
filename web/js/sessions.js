// sessions.js: analysis sessions (seed 004 section 7). Each session is drawn
// as trees of connected table cards: a derived table hangs under the table
// it came from. "Save as Experience" appears only on leaf derived tables;
// it sends the experience context of the visible chain (leaf.js) to
// /api/knowledge/distill-experience and, on success, dispatches the window
// event knowledge-changed {category: 'experiences'} so the panel reloads.
// The view polls the open session, so a table an agent derives appears by
// itself (and the button moves to the new leaf).
import { knowledge, sessions as api } from './api.js';
import { clear, confirmDialog, errorText, h, toast } from './dom.js';
import { icon } from './icons.js';
import { currentLang, fmtDateTime, fmtNumber, t } from './i18n.js';
import {
    attemptsOf,
    buildExperienceContext,
    chartType,
    fieldsOf,
    forest,
    interactionOf,
    isLeafDerivedTable,
    rowCount,
    userQuestion,
    visibleChain,
} from './leaf.js';
import { attemptLabel, chartLabel } from './labels.js';
import { experienceFolders } from './store.js';
import { canWrite, whyReadOnly } from './who.js';

const POLL_MS = 4000;
const DISTILL_TIMEOUT_S = 120;

let root = null;
let listEl = null;
let mainEl = null;
let list = [];
let openId = null;
let session = null; // the open session {id, title, tables, updated_at}
let visible = false;
let pollTimer = null;
/** Save-experience state per "session/table": {state: idle|busy|failed, hint} */
const distill = new Map();
/** Whether the server distills with an LLM: true, false, or null while unknown. */
let llmMode = null;
let llmAsked = null;

/** Ask the server once whether an LLM is configured; re-render when it answers. */
function askLlmMode() {
    if (llmAsked) return llmAsked;
    llmAsked = knowledge
        .llmConfigured()
        .then((on) => {
            llmMode = on;
        })
        .catch(() => {
            llmMode = null;
            llmAsked = null; // asked again next time
        })
        .then(() => {
            if (session) renderSession();
        });
    return llmAsked;
}

/** What Save as Experience does here, in words: with the LLM, the local summary, or either. */
const distillHint = () => t(llmMode === true ? 'knowledge.saveAsExperienceHint' : llmMode === false ? 'sessions.distillHintLocal' : 'sessions.distillHintAny');

export function mountSessions(el) {
    root = el;
    listEl = h('nav', { class: 'session-list', 'aria-label': t('sessions.title') });
    mainEl = h('div', { class: 'session-main' });
    clear(root).append(h('div', { class: 'sessions-layout' }, listEl, mainEl));
    window.addEventListener('lang-changed', () => {
        listEl.setAttribute('aria-label', t('sessions.title'));
        renderList();
        renderSession();
    });
}

/** The view became visible (true) or hidden (false). */
export function setSessionsVisible(on) {
    visible = on;
    clearInterval(pollTimer);
    pollTimer = null;
    if (!on) return;
    if (llmMode === null) askLlmMode();
    refresh();
    pollTimer = setInterval(() => {
        if (document.visibilityState === 'visible') refresh({ quiet: true });
    }, POLL_MS);
}

export async function refresh({ quiet = false } = {}) {
    try {
        const d = await api.list();
        list = d.items || [];
        if (!openId && list.length) openId = list[0].id;
        if (openId && !list.some((s) => s.id === openId)) {
            openId = list.length ? list[0].id : null;
            session = null;
        }
        renderList();
        if (openId) await loadSession(openId, { quiet });
        else {
            session = null;
            renderSession();
        }
    } catch (e) {
        if (!quiet && e.status !== 401) toast(errorText('sessions.failedToLoad', e), 'error');
    }
}

async function loadSession(id, { quiet = false } = {}) {
    try {
        const s = await api.get(id);
        if (id !== openId) return;
        const changed = !session || session.id !== s.id || session.updated_at !== s.updated_at || JSON.stringify(session.tables) !== JSON.stringify(s.tables);
        session = s;
        if (changed) renderSession();
    } catch (e) {
        if (!quiet) toast(errorText('sessions.failedToLoad', e), 'error');
    }
}

function renderList() {
    const refreshBtn = h('button', { type: 'button', class: 'btn btn-small sessions-refresh', text: t('app.refresh'), onclick: () => refresh() });
    clear(listEl).append(h('div', { class: 'session-list-head' }, h('h2', { text: t('sessions.title') }), refreshBtn));
    if (!list.length) {
        listEl.append(h('p', { class: 'muted', text: t('sessions.empty') }));
        return;
    }
    listEl.append(
        h(
            'ul',
            {},
            list.map((s) =>
                h(
                    'li',
                    {},
                    h(
                        'button',
                        {
                            type: 'button',
                            class: ['session-link', s.id === openId && 'selected'],
                            dataset: { id: s.id },
                            'aria-current': s.id === openId ? 'true' : 'false',
                            onclick: () => {
                                openId = s.id;
                                session = null;
                                renderList();
                                renderSession();
                                loadSession(s.id);
                            },
                        },
                        h('span', { class: 'session-title', text: s.title || s.id }),
                        h('span', { class: 'muted session-when', text: fmtDateTime(s.updated_at) }),
                    ),
                ),
            ),
        ),
    );
}

function renderSession() {
    if (!mainEl) return;
    const scroll = mainEl.scrollTop;
    clear(mainEl);
    if (!openId) {
        mainEl.append(h('div', { class: 'placeholder' }, h('p', { text: t(list.length ? 'sessions.select' : 'sessions.emptyHint') })));
        return;
    }
    if (!session) {
        mainEl.append(h('p', { class: 'muted loading', text: t('app.loading') }));
        return;
    }
    const tables = Array.isArray(session.tables) ? session.tables : [];
    const del = h('button', {
        type: 'button',
        class: 'btn btn-small btn-danger-outline session-delete',
        text: t('sessions.deleteSession'),
        hidden: !canWrite('experiences'),
        onclick: () => deleteSession(),
    });
    mainEl.append(
        h(
            'header',
            { class: 'session-head' },
            h('div', {}, h('h2', { class: 'session-name', text: session.title || session.id }), h('p', { class: 'muted', text: t('sessions.summary', { count: tables.length, when: fmtDateTime(session.updated_at) }) })),
            del,
        ),
        h('p', { class: 'muted session-help', text: t('sessions.leafHelp') }),
        h('div', { class: 'forest' }, forest(tables).map((node) => h('div', { class: 'tree' }, h('ul', {}, treeNode(node, tables))))),
    );
    mainEl.scrollTop = scroll;
}

function treeNode(node, tables) {
    const tb = node.table;
    return h(
        'li',
        { class: [tb.anchored && 'anchored'] },
        card(tb, tables),
        node.children.length ? h('ul', {}, node.children.map((c) => treeNode(c, tables))) : null,
    );
}

const cell = (v) => (v === null || v === undefined ? '' : typeof v === 'number' ? fmtNumber(v) : typeof v === 'object' ? JSON.stringify(v) : String(v));

function sampleTable(tb) {
    const rows = Array.isArray(tb.rows) ? tb.rows.slice(0, 3) : [];
    const fields = fieldsOf(tb).slice(0, 6);
    if (!rows.length || !fields.length) return null;
    return h(
        'div',
        { class: 'sample' },
        h(
            'table',
            { class: 'sample-table' },
            h('thead', {}, h('tr', {}, fields.map((f) => h('th', { text: f })))),
            h('tbody', {}, rows.map((r) => h('tr', {}, fields.map((f) => h('td', { text: cell(r && typeof r === 'object' ? r[f] : r) }))))),
        ),
    );
}

function attemptsView(tb) {
    const attempts = attemptsOf(tb);
    if (!attempts.length) return null;
    const failed = attempts.filter((a) => a && a.status && a.status !== 'success' && a.status !== 'ok').length;
    return h(
        'details',
        { class: 'attempts' },
        h('summary', { text: t('sessions.attempts', { count: attempts.length, failed }) }),
        h(
            'ol',
            {},
            attempts.map((a) =>
                h(
                    'li',
                    { class: `attempt attempt-${cell(a && a.status) || 'unknown'}` },
                    h('span', { class: 'attempt-status', text: attemptLabel(a && a.status) }),
                    ' ',
                    h('span', { text: cell(a && (a.summary || a.error)) }),
                ),
            ),
        ),
    );
}

function card(tb, tables) {
    const derived = !!tb.derive;
    const leaf = isLeafDerivedTable(tb, tables);
    const own = interactionOf(tb);
    const question = userQuestion(own);
    const instruction = own.find((e) => e && e.from === 'data-agent' && e.role === 'instruction');
    const fields = fieldsOf(tb);
    const chart = chartType(tb);
    const el = h(
        'div',
        { class: ['table-card', derived ? 'derived' : 'source', leaf && 'leaf', tb.anchored && 'anchored'], dataset: { tableId: tb.id } },
        h(
            'div',
            { class: 'card-head' },
            h('span', { class: 'card-name', text: tb.displayId || tb.id }),
            h('span', { class: ['badge', derived ? 'badge-derived' : 'badge-source'], text: t(derived ? 'sessions.derived' : 'sessions.sourceTable') }),
            tb.anchored ? h('span', { class: 'badge badge-anchored', title: t('sessions.anchoredHint') }, icon('anchor'), ` ${t('sessions.anchored')}`) : null,
        ),
        question ? h('p', { class: 'card-question' }, h('span', { class: 'label', text: t('sessions.question') }), ' ', h('span', { text: question })) : null,
        instruction ? h('p', { class: 'card-instruction', text: String(instruction.displayContent || instruction.content || '') }) : null,
        h(
            'p',
            { class: 'card-meta muted' },
            t('sessions.shape', { rows: rowCount(tb), fields: fields.length }),
            chart ? h('span', { class: 'chip chip-chart', text: t('sessions.chart', { type: chartLabel(chart) }) }) : null,
        ),
        fields.length ? h('div', { class: 'fields' }, fields.slice(0, 8).map((f) => h('span', { class: 'field-chip', text: f })), fields.length > 8 ? h('span', { class: 'muted', text: `+${fmtNumber(fields.length - 8)}` }) : null) : null,
        sampleTable(tb),
        attemptsView(tb),
        cardActions(tb, tables, derived, leaf),
    );
    return el;
}

function cardActions(tb, tables, derived, leaf) {
    const why = whyReadOnly('experiences');
    const bar = h('div', { class: 'card-actions' });
    if (derived) {
        bar.append(
            h('button', {
                type: 'button',
                class: 'btn btn-small anchor-btn',
                text: t(tb.anchored ? 'sessions.unanchor' : 'sessions.anchor'),
                title: why ? t(why) : t('sessions.anchoredHint'),
                disabled: !!why,
                onclick: () => toggleAnchor(tb),
            }),
        );
    }
    bar.append(
        h('button', {
            type: 'button',
            class: 'btn btn-small btn-danger-outline delete-table-btn',
            text: t('sessions.deleteTable'),
            title: why ? t(why) : '',
            disabled: !!why,
            onclick: () => deleteTable(tb),
        }),
    );
    if (leaf && buildExperienceContext(tb, tables)) bar.append(saveButton(tb));
    return bar;
}

const key = (tb) => `${session.id}/${tb.id}`;

function saveButton(tb) {
    const st = distill.get(key(tb)) || { state: 'idle', hint: '' };
    const why = whyReadOnly('experiences');
    const label = st.state === 'busy' ? t('knowledge.distilling') : st.state === 'failed' ? t('knowledge.distillFailedRetry') : t('knowledge.saveAsExperience');
    return h('button', {
        type: 'button',
        class: ['btn', 'btn-small', 'save-exp-btn', st.state === 'failed' ? 'btn-warn' : 'btn-primary'],
        dataset: { state: st.state },

        disabled: st.state === 'busy' || !!why,
        title: why ? t(why) : distillHint(),
        onclick: () => (st.state === 'failed' ? runDistill(tb, st.hint) : askHint(tb)),
    }, icon('sparkle'), h('span', { class: 'save-exp-label', text: label }));
}

/** The dialog before distilling: what will be sent, and an optional folder. */
async function askHint(tb) {
    if (llmMode === null) await askLlmMode();
    if (!session) return;
    const tables = session.tables;
    const chain = visibleChain(tb, tables);
    const st = distill.get(key(tb)) || { state: 'idle', hint: '' };
    const dlg = h('dialog', { class: 'dialog distill-dialog', 'aria-labelledby': 'distill-title' });
    const input = h('input', { type: 'text', class: 'distill-hint', list: 'distill-folders', placeholder: t('knowledge.categoryHintPlaceholder'), value: st.hint, autocomplete: 'off' });
    const folders = experienceFolders();
    const ok = h('button', { type: 'submit', class: 'btn btn-primary distill-go', text: t('knowledge.save') });
    const cancel = h('button', { type: 'button', class: 'btn', text: t('app.cancel'), onclick: () => dlg.close() });
    const form = h(
        'form',
        { method: 'dialog' },
        h('h2', { id: 'distill-title', class: 'dialog-title', text: t('knowledge.saveAsExperienceTitle') }),
        h('p', { class: 'dialog-body distill-mode', dataset: { mode: llmMode === true ? 'llm' : llmMode === false ? 'local' : 'unknown' }, text: distillHint() }),
        h('p', { class: 'muted chain-line' }, h('span', { text: t('sessions.chainSent') }), ' ', h('span', { class: 'chain-steps', text: chain.map((c) => c.displayId || c.id).join(' → ') })),
        h('label', { class: 'field' }, h('span', { class: 'field-label', text: t('knowledge.categoryHint') }), input, h('datalist', { id: 'distill-folders' }, folders.map((f) => h('option', { value: f })))),
        folders.length
            ? h(
                  'div',
                  { class: 'folder-suggestions' },
                  h('span', { class: 'muted', text: t('sessions.folderSuggestions') }),
                  folders.slice(0, 6).map((f) => h('button', { type: 'button', class: 'chip chip-button', text: f, onclick: () => (input.value = f) })),
              )
            : null,
        h('div', { class: 'dialog-actions' }, cancel, ok),
    );
    form.addEventListener('submit', (e) => {
        e.preventDefault();
        const hint = input.value.trim();
        dlg.close();
        runDistill(tb, hint);
    });
    dlg.append(form);
    dlg.addEventListener('close', () => dlg.remove());
    document.body.append(dlg);
    dlg.showModal();
    input.focus();
}

async function runDistill(tb, hint) {
    const k = key(tb);
    const ctx = buildExperienceContext(tb, session.tables);
    if (!ctx) return;
    distill.set(k, { state: 'busy', hint });
    renderSession();
    const started = toast(t('knowledge.distillStarted'), 'info');
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), (DISTILL_TIMEOUT_S + 10) * 1000);
    const body = { experience_context: ctx, timeout_seconds: DISTILL_TIMEOUT_S };
    if (hint) body.category_hint = hint;
    try {
        const d = await knowledge.distill(body, { lang: currentLang() === 'zh' ? 'zh-CN' : 'en', signal: ctl.signal });
        distill.set(k, { state: 'idle', hint: '' });
        // how it was made, as the server says (source): never "AI" for the local summary
        const how = d && d.source === 'distill-local' ? t('sessions.distilledLocal') : d && d.source === 'distill' ? t('sessions.distilledLlm') : '';
        if (d && d.source) llmMode = d.source === 'distill';
        toast(`${t('knowledge.distilled')}${d && d.path ? `: ${d.path}` : ''}${how ? ` (${how})` : ''}`, 'success');
        window.dispatchEvent(new CustomEvent('knowledge-changed', { detail: { category: 'experiences' } }));
    } catch (e) {
        distill.set(k, { state: 'failed', hint });
        toast(errorText('knowledge.failedToDistill', e), 'error');
    } finally {
        clearTimeout(timer);
        if (started) started.remove();
        if (session && `${session.id}/${tb.id}` === k) renderSession();
    }
}

async function toggleAnchor(tb) {
    const tables = session.tables.map((x) => (x.id === tb.id ? { ...x, anchored: !x.anchored } : x));
    try {
        // Saved only over the session as shown: an agent's table added meanwhile is never lost.
        session = await api.put({ id: session.id, title: session.title, tables, expected_updated_at: session.updated_at });
        renderSession();
    } catch (e) {
        toast(errorText('sessions.failedToSave', e), 'error');
        if (e && e.code === 'CONFLICT') loadSession(session.id);
    }
}

async function deleteTable(tb) {
    const ok = await confirmDialog({
        title: t('sessions.deleteTableConfirm', { name: tb.displayId || tb.id }),
        body: t('sessions.deleteTableBody'),
        confirmLabel: t('panel.delete'),
    });
    if (!ok) return;
    try {
        session = await api.removeTable(session.id, tb.id);
        distill.delete(`${session.id}/${tb.id}`);
        toast(t('sessions.tableDeleted'), 'success');
        renderSession();
    } catch (e) {
        toast(errorText('sessions.failedToSave', e), 'error');
    }
}

async function deleteSession() {
    const ok = await confirmDialog({
        title: t('sessions.deleteSessionConfirm', { title: session.title || session.id }),
        body: t('knowledge.deleteConfirmBody'),
        confirmLabel: t('panel.delete'),
    });
    if (!ok) return;
    try {
        await api.remove(session.id);
        toast(t('sessions.sessionDeleted'), 'success');
        openId = null;
        session = null;
        await refresh();
    } catch (e) {
        toast(errorText('sessions.failedToSave', e), 'error');
    }
}

