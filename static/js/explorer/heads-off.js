// Which heads the student has turned off, shared by the explorer's ablation panel and the head gallery: either can
// switch a head, and both show the same switches and the same answer from /api/ablate. Both live in the page's one
// state (state.js explorerState: `off`, which the address holds, and `ablation`, the answer on screen); this is
// the view of them both panels use.

import { explorerState, sortedHeads } from "./state.js";

const key = (layer, head) => `${layer}-${head}`;
const setOff = (keys) => explorerState.set({ off: Object.freeze(sortedHeads(keys)) });

export const headsOff = {
  has: (layer, head) => explorerState.get().off.includes(key(layer, head)),
  /** [{layer, head}] sorted by layer then head: the request's `off`. */
  list() {
    return explorerState.get().off.map((k) => k.split("-").map(Number)).map(([layer, head]) => ({ layer, head }));
  },
  toggle(layer, head) {
    const off = new Set(explorerState.get().off);
    if (!off.delete(key(layer, head))) off.add(key(layer, head));
    setOff(off);
  },
  clear() {
    setOff([]);
  },
  /** Drop the heads a model of this shape does not have (the page switched to fewer layers or heads). */
  fit(nLayer, nHead) {
    setOff(explorerState.get().off.filter((k) => {
      const [layer, head] = k.split("-").map(Number);
      return layer <= nLayer && head <= nHead;
    }));
  },
  /** The answer drawn for the current switches, or null while none is. */
  get answer() {
    return explorerState.get().ablation;
  },
  setAnswer(next) {
    explorerState.set({ ablation: next });
  },
  /** listener() runs after every switch and every new answer. */
  subscribe(listener) {
    return explorerState.subscribe((next, previous) => {
      if (next.off !== previous.off || next.ablation !== previous.ablation) listener();
    });
  },
};
