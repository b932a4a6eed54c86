// The floors of fcgi/ (docs/architecture.md): the real tree passes the check
// of floors.mjs, and a copy of it with one upward, sideways or cyclic arrow
// fails it, from #include lines and from the objects' symbols alike.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { check, arrowProblem, cycles, FLOORS } from './floors.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SRC = path.join(ROOT, 'fcgi');
const CHECKER = path.join(ROOT, 'tests/arch/floors.mjs');
const OBJECTS = process.env.KNOWHUB_OBJECTS || path.join(ROOT, 'build/CMakeFiles/knowhub_core.dir/fcgi');

/** A scratch copy of fcgi/ to break. */
function copyTree() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'floors-'));
    fs.cpSync(SRC, path.join(dir, 'fcgi'), { recursive: true });
    return dir;
}

function addInclude(dir, file, header) {
    const p = path.join(dir, 'fcgi', file);
    const text = fs.readFileSync(p, 'utf8');
    const at = text.indexOf('#include');
    fs.writeFileSync(p, `${text.slice(0, at)}#include "${header}"\n${text.slice(at)}`);
}

/** Run the checker as test.sh does: its exit code and output. */
function runChecker(args) {
    const r = spawnSync(process.execPath, [CHECKER, ...args], { encoding: 'utf8' });
    return { code: r.status, out: r.stdout + r.stderr };
}

describe('the floors of fcgi/', () => {
    test('every folder of fcgi/ is a floor and every floor is a folder', () => {
        const folders = fs.readdirSync(SRC, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();
        assert.deepEqual(folders, FLOORS.flat().sort());
        const loose = fs.readdirSync(SRC).filter((n) => /\.[ch]$/.test(n));
        assert.deepEqual(loose, [], 'sources outside a floor');
    });

    test('the tree passes: no upward or sideways arrow, no cycle (includes and objects)', () => {
        const objects = fs.existsSync(OBJECTS) ? OBJECTS : null;
        const r = runChecker(objects ? ['--src', SRC, '--objects', objects] : ['--src', SRC]);
        assert.equal(r.code, 0, r.out);
        assert.match(r.out, /0 problem\(s\)/);
        const { modules, arrows } = check(SRC, null);
        assert.ok(modules >= 40 && arrows >= 100, `only ${modules} modules and ${arrows} arrows: the scan is broken`);
    });

    test('an upward include fails the check (domain -> api)', () => {
        const dir = copyTree();
        try {
            addInclude(dir, 'domain/paths.c', 'api/handlers.h');
            const r = runChecker(['--src', path.join(dir, 'fcgi')]);
            assert.equal(r.code, 1, r.out);
            assert.match(r.out, /domain\/paths -> api\/handlers \(fcgi\/domain\/paths\.c:\d+\): upward/);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    test('an upward include in a header fails too (base -> store)', () => {
        const dir = copyTree();
        try {
            addInclude(dir, 'base/buf.h', 'store/store.h');
            const r = runChecker(['--src', path.join(dir, 'fcgi')]);
            assert.equal(r.code, 1, r.out);
            assert.match(r.out, /base\/buf -> store\/store .*upward/);
            assert.match(r.out, /cycle between/, 'store.h includes base/buf.h: the arrow closes a cycle');
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    test('a sideways include fails (store -> llm share a floor)', () => {
        const dir = copyTree();
        try {
            addInclude(dir, 'store/store.h', 'llm/llm.h');
            const r = runChecker(['--src', path.join(dir, 'fcgi')]);
            assert.equal(r.code, 1, r.out);
            assert.match(r.out, /store\/store -> llm\/llm .*sideways/);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    test('a cycle inside one folder fails', () => {
        const dir = copyTree();
        try {
            const base = path.join(dir, 'fcgi/base');
            fs.writeFileSync(path.join(base, 'ping.h'), '#include "base/pong.h"\n');
            fs.writeFileSync(path.join(base, 'pong.h'), '#include "base/ping.h"\n');
            const r = runChecker(['--src', path.join(dir, 'fcgi')]);
            assert.equal(r.code, 1, r.out);
            assert.match(r.out, /cycle between base\/ping, base\/pong/);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    test('an include that does not name its floor, or a source outside a floor, fails', () => {
        const dir = copyTree();
        try {
            addInclude(dir, 'service/llmcall.c', 'store.h');
            fs.writeFileSync(path.join(dir, 'fcgi/loose.c'), 'int loose(void);\n');
            const r = runChecker(['--src', path.join(dir, 'fcgi')]);
            assert.equal(r.code, 1, r.out);
            assert.match(r.out, /#include "store\.h" does not name its floor/);
            assert.match(r.out, /loose: a source outside every floor/);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    test('an upward call without an include fails from the objects (nm)', () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'floors-link-'));
        try {
            const src = path.join(dir, 'fcgi');
            const obj = path.join(dir, 'objects');
            const files = {
                'base/low.c': 'int api_high(void);\nint base_low(void);\nint base_low(void) { return api_high(); }\n',
                'api/high.c': 'int api_high(void);\nint api_high(void) { return 1; }\n',
            };
            for (const [name, text] of Object.entries(files)) {
                fs.mkdirSync(path.join(src, path.dirname(name)), { recursive: true });
                fs.mkdirSync(path.join(obj, path.dirname(name)), { recursive: true });
                fs.writeFileSync(path.join(src, name), text);
                execFileSync('cc', ['-c', path.join(src, name), '-o', path.join(obj, `${name}.o`)]);
            }
            const r = runChecker(['--src', src, '--objects', obj]);
            assert.equal(r.code, 1, r.out);
            assert.match(r.out, /link: base\/low -> api\/high \(api_high\): upward/);
            assert.doesNotMatch(r.out, /^include:/m, 'no include says so: only the objects can');
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    test('the rules themselves', () => {
        assert.equal(arrowProblem('api/h_search', 'service/search'), null);
        assert.equal(arrowProblem('store/match', 'store/store'), null);
        assert.match(arrowProblem('service/search', 'http/http'), /upward/);
        assert.match(arrowProblem('mcp/mcp', 'api/handlers'), /sideways/);
        assert.match(arrowProblem('util', 'base/buf'), /not a floor/);
        const g = new Map([['a', new Set(['b'])], ['b', new Set(['c'])], ['c', new Set(['a'])], ['d', new Set(['a'])]]);
        assert.deepEqual(cycles(g), [['a', 'b', 'c']]);
        assert.deepEqual(cycles(new Map([['a', new Set(['b'])], ['b', new Set()]])), []);
    });
});
