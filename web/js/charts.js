// charts.js: small SVG charts, drawn with DOM calls (no library, no inline
// style): horizontal bars, a stacked bar, and step lines over time. Colours
// come from CSS classes (series-helpful, series-harmful, ...).
import { h, svg } from './dom.js';
import { fmtDate, fmtDateTime, fmtNumber } from './i18n.js';

/** Horizontal bars: bars = [{label, value, cls}] */
export function barChart(bars, { title = '', width = 420 } = {}) {
    const row = 26, labelW = 120, valueW = 48, pad = 6;
    const height = bars.length * row + pad * 2;
    const max = Math.max(1, ...bars.map((b) => b.value));
    const plotW = width - labelW - valueW;
    const el = svg('svg', { class: 'chart bar-chart', viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': title });
    if (title) el.append(svg('title', { text: title }));
    bars.forEach((b, i) => {
        const y = pad + i * row;
        const w = b.value > 0 ? Math.max(2, (b.value / max) * plotW) : 0;
        el.append(
            svg('text', { x: labelW - 8, y: y + row / 2 + 4, class: 'chart-label', 'text-anchor': 'end', text: b.label }),
            svg('rect', { x: labelW, y: y + 4, width: plotW, height: row - 8, class: 'bar-track', rx: 3 }),
            svg('rect', { x: labelW, y: y + 4, width: w, height: row - 8, class: `bar ${b.cls || ''}`, rx: 3 }, svg('title', { text: `${b.label}: ${fmtNumber(b.value)}` })),
            svg('text', { x: labelW + plotW + 6, y: y + row / 2 + 4, class: 'chart-value', text: fmtNumber(b.value) }),
        );
    });
    return el;
}

/** One bar split by parts = [{label, value, cls}] (a trace's verdicts). */
export function stackedBar(parts, { width = 160, height = 12 } = {}) {
    const total = parts.reduce((s, p) => s + p.value, 0);
    const el = svg('svg', { class: 'chart stacked-bar', viewBox: `0 0 ${width} ${height}`, width, height, role: 'img' });
    const label = parts.filter((p) => p.value).map((p) => `${p.label}: ${fmtNumber(p.value)}`).join(', ');
    el.setAttribute('aria-label', label);
    el.append(svg('rect', { x: 0, y: 0, width, height, class: 'bar-track', rx: 3 }));
    let x = 0;
    for (const p of parts) {
        if (!p.value || !total) continue;
        const w = (p.value / total) * width;
        el.append(svg('rect', { x, y: 0, width: w, height, class: `bar ${p.cls}` }, svg('title', { text: `${p.label}: ${fmtNumber(p.value)}` })));
        x += w;
    }
    return el;
}

/**
 * Cumulative counts over time as step lines: series = [{label, cls, times: [Date...]}]
 * (each time adds one). Returns a figure with the SVG and a legend.
 */
export function cumulativeChart(series, { title = '', width = 520, height = 180 } = {}) {
    const m = { l: 36, r: 12, t: 10, b: 24 };
    const all = series.flatMap((s) => s.times).filter((d) => d && !isNaN(d));
    const fig = h('figure', { class: 'chart-figure' });
    const el = svg('svg', { class: 'chart line-chart', viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': title });
    if (title) el.append(svg('title', { text: title }));
    let t0 = all.length ? Math.min(...all.map(Number)) : Date.now() - 86400000;
    let t1 = all.length ? Math.max(...all.map(Number)) : Date.now();
    if (t1 - t0 < 60000) {
        t0 -= 3600000;
        t1 += 3600000;
    }
    const yMax = Math.max(1, ...series.map((s) => s.times.length));
    const X = (tm) => m.l + ((tm - t0) / (t1 - t0)) * (width - m.l - m.r);
    const Y = (v) => height - m.b - (v / yMax) * (height - m.t - m.b);
    // axes and grid
    const ticks = yMax <= 4 ? [...Array(yMax + 1).keys()] : [0, Math.round(yMax / 2), yMax];
    for (const v of ticks) {
        el.append(
            svg('line', { x1: m.l, x2: width - m.r, y1: Y(v), y2: Y(v), class: 'grid' }),
            svg('text', { x: m.l - 6, y: Y(v) + 4, 'text-anchor': 'end', class: 'chart-tick', text: fmtNumber(v) }),
        );
    }
    const when = t1 - t0 < 2 * 86400000 ? fmtDateTime : fmtDate;
    el.append(
        svg('text', { x: m.l, y: height - 6, class: 'chart-tick', text: when(new Date(t0)) }),
        svg('text', { x: width - m.r, y: height - 6, 'text-anchor': 'end', class: 'chart-tick', text: when(new Date(t1)) }),
    );
    for (const s of series) {
        const times = s.times.filter((d) => d && !isNaN(d)).map(Number).sort((a, b) => a - b);
        let d = `M${X(t0)},${Y(0)}`;
        let n = 0;
        for (const tm of times) {
            d += ` H${X(tm)} V${Y(++n)}`;
        }
        d += ` H${X(t1)}`;
        el.append(svg('path', { d, class: `series ${s.cls}`, fill: 'none' }, svg('title', { text: `${s.label}: ${fmtNumber(times.length)}` })));
        for (const [i, tm] of times.entries()) el.append(svg('circle', { cx: X(tm), cy: Y(i + 1), r: 2.5, class: `dot ${s.cls}` }));
    }
    fig.append(
        el,
        h(
            'figcaption',
            { class: 'legend' },
            series.map((s) => h('span', { class: 'legend-item' }, h('span', { class: `swatch ${s.cls}`, 'aria-hidden': 'true' }), `${s.label} (${fmtNumber(s.times.length)})`)),
        ),
    );
    return fig;
}
