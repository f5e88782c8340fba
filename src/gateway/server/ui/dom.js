// DOM building without markup: every value from the API becomes a text node, so
// nothing a proposal carries (reason, paths, diff lines) can ever be read as HTML.

// Characters that are invisible or turn the text around them (zero-width, bidi controls):
// `ma<U+200B>in` would read as `main`. Each is shown as a visible `<U+XXXX>`.
const HIDDEN = /[\u00AD\u034F\u061C\u115F\u1160\u17B4\u17B5\u180B-\u180F\u200B-\u200F\u2028\u2029\u202A-\u202E\u2060-\u206F\u3164\uFE00-\uFE0F\uFEFF\uFFA0\uFFF9-\uFFFB]|\uDB40[\uDC00-\uDC7F]/g;

/** `text` with every hidden character written out, so a person sees it. */
export function reveal(text) {
  return String(text).replace(HIDDEN, (c) => `<U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}>`);
}

/** Builds an element. `attrs` keys: `class`, `data` (object), `on` (events), others as attributes. */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      if (value === null || value === undefined || value === false) continue;
      if (key === 'class') el.className = value;
      else if (key === 'data') Object.assign(el.dataset, value);
      else if (key === 'on') for (const [ev, fn] of Object.entries(value)) el.addEventListener(ev, fn);
      else if (key === 'text') el.textContent = reveal(value);
      else if (key === 'title') el.setAttribute(key, reveal(value));
      else el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else if (child instanceof Node) el.appendChild(child);
    else el.appendChild(document.createTextNode(reveal(child)));
  }
}

/** The last path component, for a compact repository name. */
export function basename(path) {
  if (!path) return '';
  const trimmed = String(path).replace(/[\\/]+$/, '');
  const i = Math.max(trimmed.lastIndexOf('/'), trimmed.lastIndexOf('\\'));
  return i >= 0 ? trimmed.slice(i + 1) : trimmed;
}

/** The first 10 characters of an object id. */
export function shortOid(oid) {
  return typeof oid === 'string' ? oid.slice(0, 10) : '';
}

/** "4:05" / "1:02:05" left until `expiresAt`, or null once it has passed. */
export function timeLeft(expiresAt, now) {
  const ms = Date.parse(expiresAt) - now;
  if (!Number.isFinite(ms) || ms <= 0) return null;
  const total = Math.floor(ms / 1000);
  const hours = Math.floor(total / 3600);
  const mins = Math.floor((total % 3600) / 60);
  const secs = String(total % 60).padStart(2, '0');
  return hours > 0 ? `${hours}:${String(mins).padStart(2, '0')}:${secs}` : `${mins}:${secs}`;
}

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
const absolute = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** "3 minutes ago" style, with the exact time kept for a tooltip. */
export function ago(iso, now) {
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) return '';
  const secs = Math.round((t - now) / 1000);
  const abs = Math.abs(secs);
  if (abs < 45) return relative.format(secs, 'second');
  if (abs < 2700) return relative.format(Math.round(secs / 60), 'minute');
  if (abs < 79200) return relative.format(Math.round(secs / 3600), 'hour');
  return relative.format(Math.round(secs / 86400), 'day');
}

/** The exact local time of `iso`. */
export function exact(iso) {
  const t = Date.parse(iso);
  return Number.isFinite(t) ? absolute.format(t) : '';
}

/** A `<time>` element that shows relative time and the exact time on hover. */
export function timeEl(iso, now) {
  if (!iso) return null;
  return h('time', { datetime: iso, title: exact(iso) }, ago(iso, now));
}
