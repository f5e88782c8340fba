// The operation's preview on its card, as git computed it: for a commit the exact files
// and their diff, for a branch or a worktree what will exist afterwards.

import { h, shortOid } from './dom.js';
import { branchDeletePreview, discardPreview, mergePreview, planPreview, resetPreview } from './preview_history.js';

/** Diffs longer than this start folded; their lines are built only when opened. */
const OPEN_LINES = 400;
/** At most this many diff lines are built at once; the rest on request. */
const LINE_CHUNK = 2000;

const fillOnSight = 'IntersectionObserver' in window
  ? new IntersectionObserver((seen) => {
    for (const entry of seen) {
      if (!entry.isIntersecting) continue;
      fillOnSight.unobserve(entry.target);
      fillDiff(entry.target);
    }
  }, { rootMargin: '400px 0px' })
  : null;

/** The preview section of `card`. */
export function renderPreview(card) {
  const p = card.preview;
  if (!p) {
    if (card.previewPending) {
      return h('div', { class: 'preview pending', data: { role: 'preview' } },
        h('span', { class: 'spinner', 'aria-hidden': 'true' }), 'Computing the preview with git…');
    }
    return h('div', { class: 'preview muted', data: { role: 'preview' } }, 'No preview.');
  }
  switch (card.operationType) {
    case 'commit': return commitPreview(card, p);
    case 'branch': return branchPreview(p);
    case 'worktree': return worktreePreview(p);
    case 'merge': return mergePreview(p);
    case 'discard': return discardPreview(p);
    case 'reset': return resetPreview(p);
    case 'plan': return planPreview(p, renderPreview);
    case 'branchDelete': return branchDeletePreview(p);
    default: return genericPreview(p);
  }
}

function commitPreview(card, p) {
  const files = Array.isArray(p.files) ? p.files : [];
  let adds = 0;
  let dels = 0;
  for (const f of files) {
    adds += Number(f.additions) || 0;
    dels += Number(f.deletions) || 0;
  }
  const message = p.message || (card.fields && card.fields.message);
  const diff = typeof p.diff === 'string' ? p.diff : '';
  return h('div', { class: 'preview commit', data: { role: 'preview' } },
    message ? h('pre', { class: 'commit-msg', text: message }) : null,
    h('div', { class: 'files-head' },
      h('span', null, `${files.length} ${files.length === 1 ? 'file' : 'files'} will be committed`),
      h('span', { class: 'num add', text: `+${adds}` }),
      h('span', { class: 'num del', text: `−${dels}` })),
    h('ul', { class: 'files' }, files.map(fileRow)),
    diff ? diffBox(diff, p.diffTruncated) : null);
}

/** A file with its status letter and an optional note, for lists without line counts. */
export function simpleFileRow(f, note) {
  const status = String(f.status || 'modified');
  const letter = status.charAt(0).toUpperCase();
  return h('li', { class: 'file', data: { path: String(f.path) } },
    h('span', { class: `st st-${letter.toLowerCase()}`, title: status, text: letter }),
    h('span', { class: 'path', text: String(f.path) }),
    note ? h('span', { class: 'num muted', text: note }) : null);
}

function fileRow(f) {
  const status = String(f.status || 'modified');
  const letter = status.charAt(0).toUpperCase();
  const adds = Number(f.additions) || 0;
  const dels = Number(f.deletions) || 0;
  const binary = f.additions === null || f.binary === true;
  return h('li', { class: 'file', data: { path: String(f.path) } },
    h('span', { class: `st st-${letter.toLowerCase()}`, title: status, text: letter }),
    h('span', { class: 'path', text: String(f.path) }),
    binary ? h('span', { class: 'num muted', text: 'binary' }) : [
      h('span', { class: 'num add', text: `+${adds}` }),
      h('span', { class: 'num del', text: `−${dels}` }),
      bar(adds, dels),
    ]);
}

function bar(adds, dels) {
  const total = adds + dels;
  const blocks = 5;
  const green = total ? Math.round((adds / total) * Math.min(blocks, total)) : 0;
  const red = total ? Math.min(blocks, total) - green : 0;
  const el = h('span', { class: 'bar', 'aria-hidden': 'true' });
  for (let i = 0; i < blocks; i += 1) {
    el.appendChild(h('i', { class: i < green ? 'g' : i < green + red ? 'r' : '' }));
  }
  return el;
}

