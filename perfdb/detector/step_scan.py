"""The step scan of a long series: its kernels' levels replayed one by one, as uploads arrive.

``step_scan`` reads plain floats (each kernel's level and its variance, from the series'
noise model in ``long_series``) under a ``ScanRule`` and returns the confirmed steps, the
pending one at the newest kernel and the kernels left out as spikes or excursions.
docs/detector.md, "Long series", says how it decides; ``scan_filter`` skips the quiet
stretches of a long series a block at a time with the same answer.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress

import numpy as np

from perfdb.detector import scan_filter


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
    prefix: scan_filter.Prefix,
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
    prefix: scan_filter.Prefix,
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
    ``scan_filter`` stays conservative."""
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
    start can pass are found a block at a time with numpy (``scan_filter.might_pass``) and
    only pushed onto the running sums: the same answer, bit for bit, at a fraction of the cost.
    """
    n = len(levels)
    outlier = [False] * n
    prefix = scan_filter.Prefix()
    start, pending = 0, None
    steps: list[Step] = []
    whole = None  # numpy pays off from a few hundred kernels; it stands for the exact test
    if n >= _VECTOR_FROM:
        arrays = scan_filter.kernels(levels), scan_filter.kernels(variances)
        if all(np.isfinite(a).all() for a in arrays):  # where NaN compares alike in the two
            prefix = whole = scan_filter.Whole(*arrays)
    t, block = 0, None  # block: (end, kernels to test) while nothing has happened since
    size = scan_filter.FIRST_BLOCK  # kernels of the next numpy pass: doubled while quiet
    while t < n:
        if pending is None and whole is not None:
            if block is None or t >= block[0]:
                block = scan_filter.might_pass(whole, t, start, rule, size)
                size = min(2 * size, scan_filter.BLOCK)
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
            block, size = None, scan_filter.FIRST_BLOCK
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
