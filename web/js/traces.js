// traces.js: the feedback loop made visible (seed 000, docs/feedback.md):
// the verdicts over all listed traces as a bar chart, every trace with its
// counts, the knowledge log of the selected trace with statuses, and for a
// logged entry its helpful / harmful cases over time. Slim jobs appear only
// when the API has them (GET /api/jobs answers).
import { jobs as jobsApi, knowledge, traces as api } from './api.js';
import { barChart, cumulativeChart, stackedBar } from './charts.js';
import { clear, errorText, h, toast } from './dom.js';
import { fmtDateTime, fmtNumber, parseTime, t } from './i18n.js';
import { STATUS_ORDER, statusChip, statusLabel, triggerLabel } from './labels.js';

let root = null;
let openDoc = () => {};
let items = [];
let total = 0;
let openTrace = null;
let log = null;
let entryChart = null; // {id, title, entry}
let jobList = null; // null: no jobs API

export function mountTraces(el, openById) {
    root = el;
    openDoc = openById;
    window.addEventListener('lang-changed', () => render());
}

export async function refreshTraces() {
    try {
        const d = await api.list(100, 0);
        items = d.items || [];
        total = d.total || items.length;
        if (openTrace && !items.some((x) => x.trace_id === openTrace)) openTrace = null;
        if (!openTrace && items.length) openTrace = items[0].trace_id;
        if (openTrace) log = await api.log(openTrace).catch(() => null);
    } catch (e) {
        if (e.status !== 401) toast(errorText('traces.failedToLoad', e), 'error');
    }
    try {
        const j = await jobsApi.list();
        jobList = Array.isArray(j) ? j : j && Array.isArray(j.items) ? j.items : null;
    } catch {
        jobList = null; // not in this server yet
    }
    render();
}

const sum = (f) => items.reduce((s, x) => s + f(x), 0);

function countsOf(x) {
    const c = x.counts || {};
    return STATUS_ORDER.map((s) => ({ status: s, value: s === 'pending' ? x.pending || 0 : c[s] || 0 }));
}

function render() {
    if (!root) return;
    followJobs();
    clear(root);
    root.append(
        h(
            'header',
            { class: 'view-head' },
            h('h2', { text: t('traces.title') }),
            h('button', { type: 'button', class: 'btn btn-small traces-refresh', text: t('app.refresh'), onclick: () => refreshTraces() }),
        ),
        h('p', { class: 'muted', text: t('traces.intro') }),
    );
    if (jobList) root.append(jobsCard());
    if (!items.length) {
        root.append(h('div', { class: 'placeholder' }, h('p', { text: t('traces.empty') })));
        return;
    }
    const bars = STATUS_ORDER.map((s) => ({
        label: statusLabel(s),
        value: s === 'pending' ? sum((x) => x.pending || 0) : sum((x) => (x.counts && x.counts[s]) || 0),
        cls: `series-${s}`,
    }));
    root.append(
        h(
            'div',
            { class: 'trace-top' },
            h(
                'section',
                { class: 'card chart-card' },
                h('h3', { text: t('traces.statusCounts') }),
                h('p', { class: 'muted', text: t('traces.statusCountsHint', { count: items.length, total }) }),
                barChart(bars, { title: t('traces.statusCounts') }),
            ),
            entryChartCard(),
        ),
        h('section', { class: 'card' }, h('h3', { text: t('traces.list') }), traceTable()),
        logCard(),
    );
}

function traceTable() {
    return h(
        'table',
        { class: 'data-table trace-table' },
        h('thead', {}, h('tr', {}, ['traces.trace', 'traces.task', 'traces.created', 'traces.injections', 'traces.verdicts'].map((k) => h('th', { text: t(k) })))),
        h(
            'tbody',
            {},
            items.map((x) =>
                h(
                    'tr',
                    { class: ['clickable', x.trace_id === openTrace && 'selected'], dataset: { trace: x.trace_id }, tabindex: 0, onclick: () => selectTrace(x.trace_id), onkeydown: (e) => e.key === 'Enter' && selectTrace(x.trace_id) },
                    h('td', {}, h('code', { text: x.trace_id })),
                    h('td', { text: x.task || t('traces.noTask') }),
                    h('td', { text: fmtDateTime(x.created_at) }),
                    h('td', { class: 'num', text: fmtNumber(x.injections || 0) }),
                    h('td', {}, stackedBar(countsOf(x).map((c) => ({ label: statusLabel(c.status), value: c.value, cls: `series-${c.status}` })))),
                ),
            ),
        ),
    );
}

async function selectTrace(id) {
    openTrace = id;
    try {
        log = await api.log(id);
    } catch (e) {
        log = null;
        toast(errorText('traces.failedToLoad', e), 'error');
    }
    render();
}

