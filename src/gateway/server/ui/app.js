// The approval page: sign in with the one-time link, then a live queue of proposals.

import * as api from './api.js';
import { h } from './dom.js';
import { KeyedList } from './list.js';
import { queueCard, historyCard, tick } from './card.js';
import { RestoreView } from './restore.js';

const $ = (id) => document.getElementById(id);
const LIVE = ['pending', 'approved', 'executing'];
const HISTORY_LIMIT = 100;

const state = { view: 'queue', historyLoaded: false, events: null };

function setGate(kind, title, text, hint) {
  document.body.dataset.state = kind;
  $('gate').hidden = kind === 'ready';
  $('gate-title').textContent = title;
  $('gate-text').textContent = text || '';
  $('gate-hint').hidden = !hint;
  if (hint) $('gate-hint').textContent = hint;
}

function toast(message, kind) {
  const el = h('div', { class: `toast ${kind || ''}`, role: kind === 'error' ? 'alert' : 'status', text: message });
  $('toasts').appendChild(el);
  setTimeout(() => el.classList.add('out'), 5000);
  setTimeout(() => el.remove(), 5600);
}

const actions = {
  async approve(id, confirmDestructive) {
    upsert(await api.approve(id, confirmDestructive));
  },
  async reject(id, reason) {
    upsert(await api.reject(id, reason));
  },
  async extend(id, seconds) {
    try {
      upsert(await api.extend(id, seconds));
    } catch (e) {
      toast(e.message, 'error');
    }
  },
  async undoPush(id) {
    try {
      upsert(await api.undoPush(id));
      toast('A push back to the old tip is proposed: approve it in the queue.');
    } catch (e) {
      toast(e.message, 'error');
    }
  },
  toast,
  showRestorePoint(repoPath, id) {
    restoreView.focus(repoPath, id);
    show('restore');
  },
};

const byCreated = (a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0);
const byDecided = (a, b) => {
  const x = a.decidedAt || a.createdAt;
  const y = b.decidedAt || b.createdAt;
  return x > y ? -1 : x < y ? 1 : 0;
};

// Pending proposals the server counted but did not list (never the newest).
let beyond = 0;

const queue = new KeyedList($('queue-list'), {
  accepts: (c) => LIVE.includes(c.status),
  compare: byCreated,
  render: (c, old) => queueCard(c, old, actions, Date.now()),
  changed: () => {
    const pending = [...queue.entries.values()].filter((e) => e.card.status === 'pending').length + beyond;
    $('queue-count').textContent = String(pending);
    $('queue-count').dataset.zero = String(pending === 0);
    $('queue-empty').hidden = queue.size > 0;
    document.title = pending ? `(${pending}) gitward · approvals` : 'gitward · approvals';
  },
});

const historyList = new KeyedList($('history-list'), {
  accepts: (c) => !LIVE.includes(c.status),
  compare: byDecided,
  render: (c) => historyCard(c, null, actions, Date.now()),
  limit: HISTORY_LIMIT,
  changed: () => { $('history-empty').hidden = historyList.size > 0; },
});

const restoreView = new RestoreView({
  list: $('restore-list'), empty: $('restore-empty'), select: $('restore-repo'),
  refresh: $('restore-refresh'), toast,
});

/** The latest state of every card this page has seen, to order late events against. */
const known = new Map();
const RANK = { pending: 0, approved: 1, executing: 2 };
const rank = (status) => RANK[status] ?? 3;

/**
 * Events may arrive out of order (a snapshot read before the preview was stored can be
 * sent after it): a card never moves back in its lifecycle, and a computed preview
 * never disappears again.
 */
function newer(before, card) {
  if (!before) return card;
  if (rank(card.status) < rank(before.status)) return null;
  if (before.preview && !card.preview) return { ...card, preview: before.preview, previewPending: false };
  return card;
}

function upsert(incoming) {
  if (!incoming || !incoming.previewId) return;
  const before = known.get(incoming.previewId);
  const card = newer(before, incoming);
  if (!card) return;
  known.set(card.previewId, card);
  queue.upsert(card);
  if (state.historyLoaded) historyList.upsert(card);
  restoreView.addRepo(card.repoPath);
  if (before && LIVE.includes(before.status) && !LIVE.includes(card.status)) announce(card);
}

function announce(card) {
  const r = card.result || {};
  if (card.status === 'completed') {
    toast(r.commitSha ? `Done: ${card.operationType} ${r.commitSha.slice(0, 10)}` : `Done: ${card.operationType}`, 'ok');
  } else if (card.status === 'failed') {
    toast(`Failed: ${card.operationType}${r.failure ? ` (${r.failure})` : ''}. See History.`, 'error');
  }
}

