"""The one reader of a page's link: every query parameter of / and /lesson, decoded here and nowhere else.

The server decides what each value means; the page receives the decisions (templates/base.html embeds them as
#page-link, which static/js/explorer/state.js and static/js/lesson/page.js read) and never parses a hand-typed
query itself. A value the page cannot use (unknown, out of range, repeated, holding an invisible character) is
replaced by the value the page opens with, and a notice in the page's language names the parameter, what the
link asked and what was used instead (templates/_notices.html). A parameter the page does not read is named too.

Whole numbers are ASCII digits or full-width ones (U+FF10-U+FF19, as a Chinese or Japanese keyboard types
them: step=３ is step 3); any other digit is refused.
"""

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from app.domain.class_codes import CODE_ALPHABET, CODE_LENGTH
from app.schemas.text import ALLOWED_CONTROLS, REORDERING  # the lines' rule
from app.services.i18n import LANGS, shown_back
from app.services.snapshots import steps as training_steps

FULL_WIDTH_DIGITS = str.maketrans("０１２３４５６７８９", "0123456789")
WHOLE = re.compile(r"[0-9]+")
CLASS_CODE = re.compile(f"[{CODE_ALPHABET}]{{{CODE_LENGTH}}}")
SWITCH = ["0", "1"]  # causal, posinfo, align, present: off or on


class Refused(Exception):
    """A value the page cannot use. `allowed`: what it takes, as the notice says it; `kind`: which notice."""

    def __init__(self, allowed: str = "", kind: str = "bad_value", kept=None, **extra):
        super().__init__(allowed)
        self.allowed, self.kind, self.kept, self.extra = allowed, kind, kept, extra


def whole(value: str) -> int | None:
    """A whole number written in ASCII or full-width digits, else None."""
    value = value.translate(FULL_WIDTH_DIGITS)
    return int(value) if WHOLE.fullmatch(value) else None


def one_of(allowed: list[str]) -> Callable[[str], str]:
    def read(value: str) -> str:
        if value not in allowed:
            raise Refused(", ".join(allowed))
        return value
    return read


def number_in(low: int, high: int) -> Callable[[str], int]:
    def read(value: str) -> int:
        n = whole(value)
        if n is None or not low <= n <= high:
            raise Refused(f"{low}–{high}" if high > low else str(low))
        return n
    return read


def number_of(allowed: list[int]) -> Callable[[str], int]:
    def read(value: str) -> int:
        n = whole(value)
        if n not in allowed:
            raise Refused(", ".join(map(str, allowed)))
        return n
    return read


def one_character(value: str) -> str:
    """One character that is not an invisible control or format character (as the lines: app/schemas/text.py)."""
    for ch in value:
        if unicodedata.category(ch) in ("Cc", "Cf") and ch not in ALLOWED_CONTROLS:
            raise Refused(kind="reorders" if ord(ch) in REORDERING else "invisible", code=f"U+{ord(ch):04X}")
    if len(value) != 1:
        raise Refused(kind="one_character")
    return value


def heads_list(n_layer: int, n_head: int) -> Callable[[str], list[str]]:
    """off=: heads as "layer-head" (1-based), comma-separated; each must be a head of the page's model. The heads
    it has are kept when others are refused (a link made on a deeper model still turns those off)."""
    def read(value: str) -> list[str]:
        keys = [k for k in value.split(",") if k]
        pairs = [tuple(whole(part) for part in k.split("-")) if k.count("-") == 1 else (None, None) for k in keys]
        good = [(layer, head) for layer, head in pairs
                if layer and head and layer <= n_layer and head <= n_head]
        kept = [f"{layer}-{head}" for layer, head in sorted(set(good))]
        if len(good) < len(pairs):
            raise Refused(f"1-1 … {n_layer}-{n_head}", kept=kept)
        return kept
    return read


@dataclass(frozen=True)
class Param:
    read: Callable[[str], object]
    default: object
    shown: str  # the value the page opens with instead, as the notice names it
    phrase: str = ""  # a default that is no value (off: no head turned off), named in words instead


@dataclass(frozen=True)
class Link:
    values: dict  # parameter -> the value the page opens with
    notices: list[str]


def _decode(query, params: dict[str, Param], texts: dict, values: dict) -> list[str]:
    """Decode each of `params` from `query` (a multi-dict) into `values`; the notices for those it could not use."""
    notices = []
    for name, param in params.items():
        asked = query.getlist(name)
        values[name] = param.default
        if len(asked) > 1:
            notices.append(texts["notice_repeated"].format(
                name=name, count=len(asked), asked=texts["notice_values_sep"].join(map(shown_back, asked)),
                used=param.phrase or f"{name}={param.shown}"))
        elif asked:
            try:
                values[name] = param.read(asked[0])
            except Refused as refused:
                if refused.kept:  # part of the value was usable: it is what the page opens with
                    values[name] = refused.kept
                    param = Param(param.read, refused.kept, ",".join(refused.kept))
                notices.append(_refusal(texts, name, asked[0], param, refused))
    return notices


def _unknown(query, known, texts: dict) -> list[str]:
    """A parameter the page does not read: named, so a mistyped one (?setp=3) is not silently dropped."""
    return [texts["notice_unknown_param"].format(name=shown_back(name), asked=shown_back(query.get(name)))
            for name in dict.fromkeys(query.keys()) if name not in known]


