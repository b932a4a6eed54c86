// review.js: the review queue of this space, for its editors and admins
// (docs/web.md "Review", docs/review.md): the proposals agents (or the
// server's LLM) made under the space's review policy and the ones the
// poisoning screen quarantined. Each shows its provenance, its reasons, for
// a change the diff against the live text, for a create the document, and
// the 3 most similar live entries; it is approved, rejected with a reason,
// edited then approved, or merged into an entry. A conflict item (two
// entries that contradict each other, docs/conflicts.md) shows both sides
// side by side and is superseded (keep left or right), narrowed (edit the
// scenarios) or dismissed with a reason. Keys: j/k (or the arrows) move, a
// approves, r rejects (focuses the reason), e edits.
import { overview, request } from './api.js';
import { $, append, clear, errorText, h, toast } from './dom.js';
import { lineDiff } from './diff.js';
import { splitDocument } from './fm.js';
import { fmtDateTime, fmtNumber, t } from './i18n.js';
import { categoryLabel, detectorReason } from './labels.js';
import { renderMarkdown } from './md.js';
import { who } from './who.js';

const LIMIT = 20;
const STATES = ['pending', 'quarantined', 'approved', 'rejected', 'all'];
const REASON_MAX = 2000;
/** A held write sends no live event (docs/api.md, GET /api/events): the badge is also read again this often while the page is visible. */
const BADGE_POLL_MS = 60000;
/** The poisoning screen's reason codes by class (docs/review.md, "Classes and reason codes"). */
const CLASS_OF = {
    override_previous: 'instruction_override',
    persona_switch: 'instruction_override',
    new_instructions: 'instruction_override',
    decode_and_follow: 'instruction_override',
    spaced_out: 'instruction_override',
    chat_template_token: 'role_tag',
    fake_turn: 'role_tag',
    secret_in_url: 'exfiltration',
    pipe_to_shell: 'exfiltration',
    send_secrets: 'exfiltration',
    reveal_prompt: 'exfiltration',
    zero_width: 'hidden_text',
    bidi_control: 'hidden_text',
    tag_characters: 'hidden_text',
    base64_run: 'hidden_text',
    hex_run: 'hidden_text',
    html_comment: 'hidden_text',
};

const KIND_KEYS = { create: 'review.kindCreate', update: 'review.kindUpdate', delete: 'review.kindDelete', rename: 'review.kindRename', slim_merge: 'review.kindSlimMerge', conflict: 'review.kindConflict', review_due: 'review.kindReviewDue' };
const STATE_KEYS = { pending: 'review.statePending', quarantined: 'review.stateQuarantined', approved: 'review.stateApproved', rejected: 'review.stateRejected', all: 'review.stateAll' };
const CLASS_KEYS = {
    instruction_override: 'review.classInstructionOverride',
    role_tag: 'review.classRoleTag',
    exfiltration: 'review.classExfiltration',
    hidden_text: 'review.classHiddenText',
    other: 'review.classOther',
};
const kindLabel = (k) => t(KIND_KEYS[k] || 'review.kindUpdate');
const stateLabel = (s) => t(STATE_KEYS[s] || 'review.statePending');
const enc = encodeURIComponent;
/** Where a proposal writes: for a rename old → new (the list's items carry no old place: → new). */
const placeOf = (p) => {
    const to = `${categoryLabel(p.category)} / ${p.path || t('review.newPath')}`;
    if (p.kind !== 'rename') return to;
    return p.from ? `${categoryLabel(p.from.category)} / ${p.from.path} → ${to}` : `→ ${to}`;
};
const api = {
    list: (state, offset) => request('GET', `/api/review?${state === 'all' ? '' : `state=${enc(state)}&`}limit=${LIMIT}&offset=${offset}`),
    get: (id) => request('GET', `/api/review/${enc(id)}`),
    decide: (id, body) => request('POST', `/api/review/${enc(id)}/decide`, body),
    similar: (q) => request('GET', `/api/knowledge/search?q=${enc(q)}&top_k=3&min_score=1`),
};

