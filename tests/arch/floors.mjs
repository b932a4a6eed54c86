#!/usr/bin/env node
// floors: the module graph of fcgi/ must run one way, down the floors, and
// have no cycle. A module is a folder/name pair (fcgi/store/store.c and
// fcgi/store/store.h are the module store/store); its arrows come from two
// sources, each checked on its own:
//   - the #include "floor/name.h" lines of its .c and .h files;
//   - with --objects DIR, the symbols its object file uses (nm: U) that
//     another object defines (T, D, B, R): the arrows the linker sees, so a
//     function declared by hand instead of included is caught too.
// An arrow may stay in its folder or go to a lower floor; an arrow to a
// higher floor, to another folder of the same floor, or to a folder that is
// not a floor fails, and so does any cycle of modules (within a floor too).
// docs/architecture.md describes the floors.
//
//   node tests/arch/floors.mjs [--src fcgi] [--objects build/CMakeFiles/knowhub_core.dir/fcgi]
//
// Prints each problem and exits 1 when there is one, else prints a summary.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';

/** The floors, lowest first: a folder may use the folders of lower floors only. */
export const FLOORS = [
    ['base'],
    ['domain'],
    ['store', 'llm'],
    ['service'],
    ['http'],
    ['api', 'mcp'],
    ['app'],
];

/** The floor index of a folder, or -1 when it is not a floor. */
export function rankOf(folder) {
    return FLOORS.findIndex((f) => f.includes(folder));
}

/** Why the arrow from module a to module b is not allowed, or null. */
export function arrowProblem(a, b) {
    const fa = a.split('/')[0];
    const fb = b.split('/')[0];
    if (fa === fb) return null;
    const ra = rankOf(fa);
    const rb = rankOf(fb);
    if (ra < 0) return `${a} is in ${fa}/, which is not a floor`;
    if (rb < 0) return `${b} is in ${fb}/, which is not a floor`;
    if (rb > ra) return `upward: ${fa}/ (floor ${ra}) may not use ${fb}/ (floor ${rb})`;
    if (rb === ra) return `sideways: ${fa}/ and ${fb}/ share floor ${ra} and may not use each other`;
    return null;
}

/** The cycles of a graph (Map module -> Set of modules), one per strongly connected component. */
export function cycles(graph) {
    const index = new Map();
    const low = new Map();
    const onStack = new Set();
    const stack = [];
    const found = [];
    let next = 0;
    const visit = (v) => {
        index.set(v, next);
        low.set(v, next);
        next++;
        stack.push(v);
        onStack.add(v);
        for (const w of graph.get(v) || []) {
            if (!index.has(w)) {
                visit(w);
                low.set(v, Math.min(low.get(v), low.get(w)));
            } else if (onStack.has(w)) {
                low.set(v, Math.min(low.get(v), index.get(w)));
            }
        }
        if (low.get(v) === index.get(v)) {
            const scc = [];
            let w;
            do {
                w = stack.pop();
                onStack.delete(w);
                scc.push(w);
            } while (w !== v);
            if (scc.length > 1 || (graph.get(v) || new Set()).has(v)) found.push(scc.sort());
        }
    };
    for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
    return found;
}

function walk(dir) {
    const out = [];
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) out.push(...walk(p));
        else out.push(p);
    }
    return out;
}

function moduleOf(src, file) {
    const rel = path.relative(src, file).split(path.sep).join('/');
    return rel.replace(/\.c\.o$|\.[ch]$/, '');
}

