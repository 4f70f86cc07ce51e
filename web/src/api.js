// Every call to the REST API goes through apiGet: it adds `Authorization: Bearer <token>` when the
// user has entered a token (kept in sessionStorage, for this tab only), revalidates with the
// previous answer's ETag (304: nothing new), and on 401 asks for a token and tries again.
import { askToken } from './token.js';

export const TOKEN_KEY = 'rankscope.token';

export class ApiError extends Error {
    constructor(status, message) {
        super(message);
        this.status = status;
    }
}

export function authHeaders() {
    const t = sessionStorage.getItem(TOKEN_KEY);
    return t ? { Authorization: `Bearer ${t}` } : {};
}

async function request(path, etag) {
    const headers = authHeaders();
    if (etag) headers['If-None-Match'] = etag;
    return fetch(path, { headers, cache: 'no-store', credentials: 'omit' });
}

async function errorOf(res) {
    try {
        const doc = await res.json();
        return new ApiError(res.status, doc?.error?.message || res.statusText);
    } catch {
        return new ApiError(res.status, res.statusText);
    }
}

// The answer early.js asked for already (once: the first GET of that path), or null.
async function earlyResponse(path) {
    const early = window.rankscopeEarly;
    if (!early || !early.has(path)) return null;
    const p = early.get(path);
    early.delete(path);
    return p;
}

// GET path -> {data, etag} (JSON), or {notModified: true} when `etag` still holds.
export async function apiGet(path, etag) {
    let res = (!etag && (await earlyResponse(path))) || (await request(path, etag));
    while (res.status === 401) {
        const err = await errorOf(res);
        await askToken(err.message);
        res = await request(path, etag);
    }
    if (res.status === 304) return { notModified: true, etag };
    if (!res.ok) throw await errorOf(res);
    return { data: await res.json(), etag: res.headers.get('ETag') };
}

// GET path as a file the browser saves as `filename` (the token goes along, so no plain link).
export async function apiDownload(path, filename) {
    let res = await request(path);
    while (res.status === 401) {
        await askToken((await errorOf(res)).message);
        res = await request(path);
    }
    if (!res.ok) throw await errorOf(res);
    saveBlob(await res.blob(), filename);
}

// Hands `blob` to the browser as a file it saves as `filename`.
export function saveBlob(blob, filename) {
    const url = URL.createObjectURL(blob);
    const a = document.createElement('a');
    a.href = url;
    a.download = filename;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
}

export const jobPath = (job, what, params) => {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params || {})) if (v !== undefined && v !== null && v !== '') q.set(k, v);
    const s = q.toString();
    return `/v1/jobs/${encodeURIComponent(job)}${what ? `/${what}` : ''}${s ? `?${s}` : ''}`;
};
