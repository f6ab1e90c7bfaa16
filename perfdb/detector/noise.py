"""The trials' noise: what an A/B test, a short series and a drift's window are judged with.

``trial_noise`` reads it without the kernel-to-kernel moves being judged (a test whose noise
grew with the step it judges could not see the step): the trials' own spread (within-run),
and run-to-run evidence from builds run more than once and from the workload/metric's prior
(``Settings.prior_noise_pct``). ``TrialNoise.noise`` makes of it the ``policy.Noise`` a test
takes, with any evidence its caller adds (a short series' level spread,
``short_scan.segment_spread``; a drift window's scatter). A long series' model, read from
its moves, is the long series' own (``long_series.series_noise``).

The estimators on plain floats are in ``stats``; docs/detector.md, "The noise", says why.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean

from perfdb.detector import policy, stats
from perfdb.detector.points import Point, kernel_of
from perfdb.detector.policy import Settings


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
