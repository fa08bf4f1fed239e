"""The sentence referee: for every step /api/lesson lists and a grid of setups per step, each verdict sentence
the page shows after the reveal agrees with the answer the page drew.

The answer is the JSON of POST /api/lesson/{step}/verdict, fetched again from the test with the very body the
page sent (captured from the page's own request, not re-derived). Checked per setup:
- the outcome the page names ([data-verdict]'s data-outcome) is the verdict's outcome;
- the "right/wrong" mark is whether the committed choice is in the `accepted` of the verdict on the setup the
  question describes (the step's own: asked with {} when the setup on screen is another);
- every number the model's sentence ([data-sentence="verdict"]) fills in is a <span data-figure="key"> whose key
  names the figure it is: a figure of the verdict ("gap64"), an expression of figures and setup numbers
  ("100 * distance", "train_length - 1"), a step's number ("step_nomask": a later step named as the one whose
  answer a figure held back would give away), or "run" (a run's name in a figure's name, the 8 of loss_8). Its
  printed value, read back from the page's number format in that language (French decimal comma, grouped
  thousands, "2.7 × 10⁻⁷"), equals that figure within the printed rounding, so a number equal to another figure
  of the same verdict no longer passes; a number outside every span must be one the text writes itself;
- likewise every keyed number in the note (#notice) and the charts' captions beside the verdict.
A step added to app/domain/lesson_steps.py is covered without touching this file: the steps come from /api/lesson.
Each step is refereed on its own setup in all four languages, and on its grid of other setups in one of them.
"""

import ast
import json
import operator
import re
import urllib.request
from pathlib import Path

import pytest

from app.domain.lesson_steps import STEPS

pytestmark = pytest.mark.e2e

VERDICT_URL = re.compile(r"/api/lesson/([a-z0-9_]+)/(?:verdict|compare)$")  # both take the verdict's body
SUPERSCRIPT = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")
SPACES = "\u202f\u00a0 "
# A number as the page prints it: grouped thousands, a decimal part, an optional power of ten, an optional %.
NUMBER = {
    "fr": re.compile(r"([−-]?\d{1,3}(?:[\u202f\u00a0 ]\d{3})+(?:,\d+)?|[−-]?\d+(?:,\d+)?)"
                     r"(?:[\u202f\u00a0 ]?×[\u202f\u00a0 ]?10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+))?([\u202f\u00a0 ]?[%％])?"),
    "en": re.compile(r"([−-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?|[−-]?\d+(?:\.\d+)?)"
                     r"(?:[\u202f\u00a0 ]?×[\u202f\u00a0 ]?10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+))?([\u202f\u00a0 ]?[%％])?"),
}
PLACEHOLDER = re.compile(r"\{[a-z0-9_]+\}")
I18N = Path(__file__).resolve().parents[2] / "static" / "i18n"
UNKNOWN = "Ω"  # outside the model's vocabulary: read as its one unknown character


def printed_numbers(text: str, lang: str) -> list[tuple[str, float, float, bool]]:
    """(as printed, value, half of the last printed digit, is a percentage) for each number in text."""
    found = []
    for match in NUMBER["fr" if lang == "fr" else "en"].finditer(text):
        body, power, percent = match.groups()
        plain = body.replace("−", "-")
        plain = plain.replace(",", ".") if lang == "fr" else plain.replace(",", "")
        for space in SPACES:
            plain = plain.replace(space, "")
        decimals = len(plain.split(".")[1]) if "." in plain else 0
        scale = 10.0 ** int(power.translate(SUPERSCRIPT)) if power else 1.0
        found.append((match.group(0), float(plain) * scale, 0.5 * 10.0 ** -decimals * scale, bool(percent)))
    return found


def figures_of(value) -> list[float]:
    """Every number in a verdict's figures, however nested, and those its names count ("loss_8": 8 heads)."""
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    if isinstance(value, dict):
        named = [float(n) for key in value for n in re.findall(r"(?<=_)\d+(?=_|$)", key)]
        return named + [x for v in value.values() for x in figures_of(v)]
    if isinstance(value, list):
        return [x for v in value for x in figures_of(v)]
    return []


