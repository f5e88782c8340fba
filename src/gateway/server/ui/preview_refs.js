// Previews of the writes that move refs: a rebase's commits to replay and its preflight,
// a push's commits, destination and lease, which branches a branchDelete deletes or keeps
// and why, and a submodule's gitlink change.

import { basename, h, shortOid } from './dom.js';
import { kv, oid } from './preview.js';

function commitList(commits, role, empty) {
  const items = Array.isArray(commits) ? commits : [];
  if (!items.length) return h('p', { class: 'note', text: empty });
  return h('ul', { class: 'files', data: { role } }, items.map((c) => h('li', {
    class: 'file commit-row', data: { oid: String(c.oid ?? c.sha ?? '') },
  }, oid(c.oid ?? c.sha), h('span', { class: 'path', text: String(c.subject ?? '') }))));
}

function shortRef(ref) {
  return String(ref ?? '').replace(/^refs\/heads\//, '');
}

/** `from` → `to`, each a ref name with its commit, as a small picture. */
function movePicture(from, to) {
  const side = ([name, at], cls) => [
    h('span', { class: `ref ${cls}`, text: name }),
    h('code', { class: 'oid', title: String(at ?? ''), text: at ? shortOid(at) : 'none' }),
  ];
  return h('div', { class: 'refpic', data: { role: 'ref-picture' } },
    side(from, 'old'), h('span', { class: 'edge' }), side(to, 'new'));
}

function warning(text) {
  return text ? h('p', { class: 'warn-text', data: { role: 'warning' } },
    h('strong', null, 'Note: '), String(text)) : null;
}

export function rebasePreview(p) {
  const total = Number(p.commitsTotal) || 0;
  const conflict = p.firstConflict;
  const verdict = conflict
    ? h('span', { class: 'chip warn', data: { role: 'verdict' } },
      `stops at commit ${conflict.position} (${shortOid(conflict.oid)} ${conflict.subject}) on `,
      (conflict.paths || []).join(', '), ': the rebase will be aborted')
    : h('span', { class: 'chip', data: { role: 'verdict' }, text: 'replays cleanly' });
  return h('div', { class: 'preview rebase', data: { role: 'preview' } },
    movePicture([shortRef(p.branch), p.currentOid], [`onto ${shortRef(p.ontoRef)}`, p.ontoOid]),
    kv([
      ['Branch', h('code', { text: shortRef(p.branch) || 'detached HEAD' })],
      ['Onto', [h('code', { text: String(p.ontoRef ?? '') }), ' ', oid(p.ontoOid)]],
      ['Preflight', verdict],
      p.worktreeClean === false ? ['Worktree', h('span', { class: 'chip warn', text: 'has uncommitted changes' })] : null,
    ]),
    h('div', { class: 'files-head' },
      h('span', null, `${total} ${total === 1 ? 'commit' : 'commits'} to replay, oldest first`),
      p.commitsTruncated ? h('span', { class: 'muted', text: '(list shortened)' }) : null),
    commitList(p.commits, 'rebase-commits', 'Nothing to replay: the branch already contains the target.'),
    warning(p.warning));
}

export function pushPreview(p) {
  const dest = String(p.destination ?? `refs/heads/${p.branch ?? ''}`);
  const lease = p.forceWithLease
    ? [h('code', { data: { role: 'lease' }, text: `--force-with-lease=${dest}:${p.lease || '(absent)'}` }),
      h('p', { class: 'note', text: `Only if ${p.remote} still has ${p.lease ? shortOid(p.lease) : 'no such branch'}; otherwise git refuses and nothing moves.` })]
    : h('span', { data: { role: 'lease' }, text: 'none: a plain push, which the remote accepts only as a fast-forward' });
  const lost = Array.isArray(p.lost) ? p.lost : [];
  return h('div', { class: 'preview push', data: { role: 'preview' } },
    movePicture([`${p.remote}/${p.branch} now`, p.remoteOid], ['after the push', p.pushOid]),
    kv([
      ['To', [h('code', { text: String(p.remote ?? '') }), ' ', h('span', { class: 'muted', text: String(p.url ?? '') })]],
      ['Branch', [h('code', { text: String(p.branch ?? '') }), ' → ', h('code', { text: dest })]],
      ['Remote has', p.remoteOid ? oid(p.remoteOid) : h('span', { class: 'muted', text: 'no such branch yet' })],
      ['Kind', p.fastForward
        ? h('span', { class: 'chip', data: { role: 'kind' }, text: 'fast-forward' })
        : h('span', { class: 'chip warn', data: { role: 'kind' }, text: 'not a fast-forward' })],
      ['Lease', lease],
      p.setUpstream ? ['Upstream', `set ${p.remote}/${p.branch} as the branch's upstream`] : null,
      p.revertTo ? ['Undoes', ['a push: back to ', oid(p.revertTo)]] : null,
    ]),
    h('div', { class: 'files-head' }, h('span', null, `${(p.commits || []).length} ${(p.commits || []).length === 1 ? 'commit' : 'commits'} to push`),
      p.commitsTruncated ? h('span', { class: 'muted', text: '(list shortened)' }) : null),
    commitList(p.commits, 'push-commits', 'No new commits reach the remote.'),
    lost.length ? [
      h('p', { class: 'warn-text' }, h('strong', null, 'Leaves the remote branch: '),
        `${lost.length} ${lost.length === 1 ? 'commit' : 'commits'}${p.lostTruncated ? ' (list shortened)' : ''}.`),
      commitList(lost, 'lost-commits', ''),
    ] : null,
    warning(p.warning));
}

export function branchDeletePreview(p) {
  const repos = Array.isArray(p.repositories) ? p.repositories : [];
  const row = (b) => h('li', {
    class: 'file branch-row', data: { branch: String(b.branch), decision: b.delete ? 'delete' : 'keep' },
  },
  h('span', { class: `st ${b.delete ? 'st-d' : 'st-k'}`, title: b.delete ? 'deleted' : 'kept', text: b.delete ? 'D' : 'K' }),
  h('code', { class: 'path', text: String(b.branch) }),
  b.tip ? oid(b.tip) : h('span', { class: 'muted', text: '—' }),
  h('span', { class: 'why', data: { role: 'reason' } }, b.delete ? 'delete: ' : 'keep: ', String(b.reason ?? '')));
  // One repository needs no heading; several each get theirs, named by folder.
  const section = (r) => {
    const branches = Array.isArray(r.branches) ? r.branches : [];
    return h('section', { class: 'repo-branches', data: { repo: String(r.repoPath) } },
      repos.length > 1 ? h('h4', { class: 'repo', title: String(r.repoPath), text: basename(r.repoPath) }) : null,
      branches.length ? h('ul', { class: 'files branches' }, branches.map(row)) : h('p', { class: 'note', text: 'No branch named.' }));
  };
  return h('div', { class: 'preview branchDelete', data: { role: 'preview' } },
    h('div', { class: 'files-head' },
      h('span', { data: { role: 'summary' }, text: `${p.deletable ?? 0} deleted, ${p.kept ?? 0} kept` }),
      h('span', { class: 'muted', text: 'Each tip is kept in the restore point; remote branches are never touched.' })),
    repos.map(section));
}

export function submodulePreview(p) {
  const record = p.action === 'record';
  const path = String(p.path ?? p.relativePath ?? '');
  const drift = p.drift || null;
  const from = record ? p.oldPointer : p.checkedOutBefore;
  const to = record ? p.newPointer : p.checkedOutAfter;
  return h('div', { class: 'preview submodulePointer', data: { role: 'preview' } },
    movePicture(record ? [`${path} recorded`, from] : [`${path} checked out`, from], [record ? 'to record' : 'to check out', to]),
    kv([
      ['Submodule', h('code', { text: path })],
      ['Action', record
        ? 'commit the new pointer in the parent (only the gitlink; other staged work stays staged)'
        : 'check out the recorded commit in the submodule, detached'],
      ['Gitlink', h('span', { data: { role: 'pointer' } },
        h('code', { class: 'oid', title: String(from ?? ''), text: shortOid(from) }), ' → ',
        h('code', { class: 'oid', title: String(to ?? ''), text: shortOid(to) }))],
      drift ? ['Drift', `checked out is ${drift.ahead} ahead, ${drift.behind} behind the recorded commit`] : null,
    ]),
    record && p.message ? h('pre', { class: 'commit-msg', text: String(p.message) }) : null,
    p.restoreCoversSubmodule === false ? warning(p.restoreNote) : null);
}
