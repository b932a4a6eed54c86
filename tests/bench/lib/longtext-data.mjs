// longtext-data.mjs: the long-text benchmark's sets (tests/bench/longtext/*.json),
// read and checked: what longtext.mjs measures and tests/http/search_parity.test.mjs
// compares between the backends.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The sets' directory in the repository. */
export const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'longtext');

/** Throws an Error about the data (err.badData is set). */
function badData(msg) {
    const err = new Error(msg);
    err.badData = true;
    throw err;
}

/** Checks one parsed file; name is its file name for the messages. */
function validateSet(set, name) {
    if (!set || typeof set !== 'object') badData(`${name}: not a JSON object`);
    if (typeof set.space !== 'string' || !set.space) badData(`${name}: "space" must be a non-empty string`);
    if (set.lang !== 'en' && set.lang !== 'zh') badData(`${name}: "lang" must be "en" or "zh" (got ${JSON.stringify(set.lang)})`);
    if (!Array.isArray(set.entries) || !set.entries.length) badData(`${name}: "entries" must be a non-empty array`);
    if (!Array.isArray(set.questions)) badData(`${name}: "questions" must be an array`);
    const keys = new Set();
    for (const [i, e] of set.entries.entries()) {
        if (!e || typeof e.key !== 'string' || !e.key) badData(`${name}: entry #${i + 1} has no key`);
        if (keys.has(e.key)) badData(`${name}: key ${e.key} is used twice`);
        keys.add(e.key);
        for (const f of ['title', 'content']) if (typeof e[f] !== 'string' || !e[f]) badData(`${name}: entry ${e.key} has no ${f}`);
        if (e.scenario !== undefined && typeof e.scenario !== 'string') badData(`${name}: entry ${e.key}: scenario must be a string`);
        if (e.tags !== undefined && (!Array.isArray(e.tags) || e.tags.some((t) => typeof t !== 'string')))
            badData(`${name}: entry ${e.key}: tags must be an array of strings`);
    }
    for (const [i, q] of set.questions.entries()) {
        if (!q || typeof q.q !== 'string' || !q.q.trim()) badData(`${name}: question #${i + 1} has no text "q"`);
        if (!Array.isArray(q.answers)) badData(`${name}: question "${q.q}" has no "answers" array`);
        for (const k of q.answers) if (!keys.has(k)) badData(`${name}: question "${q.q}" names unknown key ${JSON.stringify(k)}`);
        if (new Set(q.answers).size !== q.answers.length) badData(`${name}: question "${q.q}" names a key twice`);
    }
}

/** Every DIR/*.json, checked, sorted by file name: [{file, space, lang, entries, questions}]. */
export function loadSets(dir = DIR) {
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) badData(`${dir} is not a directory`);
    const names = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
    if (!names.length) badData(`no *.json file in ${dir}`);
    const sets = [];
    const spaces = new Map();
    for (const name of names) {
        let set;
        try {
            set = JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8'));
        } catch (e) {
            badData(`${name}: ${e.message}`);
        }
        validateSet(set, name);
        if (spaces.has(set.space)) badData(`${name} and ${spaces.get(set.space)} both use space ${set.space}`);
        spaces.set(set.space, name);
        sets.push({ file: name.replace(/\.json$/, ''), space: set.space, lang: set.lang, entries: set.entries, questions: set.questions });
    }
    return sets;
}
