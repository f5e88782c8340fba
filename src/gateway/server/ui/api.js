// The human listener's JSON API. The session lives in an HttpOnly cookie the page never
// sees; the CSRF token it does hold goes on every state-changing request.

let csrf = null;
let onLoggedOut = () => {};

/** Called when the API answers 401: the session is gone. */
export function setLoggedOutHandler(fn) {
  onLoggedOut = fn;
}

/** An API failure with the listener's `{error:{code,message,details}}` body. */
export class ApiError extends Error {
  constructor(status, body) {
    const detail = body && body.error ? body.error : {};
    super(detail.message || `The gateway answered ${status}.`);
    this.status = status;
    this.code = detail.code || String(status);
    this.details = detail.details || null;
  }
}

async function call(method, path, body) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET' && csrf) headers['X-CSRF-Token'] = csrf;
  let res;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      cache: 'no-store',
      redirect: 'error',
    });
  } catch (e) {
    throw new ApiError(0, { error: { code: 'unreachable', message: 'The gateway is not answering. Is it still running?' } });
  }
  let data = null;
  const text = await res.text();
  if (text) {
    try { data = JSON.parse(text); } catch { data = null; }
  }
  if (res.status === 401 && path !== '/api/login') onLoggedOut();
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}

/** Exchanges the one-time login token for a session; resolves to false when refused. */
export async function login(token) {
  try {
    const data = await call('POST', '/api/login', { token });
    csrf = data && data.csrf;
    return Boolean(csrf);
  } catch (e) {
    if (e.status === 401 || e.status === 403) return false;
    throw e;
  }
}

/** Resumes an existing session; resolves to false when there is none. */
export async function session() {
  try {
    const data = await call('GET', '/api/session');
    csrf = data && data.csrf;
    return Boolean(csrf);
  } catch (e) {
    if (e.status === 401) return false;
    throw e;
  }
}

const enc = encodeURIComponent;

export const proposals = (view) => call('GET', `/api/proposals?view=${enc(view)}`).then((d) => {
  onAuditGap(d.auditGap || null);
  return d.cards || [];
});
// Told of transitions the audit ledger has not taken yet (null when there are none).
let onAuditGap = () => {};
export const watchAuditGap = (fn) => { onAuditGap = fn; };
export const proposal = (id) => call('GET', `/api/proposals/${enc(id)}`);
export const approve = (id, confirmDestructive) =>
  call('POST', `/api/proposals/${enc(id)}/approve`, { confirmDestructive });
export const reject = (id, reason) => call('POST', `/api/proposals/${enc(id)}/reject`, { reason });
export const extend = (id, seconds) => call('POST', `/api/proposals/${enc(id)}/extend`, { seconds });
export const undoPush = (id) => call('POST', `/api/proposals/${enc(id)}/undo-push`, {});

export function restorePoints(repoPath, limit) {
  const q = new URLSearchParams();
  if (repoPath) q.set('repoPath', repoPath);
  q.set('limit', String(limit));
  return call('GET', `/api/restore-points?${q}`).then((d) => d.restorePoints || []);
}

/** `moved`: what moved as the person was shown it, when confirming a restore after it. */
export const restore = (id, confirmMoved, moved) =>
  call('POST', `/api/restore-points/${enc(id)}/restore`, moved ? { confirmMoved, moved } : { confirmMoved });