export function diffBox(diff, truncated) {
  const lines = diff.endsWith('\n') ? diff.slice(0, -1).split('\n') : diff.split('\n');
  const pre = h('pre', { class: 'diff', data: { role: 'diff' } });
  pre.gwLines = lines;
  pre.gwShown = 0;
  const box = h('details', { class: 'diff-box', open: lines.length <= OPEN_LINES },
    h('summary', null, `Diff · ${lines.length} lines`),
    pre,
    truncated ? h('p', { class: 'note', text: 'The diff was cut at the gateway’s size cap; the file list above is complete.' }) : null);
  box.addEventListener('toggle', () => { if (box.open) fillDiff(pre); });
  if (box.open) {
    if (fillOnSight) fillOnSight.observe(pre);
    else fillDiff(pre);
  }
  return box;
}

function lineClass(line) {
  if (line.startsWith('+++') || line.startsWith('---')) return 'fh';
  if (line.startsWith('+')) return 'add';
  if (line.startsWith('-')) return 'del';
  if (line.startsWith('@@')) return 'hunk';
  if (line.startsWith('diff ')) return 'fl';
  if (line.startsWith(' ') || line === '') return 'ctx';
  return 'meta';
}

/** Builds the next chunk of a diff's lines (all text nodes). */
function fillDiff(pre) {
  const lines = pre.gwLines;
  if (!lines || pre.gwShown >= lines.length) return;
  const more = pre.querySelector('.more');
  if (more) more.remove();
  const end = Math.min(lines.length, pre.gwShown + LINE_CHUNK);
  const fragment = document.createDocumentFragment();
  for (let i = pre.gwShown; i < end; i += 1) {
    fragment.appendChild(h('span', { class: `l ${lineClass(lines[i])}` }, `${lines[i]}\n`));
  }
  pre.gwShown = end;
  if (end < lines.length) {
    fragment.appendChild(h('button', {
      type: 'button', class: 'more ghost', on: { click: () => fillDiff(pre) },
    }, `Show ${Math.min(LINE_CHUNK, lines.length - end)} more lines`));
  }
  pre.appendChild(fragment);
}

export function kv(rows) {
  return h('dl', { class: 'kv' }, rows.filter(Boolean).map(([k, v]) => [h('dt', null, k), h('dd', null, v)]));
}

export function oid(value) {
  return value ? h('code', { class: 'oid', title: String(value), text: shortOid(value) }) : null;
}

function branchPreview(p) {
  return h('div', { class: 'preview branch', data: { role: 'preview' } },
    refPicture(p.startOid, p.name),
    kv([
      ['New branch', h('code', { text: String(p.name ?? '') })],
      ['Starts at', [h('code', { text: String(p.startPoint ?? 'HEAD') }), ' ', oid(p.startOid)]],
      ['Afterwards', p.checkout ? 'switch to the new branch' : 'stay on the current branch'],
    ]));
}

function worktreePreview(p) {
  return h('div', { class: 'preview worktree', data: { role: 'preview' } },
    kv([
      ['Worktree path', h('code', { text: String(p.path ?? '') })],
      ['Branch', [h('code', { text: String(p.branch ?? '') }),
        p.newBranch ? h('span', { class: 'tag', text: 'new' }) : null]],
      p.startOid ? ['Starts at', oid(p.startOid)] : null,
    ]));
}

function refPicture(startOid, name) {
  return h('div', { class: 'refpic', 'aria-hidden': 'true' },
    h('span', { class: 'commit-dot' }),
    h('span', { class: 'oid', text: shortOid(startOid) || 'HEAD' }),
    h('span', { class: 'edge' }),
    h('span', { class: 'ref new', text: String(name ?? '') }));
}

function genericPreview(p) {
  return h('div', { class: 'preview generic', data: { role: 'preview' } },
    kv(Object.entries(p).map(([k, v]) => [k, h('code', {
      text: typeof v === 'string' ? v : JSON.stringify(v),
    })])));
}
