// Latest request wins: a new run aborts the one before it, and an answer that arrives after a newer
// run has started is dropped. Every panel that fetches owns one of these instead of its own flags.

/**
 * const request = latest();
 * const out = await request.run((signal) => postCompare(body, signal));
 * if (out.stale) return;  // a newer run took over
 * use(out.value);
 */
export function latest() {
  let current = null;
  return {
    async run(fetcher) {
      current?.abort();
      const controller = new AbortController();
      current = controller;
      try {
        const value = await fetcher(controller.signal);
        return current === controller ? { stale: false, value } : { stale: true };
      } catch (error) {
        if (current !== controller || controller.signal.aborted || error?.name === "AbortError") return { stale: true };
        throw error;
      } finally {
        if (current === controller) current = null;
      }
    },
    /** True while a run is out. */
    get busy() {
      return current !== null;
    },
    abort() {
      current?.abort();
      current = null;
    },
  };
}
