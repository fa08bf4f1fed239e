// Every page's requests to the JSON API (explorer, lesson and class mode), the same routes any user can call
// (/docs): POST routes that answer the setup on screen, GET routes whose answers are fixed for the life of the
// server, fetched once (getShipped), and class mode's routes (class/session.js's call), all by request().

/** Request fields, and the id prefix of the control each one belongs to. */
export const FIELD_CONTROLS = {
  line_a: "line-a",
  line_b: "line-b",
  position: "position",
  n_head: "heads",
  weights: "weights",
  n_layer: "n-layer",
  layer: "layer",
  causal: "causal",
};

export class ApiError extends Error {
  /**
   * fields: [{field, msg, type, ctx}] for errors tied to a request field; general: the rest. status 0: no answer
   * came (the network, or a server that stopped). type and ctx: the detail's first item's (class mode words its
   * errors from them); retryAfter: seconds from the Retry-After header (429, 503) or the detail's ctx, else null.
   */
  constructor(status, fields, general, { type = null, ctx = {}, retryAfter = null } = {}) {
    super(type ? `${status} ${type}` : `HTTP ${status}`);
    this.status = status;
    this.fields = fields;
    this.general = general;
    this.type = type;
    this.ctx = ctx;
    this.retryAfter = retryAfter;
  }
}

const JSON_TYPE = "application/json";

/** The request fields an error can be tied to: those with a control, the distance (a control on the lesson page
 * only), the training step (the explorer's step control) and the relative panel's two boxes (first, second). Any
 * other field's error is a general one. */
const REQUEST_FIELDS = new Set([...Object.keys(FIELD_CONTROLS), "distance", "step", "first", "second"]);

/**
 * Every page's request to the JSON API: GET url (with `query`, its null values left out) or, with a `body`, POST it
 * as JSON; `method` for another (a POST without a body, a DELETE), `headers` added to the request's (a class's
 * token), `as: "blob"` to read an answer that is not JSON, of the type `accept` names (a CSV file: "text/csv"), which
 * the Accept header asks for first, JSON after it for a refusal's detail. The answer's JSON (null without one), or an
 * ApiError (apiError) when the server refuses or fails, or with status 0 when no answer came. An aborted request
 * rejects with the AbortError, which is not a failure.
 */
export async function request(url, { body, query, signal, method, headers = {}, as = "json", accept = JSON_TYPE } = {}) {
  const given = query && Object.entries(query).filter(([, value]) => value !== null && value !== undefined);
  const search = given?.length ? `?${new URLSearchParams(given)}` : ""; // no bare "?": /api/positions stays itself
  const sent = body !== undefined;
  let response;
  try {
    response = await fetch(url + search, {
      method: method ?? (sent ? "POST" : "GET"),
      headers: { Accept: accept === JSON_TYPE ? JSON_TYPE : `${accept}, ${JSON_TYPE};q=0.5`,
        ...(sent ? { "Content-Type": JSON_TYPE } : {}), ...headers },
      body: sent ? JSON.stringify(body) : undefined,
      signal,
    });
  } catch (error) {
    if (error?.name === "AbortError") throw error;
    throw new ApiError(0, [], [{ msg: String(error?.message ?? error) }]);
  }
  if (!response.ok) throw apiError(response, (await jsonOf(response))?.detail);
  return as === "blob" ? response.blob() : jsonOf(response);
}

/** The answer's JSON, or null when it is not JSON (a proxy's page, or no body). */
function jsonOf(response) {
  return response.json().catch(() => null);
}

/** The one error parser: the detail's items tied to a request field (REQUEST_FIELDS) and the rest, or the status's
 * text when the answer has no detail; with the first item's type and ctx, and how long to wait (Retry-After). */
function apiError(response, detail) {
  const fields = [];
  const general = [];
  if (Array.isArray(detail)) {
    for (const item of detail) {
      const loc = Array.isArray(item?.loc) ? item.loc : [];
      const field = loc.find((part) => REQUEST_FIELDS.has(part));
      const entry = { field, msg: String(item?.msg ?? ""), type: item?.type, ctx: item?.ctx };
      (field ? fields : general).push(entry);
    }
  } else if (detail !== undefined && detail !== null) {
    general.push({ msg: String(detail) });
  }
  if (!fields.length && !general.length) general.push({ msg: response.statusText });
  const first = Array.isArray(detail) ? detail[0] : null;
  const header = Number.parseInt(response.headers.get("Retry-After") ?? "", 10);
  const retryAfter = Number.isFinite(header) ? header : Number(first?.ctx?.retry_after) || null;
  return new ApiError(response.status, fields, general, { type: first?.type ?? null, ctx: first?.ctx ?? {}, retryAfter });
}

