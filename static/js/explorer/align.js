// The arithmetic of the A − B maps. Which position of B stands for which of A is the server's (the answer's
// `alignment`, by token id: app/services/alignment.py); nothing here decides it.

/**
 * A − B for one head. patterns are [query][key] with null where masked. With perm, B's rows and columns
 * are taken in A's order (B[perm[q]][perm[k]]), so each cell compares the same query character weighing
 * the same key character; null wherever either line cannot see that key. Without perm: cell by cell.
 */
export function differenceMap(a, b, perm = null) {
  const at = perm ? (q, k) => b[perm[q]][perm[k]] : (q, k) => b[q][k];
  return a.map((row, q) => row.map((v, k) => {
    const w = at(q, k);
    return v === null || w === null ? null : v - w;
  }));
}

/** The largest |value| in a matrix (nulls skipped), and where: {value, q, k}. */
export function largestAbs(matrix) {
  let best = { value: 0, q: -1, k: -1 };
  matrix.forEach((row, q) => row.forEach((v, k) => {
    if (v !== null && Math.abs(v) > best.value) best = { value: Math.abs(v), q, k };
  }));
  return best;
}

/** The `count` largest cells (by |value|), skipping the rows in `skipRows`: [{q, k, v}], largest first. */
export function topCells(matrix, count, skipRows = new Set()) {
  const cells = [];
  matrix.forEach((row, q) => {
    if (skipRows.has(q)) return;
    row.forEach((v, k) => { if (v !== null) cells.push({ q, k, v }); });
  });
  cells.sort((x, y) => Math.abs(y.v) - Math.abs(x.v));
  return cells.slice(0, count);
}
