"""The guided lesson's steps, as data: the lesson's path from order blindness to the self-test.

Each step names its `kind` (which charts, which verdict: static/js/lesson/kinds.js), the `setup`
it loads into the explorer's controls (null: the step does not run the model on lines), the ids of
its answer `choices`, and the figure the lesson printed for it (null: the lesson printed none), with the
significant `digits` it printed them with (1.9e-02: 2), so the page shows them as printed.
Every text lives in static/i18n/lesson/{lang}.json under keys made of the step's id:
{id}_title, {id}_framing, {id}_question, {id}_choice_{choice}, and {id}_lesson where `lesson` is set.
"""

from model.experiments import LESSON_LINES as LINES

LESSON_LINES = {"line_a": LINES[0], "line_b": LINES[1]}  # the lesson's two lines, as model/experiments.py holds them
# The couplet the head ablation runs on (step 13), and the ablation panel's first line.
COUPLET = "白日依山尽，黄河入海流。"
LESSON_SHAPE = {"n_layer": 2, "n_head": 4}  # the lesson's model, for untrained weights
# 128 characters: pos_emb's last row. The student types the 129th.
FULL_TABLE_LINE = ("白日依山尽黄河入海流欲穷千里目更上一层楼" * 7)[:128]


def _setup(position: str, n_layer: int | None = 1, weights: str = "random", causal: bool = True,
           line_a: str | None = LESSON_LINES["line_a"], line_b: str | None = LESSON_LINES["line_b"],
           n_head: int | None = 4, distance: int | None = None) -> dict:
    """line_b None: the step reads line A only (its first two characters for the relative test, `distance` apart);
    line_a and line_b None: the step reads no line, only the model (its shipped figures on the validation poems).
    The keys are /api/compare's (line_a, line_b), as every answer names the lines."""
    setup = {"line_a": line_a, "line_b": line_b, "position": position, "weights": weights, "n_layer": n_layer,
             "n_head": n_head, "causal": causal}
    return setup if distance is None else {**setup, "distance": distance}


# The steps that ask whether the last position's output differs between line A and line B, with their two
# outcomes: the one for a gap that is rounding, then the one for a real gap.
GAP_STEPS = {
    "order": ("same", "different"), "leak": ("same", "different"), "pair": ("same", "different"),
    "posemb": ("same", "different"), "nomask": ("gone", "stays"), "ex1": ("rounding", "large"),
}
YES_NO = ["yes", "no"]
SAME_DIFFERENT = ["same", "different"]
HEAD_ORDERS = ["1<4<8", "8<4<1", "4<1<8", "4<8<1", "1<8<4", "8<1<4"]  # lowest loss first
PROBE_READS = ["close", "rough", "chance"]  # how well a probe reads the position: within a few places, ..., chance
BAND_COSTS = ["fastest", "slowest", "same"]  # which band of RoPE's pairs costs more loss when stopped
MODE_ORDERS = ["rope<learned<none", "learned<rope<none", "none<learned<rope", "none<rope<learned",
               "learned<none<rope", "rope<none<learned"]

