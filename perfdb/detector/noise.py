"""The noise a series is judged with, never read from the moves being judged.

Two models, both a ``policy.Noise`` for the test (``policy.judge``):

- ``trial_noise``: what A/B tests and short series are judged with: the trials' own spread
  (within-run), and run-to-run evidence from builds run more than once and from the
  workload/metric's prior (``Settings.prior_noise_pct``); the short scan adds the spread of
  a level's kernels (``short_scan.segment_spread``);
- ``series_noise``: a long series' model (``long_series``), read from its kernel-to-kernel
  moves with the largest left out, shrunk toward the prior in shorter series.

The estimators on plain floats are in ``stats``; docs/detector.md, "The noise", says why.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean

from scipy import stats as scipy_stats

from perfdb.detector import policy, stats
from perfdb.detector.points import Point, kernel_of
from perfdb.detector.policy import Settings

# --- an A/B test's and a short series' noise: trials, repeated builds, the prior ---


@dataclass(frozen=True)
class TrialNoise:
    """What a series says about its noise without reading the moves being judged: the
    trials' spread (within-run) and run-to-run evidence from repeated builds and the
    workload/metric's prior, each a (variance %^2, dof) source."""

    within_pct: float | None  # pooled over every run with >= 2 trials
    within_dof: int
    sources: tuple[tuple[float, float], ...]  # run-to-run (or, one trial, level) evidence
    typical_trials: int

    def noise(
        self, settings: Settings, extra: tuple[tuple[float, float], ...] = ()
    ) -> policy.Noise | None:
        """The ``policy.Noise`` for a test, with ``extra`` evidence (a segment's spread)."""
        sources = (*self.sources, *extra)
        weight = math.fsum(dof for _, dof in sources)
        if weight > 0:
            between = math.sqrt(math.fsum(var * dof for var, dof in sources) / weight)
            dof = weight
        elif self.within_pct is None:
            return None
        else:
            between, dof = self.within_pct * settings.short_between_ratio, math.inf
        if self.within_pct is None:
            return policy.Noise(None, between, dof, 1)
        return policy.Noise(self.within_pct, between, dof, self.typical_trials, self.within_dof)


def trial_noise(points: Sequence[Point], settings: Settings) -> TrialNoise:
    """The noise of a series read from its trials, its repeated builds and the prior.

    Within-run: every run's trial variance pooled (by n - 1). Run-to-run: the spread of the
    means of runs of one build (kernel and patch set run twice) beyond what their trials
    explain, pooled with what is assumed when nothing measures it (``short_between_ratio``,
    worth ``rerun_prior_dof``) unless the workload/metric's typical level noise is known
    (``prior_noise_pct``, worth ``prior_weight`` moves). Never the kernel-to-kernel moves: a
    test whose noise grew with the step it judges (a series that got worse read as noisier)
    could not see the step.
    """
    repeated = _repeated_builds(points)
    groups = [p.values for p in points]
    within = stats.pooled_cv_pct(groups)
    within_dof = sum(len(g) - 1 for g in groups if len(g) >= 2) if within is not None else 0
    counts = sorted(len(g) for g in groups) or [1]
    typical = counts[len(counts) // 2]
    sources: list[tuple[float, float]] = []
    # builds run more than once: their means' spread less the trials' share of it
    weighted, dof = 0.0, 0
    for moves, spread, inverse_trials in repeated:
        share = (within or 0.0) ** 2 * inverse_trials / (moves + 1)
        weighted += moves * max(spread - share, 0.0)
        dof += moves
    if dof:
        sources.append((weighted / dof, float(dof)))
        if within is not None and settings.prior_noise_pct is None:
            # the assumption used when nothing measures it, as evidence beside the reruns
            assumed = (within * settings.short_between_ratio) ** 2
            sources.append((assumed, settings.rerun_prior_dof))
    if settings.prior_noise_pct is not None:
        share = (within or 0.0) ** 2 / typical if within is not None else 0.0
        prior_var = max(settings.prior_noise_pct**2 - share, 0.0)
        sources.append((prior_var, settings.prior_weight * settings.dof_per_difference))
    return TrialNoise(within, within_dof, tuple(sources), typical)


def _repeated_builds(points: Sequence[Point]) -> list[tuple[int, float, float]]:
    """Each build run more than once (kernel and patch set): its runs less one, the relative
    spread (%^2) of their means, and the sum of 1 / trials over its runs (the trials' share
    of that spread, once the within-run noise is known)."""
    builds: dict[tuple[str, tuple[str, ...]], list[Point]] = {}
    for point in points:
        builds.setdefault((kernel_of(point), point.patches), []).append(point)
    repeated = []
    for runs in builds.values():
        if len(runs) < 2:
            continue
        means = [fmean(p.values) for p in runs]
        centre = fmean(means)
        if centre == 0:
            continue
        spread = math.fsum(((m - centre) / centre * 100) ** 2 for m in means) / (len(runs) - 1)
        repeated.append((len(runs) - 1, spread, math.fsum(1 / len(p.values) for p in runs)))
    return repeated


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