function show(view) {
  state.view = view;
  for (const tab of document.querySelectorAll('.tab')) {
    if (tab.dataset.view === view) tab.setAttribute('aria-current', 'page');
    else tab.removeAttribute('aria-current');
  }
  for (const section of document.querySelectorAll('.view')) section.hidden = section.dataset.view !== view;
  if (view === 'history') loadHistory();
  if (view === 'restore') restoreView.load();
}

// The audit ledger refuses entries (a full disk): decisions still work, and the page says
// that their record is waiting rather than let it look complete.
api.watchAuditGap((gap) => {
  const el = document.getElementById('audit-gap');
  el.hidden = !gap;
  el.textContent = gap
    ? `The audit ledger is not taking entries (${gap.error}): ${gap.waiting} transition(s) wait and are retried.`
    : '';
});

async function loadQueue() {
  const start = performance.now();
  performance.mark('gw-render-start');
  const { cards, beyond: unlisted } = await api.queueList();
  beyond = unlisted;
  performance.mark('gw-fetched');
  for (const c of cards) {
    restoreView.addRepo(c.repoPath);
    known.set(c.previewId, c);
  }
  queue.setAll(cards);
  performance.mark('gw-render-end');
  performance.measure('gw-render', 'gw-fetched', 'gw-render-end');
  // The first frame that shows the cards: layout and paint included.
  requestAnimationFrame(() => setTimeout(() => {
    document.body.dataset.renderMs = String(Math.round(performance.now() - start));
    document.body.dataset.cards = String(queue.size);
  }, 0));
}

async function loadHistory() {
  try {
    const cards = await api.proposals('history');
    for (const c of cards) restoreView.addRepo(c.repoPath);
    historyList.setAll(cards);
    state.historyLoaded = true;
  } catch (e) {
    toast(e.message, 'error');
  }
}

function setLive(on) {
  $('live').dataset.live = on ? 'on' : 'off';
  $('live').querySelector('.live-text').textContent = on ? 'live' : 'reconnecting…';
}

function listen() {
  if (state.events) state.events.close();
  let dropped = false;
  state.events = api.events({
    open() {
      setLive(true);
      // Events sent while the stream was down are gone: read the lists again.
      if (dropped) {
        loadQueue().catch(() => {});
        if (state.historyLoaded) loadHistory();
      }
    },
    event(name, data) {
      if (name !== 'card') return;
      try {
        upsert(JSON.parse(data));
      } catch { /* a malformed event changes nothing */ }
    },
    error() {
      dropped = true;
      setLive(false);
    },
  });
}

function loggedOut() {
  if (state.events) state.events.close();
  state.events = null;
  document.querySelector('.tabs').hidden = true;
  for (const section of document.querySelectorAll('.view')) section.hidden = true;
  setGate('signed-out', 'Open the login link',
    'This page needs the one-time login link that `gitward gateway` printed when it started. Open that link in this browser.',
    'gitward gateway    # its first line holds "login": the link to open');
}

async function signIn() {
  if (location.pathname === '/login') {
    const raw = location.hash.slice(1);
    const token = new URLSearchParams(raw).get('token') || raw;
    // The token leaves the address bar and the history before anything else happens.
    window.history.replaceState(null, '', '/');
    if (token && await api.login(token)) return true;
    setGate('refused', 'This login link no longer works',
      'Each login link works exactly once, and this one was already used (or is not valid). Use the browser that opened it first, or restart the gateway for a new link.');
    return false;
  }
  if (await api.resume()) return true;
  loggedOut();
  return false;
}

// A link from the host (`/#proposal=ID`) opens the page on that proposal's card.
function focusLinked() {
  const id = new URLSearchParams(location.hash.slice(1)).get('proposal');
  const entry = id && queue.entries.get(id);
  if (!entry) return;
  show('queue');
  entry.el.scrollIntoView({ block: 'center' });
  entry.el.classList.add('linked');
}

async function main() {
  api.setLoggedOutHandler(loggedOut);
  for (const tab of document.querySelectorAll('.tab')) tab.addEventListener('click', () => show(tab.dataset.view));
  try {
    if (!(await signIn())) return;
    document.querySelector('.tabs').hidden = false;
    setGate('ready', '');
    show('queue');
    await loadQueue();
    focusLinked();
    window.addEventListener('hashchange', focusLinked);
    listen();
    setInterval(() => {
      const now = Date.now();
      queue.each((card, el) => tick(card, el, now));
    }, 1000);
  } catch (e) {
    setGate('error', 'The gateway is not answering', e.message);
  }
}

main();
