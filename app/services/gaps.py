"""Is a gap between two lines' outputs rounding or real? The measurements both precisions share.

The rounding line is exact, not a threshold sized for one set of weights: a gap is rounding when the same
weights run in float64 leave a gap below REL_ROUNDING of the largest |logit|. float64 leaves about 1e-16 of
relative error, so a real gap stands far above the line and a rounding one far below it.

float32 can decide "real" on its own when its gap is far above its own error. Measured on every setup a
student can reach (every mode, depths 1 to 4, 1 to 8 heads, trained and untrained, mask on and off, the
verdict tests' pairs and 90 random ones: 15,000 gaps), float32's gap differs from float64's by at most
9.3e-7 of the largest |logit|; rounding gaps read at most 7.1e-7 in float32, and the smallest real gap is
2.1e-3. FLOAT32_DECIDES (1e-4) stands 100 times above that error: a float32 gap over it is at least
1e-4 − 1e-6 in float64, five orders of magnitude above the rounding line. Below it float32 decides nothing
and the float64 rerun does (tests/app/test_gaps.py keeps the margin measured). Attention weights are at
most 1 and their limits absolute: the rounding line is 1e-9, and float32's error on an aligned last row reached
1.8e-6, so float32 decides a row real over FLOAT32_DECIDES_WEIGHTS (1e-3), again 100 times above it.
"""

from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np

REL_ROUNDING = 1e-9  # float64 gap / largest |logit| under which a gap is rounding
FLOAT32_DECIDES = 1e-4  # float32 gap / largest |logit| over which a gap is real without a float64 rerun
FLOAT32_DECIDES_WEIGHTS = 1e-3  # the same for attention weights, absolute

Judged = Literal["rounding", "real"]


class Gap(NamedTuple):
    """The last position's gap between line A and line B: max |a − b| over the logits, and the largest
    |logit| of both lines, measured in float64 from the precision the model ran in."""

    gap: float
    scale: float


def gap_of(a: np.ndarray, b: np.ndarray) -> Gap:
    """a, b: (vocab_size,) last logits. The difference is taken in their precision, as /api/compare's max_abs
    (logits_difference), then measured in float64."""
    return Gap(float(np.abs((a - b).astype(np.float64)).max()), float(max(np.abs(a).max(), np.abs(b).max())))


def aligned_of(rows_a: list[np.ndarray], rows_b: list[np.ndarray], order: list[int]) -> list[float]:
    """rows: per layer (nh, n), the last query's attention. Per layer, the largest |A − B|, B's keys put in A's
    order."""
    return [float(np.abs(ra - rb[:, order]).max()) for ra, rb in zip(rows_a, rows_b)]


def last_gap(runs: dict, flag: bool) -> Gap:
    """runs: run_many's {(line, flag): LineRun}."""
    return gap_of(runs[0, flag].last_logits, runs[1, flag].last_logits)


def aligned_gaps(runs: dict, order: list[int], flag: bool) -> list[float]:
    """aligned_of for run_many's runs: each layer's last query row, (nh, T)."""
    return aligned_of([p[:, -1] for p in runs[0, flag].attention], [p[:, -1] for p in runs[1, flag].attention], order)


def decided64(gap: float, scale: float = 1.0) -> Judged:
    """The float64 rerun's verdict (scale 1 for attention weights)."""
    return "rounding" if gap < REL_ROUNDING * scale else "real"


def decided32(gap: float, scale: float) -> Judged | None:
    """"real" when float32's gap is far above float32's own error; None when only float64 can tell."""
    return "real" if gap > FLOAT32_DECIDES * scale else None


def decided32_weights(gap: float) -> Judged | None:
    """decided32 for attention weights."""
    return "real" if gap > FLOAT32_DECIDES_WEIGHTS else None


@dataclass(frozen=True)
class GapFacts:
    """What one float32 pass of /api/compare measured for the verdict on the same request, so that the verdict
    needs no second pass: each model's gap (0: the model shown, 1 to 3: the lesson's depths, in LESSON_DEPTHS'
    order) with and without positions, and, when B is a reordering of A, the shown model's aligned last rows.
    unmasked: the shown model's gaps with the mask off, with and without positions, when the comparison names a
    lesson step under the mask: the controls its reason is decided by (verdicts.StepJudging)."""

    gaps: dict[tuple[int, bool], Gap]  # (model, with_position) -> Gap
    aligned: dict[bool, list[float]] | None  # with_position -> per layer
    unmasked: dict[bool, Gap] | None = None  # with_position -> Gap, mask off


def gap_facts(runs_by_model: list[dict], order: list[int] | None, unmasked: dict | None = None) -> GapFacts:
    """runs_by_model: run_many's runs of the shown model, then of each depth; unmasked: the shown model's runs with
    the mask off, when made."""
    gaps = {(i, flag): last_gap(runs, flag) for i, runs in enumerate(runs_by_model) for flag in (True, False)}
    aligned = None if order is None else {flag: aligned_gaps(runs_by_model[0], order, flag) for flag in (True, False)}
    off = None if unmasked is None else {flag: last_gap(unmasked, flag) for flag in (True, False)}
    return GapFacts(gaps, aligned, off)
