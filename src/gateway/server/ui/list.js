// A keyed list of cards: an update touches only the card it is about, so a live event
// costs one card's DOM, never a re-render of the whole queue.

export class KeyedList {
  /**
   * @param {HTMLElement} container
   * @param {{accepts:(c)=>boolean, compare:(a,b)=>number, render:(c, old)=>HTMLElement,
   *          limit?:number, changed?:()=>void}} opts
   */
  constructor(container, opts) {
    this.container = container;
    this.opts = opts;
    this.entries = new Map();
  }

  get size() {
    return this.entries.size;
  }

  /** Replaces the contents with `cards`, keeping the elements of cards that did not change. */
  setAll(cards) {
    const wanted = cards.filter(this.opts.accepts).sort(this.opts.compare);
    if (this.opts.limit) wanted.length = Math.min(wanted.length, this.opts.limit);
    const keep = new Set(wanted.map((c) => c.previewId));
    for (const id of [...this.entries.keys()]) if (!keep.has(id)) this.remove(id, true);
    const fragment = document.createDocumentFragment();
    for (const card of wanted) {
      const sig = JSON.stringify(card);
      const old = this.entries.get(card.previewId);
      const el = old && old.sig === sig ? old.el : this.opts.render(card, old && old.el);
      this.entries.set(card.previewId, { card, sig, el });
      fragment.appendChild(el);
    }
    // One insertion for the whole list: a single layout for a hundred cards.
    this.container.replaceChildren(fragment);
    this.changed();
  }

  /** Adds, replaces or drops one card according to its new state. */
  upsert(card) {
    const id = card.previewId;
    if (!this.opts.accepts(card)) {
      this.remove(id);
      return;
    }
    const sig = JSON.stringify(card);
    const old = this.entries.get(id);
    if (old && old.sig === sig) return;
    const el = this.opts.render(card, old && old.el);
    if (old && this.opts.compare(old.card, card) === 0) {
      old.el.replaceWith(el);
    } else {
      if (old) old.el.remove();
      this.insertSorted(card, el);
    }
    this.entries.set(id, { card, sig, el });
    this.trim();
    this.changed();
  }

  insertSorted(card, el) {
    for (const child of this.container.children) {
      const other = this.entries.get(child.dataset.id);
      if (other && this.opts.compare(card, other.card) < 0) {
        this.container.insertBefore(el, child);
        return;
      }
    }
    this.container.appendChild(el);
  }

  trim() {
    const limit = this.opts.limit;
    while (limit && this.entries.size > limit) {
      const last = this.container.lastElementChild;
      if (!last) break;
      this.remove(last.dataset.id, true);
    }
  }

  remove(id, quiet) {
    const old = this.entries.get(id);
    if (!old) return;
    old.el.remove();
    this.entries.delete(id);
    if (!quiet) this.changed();
  }

  get(id) {
    const entry = this.entries.get(id);
    return entry && entry.card;
  }

  /** Calls `fn(card, el)` for every card shown. */
  each(fn) {
    for (const { card, el } of this.entries.values()) fn(card, el);
  }

  changed() {
    if (this.opts.changed) this.opts.changed();
  }
}
