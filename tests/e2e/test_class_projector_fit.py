"""After a reveal the projector shows the question, the verdict and the chart on one 1280x720 screen (issue 38), in
the normal and the presenter view, for every step with a question that the API lists, in the four languages
(Japanese verdicts are the longest, French bar names and ticks the widest). Its charts keep legible axes there (no
rotated or overlapping tick labels, an axis title clear of its ticks, a plot area at least half the chart's
width), and the class panel marks the right answer's bar: the choices the server's own verdict accepts.

One class per language, the four teachers' pages led through the steps side by side; each step is seen in both
views: revealed in one, then the view switched (a teacher may turn the presenter view on or off after a reveal),
so the view a step is revealed in alternates from step to step."""

import json
import urllib.request

import pytest
from class_pages import class_app, start_class, wait_panel

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

# The boxes of what must be on the screen, the charts' axes as Plotly laid them out, and the class panel's marks.
MEASURE = """() => {
  const box = (node) => { const r = node.getBoundingClientRect(); return {top: r.top, bottom: r.bottom}; };
  const plots = [...document.querySelectorAll('#charts .lesson-chart:not([hidden]) .lesson-plot')];
  // Boxes that share more than `by` px both ways (a text's box holds its line's ascent and descent: 2 px of a
  // title's box on a tick's is no ink on ink).
  const hits = (a, b, by = 0.5) => a.width > 0 && b.width > 0 && a.left < b.right - by && b.left < a.right - by
    && a.top < b.bottom - by && b.top < a.bottom - by;
  const axes = (plot) => {
    const L = plot._fullLayout;
    const names = Object.keys(L).filter((k) => /^[xy]axis\\d*$/.test(k) && L[k].visible !== false);
    // Every axis's labels: a second y axis (y2tick) too.
    const ticks = [...plot.querySelectorAll('.xaxislayer-above text, .yaxislayer-above text')]
      .map((t) => t.getBoundingClientRect());
    const rows = [...plot.querySelectorAll('.xaxislayer-above, .yaxislayer-above')].map((layer) =>
      [...layer.querySelectorAll('text')].map((t) => {
        const r = t.getBoundingClientRect();
        return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width, text: t.textContent};
      }));
    const titles = [...plot.querySelectorAll('.g-xtitle text, .g-ytitle text')].map((t) => t.getBoundingClientRect());
    return {
      share: L._size.w / L.width,
      angles: names.flatMap((k) => Object.values(L[k]._tickAngles ?? {})).filter((a) => a !== 0),
      overlaps: rows.flatMap((row) => row.flatMap((a, i) => row.slice(i + 1).filter((b) => hits(a, b))
        .map((b) => `${a.text} on ${b.text}`))),
      titleOnTicks: titles.flatMap((t) => ticks.filter((tick) => hits(t, tick, 2)).map((tick) =>
        [t, tick].map((b) => [b.left, b.right, b.top, b.bottom].map(Math.round)))),
      // Drawn at the size asked: its box's, or its own height where the figure sets one (the ablation's charts)
      // and the projector's fit did not shrink it. Its ticks and its room under the modebar fitted (draw.js).
      drawn: Math.abs(L.height - (plot.layout?.height ?? plot.clientHeight)) < 2 && !plot.fittingTicks
        && !plot.makingRoom,
      font: L.font.size,
    };
  };
  const verdict = document.querySelector('#verdict');
  return {
    outcome: verdict.dataset.outcome ?? null,
    busy: document.querySelector('#results').getAttribute('aria-busy') !== 'false',
    boxes: {question: box(document.querySelector('#step-question')), verdict: box(verdict),
            chart: plots[0] ? box(plots[0]) : null, spread: box(document.querySelector('#class-spread'))},
    charts: plots.filter((p) => p._fullLayout).map(axes),
    plots: plots.length,
    marked: [...document.querySelectorAll('#class-spread li[data-choice]')].filter((li) =>
      li.classList.contains('is-right') && li.dataset.right === 'true'
      && li.querySelector('.lesson-class__right')).map((li) => li.dataset.choice),
  };
}"""
# Drawn and laid out: the answer is in, every chart on screen is drawn at the height showAnswer gave it, and the
# class panel has marked an answer (which ones: checked against the server's verdict).
SETTLED = f"""() => {{ const m = ({MEASURE})(); return m.outcome !== null && !m.busy && m.charts.length === m.plots
  && m.charts.every((c) => c.drawn) && m.marked.length > 0; }}"""


