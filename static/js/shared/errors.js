// API errors worded for a student, in the page's language, from the error's machine-readable type and the
// rule's values (ctx). Shared by the explorer and the guided lesson, so both say the same thing for the same
// refusal. The server's English msg is only the last resort, for a type this module does not know.

import { ApiError } from "./api.js";
import { grouped, tr } from "./i18n.js";

const LINES = new Set(["line_a", "line_b"]);
const WRONG_TYPE = new Set(["int_type", "int_parsing", "bool_type", "string_type", "float_type"]);

/**
 * One field error ({field, type, ctx, msg}) as a sentence to act on.
 * context: {text, position, max}: the field's line as sent, the position mode, and that mode's
 * character limit. The limit rule comes back as a plain value_error without ctx, so the text's length
 * is what tells it apart.
 */
export function fieldMessage(error, { text = "", position, max } = {}) {
  const ctx = error.ctx ?? {};
  if (LINES.has(error.field)) {
    if (error.type === "string_too_short" || error.type === "missing") return tr("error_empty");
    const limit = ctx.max_length ?? max;
    if (error.type === "string_too_long" || (limit && [...text].length > limit)) {
      return position === "learned" ? tr("error_too_long_learned", { max: limit }) : tr("error_too_long", { max: limit });
    }
  }
  const known = {
    less_than_equal: () => tr("error_at_most", { max: ctx.le }),
    greater_than_equal: () => tr("error_at_least", { min: ctx.ge }),
    n_head_choice: () => tr("error_n_head"),
    literal_error: () => tr("error_choice", { expected: ctx.expected }),
    missing: () => tr("error_missing"),
    extra_forbidden: () => tr("error_extra"),
    // A training step without a snapshot (GET ?step=, POST /api/ablate's step): the steps that do ship.
    snapshot_step: () => tr("error_step", { steps: (ctx.steps ?? []).map(grouped).join(tr("ablation_list_sep")) }),
    step_needs_trained: () => tr("error_step_trained"),
    control_character: () => tr(ctx.kind === "reorders" ? "error_control_reorders" : "error_control",
      { code: ctx.code, index: ctx.index }),
    distance: () => tr("error_distance", { min: ctx.min, max: ctx.max }),
  };
  if (known[error.type]) return known[error.type]();
  if (WRONG_TYPE.has(error.type)) return tr("error_type");
  return tr("error_rule", { msg: error.msg });
}

/** What went wrong with the request as a whole: the network, its size, its rate, or the server's status. */
export function generalMessage(error) {
  if (!(error instanceof ApiError) || error.status === 0) return tr("error_network"); // 0: no answer came
  if (error.status === 413) return tr("error_too_large");
  if (error.status === 429) return tr("error_rate_limited");
  return tr("error_server", { status: error.status });
}

/** The errors a form can check before asking the server: an empty line is an input to fix, not a failure. */
export function emptyLines(lines) {
  const fields = Object.entries(lines).filter(([, text]) => text === "")
    .map(([field]) => ({ field, type: "string_too_short", ctx: { min_length: 1 }, msg: "" }));
  return fields.length ? new ApiError(422, fields, []) : null;
}