let root = null;
let openEntry = () => {};
let state = 'pending';
let offset = 0;
let items = [];
let total = 0;
let sel = 0;
let detail = null; // the selected proposal, with its documents
let similar = [];
let busy = false;
let seq = 0;

export const mayReview = () => who.role === 'editor' || who.role === 'admin';

/** Mount the view into el; open(id) opens a live entry in the knowledge view. */
export function mountReview(el, open) {
    root = el;
    openEntry = open;
    window.addEventListener('lang-changed', () => {
        render();
        refreshReviewBadge();
    });
    const onChanged = (e) => {
        refreshReviewBadge();
        // A change made elsewhere may have decided what is on screen: reload
        // the queue, unless the reviewer is typing (a reason, a document).
        const typing = document.activeElement && ['INPUT', 'TEXTAREA'].includes(document.activeElement.tagName);
        if (e.detail && e.detail.remote && !root.hidden && !busy && !typing && !document.querySelector('dialog[open]')) refreshReview({ keepSelection: true });
    };
    window.addEventListener('knowledge-changed', onChanged);
    // live.js: a proposal made or decided anywhere (editors' streams only).
    // The badge follows both; the queue reloads for a new proposal only (its
    // selection kept): one decided elsewhere stays on screen until acted on,
    // which says already_decided, so nothing moves under the reviewer's hand.
    window.addEventListener('review-changed', (e) => {
        if (e.detail && e.detail.action === 'proposed') onChanged(e);
        else refreshReviewBadge();
    });
    document.addEventListener('keydown', onKey);
    document.addEventListener('visibilitychange', () => {
        if (document.visibilityState === 'visible') refreshReviewBadge();
    });
    setInterval(() => {
        if (document.visibilityState === 'visible') refreshReviewBadge();
    }, BADGE_POLL_MS);
}

/** The tab's badge: pending + quarantined proposals (GET /api/overview's review). */
export async function refreshReviewBadge() {
    const tab = $('.tab[data-view="review"]');
    if (!tab || !mayReview()) return;
    let n = 0;
    try {
        const r = (await overview.get()).review || {};
        n = (r.pending || 0) + (r.quarantined || 0);
    } catch {
        return; /* the count stays as it was */
    }
    let badge = tab.querySelector('.review-badge');
    if (!badge) {
        badge = h('span', { class: 'review-badge' });
        tab.append(badge);
    }
    badge.textContent = fmtNumber(n);
    badge.hidden = n === 0;
    badge.setAttribute('aria-label', t('review.badge', { count: n }));
}

/** Load the queue's page and the selected proposal, then draw. */
export async function refreshReview({ keepSelection = false } = {}) {
    const my = ++seq;
    const selectedId = keepSelection && items[sel] ? items[sel].id : null;
    try {
        const d = await api.list(state, offset);
        if (my !== seq) return;
        items = d.items || [];
        total = d.total || 0;
    } catch (e) {
        if (my !== seq) return;
        items = [];
        total = 0;
        if (e.status !== 401) toast(errorText('review.failedToLoad', e), 'error');
    }
    const again = selectedId ? items.findIndex((p) => p.id === selectedId) : -1;
    sel = again >= 0 ? again : Math.min(sel, Math.max(0, items.length - 1));
    await loadDetail(my);
    refreshReviewBadge();
}

async function loadDetail(my = seq) {
    // What is drawn and what the keys decide are one thing: the detail and
    // its similar entries are swapped in together when both are here, so a
    // reload under way (a new proposal elsewhere) never leaves the proposal
    // on screen undecidable for a moment.
    let d = null;
    let sim = [];
    const p = items[sel];
    if (p) {
        try {
            d = await api.get(p.id);
            if (my !== seq) return;
        } catch (e) {
            if (my !== seq) return;
            toast(errorText('review.failedToLoad', e), 'error');
        }
        const q = d ? searchWords(d.document || '') : '';
        if (q) {
            try {
                const r = await api.similar(q);
                if (my !== seq) return;
                sim = (r.results || []).slice(0, 3);
            } catch {
                sim = []; /* no similar entries shown: the proposal is still decidable */
            }
        }
    }
    if (my !== seq) return;
    detail = d;
    similar = sim;
    render();
}

