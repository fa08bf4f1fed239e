// The page's requests to the JSON API, the same routes any user can call (/docs): POST routes that answer the
// setup on screen, and GET routes whose answers are fixed for the life of the server, fetched once (getShipped).

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
  /** fields: [{field, msg, type, ctx}] for errors tied to a request field; general: the rest. */
  constructor(status, fields, general) {
    super(`HTTP ${status}`);
    this.status = status;
    this.fields = fields;
    this.general = general;
  }
}

/** The request fields an error can be tied to: those with a control, the distance (a control on the lesson
 * page only) and the relative panel's two boxes (first, second). Any other field's error is a general one. */
const REQUEST_FIELDS = new Set([...Object.keys(FIELD_CONTROLS), "distance", "first", "second"]);

function splitDetail(detail) {
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
  return { fields, general };
}

async function readJson(response) {
  try {
    return await response.json();
  } catch {
    return null;
  }
}

export async function getOptions(signal) {
  const response = await fetch("/api/options", { signal, headers: { Accept: "application/json" } });
  if (!response.ok) throw new ApiError(response.status, [], [{ msg: response.statusText }]);
  return response.json();
}

async function postJson(url, body, signal) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify(body),
    signal,
  });
  const data = await readJson(response);
  if (!response.ok) {
    const { fields, general } = splitDetail(data?.detail);
    throw new ApiError(response.status, fields, general);
  }
  return data;
}

export function postCompare(body, signal) {
  return postJson("/api/compare", body, signal);
}

/**
 * /api/compare's answer and the server's verdict on it (whether each gap is rounding): {answer, verdict}, as soon as
 * the answer is in, with `verdict` a promise. The answer carries the verdict when float32 decided every gap, as it
 * does for lines that differ: a keystroke is then one request. Otherwise (answer.verdict null) the verdict is asked
 * of POST /api/compare/verdict once the answer is in: the browser sends it on the connection the answer came by, to
 * the server worker that keeps that answer's float32 pass, which reruns in float64 only the gaps float32 cannot
 * decide. The maps need only the answer; the sentences that read the verdict wait for it (main.js), so that a
 * sentence never describes other numbers than the charts.
 */
export async function postCompareJudged(body, signal) {
  const answer = await postJson("/api/compare", body, signal);
  const verdict = answer.verdict ? Promise.resolve(answer.verdict) : postJson("/api/compare/verdict", body, signal);
  verdict.catch(() => {}); // its reader shows a failure; nobody reads the verdict of an answer already replaced
  return { answer, verdict };
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
 * setup: {a, b, position, weights, n_layer, n_head, causal}, as GET /api/lesson gives it; trained weights fix
 * their own shape. The lines are sent as line_a and line_b, as to /api/compare.
 */
export function postVerdict(stepId, setup, signal) {
  return postJson(`/api/lesson/${encodeURIComponent(stepId)}/verdict`, verdictBody(setup), signal);
}

/** The verdict's request body for a setup ({} without one: the step's own); a class's reveal sends the same. */
export function verdictBody(setup) {
  if (!setup) return {};
  const body = { line_a: setup.a, position: setup.position, weights: setup.weights, causal: setup.causal };
  if (setup.b !== null && setup.b !== undefined) body.line_b = setup.b;
  if (setup.weights === "random") Object.assign(body, { n_layer: setup.n_layer, n_head: setup.n_head });
  if (setup.distance !== undefined && setup.distance !== null) body.distance = setup.distance;
  return body;
}

const shipped = new Map();

/** GET /api/{name} once per page (e.g. "heads", "positions", "training", "length"); a failed fetch may be retried. */
export function getShipped(name) {
  if (!shipped.has(name)) {
    const request = fetch(`/api/${name}`, { headers: { Accept: "application/json" } }).then(async (response) => {
      if (!response.ok) throw new ApiError(response.status, [], [{ msg: response.statusText }]);
      return response.json();
    });
    request.catch(() => shipped.delete(name));
    shipped.set(name, request);
  }
  return shipped.get(name);
}
