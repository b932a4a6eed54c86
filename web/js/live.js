// live.js: the panel's live view of its space (GET /api/events, Server-Sent
// Events, docs/web.md "Live updates"): a change made elsewhere (another
// browser, an agent, the CLI, another node) reloads the list it touches and
// the document on screen, without reloading the page. Changes that arrive
// together are told once (DEBOUNCE_MS); the browser reconnects by itself
// after a dropped stream, and a "resync" (the server may have missed
// changes) reloads everything.
const DEBOUNCE_MS = 250;
const CATEGORIES = ['rules', 'experiences'];

let source = null;
let pending = null; // the categories changed since the last notice; 'all' for everything
let timer = 0;

function flush() {
    timer = 0;
    const which = pending;
    pending = null;
    const category = which instanceof Set && which.size === 1 ? [...which][0] : null;
    window.dispatchEvent(new CustomEvent('knowledge-changed', { detail: category ? { category, remote: true } : null }));
}

function onChanged(e) {
    let d = {};
    try {
        d = JSON.parse(e.data);
    } catch {
        /* an event we cannot read: reload everything */
    }
    if (CATEGORIES.includes(d.category) && pending !== 'all') {
        pending = pending || new Set();
        pending.add(d.category);
    } else {
        pending = 'all';
    }
    if (!timer) timer = setTimeout(flush, DEBOUNCE_MS);
}

/** A proposal made or decided (sent to editors and admins only): the review view and its badge. */
function onReview(e) {
    let d = {};
    try {
        d = JSON.parse(e.data);
    } catch {
        /* the badge is read again all the same */
    }
    window.dispatchEvent(new CustomEvent('review-changed', { detail: { remote: true, action: d.action } }));
}

/** Open the stream once (after login); a second call does nothing. */
export function startLive() {
    if (source || typeof EventSource === 'undefined') return;
    source = new EventSource('/api/events');
    source.addEventListener('changed', onChanged);
    source.addEventListener('review', onReview);
}
