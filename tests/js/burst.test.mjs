// The pages' one rule for edits that ask the server (static/js/shared/burst.js), on node's mocked clock.
import assert from "node:assert/strict";
import { beforeEach, mock, test } from "node:test";

import { burst, BURST_MS } from "../../static/js/shared/burst.js";

beforeEach(() => {
  mock.timers.reset();
  mock.timers.enable({ apis: ["setTimeout"] });
});

test("an edit after a pause asks at once, before any time passes", () => {
  const asked = [];
  const edits = burst();
  edits.edit(() => asked.push("a"));
  assert.deepEqual(asked, ["a"]);
  assert.equal(edits.waiting, false);
});

test("an edit while the last request is out waits until the edits pause, and the burst asks once, for its last", () => {
  const asked = [];
  let out = true;
  const edits = burst({ busy: () => out });
  edits.edit(() => asked.push("ab"));
  assert.equal(edits.waiting, true);
  mock.timers.tick(BURST_MS - 1);
  edits.edit(() => asked.push("abc")); // the pause starts again
  mock.timers.tick(BURST_MS - 1);
  assert.deepEqual(asked, []);
  out = false;
  mock.timers.tick(1);
  assert.deepEqual(asked, ["abc"]);
  assert.equal(edits.waiting, false);
});

test("an edit while an ask waits waits too, even once the request is back", () => {
  const asked = [];
  let out = true;
  const edits = burst({ busy: () => out });
  edits.edit(() => asked.push(1));
  out = false;
  edits.edit(() => asked.push(2));
  assert.deepEqual(asked, []);
  mock.timers.tick(BURST_MS);
  assert.deepEqual(asked, [2]);
  edits.edit(() => asked.push(3)); // idle again: at once
  assert.deepEqual(asked, [2, 3]);
});

test("cancel drops the waiting ask, and the next edit finds the page idle", () => {
  const asked = [];
  let out = true;
  const edits = burst({ busy: () => out });
  edits.edit(() => asked.push(1));
  edits.cancel();
  assert.equal(edits.waiting, false);
  mock.timers.tick(10 * BURST_MS);
  assert.deepEqual(asked, []);
  out = false;
  edits.edit(() => asked.push(2));
  assert.deepEqual(asked, [2]);
});
