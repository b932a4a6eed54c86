// examples.test.mjs: every shell example of README.md and docs/*.md (a fenced
// ```sh block) runs, as written, against a fresh nginx + knowhub, so a doc
// that drifts from the code fails CI (docs/testing.md, the docs layer).
//
// - Each block is a test named "FILE:LINE". The blocks of one file run in
//   order, in one sandbox of their own: its cwd holds var/ (the stack's data
//   directory, with admin.token and the example knowledge as ./run.sh loads
//   it), build/knowhub (the binary under test, also `knowhub` on PATH, as
//   the package installs it) and docs/ (the repository's);
//   the shell variables a block sets reach the next block of its file.
// - The stack listens on a free port: "127.0.0.1:8080" in a block is that port.
//   $KNOWHUB_TOKEN is an agent token of space "default".
// - A block runs under bash -e -o pipefail, and curl is curl --fail-with-body
//   that also fails on an answer {"status": "error"} (application errors are
//   HTTP 200): a command or a request that fails fails the example.
// - A block that cannot run here says so on its first line,
//   "# not run by the docs test: REASON"; it is reported as a skip with REASON.
// - The tests run as root in CI: a block that would change the machine
//   (install packages or files outside the sandbox, manage services or users)
//   must say it is not run; one that does not fails before it runs, and the
//   commands for it are refused by stand-ins first on PATH.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, BIN, startStack } from '../http/lib/stack.mjs';

const NOT_RUN = /^# not run by the docs test: (.+)$/;
// What an example run here must not do (see above).
const SYSTEM = /\b(sudo|apt-get|apt|dpkg|systemctl|adduser|useradd|runuser|install\s+-[dm])\b|(^|\s)\/(etc|usr|var\/lib|srv|opt|backups)\//m;
const REFUSED = ['sudo', 'apt-get', 'apt', 'dpkg', 'systemctl', 'adduser', 'useradd', 'runuser', 'install'];

/** The ```sh blocks of a Markdown text: [{line, code, reason}] (line: 1-based, of the fence). */
export function shellBlocks(text) {
    const blocks = [];
    const lines = text.split('\n');
    for (let i = 0; i < lines.length; i++) {
        if (lines[i] !== '```sh') continue;
        const start = i;
        const body = [];
        for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push(lines[i]);
        if (i === lines.length) throw new Error(`unclosed \`\`\`sh block at line ${start + 1}`);
        const m = NOT_RUN.exec(body[0] || '');
        blocks.push({ line: start + 1, code: body.join('\n') + '\n', reason: m ? m[1] : '' });
    }
    return blocks;
}

const DOCS = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];

// Run before a block: the stricter curl, and the variables of the blocks before it.
const PRELUDE = `set -e -o pipefail
curl() {
    local out rc=0
    out=$(command curl -sS --fail-with-body --max-time 30 "$@") || rc=$?
    printf '%s\n' "$out"
    [ "$rc" = 0 ] || return "$rc"
    if printf '%s' "$out" | jq -e 'objects | select(.status == "error")' > /dev/null 2>&1; then
        echo "docs test: the answer is an error (application errors are HTTP 200, docs/api.md)" >&2
        return 22
    fi
}
[ -f "$DOCS_STATE" ] && . "$DOCS_STATE"
__docs_before=$(compgen -v | sort)
`;
// Run after it: keep what it set for the next block (not the shell's own variables).
const POSTLUDE = `
__docs_new=$(comm -13 <(printf '%s\\n' "$__docs_before") <(compgen -v | sort) | grep -v -e '^__docs_' -e '^BASH' -e '^PIPESTATUS$' -e '^_$' || true)
{ [ -f "$DOCS_STATE" ] && cat "$DOCS_STATE"; for v in $__docs_new; do declare -p "$v"; done; } > "$DOCS_STATE.next"
mv "$DOCS_STATE.next" "$DOCS_STATE"
`;

const sandboxes = [];
after(async () => {
    for (const s of sandboxes) {
        await s.stack.stop();
        fs.rmSync(s.dir, { recursive: true, force: true });
    }
});

