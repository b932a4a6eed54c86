// i18n.js: the UI language. Strings come from /i18n/<lang>/common.json
// (i18next-style keys "ns.key" and {{name}} placeholders). The language is
// chosen by ?lang= in the address, else the one remembered, else the
// browser's; dates and numbers are formatted for it with Intl.

export const LANGS = ['en', 'zh'];
const STORE_KEY = 'knowhub.lang';
const LOCALE = { en: 'en', zh: 'zh-CN' };

let lang = 'en';
let dict = {};
const cache = new Map();

function fromUrl() {
    const q = new URLSearchParams(location.search).get('lang');
    return q && LANGS.includes(q) ? q : null;
}

function remembered() {
    try {
        const v = localStorage.getItem(STORE_KEY);
        return LANGS.includes(v) ? v : null;
    } catch {
        return null;
    }
}

function fromBrowser() {
    for (const l of navigator.languages || [navigator.language || '']) {
        const base = String(l).toLowerCase().split('-')[0];
        if (LANGS.includes(base)) return base;
    }
    return 'en';
}

async function load(l) {
    if (!cache.has(l)) {
        const res = await fetch(`/i18n/${l}/common.json`, { credentials: 'same-origin' });
        if (!res.ok) throw new Error(`i18n/${l}: HTTP ${res.status}`);
        cache.set(l, await res.json());
    }
    return cache.get(l);
}

/** Pick and load the language; call once before rendering. */
export async function initI18n() {
    const chosen = fromUrl() || remembered() || fromBrowser();
    await setLang(chosen, { remember: !!fromUrl(), silent: true });
}

export function currentLang() {
    return lang;
}

export function locale() {
    return LOCALE[lang];
}

/** Switch language: load, remember, translate the static page, tell the views. */
export async function setLang(l, { remember = true, silent = false } = {}) {
    if (!LANGS.includes(l)) l = 'en';
    dict = await load(l);
    lang = l;
    if (remember) {
        try {
            localStorage.setItem(STORE_KEY, l);
        } catch {
            /* private mode: not remembered */
        }
        const url = new URL(location.href);
        if (url.searchParams.has('lang')) {
            url.searchParams.set('lang', l);
            history.replaceState(history.state, '', url.pathname + url.search + url.hash);
        }
    }
    document.documentElement.lang = LOCALE[l];
    applyI18n(document);
    if (!silent) window.dispatchEvent(new CustomEvent('lang-changed', { detail: { lang: l } }));
}

function lookup(key) {
    let v = dict;
    for (const part of key.split('.')) {
        if (v === null || typeof v !== 'object' || !(part in v)) return undefined;
        v = v[part];
    }
    return typeof v === 'string' ? v : undefined;
}

/** Whether the language has a text for key. */
export function hasKey(key) {
    return lookup(key) !== undefined;
}

/** The text of a key with {{name}} replaced; numbers are formatted for the language. */
export function t(key, vars = {}) {
    const s = lookup(key);
    if (s === undefined) return key;
    return s.replace(/\{\{\s*(\w+)\s*\}\}/g, (m, name) => {
        if (!(name in vars)) return m;
        const v = vars[name];
        return typeof v === 'number' ? fmtNumber(v) : String(v);
    });
}

/** Translate the static markup: data-i18n (text) and data-i18n-<attr> (attributes). */
export function applyI18n(root) {
    for (const el of root.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
    for (const attr of ['placeholder', 'title', 'aria-label']) {
        const data = `i18n${attr.replace(/(^|-)(\w)/g, (m, d, c) => c.toUpperCase())}`;
        for (const el of root.querySelectorAll(`[data-i18n-${attr}]`)) el.setAttribute(attr, t(el.dataset[data]));
    }
}

export function fmtNumber(n, opts = {}) {
    return new Intl.NumberFormat(LOCALE[lang], opts).format(n);
}

/** A server time ("2026-12-02 15:37:43", ISO without zone: both UTC) as a Date. */
export function parseTime(s) {
    if (!s) return null;
    if (s instanceof Date) return s;
    const text = String(s).trim();
    if (/^\d{4}-\d{2}-\d{2}$/.test(text)) return new Date(`${text}T00:00:00Z`);
    const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2})?)(\.\d+)?(Z|[+-]\d{2}:?\d{2})?$/.exec(text);
    if (!m) return null;
    const frac = m[3] ? m[3].slice(0, 4) : '';
    return new Date(`${m[1]}T${m[2]}${frac}${m[4] || 'Z'}`);
}

/** A date (no time) for the language; plain dates stay in UTC. */
export function fmtDate(s) {
    const d = parseTime(s);
    if (!d || isNaN(d)) return s ? String(s) : '';
    return new Intl.DateTimeFormat(LOCALE[lang], { dateStyle: 'medium', timeZone: 'UTC' }).format(d);
}

/** A date and time in the browser's time zone, for the language. */
export function fmtDateTime(s) {
    const d = parseTime(s);
    if (!d || isNaN(d)) return s ? String(s) : '';
    return new Intl.DateTimeFormat(LOCALE[lang], { dateStyle: 'medium', timeStyle: 'short' }).format(d);
}
