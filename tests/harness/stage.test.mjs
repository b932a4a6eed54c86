// The bookkeeping of test.sh's stages (scripts/stage.sh, tests/lib/summary-reporter.mjs)
// on throwaway suites in temporary directories: a stage with no tests or
// fewer than its floor fails, a skip not on the allow-list fails, an allowed
// one passes and is printed with its reason, a skipped describe is one skip,
// failures of every kind are counted, and the summary counts runs and
// distinct tests per layer. The real suites are never run here.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const made = [];
after(() => made.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

/** A temporary directory holding FILES ({ relative path: text }). */
function scratch(files) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'knowhub-harness-'));
    made.push(dir);
    for (const [name, text] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
        fs.writeFileSync(path.join(dir, name), text);
    }
    return dir;
}

/**
 * Run SCRIPT (bash) in DIR between `stage_init` and `stage_summary` of
 * scripts/stage.sh, with FLOORS and ALLOW as its floor and allow-list files.
 * Gives { status, out } (stdout and stderr together).
 */
function stages(dir, script, { floors = '', allow = '' } = {}) {
    fs.writeFileSync(path.join(dir, 'floors.txt'), floors);
    fs.writeFileSync(path.join(dir, 'skips.allow'), allow);
    const env = { ...process.env, STAGE_FLOORS: path.join(dir, 'floors.txt'), STAGE_ALLOW: path.join(dir, 'skips.allow') };
    delete env.NODE_TEST_CONTEXT; // else the inner node --test reports to this one
    const r = spawnSync('bash', ['-c', `set -u; . "$1/scripts/stage.sh"; stage_init "$PWD/out"; ${script}\nstage_summary`, 'bash', ROOT], {
        cwd: dir, env, encoding: 'utf8', timeout: 120000,
    });
    assert.equal(r.error, undefined);
    return { status: r.status, out: r.stdout + r.stderr };
}

const line = (out, text) => assert.ok(out.split('\n').includes(text), `no line "${text}" in:\n${out}`);
const noLine = (out, re) => assert.ok(!out.split('\n').some((l) => re.test(l)), `a line ${re} in:\n${out}`);

const TWO = "import { test } from 'node:test';\ntest('one', () => {});\ntest('two', () => {});\n";