/** The include graph of the sources under src: Map module -> Map(module -> "file:line"). */
export function includeGraph(src) {
    const graph = new Map();
    const problems = [];
    for (const file of walk(src).filter((f) => /\.[ch]$/.test(f)).sort()) {
        const from = moduleOf(src, file);
        if (!from.includes('/')) problems.push(`${from}: a source outside every floor (put it in a folder)`);
        if (!graph.has(from)) graph.set(from, new Map());
        const lines = fs.readFileSync(file, 'utf8').split('\n');
        lines.forEach((line, i) => {
            const m = /^\s*#\s*include\s+"([^"]+)"/.exec(line);
            if (!m) return;
            const where = `${path.relative(path.dirname(src), file)}:${i + 1}`;
            if (!/^[a-z_]+\/[a-z_0-9]+\.h$/.test(m[1])) {
                problems.push(`${where}: #include "${m[1]}" does not name its floor (floor/name.h)`);
                return;
            }
            if (!fs.existsSync(path.join(src, m[1]))) {
                problems.push(`${where}: #include "${m[1]}": no such header`);
                return;
            }
            const to = m[1].replace(/\.h$/, '');
            if (to !== from && !graph.get(from).has(to)) graph.get(from).set(to, where);
        });
    }
    return { graph, problems };
}

/** The link graph of the objects under dir (nm): Map module -> Map(module -> "symbol"). */
export function linkGraph(dir, src) {
    const defined = new Map();
    const uses = new Map();
    // Objects of sources that are gone (a build tree from before a move) are not counted.
    const objects = walk(dir).filter((f) => f.endsWith('.o') && fs.existsSync(path.join(src, moduleOf(dir, f) + '.c')));
    for (const obj of objects) {
        const mod = moduleOf(dir, obj);
        const out = execFileSync('nm', ['--defined-only', '-g', obj], { encoding: 'utf8' });
        for (const line of out.split('\n')) {
            const m = /^\S+\s+[TDBRVW]\s+(\S+)$/.exec(line.trim());
            if (m) defined.set(m[1], mod);
        }
        const und = execFileSync('nm', ['-u', obj], { encoding: 'utf8' });
        uses.set(mod, und.split('\n').map((l) => l.trim().replace(/^U\s+/, '')).filter(Boolean));
    }
    const graph = new Map();
    for (const [mod, syms] of uses) {
        const edges = new Map();
        for (const s of syms) {
            const to = defined.get(s);
            if (to && to !== mod && !edges.has(to)) edges.set(to, s);
        }
        graph.set(mod, edges);
    }
    return { graph, objects: objects.length };
}

/** Every problem of one graph: arrows across floors the wrong way, and cycles. */
export function graphProblems(graph, kind) {
    const problems = [];
    for (const [from, edges] of graph)
        for (const [to, where] of edges) {
            const why = arrowProblem(from, to);
            if (why) problems.push(`${kind}: ${from} -> ${to} (${where}): ${why}`);
        }
    const plain = new Map([...graph].map(([k, v]) => [k, new Set(v.keys())]));
    for (const c of cycles(plain)) problems.push(`${kind}: cycle between ${c.join(', ')}`);
    return problems;
}

/** Check a source tree (and its objects): { problems, modules, arrows }. */
export function check(src, objects) {
    const inc = includeGraph(src);
    const problems = [...inc.problems, ...graphProblems(inc.graph, 'include')];
    let arrows = 0;
    for (const e of inc.graph.values()) arrows += e.size;
    let linkArrows = 0;
    if (objects) {
        const link = linkGraph(objects, src);
        if (link.objects === 0) problems.push(`link: no object files under ${objects}`);
        problems.push(...graphProblems(link.graph, 'link'));
        for (const e of link.graph.values()) linkArrows += e.size;
    }
    return { problems, modules: inc.graph.size, arrows, linkArrows };
}

if (import.meta.url === `file://${process.argv[1]}`) {
    const args = process.argv.slice(2);
    let src = 'fcgi';
    let objects = null;
    for (let i = 0; i < args.length; i++) {
        if (args[i] === '--src') src = args[++i];
        else if (args[i] === '--objects') objects = args[++i];
        else {
            console.error(`floors: unknown argument ${args[i]}`);
            process.exit(2);
        }
    }
    const r = check(src, objects);
    for (const p of r.problems) console.log(p);
    console.log(
        `floors: ${r.modules} modules, ${r.arrows} include arrows` +
            (objects ? `, ${r.linkArrows} link arrows` : '') +
            `, ${r.problems.length} problem(s)`,
    );
    process.exit(r.problems.length ? 1 : 0);
}
