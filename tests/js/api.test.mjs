// Every page's one request() and its one error parser (static/js/shared/api.js), against a stand-in fetch.
import assert from "node:assert/strict";
import { afterEach, test } from "node:test";

import { ApiError, request } from "../../static/js/shared/api.js";

const sent = [];
const realFetch = globalThis.fetch;

/** fetch answers status with body (an object sent as JSON, or a string that is not JSON). */
function answer(status, body, statusText = "") {
  globalThis.fetch = async (url, init) => {
    sent.push({ url, ...init });
    return new Response(typeof body === "string" ? body : JSON.stringify(body), { status, statusText });
  };
}

afterEach(() => {
  globalThis.fetch = realFetch;
  sent.length = 0;
});

test("a GET leaves out the query's null values, and a body is POSTed as JSON", async () => {
  answer(200, { ok: true });
  assert.deepEqual(await request("/api/probe", { query: { step: null, causal: false, weights: undefined } }), { ok: true });
  assert.equal(sent[0].url, "/api/probe?causal=false");
  assert.equal(sent[0].method, "GET");
  await request("/api/positions", { query: { step: null } }); // nothing left: no bare "?" (a route's URL changed)
  assert.equal(sent.at(-1).url, "/api/positions");
  await request("/api/compare", { body: { line_a: "白" } });
  assert.equal(sent[2].method, "POST");
  assert.equal(sent[2].headers["Content-Type"], "application/json");
  assert.deepEqual(JSON.parse(sent[2].body), { line_a: "白" });
});

test("a 422's items are split into the fields a control shows and the rest", async () => {
  answer(422, { detail: [
    { loc: ["body", "line_b"], msg: "too long", type: "string_too_long", ctx: { max_length: 128 } },
    { loc: ["query", "step"], msg: "no snapshot", type: "snapshot_step" },
    { loc: ["path", "comparison_id"], msg: "not kept", type: "comparison_unknown" },
  ] });
  const error = await request("/api/compare", { body: {} }).catch((e) => e);
  assert.ok(error instanceof ApiError);
  assert.equal(error.status, 422);
  assert.deepEqual(error.fields.map((f) => [f.field, f.type]), [["line_b", "string_too_long"], ["step", "snapshot_step"]]);
  assert.deepEqual(error.fields[0].ctx, { max_length: 128 });
  assert.deepEqual(error.general.map((g) => g.msg), ["not kept"]);
});

test("an answer without a detail (not JSON, or a plain string) still says what went wrong", async () => {
  answer(502, "<html>bad gateway</html>", "Bad Gateway");
  const proxy = await request("/api/options").catch((e) => e);
  assert.equal(proxy.status, 502);
  assert.deepEqual(proxy.fields, []);
  assert.deepEqual(proxy.general, [{ msg: "Bad Gateway" }]);
  answer(429, { detail: "rate limit: 120 requests a minute" });
  const limited = await request("/api/compare", { body: {} }).catch((e) => e);
  assert.deepEqual(limited.general, [{ msg: "rate limit: 120 requests a minute" }]);
});
