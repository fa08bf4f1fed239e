"""The lesson's charts on a phone (390 x 844): the gap bars (steps 2, 3 and 14, and every step of the same
kinds) and the ablation charts (step 13) keep their labels whole, their plot wide enough to read, their ticks
and x labels apart, their axis title inside the picture and their legend off the bars."""

import json
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

KINDS = {"leak", "nomask", "ex1", "ablate"}  # the gap bars' kinds, and the head ablation's
LESSON_I18N = Path(__file__).resolve().parents[2] / "static" / "i18n" / "lesson"
MIN_PLOT_WIDTH = 150  # px of a 390 px screen left to the bars once the labels are laid out

# Every chart's boxes on screen: the svg, the plot area, the tick labels per axis, the axis titles, the legend.
BOXES = """(figure) => {
  const box = (n) => { const r = n.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const shown = (nodes) => Array.from(nodes).filter((n) => n.textContent.trim() && n.style.opacity !== '0').map(box);
  const svg = figure.querySelector('.main-svg');
  const plot = figure.querySelector('.cartesianlayer .plot') && figure.querySelector('.nsewdrag, .bglayer rect');
  return {
    svg: box(svg),
    plot: plot ? box(plot) : null,
    xticks: shown(figure.querySelectorAll('.xtick text')),
    yticks: shown(figure.querySelectorAll('.ytick text')),
    titles: shown(figure.querySelectorAll('.g-xtitle text, .g-ytitle text')),
    legend: figure.querySelector('.legend') ? box(figure.querySelector('.legend .bg')) : null,
    bars: shown(figure.querySelectorAll('.bars .point path')).length
      ? Array.from(figure.querySelectorAll('.bars .point path'), box) : [],
  };
}"""


def overlap(a, b, slack: float = 1.0) -> bool:
    return a[0] < b[2] - slack and b[0] < a[2] - slack and a[1] < b[3] - slack and b[1] < a[3] - slack


def inside(inner, outer, slack: float = 1.0) -> bool:
    return (inner[0] >= outer[0] - slack and inner[1] >= outer[1] - slack
            and inner[2] <= outer[2] + slack and inner[3] <= outer[3] + slack)


def check_chart(boxes: dict, where: str) -> None:
    svg = boxes["svg"]
    for key in ("xticks", "yticks", "titles"):
        for label in boxes[key]:
            assert inside(label, svg), f"{where}: a {key} label is cut by the chart's edge: {label} outside {svg}"
    for key in ("xticks", "yticks"):
        labels = boxes[key]
        for i, a in enumerate(labels):
            for b in labels[i + 1:]:
                assert not overlap(a, b), f"{where}: two {key} labels overlap: {a} and {b}"
    if boxes["plot"]:
        width = boxes["plot"][2] - boxes["plot"][0]
        assert width >= MIN_PLOT_WIDTH, f"{where}: the plot is squeezed to {width:.0f} px"
    if boxes["legend"]:
        for bar in boxes["bars"]:
            assert not overlap(boxes["legend"], bar), f"{where}: the legend sits on a bar: {boxes['legend']} {bar}"


@pytest.mark.parametrize("lang", ["fr", "zh"])
def test_the_lessons_bar_charts_fit_a_phone(open_page, tools, server_url, lang):
    with urllib.request.urlopen(f"{server_url}/api/lesson", timeout=30) as response:
        steps = json.loads(response.read())["steps"]
    chosen = [(n, s) for n, s in enumerate(steps, 1) if s["kind"] in KINDS]
    assert {s["kind"] for _, s in chosen} == KINDS, [s["kind"] for s in steps]
    page = open_page(f"/lesson?step=1&lang={lang}", width=390, height=844, locale=lang)
    measured = 0
    for n, step in chosen:
        tools.commit_step(page, f"{server_url}/lesson?step={n}&lang={lang}", step["choices"][0])
        charts = page.locator(".lesson-chart")
        for i in range(charts.count()):
            if i and page.locator("#chart-next").is_visible():
                page.click("#chart-next")  # one chart at a time where the page pages them
            figure = page.locator(f".lesson-chart[data-chart='{i}']")
            if not figure.locator(".js-plotly-plot").count():
                continue  # a table or a missing chart: no plot to measure
            figure.scroll_into_view_if_needed()
            tools.wait_until(page, """(i) => { const f = document.querySelector(`.lesson-chart[data-chart="${i}"]`);
                return !f.hidden && f.querySelector('.main-svg .cartesianlayer'); }""", i)
            page.wait_for_timeout(300)  # Plotly redraws a chart that was drawn while hidden once it shows
            boxes = page.eval_on_selector(f".lesson-chart[data-chart='{i}']", BOXES)
            check_chart(boxes, f"{lang} step {n} ({step['id']}), chart {i} ({figure.get_attribute('data-name')})")
            measured += 1
    assert measured >= len(chosen), measured


def fill(template: str, **values) -> str:
    for key, value in values.items():
        template = template.replace("{" + key + "}", str(value))
    return template


def drawn_labels(page, axis: str) -> list[list[str]]:
    """Each tick label of the lesson's first chart on `axis`: its lines as drawn (Plotly's tspans, one per line)."""
    return page.eval_on_selector(".lesson-chart[data-chart='0']", """(figure, axis) =>
        [...figure.querySelectorAll(`.${axis}tick text`)].map((t) => {
          const lines = [...t.querySelectorAll('tspan.line')];
          return lines.length ? lines.map((l) => l.textContent) : [t.textContent];
        })""", axis)


@pytest.mark.parametrize(("lang", "step"), [("fr", "ex1"), ("ja", "probe")])
def test_a_label_wrapped_on_a_phone_reads_as_written(open_page, tools, server_url, lang, step):
    """A break took the space it fell on, so the drawn label's text, which a screen reader reads and a copy takes,
    glued the words: "entraîné, 3couches", 「ブロック1 の前」 (issue 39). Each label drawn on several lines is, lines
    put together, one of the labels the texts give, with every space."""
    with urllib.request.urlopen(f"{server_url}/api/lesson", timeout=30) as response:
        steps = json.loads(response.read())["steps"]
    n, chosen = next((n, s) for n, s in enumerate(steps, 1) if s["id"] == step)
    texts, lt = tools.texts(lang), json.loads((LESSON_I18N / f"{lang}.json").read_text(encoding="utf-8"))
    if step == "ex1":  # the model on screen (3 layers, untrained) and the untrained ones of 1 and 2 layers
        axis, written = "y", {fill(lt["bar_model_random"]["other"], n_layer=3), fill(lt["bar_depth"]["one"], n_layer=1),
                              fill(lt["bar_depth"]["other"], n_layer=2)}
    else:  # the probe's sites: before block 1, then each block's attention and the stream after it
        axis, written = "x", {texts["probe_site_embedding"], *(fill(texts[f"probe_site_{site}"], n=layer)
                                                               for site in ("z", "residual") for layer in (1, 2))}
    page = open_page(f"/lesson?step=1&lang={lang}", width=390, height=844, locale=lang)
    tools.commit_step(page, f"{server_url}/lesson?step={n}&lang={lang}", chosen["choices"][0])
    page.locator(".lesson-chart[data-chart='0'] .main-svg .cartesianlayer").first.wait_for()
    labels = drawn_labels(page, axis)
    assert any(len(lines) > 1 for lines in labels), f"no label is wrapped: nothing to check ({labels})"
    assert {"".join(lines) for lines in labels} <= written, (labels, written)
