// api.js: every call to the KnowHub API. The browser is logged in by an
// HttpOnly session cookie; each request echoes the CSRF token
// (X-CSRF-Token) that login and /auth/me hand out. Success is
// {status:"success", data}; any error, whatever its HTTP status, becomes an
// ApiError with the envelope's code and message, and its key and params when
// it has them (the panel shows those in the UI's language). A 401 tells the app the
// login is gone (event "auth-lost"). A 429 from nginx's rate limit (the
// request never reached knowhub) is sent again, at most twice.

let csrf = null;

export class ApiError extends Error {
    constructor(status, code, message, retry = false, requestId = '', key = '', params = {}) {
        super(message || code);
        this.name = 'ApiError';
        this.status = status;
        this.code = code;
        this.retry = retry;
        this.requestId = requestId;
        this.key = key;
        this.params = params;
    }
}

export function setCsrf(token) {
    csrf = token || null;
}

/** One request; resolves with data, rejects with ApiError (or AbortError). */
export async function request(method, path, body, { headers = {}, signal } = {}) {
    const h = { Accept: 'application/json', ...headers };
    const init = { method, headers: h, credentials: 'same-origin', signal, cache: 'no-store' };
    if (body !== undefined) {
        h['Content-Type'] = 'application/json';
        init.body = JSON.stringify(body);
    }
    // Sent on reads too: a read that writes (a search with trace_id, one the
    // LLM routes) needs it under the cookie like any other write.
    if (csrf) h['X-CSRF-Token'] = csrf;
    let res;
    for (let attempt = 0; ; attempt++) {
        try {
            res = await fetch(path, init);
        } catch (e) {
            if (e && e.name === 'AbortError') throw e;
            throw new ApiError(0, 'NETWORK_ERROR', e && e.message ? e.message : 'network error', true, '', 'network');
        }
        // nginx's rate limit answered before the request reached knowhub: safe to send again
        if (res.status !== 429 || attempt === 2) break;
        const wait = Math.min(5, Number(res.headers.get('Retry-After')) || 1);
        await new Promise((r) => setTimeout(r, wait * 1000));
    }
    let json = null;
    try {
        json = await res.json();
    } catch {
        json = null;
    }
    if (res.ok && json && json.status === 'success') return json.data;
    const err = (json && json.error) || {};
    if (res.status === 401 && path !== '/api/auth/login') window.dispatchEvent(new CustomEvent('auth-lost'));
    const key = typeof err.key === 'string' ? err.key : '';
    const params = err.params && typeof err.params === 'object' && !Array.isArray(err.params) ? err.params : {};
    throw new ApiError(res.status, err.code || `HTTP_${res.status}`, err.message || res.statusText, !!err.retry, err.request_id || '', key, params);
}

const get = (p, o) => request('GET', p, undefined, o);
const post = (p, b = {}, o) => request('POST', p, b, o);
const del = (p, o) => request('DELETE', p, undefined, o);
const put = (p, b = {}, o) => request('PUT', p, b, o);
const enc = encodeURIComponent;

export const auth = {
    async login(token) {
        const d = await post('/api/auth/login', { token });
        setCsrf(d.csrf_token);
        return d;
    },
    async me() {
        const d = await get('/api/auth/me');
        if (d.csrf_token) setCsrf(d.csrf_token);
        return d;
    },
    async logout() {
        try {
            await post('/api/auth/logout', {});
        } finally {
            setCsrf(null);
        }
    },
};

export const knowledge = {
    limits: () => post('/api/knowledge/limits'),
    list: (category) => post('/api/knowledge/list', { category }),
    read: (category, path) => post('/api/knowledge/read', { category, path }),
    write: (category, path, content, extra = {}) => post('/api/knowledge/write', { category, path, content, ...extra }),
    rename: (category, path, newPath, extra = {}) => post('/api/knowledge/rename', { category, path, new_path: newPath, ...extra }),
    remove: (category, path) => post('/api/knowledge/delete', { category, path }),
    search: (query, categories) => post('/api/knowledge/search', categories ? { query, categories } : { query }),
    entry: (id) => get(`/api/knowledge/${enc(id)}`),
    revisions: (id) => get(`/api/knowledge/${enc(id)}/revisions`),
    revert: (id, version) => post(`/api/knowledge/${enc(id)}/revert`, { version }),
    /** Typed links (docs/conflicts.md): an entry's, add one {to, type, reason}, remove one. */
    links: (id) => get(`/api/knowledge/${enc(id)}/links`),
    link: (id, body) => post(`/api/knowledge/${enc(id)}/links`, body),
    unlink: (id, to, type) => del(`/api/knowledge/${enc(id)}/links/${enc(to)}/${enc(type)}`),
    /** The stale view (docs/conflicts.md "Time"), and an entry's change (PUT: its time). */
    stale: (limit = 50, offset = 0) => get(`/api/knowledge/stale?limit=${limit}&offset=${offset}`),
    update: (id, body) => put(`/api/knowledge/${enc(id)}`, body),
    /** The server's safe rendering of unsaved Markdown (POST /api/knowledge/preview). */
    preview: (category, content) => post('/api/knowledge/preview', { category, content }),
    distill: (body, { lang, signal } = {}) =>
        post('/api/knowledge/distill-experience', body, { signal, headers: lang ? { 'Accept-Language': lang } : {} }),
    /** Whether the server has an LLM (GET /api/llm/usage's `configured`; today's usage, so cheap). */
    llmConfigured: async () => (await get(`/api/llm/usage?since=${new Date().toISOString().slice(0, 10)}`)).configured === true,
};

export const sessions = {
    list: () => get('/api/sessions'),
    get: (id) => get(`/api/sessions/${enc(id)}`),
    put: (session) => post('/api/sessions', session),
    remove: (id) => del(`/api/sessions/${enc(id)}`),
    removeTable: (id, tableId) => del(`/api/sessions/${enc(id)}/tables/${enc(tableId)}`),
};

export const traces = {
    list: (limit = 50, offset = 0) => get(`/api/traces?limit=${limit}&offset=${offset}`),
    log: (traceId) => get(`/api/traces/${enc(traceId)}/knowledge_log`),
};

export const jobs = {
    list: () => get('/api/jobs'),
};

export const overview = {
    get: () => get('/api/overview'),
};

export const tokens = {
    list: () => get('/api/tokens'),
    create: (body) => post('/api/tokens', body),
    revoke: (id) => del(`/api/tokens/${enc(id)}`),
};
