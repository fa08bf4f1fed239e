// The A − B arithmetic of the explorer (static/js/explorer/align.js), checked on hand-made maps.
import assert from "node:assert/strict";
import { test } from "node:test";

import { differenceMap, largestAbs, topCells } from "../../static/js/explorer/align.js";

// Two causal 3×3 patterns (null above the diagonal): B is A's line with its first two characters swapped.
const a = [[1, null, null], [0.25, 0.75, null], [0.5, 0.25, 0.25]];
const b = [[1, null, null], [0.75, 0.25, null], [0.25, 0.5, 0.25]];

test("cell by cell, A − B subtracts position from position and keeps the mask", () => {
  assert.deepEqual(differenceMap(a, b), [[0, null, null], [-0.5, 0.5, null], [0.25, -0.25, 0]]);
});

test("with B's order, each cell compares the same characters, and a cell either line masks is null", () => {
  const perm = [1, 0, 2]; // A's position q is B's position perm[q]
  // A[0][0] − B[1][1] = 1 − 0.25; A[1][0] meets B[0][1], which B masks; A[2][0] − B[2][1] = 0.5 − 0.5.
  assert.deepEqual(differenceMap(a, b, perm), [[0.75, null, null], [null, -0.25, null], [0, 0, 0]]);
});

test("the largest |cell| and the largest cells skip nulls and the rows asked", () => {
  const d = [[0, null], [-0.5, 0.25]];
  assert.deepEqual(largestAbs(d), { value: 0.5, q: 1, k: 0 });
  assert.deepEqual(topCells(d, 2), [{ q: 1, k: 0, v: -0.5 }, { q: 1, k: 1, v: 0.25 }]);
  assert.deepEqual(topCells(d, 5, new Set([1])), [{ q: 0, k: 0, v: 0 }]);
});