/** The words of a proposal to find similar live entries: its title and scenario, else its first line. */
export function searchWords(doc) {
    const { front, body } = splitDocument(doc);
    const pick = (key) => {
        const m = new RegExp(`^${key}:\\s*(.+)$`, 'm').exec(front || '');
        return m ? m[1].replace(/^["']|["']$/g, '') : '';
    };
    let text = [pick('title'), pick('scenario')].filter(Boolean).join(' ');
    if (!text) text = (body || '').split('\n').find((l) => l.trim()) || '';
    return text.replace(/[#*`>_[\]()]/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 200);
}

function select(i) {
    if (i < 0 || i >= items.length || i === sel) return;
    sel = i;
    seq++;
    loadDetail(seq);
}

async function decide(body, doneKey, errorBox = null) {
    const p = detail;
    if (!p || busy) return false;
    busy = true;
    try {
        const r = await api.decide(p.id, body);
        toast(t(doneKey, { id: p.id }), 'success');
        if (r && r.result_id) window.dispatchEvent(new CustomEvent('knowledge-changed', { detail: { category: p.category } }));
        await refreshReview({ keepSelection: false });
        return true;
    } catch (e) {
        toast(errorText('review.failedToDecide', e), 'error');
        showError(e, errorBox);
        if (e.key === 'already_decided') await refreshReview({ keepSelection: false });
        return false;
    } finally {
        busy = false;
    }
}

function showError(e, where = null) {
    const box = where || (root && root.querySelector('.review-error'));
    if (!box) return;
    box.textContent = errorText('review.failedToDecide', e);
    box.hidden = false;
}

function approve() {
    return decide({ decision: 'approve' }, 'review.approved');
}

function reject() {
    const input = root.querySelector('.review-reason');
    const reason = input ? input.value.trim() : '';
    if (!reason) {
        if (input) input.focus();
        showError({ message: t('review.reasonRequired') });
        return Promise.resolve(false);
    }
    return decide({ decision: 'reject', reason }, 'review.rejected');
}

/** A dialog with the document to edit; merge adds the entry to merge into. */
function documentDialog({ merge }) {
    const p = detail;
    if (!p) return;
    const area = h('textarea', { class: 'review-doc-input', rows: '18', spellcheck: 'false', value: p.document || '', 'aria-label': t('review.document') });
    const into = h('input', { type: 'text', class: 'review-into', autocomplete: 'off', placeholder: t('review.intoPlaceholder'), value: similar[0] ? similar[0].id : '' });
    const pickers = similar.map((s) =>
        h('button', { type: 'button', class: 'btn btn-small review-into-pick', text: s.title || s.scenario || s.id, onclick: () => (into.value = s.id) }),
    );
    const ok = h('button', { type: 'button', class: 'btn btn-primary review-doc-save', text: t(merge ? 'review.merge' : 'review.editApprove') });
    const cancel = h('button', { type: 'button', class: 'btn', text: t('app.cancel') });
    const error = h('p', { class: 'form-error review-doc-error', role: 'alert', hidden: true });
    const dlg = h(
        'dialog',
        { class: 'dialog review-doc-dialog' },
        h('h2', { class: 'dialog-title', text: t(merge ? 'review.mergeTitle' : 'review.editTitle') }),
        merge ? h('label', { class: 'field' }, h('span', { class: 'field-label', text: t('review.into') }), into, pickers.length ? h('div', { class: 'review-into-picks' }, ...pickers) : null) : null,
        h('label', { class: 'field' }, h('span', { class: 'field-label', text: t(merge ? 'review.mergedDocument' : 'review.document') }), area),
        error,
        h('div', { class: 'dialog-actions' }, cancel, ok),
    );
    cancel.addEventListener('click', () => dlg.close());
    dlg.addEventListener('close', () => dlg.remove());
    ok.addEventListener('click', async () => {
        const body = merge ? { decision: 'merge', into: into.value.trim(), document: area.value } : { decision: 'edit', document: area.value };
        if (await decide(body, merge ? 'review.merged' : 'review.approved', error)) dlg.close();
    });
    document.body.append(dlg);
    dlg.showModal();
    area.focus();
}

function onKey(e) {
    if (!root || root.hidden || e.ctrlKey || e.metaKey || e.altKey) return;
    if (document.querySelector('dialog[open]')) return;
    const tag = (e.target && e.target.tagName) || '';
    if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT') {
        if (e.key === 'Escape') e.target.blur();
        return;
    }
    const k = e.key;
    if (k === 'j' || k === 'ArrowDown') select(sel + 1);
    else if (k === 'k' || k === 'ArrowUp') select(sel - 1);
    else if (k === 'a' && decidable() && detail.kind !== 'conflict') approve();
    else if (k === 'r' && decidable() && detail.kind !== 'conflict') {
        const input = root.querySelector('.review-reason');
        if (input) input.focus();
    } else if (k === 'e' && decidable() && detail.kind !== 'rename' && detail.kind !== 'conflict') documentDialog({ merge: false });
    else return;
    e.preventDefault();
}

const decidable = () => !!detail && (detail.state === 'pending' || detail.state === 'quarantined');

const reasonClass = (code) => CLASS_OF[code] || 'other';

function reasonChips(codes) {
    return h(
        'ul',
        { class: 'review-reasons' },
        (codes || []).map((code) =>
            h('li', { class: `chip review-reason-chip class-${reasonClass(code)}`, 'data-code': code }, h('span', { class: 'review-reason-class', text: t(CLASS_KEYS[reasonClass(code)]) }), ' ', h('code', { text: code })),
        ),
    );
}

function listRow(p, i) {
    const li = h(
        'li',
        { class: ['review-item', i === sel && 'selected', `state-${p.state}`], 'data-id': p.id, tabindex: '-1' },
        h('span', { class: `chip review-kind kind-${p.kind}`, text: kindLabel(p.kind) }),
        h('span', { class: 'review-item-path', text: placeOf(p) }),
        h('span', { class: 'muted small review-item-when', text: `${p.provenance.actor} · ${fmtDateTime(p.created_at)}` }),
        p.kind === 'conflict' ? conflictLine(p) : p.reasons && p.reasons.length ? reasonChips(p.reasons) : null,
    );
    li.addEventListener('click', () => select(i));
    return li;
}

function provenance(p) {
    const pv = p.provenance || {};
    const rows = [
        ['review.actor', pv.actor],
        ['review.agentId', pv.agent_id],
        ['review.source', pv.source],
        ['review.writePath', p.write_path],
        ['review.trace', pv.trace_id],
        ['review.created', fmtDateTime(p.created_at)],
    ];
    if (p.decided_at) rows.push(['review.decidedBy', `${p.decided_by || ''} · ${fmtDateTime(p.decided_at)}`]);
    if (p.decision_reason) rows.push(['review.decisionReason', p.decision_reason]);
    return h(
        'dl',
        { class: 'review-provenance' },
        rows.filter(([, v]) => v).map(([k, v]) => [h('dt', { text: t(k) }), h('dd', { class: 'mono', text: String(v) })]),
    );
}

function change(p) {
    if (p.kind === 'rename') {
        const from = p.from ? `${categoryLabel(p.from.category)} / ${p.from.path}` : '';
        return h('div', { class: 'review-document' }, h('h4', { class: 'review-rename', text: t('review.renameTitle', { from, to: `${categoryLabel(p.category)} / ${p.path}`, version: p.base_version ?? '' }) }), h('pre', { class: 'review-source', text: p.document || '' }));
    }
    if (p.kind === 'review_due') {
        // the entry as it is, past its review date: approve keeps it, edit changes it, reject expires it
        return h('div', { class: 'review-document' }, h('h4', { class: 'review-due-title', text: t('review.reviewDueTitle') }), h('pre', { class: 'review-source', text: p.document || '' }));
    }
    if (p.kind === 'create') {
        const { body } = splitDocument(p.document || '');
        return h('div', { class: 'review-document' }, h('h4', { text: t('review.documentTitle') }), h('pre', { class: 'review-source', text: p.document || '' }), h('div', { class: 'md review-rendered' }, renderMarkdown(body || '')));
    }
    const ops = lineDiff(p.base_document || '', p.kind === 'delete' ? '' : p.document || '');
    return h(
        'div',
        { class: 'review-document' },
        h('h4', { text: t(p.kind === 'delete' ? 'review.deleteTitle' : 'review.diffTitle', { version: p.base_version ?? '' }) }),
        h(
            'pre',
            { class: 'diff review-diff' },
            ops.map((o) => h('span', { class: `diff-line diff-${o.op}`, text: `${o.op === 'add' ? '+' : o.op === 'del' ? '−' : ' '} ${o.text}\n` })),
        ),
        p.kind === 'slim_merge' ? memberList(p.members || []) : null,
    );
}

/** A slim merge's members: each becomes a tombstone of the survivor on approval. */
function memberList(members) {
    const note = (m) => {
        if (m.status === 'active' && m.version === m.base_version) return '';
        return m.status === 'active' ? t('review.memberChanged', { version: m.version }) : t('review.memberGone');
    };
    return h(
        'div',
        { class: 'review-members' },
        h('h4', { text: t('review.membersTitle', { count: members.length }) }),
        h(
            'ol',
            {},
            members.map((m) =>
                h(
                    'li',
                    { 'data-id': m.id },
                    m.status === 'active' ? h('button', { type: 'button', class: 'review-member-open', text: m.title || m.id, onclick: () => openEntry(m.id) }) : h('span', { text: m.title || m.id }),
                    h('span', { class: 'muted small', text: ` ${m.path || ''} ${note(m)}` }),
                ),
            ),
        ),
    );
}

function similarList() {
    return h(
        'div',
        { class: 'review-similar' },
        h('h4', { text: t('review.similar') }),
        similar.length
            ? h(
                  'ol',
                  {},
                  similar.map((s) =>
                      h('li', {}, h('button', { type: 'button', class: 'review-similar-open', 'data-id': s.id, text: s.title || s.scenario || s.id, onclick: () => openEntry(s.id) }), h('span', { class: 'muted small', text: ` ${categoryLabel(s.category)}` })),
                  ),
              )
            : h('p', { class: 'muted small', text: t('review.noSimilar') }),
    );
}

function actions(p) {
    if (p.state !== 'pending' && p.state !== 'quarantined') return h('p', { class: 'muted review-decided', text: stateLabel(p.state) });
    if (p.kind === 'conflict') return conflictActions(p);
    const reason = h('input', { type: 'text', class: 'review-reason', maxlength: String(REASON_MAX), autocomplete: 'off', placeholder: t('review.reasonPlaceholder'), 'aria-label': t('review.reason') });
    reason.addEventListener('keydown', (e) => {
        if (e.key === 'Enter') {
            e.preventDefault();
            reject();
        }
    });
    return h(
        'div',
        { class: 'review-actions' },
        h('button', { type: 'button', class: 'btn btn-primary review-approve', text: t('review.approve'), onclick: approve }),
        // a rename brings no text: it is approved or rejected
        p.kind === 'rename' ? null : h('button', { type: 'button', class: 'btn review-edit', text: t('review.edit'), onclick: () => documentDialog({ merge: false }) }),
        // a slim merge merges into its own survivor only
        p.kind === 'rename' || p.kind === 'slim_merge' || p.kind === 'review_due' ? null : h('button', { type: 'button', class: 'btn review-merge', text: t('review.merge'), onclick: () => documentDialog({ merge: true }) }),
        h('span', { class: 'review-reject-row' }, reason, h('button', { type: 'button', class: 'btn btn-danger-outline review-reject', text: t('review.reject'), onclick: reject })),
        p.state === 'quarantined' && who.role !== 'admin' ? h('p', { class: 'muted small review-admin-only', text: t('review.quarantineAdminOnly') }) : null,
    );
}

function detailView() {
    const p = detail;
    if (!p) return h('div', { class: 'card review-detail review-empty' }, h('p', { class: 'muted', text: items.length ? t('app.loading') : t('review.empty') }));
    return h(
        'div',
        { class: 'card review-detail', 'data-id': p.id },
        h(
            'header',
            { class: 'review-detail-head' },
            h('span', { class: `chip review-kind kind-${p.kind}`, text: kindLabel(p.kind) }),
            h('span', { class: `chip review-state state-${p.state}`, text: stateLabel(p.state) }),
            h('h3', { class: 'review-path', text: placeOf(p) }),
            h('code', { class: 'muted small', text: p.id }),
        ),
        p.kind !== 'conflict' && p.reasons && p.reasons.length ? h('div', { class: 'review-why' }, h('h4', { text: t('review.reasons') }), reasonChips(p.reasons)) : null,
        provenance(p),
        h('p', { class: 'form-error review-error', role: 'alert', hidden: true }),
        actions(p),
        p.kind === 'conflict' ? conflictSides(p) : h('div', { class: 'review-body' }, change(p), similarList()),
    );
}

function pager() {
    const last = offset + items.length;
    const prev = h('button', { type: 'button', class: 'btn btn-small review-prev', text: t('review.prev'), disabled: offset === 0 });
    const next = h('button', { type: 'button', class: 'btn btn-small review-next', text: t('review.next'), disabled: last >= total });
    prev.addEventListener('click', () => {
        offset = Math.max(0, offset - LIMIT);
        sel = 0;
        refreshReview();
    });
    next.addEventListener('click', () => {
        offset += LIMIT;
        sel = 0;
        refreshReview();
    });
    return h('div', { class: 'review-pager' }, prev, h('span', { class: 'muted small', text: total ? t('review.range', { from: offset + 1, to: last, total }) : '' }), next);
}

function render() {
    if (!root) return;
    const filter = h('select', { class: 'review-filter', 'aria-label': t('review.filter') }, ...STATES.map((s) => h('option', { value: s, text: stateLabel(s), selected: s === state })));
    filter.addEventListener('change', () => {
        state = filter.value;
        offset = 0;
        sel = 0;
        refreshReview();
    });
    clear(root);
    append(root, [
        h('header', { class: 'view-head' }, h('h2', { text: t('review.title') }), filter, h('button', { type: 'button', class: 'btn btn-small', text: t('app.refresh'), onclick: () => refreshReview({ keepSelection: true }) })),
        h('p', { class: 'muted small review-keys', text: t('review.keys') }),
        h(
            'div',
            { class: 'review-layout' },
            h('div', { class: 'card review-queue' }, items.length ? h('ul', { class: 'review-list' }, items.map(listRow)) : h('p', { class: 'muted review-none', text: t('review.empty') }), pager()),
            detailView(),
        ),
    ]);
}

// ---- conflict items (docs/conflicts.md "Conflict items and their resolution") ----

const JUDGE_KEYS = { local: 'review.judgeLocal', llm: 'review.judgeLlm', link: 'review.judgeLink' };

/** A conflict item's reason, who judged it, and the rule flag. */
function conflictLine(p) {
    const c = p.conflict || {};
    return h(
        'div',
        { class: 'review-conflict-why' },
        c.against_rule ? h('span', { class: 'chip review-against-rule', text: t('review.againstRule') }) : null,
        h('span', { class: 'review-conflict-reason', text: c.judge === 'local' ? detectorReason(c.reason) : c.reason || '' }),
        h('span', { class: 'muted small review-conflict-judge', text: ` · ${t(JUDGE_KEYS[c.judge] || 'review.judgeLink')}` }),
    );
}

/** The two sides, left the proposal's entry, right the other. */
function conflictSides(p) {
    const sides = p.sides || [];
    const side = (s, i) => {
        const live = s.status === 'active';
        const note = !live ? t('review.sideGone', { status: s.status }) : s.version !== s.base_version ? t('review.sideChanged', { version: s.version }) : t('review.sideVersion', { version: s.version });
        return h(
            'section',
            { class: ['review-side', i ? 'review-side-right' : 'review-side-left', !live && 'gone'], 'data-id': s.id },
            h('h4', {}, h('span', { class: 'muted small', text: `${t(i ? 'review.sideRight' : 'review.sideLeft')} · ` }), live ? h('button', { type: 'button', class: 'review-side-open', text: s.title || s.id, onclick: () => openEntry(s.id) }) : h('span', { text: s.title || s.id })),
            h(
                'p',
                { class: 'muted small' },
                `${s.category ? categoryLabel(s.category) : ''} / ${s.path || ''} · ${note}`,
                s.category === 'rules' && s.always_apply ? h('span', { class: 'chip review-side-rule', text: t('review.sideRule') }) : null,
            ),
            h('pre', { class: 'review-source review-side-document', text: s.document || '' }),
        );
    };
    return h('div', { class: 'review-body review-conflict' }, h('h4', { text: t('review.conflictTitle') }), conflictLine(p), h('div', { class: 'review-sides' }, sides.map(side)));
}

function conflictActions(p) {
    const sides = p.sides || [];
    const reason = h('input', { type: 'text', class: 'review-dismiss-reason', maxlength: String(REASON_MAX), autocomplete: 'off', placeholder: t('review.dismissPlaceholder'), 'aria-label': t('review.reason') });
    const dismiss = () => {
        const why = reason.value.trim();
        if (!why) {
            reason.focus();
            showError({ message: t('review.dismissReasonRequired') });
            return;
        }
        decide({ decision: 'dismiss', reason: why }, 'review.dismissed');
    };
    reason.addEventListener('keydown', (e) => {
        if (e.key === 'Enter') {
            e.preventDefault();
            dismiss();
        }
    });
    const keep = (i) => sides[i] && decide({ decision: 'supersede', keep: sides[i].id }, 'review.superseded');
    return h(
        'div',
        { class: 'review-actions review-conflict-actions' },
        h('button', { type: 'button', class: 'btn review-keep-left', text: t('review.keepLeft'), onclick: () => keep(0) }),
        h('button', { type: 'button', class: 'btn review-keep-right', text: t('review.keepRight'), onclick: () => keep(1) }),
        h('button', { type: 'button', class: 'btn review-narrow', text: t('review.narrow'), onclick: () => narrowDialog(p) }),
        h('span', { class: 'review-reject-row' }, reason, h('button', { type: 'button', class: 'btn btn-danger-outline review-dismiss', text: t('review.dismiss'), onclick: dismiss })),
    );
}

/** A dialog with both sides' documents; the changed ones are written. */
function narrowDialog(p) {
    const sides = (p.sides || []).filter((s) => s.status === 'active');
    const areas = sides.map((s) => h('textarea', { class: 'review-narrow-input', rows: '12', spellcheck: 'false', value: s.document || '', 'data-id': s.id, 'aria-label': s.title || s.id }));
    const ok = h('button', { type: 'button', class: 'btn btn-primary review-narrow-save', text: t('review.narrowSave') });
    const cancel = h('button', { type: 'button', class: 'btn', text: t('app.cancel') });
    const error = h('p', { class: 'form-error review-doc-error', role: 'alert', hidden: true });
    const dlg = h(
        'dialog',
        { class: 'dialog review-doc-dialog review-narrow-dialog' },
        h('h2', { class: 'dialog-title', text: t('review.narrowTitle') }),
        h('p', { class: 'muted small', text: t('review.narrowHint') }),
        sides.map((s, i) => h('label', { class: 'field' }, h('span', { class: 'field-label', text: s.title || s.id }), areas[i])),
        error,
        h('div', { class: 'dialog-actions' }, cancel, ok),
    );
    cancel.addEventListener('click', () => dlg.close());
    dlg.addEventListener('close', () => dlg.remove());
    ok.addEventListener('click', async () => {
        const documents = {};
        sides.forEach((s, i) => {
            if (areas[i].value !== (s.document || '')) documents[s.id] = areas[i].value;
        });
        if (!Object.keys(documents).length) {
            error.textContent = t('review.narrowNothing');
            error.hidden = false;
            return;
        }
        if (await decide({ decision: 'narrow', documents }, 'review.narrowed', error)) dlg.close();
    });
    document.body.append(dlg);
    dlg.showModal();
    if (areas[0]) areas[0].focus();
}