function logCard() {
    const card = h('section', { class: 'card trace-log' }, h('h3', { text: t('traces.log', { trace: openTrace || '' }) }));
    const entries = (log && log.trace_id === openTrace && log.entries) || [];
    if (!entries.length) {
        card.append(h('p', { class: 'muted', text: t('traces.logEmpty') }));
        return card;
    }
    card.append(
        h(
            'table',
            { class: 'data-table log-table' },
            h('thead', {}, h('tr', {}, ['traces.knowledge', 'traces.goal', 'traces.sequence', 'traces.injectedAt', 'traces.status', 'traces.reason', 'traces.judgedAt', 'traces.actions'].map((k) => h('th', { text: t(k) })))),
            h(
                'tbody',
                {},
                entries.map((e) =>
                    h(
                        'tr',
                        { dataset: { knowledgeId: e.knowledge_id } },
                        h('td', {}, h('span', { class: 'log-title', text: e.task || e.knowledge_id }), h('code', { class: 'muted small', text: e.knowledge_id })),
                        h('td', { text: e.goal_id || '—' }),
                        h('td', { class: 'num', text: e.injected_at_sequence === null || e.injected_at_sequence === undefined ? '—' : fmtNumber(e.injected_at_sequence) }),
                        h('td', { text: fmtDateTime(e.injected_at) }),
                        h('td', {}, statusChip(e.eval_result && e.eval_result.eval_status)),
                        h('td', { text: (e.eval_result && e.eval_result.reason) || '' }),
                        h('td', { text: e.evaluated_at ? `${fmtDateTime(e.evaluated_at)} · ${triggerLabel(e.evaluated_at_trigger)}` : '—' }),
                        h(
                            'td',
                            { class: 'row-actions' },
                            h('button', { type: 'button', class: 'btn btn-small chart-entry', text: t('traces.showChart'), onclick: () => showEntryChart(e.knowledge_id, e.task) }),
                            h('button', { type: 'button', class: 'btn btn-small open-entry', text: t('traces.open'), onclick: () => openDoc(e.knowledge_id) }),
                        ),
                    ),
                ),
            ),
        ),
    );
    return card;
}

async function showEntryChart(id, title) {
    try {
        const entry = await knowledge.entry(id);
        entryChart = { id, title: entry.title || title || id, entry };
    } catch (e) {
        entryChart = null;
        toast(errorText('knowledge.failedToLoad', e), 'error');
    }
    render();
}

function entryChartCard() {
    const card = h('section', { class: 'card chart-card entry-chart' }, h('h3', { text: t('traces.entryOverTime') }));
    if (!entryChart) {
        card.append(h('p', { class: 'muted', text: t('traces.entryHint') }));
        return card;
    }
    const ev = entryChart.entry.eval || {};
    card.append(
        h('p', { class: 'entry-chart-title', text: entryChart.title }),
        cumulativeChart(
            [
                { label: t('status.helpful'), cls: 'series-helpful', times: (ev.helpful_history || []).map((c) => parseTime(c.created_at)) },
                { label: t('status.harmful'), cls: 'series-harmful', times: (ev.harmful_history || []).map((c) => parseTime(c.created_at)) },
            ],
            { title: t('traces.entryOverTime') },
        ),
    );
    return card;
}

const JOB_KIND = { slim: 'traces.jobSlim' };
const JOB_STATUS = { queued: 'traces.jobQueued', running: 'traces.jobRunning', done: 'traces.jobDone', failed: 'traces.jobFailed' };

function jobsCard() {
    const card = h('section', { class: 'card jobs' }, h('h3', { text: t('traces.jobs') }));
    if (!jobList.length) {
        card.append(h('p', { class: 'muted', text: t('traces.noJobs') }));
        return card;
    }
    card.append(
        h(
            'ul',
            { class: 'job-list' },
            jobList.slice(0, 10).map((j) => {
                const total = Number(j.total) || 0;
                const done = Number(j.progress) || 0;
                const frac = total ? Math.min(1, done / total) : 0;
                // a job that ended with nothing to do: said so, not a full bar
                const empty = total === 0 && j.status === 'done';
                const progress = empty ? t('traces.jobNothingToDo') : t('traces.jobProgress', { done, total });
                return h(
                    'li',
                    { class: `job job-${j.status}`, dataset: { id: j.id } },
                    h('span', { class: 'job-name' }, h('span', { text: JOB_KIND[j.kind] ? t(JOB_KIND[j.kind]) : String(j.kind || j.id) }), h('span', { class: 'muted small', text: fmtDateTime(j.created_at) })),
                    empty
                        ? h('span', { class: 'job-progress job-empty muted', text: progress })
                        : h('progress', { class: 'job-progress', max: 100, value: Math.round(frac * 100), 'aria-label': progress }),
                    h('span', { class: 'job-state' }, h('span', { class: `status status-job-${j.status}`, text: JOB_STATUS[j.status] ? t(JOB_STATUS[j.status]) : String(j.status || '') }), empty ? null : ' ', empty ? null : h('span', { class: 'muted', text: progress })),
                );
            }),
        ),
    );
    return card;
}

let jobTimer = null;
/** While a job runs, follow its progress. */
function followJobs() {
    clearTimeout(jobTimer);
    if (!jobList || !jobList.some((j) => j.status === 'queued' || j.status === 'running')) return;
    jobTimer = setTimeout(async () => {
        if (!root || root.hidden) return;
        try {
            const j = await jobsApi.list();
            jobList = Array.isArray(j) ? j : j && Array.isArray(j.items) ? j.items : jobList;
            render();
        } catch {
            /* keep the last view */
        }
    }, 2000);
}
