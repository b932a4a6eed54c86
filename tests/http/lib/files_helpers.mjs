// files_helpers.mjs: small helpers for the file-view tests (files*.test.mjs):
// the POST endpoints of the file view, the knowhub CLI against a stack's
// data directory, and text builders for the limits.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BIN, ROOT, assertNoBugs, cliEnv } from './stack.mjs';
import { ok } from './expect.mjs';

export const EXAMPLES = path.join(ROOT, 'docs/examples/knowledge');

/** Today's UTC date as YYYY-MM-DD (the auto header's created/updated). */
export const today = () => new Date().toISOString().slice(0, 10);

/** n Chinese characters (3 UTF-8 bytes each, one Unicode character each). */
export const zh = (n) => '知识库规则经验'.repeat(Math.ceil(n / 7)).slice(0, n);

/** The rules block of REFERENCE.md section 3 for [{title, body}]. */
export function rulesBlock(rules) {
    if (!rules.length) return '';
    return (
        '\n\n## \u26a0 User Rules (MANDATORY \u2014 override defaults)\n\n' +
        'The following rules are set by the user and MUST be followed.\n' +
        'When a user rule conflicts with other guidelines, the user rule takes priority.\n' +
        rules.map((r) => `\n### ${r.title}\n${r.body}\n`).join('')
    );
}

/** The file view of one stack for one token: every call returns the raw response. */
export function fileView(s, token) {
    const post = (name, body) => s.api('POST', `/api/knowledge/${name}`, { token, body });
    return {
        token,
        limits: (body) => post('limits', body),
        list: (category) => post('list', category === undefined ? {} : { category }),
        read: (category, p) => post('read', { category, path: p }),
        write: (category, p, content, extra = {}) => post('write', { category, path: p, content, ...extra }),
        del: (category, p) => post('delete', { category, path: p }),
        rename: (category, p, newPath, extra = {}) => post('rename', { category, path: p, new_path: newPath, ...extra }),
        trash: (body = {}) => post('trash', body),
        rules: () => s.api('GET', '/api/knowledge/rules', { token }),
        context: (body) => post('context', body),
        exportJsonl: () => s.api('GET', '/api/knowledge/export', { token }),
        entry: (id) => s.api('GET', `/api/knowledge/${id}`, { token }),
        revisions: (id) => s.api('GET', `/api/knowledge/${id}/revisions`, { token }),
        revert: (id, body = {}) => s.api('POST', `/api/knowledge/${id}/revert`, { token, body }),
        post,
        /** write that must succeed; returns data. */
        async put(category, p, content, extra) {
            return ok(await this.write(category, p, content, extra));
        },
        /** read that must succeed; returns data. */
        async get(category, p) {
            return ok(await this.read(category, p));
        },
        /** paths listed in a category. */
        async paths(category) {
            return ok(await this.list(category)).items.map((i) => i.path);
        },
    };
}

/** Run the knowhub binary against a data directory (and its stack's
 * PostgreSQL database, if any): {status, stdout, stderr}; its stderr shows
 * no bug, whatever its exit status. */
export function knowhub(dataDir, args) {
    const r = spawnSync(BIN, args, {
        env: { ...process.env, ...cliEnv(dataDir) },
        encoding: 'utf8',
        timeout: 60000,
    });
    if (r.error) throw r.error;
    assertNoBugs(r.stderr, `knowhub ${args.join(' ')}`);
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A fresh temporary directory (removed by rmTemp or at the end of the test file). */
const temps = [];
process.on('exit', () => {
    if (process.env.KNOWHUB_KEEP_TEST_DATA) return;
    for (const d of temps) fs.rmSync(d, { recursive: true, force: true });
});
export function tempDir(prefix = 'knowhub-files-') {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    temps.push(d);
    return d;
}

/** Write files {relpath: string|Buffer} under dir (folders created). */
export function writeTree(dir, files) {
    for (const [rel, content] of Object.entries(files)) {
        const f = path.join(dir, rel);
        fs.mkdirSync(path.dirname(f), { recursive: true });
        fs.writeFileSync(f, content);
    }
    return dir;
}

/** Every regular file under dir: {relpath: Buffer}, relpaths with '/'. */
export function readTree(dir) {
    const out = {};
    const walk = (d, prefix) => {
        for (const e of fs.readdirSync(d, { withFileTypes: true })) {
            const rel = prefix ? `${prefix}/${e.name}` : e.name;
            if (e.isDirectory()) walk(path.join(d, e.name), rel);
            else if (e.isFile()) out[rel] = fs.readFileSync(path.join(d, e.name));
        }
    };
    walk(dir, '');
    return out;
}

/** The non-empty lines of a command's output. */
export const outputLines = (out) => out.split('\n').filter(Boolean);

const spaceCounts = new Map();
/** A new space on stack s named prefix-N, and an admin file view of it: [name, view]. */
export function newSpace(s, prefix) {
    const n = (spaceCounts.get(prefix) || 0) + 1;
    spaceCounts.set(prefix, n);
    const name = `${prefix}-${n}`;
    return [name, fileView(s, s.token(name, 'admin', 'import'))];
}
