// Which heads the student has turned off, shared by the explorer's ablation panel and the head gallery:
// either can switch a head, and both show the same switches and the same answer from /api/ablate.

const off = new Set(); // "layer-head", 1-based as on the page
const listeners = new Set();
let answer = null; // the last /api/ablate answer on screen, or null

const key = (layer, head) => `${layer}-${head}`;

function notify() {
  for (const listener of listeners) listener();
}

export const headsOff = {
  has: (layer, head) => off.has(key(layer, head)),
  /** [{layer, head}] sorted by layer then head: the request's `off`. */
  list() {
    return [...off].map((k) => k.split("-").map(Number)).sort((a, b) => a[0] - b[0] || a[1] - b[1])
      .map(([layer, head]) => ({ layer, head }));
  },
  toggle(layer, head) {
    if (!off.delete(key(layer, head))) off.add(key(layer, head));
    notify();
  },
  clear() {
    off.clear();
    notify();
  },
  /** Drop the heads a model of this shape does not have (the page switched to fewer layers or heads). */
  fit(nLayer, nHead) {
    for (const k of [...off]) {
      const [layer, head] = k.split("-").map(Number);
      if (layer > nLayer || head > nHead) off.delete(k);
    }
  },
  /** The answer drawn for the current switches, or null while none is. */
  get answer() {
    return answer;
  },
  setAnswer(next) {
    answer = next;
    notify();
  },
  /** listener() runs after every switch and every new answer. */
  subscribe(listener) {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};
