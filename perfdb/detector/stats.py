"""Statistics for the regression detector, on plain sequences of floats.

The arithmetic under the noise model and the tests, testable without points, kernels or
baselines. Nothing here knows which direction of a metric is better.

The order statistics of a long series' levels (its typical size, the middle |level|, and its
kernel-to-kernel moves sorted) are computed with numpy: a check over 60 series of 1,000
kernels sorted 1,000 Python floats three times per series for them. numpy sorts (or
partitions) the same IEEE values: every float comes back as it went in, and among floats
without a NaN a sorted order is unique up to equal values, and two equal sizes are the same
float (an absolute value is never -0.0). So the answer is the sort's, bit for bit. A NaN has
no place in an order (Python's sort and numpy's put it in different places): with a NaN or
an infinite value (whose moves are NaN) the plain sort decides. ``Floats`` carries a
series' levels with their array, converted once for every statistic that reads them.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from functools import lru_cache
from operator import mul
from statistics import NormalDist, fmean

import numpy as np
from scipy import stats as scipy_stats


def relative_change_pct(baseline: Sequence[float], candidate: Sequence[float]) -> float:
    """(candidate mean - baseline mean) / |baseline mean| * 100.

    Dividing by the absolute baseline keeps the sign meaning "went up" even for a metric
    whose values are negative. A zero baseline has no relative change: ValueError.
    """
    base = fmean(baseline)
    if base == 0:
        raise ValueError("baseline mean is 0: a relative change is undefined")
    return (fmean(candidate) - base) / abs(base) * 100.0


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
        return 1.0 if fmean(baseline) == fmean(candidate) else 0.0
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
    centre = fmean(values)
    if centre == 0:
        return None
    return float(np.std(values, ddof=1)) / abs(centre) * 100.0


def cv_pcts(groups: Sequence[Sequence[float]]) -> list[float | None]:
    """``coefficient_of_variation_pct`` of each group, in the groups' order, for a whole
    series at once: the floats one run at a time gives.

    The noise model reads every run's coefficient of variation (``within_run_pct``);
    one ``numpy.std`` per run was ~40 % of a regression check (9,000 calls for an upload's
    43 series of ~200 runs). Runs with the same number of trials go through one
    ``numpy.std`` over the rows of a 2-D array: numpy reduces each contiguous row with the
    loop it uses for one run alone, so every sd is the same float
    (tests/perfdb/detector/test_stats.py compares them bit for bit). The mean is
    ``statistics.fmean``'s, per run."""
    out: list[float | None] = [None] * len(groups)
    by_size: dict[int, list[int]] = {}
    for i, group in enumerate(groups):
        if len(group) >= 2:
            by_size.setdefault(len(group), []).append(i)
    for indexes in by_size.values():
        rows = [groups[i] for i in indexes]
        sds = np.std(np.array(rows, dtype=float), axis=1, ddof=1).tolist()
        for i, row, sd in zip(indexes, rows, sds, strict=True):
            centre = fmean(row)
            if centre != 0:
                out[i] = sd / abs(centre) * 100.0
    return out


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


@lru_cache(maxsize=4096)
def critical_t(tail_alpha: float, dof: float) -> float:
    """One-tailed critical value of Student's t (normal for large dof)."""
    return float(scipy_stats.t.isf(tail_alpha, max(dof, 0.5)))


@lru_cache(maxsize=256)
def critical_chi2(alpha: float, dof: int) -> float:
    return float(scipy_stats.chi2.isf(alpha, dof))


# --- the noise of a series, read from its trials and its kernels' levels ---


@lru_cache(maxsize=64)
def chi2_median_ratio(dof: int) -> float:
    return float(scipy_stats.chi2.median(dof)) / dof


def within_run_pct(groups: Sequence[Sequence[float]]) -> tuple[float | None, int]:
    """Robust within-run relative sd (%) and the number of runs it came from.

    Each run with >= 2 trials gives s^2 / mean^2; dividing by the median of chi2(df)/df makes
    each an unbiased-in-median estimate of sigma^2, and their median is the series'. One run
    whose two trials happen to agree is one vote among many, not the whole answer.
    """
    votes = []
    # None for a run without spread to read: most runs of a long series have one trial
    for group, cv in zip(groups, cv_pcts(groups), strict=True):
        if cv is not None:
            votes.append(cv * cv / chi2_median_ratio(len(group) - 1))
    if not votes:
        return None, 0
    votes.sort()
    mid = len(votes) // 2
    median = votes[mid] if len(votes) % 2 else (votes[mid - 1] + votes[mid]) / 2
    return math.sqrt(median), len(votes)


NOISE_TRIM_MAX = 3  # largest kernel-to-kernel moves left out at most: one step and one spike


