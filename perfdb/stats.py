"""Statistics for the regression detector, on plain sequences of floats.

Kept apart from ``detection.py`` so the numbers can be tested without points, kernels or
baselines. Nothing here knows which direction of a metric is better.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats


def mean(values: Sequence[float]) -> float:
    if not values:
        raise ValueError("mean of no values")
    return math.fsum(values) / len(values)


def relative_change_pct(baseline: Sequence[float], candidate: Sequence[float]) -> float:
    """(candidate mean - baseline mean) / |baseline mean| * 100.

    Dividing by the absolute baseline keeps the sign meaning "went up" even for a metric
    whose values are negative. A zero baseline has no relative change: ValueError.
    """
    base = mean(baseline)
    if base == 0:
        raise ValueError("baseline mean is 0: a relative change is undefined")
    return (mean(candidate) - base) / abs(base) * 100.0


def welch_p_value(baseline: Sequence[float], candidate: Sequence[float]) -> float:
    """Two-sided p-value of Welch's t-test (unequal variances), both sides need >= 2 values.

    scipy returns NaN when both sides have zero variance (identical trials, e.g. a counter
    that is exactly reproducible). We decide that case deliberately: equal means -> p = 1
    (nothing changed), different means -> p = 0 (every trial moved, no noise to hide in);
    whether such a change is worth an alert is then left to the size thresholds.
    """
    if len(baseline) < 2 or len(candidate) < 2:
        raise ValueError("Welch's t-test needs at least 2 values on each side")
    if _spread(baseline) == 0 and _spread(candidate) == 0:
        return 1.0 if mean(baseline) == mean(candidate) else 0.0
    with warnings.catch_warnings():
        # scipy warns about a constant side; Welch handles it (that side's variance is 0)
        warnings.filterwarnings("ignore", message="Precision loss", category=RuntimeWarning)
        result = scipy_stats.ttest_ind(baseline, candidate, equal_var=False)
    return float(result.pvalue)


def _spread(values: Sequence[float]) -> float:
    return max(values) - min(values)


def coefficient_of_variation_pct(values: Sequence[float]) -> float | None:
    """Sample sd / |mean| * 100; None for fewer than 2 values or a zero mean."""
    if len(values) < 2:
        return None
    centre = mean(values)
    if centre == 0:
        return None
    return float(np.std(values, ddof=1)) / abs(centre) * 100.0


def pooled_cv_pct(groups: Sequence[Sequence[float]]) -> float | None:
    """Pooled relative sd of several groups of trials, weighted by degrees of freedom.

    Pooling variances (not averaging sds) is what a pooled t-test would use, and weighting
    by n - 1 lets a 5-trial run count more than a 2-trial one. Groups with fewer than
    2 values or a zero mean carry no noise information and are skipped.
    """
    weighted, dof = 0.0, 0
    for group in groups:
        cv = coefficient_of_variation_pct(group)
        if cv is None:
            continue
        weighted += (len(group) - 1) * cv * cv
        dof += len(group) - 1
    if dof == 0:
        return None
    return math.sqrt(weighted / dof)


def successive_difference_cv_pct(
    levels: Sequence[float], *, min_differences: int = 3
) -> float | None:
    """Relative sd (%) of an ordered series' levels, judged from neighbour-to-neighbour moves.

    For runs with a single value there are no trials to measure noise from, but the series
    itself shows it: without a step, x[i+1] - x[i] has sd sqrt(2) * sigma. The median of
    |differences| (scaled by 1.4826 for a normal sd) ignores the one large move a step
    makes. With fewer than ``min_differences`` moves the estimate is too rough: None.
    """
    if len(levels) - 1 < min_differences:
        return None
    centre = float(np.median(levels))
    if centre == 0:
        return None
    moves = np.abs(np.diff(np.asarray(levels, dtype=float)))
    sigma = 1.4826 * float(np.median(moves)) / math.sqrt(2)
    return sigma / abs(centre) * 100.0


def normal_two_sided_p(z: float) -> float:
    return float(2.0 * scipy_stats.norm.sf(abs(z)))


# --- E-Divisive (Matteson & James 2014, "A nonparametric approach for multiple change point
# analysis of multivariate data", JASA 109(505)), with alpha = 1 and a permutation test. ---


@dataclass(frozen=True)
class ChangePoint:
    index: int  # first index of the new segment
    p_value: float


def _block_sums(distances: np.ndarray) -> np.ndarray:
    """2-D prefix sums so the sum of any block of the distance matrix costs O(1)."""
    n = distances.shape[0]
    sums = np.zeros((n + 1, n + 1))
    sums[1:, 1:] = distances.cumsum(axis=0).cumsum(axis=1)
    return sums


def _block(sums: np.ndarray, r0: int, r1: int, c0: int, c1: int) -> float:
    return sums[r1, c1] - sums[r0, c1] - sums[r1, c0] + sums[r0, c0]


def _best_split(distances: np.ndarray, start: int, end: int) -> tuple[int, float]:
    """Split of x[start:end] that maximises the energy statistic Q-hat.

    Q(tau) = tau*m/n * (2/(tau*m) * sum|x_i - y_j| - sum|x_i - x_k| / C(tau, 2)
                        - sum|y_j - y_k| / C(m, 2)),  left = x[start:tau], right = x[tau:end].
    A 1-point side has no within-side distance, counted as 0 (the series are short, so
    single-point segments must be allowed).
    """
    sums = _block_sums(distances[start:end, start:end])
    n = end - start
    best_index, best_q = -1, -math.inf
    for tau in range(1, n):
        m = n - tau
        between = 2.0 * _block(sums, 0, tau, tau, n) / (tau * m)
        within_left = _block(sums, 0, tau, 0, tau) / (tau * (tau - 1)) if tau > 1 else 0.0
        within_right = _block(sums, tau, n, tau, n) / (m * (m - 1)) if m > 1 else 0.0
        # the full blocks count each pair twice, so /(t(t-1)) equals /C(t,2) over pairs
        q = tau * m / n * (between - within_left - within_right)
        if q > best_q:
            best_index, best_q = start + tau, q
    return best_index, best_q


def _best_over_segments(distances: np.ndarray, bounds: Sequence[int]) -> tuple[int, float]:
    best_index, best_q = -1, -math.inf
    for start, end in zip(bounds, bounds[1:], strict=False):
        if end - start < 2:
            continue
        index, q = _best_split(distances, start, end)
        if q > best_q:
            best_index, best_q = index, q
    return best_index, best_q


def e_divisive(
    values: Sequence[float],
    *,
    significance: float = 0.05,
    permutations: int = 199,
    seed: int = 0,
    max_change_points: int = 10,
) -> list[ChangePoint]:
    """Change points of an ordered series by E-Divisive, hierarchically, strongest first.

    Each round finds the best split over all current segments; a permutation test
    (shuffling values within each segment, as in the paper) says whether it is stronger
    than chance; the search stops at the first split that is not. The generator is seeded
    so the same series always gives the same answer.
    """
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or len(x) < 3:
        return []
    rng = np.random.default_rng(seed)
    bounds = [0, len(x)]
    found: list[ChangePoint] = []
    while len(found) < max_change_points:
        distances = np.abs(x[:, None] - x[None, :])
        index, observed = _best_over_segments(distances, bounds)
        if index < 0 or observed <= 0:
            break
        at_least_as_strong = 0
        for _ in range(permutations):
            shuffled = x.copy()
            for start, end in zip(bounds, bounds[1:], strict=False):
                shuffled[start:end] = rng.permutation(shuffled[start:end])
            perm_distances = np.abs(shuffled[:, None] - shuffled[None, :])
            if _best_over_segments(perm_distances, bounds)[1] >= observed:
                at_least_as_strong += 1
        p_value = (at_least_as_strong + 1) / (permutations + 1)
        if p_value >= significance:
            break
        found.append(ChangePoint(index=index, p_value=p_value))
        bounds = sorted([*bounds, index])
    return found
