// editor.js: the knowledge editor dialog (REFERENCE.md section 6): category,
// folder (experiences), file name (".md" added), title with an n/200 counter
// (the server's title_max; over it the server's refusal says why), tags, and for rules a
// description with an n/100 counter and the alwaysApply switch; the body with
// a character counter that warns at 90% and disables Save over the limit; a
// live preview. Changing the folder, name or category renames the document
// (one atomic rename on the server: same id, history kept). Rules are
// read-only for non-admins, everything for readers, and the dialog says why.
import { knowledge } from './api.js';
import { charLength, debounce, errorText, h, toast } from './dom.js';
import { buildDocument, editableBody, hasKey, parseTags, splitDocument } from './fm.js';
import { t } from './i18n.js';
import { renderMarkdown } from './md.js';
import { CATEGORIES, experienceFolders, findItem, notifyChanged, state } from './store.js';
import { canWrite, whyReadOnly } from './who.js';

const CATEGORY_LABEL = { rules: 'knowledge.rules', experiences: 'knowledge.experiences' };
let afterSave = () => {};
let serverPreview = null; // null: not tried yet; false: not available

/** Called with (category, path) after a save, so the app can show it. */
export function onEditorSaved(fn) {
    afterSave = fn;
}

const splitPath = (path) => {
    const i = path.lastIndexOf('/');
    return i < 0 ? ['', path] : [path.slice(0, i), path.slice(i + 1)];
};

function field(labelKey, control, extra = null, cls = '') {
    return h('label', { class: ['field', cls] }, h('span', { class: 'field-label', text: t(labelKey) }), control, extra);
}

/** Open the editor: {category} for a new document, {category, path} to edit. */
export async function openEditor({ category, path = null }) {
    let doc = null;
    if (path) {
        try {
            doc = await knowledge.read(category, path);
        } catch (e) {
            toast(errorText('knowledge.failedToLoad', e), 'error');
            return;
        }
    }
    buildDialog(category, doc);
}

