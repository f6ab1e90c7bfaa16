"""The step scan of a long series: its kernels' levels replayed one by one, as uploads arrive.

``step_scan`` reads plain floats (each kernel's level and its variance, ``level_variances``
of the series' noise model in ``long_series``) under a ``ScanRule`` and returns the confirmed
steps, the pending one at the newest kernel and the kernels left out as spikes or
excursions. docs/detector.md, "Long series", says how it decides.

Most kernels of a long series change nothing: no start j in the window passes, no step is
pending, the scan only pushes the kernel onto its running sums. ``might_pass`` finds them
for a block of kernels at once with numpy, so that only the others (a candidate that might
pass) go through the exact pure-Python test. The answer stays bit-identical: the filter is
conservative (it keeps every (t, j) that could pass, with a margin far above the rounding
differences between its sums and the exact scan's), and the running sums the scan reads are
the same float additions in the same order (``Whole``: numpy's cumsum is a sequential loop,
the additions ``Prefix.push`` makes one by one).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress

import numpy as np

from perfdb.detector.stats import Floats


def level_variances(
    runs: Sequence[int],
    trials: Sequence[int],
    within_pct: float | None,
    between_pct: float,
    centre: float,
    resolution: float | None,
) -> list[float]:
    """Each kernel's level variance, the weight the scan gives its level: run-to-run noise
    over its ``runs`` plus within-run noise over its ``trials`` (the series' noise model, % of
    ``centre``), at least half the resolution; one computation per (runs, trials) shape."""

    def variance(runs: int, trials: int) -> float:
        within = (within_pct or 0.0) ** 2 / trials
        sd = math.sqrt(between_pct**2 / runs + within) / 100 * centre
        floor = (resolution or 0.0) / 2 / math.sqrt(trials)
        return max(sd, floor, 1e-9 * centre) ** 2

    run_counts, trial_counts = set(runs), set(trials)
    if len(run_counts) == len(trial_counts) == 1:  # one shape (a long series of single runs)
        return [variance(run_counts.pop(), trial_counts.pop())] * len(runs)
    shapes = list(zip(runs, trials, strict=True))
    by_shape = {shape: variance(*shape) for shape in set(shapes)}
    return list(map(by_shape.__getitem__, shapes))


@dataclass(frozen=True)
class Step:
    """A level shift found by ``step_scan``."""

    index: int  # first kernel of the new level
    seen_at: int  # kernel at which it was confirmed (for a pending step: the newest)
    z: float  # (after mean - before mean) / its standard error
    before: tuple[int, ...]  # the baseline kernels (the current segment, outliers left out)
    before_mean: float
    after_mean: float
    confirmed: bool  # False: only the newest kernel has moved, a spike or a step


@dataclass(frozen=True)
class Scan:
    steps: tuple[Step, ...]  # confirmed steps, in order
    pending: Step | None  # the newest kernel moved, nothing after it to confirm it yet
    outliers: frozenset[int]  # kernels that moved and came back: spikes, left out of baselines


@dataclass(frozen=True)
class ScanRule:
    critical: float  # |z| a step must reach
    homogeneity: tuple[float, ...]  # chi2 limit for the kernels after a step, by dof (index)
    min_fraction: float  # |after - before| >= this x |before mean|
    min_absolute: float  # |after - before| must exceed this (the metric's resolution)
    window: int = 4  # kernels after a step that may confirm it
    baseline_window: int = 30  # kernels of the current segment used as its baseline
    excursion: int = 0  # kernels: a confirmed step back within this many is no step (``came_back``)


_VECTOR_FROM = 200  # kernels: below this numpy costs more than it saves


def _candidate(
    after_levels: list[float],
    after_vars: list[float],
    prefix: Prefix,
    j: int,
    lo: int,
    rule: ScanRule,
) -> tuple[float, float, float] | None:
    """The step "kernel j starts a new level", judged with the kernels after it (j..t, not
    outliers: ``after_levels``, ``after_vars``) against the baseline ``lo``..j-1.

    (z, before mean, after mean) when it passes, else None; the starts are ranked by |z|.
    Sums are ``math.fsum``: exact, so the order the kernels were gathered in does not change
    a bit of the answer.
    """
    b_sum, b_var, b_n = prefix.range(lo, j)
    if b_n < 2:
        return None
    count = len(after_levels)
    before_mean = b_sum / b_n
    after_mean = math.fsum(after_levels) / count
    diff = after_mean - before_mean
    if _too_small(diff, before_mean, rule):
        return None
    se = math.sqrt(b_var / b_n**2 + math.fsum(after_vars) / count**2)
    z = diff / se if se > 0 else math.copysign(math.inf, diff)
    if abs(z) < rule.critical:
        return None
    if count >= 2 and _disagree(after_levels, after_vars, after_mean, rule):
        return None  # the kernels after it disagree: a spike and a return, not a step
    return z, before_mean, after_mean


def _too_small(diff: float, before_mean: float, rule: ScanRule) -> bool:
    """A difference below the smallest change worth an alert, or within the resolution."""
    return abs(diff) < rule.min_fraction * abs(before_mean) or abs(diff) <= rule.min_absolute


def _disagree(
    levels: Sequence[float],
    variances: Sequence[float],
    mean: float,
    rule: ScanRule,
) -> bool:
    """Do these kernels spread about their ``mean`` more than one level's noise allows (their
    chi-square over ``rule.homogeneity`` at their dof)?"""
    spread = math.fsum(
        (level - mean) ** 2 / var for level, var in zip(levels, variances, strict=True)
    )
    return spread > rule.homogeneity[min(len(levels) - 1, len(rule.homogeneity) - 1)]


def best_step(
    levels: Sequence[float],
    variances: Sequence[float],
    outlier: Sequence[bool],
    prefix: Prefix,
    t: int,
    start: int,
    rule: ScanRule,
) -> Step | None:
    """The strongest start j in the window before t (ties: the earliest j).

    j runs from t down, so the kernels after j grow by one each time instead of being
    gathered again: O(window) per kernel, not O(window^2).
    """
    best, best_strength, best_lo = None, 0.0, 0
    after_levels: list[float] = []
    after_vars: list[float] = []
    window = range(t, max(start + 1, t - rule.window + 1) - 1, -1)
    for j in window:
        if outlier[j]:
            continue
        after_levels.append(levels[j])
        after_vars.append(variances[j])
        lo = max(start, j - rule.baseline_window)
        found = _candidate(after_levels, after_vars, prefix, j, lo, rule)
        if found is not None and not baseline_holds(
            levels, variances, outlier, lo, j, rule, found[1:3], after_vars
        ):
            found = None
        if found is not None and (best is None or abs(found[0]) >= best_strength):
            best, best_strength, best_lo = (j, len(after_levels), found), abs(found[0]), lo
    if best is None:
        return None
    j, count, (z, before_mean, after_mean) = best
    before = tuple(i for i in range(best_lo, j) if not outlier[i])
    return Step(j, t, z, before, before_mean, after_mean, count >= 2)


SHORT_BASELINE = 3  # kernels: one spike among them moves their mean by a third of it or more


def baseline_holds(
    levels: Sequence[float],
    variances: Sequence[float],
    outlier: Sequence[bool],
    lo: int,
    j: int,
    rule: ScanRule,
    means: tuple[float, float],
    after_vars: list[float],
) -> bool:
    """Does a step that passed against a baseline of two or three kernels also pass when
    those kernels disagree among themselves (their chi-square spread over the homogeneity
    limit) and the one farthest from the new level is left out?

    A spike among a series' first two kernels is never shown to be one: no kernel before it
    can make it pending and no kernel after it can clear it. Left in the baseline, it made
    the first kernels after it look like a step (the peer suite's false alerts on the third
    kernel). A baseline that agrees with itself is judged as before. Only rejects, so
    ``might_pass`` stays conservative."""
    kept = [i for i in range(lo, j) if not outlier[i]]
    if not 2 <= len(kept) <= SHORT_BASELINE:
        return True
    before_mean, after_mean = means
    baseline = [levels[i] for i in kept]
    centre = math.fsum(baseline) / len(kept)
    if not _disagree(baseline, [variances[i] for i in kept], centre, rule):
        return True
    far = max(kept, key=lambda i: abs(levels[i] - after_mean))
    rest = [i for i in kept if i != far]
    before = math.fsum(levels[i] for i in rest) / len(rest)
    diff = after_mean - before
    if diff * (after_mean - before_mean) <= 0 or _too_small(diff, before, rule):
        return False
    count = len(after_vars)
    var = math.fsum(variances[i] for i in rest) / len(rest) ** 2 + math.fsum(after_vars) / count**2
    return var <= 0 or abs(diff) / math.sqrt(var) >= rule.critical


def step_scan(levels: Sequence[float], variances: Sequence[float], rule: ScanRule) -> Scan:
    """Replay a series kernel by kernel, as uploads arrive; O(n x window).

    At each kernel t every start j in the last ``window`` kernels is tested: the mean of the
    kernels j..t against the current segment's baseline before j (z test with the series'
    noise, plus a chi-square check that the kernels after j agree). The strongest passing j
    wins. With one kernel after it the step is *pending*; the next kernel confirms it (the
    two agree) or clears it (it is back: the kernel becomes an outlier, out of every
    baseline). A confirmed step starts a new segment. In a long series the kernels at which no
    start can pass are found a block at a time with numpy (``might_pass``) and
    only pushed onto the running sums: the same answer, bit for bit, at a fraction of the cost.
    """
    n = len(levels)
    outlier = [False] * n
    prefix = Prefix()
    start, pending = 0, None
    steps: list[Step] = []
    whole = None  # numpy pays off from a few hundred kernels; it stands for the exact test
    if n >= _VECTOR_FROM:
        arrays = float_array(levels), float_array(variances)
        if all(np.isfinite(a).all() for a in arrays):  # where NaN compares alike in the two
            prefix = whole = Whole(*arrays)
    t, block = 0, None  # block: (end, kernels to test) while nothing has happened since
    size = FIRST_BLOCK  # kernels of the next numpy pass: doubled while quiet
    while t < n:
        if pending is None and whole is not None:
            if block is None or t >= block[0]:
                block = might_pass(whole, t, start, rule, size)
                size = min(2 * size, BLOCK)
            at = bisect_left(block[1], t)  # the next kernel to test, if any
            upto = block[1][at] if at < len(block[1]) else block[0]
            if upto > t:  # no start j can pass at these kernels: only push them
                whole.skip(upto - t)
                t = upto
                continue
        happened = pending is not None
        if pending is not None and cleared(levels[t], pending):
            outlier[t - 1] = True
            prefix.drop_last()
        best = best_step(levels, variances, outlier, prefix, t, start, rule)
        pending = None
        if best is not None and best.confirmed and came_back(steps, best, rule, variances, outlier):
            away = steps.pop()
            for i in range(away.index, best.index):
                outlier[i] = True
            prefix.drop(away.index, best.index, levels, variances, outlier)
            start = steps[-1].index if steps else 0
        elif best is not None and best.confirmed:
            steps.append(best)
            start = best.index
        elif best is not None:
            pending = best
        prefix.push(levels[t], variances[t], True)
        if happened or best is not None:  # a step, a pending one or an outlier
            block, size = None, FIRST_BLOCK
        t += 1
    return Scan(tuple(steps), pending, frozenset(compress(range(n), outlier)))


def came_back(
    steps: Sequence[Step],
    best: Step,
    rule: ScanRule,
    variances: Sequence[float],
    outlier: Sequence[bool],
) -> bool:
    """Does the confirmed step ``best`` take the series back where it was before the last
    step, within ``rule.excursion`` kernels of it? Its new level is nearer the level before
    than the level between, and no step from the level before would pass: an excursion (a
    second mode's visit, a few bad runs), as a kernel that moved and came back is a spike,
    not two steps. A return part of the way is still two steps."""
    if not steps or rule.excursion <= 0:
        return False
    away = steps[-1]
    if best.index - away.index > rule.excursion:
        return False
    old, new = away.before_mean, best.after_mean
    if abs(new - old) >= abs(new - best.before_mean):
        return False
    after = [i for i in range(best.index, best.seen_at + 1) if not outlier[i]]
    var = (
        math.fsum(variances[i] for i in away.before) / len(away.before) ** 2
        + math.fsum(variances[i] for i in after) / len(after) ** 2
    )
    return _too_small(new - old, old, rule) or abs(new - old) < rule.critical * math.sqrt(var)


def cleared(level: float, pending: Step) -> bool:
    """The kernel after a pending step is closer to the old level than to the new one."""
    moved = pending.after_mean - pending.before_mean
    return (level - pending.before_mean) * math.copysign(1.0, moved) < abs(moved) / 2


# --- the quiet kernels of a long series, found a block at a time with numpy ---

# Relative slack. The filter's means and variances differ from the exact scan's only in the
# sums over the kernels after a start (at most ``window`` additions, each off by at most
# window x 2**-53 of the largest value: 1.1e-14 of it for the default window of 10, 1.1e-10
# for a window of 1,000) and in the last bit of a division: far below the slack. The
# baseline's sums are the scan's own (``Whole``), bit for bit.
MARGIN = 1e-9
BLOCK = 2048  # kernels judged per numpy pass at most: the pass is redone after each event
FIRST_BLOCK = 512  # kernels of the first pass after an event; each quiet pass doubles it


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
    rule: ScanRule,
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


def float_array(values: Sequence[float]) -> np.ndarray:
    """The levels or variances as the filter reads them (``Floats``: the array they carry)."""
    if type(values) is Floats:
        array: np.ndarray = values.array
        return array
    return np.asarray(values, dtype=float)
