// home.js: the home screen, what the knowledge view shows when no document
// is open (docs/web.md, "Home"): how much the space holds, how busy its
// agents were this week, what changed last, what agents were given most and
// what hurt most (GET /api/overview); in an empty space, how an agent
// connects (the MCP address, and for an admin the way to a token).
import { overview as api } from './api.js';
import { clear, errorText, h } from './dom.js';
import { fmtDateTime, fmtNumber, t } from './i18n.js';
import { categoryLabel } from './labels.js';
import { mcpAddLine, mcpUrl } from './tokens.js';
import { who } from './who.js';

let seq = 0;

/** Draw the home screen into root; open(category, path) opens a document. */
export async function renderHome(root, open) {
    const my = ++seq;
    clear(root).append(h('div', { class: 'home home-loading' }, h('p', { class: 'muted', text: t('app.loading') })));
    let d;
    try {
        d = await api.get();
    } catch (e) {
        if (my !== seq) return;
        clear(root).append(h('div', { class: 'home' }, h('p', { class: 'form-error', role: 'alert', text: errorText('home.failedToLoad', e) })));
        return;
    }
    if (my !== seq) return; // a document was opened meanwhile, or a newer home
    const c = d.counts;
    const empty = c.rules + c.experiences === 0;
    clear(root).append(
        h(
            'div',
            { class: 'home' },
            h('header', { class: 'view-head' }, h('h2', { text: t('home.title', { space: who.space }) })),
            h(
                'div',
                { class: 'home-counts' },
                count('rules', c.rules, t('home.rules')),
                count('experiences', c.experiences, t('home.experiences')),
                count('traces-week', c.traces_week, t('home.tracesWeek'), t('home.tracesTotal', { count: fmtNumber(c.traces) })),
            ),
            empty ? gettingStarted() : null,
            empty
                ? null
                : h(
                      'div',
                      { class: 'home-lists' },
                      list('recent', t('home.recent'), d.recent, (x) => fmtDateTime(x.updated_at), open, t('home.recentNone')),
                      list('injected', t('home.mostInjected'), d.most_injected, (x) => t('home.injections', { count: fmtNumber(x.injections) }), open, t('home.injectedNone')),
                      list('harmful', t('home.mostHarmful'), d.most_harmful, (x) => t('home.harmfulCount', { count: fmtNumber(x.harmful) }), open, t('home.harmfulNone')),
                  ),
            empty ? null : h('p', { class: 'muted small', text: t('details.selectHint') }),
        ),
    );
}

/** Forget a home screen still loading (a document is being opened). */
export function leaveHome() {
    seq++;
}

function count(kind, n, label, note) {
    return h('div', { class: `card home-count home-count-${kind}` }, h('span', { class: 'home-count-n', text: fmtNumber(n) }), h('span', { class: 'home-count-label', text: label }), note ? h('span', { class: 'muted small', text: note }) : null);
}

function list(kind, title, items, meta, open, none) {
    return h(
        'section',
        { class: `card home-list home-${kind}` },
        h('h3', { text: title }),
        items.length
            ? h(
                  'ol',
                  {},
                  ...items.map((x) =>
                      h(
                          'li',
                          {},
                          h('button', { type: 'button', class: 'link home-open', 'data-id': x.id, text: x.title, onclick: () => open(x.category, x.path) }),
                          h('span', { class: `chip chip-${x.category}`, text: categoryLabel(x.category) }),
                          h('span', { class: 'muted small home-meta', text: meta(x) }),
                      ),
                  ),
              )
            : h('p', { class: 'muted small', text: none }),
    );
}

function gettingStarted() {
    return h(
        'section',
        { class: 'card home-start' },
        h('h3', { text: t('home.startTitle') }),
        h('p', { text: t('home.startIntro') }),
        h('p', {}, h('span', { class: 'field-label', text: t('home.mcpUrl') }), ' ', h('code', { class: 'home-mcp-url', text: mcpUrl() })),
        h('code', { class: 'token-connect', text: mcpAddLine('<token>') }),
        who.role === 'admin'
            ? h('p', {}, h('a', { class: 'btn btn-primary home-token', href: '#tokens', text: t('home.createToken') }))
            : h('p', { class: 'muted small', text: t('home.askAdmin') }),
        h('p', { class: 'muted small', text: t('home.startAdd') }),
    );
}
