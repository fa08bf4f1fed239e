"""What a class leaves its teacher: per step the class visited and asked about, each round's counts, which
choices the server's verdict accepted at the reveal, who answered and who did not; as JSON and as CSV.

The texts (question, choices) are the lesson's own in the asked language (static/i18n/lesson/*.json), so the
CSV is UTF-8 with a byte-order mark: a spreadsheet opens 注意力, アテンション and é as they are.
"""

import csv
import io
from pathlib import Path

from app.domain.lesson_steps import STEPS
from app.services.lesson import lesson_texts
from app.stores import ClassRecord

CSV_COLUMNS = ["step", "step_id", "question", "round", "choice", "choice_text", "right", "count", "answered",
               "students", "not_answered"]


def class_results(code: str, record: ClassRecord, static_dir: Path, lang: str, results_days: float) -> dict:
    """The results as GET /results answers them; an ended class's are kept until `kept_until`."""
    texts = lesson_texts(static_dir, lang)
    steps = []
    for number, kept in record.steps.items():
        step = STEPS[number - 1]
        if not step["choices"]:
            continue  # a step without a question leaves no votes
        rounds = []
        for round_ in range(1, kept.rounds + 1):
            chosen = {student: choice for at, r, student, choice in record.answers if (at, r) == (number, round_)}
            counts = {choice: sum(1 for c in chosen.values() if c == choice) for choice in step["choices"]}
            rounds.append({
                "round": round_, "counts": counts, "answered": len(chosen),
                "right": None if kept.accepted is None else sum(counts[c] for c in kept.accepted if c in counts),
                "not_answered": [{"student": s, "name": name} for s, name in record.students.items()
                                 if s not in chosen]})
        steps.append({
            "step": number, "id": step["id"], "question": texts.get(f"{step['id']}_question", ""),
            "choices": [{"id": choice, "text": texts.get(f"{step['id']}_choice_{choice}", choice),
                         "right": None if kept.accepted is None else choice in kept.accepted}
                        for choice in step["choices"]],
            "accepted": kept.accepted, "rounds": rounds})
    ended = record.ended_at is not None
    return {"code": code, "lang": lang, "ended": ended, "ended_at": record.ended_at,
            "kept_until": record.ended_at + results_days * 24 * 3600 if ended else None,
            "students": len(record.students), "steps": steps}


def results_csv(results: dict) -> bytes:
    """One row per step, round and choice; `right` is yes/no, or empty before the step's reveal."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for step in results["steps"]:
        for round_ in step["rounds"]:
            missing = "; ".join(seat["name"] for seat in round_["not_answered"])
            for choice in step["choices"]:
                right = "" if choice["right"] is None else ("yes" if choice["right"] else "no")
                writer.writerow([step["step"], step["id"], step["question"], round_["round"], choice["id"],
                                 choice["text"], right, round_["counts"][choice["id"]], round_["answered"],
                                 results["students"], missing])
    return out.getvalue().encode("utf-8-sig")
