// Every page's one request() and its one error parser (static/js/shared/api.js), against a stand-in fetch.
import assert from "node:assert/strict";
import { afterEach, test } from "node:test";

import { ApiError, request } from "../../static/js/shared/api.js";

const sent = [];
const realFetch = globalThis.fetch;

/** fetch answers status with body (an object sent as JSON, a string that is not JSON, or null: none). */
function answer(status, body, statusText = "") {
  globalThis.fetch = async (url, init) => {
    sent.push({ url, ...init });
    const text = body === null || typeof body === "string" ? body : JSON.stringify(body);
    return new Response(text, { status, statusText });
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

test("a JSON request accepts JSON; a CSV file is asked for as text/csv, JSON only for a refusal's detail", async () => {
  answer(200, { ok: true });
  await request("/api/options");
  assert.equal(sent[0].headers.Accept, "application/json");
  answer(200, "step,answer\n1,same\n");
  const csv = await request("/api/classes/ABCD/results.csv", { as: "blob", accept: "text/csv" });
  assert.equal(sent[1].headers.Accept, "text/csv, application/json;q=0.5");
  assert.equal(await csv.text(), "step,answer\n1,same\n");
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

test("class mode's requests: another method, added headers, and no Content-Type without a body", async () => {
  answer(200, { round: 2 });
  const got = await request("/api/classes/ABC/again", { method: "POST", headers: { Authorization: "Bearer t" } });
  assert.deepEqual(got, { round: 2 });
  assert.equal(sent[0].method, "POST");
  assert.equal(sent[0].body, undefined);
  assert.deepEqual(sent[0].headers, { Accept: "application/json", Authorization: "Bearer t" });
  answer(204, null);
  assert.equal(await request("/api/classes/ABC", { method: "DELETE" }), null); // no body: null, not a failure
  assert.equal(sent[1].method, "DELETE");
  await request("/api/classes/ABC/reveal", { body: { line_b: "山" }, headers: { "X-Teacher-Key": "k" } });
  assert.equal(sent[2].headers["Content-Type"], "application/json");
  assert.equal(sent[2].headers["X-Teacher-Key"], "k");
});

test("a CSV file is read as a blob, and its refusal through the same parser", async () => {
  answer(200, "step,choice\n1,same\n");
  const csv = await request("/api/classes/ABC/results.csv", { query: { lang: "fr" }, as: "blob" });
  assert.equal(await csv.text(), "step,choice\n1,same\n");
  assert.equal(sent[0].url, "/api/classes/ABC/results.csv?lang=fr");
  answer(403, { detail: [{ loc: ["header", "Authorization"], msg: "not the teacher", type: "teacher_only" }] });
  const refused = await request("/api/classes/ABC/results.csv", { as: "blob" }).catch((e) => e);
  assert.equal(refused.status, 403);
  assert.equal(refused.type, "teacher_only");
});

test("the first item's type and ctx, and how long to wait: Retry-After, else the ctx's retry_after", async () => {
  globalThis.fetch = async () => new Response(JSON.stringify({ detail: [
    { loc: ["path", "code"], msg: "too many", type: "too_many_joins_from_address", ctx: { retry_minutes: 2 } },
  ] }), { status: 429, headers: { "Retry-After": "90" } });
  const limited = await request("/api/classes/ABC/join", { method: "POST" }).catch((e) => e);
  assert.equal(limited.type, "too_many_joins_from_address");
  assert.deepEqual(limited.ctx, { retry_minutes: 2 });
  assert.equal(limited.retryAfter, 90);
  answer(503, { detail: [{ loc: [], msg: "store down", type: "class_store_unavailable", ctx: { retry_after: 5 } }] });
  const down = await request("/api/classes/ABC").catch((e) => e);
  assert.equal(down.retryAfter, 5);
  answer(404, { detail: "Not Found" });
  const gone = await request("/api/classes/ABC").catch((e) => e);
  assert.equal(gone.type, null);
  assert.deepEqual(gone.ctx, {});
  assert.equal(gone.retryAfter, null);
});

test("no answer at all is an ApiError of status 0; an abort is not a failure and stays an AbortError", async () => {
  globalThis.fetch = async () => { throw new TypeError("Failed to fetch"); };
  const lost = await request("/api/classes/ABC").catch((e) => e);
  assert.ok(lost instanceof ApiError);
  assert.equal(lost.status, 0);
  assert.deepEqual(lost.fields, []);
  const controller = new AbortController();
  controller.abort();
  globalThis.fetch = realFetch;
  const aborted = await request("http://127.0.0.1:9/api/compare", { body: {}, signal: controller.signal }).catch((e) => e);
  assert.equal(aborted.name, "AbortError");
  assert.ok(!(aborted instanceof ApiError));
});