function buildDialog(category, doc) {
    const isNew = !doc;
    const front = doc ? splitDocument(doc.content).front : null;
    const [folder0, file0] = doc ? splitPath(doc.path) : ['', ''];
    const f = doc ? doc.fields || {} : {};

    const dlg = h('dialog', { class: 'dialog editor-dialog', 'aria-labelledby': 'editor-title' });
    const catSel = h(
        'select',
        { class: 'ed-category', value: category },
        CATEGORIES.map((c) => h('option', { value: c, text: t(CATEGORY_LABEL[c]) })),
    );
    // a category this role may not write cannot be chosen (it stays shown when it is the document's own)
    for (const opt of catSel.options) opt.disabled = !canWrite(opt.value) && opt.value !== category;
    const folderIn = h('input', {
        class: 'ed-folder',
        type: 'text',
        list: 'ed-folders',
        placeholder: t('knowledge.subDirectoryPlaceholder'),
        value: folder0,
        autocomplete: 'off',
    });
    const folderList = h('datalist', { id: 'ed-folders' }, experienceFolders().map((x) => h('option', { value: x })));
    const fileIn = h('input', {
        class: 'ed-file',
        type: 'text',
        placeholder: t('knowledge.fileNamePlaceholder'),
        value: file0,
        autocomplete: 'off',
        required: true,
    });
    const titleIn = h('input', {
        class: 'ed-title',
        type: 'text',
        placeholder: t('editor.titlePlaceholder'),
        value: doc && hasKey(front, 'title') ? f.title || '' : '',
        autocomplete: 'off',
    });
    const tagsIn = h('input', {
        class: 'ed-tags',
        type: 'text',
        placeholder: t('knowledge.tagsPlaceholder'),
        value: (f.tags || []).join(', '),
        autocomplete: 'off',
    });
    const descIn = h('input', {
        class: 'ed-description',
        type: 'text',
        placeholder: t('knowledge.descriptionPlaceholder', { max: state.limits.rule_description_max }),
        value: f.description || '',
        autocomplete: 'off',
    });
    const descCount = h('span', { class: 'counter desc-counter', 'aria-live': 'polite' });
    const titleCount = h('span', { class: 'counter title-counter', 'aria-live': 'polite' });
    const alwaysIn = h('input', { class: 'ed-always', type: 'checkbox', role: 'switch', checked: doc ? f.alwaysApply !== false : true });
    const bodyIn = h('textarea', {
        class: 'ed-body',
        rows: 14,
        spellcheck: 'false',
        'aria-label': t('knowledge.markdownEditor'),
        value: doc ? editableBody(doc.content) : '',
    });
    const bodyCount = h('span', { class: 'counter body-counter', 'aria-live': 'polite' });
    const preview = h('div', { class: 'markdown preview', 'aria-live': 'off' });
    const notice = h('p', { class: 'notice readonly-notice', role: 'note', hidden: true });
    const err = h('p', { class: 'form-error', role: 'alert', hidden: true });
    const renameNote = h('p', { class: 'muted rename-note', hidden: true, text: t('editor.renameNote') });
    const cancel = h('button', { type: 'button', class: 'btn', text: t('app.cancel') });
    const save = h('button', { type: 'submit', class: 'btn btn-primary ed-save', text: t('knowledge.save') });

    const folderField = field('knowledge.subDirectory', folderIn, folderList, 'f-folder');
    const descField = field('knowledge.description', descIn, descCount, 'f-description');
    const alwaysField = h(
        'label',
        { class: 'field switch f-always' },
        alwaysIn,
        h('span', { class: 'switch-text' }, h('span', { class: 'field-label', text: t('knowledge.alwaysApply') }), h('span', { class: 'hint', text: t('knowledge.alwaysApplyHint') })),
    );

    const form = h(
        'form',
        { class: 'editor-form', method: 'dialog', novalidate: true },
        h('h2', { id: 'editor-title', class: 'dialog-title', text: t(isNew ? 'knowledge.createTitle' : 'knowledge.editTitle') }),
        notice,
        h(
            'div',
            { class: 'editor-grid' },
            field('knowledge.category', catSel, null, 'f-category'),
            folderField,
            field('knowledge.fileName', h('span', { class: 'with-suffix' }, fileIn, h('span', { class: 'suffix', text: '.md' })), null, 'f-file'),
            field('editor.title', titleIn, titleCount, 'f-title'),
            field('knowledge.tags', tagsIn, null, 'f-tags'),
            descField,
            alwaysField,
        ),
        renameNote,
        h(
            'div',
            { class: 'editor-panes' },
            h('div', { class: 'pane' }, h('div', { class: 'pane-head' }, h('span', { class: 'field-label', text: t('knowledge.content') }), bodyCount), bodyIn),
            h('div', { class: 'pane' }, h('div', { class: 'pane-head' }, h('span', { class: 'field-label', text: t('editor.preview') })), preview),
        ),
        err,
        h('div', { class: 'dialog-actions' }, cancel, save),
    );
    dlg.append(form);

    const original = doc ? { category: doc.category, path: doc.path } : null;
    const targetPath = () => {
        let name = fileIn.value.trim();
        if (name && !name.endsWith('.md')) name += '.md';
        const folder = catSel.value === 'experiences' ? folderIn.value.trim().replace(/^\/+|\/+$/g, '') : '';
        return name ? (folder ? `${folder}/${name}` : name) : '';
    };
    const readOnlyWhy = () => {
        const cats = [catSel.value];
        if (original) cats.push(original.category);
        for (const c of cats) if (!canWrite(c)) return whyReadOnly(c);
        return null;
    };

    let saving = false;
    const update = () => {
        const cat = catSel.value;
        const isRule = cat === 'rules';
        folderField.hidden = isRule;
        descField.hidden = !isRule;
        alwaysField.hidden = !isRule;
        const why = readOnlyWhy();
        notice.hidden = !why;
        notice.textContent = why ? t(why) : '';
        // (for an existing document, choosing the other category is a rename)
        for (const c of [catSel, folderIn, fileIn, titleIn, tagsIn, descIn, alwaysIn, bodyIn]) c.disabled = !!why || saving;
        save.hidden = !!why;

        const max = state.limits[cat] || 2000;
        const n = charLength(bodyIn.value.trim());
        const over = n > max;
        bodyCount.textContent = over ? t('knowledge.charCountExceeded', { current: n, max }) : t('knowledge.charCount', { current: n, max });
        bodyCount.classList.toggle('warn', !over && n >= 0.9 * max);
        bodyCount.classList.toggle('over', over);

        const dmax = state.limits.rule_description_max || 100;
        const dn = charLength(descIn.value);
        const dover = isRule && dn > dmax;
        descCount.textContent = dover ? t('knowledge.charCountExceeded', { current: dn, max: dmax }) : t('knowledge.charCount', { current: dn, max: dmax });
        descCount.classList.toggle('warn', !dover && dn >= 0.9 * dmax);
        descCount.classList.toggle('over', dover);

        const tmax = state.limits.title_max || 200;
        const tn = charLength(titleIn.value.trim());
        // shown, not enforced here: the server's refusal says which field and by how much
        const tover = tn > tmax;
        titleCount.textContent = tover ? t('knowledge.charCountExceeded', { current: tn, max: tmax }) : t('knowledge.charCount', { current: tn, max: tmax });
        titleCount.classList.toggle('warn', !tover && tn >= 0.9 * tmax);
        titleCount.classList.toggle('over', tover);

        const p = targetPath();
        renameNote.hidden = isNew || !p || (p === original.path && cat === original.category);
        save.disabled = saving || over || dover || !fileIn.value.trim();
        save.title = over || dover ? t('editor.overLimit') : !fileIn.value.trim() ? t('editor.fileNameRequired') : '';
    };

    const renderPreview = debounce(async () => {
        const text = bodyIn.value;
        if (serverPreview !== false && text.trim()) {
            try {
                const d = await knowledge.preview(catSel.value, text);
                if (d && typeof d.html === 'string') {
                    serverPreview = true;
                    preview.innerHTML = d.html; // the server's safe rendering (cmark safe mode)
                    return;
                }
            } catch {
                /* the API has no preview endpoint: render here */
            }
            serverPreview = false;
        }
        preview.replaceChildren(text.trim() ? renderMarkdown(text) : h('p', { class: 'muted', text: t('editor.previewEmpty') }));
    }, 150);

    for (const el of [catSel, folderIn, fileIn, titleIn, tagsIn, descIn, alwaysIn, bodyIn]) el.addEventListener('input', update);
    catSel.addEventListener('change', update);
    bodyIn.addEventListener('input', renderPreview);
    cancel.addEventListener('click', () => dlg.close());
    dlg.addEventListener('close', () => dlg.remove());

    form.addEventListener('submit', async (e) => {
        e.preventDefault();
        if (save.disabled || save.hidden) return;
        const cat = catSel.value;
        const path = targetPath();
        const content = buildDocument(
            {
                category: cat,
                title: titleIn.value,
                tags: parseTags(tagsIn.value),
                description: descIn.value,
                alwaysApply: alwaysIn.checked,
                body: bodyIn.value,
            },
            doc ? doc.content : null,
        );
        const moved = original && (original.category !== cat || original.path !== path);
        if ((isNew || moved) && findItem(cat, path)) {
            err.hidden = false;
            err.textContent = t('editor.exists', { path });
            return;
        }
        saving = true;
        save.textContent = t('knowledge.saving');
        err.hidden = true;
        update();
        try {
            if (isNew) {
                await knowledge.write(cat, path, content);
            } else {
                const w = await knowledge.write(original.category, original.path, content, { expected_version: doc.version });
                if (moved) await knowledge.rename(original.category, original.path, path, { new_category: cat, expected_version: w.version });
            }
            toast(t('knowledge.saved'), 'success');
            dlg.close();
            if (moved && original.category !== cat) notifyChanged(original.category);
            notifyChanged(cat);
            afterSave(cat, path);
        } catch (ex) {
            err.hidden = false;
            err.textContent = errorText('knowledge.failedToSave', ex);
            toast(errorText('knowledge.failedToSave', ex), 'error');
        } finally {
            saving = false;
            save.textContent = t('knowledge.save');
            if (dlg.open) update();
        }
    });

    document.body.append(dlg);
    update();
    renderPreview();
    dlg.showModal();
    (readOnlyWhy() ? cancel : isNew ? fileIn : bodyIn).focus();
}
