// store.js: the knowledge lists and limits, shared by the panel, the editor
// and the sessions view (the reference's useKnowledgeStore). It listens for
// the window event "knowledge-changed": with detail.category it reloads that
// list, without it everything.
import { knowledge } from './api.js';
import { errorText, toast } from './dom.js';

export const CATEGORIES = ['rules', 'experiences'];

export const state = {
    limits: { rule_description_max: 100, rules: 350, experiences: 2000, title_max: 200 },
    items: { rules: [], experiences: [] },
    loaded: { rules: false, experiences: false },
};

const listeners = new Set();

export function subscribe(fn) {
    listeners.add(fn);
    return () => listeners.delete(fn);
}

function emit(category) {
    for (const fn of listeners) fn(category);
}

export async function fetchLimits() {
    try {
        const d = await knowledge.limits();
        if (d && d.limits) Object.assign(state.limits, d.limits);
    } catch {
        /* keep the defaults 100/350/2000 */
    }
}

export async function fetchList(category) {
    try {
        const d = await knowledge.list(category);
        state.items[category] = d.items || [];
        state.loaded[category] = true;
    } catch (e) {
        if (e.status !== 401) toast(errorText('knowledge.failedToLoad', e), 'error');
    }
    emit(category);
}

export async function fetchAll() {
    await Promise.all([fetchLimits(), ...CATEGORIES.map(fetchList)]);
}

/** Tell every listener (this store included) that knowledge changed. */
export function notifyChanged(category) {
    window.dispatchEvent(new CustomEvent('knowledge-changed', { detail: category ? { category } : null }));
}

window.addEventListener('knowledge-changed', (e) => {
    const category = e.detail && e.detail.category;
    if (CATEGORIES.includes(category)) fetchList(category);
    else fetchAll();
});

/** The folders used by experiences, sorted. */
export function experienceFolders() {
    const set = new Set();
    for (const it of state.items.experiences) {
        const i = it.path.indexOf('/');
        if (i > 0) set.add(it.path.slice(0, i));
    }
    return [...set].sort((a, b) => a.localeCompare(b));
}

export function findItem(category, path) {
    return (state.items[category] || []).find((it) => it.path === path) || null;
}
