"""What a page says about a value in a hand-typed link it could not use (?pos=alibi, ?class=abc): the page
opens anyway, with its default, and says so once at the top in its own language (templates/_notices.html),
as it does for ?lang= (app/services/i18n.py) and the lesson's ?step=."""

import re

from app.domain.class_codes import CODE_ALPHABET, CODE_LENGTH
from app.services.i18n import shown_back

CLASS_CODE = re.compile(f"[{CODE_ALPHABET}]{{{CODE_LENGTH}}}")


def explorer_choices(options: dict) -> dict[str, list[str]]:
    """The explorer's query keys whose values are a choice, with the values its controls offer
    (templates/_controls.html renders the same lists from GET /api/options)."""
    return {
        "pos": list(options["positions"]),
        "heads": [str(h) for h in options["n_head"]],
        "n_layer": [str(n) for n in range(1, options["n_layer_max"] + 1)],
        "weights": ["random", "trained", *(f"model:{m['name']}" for m in options.get("models", []))],
    }


def choice_notices(query, choices: dict[str, list[str]], page_texts: dict) -> list[str]:
    """One notice per key of `choices` whose value in the query is not one of its values."""
    list_sep = page_texts["notice_values_sep"]
    return [page_texts["notice_bad_value"].format(name=key, asked=shown_back(query[key]),
                                                  allowed=list_sep.join(allowed))
            for key, allowed in choices.items() if key in query and query[key] not in allowed]


def class_notices(code: str | None, lesson_texts: dict) -> list[str]:
    """?class= that cannot be a class code: the lesson opens alone (class.js joins only a code of this shape)."""
    if code is None or CLASS_CODE.fullmatch(code):
        return []
    return [lesson_texts["notice_bad_class"].format(asked=shown_back(code), length=CODE_LENGTH)]
