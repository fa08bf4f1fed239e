// Latest request wins: a new run aborts the one before it, and an answer that arrives after a newer
// run has started is dropped. The explorer's comparison, its relative-distance panel and the lesson's
// reveal each own one of these instead of their own flags.

/**
 * const request = latest();
 * const out = await request.run((signal) => postCompare(body, signal), key);
 * if (out.stale) return;  // a newer run took over, or this one was aborted
 * use(out.value);
 */
export function latest() {
  let current = null; // {controller, key}
  return {
    async run(fetcher, key = null) {
      current?.controller.abort();
      const mine = { controller: new AbortController(), key };
      current = mine;
      try {
        const value = await fetcher(mine.controller.signal);
        return current === mine ? { stale: false, value } : { stale: true };
      } catch (error) {
        if (current !== mine || mine.controller.signal.aborted || error?.name === "AbortError") return { stale: true };
        throw error;
      } finally {
        if (current === mine) current = null;
      }
    },
    /** True while a run is out. */
    get busy() {
      return current !== null;
    },
    /** True while a run for this key is out: asking again would only repeat it. */
    runningFor(key) {
      return current !== null && current.key === key;
    },
    abort() {
      current?.controller.abort();
      current = null;
    },
  };
}
