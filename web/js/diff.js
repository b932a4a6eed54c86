// diff.js: a line diff (longest common subsequence) for revisions.
// Returns [{op: 'same' | 'add' | 'del', text}] turning a into b.

export function lineDiff(a, b) {
    const x = String(a || '').replace(/\r\n/g, '\n').split('\n');
    const y = String(b || '').replace(/\r\n/g, '\n').split('\n');
    // Common head and tail first: most revisions change a few lines.
    let start = 0;
    while (start < x.length && start < y.length && x[start] === y[start]) start++;
    let ex = x.length, ey = y.length;
    while (ex > start && ey > start && x[ex - 1] === y[ey - 1]) {
        ex--;
        ey--;
    }
    const xs = x.slice(start, ex), ys = y.slice(start, ey);
    const out = x.slice(0, start).map((text) => ({ op: 'same', text }));
    if (xs.length * ys.length > 4e6) {
        // Too big to align: everything old out, everything new in.
        for (const text of xs) out.push({ op: 'del', text });
        for (const text of ys) out.push({ op: 'add', text });
    } else {
        const n = xs.length, m = ys.length;
        const L = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
        for (let i = n - 1; i >= 0; i--)
            for (let j = m - 1; j >= 0; j--)
                L[i][j] = xs[i] === ys[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
        let i = 0, j = 0;
        while (i < n && j < m) {
            if (xs[i] === ys[j]) {
                out.push({ op: 'same', text: xs[i] });
                i++;
                j++;
            } else if (L[i + 1][j] >= L[i][j + 1]) out.push({ op: 'del', text: xs[i++] });
            else out.push({ op: 'add', text: ys[j++] });
        }
        while (i < n) out.push({ op: 'del', text: xs[i++] });
        while (j < m) out.push({ op: 'add', text: ys[j++] });
    }
    for (const text of x.slice(ex)) out.push({ op: 'same', text });
    return out;
}
