"""A long series analysed: its noise model, the step scan, and the steps it finds as
``Change``s.

From ``Settings.short_kernels`` stock kernels a series is read by the step scan
(``step_scan.step_scan``) rather than kernel by kernel, and its noise from its own
kernel-to-kernel moves (``series_noise``, the largest left out, shrunk toward the prior in
shorter series): a model only a long series has, so it lives with it. ``analyse`` gives its
``Series`` (None for a shorter one) and ``series_steps`` the steps worth an alert, each with
where it starts (``placement``). docs/detector.md, "Long series", tells how it works.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from itertools import chain

from scipy import stats as scipy_stats

from perfdb.detector import placement, policy, stats, step_scan
from perfdb.detector.points import (
    Change,
    Columns,
    KernelRuns,
    Ordered,
    Point,
    Scanned,
    StockKernels,
    columns,
    stock_kernels,
)
from perfdb.detector.policy import Settings
from perfdb.detector.stats import Floats


@dataclass(frozen=True)
class Series:
    """A long series as the step scan read it: each kernel's runs, level and variance, the
    noise model they came from, and the scan's steps."""

    kernels: Sequence[KernelRuns]
    noise: policy.Noise
    scan: step_scan.Scan
    levels: Sequence[float]  # each kernel's level, as the scan read them
    variances: Sequence[float]  # and its variance

    @property
    def scanned(self) -> Scanned:
        """Where the scan's levels start (its steps and a pending one) and its outliers."""
        breaks = [s.index for s in self.scan.steps]
        if self.scan.pending is not None:
            breaks.append(self.scan.pending.index)
        return Scanned(self.kernels, tuple(breaks), self.scan.outliers)


# --- a long series' noise: its kernel-to-kernel moves ---