def _refusal(texts: dict, name: str, asked: str, param: Param, refused: Refused) -> str:
    # A box's character is named alone; any other value as name=value.
    used = param.shown if refused.kind in ("one_character", "invisible", "reorders") else \
        param.phrase or f"{name}={param.shown}"
    if refused.kind == "class":
        return texts["notice_bad_class"].format(asked=shown_back(asked), length=CODE_LENGTH)
    key = {"bad_value": "notice_bad_value", "one_character": "notice_one_character",
           "invisible": "notice_invisible", "reorders": "notice_invisible_reorders",
           "no_step": "notice_no_step"}[refused.kind]
    return texts[key].format(name=name, asked=shown_back(asked), allowed=refused.allowed, used=used, **refused.extra)


def _shape(options: dict, pos: str, weights: str, n_layer: int | None, heads: int) -> tuple[int, int]:
    """The depth and head count of the model the explorer runs for these choices (model-choice.js effectiveWeights)."""
    for model in options["models"]:
        if weights == f"model:{model['name']}":
            return model["n_layer"], model["n_head"]
    if weights == "trained" and pos in options["trained"]:
        shape = options["trained"][pos]
        return shape["n_layer"], shape["n_head"]
    return n_layer or options["random"]["n_layer"], heads


def explorer_link(query, options: dict, registry, texts: dict) -> Link:
    """Every parameter of /: the lines, the controls, the relative panel, the training step and the heads off.
    `lang` is negotiated by app/services/i18n.py; here it is checked for repeats only."""
    d, random = options["defaults"], options["random"]
    values: dict = {}
    # First the mode, then the choices that fix the model's shape, then the numbers that must fit in it.
    notices = _decode(query, {
        "a": Param(str, d["line_a"], d["line_a"]),
        "b": Param(str, d["line_b"], d["line_b"]),
        "pos": Param(one_of(options["positions"]), d["position"], d["position"]),
        "heads": Param(number_of(options["n_head"]), random["n_head"], str(random["n_head"])),
        "n_layer": Param(number_in(1, options["n_layer_max"]), None, str(random["n_layer"])),
    }, texts, values)
    pos = values["pos"]
    # weights: null is the page's default, trained where they ship for the mode, else random (model-choice.js).
    default_weights = "trained" if pos in options["trained"] else "random"
    notices += _decode(query, {
        "weights": Param(one_of(["random", "trained", *(f"model:{m['name']}" for m in options["models"])]), None,
                         default_weights),
    }, texts, values)
    effective = values["weights"] or default_weights
    n_layer, n_head = _shape(options, pos, effective, values["n_layer"], values["heads"])
    # The relative panel runs the trained models when all three modes ship them, else the page's random shape.
    if effective.startswith("model:"):
        rel_layers, rel_heads = n_layer, n_head
    elif effective == "trained" and all(p in options["trained"] for p in options["positions"]):
        rel_layers, rel_heads = n_layer, n_head
    else:
        rel_layers, rel_heads = _shape(options, pos, "random", values["n_layer"], values["heads"])
    steps = training_steps(registry)
    params = {
        "layer": Param(number_in(1, n_layer), 1, "1"),
        "causal": Param(one_of(SWITCH), "1", "1"),
        "posinfo": Param(one_of(SWITCH), "1", "1"),
        "align": Param(one_of(SWITCH), "1", "1"),
        "rel_first": Param(one_character, "明", "明"),
        "rel_second": Param(one_character, "月", "月"),
        "rel_layer": Param(number_in(1, rel_layers), 1, "1"),
        "rel_head": Param(number_in(1, rel_heads), 1, "1"),
        # null: the end of training, the shipped checkpoints
        "step": Param(number_of(steps), None, str(steps[-1])),
        "off": Param(heads_list(n_layer, n_head), [], "", texts["notice_no_heads_off"]),
    }
    notices += _decode(query, params, texts, values)
    notices += _unknown(query, {*values, "lang"}, texts)
    for switch in ("causal", "posinfo", "align"):
        values[switch] = values[switch] == "1"
    if values["step"] == steps[-1]:
        values["step"] = None
    return Link(values, notices)


def lesson_link(query, n_steps: int, texts: dict) -> Link:
    """Every parameter of /lesson: the step, the presenter view, and a class's code and join key (class.js joins
    only a code of a class code's shape). `texts`: the page's and the lesson's texts together."""
    values: dict = {}
    notices = _decode(query, {
        "step": Param(lesson_step(n_steps), 1, "1"),
        "present": Param(one_of(SWITCH), "0", "0"),
        "class": Param(class_code, None, ""),
        "key": Param(str, None, ""),
    }, texts, values)
    notices += _unknown(query, {*values, "lang"}, texts)
    return Link({**values, "present": values["present"] == "1"}, notices)


def lesson_step(n_steps: int) -> Callable[[str], int]:
    def read(value: str) -> int:
        n = whole(value)
        if n is None or not 1 <= n <= n_steps:
            raise Refused(kind="no_step", total=n_steps)
        return n
    return read


def class_code(code: str) -> str:
    if not CLASS_CODE.fullmatch(code):
        raise Refused(kind="class")
    return code


def one_lang(query) -> str | None:
    """?lang=, when the link gives it once: a repeated one is no choice, and the page negotiates as without."""
    asked = query.getlist("lang")
    return asked[0] if len(asked) == 1 else None


def lang_repeats(query, texts: dict, chosen: str) -> list[str]:
    """?lang= given twice: said like any other repeat, naming the language the page chose."""
    asked = query.getlist("lang")
    if len(asked) < 2:
        return []
    return [texts["notice_repeated"].format(name="lang", count=len(asked),
                                            asked=texts["notice_values_sep"].join(map(shown_back, asked)),
                                            used=LANGS[chosen])]
