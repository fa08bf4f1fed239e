// What a failed class request says, in the page's language (README "Class mode"). The server's error
// body is {detail: [{type, msg, ctx}]} and 429 and 503 carry Retry-After: shared/api.js's request() reads them
// into an ApiError (type, ctx, retryAfter), and the wording comes from the status and the type, never from the
// server's English msg. "The server did not answer" is only for a request that got no answer at all (status 0).

import { ApiError } from "../shared/api.js";
import { verbatim } from "../shared/i18n.js";

/** The store or the line is down: the class comes back by itself, so the page says "reconnecting…". */
export const isOutage = (error) =>
  error?.status === 0 || (error?.status === 503 && error?.type === "class_store_unavailable");

const BY_TYPE = {
  class_store_unavailable: "class_store_down",
  too_many_classes_from_address: "class_too_many_classes",
  too_many_joins_from_address: "class_too_many_joins",
  too_many_unknown_codes: "class_too_many",
  too_many_classes_open: "class_server_full",
  no_free_code: "class_no_code",
  teacher_key_missing: "class_key_missing",
  teacher_key_wrong: "class_key_wrong",
  class_locked: "class_locked",
  class_full: "class_full",
  teacher_only: "class_not_teacher",
  teacher_token_wrong: "class_not_teacher",
  student_token_missing: "class_seat_lost",
  student_token_wrong: "class_seat_lost",
  student_removed: "class_over_removed",
  refused_name: "class_name_refused",
  waiting_for_teacher: "class_waiting_me",
  name_too_long: "class_name_too_long",
  name_control_character: "class_name_bad",
  step_not_current: "class_closed",
  answers_closed: "class_closed",
  step_without_question: "class_closed",
  class_not_found: "class_gone",
};

/** {key, vars}: the i18n key (static/i18n/lesson) that says what happened, and its values. */
export function wording(error) {
  const seconds = error?.retryAfter ?? 60;
  if (!(error instanceof ApiError) || error.status === 0) return { key: "class_error", vars: {} };
  const key = BY_TYPE[error.type] ?? (error.status === 404 ? "class_gone" : "class_failed");
  const minutes = error.ctx?.retry_minutes ?? Math.max(1, Math.ceil(seconds / 60));
  return { key, vars: { seconds, minutes, status: error.status, code: error.ctx?.code ?? "",
    name: verbatim(error.ctx?.name ?? ""), max: error.ctx?.max_classes ?? error.ctx?.max_students ?? "" } };
}
