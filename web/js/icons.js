// icons.js: small stroke icons as SVG built in script (no icon font, no
// emoji font needed). icon(name, label?) -> <svg>; with a label it is
// announced (role img), else hidden from assistive technology.
import { svg } from './dom.js';

const PATHS = {
    pin: ['M10 1.8l4.2 4.2-1.9.6-2.6 2.6.3 3.1-1.3 1.3-2.8-2.8L2.4 14.3l-.7-.7 3.5-3.5L2.4 7.3l1.3-1.3 3.1.3 2.6-2.6z'],
    robot: ['M3 6h10v7H3z', 'M8 6V3.5', 'M8 2.2v.2', 'M6 9.2v.3', 'M10 9.2v.3', 'M6.3 11.3h3.4', 'M1.5 8.5v2', 'M14.5 8.5v2'],
    folder: ['M1.5 3.5h4.2l1.5 1.6h7.3v7.9h-13z'],
    trash: ['M2.5 4.2h11', 'M6 4.2V2.5h4v1.7', 'M4 4.2l.8 9.3h6.4l.8-9.3', 'M6.7 6.7v4.3', 'M9.3 6.7v4.3'],
    pencil: ['M10.8 2.4l2.8 2.8-7.9 7.9H2.9v-2.8z', 'M9.2 4l2.8 2.8'],
    search: ['M7 2.5a4.5 4.5 0 1 0 0 9 4.5 4.5 0 1 0 0-9z', 'M10.3 10.3l3.4 3.4'],
    x: ['M4 4l8 8', 'M12 4l-8 8'],
    plus: ['M8 3v10', 'M3 8h10'],
    sparkle: ['M8 1.5l1.4 4.1 4.1 1.4-4.1 1.4L8 12.5 6.6 8.4 2.5 7l4.1-1.4z', 'M13 11.5l.5 1.5 1.5.5-1.5.5-.5 1.5-.5-1.5-1.5-.5 1.5-.5z'],
    anchor: ['M8 4.5v9', 'M8 2a1.3 1.3 0 1 0 0 2.6A1.3 1.3 0 1 0 8 2z', 'M5.5 7h5', 'M2.5 9.5c.5 2.5 2.8 4 5.5 4s5-1.5 5.5-4'],
    chevronRight: ['M6 3.5l4.5 4.5L6 12.5'],
    chevronDown: ['M3.5 6l4.5 4.5L12.5 6'],
    file: ['M3.5 1.5h6l3 3v10h-9z', 'M9.5 1.5v3h3'],
    sidebar: ['M2 2.5h12v11H2z', 'M6 2.5v11'],
};

export function icon(name, label = '') {
    const el = svg(
        'svg',
        { class: `icon icon-${name}`, viewBox: '0 0 16 16', width: 16, height: 16, fill: 'none', stroke: 'currentColor', 'stroke-width': 1.5, 'stroke-linecap': 'round', 'stroke-linejoin': 'round', focusable: 'false' },
        (PATHS[name] || []).map((d) => svg('path', { d })),
    );
    if (label) {
        el.setAttribute('role', 'img');
        el.setAttribute('aria-label', label);
        el.append(svg('title', { text: label }));
    } else {
        el.setAttribute('aria-hidden', 'true');
    }
    return el;
}
