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

/**
 * Creates an entry with POST /api/knowledge and returns its id. A write held
 * for review (the poisoning screen quarantines whatever the policy; a review
 * policy queues) is approved with adminToken() and noted in held, as
 * "what status (reasons)", so a benchmark measures every entry it meant to
 * create and says which were held.
 */
export async function createServed(s, token, adminToken, body, what, held) {
    let d = dataOf(await s.api('POST', '/api/knowledge', { token, body }), `create ${what}`);
    if (d.proposal_id) {
        held.push(`${what} ${d.status} (${(d.reasons || []).join(', ') || 'review policy'})`);
        d = dataOf(await s.api('POST', `/api/review/${d.proposal_id}/decide`,
            { token: adminToken(), body: { decision: 'approve' } }), `approve ${what}`);
        d = { id: d.result_id };
    }
    if (!d.id) throw new Error(`create ${what}: no id in the answer`);
    return d.id;
}
