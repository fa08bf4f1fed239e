// Class mode words its errors from shared/api.js's ApiError (static/js/class/errors.js): the type and the status,
// never the server's English msg; status 0 (no answer) and a fault of the page are "the server did not answer".
import assert from "node:assert/strict";
import { test } from "node:test";

import { ApiError } from "../../static/js/shared/api.js";
import { isOutage, wording } from "../../static/js/class/errors.js";

const refused = (status, type, ctx = {}, retryAfter = null) => new ApiError(status, [], [{ msg: "English" }], { type, ctx, retryAfter });

test("a refusal is worded from its type, with its ctx and wait", () => {
  assert.deepEqual(wording(refused(409, "class_full", { max_students: 40 })).key, "class_full");
  assert.equal(wording(refused(409, "class_full", { max_students: 40 })).vars.max, 40);
  const limited = wording(refused(429, "too_many_joins_from_address", {}, 90));
  assert.equal(limited.key, "class_too_many_joins");
  assert.equal(limited.vars.seconds, 90);
  assert.equal(limited.vars.minutes, 2);
  assert.equal(wording(refused(404, null)).key, "class_gone");
  assert.equal(wording(refused(500, null)).key, "class_failed");
});

test("no answer, and what is not an answer at all, say the server did not answer", () => {
  assert.equal(wording(new ApiError(0, [], [])).key, "class_error");
  assert.equal(wording(new TypeError("a bug")).key, "class_error");
});

test("an outage: no answer, or the store down; another 503 is not one", () => {
  assert.ok(isOutage(new ApiError(0, [], [])));
  assert.ok(isOutage(refused(503, "class_store_unavailable")));
  assert.ok(!isOutage(refused(503, "too_many_classes_open")));
  assert.ok(!isOutage(refused(404, "class_not_found")));
});
