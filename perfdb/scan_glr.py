"""The step scan's generalised likelihood-ratio test with unknown variance (opt-in).

``Settings.step_noise = "glr"``: each (kernel t, start j) is tested with the noise read from
the residuals of the model it tests, the levels before j (back to the segment's start) and
the levels j..t each around their own mean, plus each earlier segment around its mean, pooled
with the workload's prior when consistent with it. For a start fixed in advance that z is
Student's t with the residuals' dof (the difference of two means is independent of the
residuals about them), so the critical value is exact per start, unlike the moves-based
per-start estimate (``perfdb/start_noise.py``), which leaves out the move most correlated
with the tested difference. Residuals are in units of the scan's variances (the series-wide
noise model): the test estimates a scale on them. Pure Python, no numpy filter (the scan is
kernel by kernel with this option); no import of ``policy`` (``stats`` imports this).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Residual:
    """What the test needs besides the data."""

    prior: float | None  # the prior's level variance over the series' (scan variance units)
    prior_dof: float  # what the prior is worth in dof (weight x dof per move)
    tolerance_sq: Callable[[float], float]  # own/prior variance allowed at this own dof
    critical: Callable[[float], float]  # critical |t| at this dof
    # pooled with the prior: decided per test from its residuals (None), or once for the
    # series from its whole reading, as ``policy.series_noise`` decides it (True / False)
    pool: bool | None = None
    # the critical value's factor for the strongest of this many starts at this dof
    # (``perfdb/scan_max.py``, ``step_noise="glr_max"`` / ``"glr_matched"``); None: Student's
    # t per start
    over_starts: Callable[[int, float], float] | None = None


class Sums:
    """Running sums of x^2/v, x/v, 1/v and x over kernels kept (outliers count 0), and the
    residual sum of squares and dof of the segments closed so far (earlier steps)."""

    def __init__(self) -> None:
        self.q, self.s1, self.w, self.x, self.n = [0.0], [0.0], [0.0], [0.0], [0]
        self.closed_rss, self.closed_dof = 0.0, 0
        self.origin: float | None = None  # levels are summed less the first one: less
        # cancellation in q - 2 m s1 + m^2 w, and a run of equal levels has no residual

    def push(self, level: float, variance: float) -> None:
        if self.origin is None:
            self.origin = level
        level -= self.origin
        self.q.append(self.q[-1] + level * level / variance)
        self.s1.append(self.s1[-1] + level / variance)
        self.w.append(self.w[-1] + 1 / variance)
        self.x.append(self.x[-1] + level)
        self.n.append(self.n[-1] + 1)

    def drop_last(self) -> None:
        for sums in (self.q, self.s1, self.w, self.x):
            sums[-1] = sums[-2]
        self.n[-1] = self.n[-2]

    def rss(self, lo: int, hi: int) -> tuple[float, int]:
        """Sum of (x - mean)^2 / v over the kept kernels lo..hi-1 (unweighted mean, as the
        scan's), and its dof (kept kernels - 1)."""
        count = self.n[hi] - self.n[lo]
        if count < 2:
            return 0.0, 0
        mean = (self.x[hi] - self.x[lo]) / count
        q, s1, w = self.q[hi] - self.q[lo], self.s1[hi] - self.s1[lo], self.w[hi] - self.w[lo]
        rss = q - 2 * mean * s1 + mean * mean * w
        # below the sums' rounding (a few ulps of the largest term): no residual at all
        return (rss if rss > 1e-12 * (q + mean * mean * w) else 0.0), count - 1

    def close(self, lo: int, hi: int) -> None:
        """A confirmed step at ``hi`` ends the segment lo..hi-1: its residuals are noise."""
        rss, dof = self.rss(lo, hi)
        self.closed_rss += rss
        self.closed_dof += dof


def scale(
    residual: Residual, sums: Sums, start: int, lo: int, j: int, after_rss: float, after_n: int
) -> tuple[float, float] | None:
    """(variance scale, dof) for start j: the residuals of the segment's kernels before j
    (start..lo-1 and lo..j-1, each around its own mean: the baseline window's mean is the one
    tested), of the kernels j..t around theirs (``after_rss``), and of the closed segments;
    pooled with the prior when consistent with it (``Residual.pool``). None: no dof at all."""
    early_rss, early_dof = sums.rss(start, lo)
    base_rss, base_dof = sums.rss(lo, j)
    rss = sums.closed_rss + early_rss + base_rss + after_rss
    dof = sums.closed_dof + early_dof + base_dof + max(after_n - 1, 0)
    if residual.prior is None or residual.pool is False:
        return (rss / dof, float(dof)) if dof > 0 else None
    own_dof = float(dof)
    noisier = dof > 0 and rss / dof > residual.prior * residual.tolerance_sq(own_dof)
    if residual.pool is None and noisier:  # decided by this test's own residuals
        return rss / dof, own_dof  # clearly noisier than the prior: its own noise
    pooled_dof = own_dof + residual.prior_dof
    return (rss + residual.prior_dof * residual.prior) / pooled_dof, pooled_dof


def critical(residual: Residual, dof: float, starts: int = 1) -> float:
    """The |t| a start must reach; ``starts``: how many the scan tests at this kernel."""
    if dof <= 0:
        return math.inf
    if residual.over_starts is None:
        return residual.critical(dof)
    return residual.critical(dof) * residual.over_starts(starts, dof)
