// A heatmap made small, for the phone's small multiples (draw.js): the picture alone, without the colour
// bar, axis titles and hover, with the characters along its edges only while they still fit. The full
// figure, colour bar included, is one tap away (zoom.js).

/** Edge labels stay while a side has this many positions or fewer, and each label is this short. */
const MAX_LABELLED = 10;
const MAX_LABEL = 2;
const LABEL_SIZE = 11;

function labels(axis) {
  return axis?.ticktext ?? axis?.categoryarray ?? [];
}

function smallAxis(axis) {
  const text = labels(axis);
  const fits = text.length > 0 && text.length <= MAX_LABELLED && text.every((t) => [...String(t)].length <= MAX_LABEL);
  return { ...axis, title: { text: "" }, showticklabels: fits, tickfont: { ...(axis?.tickfont ?? {}), size: LABEL_SIZE } };
}

/** {data, layout} of the small version of a heatmap figure. */
export function smallFigure(figure) {
  const data = figure.data.map((trace) => ({ ...trace, showscale: false, hoverinfo: "skip" }));
  const { xaxis, yaxis } = figure.layout;
  const x = smallAxis(xaxis);
  const y = smallAxis(yaxis);
  const layout = {
    ...figure.layout,
    xaxis: x,
    yaxis: y,
    margin: { l: y.showticklabels ? 18 : 2, r: 2, t: x.showticklabels ? 18 : 2, b: 2 },
  };
  return { data, layout };
}
