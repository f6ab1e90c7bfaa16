"""A drift: a stock series that gets a little worse kernel after kernel, no one move a step.

A regression that creeps in at 1-2 % a kernel over 6-10 kernels has no kernel that stands
out of the noise, so neither the short scan nor the step scan can separate it; the slope
of the kernels' levels over a window can. ``drift_changes`` tests the trailing window of the
stock series (``Settings.drift_window`` kernels, the spikes and excursions the scan left out
left out here too, and never across a step the scan found: the window starts at the step).

The slope is Theil-Sen's (the median of the pairwise slopes: one bad run does not make a
drift), its standard error that of least squares under the series' noise model, as
``noise.trial_noise`` reads it from the window's trials, repeated builds and the prior,
plus the levels' scatter around the fitted line beyond the trials' share: a drift does not
inflate that scatter, a spike or a wandering lab does. A one-sided t-test in the
direction the line went, at ``drift_alpha`` (shared over a long series' windows,
``drift_alpha``); its whole change over the window must also reach the floor
(``min_change_pct``, or staff's threshold); and no cut of the window into two levels may
fit it closer than the line (a step the scans have not placed yet, or runs switching mode,
is the step tests' question). A drift is raised once, on the
first kernel whose window passes: a window ending on one of the ``drift_window`` - 1
kernels before that passes too is the same drift, already told. Each window's noise comes
from its own kernels, so a later check reads an earlier window as its own check did.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

from perfdb.detector import policy
from perfdb.detector.noise import trial_noise
from perfdb.detector.points import Change, KernelRuns, Ordered, Point, Scanned, kernel_of
from perfdb.detector.policy import Settings

METHOD = "drift"
# Theil-Sen's slope is about this efficient as least squares' on normal levels (simple
# regression): its standard error is least squares' over the square root of it.
THEIL_SEN_EFFICIENCY = 0.91


@dataclass(frozen=True)
class Drift:
    """One window's fitted line: the change it makes over the window (% of its start), the
    test's one-sided p-value (1 when under the floor: not tested) and whether it passed."""

    first: int  # the window's first kernel (stock index)
    last: int  # and its last, the drift's candidate
    kernels: tuple[int, ...]  # the kernels fitted (the scan's outliers left out)
    change_pct: float
    p_value: float
    significant: bool


def drift_changes(
    usable: Ordered,
    scanned: Scanned,
    better: str,
    settings: Settings,
    candidates: Collection[int],
) -> list[Change]:
    """The stock series' drift on its newest kernel, when one of ``candidates`` is that
    kernel's run and its window is the first to pass (``drift_at``); else none. ``scanned``:
    the stock kernels as the check's scan read them (its levels' starts and outliers). Its
    baseline is the window's first kernel: where the drift started from, what the compare
    page sets beside the newest kernel and what a recovery goes back to."""
    if better == "none":
        return []
    kernels, breaks, outliers = scanned.kernels, scanned.breaks, scanned.outliers
    if len(kernels) < settings.drift_min_kernels:
        return []
    newest = len(kernels) - 1
    if not set(kernels[newest].run_ids) & set(candidates):
        return []
    runs = tail_runs(usable, kernels, 2 * settings.drift_window)
    # the newest kernel's window, then those ending on the drift_window - 1 kernels before it
    lasts = range(newest, max(newest - settings.drift_window, -1), -1)
    windows = (drift_at(runs, kernels, last, breaks, outliers, better, settings) for last in lasts)
    found = next(windows, None)
    if found is None or not found.significant:
        return []
    if any(w is not None and w.significant and _same_way(w, found) for w in windows):
        return []  # the same drift, raised on an earlier kernel
    return [
        Change(
            baseline_run_ids=kernels[found.first].run_ids,
            candidate_run_id=kernels[newest].run_ids[0],
            change_pct=found.change_pct,
            p_value=found.p_value,
            method=METHOD,
            direction=policy.direction(found.change_pct, better),
            confidence=1.0 - found.p_value,
            status="confirmed",
        )
    ]


def _same_way(a: Drift, b: Drift) -> bool:
    return (a.change_pct > 0) == (b.change_pct > 0)


def tail_runs(usable: Ordered, kernels: Sequence[KernelRuns], count: int) -> dict[str, list[Point]]:
    """The stock runs of the last ``count`` stock kernels, by kernel name: the points come
    in kernel order, so they are the last ones, read back to the first stock run of an
    earlier kernel (a long series is not read whole for its last windows)."""
    names = {kernels[i].kernel for i in range(max(len(kernels) - count, 0), len(kernels))}
    runs: dict[str, list[Point]] = {}
    for point in reversed(usable):
        if point.patches:
            continue
        name = kernel_of(point)
        if name not in names:
            break
        runs.setdefault(name, []).insert(0, point)
    return runs