def setup_numbers(body: dict) -> list[float]:
    """What the setup itself counts: layers, heads, the distance, the lines' lengths."""
    numbers = [float(body[k]) for k in ("n_layer", "n_head", "distance") if isinstance(body.get(k), int)]
    numbers += [float(len(body[k])) for k in ("line_a", "line_b") if isinstance(body.get(k), str)]
    return numbers


def texts(lang: str) -> list[str]:
    """The page's texts in lang: the explorer's and the lesson's, as the lesson page merges them."""
    merged = {**json.loads((I18N / f"{lang}.json").read_text(encoding="utf-8")),
              **json.loads((I18N / "lesson" / f"{lang}.json").read_text(encoding="utf-8"))}
    # A text whose words follow a number has a form per plural category ({"count": "n", "one": …, "other": …}).
    return [v for value in merged.values()
            for v in ([value] if isinstance(value, str) else [f for k, f in value.items() if k != "count"])]


def written_numbers(sentence: str, lang: str) -> list[float]:
    """Numbers the texts write themselves ("layer 1, head 1", "0, 6, …"), not filled in from an answer: those
    of the literal parts of every text whose literal parts all stand in the sentence, and of a whole label without
    a placeholder ("1 tête", the heads_one label) that stands in it."""
    numbers = []
    for template in texts(lang):
        parts = [p.replace("`", "").strip() for p in PLACEHOLDER.split(template)]
        parts = [p for p in parts if p]
        label = len(parts) == 1 and parts[0] == template and re.search(r"[^\W\d_]", template)
        if (label or sum(len(p) for p in parts) >= 8) and all(p in sentence for p in parts):
            numbers += [value for part in parts for _, value, _, _ in printed_numbers(part, lang)]
    return numbers


def assert_numbers_agree(sentence: str, lang: str, verdict: dict, body: dict, where: str, named=()) -> None:
    """named: the values the sentence's data-figure keys name ("step_nomask", "round(a, 2) - round(b, 2)"), each
    checked strictly against its key by assert_keyed_numbers_agree."""
    figures = figures_of(verdict.get("figures"))
    known = figures + setup_numbers(body) + written_numbers(sentence, lang) + list(named)
    for shown, value, half, percent in printed_numbers(sentence, lang):
        candidates = [100 * f for f in figures] if percent else known
        slack = half * 1.0001 + 1e-12
        assert any(abs(value - c) <= slack for c in candidates), (
            f"{where}: the page prints {shown!r} ({value}), which is none of the verdict's figures "
            f"{verdict.get('figures')} nor the setup's numbers\nsentence: {sentence}")


OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def key_value(key: str, env: dict) -> float:
    """A data-figure key's value: a name of env, a number, round(x, digits) of one (a figure as printed), or
    + - * / of those ("100 * distance", "round(after, 3) - round(before, 3)")."""
    def value(node):
        if isinstance(node, ast.Expression):
            return value(node.body)
        if isinstance(node, ast.Name):
            assert node.id in env, f"data-figure {key!r} names {node.id!r}, which is neither a figure nor the setup's"
            return env[node.id]
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return float(node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
            return OPERATORS[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -value(node.operand)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "round" \
                and len(node.args) == 2 and isinstance(node.args[1], ast.Constant):
            return round(value(node.args[0]), node.args[1].value)  # a figure as printed, to that many decimals
        raise AssertionError(f"data-figure {key!r} is not an expression of figures")
    return value(ast.parse(key, mode="eval"))


def figure_env(verdict: dict, body: dict) -> dict:
    """What a key may name: the verdict's figures (numbers, at the top level) and the setup's counts."""
    env = {k: float(v) for k, v in (verdict.get("figures") or {}).items()
           if isinstance(v, (int, float)) and not isinstance(v, bool)}
    env |= {k: float(body[k]) for k in ("n_layer", "n_head", "distance") if isinstance(body.get(k), int)}
    env |= {f"{k}_length": float(len(body[k])) for k in ("line_a", "line_b") if isinstance(body.get(k), str)}
    env |= {f"step_{s['id']}": float(n) for n, s in enumerate(STEPS, start=1)}  # "step 3", named by its id
    return env


def keyed_numbers(page, selector: str) -> dict:
    """The text of the nodes at selector, and their [data-figure] spans as (key, text)."""
    return page.evaluate("""(s) => {
        const nodes = [...document.querySelectorAll(s)];
        const spans = nodes.flatMap((n) => [...n.querySelectorAll('[data-figure]')]);
        const rest = nodes.map((n) => {
            const copy = n.cloneNode(true);
            for (const span of copy.querySelectorAll('[data-figure]')) span.replaceWith('\u2063');
            return copy.textContent;
        });
        return { text: nodes.map((n) => n.textContent).join(' '), rest: rest.join(' '),
                 spans: spans.map((x) => [x.dataset.figure, x.textContent]) };
    }""", selector)


def assert_keyed_numbers_agree(found: dict, lang: str, verdict: dict, body: dict, where: str,
                               every_number: bool) -> int:
    """Each [data-figure] span prints the figure its key names; with every_number, a number outside the spans
    must be one that the text writes itself. Returns the number of keyed numbers checked."""
    env = figure_env(verdict, body)
    runs = {n for n in figures_of({k: None for k in verdict.get("figures") or {}})}
    for key, shown in found["spans"]:
        printed = printed_numbers(shown, lang)
        assert len(printed) == 1, f"{where}: data-figure {key!r} holds {shown!r}, not one number"
        _, value, half, _ = printed[0]
        slack = half * 1.0001 + 1e-12
        if key == "run":
            assert value in runs, f"{where}: {shown!r} is no run the verdict names ({sorted(runs)})"
            continue
        want = key_value(key, env)
        assert abs(value - want) <= slack, (
            f"{where}: data-figure {key!r} prints {shown!r} ({value}), the figure is {want}\ntext: {found['text']}")
    if every_number:
        written = written_numbers(found["text"], lang)
        for shown, value, half, _ in printed_numbers(found["rest"], lang):
            assert any(abs(value - w) <= half * 1.0001 + 1e-12 for w in written), (
                f"{where}: {shown!r} is filled in without a data-figure key\ntext: {found['text']}")
    return len(found["spans"])


def fetch_verdict(server_url: str, step: str, body: str) -> tuple[int, dict]:
    request = urllib.request.Request(f"{server_url}/api/lesson/{step}/verdict", body.encode(),
                                     {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def open_setup(page) -> None:
    """On narrow screens the setup folds away behind a button; open it where it is folded."""
    toggle = page.locator("#setup-toggle")
    if toggle.is_visible() and toggle.get_attribute("aria-expanded") == "false":
        toggle.click()


def variations(step: dict) -> list[tuple[str, str, callable]]:
    """The grid: (name, the control it needs, the change), each on top of the ones before; the trained weights
    come last, as they fix the depth and the heads."""
    setup = step["setup"]
    grid = [(f"position={mode}", "#field-position",
             lambda page, m=mode: page.check(f"input[name='position'][value='{m}']"))
            for mode in ("none", "learned", "rope") if mode != setup["position"]]
    grid += [(f"n_layer={n}", "#n-layer", lambda page, n=n: page.select_option("#n-layer", str(n)))
             for n in (1, 2, 3) if n != setup["n_layer"]]
    grid.append(("causal toggled", "#causal", lambda page: page.click("#causal")))
    if setup["line_b"] is not None:
        # Not reorderings of each other, of different lengths, one with a character the model does not know.
        grid += [("other lines", "#line-b",
                  lambda page: (page.fill("#line-a", "床前明月光"), page.fill("#line-b", "疑是地上霜了"))),
                 ("unknown character", "#line-b", lambda page: page.fill("#line-b", f"疑是{UNKNOWN}上霜")),
                 ("line B empty", "#line-b", lambda page: page.fill("#line-b", "")),
                 ("line B back", "#line-b", lambda page: page.fill("#line-b", "疑是地上"))]
    else:
        grid += [("other line", "#line-a", lambda page: page.fill("#line-a", "床前明月光，疑是地上霜。")),
                 ("unknown character", "#line-a", lambda page: page.fill("#line-a", f"床前{UNKNOWN}月光"))]
    grid.append(("distance=3", "#distance", lambda page: page.fill("#distance", "3")))
    other = "trained" if setup["weights"] == "random" else "random"
    grid.append((f"weights={other}", "#weights", lambda page, o=other: page.select_option("#weights", o)))
    return grid


def referee(page, server_url: str, lang: str, step: dict, sent: list, where: str) -> None:
    """The sentence on screen against the verdict for the body the page last sent for this step."""
    # A step with a setup sends {} only to grade the answer on its own setup when the setup on screen is another.
    mine = [(body, response) for step_id, body, response in sent
            if step_id == step["id"] and not (step.get("setup") and json.loads(body or "{}") == {})]
    verdict_node = page.locator("#verdict")
    if page.locator("#lesson-error").is_visible() or page.locator(".field-error:visible").count():
        # An input to fix: the page says so, and claims no verdict.
        assert verdict_node.inner_text().strip() == "", f"{where}: an error and a verdict at once"
        assert page.locator("[data-unknown]").is_hidden(), f"{where}: the unknown-character note outlived its lines"
        return
    assert mine, f"{where}: a verdict on screen, but the page asked for none"
    body, _ = mine[-1]
    status, verdict = fetch_verdict(server_url, step["id"], body)
    assert status == 200, f"{where}: the verdict the page drew is refused when asked again: {verdict}"
    outcome = verdict["outcome"]
    assert verdict_node.get_attribute("data-outcome") == (outcome or ""), where
    choice = step["choices"][0]
    # The answer is graded on the setup the question describes: the step's own verdict when the setup changed.
    graded = verdict if verdict.get("setup_is_lessons", True) else fetch_verdict(server_url, step["id"], "{}")[1]
    accepted = graded.get("accepted") or [graded["outcome"]]
    mark = "none" if graded["outcome"] is None else "right" if choice in accepted else "wrong"
    assert verdict_node.get_attribute("data-prediction") == mark, f"{where}: {choice} against {accepted}"
    sentence = page.inner_text("#verdict [data-sentence='verdict']")
    assert sentence.strip(), f"{where}: no sentence for the verdict"
    setup = json.loads(body)
    keyed = keyed_numbers(page, "#verdict [data-sentence='verdict']")
    env = figure_env(verdict, setup)
    # What the keys name (a step's number, a difference of printed figures): checked strictly by key below.
    named = [key_value(key, env) for key, _ in keyed["spans"] if key != "run"]
    assert_numbers_agree(sentence, lang, verdict, setup, where, named)
    assert_keyed_numbers_agree(keyed, lang, verdict, setup, f"{where}, verdict", every_number=True)
    assert_keyed_numbers_agree(keyed_numbers(page, "#notice:not([hidden]), .lesson-chart__caption"), lang, verdict,
                               setup, f"{where}, note and captions", every_number=False)
    unknown = "".join(verdict.get("unknown") or [])
    assert (page.get_attribute("[data-unknown]", "data-unknown") or "") == unknown, where


LANGS = ["fr", "zh", "ja", "en"]


@pytest.mark.parametrize("lang", LANGS)
def test_every_verdict_sentence_says_what_the_verdict_says(open_page, tools, server_url, lang):
    """Every language: every step with choices on its own setup. The grid of other setups runs on each step in
    one language, in turn (step k's in LANGS[k % 4]): every setup of every step is refereed once, and each
    language words a quarter of them, for a quarter of the four walks' time."""
    with urllib.request.urlopen(f"{server_url}/api/lesson", timeout=30) as response:
        steps = json.loads(response.read())["steps"]
    judged = [(n, s) for n, s in enumerate(steps, 1) if s.get("choices")]
    assert len(judged) >= 15, [s["id"] for s in steps]
    page = open_page(f"/lesson?step=1&lang={lang}", width=1280, height=900, locale=lang)
    sent = []

    def on_request(request) -> None:
        path = request.url.split("?")[0]
        match = VERDICT_URL.search(path)
        if match and request.method == "POST":
            sent.append((match.group(1), request.post_data, None))
        elif path.endswith("/api/compare") and request.method == "POST":
            body = json.loads(request.post_data)
            if "lesson_step" in body:  # a comparison that may carry the step's verdict (step_verdict): its setup
                step_id = body.pop("lesson_step")
                sent.append((step_id, json.dumps({**body, "causal": body.get("causal", True)}), None))

    page.on("request", on_request)
    checked = 0
    for k, (n, step) in enumerate(judged):
        count = tools.commit_step(page, f"{server_url}/lesson?step={n}&lang={lang}", step["choices"][0])
        referee(page, server_url, lang, step, sent, f"{lang} step {n} ({step['id']}), its own setup")
        checked += 1
        if not step.get("setup") or LANGS[k % len(LANGS)] != lang:
            continue
        open_setup(page)
        for name, control, change in variations(step):
            node = page.locator(control)
            if not (node.is_visible() and page.locator(f"{control} input, {control}").first.is_enabled()):
                continue  # the step does not offer it, or its setup fixes it
            change(page)
            count = tools.wait_rendered(page, count)
            referee(page, server_url, lang, step, sent, f"{lang} step {n} ({step['id']}), {name}")
            checked += 1
    with_setup = [step for k, (_, step) in enumerate(judged) if step.get("setup") and LANGS[k % len(LANGS)] == lang]
    assert checked > len(judged) + len(with_setup), (checked, "the grid ran no other setup")


def test_a_number_keyed_as_one_figure_but_equal_to_another_is_caught():
    """The key is what makes the check strict: 0.5 is the verdict's share, not its distance, though both are
    figures of the same verdict (the unkeyed check let either pass)."""
    verdict = {"figures": {"distance": 0.25, "share": 0.5, "n": 3}}
    found = {"text": "d 0.5", "rest": "d \u2063", "spans": [["distance", "0.5"]]}
    with pytest.raises(AssertionError, match="the figure is 0.25"):
        assert_keyed_numbers_agree(found, "en", verdict, {}, "test", every_number=True)
    assert_keyed_numbers_agree({**found, "spans": [["share", "0.5"]]}, "en", verdict, {}, "test", every_number=True)
    with pytest.raises(AssertionError, match="without a data-figure key"):
        assert_keyed_numbers_agree({"text": "d 3", "rest": "d 3", "spans": []}, "en", verdict, {}, "test", True)
    assert key_value("100 * share - n", figure_env(verdict, {})) == 47.0
    # The difference of two figures as printed (4.438 - 4.420), not the raw one (0.0173): 0.018 passes, 0.017 not.
    env = figure_env({"figures": {"loss_4": 4.4378, "loss_8": 4.4205}}, {})
    key = "round(loss_4, 3) - round(loss_8, 3)"
    assert abs(key_value(key, env) - 0.018) < 1e-12
    assert_keyed_numbers_agree({"text": "0.018", "rest": "\u2063", "spans": [[key, "0.018"]]}, "en",
                               {"figures": {"loss_4": 4.4378, "loss_8": 4.4205}}, {}, "test", every_number=True)
    with pytest.raises(AssertionError, match="the figure is"):
        assert_keyed_numbers_agree({"text": "0.017", "rest": "\u2063", "spans": [[key, "0.017"]]}, "en",
                                   {"figures": {"loss_4": 4.4378, "loss_8": 4.4205}}, {}, "test", every_number=True)
