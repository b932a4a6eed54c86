// labels.js: i18n keys for the words the API sends as codes (statuses,
// triggers, revision reasons, roles). Every key is written out literally so
// the i18n test can check it exists in both languages.
import { h } from './dom.js';
import { t } from './i18n.js';

export const STATUS_KEYS = {
    helpful: 'status.helpful',
    harmful: 'status.harmful',
    neutral: 'status.neutral',
    unused: 'status.unused',
    irrelevant: 'status.irrelevant',
    pending: 'status.pending',
};
export const STATUS_ORDER = ['helpful', 'harmful', 'neutral', 'unused', 'irrelevant', 'pending'];

const TRIGGER_KEYS = {
    goal_completion: 'trigger.goal_completion',
    compression: 'trigger.compression',
    task_completion: 'trigger.task_completion',
};

const REASON_KEYS = {
    create: 'reason.create',
    write: 'reason.write',
    rename: 'reason.rename',
    score: 'reason.score',
    delete: 'reason.delete',
    revert: 'reason.revert',
    import: 'reason.import',
    supersede: 'reason.supersede',
};

const ROLE_KEYS = { reader: 'role.reader', agent: 'role.agent', editor: 'role.editor', admin: 'role.admin' };

const CATEGORY_KEYS = { rules: 'knowledge.rules', experiences: 'knowledge.experiences' };

const CHART_KEYS = {
    line: 'chart.line',
    bar: 'chart.bar',
    point: 'chart.point',
    circle: 'chart.point',
    scatter: 'chart.point',
    area: 'chart.area',
    arc: 'chart.pie',
    pie: 'chart.pie',
    rect: 'chart.heatmap',
    heatmap: 'chart.heatmap',
    boxplot: 'chart.boxplot',
    table: 'chart.table',
};

const ATTEMPT_KEYS = { success: 'sessions.attemptOk', ok: 'sessions.attemptOk', error: 'sessions.attemptFailed', failed: 'sessions.attemptFailed', failure: 'sessions.attemptFailed' };

const label = (map, code) => (code && map[code] ? t(map[code]) : String(code ?? ''));

export const statusLabel = (s) => label(STATUS_KEYS, s || 'pending');
export const triggerLabel = (s) => label(TRIGGER_KEYS, s);
export const reasonLabel = (s) => label(REASON_KEYS, s);
export const roleLabel = (s) => label(ROLE_KEYS, s);
export const categoryLabel = (s) => label(CATEGORY_KEYS, s);
/** A chart's mark or type ("line", "Bar Chart") in words. */
export const chartLabel = (s) => {
    const k = String(s || '').toLowerCase().replace(/\s*chart$/, '').trim();
    return CHART_KEYS[k] ? t(CHART_KEYS[k]) : String(s || '');
};
export const attemptLabel = (s) => label(ATTEMPT_KEYS, String(s || '').toLowerCase());

/** A coloured chip for a verdict (null/absent: pending). */
export function statusChip(status) {
    const s = status || 'pending';
    return h('span', { class: `status status-${STATUS_KEYS[s] ? s : 'other'}`, text: statusLabel(s) });
}

// The local conflict detector's reasons (fcgi/domain/conflict.c): one fixed
// English grammar around quoted evidence, shown in the panel's language with
// the quotes as written. Any other text (an LLM's, a person's) is shown as it is.
const Q = '(".*?")';
const DETECTOR_REASONS = [
    [new RegExp(`^opposite polarity on ${Q}: ${Q} vs (".*")$`), 'detector.polarity', ['target', 'a', 'b']],
    [new RegExp(`^opposite order on ${Q}: ${Q} vs (".*")$`), 'detector.order', ['target', 'a', 'b']],
    [new RegExp(`^opposite actions on ${Q}: ${Q} vs (".*")$`), 'detector.actions', ['target', 'a', 'b']],
    [new RegExp(`^different numbers for ${Q}: ${Q} vs (".*")$`), 'detector.numbers', ['key', 'a', 'b']],
    [new RegExp(`^different choices for ${Q}: ${Q} vs (".*")$`), 'detector.choices', ['cue', 'a', 'b']],
    [new RegExp(`^opposite words ${Q} vs (".*") in otherwise close entries$`), 'detector.antonyms', ['a', 'b']],
    [/^the first entry holds (\d+) of the other's (\d+) words and adds (\d+), no contradiction signal$/, 'detector.refinesFirst', ['shared', 'of', 'added']],
    [/^the second entry holds (\d+) of the other's (\d+) words and adds (\d+), no contradiction signal$/, 'detector.refinesSecond', ['shared', 'of', 'added']],
    [/^near-identical words \((\d+) of (\d+) shared\), no contradiction signal$/, 'detector.duplicate', ['shared', 'of']],
    [/^low overlap \((\d+) of (\d+) words shared\)$/, 'detector.unrelated', ['shared', 'of']],
];

/** A conflict reason in the panel's language when the local detector wrote it. */
export function detectorReason(text) {
    for (const [re, key, names] of DETECTOR_REASONS) {
        const m = re.exec(text || '');
        if (!m) continue;
        const vars = {};
        names.forEach((name, i) => (vars[name] = /^\d+$/.test(m[i + 1]) ? Number(m[i + 1]) : m[i + 1]));
        return t(key, vars);
    }
    return text || '';
}