STEPS = [
    # The lesson's experiment 1, first row: no positions, one layer.
    {"id": "order", "kind": "order", "section": "order", "setup": _setup("none"),
     "choices": SAME_DIFFERENT, "lesson": {"value": 3.7e-08, "digits": 2}},
    # Its second row: two layers, and the causal mask leaks order.
    {"id": "leak", "kind": "leak", "section": "surprise", "setup": _setup("none", n_layer=2),
     "choices": SAME_DIFFERENT, "lesson": {"value": 1.9e-02, "with": 1.5e-02, "digits": 2}},
    # The control experiment: the mask off.
    {"id": "nomask", "kind": "nomask", "section": "surprise", "setup": _setup("none", n_layer=2, causal=False),
     "choices": ["stays", "gone"], "lesson": None},
    # A pair that ends on different characters: not an order test.
    {"id": "pair", "kind": "pair", "section": "surprise", "setup": _setup("none", line_a="我打你", line_b="你打我"),
     "choices": SAME_DIFFERENT, "lesson": None},
    {"id": "posemb", "kind": "posemb", "section": "posemb", "setup": _setup("learned"),
     "choices": SAME_DIFFERENT, "lesson": {"value": 2.8e-03, "without": 3.7e-08, "digits": 2}},
    {"id": "limit", "kind": "limit", "section": "posemb", "setup": _setup("learned", line_a=FULL_TABLE_LINE),
     "choices": ["error", "wrap", "works"], "lesson": None},
    {"id": "table", "kind": "table", "section": "posemb", "setup": None,
     "choices": ["neighbours", "rhythm", "unrelated", "equal"], "lesson": None},
    {"id": "rotate", "kind": "rotate", "section": "rope", "setup": _setup("rope"),
     "choices": ["first", "last", "equal"], "lesson": None},
    {"id": "relative", "kind": "relative", "section": "rope",
     "setup": _setup("rope", n_layer=None, weights="trained", line_a="明月", line_b=None, n_head=None, distance=1),
     "choices": ["rope", "learned", "both", "neither"], "lesson": None},
    {"id": "length", "kind": "length", "section": "rope", "setup": None,
     "choices": ["rises", "flat", "falls"], "lesson": None},
    # The lesson's experiment 2: a 32-wide vector in 4 heads of 8.
    {"id": "split", "kind": "split", "section": "heads", "setup": None,
     "choices": ["more", "same", "fewer"], "lesson": {"qkv": 3168, "proj": 1056}},
    {"id": "heads", "kind": "heads", "section": "heads",
     "setup": _setup("learned", n_layer=None, weights="trained", n_head=None, line_b=None),
     "choices": ["alike", "differ"], "lesson": None},
    # Issue 22: an intervention, not a picture. Layer 1's previous-character head off, measured on the corpus.
    {"id": "ablate", "kind": "ablate", "section": "heads",
     "setup": _setup("learned", n_layer=None, weights="trained", n_head=None, line_b=None, line_a=COUPLET),
     "choices": ["punctuation", "second_line", "other"], "lesson": None,
     # Its figures are the whole validation split's (heads.json): line A is run with the head off only to be drawn,
     # so a typed line changes no setup the question was asked for (the verdict's setup_is_lessons, the page's note).
     "chart_only": ["line_a"]},
    # Issue 40: where order is kept. A probe reads the position from the model without positions (Haviv et al.
    # 2022), then an experiment that shows use: RoPE's fastest or slowest pairs stopped (Barbero et al. 2025).
    {"id": "probe", "kind": "probe", "section": "kept",
     "setup": _setup("none", n_layer=None, weights="trained", n_head=None, line_a=None, line_b=None),
     "choices": PROBE_READS, "lesson": None},
    {"id": "bands", "kind": "bands", "section": "kept",
     "setup": _setup("rope", n_layer=None, weights="trained", n_head=None, line_a=None, line_b=None),
     "choices": BAND_COSTS, "lesson": None},
    {"id": "ex1", "kind": "ex1", "section": "exercises", "setup": _setup("none", n_layer=3),
     "choices": ["rounding", "large"], "lesson": None},
    {"id": "ex2", "kind": "ex2", "section": "exercises", "setup": None, "choices": HEAD_ORDERS, "lesson": None},
    {"id": "ex3", "kind": "ex3", "section": "exercises", "setup": None, "choices": MODE_ORDERS, "lesson": None},
    {"id": "selftest", "kind": "selftest", "section": "selftest", "setup": None,
     "questions": [
         {"id": "q1", "choices": ["more", "same"], "answer": "same"},
         {"id": "q2", "choices": ["content", "order"], "answer": "content"},
         {"id": "q3", "choices": ["mask", "rounding"], "answer": "mask"},
     ],
     "choices": None, "lesson": None},
    {"id": "summary", "kind": "summary", "section": "summary", "setup": None, "choices": None, "lesson": None},
]

_ORDER = [s["id"] for s in STEPS]
# The third exercise ranks the three trained models by their validation losses: a screen before it holds those
# losses back (the trained-weights note, the length step's other curves, the explorer's length panel) until then.
LOSSES_ANSWER = "ex3"


def _explorer_shows(step: dict) -> list[dict]:
    """The later steps whose answers the explorer would show from this step's screen, each with the setup values
    under which it would ({}: whatever the setup). Beside two lines compared without positions under the mask, the
    explorer's depth panel draws the untrained models of one to three layers and the same lines with the mask off:
    what the mask-off step and the first exercise ask. Its length panel draws the three trained models' losses,
    which the third exercise ranks."""
    if step["kind"] == "length":
        shows = [(LOSSES_ANSWER, {})]
    elif step["setup"] is not None and step["setup"]["line_b"] is not None:
        shows = [(later, {"position": "none", "causal": True}) for later in ("nomask", "ex1")]
    else:
        shows = []
    return [{"step": later, "when": when} for later, when in shows if _ORDER.index(later) > _ORDER.index(step["id"])]


for _step in STEPS:
    _step["explorer_shows"] = _explorer_shows(_step)
    _step["losses_answer"] = LOSSES_ANSWER if _ORDER.index(LOSSES_ANSWER) > _ORDER.index(_step["id"]) else None
