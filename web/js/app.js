// app.js: start-up, login and the views. The knowledge panel is always on
// the left (as in the reference's sidebar); the main area shows a document's
// details, the analysis sessions, the traces dashboard, for editors and
// admins the review queue, or, for admins, the space's access tokens.
//
// Login: a token typed in the login screen, or a one-click link
// http://HOST:PORT/#token=<token> (./run.sh prints it). The fragment never
// reaches a server log; the page removes it from the address bar at once and
// exchanges the token for an HttpOnly session cookie (POST /api/auth/login).
// A link opened while already logged in with another token asks first: a
// link someone sent must not quietly swap the login (or the space) under the
// user. Declining keeps the current login.
import { ApiError, auth } from './api.js';
import { mountDetails, showDetails, showDetailsById } from './details.js';
import { $, $$, errorText, h, toast } from './dom.js';
import { icon } from './icons.js';
import { onEditorSaved } from './editor.js';
import { LANGS, currentLang, initI18n, setLang, t } from './i18n.js';
import { roleLabel } from './labels.js';
import { mountPanel, selectItem } from './panel.js';
import { mountSessions, setSessionsVisible } from './sessions.js';
import { fetchAll } from './store.js';
import { startLive } from './live.js';
import { mayReview, mountReview, refreshReview, refreshReviewBadge } from './review.js';
import { mountStale, refreshStale } from './stale.js';
import { mountTokens, refreshTokens } from './tokens.js';
import { mountTraces, refreshTraces } from './traces.js';
import { setWho, who } from './who.js';

const VIEWS = ['knowledge', 'sessions', 'traces', 'review', 'tokens', 'stale'];
/** The views a role may open: tokens are an admin's, the review queue an editor's or an admin's. */
const mayOpen = (v) => (v === 'tokens' ? who.role === 'admin' : v === 'review' ? mayReview() : true);
const LANG_KEYS = { en: 'app.langEn', zh: 'app.langZh' };
let view = 'knowledge';
let started = false;

/** Take #token=... out of the address bar (before anything else runs). */
function takeTokenFromHash() {
    const m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
    if (!m) return null;
    history.replaceState(null, '', location.pathname + location.search);
    try {
        return decodeURIComponent(m[1]);
    } catch {
        return null;
    }
}

/** The id part of a token "kh_<id>_<secret>" ('' when it is not one). */
function tokenIdOf(token) {
    const m = /^kh_([0-9a-f]{16})_/.exec(token);
    return m ? m[1] : '';
}

/** May the link's token replace the current login (me, or null)? Asks unless it is the same token. */
function mayReplaceLogin(me, token) {
    if (!me || tokenIdOf(token) === me.token_id) return true;
    return window.confirm(t('login.replaceConfirm', { space: me.space, role: roleLabel(me.role) }));
}

/** A #token= link pasted into the open panel: only the hash changed. */
async function onTokenInHash() {
    const token = takeTokenFromHash();
    if (!token || !mayReplaceLogin(who.role ? who : null, token)) return;
    try {
        await auth.login(token);
        location.reload();
    } catch (ex) {
        toast(ex instanceof ApiError && ex.status === 401 ? t('login.invalid') : errorText('login.failed', ex), 'error');
    }
}

function fillLangSelects() {
    for (const sel of $$('select.lang-select')) {
        sel.replaceChildren(...LANGS.map((l) => h('option', { value: l, text: t(LANG_KEYS[l]) })));
        sel.value = currentLang();
    }
}

function showLogin(message = '') {
    $('#app').hidden = true;
    $('#login-screen').hidden = false;
    const err = $('#login-error');
    err.textContent = message;
    err.hidden = !message;
    $('#login-token').focus();
}

async function enter(me) {
    setWho(me);
    $('#login-screen').hidden = true;
    $('#app').hidden = false;
    renderWho();
    if (!started) {
        started = true;
        mountPanel($('#panel'), (category, path) => openDocument(category, path));
        mountDetails($('#view-knowledge'), (category, path) => selectItem(category, path));
        mountSessions($('#view-sessions'));
        mountTraces($('#view-traces'), (id) => {
            showView('knowledge');
            showDetailsById(id);
        });
        mountTokens($('#view-tokens'));
        mountReview($('#view-review'), (id) => {
            showView('knowledge');
            showDetailsById(id);
        });
        mountStale($('#view-stale'), (id) => {
            showView('knowledge');
            showDetailsById(id);
        });
        onEditorSaved((category, path) => openDocument(category, path));
    }
    $('.tab[data-view="tokens"]').hidden = !mayOpen('tokens');
    $('.tab[data-view="review"]').hidden = !mayOpen('review');
    refreshReviewBadge();
    await fetchAll();
    startLive();
    showView(viewFromHash() || view);
}

