// One way to keep a page's records in this browser (localStorage, or sessionStorage for one tab): JSON values,
// and a blocked or damaged storage reads as nothing and writes nothing, so the page still works and forgets.

/** The value kept under key, or null. */
export function read(storage, key) {
  try {
    return JSON.parse(storage.getItem(key) ?? "null");
  } catch {
    return null;
  }
}

/** Keep value under key; null removes it. */
export function write(storage, key, value) {
  try {
    if (value === null) storage.removeItem(key);
    else storage.setItem(key, JSON.stringify(value));
  } catch {
    // storage blocked or full: the page works until it is reloaded
  }
}
