"""Statistics for the regression detector, on plain sequences of floats.

The arithmetic under the noise model and the tests, testable without points, kernels or
baselines. Nothing here knows which direction of a metric is better.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from statistics import fmean

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

    The noise model reads every run's coefficient of variation (``policy.within_run_pct``);
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


def abs_moves(levels: Sequence[float]) -> list[float]:
    """|x[i+1] - x[i]| for each neighbour pair; numpy for a long series of floats (the same
    IEEE subtraction, the same floats back), plain Python otherwise (ints stay exact)."""
    if len(levels) >= 64 and set(map(type, levels)) == {float}:
        moves: list[float] = np.abs(np.diff(np.asarray(levels, dtype=float))).tolist()
        return moves
    return [abs(b - a) for a, b in zip(levels, levels[1:], strict=False)]