def level_noise_pct(
    levels: Sequence[float], trim: float = 0.2, max_trimmed: int = NOISE_TRIM_MAX
) -> tuple[float | None, int]:
    """Relative sd (%) of one kernel's level, from neighbour-to-neighbour moves, and #moves.

    Without a step x[i+1] - x[i] has sd sqrt(2) sigma. The largest ``trim`` of the |moves|,
    but at most ``max_trimmed`` (a step is one move, a spike two), is left out and the rest's
    mean square scaled back to a normal's by the second moment of a normal truncated where
    the kept share ends (``truncated_square``: 0.598 for one of nine left out): far more
    efficient than the median |move|. The cap keeps a bimodal series noisy: its many large
    moves (runs switching mode) are its noise, and leaving a fifth of them out read a long
    bimodal series as quiet and its second-mode runs as steps.
    """
    moves = sorted_moves(levels)  # numpy's sort of a long series' moves
    if not moves:
        return None, 0
    centre = middle_size(levels)  # = sorted(map(abs, levels))[len(levels) // 2]
    if centre == 0:
        return None, 0
    keep = max(1, math.ceil((1 - trim) * len(moves)), len(moves) - max_trimmed)
    kept = moves[:keep] if len(moves) >= 3 else moves
    factor = truncated_square(len(kept) / len(moves))
    sigma = math.sqrt(math.fsum(map(mul, kept, kept)) / len(kept) / factor / 2)
    return sigma / centre * 100.0, len(moves)


def step_free_noise_pct(levels: Sequence[float]) -> float | None:
    """The level noise (%) read as if the largest move were a step: left out, the rest not
    rescaled (they are all noise then). What a short series' noise is, if it has a step."""
    if len(levels) < 3:  # no move left beside the largest
        return None
    moves = sorted(abs(b - a) for a, b in zip(levels, levels[1:], strict=False))[:-1]
    centre = sorted(abs(v) for v in levels)[len(levels) // 2]
    if len(moves) < 2 or centre == 0:
        return None
    return math.sqrt(math.fsum(m * m for m in moves) / len(moves) / 2) / abs(centre) * 100.0


@lru_cache(maxsize=1024)
def truncated_square(kept: float) -> float:
    """E[Z^2 | |Z| < c] for the c that keeps this share of a normal's |values|."""
    if kept >= 1:
        return 1.0
    normal = NormalDist()
    c = normal.inv_cdf((1 + kept) / 2)
    return 1 - 2 * c * normal.pdf(c) / kept


# --- order statistics of a long series' levels, with numpy ---

SORT_VECTOR_FROM = 64  # values: below this the plain sort is as fast


class Floats(list[float]):
    """Python floats that carry their numpy array too (``array``, read-only), for a series'
    levels that several statistics read: converted once, not once per statistic. Made from
    the array (``tolist``: every element a Python float, the array's own); never changed
    after (the array would no longer be the list)."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray) -> None:
        self.array = np.array(array, dtype=float)  # a native copy no one else holds
        self.array.flags.writeable = False
        super().__init__(self.array.tolist())


def _floats(values: Sequence[float], *, floats: bool = False) -> np.ndarray | None:
    """The values as a float array, for a long sequence of finite floats (an infinite
    level makes a NaN move). ``floats``: the caller knows they are all floats."""
    if type(values) is Floats and len(values) >= SORT_VECTOR_FROM:
        array: np.ndarray = values.array
        return array if np.isfinite(array).all() else None
    if len(values) < SORT_VECTOR_FROM or not (floats or set(map(type, values)) == {float}):
        return None
    array = np.asarray(values, dtype=float)
    return array if np.isfinite(array).all() else None


def middle_size(values: Sequence[float], *, floats: bool = False) -> float:
    """``sorted(map(abs, values))[len(values) // 2]``: a partition, not a sort, when long.
    ``floats``: the caller knows every value is a float."""
    middle = len(values) // 2
    array = _floats(values, floats=floats)
    if array is None:
        return sorted(map(abs, values))[middle]
    return float(np.partition(np.abs(array), middle)[middle])


def sorted_moves(levels: Sequence[float]) -> list[float]:
    """``sorted(abs_moves(levels))``: for a long sequence of finite floats numpy's
    ``abs(diff)``, as ``abs_moves`` reads such a sequence, sorted in numpy; for others the
    plain sort."""
    array = _floats(levels)
    if array is None:
        return sorted(abs_moves(levels))
    moves: list[float] = np.sort(np.abs(np.diff(array))).tolist()
    return moves


def abs_moves(levels: Sequence[float]) -> list[float]:
    """|x[i+1] - x[i]| for each neighbour pair; numpy for a long series of floats (the same
    IEEE subtraction, the same floats back), plain Python otherwise (ints stay exact)."""
    if len(levels) >= 64 and set(map(type, levels)) == {float}:
        moves: list[float] = np.abs(np.diff(np.asarray(levels, dtype=float))).tolist()
        return moves
    return [abs(b - a) for a, b in zip(levels, levels[1:], strict=False)]
