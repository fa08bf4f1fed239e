"""The vendored partial Plotly bundle draws every trace type the pages use: heatmap, scatter, bar."""

import pytest

pytestmark = pytest.mark.e2e

DRAW_ALL = """async () => {
    const gd = document.createElement('div');
    gd.style.width = '400px';
    gd.style.height = '300px';
    document.body.append(gd);
    await window.Plotly.newPlot(gd, [
        {type: 'heatmap', z: [[1, 2], [3, 4]]},
        {type: 'scatter', mode: 'lines+markers', x: [0, 1, 2], y: [1, 3, 2]},
        {type: 'bar', x: ['a', 'b', 'c'], y: [2, 1, 3], xaxis: 'x2', yaxis: 'y2'},
    ], {xaxis2: {anchor: 'y2', domain: [0.6, 1]}, yaxis2: {anchor: 'x2'}, xaxis: {domain: [0, 0.4]}});
    const count = (selector) => gd.querySelectorAll(selector).length;
    const result = {heatmap: count('.heatmaplayer image'), scatter: count('.scatterlayer .trace .point'),
                    bar: count('.barlayer .point path'), version: window.Plotly.version};
    window.Plotly.purge(gd);
    gd.remove();
    return result;
}"""


def test_the_page_runs_the_partial_bundle_and_it_draws_every_trace_type(page):
    scripts = page.evaluate("() => Array.from(document.scripts, (s) => s.src).filter((s) => /plotly/i.test(s))")
    assert len(scripts) == 1 and scripts[0].endswith("/vendor/plotly-core-bar-heatmap-4.1.1.min.js")
    drawn = page.evaluate(DRAW_ALL)
    assert drawn == {"heatmap": 1, "scatter": 3, "bar": 3, "version": "4.1.1"}
