// The human listener's JSON API. The session token lives in this origin's own storage
// (scheme, host and port: no other server on 127.0.0.1 can read it) and goes out as a
// header, never as a cookie, which the browser would send to every port of the host.
// The CSRF token goes on every state-changing request too.

const STORE_KEY = 'gitward.session';
let session = null;
let csrf = null;
let onLoggedOut = () => {};

function loadSession() {
  try {
    const saved = JSON.parse(localStorage.getItem(STORE_KEY) || 'null');
    session = saved && saved.session;
    csrf = saved && saved.csrf;
  } catch {
    session = null;
    csrf = null;
  }
}

function saveSession(data) {
  session = data && data.session;
  csrf = data && data.csrf;
  try {
    if (session && csrf) localStorage.setItem(STORE_KEY, JSON.stringify({ session, csrf }));
    else localStorage.removeItem(STORE_KEY);
  } catch { /* storage refused: the session lasts as long as the page */ }
}

function authHeaders(headers) {
  if (session) headers['X-Gitward-Session'] = session;
  return headers;
}

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
  const headers = authHeaders({ Accept: 'application/json' });
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET' && csrf) headers['X-CSRF-Token'] = csrf;
  let res;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
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
  if (res.status === 401 && path !== '/api/login') {
    saveSession(null);
    onLoggedOut();
  }
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}

/** Exchanges the one-time login token for a session; resolves to false when refused. */
export async function login(token) {
  try {
    const data = await call('POST', '/api/login', { token });
    saveSession(data);
    return Boolean(session && csrf);
  } catch (e) {
    if (e.status === 401 || e.status === 403) return false;
    throw e;
  }
}

/** Resumes this origin's saved session; resolves to false when there is none. */
export async function resume() {
  loadSession();
  if (!session) return false;
  try {
    const data = await call('GET', '/api/session');
    return Boolean(data && data.csrf);
  } catch (e) {
    if (e.status === 401) return false;
    throw e;
  }
}

const enc = encodeURIComponent;

// Told of transitions the audit ledger has not taken yet (null when there are none).
let onAuditGap = () => {};
export const watchAuditGap = (fn) => { onAuditGap = fn; };
export const proposals = (view) => call('GET', `/api/proposals?view=${enc(view)}`).then((d) => {
  onAuditGap(d.auditGap || null);
  return d.cards || [];
});
// The queue with the number of pending proposals beyond the cards listed (the oldest).
export const queueList = () =>
  call('GET', '/api/proposals?view=pending').then((d) => {
    onAuditGap(d.auditGap || null);
    const cards = d.cards || [];
    return { cards, beyond: Math.max(0, (d.total || 0) - cards.length) };
  });
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

/**
 * The live card stream (Server-Sent Events read with fetch, which can send the session
 * header where EventSource cannot). `handlers`: `open()`, `event(name, data)`,
 * `error(status)` — status 0 for a dropped connection, which is retried. Returns `close()`.
 */
export function events(handlers) {
  const abort = new AbortController();
  let closed = false;
  let retry = null;
  async function connect() {
    let res;
    try {
      res = await fetch('/api/events', {
        headers: authHeaders({ Accept: 'text/event-stream' }),
        credentials: 'omit',
        cache: 'no-store',
        signal: abort.signal,
      });
    } catch {
      return dropped(0);
    }
    if (!res.ok || !res.body) return dropped(res.status);
    handlers.open();
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      let part;
      try {
        part = await reader.read();
      } catch {
        return dropped(0);
      }
      if (part.done) return dropped(0);
      buffer += decoder.decode(part.value, { stream: true }).replace(/\r\n?/g, '\n');
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let name = 'message';
        const data = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) name = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        }
        if (data.length) handlers.event(name, data.join('\n'));
      }
    }
  }
  function dropped(status) {
    if (closed) return;
    handlers.error(status);
    if (status === 401) {
      saveSession(null);
      onLoggedOut();
      return;
    }
    retry = setTimeout(connect, 2000);
  }
  connect();
  return {
    close() {
      closed = true;
      clearTimeout(retry);
      abort.abort();
    },
  };
}