LANGS = ["ja", "fr", "en", "zh"]


@pytest.fixture(scope="module")
def server_url():
    with class_app() as url:
        yield url


def api(server_url: str, path: str, body: bytes | None = None):
    request = urllib.request.Request(f"{server_url}{path}", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


def problems(m: dict, accepted: list) -> list[str]:
    """What a teacher would find wrong on this screen, in words; edges within a pixel (sub-pixel scrolling)."""
    found = [f"{name} at {b['top']:.0f}..{b['bottom']:.0f}" for name, b in m["boxes"].items()
             if b is not None and (b["top"] < -1 or b["bottom"] > 721)]
    for i, c in enumerate(m["charts"]):
        if c["share"] < 0.5:
            found.append(f"chart {i}: plot area {c['share']:.2f} of its width")
        if c["angles"]:
            found.append(f"chart {i}: tick labels turned {c['angles']}")
        if c["overlaps"]:
            found.append(f"chart {i}: overlapping tick labels {c['overlaps']}")
        if c["titleOnTicks"]:
            found.append(f"chart {i}: an axis title over its tick labels (title, tick: {c['titleOnTicks']})")
    if sorted(m["marked"]) != sorted(accepted):
        found.append(f"marked {m['marked']}, the server accepts {accepted}")
    return found


def test_after_each_reveal_the_question_the_verdict_and_the_chart_fit_the_projector(open_page, server_url, tools):
    steps = api(server_url, "/api/lesson")["steps"]
    asked = [n for n, step in enumerate(steps, 1) if step["choices"]]
    teachers = {lang: start_class(open_page, tools, asked[0], width=1280, height=720, lang=lang)[0] for lang in LANGS}
    present = False
    found = {}

    def check(n: int, accepted: list, after: dict | None = None) -> dict:
        """Wait until each page has drawn step n's answer (after a switch of view: in the new view's type), and
        note what is wrong; the charts' type size of each page."""
        fonts = {}
        view = "presenter" if present else "normal"
        for lang, teacher in teachers.items():
            tools.wait_until(teacher, f"(before) => {{ const m = ({MEASURE})(); return ({SETTLED})()"
                                      " && (before === null || m.charts.every((c) => c.font !== before)); }",
                             None if after is None else after[lang], timeout=60,
                             message=f"step {n}'s answer was not drawn ({lang}, {view})")
            m = teacher.evaluate(MEASURE)
            fonts[lang] = m["charts"][0]["font"] if m["charts"] else None
            if problems(m, accepted):
                found[f"step {n} ({steps[n - 1]['id']}), {lang}, {view}"] = problems(m, accepted)
                tools.screenshot(teacher, f"class-fit-{n}-{view}-{lang}", full_page=False, always=True)
        return fonts

    for n in asked:
        if n != asked[0]:
            for teacher in teachers.values():
                teacher.select_option("#step-select", str(n))  # the step menu: the class moves there
            for teacher in teachers.values():
                wait_panel(teacher, tools, "step", str(n))
        for teacher in teachers.values():
            teacher.click("#class-reveal")
        for teacher in teachers.values():
            wait_panel(teacher, tools, "revealed", "true")
        accepted = api(server_url, f"/api/lesson/{steps[n - 1]['id']}/verdict", b"{}")["accepted"]
        fonts = check(n, accepted)
        for teacher in teachers.values():
            teacher.click("#present")
        present = not present
        check(n, accepted, after=fonts)
    assert not found, "\n".join(f"{where}: {'; '.join(p)}" for where, p in found.items())