def drift_at(
    runs: dict[str, list[Point]],
    kernels: Sequence[KernelRuns],
    last: int,
    breaks: Sequence[int],
    outliers: Collection[int],
    better: str,
    settings: Settings,
) -> Drift | None:
    """The window ending at kernel ``last`` tested for a drift; None when it is too short
    (fewer than ``drift_min_kernels`` kernels since the last step, outliers left out, or
    its last kernel one). ``runs``: the stock runs by kernel name."""
    if last in outliers:
        return None
    first = max(last - settings.drift_window + 1, 0)
    first = max([first, *(s for s in breaks if first < s <= last)])
    window = [i for i in range(first, last + 1) if i not in outliers]
    if len(window) < settings.drift_min_kernels:
        return None
    return fitted(
        kernels, window, [p for i in window for p in runs[kernels[i].kernel]], better, settings
    )


def drift_alpha(settings: Settings, kernels: int) -> float:
    """The one-sided alpha of the window ending at the ``kernels``-th stock kernel: a long
    series tests a window at every upload, so past ``budget_kernels`` it shares the budget,
    as the step scan does: ``drift_alpha`` x budget_kernels / kernels."""
    return settings.drift_alpha * settings.budget_kernels / max(kernels, settings.budget_kernels)


def fitted(
    kernels: Sequence[KernelRuns],
    window: Sequence[int],
    runs: Sequence[Point],
    better: str,
    settings: Settings,
) -> Drift | None:
    """The window's line and its test (``drift_at``; ``runs``: the window's stock runs, whose
    ``trial_noise`` the test is judged with)."""
    levels = np.array([kernels[i].level for i in window], dtype=float)
    centre = float(np.mean(levels))
    if centre == 0:
        return None
    y = levels / abs(centre) * 100.0  # % of the window's mean level
    x = np.array(window, dtype=float)
    pairs = np.triu_indices(len(x), 1)
    slope = float(np.median((y[pairs[1]] - y[pairs[0]]) / (x[pairs[1]] - x[pairs[0]])))
    start = float(np.median(y - slope * x) + slope * x[0])
    if start <= 0:
        return None
    span = float(x[-1] - x[0])
    change = slope * span / start * 100.0
    fixed = policy.usable_threshold_pct(settings.threshold_pct)
    if abs(change) < (fixed if fixed is not None else settings.min_change_pct):
        return Drift(window[0], window[-1], tuple(window), change, 1.0, False)
    # least squares' weights on the levels: var(slope) = sum(c^2 var(level))
    centred = x - x.mean()
    c = centred / float(np.sum(centred**2))
    line = y.mean() + float(np.sum(c * y)) * centred
    squares = float(np.sum((y - line) ** 2))
    if _step_fits_better(y, squares):
        return Drift(window[0], window[-1], tuple(window), change, 1.0, False)
    counts = np.array([len(kernels[i].values) for i in window], dtype=float)
    trials = trial_noise(runs, settings)
    trial_share = (trials.within_pct or 0.0) ** 2 / counts
    leverage = 1 / len(x) + centred * c
    expected = float(np.sum((1 - leverage) * trial_share)) / (len(x) - 2)
    residual = ((max(squares / (len(x) - 2) - expected, 0.0), float(len(x) - 2)),)
    noise = trials.noise(settings, residual)
    if noise is None:
        return None
    part_w = float(np.sum(c**2 * (noise.within_pct or 0.0) ** 2 / counts))
    per_run = np.array([len(kernels[i].run_ids) for i in window], dtype=float)
    part_b = float(np.sum(c**2 * noise.between_pct**2 / per_run))
    if part_w + part_b <= 0:
        return None
    dof = policy.test_dof(noise, part_w, part_b)
    se = math.sqrt((part_w + part_b) / THEIL_SEN_EFFICIENCY) * span / start * 100.0
    p_value = float(scipy_stats.t.sf(abs(change) / se, max(dof, 0.5)))
    significant = p_value < drift_alpha(settings, window[-1] + 1)
    if significant:  # and the fitted move (in the metric's unit) beyond one quantum
        moved = abs(slope * span) / 100.0 * abs(centre)
        values = [v for i in window for v in kernels[i].values]
        quantum = settings.resolution or policy.resolution_of(values)
        significant = not (quantum and moved <= quantum * (1 + 1e-9))
    return Drift(window[0], window[-1], tuple(window), change, p_value, significant)


def _step_fits_better(y: np.ndarray, line_squares: float) -> bool:
    """Do two levels (the best cut, two kernels or more each side) fit the window closer
    than the line? Then it holds a step the scans have not placed yet (or runs switching
    mode), the step tests' question, not a drift."""
    total, squares = np.cumsum(y), np.cumsum(y**2)
    n = len(y)
    cuts = np.arange(2, n - 1)
    left = squares[cuts - 1] - total[cuts - 1] ** 2 / cuts
    right_sum = total[-1] - total[cuts - 1]
    right = (squares[-1] - squares[cuts - 1]) - right_sum**2 / (n - cuts)
    return bool(len(cuts)) and float(np.min(left + right)) < line_squares
