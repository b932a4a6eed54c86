// summary-reporter.mjs: a `node --test` reporter that writes one JSON object
// about a stage for test.sh (scripts/stage.sh): the runs passed, failed and
// skipped, each skip with its reason, each failure, and the ids of the tests
// that ran ("FILE > suite > test", FILE relative to the working directory).
//
//   node --test --test-reporter=tap --test-reporter-destination=stdout \
//       --test-reporter=./tests/lib/summary-reporter.mjs --test-reporter-destination=OUT.json ...
//
// What node 20 emits, and how it is counted (checked by tests/harness/):
// - test:pass / test:fail arrive children first, then their parent, each with
//   its nesting; a suite has details.type 'suite'. A run is a test with no
//   children; suites and tests with subtests are not runs themselves, but one
//   that fails while none of its children failed (an after hook) is one failure.
// - A skipped describe is one test:pass with `skip` set and type 'suite'; its
//   tests never report, so it is one skip. A skipped test is a test:pass with
//   `skip` (the reason, or true). A todo test is counted as a skip ("todo: ...").
// - A file that fails to load or dies (process.exit, a late exception) is a
//   test:fail named by the file's absolute path: one failure. A file with no
//   tests is a test:pass named by its path, which node counts as a pass:
//   here it is one failure ("the file defines no tests").
import path from 'node:path';

export default async function* summaryReporter(source) {
    const result = { passed: 0, failed: 0, skipped: 0, skips: [], failures: [], tests: [] };
    const levels = new Map(); // file -> records per nesting, waiting for their parent's event
    const withTests = new Set(); // files that reported a test or a suite
    const rel = (file) => (file ? path.relative(process.cwd(), file) : '(unknown file)');
    const idOf = (r) => [r.file, ...r.names].join(' > ');

    const finish = (r) => {
        if (r.kind === 'skip') {
            result.skipped++;
            result.skips.push({ file: r.file, name: r.names.join(' > '), reason: r.reason });
            return;
        }
        if (r.kind === 'pass') result.passed++;
        else {
            result.failed++;
            result.failures.push({ file: r.file, name: r.names.join(' > '), error: r.reason });
        }
        if (r.test) result.tests.push(idOf(r));
    };

    for await (const { type, data } of source) {
        if (type !== 'test:pass' && type !== 'test:fail') continue;
        const key = data.file ?? '';
        if (!levels.has(key)) levels.set(key, []);
        const stack = levels.get(key);
        const n = data.nesting;
        const children = stack.slice(n + 1).flat(); // what reported since: this event's descendants
        stack.length = n + 1;
        const here = (stack[n] ??= []);
        const file = rel(data.file);
        const failed = type === 'test:fail';
        const reason = failed ? errorText(data.details?.error) : undefined;
        const isFile = n === 0 && data.file !== undefined && path.resolve(data.name) === data.file;
        if (!isFile) withTests.add(key);

        if (isFile) {
            // The file itself: it failed to load or died, or it had no tests.
            here.push(...children);
            if (failed) {
                const how = data.details?.error?.signal ? `signal ${data.details.error.signal}` : `exit code ${data.details?.error?.exitCode}`;
                here.push({ kind: 'fail', file, names: [], reason: `the file failed outside its tests (${how}; see the TAP log)` });
            } else if (children.length === 0 && !withTests.has(key)) {
                here.push({ kind: 'fail', file, names: [], reason: 'the file defines no tests' });
            }
        } else if (data.skip !== undefined && data.skip !== false) {
            here.push({ kind: 'skip', file, names: [data.name], reason: data.skip === true ? '(no reason given)' : String(data.skip) });
        } else if (children.length > 0) {
            for (const c of children) c.names.unshift(data.name);
            here.push(...children);
            if (failed && !children.some((c) => c.kind === 'fail')) here.push({ kind: 'fail', file, names: [data.name], reason: `${reason} (after its tests passed)` });
        } else if (data.todo !== undefined && data.todo !== false) {
            here.push({ kind: 'skip', file, names: [data.name], reason: `todo: ${data.todo === true ? '(no reason given)' : data.todo}` });
        } else if (data.details?.type === 'suite') {
            if (failed) here.push({ kind: 'fail', file, names: [data.name], reason });
        } else {
            here.push({ kind: failed ? 'fail' : 'pass', file, names: [data.name], reason, test: true });
        }
        if (n === 0) {
            here.forEach(finish);
            stack.length = 0;
        }
    }
    // Records whose parent never reported (its process died): as they are.
    for (const stack of levels.values()) for (const level of stack) (level ?? []).forEach(finish);
    yield `${JSON.stringify(result, null, 1)}\n`;
}

/** A failure's message on one line (an assertion's is the cause of node's error). */
function errorText(error) {
    if (!error) return '';
    const e = error.cause ?? error;
    return String(e instanceof Error ? e.message : e).replace(/\s+/g, ' ').trim().slice(0, 300);
}
