// The one rule every page follows for edits that ask the server (the explorer's lines, the lesson's setup, the
// relative panel's characters): an edit after a pause asks at once; one that comes while the page is still busy
// with the last (its request out, or an ask waiting) waits until no edit has come for BURST_MS. A burst of keys, a
// held key or a paste then asks for its last state, instead of a request per key that the next key would abort.

/** How long the edits of a burst must pause before the page asks for the last one. */
export const BURST_MS = 50;

/**
 * const edits = burst({ busy: () => request.busy });  // busy(): the last ask's request is still out
 * edits.edit(() => compare());  // an edit: ask at once when idle, else once the edits pause for BURST_MS
 * edits.cancel();               // drop an ask that was waiting (the page asks by another way, or not at all)
 * edits.waiting                 // true while an ask waits for the edits to pause
 * Of the edits of a burst, the last one's ask is the one made.
 */
export function burst({ busy = () => false } = {}) {
  let timer = null;
  const cancel = () => {
    clearTimeout(timer);
    timer = null;
  };
  return {
    edit(ask) {
      const idle = timer === null && !busy();
      cancel();
      if (idle) {
        ask();
        return;
      }
      timer = setTimeout(() => {
        timer = null;
        ask();
      }, BURST_MS);
    },
    cancel,
    get waiting() {
      return timer !== null;
    },
  };
}
