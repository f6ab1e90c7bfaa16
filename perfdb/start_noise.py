"""The step scan's noise read per start: the move at the tested start left out (opt-in).

``policy.series_noise`` reads one noise for the whole series from its kernel-to-kernel moves,
the largest few left out and the rest rescaled as if those were noise too. A step is one
of those moves: where the series has one, the rescaling inflates the noise every start is
tested with, the true start included (+29 % in sd at 10 kernels, docs/detector.md). Under
the hypothesis "the level changes at kernel j" the move into j is not noise; the
generalised likelihood-ratio test with unknown variance reads the noise under that
hypothesis, so each start j gets its own estimate: the same trimmed estimator over every
move but the one into j (``moves - 1`` of them, so its own dof), the same pooling with the
workload's prior, and the critical value of Student's t with that start's dof. The true
start is then judged with the noise its step does not inflate, a neighbouring start with
the step's move still in its noise: the strongest start is more often the right kernel.

Pure numpy over plain floats, O(n log n) for a series (one sort), so a 100,000-kernel series
costs a few milliseconds. ``Settings.step_noise = "per_start"`` turns it on (``series.py``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache, partial

import numpy as np

from perfdb import policy, scan_glr, scan_max, stats


@dataclass(frozen=True)
class StartNoise:
    """Per start j (index = kernel; j = 0 is never a start): its level variance over the
    series-wide one the scan's ``variances`` hold, its critical |z| and its dof."""

    var: Sequence[float]
    critical: Sequence[float]
    dof: Sequence[float]


def with_starts(
    rule: stats.ScanRule,
    levels: Sequence[float],
    noise: policy.Noise,
    centre: float,
    resolution: float | None,
    per_kernel: float,
    settings: policy.Settings,
) -> stats.ScanRule:
    """The scan's rule with each start's own noise at the series' typical trials:
    ``step_noise="per_start"``, the moves' estimate with the start's move left out
    (``start_noise``; the rule as it was when the series is too short to leave a move out);
    ``"glr"``, the residuals of the model each test tests (``perfdb/scan_glr.py``);
    ``"glr_max"`` / ``"glr_matched"``, the same pooled as the whole series reads, its
    critical value for the strongest of the starts tested (``perfdb/scan_max.py``)."""
    trials = noise.typical_trials
    floor = max((resolution or 0.0) / 2 / math.sqrt(trials), 1e-9 * abs(centre))
    if settings.step_noise in ("glr", "glr_whole", "glr_max", "glr_matched"):
        residual = _residual(noise, floor / abs(centre) * 100, per_kernel, settings)
        if settings.step_noise != "glr":  # pooled or not as the whole series reads
            residual = replace(residual, pool=_consistent(levels, settings))
        return replace(rule, residual=_over_starts(residual, settings.step_noise))
    starts = start_noise(
        levels,
        noise.within_pct,
        trials,
        noise,
        floor / abs(centre) * 100.0,
        per_kernel / 2,
        settings,
    )
    return rule if starts is None else replace(rule, starts=starts)


def _over_starts(residual: scan_glr.Residual, step_noise: str) -> scan_glr.Residual:
    """The critical value for the strongest of the starts tested (``perfdb/scan_max.py``):
    ``"glr_max"`` the adaptation to the start taken back, ``"glr_matched"`` as often passed
    under no step as the series-wide test."""
    if step_noise == "glr_max":
        return replace(residual, over_starts=scan_max.factor)
    if step_noise == "glr_matched":
        prior_dof = residual.prior_dof if residual.pool and residual.prior is not None else 0.0
        return replace(residual, over_starts=partial(scan_max.matched, prior_dof))
    return residual


