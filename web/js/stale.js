// stale.js: the stale view (docs/conflicts.md "Time: expiry, review-by dates
// and pins"): the space's entries that have expired (they have left the
// searches, the context and the rules, but are kept and readable) or are past
// their review_after (still served, and in the review queue). One click
// renews an expired entry for 90 days or takes its expiry away; a title
// opens the document. Texts from the server are set as text, never markup.
import { knowledge as api } from './api.js';
import { clear, errorText, h, toast } from './dom.js';
import { fmtDateTime, t } from './i18n.js';
import { canWrite } from './who.js';

/** How far one click renews an expired entry. */
const RENEW_DAYS = 90;

let root = null;
let onOpen = () => {};
let items = [];
let total = 0;
let busy = false;

export function mountStale(el, open) {
    root = el;
    onOpen = open;
    window.addEventListener('lang-changed', () => render());
}

export async function refreshStale() {
    try {
        const d = await api.stale(200, 0);
        items = d.items || [];
        total = d.total || 0;
    } catch (e) {
        if (e.status !== 401) toast(errorText('stale.failedToLoad', e), 'error');
    }
    render();
}

/** "YYYY-MM-DDTHH:MM:SSZ", days from now. */
function daysFromNow(days) {
    return new Date(Date.now() + days * 86400000).toISOString().replace(/\.\d+Z$/, 'Z');
}

async function setExpiry(item, expiresAt) {
    if (busy) return;
    busy = true;
    try {
        await api.update(item.id, { expires_at: expiresAt });
        toast(t(expiresAt ? 'stale.renewed' : 'stale.cleared', { title: item.title }));
        await refreshStale();
    } catch (e) {
        toast(errorText('stale.failedToRenew', e), 'error');
    } finally {
        busy = false;
    }
}

function row(item) {
    const expired = item.why === 'expired';
    const actions =
        expired && canWrite(item.category)
            ? [
                  h('button', { type: 'button', class: 'btn btn-small stale-renew', text: t('stale.renew', { days: RENEW_DAYS }), onclick: () => setExpiry(item, daysFromNow(RENEW_DAYS)) }),
                  h('button', { type: 'button', class: 'btn btn-small stale-clear', text: t('stale.neverExpires'), onclick: () => setExpiry(item, null) }),
              ]
            : [];
    return h(
        'tr',
        { class: `stale-row why-${item.why}`, 'data-id': item.id },
        h('td', {}, h('a', { href: '#', class: 'stale-title', text: item.title || item.path, onclick: (e) => (e.preventDefault(), onOpen(item.id)) })),
        h('td', { text: t(item.category === 'rules' ? 'stale.rule' : 'stale.experience') }),
        h('td', {}, h('span', { class: `chip stale-why`, text: t(expired ? 'stale.whyExpired' : 'stale.whyReviewDue') })),
        h('td', { text: item.expires_at ? fmtDateTime(item.expires_at) : '—' }),
        h('td', { text: item.review_after ? fmtDateTime(item.review_after) : '—' }),
        h('td', { class: 'stale-actions' }, ...actions),
    );
}

function render() {
    if (!root) return;
    clear(root);
    root.append(
        h('header', { class: 'view-head' }, h('h2', { text: t('stale.title') }), h('button', { type: 'button', class: 'btn btn-small', text: t('app.refresh'), onclick: () => refreshStale() })),
        h('p', { class: 'muted', text: t('stale.intro') }),
    );
    if (!items.length) {
        root.append(h('p', { class: 'muted stale-empty', text: t('stale.empty') }));
        return;
    }
    const head = [t('stale.colTitle'), t('stale.colCategory'), t('stale.colWhy'), t('stale.colExpires'), t('stale.colReview'), ''].map((text) => h('th', { text }));
    root.append(
        h(
            'div',
            { class: 'card' },
            h('table', { class: 'data-table stale-table' }, h('thead', {}, h('tr', {}, ...head)), h('tbody', {}, ...items.map(row))),
            total > items.length ? h('p', { class: 'muted small', text: t('stale.more', { shown: items.length, total }) }) : null,
        ),
    );
}