function renderWho() {
    $('#whoami').textContent = t('app.signedInAs', { space: who.space, role: roleLabel(who.role) });
}

function openDocument(category, path) {
    showView('knowledge');
    showDetails(category, path);
}

function viewFromHash() {
    const v = location.hash.replace(/^#\/?/, '');
    return VIEWS.includes(v) && mayOpen(v) ? v : null;
}

function showView(v) {
    view = VIEWS.includes(v) && mayOpen(v) ? v : 'knowledge';
    for (const name of VIEWS) {
        $(`#view-${name}`).hidden = name !== view;
        const tab = $(`.tab[data-view="${name}"]`);
        tab.classList.toggle('active', name === view);
        tab.setAttribute('aria-selected', String(name === view));
    }
    const hash = view === 'knowledge' ? '' : `#${view}`;
    if (location.hash !== hash) history.replaceState(null, '', location.pathname + location.search + hash);
    setSessionsVisible(view === 'sessions');
    if (view === 'traces') refreshTraces();
    if (view === 'tokens') refreshTokens();
    if (view === 'review') refreshReview({ keepSelection: true });
    if (view === 'stale') refreshStale();
}

async function onLoginSubmit(e) {
    e.preventDefault();
    const input = $('#login-token');
    const token = input.value.trim();
    if (!token) return;
    const btn = $('#login-submit');
    btn.disabled = true;
    try {
        const me = await auth.login(token);
        input.value = '';
        await enter(me);
    } catch (ex) {
        showLogin(ex instanceof ApiError && ex.status === 401 ? t('login.invalid') : errorText('login.failed', ex));
    } finally {
        btn.disabled = false;
    }
}

async function logout() {
    try {
        await auth.logout();
    } catch {
        /* the cookie is gone either way */
    }
    setWho(null);
    location.replace(location.pathname + location.search);
}

const PANEL_KEY = 'knowhub.panel';

/** Show or hide the knowledge panel (the sessions canvas wants the room); remembered. */
function setPanelOpen(open, remember = true) {
    $('.layout').classList.toggle('panel-collapsed', !open);
    $('#toggle-panel').setAttribute('aria-expanded', String(open));
    if (!remember) return;
    try {
        localStorage.setItem(PANEL_KEY, open ? 'open' : 'closed');
    } catch {
        /* private mode: not remembered */
    }
}

function panelWasOpen() {
    try {
        return localStorage.getItem(PANEL_KEY) !== 'closed';
    } catch {
        return true;
    }
}

function wire() {
    const toggle = $('#toggle-panel');
    toggle.append(icon('sidebar'));
    toggle.addEventListener('click', () => setPanelOpen(toggle.getAttribute('aria-expanded') !== 'true'));
    setPanelOpen(panelWasOpen(), false);
    $('#login-form').addEventListener('submit', onLoginSubmit);
    $('#logout').addEventListener('click', logout);
    // The brand goes home: the knowledge view with no document open (home.js).
    const brand = $('.topbar .brand');
    const goHome = () => {
        showView('knowledge');
        showDetails(null, null);
    };
    brand.addEventListener('click', goHome);
    brand.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' || e.key === ' ') {
            e.preventDefault();
            goHome();
        }
    });
    for (const tab of $$('.tab')) tab.addEventListener('click', () => showView(tab.dataset.view));
    for (const sel of $$('select.lang-select')) sel.addEventListener('change', () => setLang(sel.value));
    window.addEventListener('lang-changed', () => {
        fillLangSelects();
        if (who.role) renderWho();
    });
    window.addEventListener('hashchange', () => {
        if (/(?:^#|&)token=/.test(location.hash)) {
            onTokenInHash();
            return;
        }
        const v = viewFromHash();
        if (v && v !== view) showView(v);
    });
    let warned = false;
    window.addEventListener('auth-lost', () => {
        if (!started || warned) return;
        warned = true;
        toast(t('app.sessionEnded'), 'error');
        setTimeout(() => location.reload(), 1500);
    });
}

async function boot() {
    const token = takeTokenFromHash();
    await initI18n();
    fillLangSelects();
    wire();
    if (token) {
        let current = null;
        try {
            current = await auth.me();
        } catch {
            current = null; /* not logged in (or the login is gone) */
        }
        if (!mayReplaceLogin(current, token)) {
            await enter(current);
            return;
        }
        try {
            await enter(await auth.login(token));
            return;
        } catch (ex) {
            showLogin(ex instanceof ApiError && ex.status === 401 ? t('login.invalid') : errorText('login.failed', ex));
            return;
        }
    }
    try {
        await enter(await auth.me());
    } catch (ex) {
        showLogin(ex instanceof ApiError && ex.status === 401 ? '' : errorText('login.failed', ex));
    }
}

boot().catch((e) => {
    document.body.prepend(h('p', { class: 'form-error', text: String(e && e.message ? e.message : e) }));
});

