// One proposal card: the queue's (decide) and the history's (outcome) faces.

import { h, basename, shortOid, timeLeft, timeEl, reveal } from './dom.js';
import { renderPreview } from './preview.js';
import { restoreControls } from './restore.js';

const OPERATION_NAMES = {
  commit: 'Commit', branch: 'Create branch', worktree: 'Add worktree', merge: 'Merge',
  rebase: 'Rebase', discard: 'Discard changes', reset: 'Reset', patch: 'Apply patch',
  push: 'Push', branchDelete: 'Delete branches', submodulePointer: 'Submodule pointer', plan: 'Plan',
};

const STATUS_TEXT = {
  pending: 'Pending', approved: 'Approved', executing: 'Executing', completed: 'Completed',
  failed: 'Failed', rejected: 'Rejected', cancelled: 'Cancelled', expired: 'Expired',
};

/** How much time `extend` adds. */
export const EXTEND_SECONDS = 15 * 60;

function risk(card) {
  const level = ['low', 'medium', 'high'].includes(card.risk) ? card.risk : 'medium';
  return h('span', { class: `risk risk-${level}`, title: `${level} risk`, text: level });
}

function where(card) {
  return h('span', { class: 'where' },
    h('span', { class: 'repo', title: card.repoPath || '', text: basename(card.repoPath) || '—' }),
    card.branch ? h('span', { class: 'branch-chip', text: card.branch }) : null);
}

function head(card, extra) {
  return h('header', { class: 'card-head' },
    risk(card),
    h('span', { class: 'op', text: OPERATION_NAMES[card.operationType] || card.operationType }),
    where(card),
    h('span', { class: 'spacer' }),
    extra);
}

function who(card, now) {
  return h('div', { class: 'who' },
    h('span', { class: 'agent', text: card.agentId || 'unknown agent' }),
    h('span', { class: 'sep', text: '·' }),
    timeEl(card.createdAt, now),
    h('span', { class: 'sep', text: '·' }),
    h('code', { class: 'pid', title: card.previewId, text: card.previewId.slice(0, 8) }));
}

function reason(card) {
  return h('blockquote', { class: 'reason', text: card.reason || '' });
}

function otherAgents(card) {
  const o = card.otherAgents;
  const agents = Array.isArray(o) ? o : o && Array.isArray(o.agents) ? o.agents : [];
  if (!agents.length) return null;
  return h('div', { class: 'others', data: { role: 'other-agents' } },
    h('strong', null, agents.length === 1 ? 'Another agent works here' : `${agents.length} other agents work here`),
    h('ul', null, agents.map((a) => {
      const name = typeof a === 'string' ? a : a.agent || a.agentId || a.name || 'agent';
      const overlap = (a && Array.isArray(a.overlappingPaths)) ? a.overlappingPaths : [];
      return h('li', null,
        h('span', { class: 'agent', text: name }),
        a && a.state ? h('span', { class: 'muted', text: ` ${a.state}` }) : null,
        a && a.branch ? [' on ', h('code', { text: a.branch })] : null,
        overlap.length ? h('span', { class: 'overlap' }, ' — also touching ',
          overlap.map((p, i) => [i ? ', ' : '', h('code', { text: p })])) : null);
    })),
    h('p', { class: 'note', text: 'Informational only: it does not block this proposal.' }));
}

/** The queue face: preview and decision controls. `old` is the card's previous element. */
export function queueCard(card, old, actions, now) {
  const pending = card.status === 'pending';
  const left = h('span', { class: 'left', data: { role: 'left' } });
  const extend = pending ? h('button', {
    type: 'button', class: 'ghost small', data: { action: 'extend' },
    title: 'Give this proposal 15 more minutes', on: { click: () => actions.extend(card.previewId, EXTEND_SECONDS) },
  }, '+15 min') : null;
  const el = h('article', {
    class: 'card', data: { id: card.previewId, status: card.status, risk: card.risk || '' },
  },
  head(card, [left, extend]),
  reason(card),
  who(card, now),
  renderPreview(card),
  otherAgents(card),
  pending ? decide(card, actions) : progress(card));
  tick(card, el, now);
  if (old) carryOver(old, el);
  return el;
}

