// Restore points: what each one captured, and the way back to it. Restoring is itself
// guarded: the gateway refuses when the repository moved on since, and the page then
// shows what changed since and asks once more.

import * as api from './api.js';
import { h, basename, shortOid, timeEl } from './dom.js';

const LOCAL_ONLY = 'the remote keeps the push, and its remote-tracking ref stays as the remote has it; this puts back the upstream setting the push made. To undo it there, propose a push back to the old tip from the push in History.';

export class RestoreView {
  constructor({ list, empty, select, refresh, toast }) {
    this.list = list;
    this.empty = empty;
    this.select = select;
    this.toast = toast;
    this.repos = new Set();
    this.highlightId = null;
    select.addEventListener('change', () => this.load());
    refresh.addEventListener('click', () => this.load());
  }

  /** Offers `repoPath` in the repository filter. */
  addRepo(repoPath) {
    if (!repoPath || this.repos.has(repoPath)) return;
    this.repos.add(repoPath);
    this.select.appendChild(h('option', { value: repoPath, title: repoPath, text: basename(repoPath) }));
  }

  /** The next load shows the restore points of `repoPath` with `id` highlighted. */
  focus(repoPath, id) {
    this.addRepo(repoPath);
    if (repoPath) this.select.value = repoPath;
    this.highlightId = id;
  }

  async load() {
    if (!this.select.value && this.select.options.length) this.select.selectedIndex = 0;
    if (!this.select.value) {
      this.list.replaceChildren();
      this.empty.hidden = false;
      return;
    }
    this.list.setAttribute('aria-busy', 'true');
    try {
      const points = await api.restorePoints(this.select.value, 100);
      const now = Date.now();
      this.list.replaceChildren(...points.map((rp) => this.row(rp, now)));
      this.empty.hidden = points.length > 0;
      const target = this.highlightId && this.list.querySelector(`[data-id="${CSS.escape(this.highlightId)}"]`);
      if (target) {
        target.classList.add('flash');
        target.scrollIntoView({ block: 'center' });
      }
    } catch (e) {
      this.toast(e.message, 'error');
    } finally {
      this.list.removeAttribute('aria-busy');
    }
  }

  row(rp, now) {
    const captured = rp.captured || {};
    const skipped = Array.isArray(rp.skipped) ? rp.skipped : [];
    this.addRepo(rp.repoPath);
    return h('article', { class: 'rp', data: { id: rp.id } },
      h('header', { class: 'card-head' },
        h('code', { class: 'rp-id', text: rp.id }),
        h('span', { class: 'op', text: rp.operationType || '' }),
        h('span', { class: 'repo', title: rp.repoPath || '', text: basename(rp.repoPath) }),
        h('span', { class: 'spacer' }),
        timeEl(rp.createdAt, now)),
      h('div', { class: 'refpic' },
        h('span', { class: 'muted', text: 'HEAD' }),
        h('code', { class: 'oid', title: rp.headBefore || '', text: shortOid(rp.headBefore) || '—' }),
        h('span', { class: 'edge' }),
        h('code', { class: 'oid', title: rp.headAfter || '', text: shortOid(rp.headAfter) || '—' }),
        h('span', { class: 'muted', text: '(before → after the operation)' })),
      h('div', { class: 'chips' },
        ['refs', 'index', 'worktree'].map((k) => h('span', {
          class: `chip ${captured[k] ? 'on' : 'off'}`, title: captured[k] ? 'captured' : 'not captured',
        }, captured[k] ? `✓ ${k}` : `✗ ${k}`)),
        skipped.length ? h('span', { class: 'chip warn', text: `${skipped.length} skipped` }) : null),
      skipped.length ? h('details', { class: 'skipped' }, h('summary', null, 'Not captured'),
        h('ul', null, skipped.map((s) => h('li', null, h('code', { text: String(s.path) }), ` — ${s.reason}`)))) : null,
      restoreControls({
        id: rp.id, repoPath: rp.repoPath, restorable: rp.restorable !== false, toast: this.toast,
        note: rp.operationType === 'push' ? LOCAL_ONLY : null,
      }));
  }
}

/**
 * A Restore button and its guarded flow: ask once; when the gateway answers that the
 * repository moved on since, show what changed since (refs, files) and ask again with
 * those very changes, so a confirmation never covers changes the person did not see.
 */
