// tokens.js: the access tokens of this space, for its admins (docs/web.md,
// "Tokens"): who can reach the space, with what role, when each was last
// used; a new token is shown once with a copy button and how an agent
// connects with it; revoking asks first and is refused for the token the
// admin is signed in with (the server answers CONFLICT, the panel says why).
import { tokens as api } from './api.js';
import { clear, confirmDialog, errorText, h, toast } from './dom.js';
import { fmtDateTime, t } from './i18n.js';
import { roleLabel } from './labels.js';

const ROLES = ['agent', 'reader', 'editor', 'admin'];

/** This server's MCP address, and the line that connects Claude Code to it with token. */
export const mcpUrl = () => `${location.origin}/mcp`;
export const mcpAddLine = (token) => `claude mcp add --transport http knowhub ${mcpUrl()} --header "Authorization: Bearer ${token}"`;
const LABEL_MAX = 200;

let root = null;
let items = [];
let truncated = false;
let fresh = null; // the token just created: {token, id, role, label}, shown until the view is left
let busy = false;

export function mountTokens(el) {
    root = el;
    window.addEventListener('lang-changed', () => render());
}

/** Load the list and draw; fresh survives a reload of the list, not a new visit. */
export async function refreshTokens({ keepFresh = false } = {}) {
    if (!keepFresh) fresh = null;
    try {
        const d = await api.list();
        items = d.items || [];
        truncated = !!d.truncated;
    } catch (e) {
        if (e.status !== 401) toast(errorText('tokens.failedToLoad', e), 'error');
    }
    render();
}

async function onCreate(form) {
    if (busy) return;
    const role = form.querySelector('select[name=role]').value;
    const label = form.querySelector('input[name=label]').value.trim();
    busy = true;
    try {
        fresh = await api.create({ role, label });
        form.reset();
        await refreshTokens({ keepFresh: true });
    } catch (e) {
        toast(errorText('tokens.failedToCreate', e), 'error');
    } finally {
        busy = false;
    }
}

async function onRevoke(item) {
    const ok = await confirmDialog({
        title: t('tokens.revokeTitle'),
        body: t('tokens.revokeBody', { label: item.label || item.id, role: roleLabel(item.role) }),
        confirmLabel: t('tokens.revoke'),
    });
    if (!ok) return;
    try {
        await api.revoke(item.id);
        if (fresh && fresh.id === item.id) fresh = null;
        toast(t('tokens.revoked', { label: item.label || item.id }));
        await refreshTokens({ keepFresh: true });
    } catch (e) {
        toast(errorText('tokens.failedToRevoke', e), 'error');
    }
}

async function copy(text, button) {
    try {
        await navigator.clipboard.writeText(text);
        button.textContent = t('tokens.copied');
    } catch {
        /* no clipboard (plain http on another host): select it for Ctrl-C */
        const input = button.parentElement.querySelector('input');
        input.focus();
        input.select();
        button.textContent = t('tokens.selectToCopy');
    }
}

function createForm() {
    const counter = h('span', { class: 'muted small field-counter', text: `0 / ${LABEL_MAX}` });
    const label = h('input', { name: 'label', type: 'text', maxlength: String(LABEL_MAX), autocomplete: 'off', placeholder: t('tokens.labelPlaceholder') });
    label.addEventListener('input', () => (counter.textContent = `${label.value.length} / ${LABEL_MAX}`));
    const form = h(
        'form',
        { class: 'card token-create' },
        h('h3', { text: t('tokens.createTitle') }),
        h(
            'div',
            { class: 'token-create-row' },
            h('label', { class: 'field' }, h('span', { class: 'field-label', text: t('tokens.role') }), h('select', { name: 'role' }, ...ROLES.map((r) => h('option', { value: r, text: roleLabel(r) })))),
            h('label', { class: 'field token-label-field' }, h('span', { class: 'field-label field-label-row' }, h('span', { text: t('tokens.label') }), counter), label),
            h('button', { type: 'submit', class: 'btn btn-primary', text: t('tokens.create') }),
        ),
        h('p', { class: 'muted small', text: t('tokens.rolesHint') }),
    );
    form.addEventListener('submit', (e) => {
        e.preventDefault();
        onCreate(form);
    });
    return form;
}

function freshCard() {
    const input = h('input', { type: 'text', readonly: '', class: 'token-secret', value: fresh.token, 'aria-label': t('tokens.newToken') });
    const button = h('button', { type: 'button', class: 'btn btn-small token-copy', text: t('tokens.copy') });
    button.addEventListener('click', () => copy(fresh.token, button));
    return h(
        'div',
        { class: 'card token-fresh', role: 'status' },
        h('h3', { text: t('tokens.newTokenTitle', { role: roleLabel(fresh.role) }) }),
        h('p', { class: 'token-warning', text: t('tokens.shownOnce') }),
        h('div', { class: 'token-secret-row' }, input, button),
        h('p', { class: 'muted small', text: t('tokens.connectHint', { url: mcpUrl() }) }),
        h('code', { class: 'token-connect', text: mcpAddLine(fresh.token) }),
    );
}

function row(item) {
    const revoke = item.state === 'valid' && !item.current ? h('button', { type: 'button', class: 'btn btn-small btn-danger-outline token-revoke', text: t('tokens.revoke'), onclick: () => onRevoke(item) }) : null;
    return h(
        'tr',
        { class: `token-row state-${item.state}`, 'data-id': item.id },
        h('td', {}, h('span', { class: 'token-label', text: item.label || t('tokens.noLabel') }), item.current ? h('span', { class: 'chip token-current', text: t('tokens.current') }) : null),
        h('td', { class: 'mono', text: item.id }),
        h('td', { text: roleLabel(item.role) }),
        h('td', { text: fmtDateTime(item.created_at) }),
        h('td', { text: item.last_used_at ? fmtDateTime(item.last_used_at) : t('tokens.never') }),
        h('td', { text: item.state === 'valid' ? t('tokens.valid') : t('tokens.revokedAt', { time: fmtDateTime(item.revoked_at) }) }),
        h('td', {}, revoke),
    );
}

function render() {
    if (!root) return;
    clear(root);
    root.append(
        h('header', { class: 'view-head' }, h('h2', { text: t('tokens.title') }), h('button', { type: 'button', class: 'btn btn-small', text: t('app.refresh'), onclick: () => refreshTokens({ keepFresh: true }) })),
        h('p', { class: 'muted', text: t('tokens.intro') }),
    );
    if (fresh) root.append(freshCard());
    root.append(createForm());
    const head = [t('tokens.colLabel'), t('tokens.colId'), t('tokens.colRole'), t('tokens.colCreated'), t('tokens.colLastUsed'), t('tokens.colState'), ''].map((text) => h('th', { text }));
    root.append(
        h(
            'div',
            { class: 'card' },
            h('table', { class: 'data-table tokens-table' }, h('thead', {}, h('tr', {}, ...head)), h('tbody', {}, ...items.map(row))),
            truncated ? h('p', { class: 'muted small', text: t('tokens.truncated', { count: items.length }) }) : null,
        ),
    );
}
