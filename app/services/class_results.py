"""What a class leaves its teacher: per step the class voted on, each round's counts, which choices the server's
verdict accepted at the reveal, who answered and who did not, and each student's answer; as JSON and as two CSV
files (results.csv: one row per step, round and choice; answers.csv: one row per student, step and round).

The texts (question, choices, column headers) are the lesson's own in the asked language
(static/i18n/lesson/*.json), so a CSV is UTF-8 with a byte-order mark: a spreadsheet opens 注意力, アテンション and é
as they are. Every cell a spreadsheet would read as a formula starts with a quote (safe_cell).
"""

import csv
import io
from datetime import UTC, datetime
from pathlib import Path

from app.domain.lesson_steps import STEPS
from app.services.lesson import lesson_texts
from app.stores import ClassRecord

RESULT_COLUMNS = ["step", "step_id", "question", "round", "choice", "choice_text", "right", "count", "answered",
                  "students", "not_answered"]
ANSWER_COLUMNS = ["step", "step_id", "question", "round", "name", "choice", "choice_text", "right", "answered_at"]
# A cell starting with one of these is a formula to a spreadsheet (=HYPERLINK(...), +1, -1, @SUM(...)), or can
# become one once the tab or return before it is read (OWASP, "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value) -> str:
    """The cell as text, with a single quote in front where a spreadsheet would read a formula: OWASP's rule,
    so a student named =1+2 is shown as '=1+2, never computed. Every cell goes through here, the lesson's own
    texts too: none should start so, and a translation that did would be shown as text all the same."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def class_results(code: str, record: ClassRecord, static_dir: Path, lang: str, results_days: float) -> dict:
    """The results as GET /results answers them: the steps the class voted on or the teacher revealed (the ones
    the teacher's summary lists), and one answer row per student, step and round; an ended class's are kept
    until `kept_until`."""
    texts = lesson_texts(static_dir, lang)
    steps, answers = [], []
    for number, kept in record.steps.items():
        step = STEPS[number - 1]
        if not step["choices"]:
            continue  # a step without a question leaves no votes
        rounds, chosen_by_round = [], []
        for round_ in range(1, kept.rounds + 1):
            chosen = {student: (choice, at) for step_, r, student, choice, at in record.answers
                      if (step_, r) == (number, round_)}
            counts = {choice: sum(1 for c, _ in chosen.values() if c == choice) for choice in step["choices"]}
            rounds.append({
                "round": round_, "counts": counts, "answered": len(chosen),
                "right": None if kept.accepted is None else sum(counts[c] for c in kept.accepted if c in counts),
                "not_answered": [{"student": s, "name": name} for s, name in record.students.items()
                                 if s not in chosen]})
            chosen_by_round.append(chosen)
        if kept.accepted is None and not any(r["answered"] for r in rounds):
            continue  # passed without a vote or a reveal: nothing to read
        steps.append({
            "step": number, "id": step["id"], "question": texts.get(f"{step['id']}_question", ""),
            "choices": [{"id": choice, "text": texts.get(f"{step['id']}_choice_{choice}", choice),
                         "right": None if kept.accepted is None else choice in kept.accepted}
                        for choice in step["choices"]],
            "accepted": kept.accepted, "rounds": rounds})
        for round_, chosen in enumerate(chosen_by_round, 1):
            for student, name in record.students.items():
                choice, at = chosen.get(student, (None, None))
                answers.append({"student": student, "name": name, "step": number, "round": round_, "choice": choice,
                                "right": None if kept.accepted is None or choice is None else choice in kept.accepted,
                                "answered_at": at})
    # One student's rows together, in joining order, then by step and round.
    order = {student: n for n, student in enumerate(record.students)}
    answers.sort(key=lambda row: (order[row["student"]], row["step"], row["round"]))
    ended = record.ended_at is not None
    return {"code": code, "lang": lang, "ended": ended, "ended_at": record.ended_at,
            "kept_until": record.ended_at + results_days * 24 * 3600 if ended else None,
            "students": len(record.students), "steps": steps, "answers": answers}


def _table(lang_texts: dict, columns: list[str], rows) -> bytes:
    """A CSV with headers in the lesson's language, every cell made safe, as a spreadsheet opens it."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    for row in [[lang_texts[f"class_csv_{column}"] for column in columns], *rows]:
        writer.writerow([safe_cell(cell) for cell in row])
    return out.getvalue().encode("utf-8-sig")


def _right(texts: dict, right: bool | None) -> str:
    return "" if right is None else texts["class_csv_yes" if right else "class_csv_no"]


def results_csv(results: dict, static_dir: Path) -> bytes:
    """One row per step, round and choice; `right` is yes/no in the results' language, or empty before the step's
    reveal."""
    texts = lesson_texts(static_dir, results["lang"])
    rows = []
    for step in results["steps"]:
        for round_ in step["rounds"]:
            missing = "; ".join(seat["name"] for seat in round_["not_answered"])
            for choice in step["choices"]:
                rows.append([step["step"], step["id"], step["question"], round_["round"], choice["id"], choice["text"],
                             _right(texts, choice["right"]), round_["counts"][choice["id"]], round_["answered"],
                             results["students"], missing])
    return _table(texts, RESULT_COLUMNS, rows)


def answers_csv(results: dict, static_dir: Path) -> bytes:
    """One row per student, step and round (results["answers"]): the choice (empty where the student sent none),
    whether the verdict accepted it, and when it was sent, in UTC."""
    texts = lesson_texts(static_dir, results["lang"])
    steps = {step["step"]: step for step in results["steps"]}
    rows = []
    for row in results["answers"]:
        step = steps[row["step"]]
        text = next((c["text"] for c in step["choices"] if c["id"] == row["choice"]), "")
        at = row["answered_at"]
        rows.append([row["step"], step["id"], step["question"], row["round"], row["name"], row["choice"], text,
                     _right(texts, row["right"]),
                     "" if at is None else datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%S")])
    return _table(texts, ANSWER_COLUMNS, rows)
