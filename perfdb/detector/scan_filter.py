"""Which kernels of a long series the step scan must test one by one (``step_scan.step_scan``).

Most kernels of a long series change nothing: no start j in the window passes, no step is
pending, the scan only pushes the kernel onto its running sums. This module finds them for a
block of kernels at once with numpy, so that only the others (a candidate that might pass)
go through the exact pure-Python test. The answer stays bit-identical: the filter is
conservative (it keeps every (t, j) that could pass, with a margin far above the rounding
differences between its sums and the exact scan's), and the running sums the scan reads are
the same float additions in the same order (``Whole``: numpy's cumsum is a sequential loop,
the additions ``Prefix.push`` makes one by one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from perfdb.detector.order_stats import Floats

# Relative slack. The filter's means and variances differ from the exact scan's only in the
# sums over the kernels after a start (at most ``window`` additions, each off by at most
# window x 2**-53 of the largest value: 1.1e-14 of it for the default window of 10, 1.1e-10
# for a window of 1,000) and in the last bit of a division: far below the slack. The
# baseline's sums are the scan's own (``Whole``), bit for bit.
MARGIN = 1e-9
BLOCK = 2048  # kernels judged per numpy pass at most: the pass is redone after each event
FIRST_BLOCK = 512  # kernels of the first pass after an event; each quiet pass doubles it


class Rule(Protocol):
    """What the filter reads of the scan's rule (``step_scan.ScanRule``), named here so that this
    module needs nothing from ``step_scan``, which imports it."""

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

    def drop_last(self) -> None:
        self.sums[-1], self.vars[-1], self.counts[-1] = (
            self.sums[-2],
            self.vars[-2],
            self.counts[-2],
        )

    def drop(
        self,
        lo: int,
        hi: int,
        levels: Sequence[float],
        variances: Sequence[float],
        outlier: Sequence[bool],
    ) -> None:
        """Kernels lo..hi-1, pushed already, are outliers (``outlier`` says so): the sums from
        lo on are added again as ``push`` adds them, in order."""
        for i in range(lo, len(self.sums) - 1):
            keep = not outlier[i]
            self.sums[i + 1] = self.sums[i] + (levels[i] if keep else 0.0)
            self.vars[i + 1] = self.vars[i] + (variances[i] if keep else 0.0)
            self.counts[i + 1] = self.counts[i] + keep

    def range(self, lo: int, hi: int) -> tuple[float, float, int]:
        return (
            self.sums[hi] - self.sums[lo],
            self.vars[hi] - self.vars[lo],
            self.counts[hi] - self.counts[lo],
        )


class Whole(Prefix):
    """``Prefix`` of a long series of finite floats, computed for every kernel at once as if
    each kernel not yet pushed will be kept: the entries up to the kernels pushed are the
    ones ``Prefix`` would hold, bit for bit (np.cumsum adds in order, as ``push`` does). An
    outlier (``drop_last``, ``drop``) makes the entries after it stale; they are added again
    from there, a block at a time, when something reads them (``right_to``), so a long series
    with many spikes costs a block per spike, not the rest of the series. A push only counts;
    ``range`` reads Python floats, as from ``Prefix``."""

    def __init__(self, levels: np.ndarray, variances: np.ndarray) -> None:
        self.levels, self.variances = levels, variances
        self.outlier = np.zeros(len(levels), dtype=bool)
        self.pushed = 0
        self.sums_a = np.cumsum(np.concatenate(([0.0], levels)))
        self.vars_a = np.cumsum(np.concatenate(([0.0], variances)))
        self.counts_a = np.arange(len(levels) + 1)
        self.sums, self.vars = self.sums_a.tolist(), self.vars_a.tolist()
        self.counts = self.counts_a.tolist()
        self.valid = len(self.sums)  # entries before this one are right

    def push(self, level: float, variance: float, keep: bool) -> None:
        assert keep  # the scan marks an outlier with drop_last
        self.pushed += 1

    def skip(self, count: int) -> None:
        """``push`` the next ``count`` kernels, kept."""
        self.pushed += count

    def drop_last(self) -> None:
        """The last kernel pushed is an outlier: left out of every sum from there on."""
        self.drop(self.pushed - 1, self.pushed)

    def drop(self, lo: int, hi: int, *_: object) -> None:
        """``Prefix.drop``: the kernels lo..hi-1 out of every sum from lo on."""
        self.outlier[lo:hi] = True
        self.valid = min(self.valid, lo + 1)

    def range(self, lo: int, hi: int) -> tuple[float, float, int]:
        if hi >= self.valid:
            self.right_to(hi + 1)
        return (
            self.sums[hi] - self.sums[lo],
            self.vars[hi] - self.vars[lo],
            self.counts[hi] - self.counts[lo],
        )

    def right_to(self, end: int) -> None:
        """Make the entries before ``end`` right (and a block more): added again in order
        from the last right one, outliers adding 0.0 as ``Prefix.push`` adds them."""
        if end <= self.valid:
            return
        end = min(len(self.sums), max(end, self.valid + FIRST_BLOCK))
        at = self.valid - 1
        keep = ~self.outlier[at : end - 1]
        for array, listed, values in (
            (self.sums_a, self.sums, self.levels),
            (self.vars_a, self.vars, self.variances),
        ):
            added = np.concatenate(([array[at]], np.where(keep, values[at : end - 1], 0.0)))
            array[at:end] = np.cumsum(added)
            listed[at:end] = array[at:end].tolist()
        self.counts_a[at:end] = self.counts_a[at] + np.concatenate(([0], np.cumsum(keep)))
        self.counts[at:end] = self.counts_a[at:end].tolist()
        self.valid = end


def might_pass(
    prefix: Whole,
    t0: int,
    start: int,
    rule: Rule,
    size: int = BLOCK,
) -> tuple[int, list[int]]:
    """(end, kernels t0 <= t < end at which some start j might pass), for a block of kernels
    from t0 on, assuming nothing is pending at t0 and nothing happens before the first of them
    (no step, no outlier: every kernel is pushed as kept). A comparison with a NaN keeps the
    kernel, as the exact test lets a NaN through."""
    w, bw = rule.window, rule.baseline_window
    levels, variances = prefix.levels, prefix.variances
    end = min(len(levels), t0 + size)
    prefix.right_to(end)
    first = max(start + 1, t0 - w + 1, 0)  # the lowest start j tested at t0..end-1
    if end <= first:
        return end, []
    # per start j = first..end-1, what the kernels after it do not change
    js = np.arange(first, end)
    lo = np.maximum(start, js - bw)
    b_n = prefix.counts_a[js] - prefix.counts_a[lo]
    bad = prefix.outlier[first:end] | (b_n < 2)  # as the exact test
    b_n = np.maximum(b_n, 1)
    before = (prefix.sums_a[js] - prefix.sums_a[lo]) / b_n  # the exact test's, bit for bit
    before_var = (prefix.vars_a[js] - prefix.vars_a[lo]) / b_n**2
    critical = np.full(end - first, rule.critical)
    # the same per (d, t): row d, column t - t0 is start j = t - d (padded below ``first``)
    pad = first - (t0 - w + 1)
    keep = np.concatenate((np.zeros(pad, dtype=bool), ~prefix.outlier[first:end]))
    after_n = _sums(keep.astype(float), w)
    after = _sums(np.where(keep, _padded(levels, first, end, pad), 0.0), w)
    after_var = _sums(np.where(keep, _padded(variances, first, end, pad), 0.0), w)
    bad, before, before_var, critical = (
        _by_start(np.concatenate((np.full(pad, fill), x)), w)
        for x, fill in ((bad, True), (before, 0.0), (before_var, 0.0), (critical, 0.0))
    )
    base = max(start, t0 - w + 1 - bw, 0)  # the lowest kernel a baseline can start at
    scale = float(np.max(np.abs(levels[base:end])))
    vscale = float(np.max(variances[base:end]))
    np.maximum(after_n, 1.0, out=after_n)
    diff = np.abs(after / after_n - before) + MARGIN * (scale + 1e-300)
    var = before_var + (after_var - MARGIN * vscale * after_n) / after_n**2
    with np.errstate(divide="ignore", invalid="ignore"):
        z = diff / np.sqrt(np.maximum(var * (1 - MARGIN), 0.0))
    bad = bad | (diff < rule.min_fraction * (np.abs(before) - MARGIN * scale) * (1 - MARGIN))
    bad |= diff <= rule.min_absolute * (1 - MARGIN)
    bad |= z < critical * (1 - MARGIN)  # NaN or inf (no noise): kept
    return end, (np.flatnonzero(~bad.all(axis=0)) + t0).tolist()


def _padded(values: np.ndarray, first: int, end: int, pad: int) -> np.ndarray:
    return np.concatenate((np.zeros(pad), values[first:end]))


def _by_start(values: np.ndarray, w: int) -> np.ndarray:
    """Row d, column i: ``values[i + w - 1 - d]`` (a view): per kernel t = t0 + i, the value
    at start j = t - d, for ``values`` from kernel t0 - w + 1 on."""
    step = values.itemsize  # a contiguous array, read through a view with a negative stride
    return np.ndarray((w, len(values) - w + 1), values.dtype, values, (w - 1) * step, (-step, step))


def _sums(values: np.ndarray, w: int) -> np.ndarray:
    """Row d, column i: the sum of ``values[i + w - 1 - d .. i + w - 1]``, added from the
    last down: per kernel t = t0 + i, the sum over the kernels j = t - d..t (w additions at
    most, whatever the block's length)."""
    sums = np.array(_by_start(values, w))
    for d in range(1, w):
        np.add(sums[d - 1], sums[d], out=sums[d])
    return sums


def kernels(values: Sequence[float]) -> np.ndarray:
    """The levels or variances as the filter reads them (``Floats``: the array they carry)."""
    if type(values) is Floats:
        array: np.ndarray = values.array
        return array
    return np.asarray(values, dtype=float)
