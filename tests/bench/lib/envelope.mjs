// envelope.mjs: what the benchmarks share of KnowHub's answers.

/** The data of a success envelope, or throws with the error (its code in err.code). */
export function dataOf(r, what) {
    const j = r.json;
    if (r.status === 200 && j && (j.status === 'success' || j.success === true)) return j.data;
    const e = j?.error;
    const msg = e ? `${e.code}: ${e.message}` : `HTTP ${r.status} ${r.text.slice(0, 200)}`;
    const err = new Error(`${what}: ${msg}`);
    err.code = e?.code;
    throw err;
}
