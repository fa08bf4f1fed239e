// What each kind of step asks the server, draws, and says. The verdict itself is the server's
// (POST /api/lesson/{step}/verdict, app/services/verdicts.py): this file only words it in the page's
// language beside the charts drawn from the same API, so a student who changes the setup gets a true
// answer, and no threshold lives here.
//
// A kind: fetch(ctx, signal) -> data (with data.verdict); judge(data, ctx) -> {outcome, accepted, text,
// value?, unknown}; charts(data, ctx) -> [{name, caption, alt, figure | table}]; notice, lesson, snippet ->
// text or "". ctx = {step, setup, options, later(id)}: later(id) is a later step not answered yet ({n, setup}) or
// null, whose answer a figure here would give away (record.js unansweredLater).

import { bands, probe } from "./kept.js";
import { ex1, leak, limit, nomask, order, pair, posemb } from "./kinds-compare.js";
import { ablate, heads, split, trainingKind } from "./kinds-heads.js";
import { length, relative, rotate, table } from "./kinds-positions.js";

export { orderLabel } from "./kinds-heads.js";

export const KINDS = {
  order, leak, nomask, pair, posemb, limit, table, rotate, relative, length, split, heads, ablate, probe, bands, ex1,
  ex2: trainingKind("heads"),
  ex3: trainingKind("modes"),
};
