"""Which kernels of a long series the step scan must test one by one (``stats.step_scan``).

Most kernels of a long series change nothing: no start j in the window passes, no step is
pending, the scan only pushes the kernel onto its running sums. This module finds them for a
block of kernels at once with numpy, so that only the others (a candidate that might pass)
go through the exact pure-Python test. The answer stays bit-identical: the filter is
conservative (it keeps every (t, j) that could pass, with a margin far above the rounding
differences between its sums and the exact scan's), and the running sums the scan keeps are
extended with the same float additions in the same order (``Prefix.push_many``).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate
from typing import Protocol

import numpy as np

# Relative slack. The filter's sums differ from the exact scan's only in its running sums
# over a block (``local``): k <= BLOCK + window + baseline_window additions, each off by at
# most k x 2**-53 of the largest value, so a difference of two is within 2 k**2 2**-53 of it
# (6.8e-11 for k = 552, the default windows; ~1e-13 typically): 15x below the slack.
MARGIN = 1e-9
BLOCK = 512  # kernels judged per numpy pass: the pass is redone after each step or outlier


class Rule(Protocol):
    """What the filter reads of the scan's rule (``stats.ScanRule``), named here so that this
    module needs nothing from ``stats``, which imports it."""

    @property
    def critical(self) -> float: ...

    @property
    def min_fraction(self) -> float: ...

    @property
    def min_absolute(self) -> float: ...

    @property
    def window(self) -> int: ...

    @property
    def baseline_window(self) -> int: ...


class Prefix:
    """Running sums over kernels that are not outliers: any range in O(1)."""

    def __init__(self) -> None:
        self.sums, self.vars, self.counts = [0.0], [0.0], [0]

    def push(self, level: float, variance: float, keep: bool) -> None:
        self.sums.append(self.sums[-1] + (level if keep else 0.0))
        self.vars.append(self.vars[-1] + (variance if keep else 0.0))
        self.counts.append(self.counts[-1] + keep)

    def push_many(self, levels: Sequence[float], variances: Sequence[float]) -> None:
        """``push(level, variance, True)`` for each, the same additions in the same order."""
        self.sums += list(accumulate(levels, initial=self.sums[-1]))[1:]
        self.vars += list(accumulate(variances, initial=self.vars[-1]))[1:]
        self.counts += range(self.counts[-1] + 1, self.counts[-1] + len(levels) + 1)

    def drop_last(self) -> None:
        self.sums[-1], self.vars[-1], self.counts[-1] = (
            self.sums[-2],
            self.vars[-2],
            self.counts[-2],
        )

    def range(self, lo: int, hi: int) -> tuple[float, float, int]:
        return (
            self.sums[hi] - self.sums[lo],
            self.vars[hi] - self.vars[lo],
            self.counts[hi] - self.counts[lo],
        )


def might_pass(
    levels: np.ndarray,
    variances: np.ndarray,
    outlier: Sequence[bool],
    prefix: Prefix,
    t0: int,
    start: int,
    rule: Rule,
    thresholds: np.ndarray | None = None,
) -> tuple[int, list[int]]:
    """(end, kernels t0 <= t < end at which some start j might pass), for a block of kernels
    from t0 on, assuming nothing is pending at t0 and nothing happens before the first of them
    (no step, no outlier: every kernel is pushed as kept). ``thresholds``: per start j, the
    |z| (with these variances) it must reach when each start has its own noise
    (``stats.ScanRule.starts``); None: ``rule.critical`` for every start."""
    w, bw = rule.window, rule.baseline_window
    end = min(len(levels), t0 + BLOCK)
    base = max(start, t0 - w + 1 - bw, 0)  # the lowest kernel a baseline can start at
    # the exact scan's running sums for indices base..end-1 (pushes of t0..end-2 to come)
    ahead = Prefix()
    ahead.sums, ahead.vars, ahead.counts = (
        prefix.sums[base:],
        prefix.vars[base:],
        prefix.counts[base:],
    )
    # Python floats (tolist), not numpy scalars: the same additions, at a fraction of the cost
    ahead.push_many(levels[t0 : end - 1].tolist(), variances[t0 : end - 1].tolist())
    sums, var_sums, counts = (np.array(x) for x in (ahead.sums, ahead.vars, ahead.counts))
    keep = ~np.array(list(outlier[base:t0]) + [False] * (end - t0), dtype=bool)
    local = np.concatenate(([0.0], np.cumsum(np.where(keep, levels[base:end], 0.0))))
    local_var = np.concatenate(([0.0], np.cumsum(np.where(keep, variances[base:end], 0.0))))
    local_n = np.concatenate(([0], np.cumsum(keep)))
    t = np.arange(t0, end)[:, None]
    j = t - np.arange(w)[None, :]
    valid = j >= max(start + 1, 0)
    j = np.where(valid, j, t)  # any index in range; masked out below
    valid &= keep[j - base]
    lo = np.maximum(start, j - bw)
    b_n = counts[j - base] - counts[lo - base]
    a_n = local_n[t + 1 - base] - local_n[j - base]
    valid &= (b_n >= 2) & (a_n >= 1)
    b_n, a_n = np.maximum(b_n, 1), np.maximum(a_n, 1)
    before = (sums[j - base] - sums[lo - base]) / b_n
    after = (local[t + 1 - base] - local[j - base]) / a_n
    scale = float(np.max(np.abs(levels[base:end]))) if end > base else 0.0
    vscale = float(np.max(variances[base:end])) if end > base else 0.0
    diff = np.abs(after - before) + MARGIN * (scale + 1e-300)
    var = (var_sums[j - base] - var_sums[lo - base]) / b_n**2
    var = var + (local_var[t + 1 - base] - local_var[j - base] - MARGIN * vscale * a_n) / a_n**2
    with np.errstate(divide="ignore", invalid="ignore"):
        z = diff / np.sqrt(np.maximum(var * (1 - MARGIN), 0.0))
    valid &= diff >= rule.min_fraction * (np.abs(before) - MARGIN * scale) * (1 - MARGIN)
    valid &= diff > rule.min_absolute * (1 - MARGIN)
    critical = rule.critical if thresholds is None else thresholds[j]
    valid &= ~(z < critical * (1 - MARGIN))  # NaN or inf (no noise): kept
    return end, [int(i) + t0 for i in np.flatnonzero(valid.any(axis=1))]