export function getOptions(signal) {
  return request("/api/options", { signal });
}

function postJson(url, body, signal) {
  return request(url, { body, signal });
}

export function postCompare(body, signal) {
  return postJson("/api/compare", body, signal);
}

/**
 * /api/compare's answer and the server's verdict on it (whether each gap is rounding): {answer, verdict}, as soon as
 * the answer is in, with `verdict` a promise. The answer carries the verdict when float32 decided every gap, as it
 * does for lines that differ: a keystroke is then one request. Otherwise (answer.verdict null) the verdict is asked
 * by the answer's comparison_id once the answer is in: the browser sends it on the connection the answer came by, to
 * the server worker that keeps that comparison's float32 pass, which reruns in float64 only the gaps float32 cannot
 * decide. A worker that does not keep it (404) is sent the body instead. The maps need only the answer; the
 * sentences that read the verdict wait for it (main.js), so that a sentence never describes other numbers than the
 * charts.
 */
export async function postCompareJudged(body, signal) {
  const answer = await postJson("/api/compare", body, signal);
  const verdict = answer.verdict ? Promise.resolve(answer.verdict)
    : byId(`/api/compare/${answer.comparison_id}/verdict`, () => postJson("/api/compare/verdict", body, signal), signal);
  verdict.catch(() => {}); // its reader shows a failure; nobody reads the verdict of an answer already replaced
  return { answer, verdict };
}

/** GET url, a verdict on a comparison by its id; byBody() when the worker does not keep that comparison (404). */
async function byId(url, byBody, signal) {
  try {
    return await request(url, { signal });
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return byBody();
    throw error;
  }
}


/** The typed line with every head on and with the heads in body.off turned off (POST /api/ablate). */
export function postAblate(body, signal) {
  return postJson("/api/ablate", body, signal);
}

/** {first, second, weights, n_head?} -> scores[mode][layer][head][start]. */
export function postRelative(body, signal) {
  return postJson("/api/relative", body, signal);
}

/**
 * What the model did at a lesson step, for the setup on screen: {outcome, accepted, reason, figures, ...}.
 * setup: {line_a, line_b, position, weights, n_layer, n_head, causal}, as GET /api/lesson gives it; trained
 * weights fix their own shape.
 */
export function postVerdict(stepId, setup, signal) {
  return postJson(`/api/lesson/${encodeURIComponent(stepId)}/verdict`, verdictBody(setup), signal);
}

/**
 * A same-or-different step's comparison on the setup on screen and the step's verdict on it: {...answer, verdict}.
 * The page sends the setup as the verdict's body (verdictBody); the server builds the comparison from it
 * (POST /api/lesson/{step}/compare), so no comparison request is built here. The answer carries the step's verdict
 * when float32 decides it, as it does for lines that are not a reordering: a keystroke is then one request.
 * Otherwise (step_verdict null) the verdict is asked by the answer's comparison_id once the comparison is in: it goes
 * by the same connection to the server worker that keeps the comparison's float32 pass, and runs only the float64
 * rerun; a worker that does not keep it (404) is sent the setup instead.
 */
export async function postStepCompare(stepId, setup, signal) {
  const step = encodeURIComponent(stepId);
  const answer = await postJson(`/api/lesson/${step}/compare`, verdictBody(setup), signal);
  const verdict = answer.step_verdict
    ?? await byId(`/api/lesson/${step}/verdict/${answer.comparison_id}`, () => postVerdict(stepId, setup, signal), signal);
  return { ...answer, verdict };
}

/** The verdict's request body for a setup ({} without one: the step's own); a class's reveal sends the same. */
export function verdictBody(setup) {
  if (!setup) return {};
  const body = { line_a: setup.line_a, position: setup.position, weights: setup.weights, causal: setup.causal };
  if (setup.line_b !== null && setup.line_b !== undefined) body.line_b = setup.line_b;
  if (setup.weights === "random") Object.assign(body, { n_layer: setup.n_layer, n_head: setup.n_head });
  if (setup.distance !== undefined && setup.distance !== null) body.distance = setup.distance;
  return body;
}

const shipped = new Map();

/** GET /api/{name} once per page (e.g. "heads", "positions", "training", "length"); a failed fetch may be retried. */
export function getShipped(name) {
  if (!shipped.has(name)) {
    const asked = request(`/api/${name}`);
    asked.catch(() => shipped.delete(name));
    shipped.set(name, asked);
  }
  return shipped.get(name);
}