export function restoreControls({ id, repoPath, restorable, toast, note }) {
  const result = h('p', { class: 'rp-result', data: { role: 'restore-result' }, hidden: true });
  const panel = h('div', { class: 'rp-confirm', hidden: true });
  const button = h('button', {
    type: 'button', class: 'primary', data: { action: 'restore', rp: id }, disabled: !restorable,
    title: restorable ? 'Put the repository back to how it was before this operation' : 'This restore point can no longer be restored',
  }, 'Restore…');
  const close = () => {
    panel.hidden = true;
    button.hidden = false;
  };
  const run = async (confirmMoved, shown) => {
    for (const b of panel.querySelectorAll('button')) b.disabled = true;
    try {
      const done = await api.restore(id, confirmMoved, shown);
      panel.hidden = true;
      result.hidden = false;
      const kept = Array.isArray(done.keptRefs) ? done.keptRefs : [];
      // Unlike h(), replaceChildren writes null as the text "null": absent parts are ''.
      result.replaceChildren('Restored. The state just before was saved as ',
        h('code', { data: { role: 'new-restore-point' }, text: done.restorePointId || '' }), '.',
        kept.length ? h('span', { class: 'kept', data: { role: 'kept-refs' } },
          ' Kept ', kept.map((r, i) => [i ? ', ' : '', h('code', { text: r })]),
          ': still checked out in another worktree (remove that worktree with git worktree remove, then the branch).') : '',
        done.note ? h('span', { class: 'note', data: { role: 'restore-note-done' }, text: ` ${done.note}` }) : '');
      toast(`Restored ${basename(repoPath)} to ${id}`, 'ok');
    } catch (e) {
      const details = e.status === 409 && e.details ? e.details : null;
      if (details && Array.isArray(details.moved)) {
        movedOn(details);
        return;
      }
      toast(e.message, 'error');
      close();
    }
  };
  const movedOn = (details) => {
    const confirm = h('input', { type: 'checkbox', data: { role: 'confirm-moved' } });
    const go = h('button', {
      type: 'button', class: 'danger', data: { action: 'restore-confirm' }, disabled: true,
      on: { click: () => run(true, details.moved) },
    }, 'Restore anyway');
    confirm.addEventListener('change', () => { go.disabled = !confirm.checked; });
    panel.replaceChildren(
      h('p', { class: 'warn-text' }, h('strong', null, 'The repository moved on since this operation.'),
        ' Restoring also undoes these later changes (they stay reachable through the new restore point):'),
      changedSince(details.changedSince, details.moved),
      h('label', { class: 'confirm' }, confirm, 'Undo these later changes too.'),
      h('div', { class: 'buttons' },
        h('button', { type: 'button', class: 'ghost', data: { action: 'restore-cancel' }, on: { click: close } }, 'Keep as is'),
        go));
  };
  button.addEventListener('click', () => {
    button.hidden = true;
    panel.hidden = false;
    panel.replaceChildren(
      h('p', null, 'Put ', h('strong', { text: basename(repoPath) }),
        ' back to how it was before this operation? Its current state is saved as a new restore point first, so this can be undone too.'),
      note ? h('p', { class: 'warn-text', data: { role: 'restore-note' } }, h('strong', null, 'Local only: '), note) : '',
      h('div', { class: 'buttons' },
        h('button', { type: 'button', class: 'ghost', data: { action: 'restore-cancel' }, on: { click: close } }, 'Keep as is'),
        h('button', { type: 'button', class: 'primary', data: { action: 'restore-now' }, on: { click: () => run(false) } }, 'Restore now')));
  });
  return h('footer', { class: 'actions' }, panel, result, h('div', { class: 'buttons' }, button));
}

/** What changed since, grouped: refs (before → now), files (what happened), the index. */
function changedSince(changed, moved) {
  if (!changed) return h('ul', { class: 'moved', data: { role: 'moved' } }, moved.map((m) => h('li', null, describeMove(m))));
  const refs = Array.isArray(changed.refs) ? changed.refs : [];
  const files = Array.isArray(changed.files) ? changed.files : [];
  return h('div', { class: 'moved', data: { role: 'moved' } },
    refs.length ? [h('h4', null, 'Refs'), h('ul', { data: { role: 'moved-refs' } }, refs.map((r) => h('li', null,
      h('code', { text: String(r.ref) }), ` ${shortish(r.before)} → ${shortish(r.now)}`)))] : null,
    files.length ? [h('h4', null, 'Files'), h('ul', { data: { role: 'moved-files' } }, files.map((f) => h('li', null,
      h('code', { text: String(f.path) }), ` — ${f.change}`)))] : null,
    changed.index ? h('p', { data: { role: 'moved-index' } }, 'The staging area changed too.') : null);
}

function describeMove(m) {
  if (typeof m === 'string') return h('code', { text: m });
  const what = m.ref || m.path || m.what || m.name || '';
  const from = m.expected ?? m.before ?? m.recorded;
  const to = m.actual ?? m.now ?? m.current;
  return [h('code', { text: String(what) }),
    from !== undefined || to !== undefined ? ` ${shortish(from)} → ${shortish(to)}` : ` ${JSON.stringify(m)}`];
}

function shortish(v) {
  if (v === null || v === undefined) return '(none)';
  const s = String(v);
  return /^[0-9a-f]{40,64}$/.test(s) ? s.slice(0, 10) : s;
}