function decide(card, actions) {
  const id = card.previewId;
  const error = h('p', { class: 'error', data: { role: 'error' }, hidden: true });
  const confirm = card.needsConfirmation
    ? h('input', { type: 'checkbox', data: { role: 'confirm' } }) : null;
  // No approval before the preview is on the card; the card is redrawn when it comes.
  const waiting = Boolean(card.previewPending);
  const approve = h('button', {
    type: 'button', class: 'primary', data: { action: 'approve' }, disabled: Boolean(confirm) || waiting,
    title: waiting ? 'Waiting for the preview' : null,
  }, 'Approve');
  if (confirm) confirm.addEventListener('change', () => { approve.disabled = !confirm.checked || waiting; });
  const reasonInput = h('input', {
    type: 'text', maxlength: '1000', placeholder: 'Why? (optional — the agent sees this)',
    data: { role: 'reject-reason' }, 'aria-label': 'Reason for rejecting',
  });
  const rejectForm = h('div', { class: 'reject-form', hidden: true }, reasonInput,
    h('button', { type: 'button', class: 'danger', data: { action: 'reject-confirm' } }, 'Reject'),
    h('button', { type: 'button', class: 'ghost', data: { action: 'reject-cancel' } }, 'Keep'));
  const buttons = h('div', { class: 'buttons' },
    h('button', { type: 'button', class: 'ghost', data: { action: 'reject' } }, 'Reject…'), approve);
  const busy = (on) => {
    for (const b of buttons.querySelectorAll('button')) {
      b.disabled = on || (b === approve && (waiting || Boolean(confirm && !confirm.checked)));
    }
  };
  const run = async (fn) => {
    error.hidden = true;
    busy(true);
    try {
      await fn();
    } catch (e) {
      error.textContent = reveal(e.message);
      error.hidden = false;
      busy(false);
    }
  };
  approve.addEventListener('click', () => run(() => actions.approve(id, Boolean(confirm && confirm.checked))));
  buttons.firstChild.addEventListener('click', () => {
    rejectForm.hidden = false;
    buttons.hidden = true;
    reasonInput.focus();
  });
  rejectForm.querySelector('[data-action="reject-cancel"]').addEventListener('click', () => {
    rejectForm.hidden = true;
    buttons.hidden = false;
  });
  const doReject = () => run(() => actions.reject(id, reasonInput.value.trim() || null));
  rejectForm.querySelector('[data-action="reject-confirm"]').addEventListener('click', doReject);
  reasonInput.addEventListener('keydown', (e) => { if (e.key === 'Enter') doReject(); });
  return h('footer', { class: 'actions' },
    confirm ? h('label', { class: 'confirm' }, confirm,
      'I understand this operation destroys work that git alone cannot bring back; a restore point is taken first.') : null,
    error, h('div', { class: 'row' }, rejectForm, buttons));
}

function progress(card) {
  const text = card.status === 'executing' ? 'Approved — running git…' : 'Approved — waiting for its turn…';
  return h('footer', { class: 'actions progress' },
    h('span', { class: 'spinner', 'aria-hidden': 'true' }), h('span', { data: { role: 'progress' }, text }));
}

/** Keeps what the person was typing or ticking when a live update replaces a card. */
function carryOver(old, el) {
  const oldReason = old.querySelector('[data-role="reject-reason"]');
  const newReason = el.querySelector('[data-role="reject-reason"]');
  if (oldReason && newReason && !oldReason.closest('.reject-form').hidden) {
    newReason.value = oldReason.value;
    newReason.closest('.reject-form').hidden = false;
    el.querySelector('.buttons').hidden = true;
  }
  const oldConfirm = old.querySelector('[data-role="confirm"]');
  const newConfirm = el.querySelector('[data-role="confirm"]');
  if (oldConfirm && newConfirm && oldConfirm.checked) {
    newConfirm.checked = true;
    newConfirm.dispatchEvent(new Event('change'));
  }
}

/** Updates the time left on a queue card; greys it out once expired. */
export function tick(card, el, now) {
  const left = el.querySelector('[data-role="left"]');
  if (!left) return;
  if (card.status !== 'pending') {
    left.textContent = '';
    return;
  }
  const remaining = timeLeft(card.expiresAt, now);
  const text = remaining ? `${remaining} left` : 'expired';
  if (left.textContent !== text) left.textContent = text;
  const expired = remaining === null;
  if (el.classList.contains('expired') !== expired) {
    el.classList.toggle('expired', expired);
    for (const b of el.querySelectorAll('footer button, [data-action="extend"]')) b.disabled = expired;
  }
  left.classList.toggle('soon', !expired && Date.parse(card.expiresAt) - now < 120000);
}

/** The history face: what happened, and the way back. */
export function historyCard(card, old, actions, now) {
  const preview = h('details', { class: 'hist-preview' }, h('summary', null, 'Preview'));
  preview.addEventListener('toggle', () => {
    if (preview.open && preview.children.length === 1) preview.appendChild(renderPreview(card));
  }, { once: false });
  return h('article', { class: 'card hist', data: { id: card.previewId, status: card.status } },
    head(card, [
      h('span', { class: `status status-${card.status}`, data: { role: 'status' }, text: STATUS_TEXT[card.status] || card.status }),
      timeEl(card.decidedAt || card.createdAt, now),
    ]),
    reason(card),
    who(card, now),
    outcome(card, actions),
    preview,
    undo(card, actions));
}

