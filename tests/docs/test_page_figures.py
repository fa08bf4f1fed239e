"""docs/page.md's figures on RoPE past the training length are the shipped length.json's (issue 39 item 11): where
RoPE's smoothed loss climbs above its level inside the training length, and where it is worse than no positions,
recomputed here from the file with numpy, as the lesson's length step reads them (its window and threshold)."""

import json
import re
from pathlib import Path

import numpy as np

from app.services.step_judges import RISE_NATS, SMOOTH
from model.assets import WEIGHTS_DIR

PAGE = Path(__file__).resolve().parents[2] / "docs" / "page.md"


def smoothed(loss: np.ndarray, p: int) -> float:
    """The mean loss over the SMOOTH positions centred on p (fewer at the start)."""
    return float(loss[max(0, p - SMOOTH // 2):p + SMOOTH // 2].mean())


def length_figures() -> dict:
    runs = {r["position"]: r for r in json.loads((WEIGHTS_DIR / "length.json").read_text())["runs"]}
    rope, none = np.array(runs["rope"]["loss"], dtype=np.float64), np.array(runs["none"]["loss"], dtype=np.float64)
    n = runs["rope"]["train_length"]
    inside = rope[n // 2:n].mean()
    positions = range(n, min(len(rope), len(none)) - SMOOTH // 2 + 1)
    rise = next(p for p in positions if smoothed(rope, p) > inside + RISE_NATS)
    worse = next(p for p in positions if smoothed(rope, p) > smoothed(none, p))
    return {"n": n, "rise": rise, "worse": worse}


def test_the_page_doc_says_where_rope_rises_as_length_json_does():
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    said = re.search(r"averaged over (\d+) positions, climbs ([\d.]+) nats per character above its level inside the "
                     r"training length from position (\d+) on, ([\d.]+) times the training length of (\d+), and is "
                     r"worse than no positions from position (\d+)", text)
    assert said, "docs/page.md no longer says where RoPE's loss climbs in the words this test reads"
    smooth, nats, rise, ratio, n, worse = said.groups()
    want = length_figures()
    assert (int(smooth), float(nats)) == (SMOOTH, RISE_NATS)
    assert (int(rise), int(n), int(worse)) == (want["rise"], want["n"], want["worse"])
    assert ratio == f"{want['rise'] / want['n']:.2f}"
