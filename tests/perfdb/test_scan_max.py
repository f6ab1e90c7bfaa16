"""The residual test's critical value for the strongest of the window's starts
(``perfdb/scan_max.py``, ``Settings.step_noise = "glr_max"`` / ``"glr_matched"``)."""

from __future__ import annotations

import math
import random

import numpy as np
from scipy import stats as scipy_stats

from perfdb import scan_max, series, start_noise
from perfdb.detection import Point, Settings, change_points, ordered


def test_one_start_keeps_students_t_and_more_starts_need_more():
    for dof in (3.0, 10.0, 18.4, 40.0, 1000.0):
        assert scan_max.factor(1, dof) == 1.0
        row = [scan_max.factor(m, dof) for m in range(2, 11)]
        assert all(f > 1.0 for f in row)
        assert row[-1] >= row[0]  # ten starts: a larger selection than two
    # the adaptation's share of the residuals shrinks as they grow: the factor falls to 1
    falling = [scan_max.factor(10, dof) for dof in (10, 14, 20, 32, 64, 150, 400, 4000)]
    assert falling == sorted(falling, reverse=True) and falling[-1] < 1.001


def test_the_factor_interpolates_between_tabulated_dof():
    at = scan_max.DOF.index(20)
    low, high = scan_max.FACTORS[10][at], scan_max.FACTORS[10][at + 1]  # dof 20 and 24
    assert math.isclose(scan_max.factor(10, 22.0), (low + high) / 2)
    assert scan_max.factor(25, 22.0) == scan_max.factor(12, 22.0)  # beyond the table's rows


def _adaptive_tail(c: float, nu: float, samples: int = 400_000) -> float:
    """Brute force: ten starts of a clean 18-kernel segment (8 before the first), each
    t = its contrast over the residuals its split leaves pooled with a chi2 prior."""
    rng = np.random.default_rng(3)
    n, extra = 18, nu - 16  # the segment's residual dof (n - 2) plus a prior's
    x = rng.standard_normal((samples, n))
    prior = rng.chisquare(extra, samples)
    best = np.zeros(samples)
    for j in range(8, n):
        before, after = x[:, :j], x[:, j:]
        diff = after.mean(axis=1) - before.mean(axis=1)
        rss = ((before - before.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
        rss += ((after - after.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
        t = diff / math.sqrt(1 / j + 1 / (n - j)) / np.sqrt((rss + prior) / nu)
        best = np.maximum(best, np.abs(t))
    return float((best > c).mean())


def test_the_factor_takes_back_what_the_adaptive_noise_adds():
    # at a level brute force can see (one-tailed 1e-2): the strongest of ten starts passes
    # Student's t more often with its own residual noise than a noise that does not adapt
    # would; the table is made for 1.25e-4, where its factor for 24.4 dof is ~1.020. The
    # brute force here: the adaptive maximum's tail at t x the factor is below its tail at t
    nu = 24.4
    t_crit = float(scipy_stats.t.isf(1.25e-4, nu))
    plain, raised = (
        _adaptive_tail(t_crit * 0.8, nu),
        _adaptive_tail(t_crit * 0.8 * scan_max.factor(10, nu), nu),
    )
    assert raised < plain * 0.95


def test_matched_factor_by_the_kernels_behind_the_residuals():
    assert scan_max.matched(8.4, 10, 18.4) == scan_max.MATCHED[scan_max.MATCHED_KERNELS.index(12)]
    assert scan_max.matched(0.0, 10, 10.0) == scan_max.matched(8.4, 10, 18.4)  # 12 kernels
    assert scan_max.matched(0.0, 3, 1.0) == scan_max.MATCHED[0]  # below the table
    assert scan_max.matched(0.0, 10, 500.0) == scan_max.MATCHED[-1]
    assert all(1.0 < f < 1.2 for f in scan_max.MATCHED)


def _points(levels: list[float]) -> list[Point]:
    return [Point(i + 1, f"2.6.{i}", (), (v,)) for i, v in enumerate(levels)]


def test_the_calibrated_forms_find_clear_steps_and_pass_fewer_marginal_ones():
    # through the detector's path: a clear step (6 sigma) is found at its kernel by
    # glr_whole, glr_max and glr_matched alike; among marginal ones the raised
    # critical values pass fewer tests (glr_matched, matched to the series-wide test's false
    # passes, the fewest), so fewer steps are confirmed in all (40 series of 2.3 sigma:
    # 26, 23, 20)
    rng, small_rng = random.Random(12), random.Random(11)
    forms = ("glr_whole", "glr_max", "glr_matched")
    marginal = dict.fromkeys(forms, 0)
    for _ in range(40):
        clear = [100.0 + rng.gauss(0, 1) + (6.0 if i >= 9 else 0.0) for i in range(16)]
        small = [100.0 + small_rng.gauss(0, 1) + (2.3 if i >= 9 else 0.0) for i in range(16)]
        for form in forms:
            settings = Settings(step_noise=form, prior_noise_pct=1.0)
            found = change_points(_points(clear), better="higher", settings=settings)
            assert [c.candidate_run_id for c in found] == [10]
            marginal[form] += len(change_points(_points(small), better="higher", settings=settings))
    assert marginal["glr_matched"] < marginal["glr_max"] < marginal["glr_whole"]


def test_glr_matched_tests_with_the_prior_only_when_pooled():
    settings = Settings(step_noise="glr_matched", prior_noise_pct=1.0)
    levels = [100.0 + random.Random(4).gauss(0, 1) for _ in range(14)]
    analysed = series.analyse(tuple(ordered(_points(levels))), settings)
    assert analysed is not None
    residual = start_noise.with_starts(
        series.stats.ScanRule(
            critical=4.0, homogeneity=(math.inf,), min_fraction=0.0, min_absolute=0.0
        ),
        levels,
        analysed.noise,
        100.0,
        None,
        0.01 / 40,
        settings,
    ).residual
    assert residual is not None and residual.pool is True and residual.over_starts is not None
    # pooled: the prior's 8.4 dof are not kernels; 12 kernels behind 10 own dof
    assert residual.over_starts(10, 18.4) == scan_max.matched(0.0, 10, 10.0)