describe('a stage with no tests, or fewer than its floor, fails', () => {
    test('a directory without test files: no tests ran', () => {
        const dir = scratch({ 't/README': 'no tests here\n' });
        const { status, out } = stages(dir, 'node_stage demo t/');
        line(out, 'demo: 0 passed, 1 failed, 0 skipped');
        line(out, '  FAILED: no tests ran');
        line(out, '0 passed, 1 failed, 0 skipped');
        assert.notEqual(status, 0);
    });

    test('a file that defines no tests fails, though node --test counts it as a pass', () => {
        const dir = scratch({ 't/empty.test.mjs': "import { test } from 'node:test';\n// nothing\n" });
        const { status, out } = stages(dir, 'node_stage demo t/');
        line(out, '  FAILED: t/empty.test.mjs: the file defines no tests');
        line(out, 'demo: 0 passed, 1 failed, 0 skipped');
        assert.match(fs.readFileSync(path.join(dir, 'out/demo.log'), 'utf8'), /^# pass 1$/m);
        assert.notEqual(status, 0);
    });

    test('every test skipped (and allowed): no tests ran', () => {
        const dir = scratch({ 't/a.test.mjs': "import { test } from 'node:test';\ntest('x', { skip: 'not here' }, () => {});\n" });
        const { status, out } = stages(dir, 'node_stage demo t/', { allow: 'demo t/a.test.mjs not here\n' });
        line(out, 'demo: 0 passed, 1 failed, 1 skipped');
        line(out, '  FAILED: no tests ran');
        assert.notEqual(status, 0);
    });

    test('fewer tests than the floor fail the stage; as many pass it', () => {
        const dir = scratch({ 't/a.test.mjs': TWO });
        let { status, out } = stages(dir, 'node_stage demo t/', { floors: '# comment\nother 1\ndemo 3\n' });
        line(out, 'demo: 2 passed, 1 failed, 0 skipped');
        line(out, '  FAILED: 2 tests ran, fewer than the floor of 3 (tests/floors.txt)');
        assert.notEqual(status, 0);
        ({ status, out } = stages(dir, 'node_stage demo t/', { floors: 'demo 2\n' }));
        line(out, 'demo: 2 passed, 0 failed, 0 skipped');
        line(out, '2 passed, 0 failed, 0 skipped');
        assert.equal(status, 0, out);
    });
});

describe('skips', () => {
    const files = {
        't/a.test.mjs': `import { describe, test } from 'node:test';
describe('pg suite', { skip: 'needs PostgreSQL' }, () => {
    test('inner one', () => {});
    test('inner two', () => {});
});
describe('outer', () => {
    test('runs', () => {});
    test('root only', { skip: 'needs root' }, () => {});
    test('skips itself', (t) => t.skip('decided at run time'));
    test('later', { todo: 'not written yet' }, () => {});
});
`,
    };

    test('a skip not on the allow-list fails; a listed one passes and is printed with its reason', () => {
        const dir = scratch(files);
        const allow = [
            '# comments and blank lines are ignored',
            '',
            'http,demo*  t/a.test.mjs  needs PostgreSQL', // by reason
            'demo  t/*.test.mjs  outer > root only', // by name
            'other  t/a.test.mjs  *', // another stage: not for demo
        ].join('\n');
        const { status, out } = stages(dir, 'node_stage demo t/', { allow });
        line(out, 'demo: 1 passed, 2 failed, 2 skipped');
        line(out, '  skipped: t/a.test.mjs > pg suite: needs PostgreSQL');
        line(out, '  skipped: t/a.test.mjs > outer > root only: needs root');
        line(out, '  FAILED, a skip not in tests/skips.allow: t/a.test.mjs > outer > skips itself: decided at run time');
        line(out, '  FAILED, a skip not in tests/skips.allow: t/a.test.mjs > outer > later: todo: not written yet');
        line(out, '1 passed, 2 failed, 2 skipped');
        assert.notEqual(status, 0);
    });

    test('with every skip listed the stage passes; a skipped describe is one skip, its tests no runs', () => {
        const dir = scratch(files);
        const { status, out } = stages(dir, 'node_stage demo t/', { allow: 'demo t/a.test.mjs *\n' });
        line(out, 'demo: 1 passed, 0 failed, 4 skipped');
        line(out, '1 passed, 0 failed, 4 skipped');
        line(out, 'distinct tests: demo 1 (total 1)');
        const json = JSON.parse(fs.readFileSync(path.join(dir, 'out/demo.json'), 'utf8'));
        assert.deepEqual(json.tests, ['t/a.test.mjs > outer > runs']);
        assert.deepEqual(json.skips.map((s) => s.name), ['pg suite', 'outer > root only', 'outer > skips itself', 'outer > later']);
        assert.equal(status, 0, out);
    });
});

test('failures: a failing test, an after hook, a file that does not load or exits; the TAP stays in the log', () => {
    const dir = scratch({
        't/a.test.mjs': `import { after, describe, test } from 'node:test';
describe('suite', () => {
    after(() => { throw new Error('after hook broke'); });
    test('fine', () => {});
});
test('broken', () => { throw new Error('expected 1, got 2'); });
test('fine too', () => {});
`,
        't/b.test.mjs': "import { nothing } from 'node:fs';\n",
        't/c.test.mjs': "import { test } from 'node:test';\ntest('exits', () => process.exit(3));\n",
    });
    const { status, out } = stages(dir, 'node_stage demo t/');
    line(out, '  FAILED: t/a.test.mjs > suite: after hook broke (after its tests passed)');
    line(out, '  FAILED: t/a.test.mjs > broken: expected 1, got 2');
    line(out, '  FAILED: t/b.test.mjs: the file failed outside its tests (exit code 1; see the TAP log)');
    line(out, '  FAILED: t/c.test.mjs: the file failed outside its tests (exit code 3; see the TAP log)');
    line(out, 'demo: 2 passed, 4 failed, 0 skipped');
    assert.match(out, /^not ok \d+ - broken$/m); // the TAP excerpt, as before
    assert.match(fs.readFileSync(path.join(dir, 'out/demo.log'), 'utf8'), /^# fail \d+$/m);
    assert.notEqual(status, 0);
});

test('the summary counts runs, and each layer\'s distinct tests once', () => {
    const dir = scratch({
        't/a.test.mjs': TWO,
        't/b.test.mjs': "import { test } from 'node:test';\ntest('b', () => {});\n",
    });
    const script = [
        'node_stage http t/',
        'node_stage http-postgresql t/a.test.mjs',
        'node_stage architecture t/b.test.mjs',
        'stage_report format 1 0',
    ].join('\n');
    const { status, out } = stages(dir, script);
    line(out, 'http: 3 passed, 0 failed, 0 skipped');
    line(out, 'http-postgresql: 2 passed, 0 failed, 0 skipped');
    line(out, '7 passed, 0 failed, 0 skipped');
    line(out, 'distinct tests: http 3, arch 1, format 1 (total 5)');
    assert.equal(status, 0, out);
});

test('a stage that could not run is a failure in the summary', () => {
    const dir = scratch({ 't/a.test.mjs': TWO });
    const { status, out } = stages(dir, 'node_stage demo t/\nstage_fail browser "chromium could not be installed"');
    line(out, 'browser: chromium could not be installed');
    line(out, '2 passed, 1 failed, 0 skipped');
    assert.notEqual(status, 0);
});

test('ctest stages: passed, failed and skipped tests, the floor, unit-DIR in layer unit', () => {
    const dir = scratch({
        'CMakeLists.txt': `cmake_minimum_required(VERSION 3.13)
project(harness NONE)
include(CTest)
add_test(NAME test_fine COMMAND true)
add_test(NAME test_broken COMMAND false)
add_test(NAME test_skipped COMMAND sh -c "exit 77")
set_tests_properties(test_skipped PROPERTIES SKIP_RETURN_CODE 77)
`,
    });
    const cmake = spawnSync('cmake', ['-S', '.', '-B', 'b'], { cwd: dir, encoding: 'utf8' });
    assert.equal(cmake.status, 0, cmake.stderr);
    const allow = 'unit-* b test_skipped\n';
    let { status, out } = stages(dir, 'unit_stage b', { allow, floors: 'unit-b 4\n' });
    line(out, 'unit-b: 1 passed, 2 failed, 1 skipped');
    line(out, '  skipped: b > test_skipped: ctest: Skipped');
    line(out, '  FAILED: 2 tests ran, fewer than the floor of 4 (tests/floors.txt)');
    assert.notEqual(status, 0);
    ({ status, out } = stages(dir, 'unit_stage b', { floors: 'unit-b 2\n' }));
    line(out, 'unit-b: 1 passed, 2 failed, 0 skipped');
    line(out, '  FAILED, a skip not in tests/skips.allow: b > test_skipped: ctest: Skipped');
    line(out, 'distinct tests: unit 2 (total 2)');
    noLine(out, /fewer than the floor/);
    assert.notEqual(status, 0);
});