/** A stack and a working directory laid out as the docs assume. */
async function sandbox() {
    const stack = await startStack();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'knowhub-docs-'));
    fs.mkdirSync(path.join(dir, 'build'));
    fs.symlinkSync(BIN, path.join(dir, 'build/knowhub'));
    fs.symlinkSync(stack.dir, path.join(dir, 'var'));
    fs.symlinkSync(path.join(ROOT, 'docs'), path.join(dir, 'docs'));
    fs.mkdirSync(path.join(dir, '.bin'));
    fs.symlinkSync(BIN, path.join(dir, '.bin/knowhub'));
    fs.mkdirSync(path.join(dir, '.refused'));
    for (const cmd of REFUSED)
        fs.writeFileSync(path.join(dir, '.refused', cmd), `#!/bin/sh\necho "the docs test does not run ${cmd}: mark the example not run" >&2\nexit 99\n`, { mode: 0o755 });
    const env = { ...process.env, ...stack.cliEnv(), KNOWHUB_PORT: String(stack.port) };
    delete env.KNOWHUB_DATA; /* the default, ./var, is the stack's: as in a checkout */
    env.PATH = `${path.join(dir, '.refused')}:${path.join(dir, '.bin')}:${env.PATH}`;
    const imp = spawnSync(BIN, ['import', 'docs/examples/knowledge', '--space', 'default'], { cwd: dir, env, encoding: 'utf8' });
    assert.equal(imp.status, 0, `importing the examples: ${imp.stderr}`);
    env.KNOWHUB_TOKEN = stack.token('default', 'agent', 'docs-examples');
    env.DOCS_STATE = path.join(dir, '.docs-state');
    const s = { stack, dir, env };
    sandboxes.push(s);
    return s;
}

for (const doc of DOCS) {
    const blocks = shellBlocks(fs.readFileSync(path.join(ROOT, doc), 'utf8'));
    let box = null;
    for (const b of blocks) {
        const name = `${doc}:${b.line}`;
        if (b.reason) {
            test(name, { skip: `not run by the docs test: ${b.reason}` }, () => {});
            continue;
        }
        test(name, { timeout: 120000 }, async (t) => {
            const system = SYSTEM.exec(b.code);
            assert.equal(system, null, `${name} would change the machine ("${system && system[0].trim()}"): make it safe or mark it "# not run by the docs test: REASON"`);
            box ||= await sandbox();
            const code = b.code.replaceAll('127.0.0.1:8080', `127.0.0.1:${box.stack.port}`);
            const r = spawnSync('bash', ['-c', PRELUDE + code + POSTLUDE], {
                cwd: box.dir,
                env: box.env,
                encoding: 'utf8',
                timeout: 110000,
                maxBuffer: 16 << 20,
            });
            t.diagnostic(`stdout (end): ${r.stdout.slice(-3000)}`);
            assert.equal(r.status, 0, `${name} exited ${r.status}${r.signal ? ` (${r.signal})` : ''}\n--- stderr\n${r.stderr}\n--- stdout\n${r.stdout.slice(-4000)}`);
        });
    }
}

test('the extractor finds blocks, their lines and the reason of one that cannot run', () => {
    const md = 'text\n```sh\necho a\n```\n\n```sh\n# not run by the docs test: needs root\nsudo x\n```\n```json\n{}\n```\n';
    const blocks = shellBlocks(md);
    assert.deepEqual(
        blocks.map((b) => [b.line, b.reason]),
        [
            [2, ''],
            [6, 'needs root'],
        ],
    );
    assert.equal(blocks[0].code, 'echo a\n');
    assert.throws(() => shellBlocks('```sh\necho\n'), /unclosed/);
    for (const bad of ['sudo make install', 'apt-get install -y x', 'install -m 0755 a /usr/bin/a', 'ln -s /etc/nginx/x /etc/nginx/y', 'systemctl reload nginx'])
        assert.match(bad, SYSTEM, bad);
    for (const fine of ['curl -s $B/knowledge', 'build/knowhub backup ./backup.db', 'npm ci --no-audit', 'echo installed'])
        assert.doesNotMatch(fine, SYSTEM, fine);
});
