// links.js: an entry's typed links in its details (docs/conflicts.md):
// each link with its type as seen from this entry, the other entry (opened
// on a click while it is active) and the reason, a remove button, and a form
// that adds one to another document of the space. Text from the server is
// only ever set as text.
import { knowledge } from './api.js';
import { errorText, h, toast } from './dom.js';
import { t } from './i18n.js';
import { detectorReason } from './labels.js';
import { CATEGORIES, state } from './store.js';
import { canWrite } from './who.js';

/** The words of a link's type as seen from the entry: out (it is `from`) or in. */
const TYPE_KEYS = {
    supersedes: { out: 'details.linkSupersedes', in: 'details.linkSupersededBy' },
    contradicts: { out: 'details.linkContradicts', in: 'details.linkContradicts' },
    refines: { out: 'details.linkRefines', in: 'details.linkRefinedBy' },
    related: { out: 'details.linkRelated', in: 'details.linkRelated' },
};
const TYPES = Object.keys(TYPE_KEYS);

function linkItem(doc, l, open, changed) {
    const other = l.other || {};
    const active = other.status === 'active';
    const name = other.title || other.path || other.id;
    return h(
        'li',
        { class: 'link-item', dataset: { type: l.type, direction: l.direction, other: other.id } },
        h('span', { class: 'link-type', text: t(TYPE_KEYS[l.type][l.direction === 'in' ? 'in' : 'out']) }),
        active
            ? h('button', { type: 'button', class: 'link-other', text: name, onclick: () => open(other.category, other.path) })
            : h('span', { class: 'link-other retired', text: name }),
        active ? null : h('span', { class: 'link-retired muted', text: t('details.linkRetired') }),
        l.reason ? h('span', { class: 'link-reason muted', text: l.actor === 'conflict-check' ? detectorReason(l.reason) : l.reason }) : null,
        canWrite(doc.category) && canWrite(other.category)
            ? h('button', {
                  type: 'button',
                  class: 'btn btn-small link-remove',
                  text: t('details.linkRemove'),
                  onclick: async (e) => {
                      e.target.disabled = true;
                      try {
                          await knowledge.unlink(l.from, l.to, l.type);
                          toast(t('details.linkRemoved'), 'success');
                          changed([doc.category, other.category]);
                      } catch (ex) {
                          e.target.disabled = false;
                          toast(errorText('details.linkFailed', ex), 'error');
                      }
                  },
              })
            : null,
    );
}

function addForm(doc, changed) {
    const targets = CATEGORIES.flatMap((c) => (state.items[c] || []).filter((it) => it.id && it.id !== doc.id).map((it) => ({ ...it, category: c })));
    if (!targets.length) return null;
    const type = h('select', { class: 'link-type-select', 'aria-label': t('details.linkType') }, TYPES.map((x) => h('option', { value: x, text: t(TYPE_KEYS[x].out) })));
    const target = h(
        'select',
        { class: 'link-target', 'aria-label': t('details.linkTarget') },
        targets.map((it) => h('option', { value: it.id, text: `${it.title || it.path} (${it.path})` })),
    );
    const reason = h('input', { type: 'text', class: 'link-reason-input', maxlength: '2000', placeholder: t('details.linkReason'), 'aria-label': t('details.linkReason') });
    const add = h('button', { type: 'submit', class: 'btn btn-primary link-add', text: t('details.linkAdd') });
    return h(
        'form',
        {
            class: 'link-form',
            onsubmit: async (e) => {
                e.preventDefault();
                add.disabled = true;
                try {
                    await knowledge.link(doc.id, { to: target.value, type: type.value, reason: reason.value });
                    toast(t('details.linkAdded'), 'success');
                    const other = targets.find((it) => it.id === target.value);
                    changed([doc.category, other && other.category]);
                } catch (ex) {
                    toast(errorText('details.linkFailed', ex), 'error');
                } finally {
                    add.disabled = false;
                }
            },
        },
        type,
        target,
        reason,
        add,
    );
}

/** The links card's body for doc: its links (items of GET .../links), and
 * the add form for a caller who may change it; open(category, path) shows
 * another document, changed(categories) reloads after a change. */
export function linksView(doc, items, open, changed) {
    return h(
        'div',
        { class: 'links-body' },
        items.length ? h('ul', { class: 'link-list' }, items.map((l) => linkItem(doc, l, open, changed))) : h('p', { class: 'muted', text: t('details.noLinks') }),
        canWrite(doc.category) ? addForm(doc, changed) : null,
    );
}