def start_noise(
    levels: Sequence[float],
    within_pct: float | None,
    trials: int,
    noise: policy.Noise,
    floor_pct: float,
    tail_alpha: float,
    settings: policy.Settings,
) -> StartNoise | None:
    """Each start's noise with the move into it left out (``policy.level_noise_pct``'s
    estimator over the other moves, pooled with ``settings.prior_noise_pct`` as
    ``policy.series_noise`` pools), relative to the series' ``noise`` at ``trials`` trials.

    ``floor_pct``: the smallest level sd (%) the scan's variances allow (half the
    resolution); ``tail_alpha``: the one-tailed level each start is tested at. None when
    there are too few moves to leave one out (fewer than 4): the series-wide noise stands.
    """
    values = np.asarray(levels, dtype=float)
    moves = np.abs(np.diff(values))
    count = len(moves) - 1  # moves left for each start
    centre = float(np.sort(np.abs(values))[len(values) // 2])
    if count < 3 or centre == 0:
        return None
    own = _left_out_sd_pct(moves, count, settings.noise_trim, centre)
    dof = np.full(len(own), settings.dof_per_difference * count)
    if settings.prior_noise_pct is not None:
        own, dof = _pooled(own, dof, count, settings)
    within_sq = (within_pct or 0.0) ** 2 / max(trials, 1)
    series_level = max(noise.level_pct(trials), floor_pct)
    level = np.maximum(np.sqrt(np.maximum(own**2, within_sq)), floor_pct)
    ratio = (level / series_level) ** 2
    critical = {d: policy.critical_t(tail_alpha, d) for d in set(dof.tolist())}
    var = [1.0, *ratio.tolist()]
    dofs = dof.tolist()
    return StartNoise(var, [math.inf, *(critical[d] for d in dofs)], [0.0, *dofs])


def _left_out_sd_pct(moves: np.ndarray, count: int, trim: float, centre: float) -> np.ndarray:
    """The trimmed level sd (%) of the moves, each one left out in turn: the ``keep``
    smallest of the others, their mean square rescaled for the share kept (as
    ``policy.level_noise_pct``). One sort; each left-out move by its rank."""
    keep = max(1, math.ceil((1 - trim) * count), count - policy.NOISE_TRIM_MAX)
    squares = moves**2
    order = np.argsort(moves, kind="stable")
    rank = np.empty(len(moves), dtype=int)
    rank[order] = np.arange(len(moves))
    sums = np.concatenate(([0.0], np.cumsum(squares[order])))
    # among the keep smallest itself: the keep + 1 smallest less it; else the keep smallest
    kept = np.where(rank < keep, sums[keep + 1] - squares, sums[keep])
    factor = policy._truncated_square(keep / count)
    sd: np.ndarray = np.sqrt(np.maximum(kept, 0.0) / keep / factor / 2) / centre * 100.0
    return sd


def _pooled(
    own: np.ndarray, dof: np.ndarray, count: int, settings: policy.Settings
) -> tuple[np.ndarray, np.ndarray]:
    """``policy.series_noise``'s pooling with the prior, per start: the start's estimate is
    already read as a step at that start, so it is the one tested for consistency."""
    prior = float(settings.prior_noise_pct or 0.0)
    tolerance = policy._tolerance(settings, settings.dof_per_difference * count)
    weight = settings.prior_weight
    consistent = own <= prior * tolerance
    shrunk = np.sqrt((count * own**2 + weight * prior**2) / (count + weight))
    gained = weight * settings.dof_per_difference
    return np.where(consistent, shrunk, own), np.where(consistent, dof + gained, dof)


def _residual(
    noise: policy.Noise, floor_pct: float, per_kernel: float, settings: policy.Settings
) -> scan_glr.Residual:
    """The prior in the scan's variance units (its level variance at the series' typical
    trials over the series'), what it is worth in dof, and the critical values."""
    trials = noise.typical_trials
    series_level = max(noise.level_pct(trials), floor_pct)
    prior = None
    if settings.prior_noise_pct is not None:
        least = (noise.within_pct or 0.0) / math.sqrt(trials)
        prior = (max(settings.prior_noise_pct, least, floor_pct) / series_level) ** 2
    return scan_glr.Residual(
        prior=prior,
        prior_dof=settings.prior_weight * settings.dof_per_difference,
        tolerance_sq=partial(_tolerance_sq, settings),
        critical=partial(policy.critical_t, per_kernel / 2),
    )


def _consistent(levels: Sequence[float], settings: policy.Settings) -> bool:
    """Is the series' noise, read on all its kernels, consistent with the prior? The test
    ``policy.series_noise`` makes (a property of the series, not of one tested split, which
    a split fitted to a bimodal series' mode switch would make look quiet)."""
    level, moves = policy.level_noise_pct(levels, settings.noise_trim)
    if level is None or settings.prior_noise_pct is None:
        return False
    step_free = policy._step_free_noise_pct(levels)
    reading = level if step_free is None else min(level, step_free)
    limit = policy._tolerance(settings, settings.dof_per_difference * moves)
    return reading <= settings.prior_noise_pct * limit


@lru_cache(maxsize=4096)
def _tolerance_sq(settings: policy.Settings, dof: float) -> float:
    return policy._tolerance(settings, dof) ** 2
