// dom.js: building elements from text nodes and attributes, never from markup. Every text goes in through
// textContent or an attribute, so data is never parsed as markup. The page
// runs under a CSP without 'unsafe-inline': no inline handlers, no style=""
// (element.style from script is fine; classes are preferred).
import { hasKey, t } from './i18n.js';

const PROPS = new Set(['value', 'checked', 'disabled', 'hidden', 'selected', 'open', 'readOnly', 'indeterminate']);

function set(el, attrs) {
    let value;
    for (const [k, v] of Object.entries(attrs || {})) {
        if (v === undefined || v === null || v === false) continue;
        if (k === 'class') el.setAttribute('class', Array.isArray(v) ? v.filter(Boolean).join(' ') : v);
        else if (k === 'text') el.textContent = String(v);
        else if (k === 'dataset') for (const [dk, dv] of Object.entries(v)) el.dataset[dk] = dv;
        else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
        else if (k === 'value') value = v;
        else if (PROPS.has(k)) el[k] = v;
        else if (k === 'style') throw new Error('style attributes are not allowed (CSP): use a class');
        else el.setAttribute(k, v === true ? '' : String(v));
    }
    return value;
}

export function append(el, children) {
    for (const c of children.flat(Infinity)) {
        if (c === null || c === undefined || c === false) continue;
        el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
}

/** h('div', {class, text, onclick, ...}, ...children) */
export function h(tag, attrs = {}, ...children) {
    const el = document.createElement(tag);
    const value = set(el, attrs);
    append(el, children);
    if (value !== undefined) el.value = value;
    return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';
export function svg(tag, attrs = {}, ...children) {
    const el = document.createElementNS(SVG_NS, tag);
    set(el, attrs);
    append(el, children);
    return el;
}

export function clear(el) {
    el.replaceChildren();
    return el;
}

export const $ = (sel, root = document) => root.querySelector(sel);
export const $$ = (sel, root = document) => [...root.querySelectorAll(sel)];

/** Unicode characters, as the server counts limits. */
export const charLength = (s) => Array.from(s || '').length;

/** A short message at the bottom of the screen (returned). kind: info | success | error */
export function toast(message, kind = 'info') {
    const box = document.getElementById('toasts');
    if (!box) return;
    const el = h('div', { class: `toast toast-${kind}`, role: kind === 'error' ? 'alert' : 'status', text: message });
    const close = h('button', { type: 'button', class: 'toast-close', 'aria-label': t('app.close'), text: '\u00d7' });
    close.addEventListener('click', () => el.remove());
    el.append(close);
    box.append(el);
    setTimeout(() => el.remove(), kind === 'error' ? 9000 : 4000);
    return el;
}

// Parameter values the UI has words for: a role, a category, a field name.
const PARAM_WORDS = { role: (v) => `role.${v}`, category: (v) => `knowledge.${v}`, field: (v) => `errorFields.${v}` };

/** A server error in the UI's language: errors.<key> with its params when the
 * key is known, else the server's English message. */
export function errorMessage(err) {
    const key = err && err.key ? `errors.${err.key}` : '';
    if (key && hasKey(key)) {
        const vars = {};
        for (const [name, value] of Object.entries(err.params || {})) {
            const word = PARAM_WORDS[name] && typeof value === 'string' ? PARAM_WORDS[name](value) : null;
            vars[name] = word && hasKey(word) ? t(word) : value;
        }
        return t(key, vars);
    }
    return err && err.message ? err.message : String(err || '');
}

/** An error as a line for a toast: "Failed to save knowledge: <server error>". */
export function errorText(prefixKey, err) {
    const msg = errorMessage(err);
    return msg ? t('app.errorLine', { what: t(prefixKey), why: msg }) : t(prefixKey);
}

/** A modal confirmation; resolves true when confirmed. */
export function confirmDialog({ title, body, confirmLabel, danger = true }) {
    return new Promise((resolve) => {
        const dlg = h('dialog', { class: 'dialog confirm-dialog', 'aria-labelledby': 'confirm-title' });
        const ok = h('button', { type: 'button', class: danger ? 'btn btn-danger' : 'btn btn-primary', text: confirmLabel || t('app.confirm') });
        const cancel = h('button', { type: 'button', class: 'btn', text: t('app.cancel') });
        append(dlg, [
            h('h2', { id: 'confirm-title', class: 'dialog-title', text: title }),
            body ? h('p', { class: 'dialog-body', text: body }) : null,
            h('div', { class: 'dialog-actions' }, cancel, ok),
        ]);
        let result = false;
        ok.addEventListener('click', () => {
            result = true;
            dlg.close();
        });
        cancel.addEventListener('click', () => dlg.close());
        dlg.addEventListener('close', () => {
            dlg.remove();
            resolve(result);
        });
        document.body.append(dlg);
        dlg.showModal();
        cancel.focus();
    });
}

/** Call fn at most once per wait ms, after the last call. */
export function debounce(fn, wait) {
    let timer;
    return (...args) => {
        clearTimeout(timer);
        timer = setTimeout(() => fn(...args), wait);
    };
}