def series_noise(
    groups: Sequence[Sequence[float]], levels: Sequence[float], settings: Settings
) -> policy.Noise | None:
    """Within-run and run-to-run noise of a series (``levels`` = stock kernels in order).

    The level noise comes from the kernel-to-kernel moves; what the trials' own noise does not
    explain is run-to-run. With few kernels it is shrunk toward ``prior_noise_pct``.
    """
    within, _ = stats.within_run_pct(groups)
    # Consistent with the prior? Read as if the largest move were a step: a step must not
    # make a short series look noisier than typical (its own move, and the rescaling of the
    # kept moves as if the left-out one were noise, inflate a 10-kernel series' sd by ~30 %);
    # a bimodal series, whose many large moves are its noise, still does.
    prior = settings.prior_noise_pct
    step_free = stats.step_free_noise_pct(levels) if prior is not None else None
    level, moves = stats.level_noise_pct(levels, settings.noise_trim)
    if level is None:
        return None
    trials = sorted(map(len, groups))[len(groups) // 2] if groups else 1
    dof = settings.dof_per_difference * moves
    if prior is not None:
        # Shrunk toward the workload/metric's typical noise, but never below what the series
        # shows: a series noisier than typical (bimodal, a flaky machine) keeps its own noise.
        weight = settings.prior_weight
        consistent = level if step_free is None else min(level, step_free)
        if consistent <= prior * _tolerance(settings, dof):
            level = math.sqrt((moves * level**2 + weight * prior**2) / (moves + weight))
            dof += weight * settings.dof_per_difference
    # How much of the kernels' level variance (read from their moves) is within-run noise:
    # within^2 / trials, or with a mix of trial counts (reruns, a dropped trial: 1-5 trials a
    # kernel) within^2 x the runs' mean of 1 / trials. The moves read the kernels' average
    # variance; 1 / the median trials read the within-run share too small there, took the
    # rest for run-to-run noise and judged the kernels with many trials as noisy as the
    # others. No run with two trials (a long one-trial series): nothing to share.
    counts = list(map(len, groups))
    if not within:
        share = 0.0
    elif not counts or min(counts) == max(counts):
        share = within**2 / trials
    else:
        share = within**2 * math.fsum(1 / count for count in counts) / len(counts)
    between_sq = level**2 - share
    between = math.sqrt(max(between_sq, 0.0))
    return policy.Noise(within, between, dof, trials)


def _tolerance(settings: Settings, dof: float) -> float:
    """How much noisier than the prior a series may look and still be pooled with it."""
    if settings.prior_consistency is None:
        return settings.prior_tolerance
    bound = scipy_stats.chi2.isf(settings.prior_consistency, max(dof, 0.5)) / max(dof, 0.5)
    return max(settings.prior_tolerance, math.sqrt(float(bound)))


UNCACHED_FROM = 200  # points: a series this long is analysed without analyse's cache


def analysed(usable: Ordered, settings: Settings) -> Series | None:
    """``analyse`` of the points through its cache: ``change_points`` and ``pair_context``
    asked of the same series share one analysis."""
    return analyse(tuple(usable), settings)


def analysed_for_check(
    usable: Ordered,
    kernels: StockKernels,
    trials: Sequence[Sequence[float]],
    settings: Settings,
    singles: Floats | None = None,
) -> Series | None:
    """The analysis a check reads a series with, given its stock kernels as the check read
    them (``stock_kernels``) and every run's trials (``trials``; ``singles``: when each run
    has one trial, those trials as ``Floats``). A long series' is computed from them without
    ``analyse``'s own cache, whose key hashes every point (5 % of a one-run check onto 60
    series of 1,000 kernels) and which holds fewer series than such a check reads; a shorter
    series' goes through it, as a check run again finds it there. The same computation, so
    the same analysis."""
    if len(usable) < UNCACHED_FROM:
        return analyse(usable, settings)
    return analyse_kernels(kernels, trials, settings, singles)


def analyse_of(
    points: Sequence[Point],
    settings: Settings,
    of: Columns | None = None,
    singles: Floats | None = None,
) -> Series | None:
    """Noise model and step scan of a series; None below ``short_kernels`` stock kernels.
    ``of``: the points' ``columns`` and, when each point has one trial, ``singles``: those
    trials as ``Floats`` (``stock_kernels``), when the caller has them. ``analyse`` is the
    same, cached."""
    of = of or columns(points)
    return analyse_kernels(stock_kernels(points, of, singles), of[3], settings, singles)


def analyse_kernels(
    kernels: StockKernels,
    trials: Sequence[Sequence[float]],
    settings: Settings,
    singles: Floats | None = None,
) -> Series | None:
    """``analyse_of`` of a series' stock kernels and every run's trials (``singles``: those
    trials as ``Floats``, when each run has one)."""
    levels = kernels.levels
    # a shorter series is read kernel by kernel (detection.short_scan), not by the scan
    if len(kernels) < max(settings.min_kernels, settings.short_kernels) or 0 in levels:
        return None
    noise = series_noise(trials, levels, settings)
    if noise is None:
        return None
    centre = stats.middle_size(levels, floats=True)  # levels: fsum / n, or floats
    # every trial, in the points' order
    every = chain.from_iterable(trials) if singles is None else singles
    resolution = settings.resolution or policy.resolution_of(every)
    per_kernel = settings.series_alpha / max(len(kernels), settings.budget_kernels)
    fixed = policy.usable_threshold_pct(settings.threshold_pct)
    rule = step_scan.ScanRule(
        critical=stats.critical_t(per_kernel / 2, noise.dof),
        homogeneity=tuple(
            stats.critical_chi2(settings.homogeneity_alpha, d) if d else math.inf
            for d in range(settings.confirm_window + 1)
        ),
        min_fraction=(fixed if fixed is not None else settings.min_change_pct) / 100,
        min_absolute=resolution or 0.0,
        window=settings.confirm_window,
        baseline_window=settings.baseline_window,
        excursion=settings.excursion_kernels,
    )
    variances = step_scan.level_variances(
        kernels.run_counts(),
        list(map(len, kernels.values)),
        noise.within_pct,
        noise.between_pct,
        centre,
        resolution,
    )
    return Series(kernels, noise, step_scan.step_scan(levels, variances, rule), levels, variances)


# Cached: ``change_points``, ``pair_context`` and a check of a short series ask of the same
# points.
analyse = lru_cache(maxsize=32)(analyse_of)


@dataclass(frozen=True)
class Steps:
    """A long series' steps as changes, made once per check: the confirmed ones, and the
    pending one (the newest kernels moved) with its kernel's runs, reported only when one of
    them is asked about."""

    confirmed: tuple[Change, ...]
    pending: Change | None = None
    pending_runs: frozenset[int] = frozenset()


def series_steps(series: Series, better: str) -> Steps:
    """The scan's steps as ``Change``s, each with where it starts (``placement``)."""
    steps = list(series.scan.steps)
    pending = series.scan.pending
    if pending is not None:
        steps.append(pending)
    changes = []
    for number, step in enumerate(steps):
        change = (step.after_mean - step.before_mean) / abs(step.before_mean) * 100.0
        p_value = min(1.0, 2.0 * float(scipy_stats.t.sf(abs(step.z), series.noise.dof)))
        changes.append(
            Change(
                baseline_run_ids=tuple(
                    sorted(r for i in step.before for r in series.kernels[i].run_ids)
                ),
                candidate_run_id=series.kernels[step.index].run_ids[0],
                change_pct=change,
                p_value=p_value,
                method="changepoint",
                direction=policy.direction(change, better),
                confidence=1.0 - p_value,
                status="confirmed" if step.confirmed else "unconfirmed",
                placement=placement.Placement(partial(_placement, series, steps, number)),
            )
        )
    if pending is None:
        return Steps(tuple(changes))
    runs = frozenset(series.kernels[pending.index].run_ids)
    return Steps(tuple(changes[:-1]), changes[-1], runs)


def _placement(series: Series, steps: Sequence[step_scan.Step], number: int) -> placement.Found:
    """(share of the step's first kernel, (run, share) of the next likeliest one) from its
    baseline and the kernels of its level up to the next step or the newest kernel, no more
    of them than its baseline has: a check's cost does not grow with the series."""
    step = steps[number]
    end = steps[number + 1].index if number + 1 < len(steps) else len(series.kernels)
    if number + 1 == len(steps) and series.scan.pending is not None and step.confirmed:
        end = max(step.index + 1, series.scan.pending.index)  # the pending kernel: not yet
    end = min(end, step.index + max(len(step.before), 2))
    outliers = series.scan.outliers
    kept = [*step.before, *(i for i in range(step.index, end) if i not in outliers)]
    if step.index not in kept:
        return None, None
    found = dict(
        placement.shares(series.levels, series.variances, kept, step.index, series.noise.dof)
    )
    share = found.pop(step.index)
    if not found:
        return share, None
    other = max(found, key=lambda i: (found[i], -i))
    return share, (series.kernels[other].run_ids[0], found[other])