/**
 * Every completed operation offers its undo: back to the restore point taken before it.
 * A write across repositories took one in each; each is restored on its own.
 * Except a push: the remote keeps it whatever happens locally, so rewinding local refs
 * would only hide it; its undo is a new push, proposed from the outcome and approved apart.
 */
function undo(card, actions) {
  const r = card.result || {};
  if (!r.restorePointId || !['completed', 'failed'].includes(card.status)) return null;
  if (card.operationType === 'push') {
    const text = card.status === 'completed' && r.previousRemoteOid
      ? 'The remote keeps this push, so no local restore is offered: undo it with a push back to the old tip, approved on its own.'
      : 'The remote is not rewound from here, and rewinding only the local refs would hide what it has, so no restore is offered.';
    return h('p', { class: 'note', data: { role: 'push-undo-note' }, text });
  }
  const points = Array.isArray(r.restorePoints) ? r.restorePoints.filter((p) => p && p.restorePointId) : [];
  if (!points.length) {
    return restoreControls({ id: r.restorePointId, repoPath: card.repoPath, restorable: true, toast: actions.toast });
  }
  return h('div', { class: 'rp-many' }, points.map((p) => h('div', { class: 'rp-repo', data: { repo: p.repoPath } },
    h('span', { class: 'repo', title: p.repoPath, text: basename(p.repoPath) }),
    restoreControls({ id: p.restorePointId, repoPath: p.repoPath, restorable: true, toast: actions.toast }))));
}

const SHOWN_RESULT_KEYS = new Set(['failure', 'restorePointId', 'restorePoints', 'commitSha', 'message']);

function outcome(card, actions) {
  const r = card.result || {};
  const rows = [];
  if (card.decidedBy && card.decidedBy.channel) rows.push(['Decided', `by a person (${card.decidedBy.channel})`]);
  if (card.status === 'rejected') rows.push(['Why', card.rejectReason || 'no reason given']);
  if (card.status === 'expired') rows.push(['Outcome', 'expired without a decision']);
  if (card.status === 'cancelled') rows.push(['Outcome', 'withdrawn by the agent']);
  if (r.failure) rows.push(['Failure', h('span', { class: 'failure', data: { role: 'failure' } }, r.failure, r.message ? ` — ${r.message}` : '')]);
  if (r.commitSha) rows.push(['Commit', h('code', { class: 'oid', title: r.commitSha, data: { role: 'commit-sha', sha: r.commitSha }, text: shortOid(r.commitSha) })]);
  for (const [k, v] of Object.entries(r)) {
    if (SHOWN_RESULT_KEYS.has(k) || v === null || (Array.isArray(v) && !v.length)) continue;
    rows.push([k, resultValue(k, v)]);
  }
  if (r.restorePointId) {
    rows.push(['Restore point', h('button', {
      type: 'button', class: 'link', data: { action: 'show-restore-point', rp: r.restorePointId },
      on: { click: () => actions.showRestorePoint(card.repoPath, r.restorePointId) },
    }, r.restorePointId)]);
  }
  // The remote cannot be restored from here: undoing a push is a new push, approved apart.
  if (card.operationType === 'push' && card.status === 'completed' && r.previousRemoteOid) {
    rows.push(['Undo', h('button', {
      type: 'button', class: 'small', data: { action: 'undo-push' },
      on: { click: () => actions.undoPush(card.previewId) },
    }, 'Propose a push back to the old tip')]);
  }
  if (!rows.length) return null;
  return h('dl', { class: 'kv outcome' }, rows.map(([k, v]) => [h('dt', null, k), h('dd', null, v)]));
}

/** A result field: per-branch outcomes as a list with their reasons, names as code. */
function resultValue(key, v) {
  const isBranch = (x) => x && typeof x === 'object' && typeof x.branch === 'string';
  if (Array.isArray(v) && v.every(isBranch)) {
    return h('ul', { class: 'result-list', data: { role: `result-${key}` } }, v.map((b) => h('li', { data: { branch: b.branch } },
      h('code', { text: b.branch }),
      b.reason ? h('span', { class: 'muted', text: ` — ${typeof b.reason === 'string' ? b.reason : JSON.stringify(b.reason)}` }) : null)));
  }
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v.map((x, i) => [i ? ', ' : '', h('code', { text: x })]);
  return h('code', { text: typeof v === 'string' ? v : JSON.stringify(v) });
}
