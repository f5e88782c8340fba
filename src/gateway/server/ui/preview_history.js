// Previews of the writes that move history or drop work: a merge's conflict preflight,
// what a discard loses, what a reset leaves behind or overwrites, and a plan's numbered
// steps, each with its own preview and the destructive ones flagged; per repository the
// branches a branch deletion removes or keeps, and why.

import { h, basename } from './dom.js';
import { diffBox, kv, oid, simpleFileRow } from './preview.js';

function list(items, render, empty) {
  if (!items.length) return h('p', { class: 'note', text: empty });
  return h('ul', { class: 'files' }, items.map(render));
}

export function mergePreview(p) {
  const conflicts = Array.isArray(p.conflicts) ? p.conflicts : [];
  const files = Array.isArray(p.files) ? p.files : [];
  const verdict = p.clean
    ? h('span', { class: 'chip', data: { role: 'verdict' }, text: 'merges cleanly' })
    : h('span', { class: 'chip warn', data: { role: 'verdict' }, text: `${p.conflictsTotal ?? conflicts.length} conflicting path(s): the merge will stop and be undone` });
  return h('div', { class: 'preview merge', data: { role: 'preview' } },
    kv([
      ['Into', [h('code', { text: String(p.targetRef ?? '') }), ' ', oid(p.targetOid)]],
      ['From', [h('code', { text: String(p.sourceRef ?? '') }), ' ', oid(p.sourceOid)]],
      ['Strategy', [String(p.strategy ?? 'merge'), p.fastForward && p.strategy === 'merge' ? h('span', { class: 'tag', text: 'fast-forward' }) : null]],
      ['Commits', `${p.commitsToMerge ?? 0} to bring in`],
      ['Preflight', verdict],
    ]),
    conflicts.length ? list(conflicts, (c) => h('li', { class: 'file conflict', data: { path: String(c.path) } },
      h('span', { class: 'st st-u', text: 'U' }),
      h('span', { class: 'path', text: String(c.path) }),
      h('span', { class: 'num muted', text: (c.types || []).join(', ') })), '') : null,
    h('div', { class: 'files-head' }, h('span', null, `${files.length} ${files.length === 1 ? 'file' : 'files'} change`)),
    list(files, simpleFileRow, 'No file changes.'));
}

export function discardPreview(p) {
  const files = Array.isArray(p.files) ? p.files : [];
  return h('div', { class: 'preview discard', data: { role: 'preview' } },
    h('p', { class: 'warn-text' }, h('strong', null, 'Lost from the working tree: '),
      `${files.length} ${files.length === 1 ? 'file' : 'files'}. A safety stash is recorded first.`),
    list(files, (f) => simpleFileRow(f, f.bytes != null ? `${f.bytes} bytes` : null), 'Nothing to discard.'),
    p.diff ? diffBox(p.diff, p.diffTruncated) : null);
}

function commitRows(side) {
  const commits = side && Array.isArray(side.commits) ? side.commits : [];
  return list(commits, (c) => h('li', { class: 'file commit-row' },
    oid(c.sha), h('span', { class: 'path', text: String(c.subject ?? '') })), 'None.');
}

export function resetPreview(p) {
  const overwritten = Array.isArray(p.overwritten) ? p.overwritten : null;
  const behind = p.commitsLeftBehind || {};
  return h('div', { class: 'preview reset', data: { role: 'preview' } },
    kv([
      ['Branch', h('code', { text: String(p.branch ?? 'detached HEAD') })],
      ['Moves', [oid(p.headOid), ' → ', h('code', { text: String(p.targetRef ?? '') }), ' ', oid(p.targetOid)]],
      ['Mode', h('strong', { text: String(p.mode ?? 'mixed') })],
    ]),
    h('div', { class: 'files-head' }, h('span', null, `${behind.total ?? 0} commit(s) left behind`)),
    commitRows(behind),
    overwritten ? [
      h('p', { class: 'warn-text' }, h('strong', null, 'Overwritten: '),
        `${overwritten.length} ${overwritten.length === 1 ? 'file' : 'files'} with uncommitted changes.`),
      list(overwritten, (f) => simpleFileRow({ path: f.path, status: f.status === 'untracked' ? 'untracked' : 'modified' }), 'No local change is lost.'),
    ] : null);
}

export function planPreview(p, render) {
  const steps = Array.isArray(p.steps) ? p.steps : [];
  const step = (s) => h('li', {
    class: 'step',
    data: { step: String(s.step), type: String(s.operationType), destructive: s.destructive ? 'true' : 'false' },
  },
  h('div', { class: 'step-head' },
    h('strong', { text: `${s.step}. ${s.operationType}` }),
    s.destructive ? h('span', { class: 'chip warn', text: 'destroys work' }) : null),
  s.preview
    ? render({ operationType: s.operationType, preview: s.preview, fields: s.fields })
    : h('p', { class: 'note', text: String(s.previewError ?? '') }));
  return h('div', { class: 'preview plan', data: { role: 'preview' } },
    h('p', { class: 'note', text: 'All or nothing: if a step fails, every step is undone.' }),
    h('ol', { class: 'steps' }, steps.map(step)));
}

/** Per repository each named branch: deleted or kept, with the reason. */
export function branchDeletePreview(p) {
  const repos = Array.isArray(p.repositories) ? p.repositories : [];
  return h('div', { class: 'preview branch-delete', data: { role: 'preview' } },
    h('p', { class: 'note', text: `${Number(p.deletable) || 0} to delete, ${Number(p.kept) || 0} kept; remote branches are never touched` }),
    repos.map((r) => h('section', { class: 'repo-branches', data: { repo: String(r.repoPath) } },
      h('h4', { class: 'repo', title: String(r.repoPath), text: basename(r.repoPath) }),
      list(Array.isArray(r.branches) ? r.branches : [], (b) => h('li', {
        class: 'file', data: { branch: String(b.branch), delete: String(b.delete === true) },
      },
      h('span', { class: `st st-${b.delete === true ? 'd' : 'k'}`, text: b.delete === true ? 'D' : 'K' }),
      h('span', { class: 'path', text: String(b.branch) }),
      oid(b.tip),
      h('span', { class: 'num muted', text: String(b.reason || '') })), 'no branches'))));
}
