"""The presenter's view without a class (a student or a teacher alone at a projector, 1280x720): turned on after a
reveal, it keeps the verdict and its chart on the screen, as a class's projector does (test_class_projector_fit.py).
It went to the top of the page instead, and the verdict and the chart were below the first screen (issue 39)."""

import pytest

pytestmark = pytest.mark.e2e

SCREEN = {"width": 1280, "height": 720}
# The verdict's and the first chart's boxes, and whether that chart is drawn at the height it was given.
MEASURE = """() => {
  const box = (node) => { const r = node.getBoundingClientRect(); return {top: r.top, bottom: r.bottom}; };
  const plot = document.querySelector('#charts .lesson-chart:not([hidden]) .lesson-plot');
  return {
    presenting: document.documentElement.classList.contains('is-presenting'),
    verdict: box(document.querySelector('#verdict')),
    chart: plot ? box(plot) : null,
    drawn: !plot || (Boolean(plot._fullLayout) && Math.abs(plot._fullLayout.height - plot.clientHeight) < 2
      && !plot.makingRoom),
  };
}"""
ON_SCREEN = f"""(height) => {{ const m = ({MEASURE})(); return m.presenting && m.drawn && m.chart !== null
  && [m.verdict, m.chart].every((b) => b.top >= -1 && b.bottom <= height + 1); }}"""


@pytest.mark.parametrize("lang", ["ja", "fr"])
@pytest.mark.parametrize("step", [1, 8, 14, 15])
def test_the_presenter_view_turned_on_after_a_reveal_keeps_the_verdict_and_chart_on_screen(open_page, tools, step,
                                                                                          lang):
    page = open_page(f"/lesson?step={step}&lang={lang}", explorer=False, locale="en-US", **SCREEN)
    tools.wait_rendered(page, 0)
    page.locator("[data-question] input[type=radio]").first.check()
    tools.redraw_after(page, lambda: page.click("[data-commit]"))
    page.click("#present")
    try:
        tools.wait_until(page, ON_SCREEN, SCREEN["height"])
    except AssertionError:
        pytest.fail(f"step {step} ({lang}): {page.evaluate(MEASURE)}, scrolled to {page.evaluate('scrollY')}")
