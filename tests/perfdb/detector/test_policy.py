"""The statistics policy shared by the detector and the compare page (perfdb/detector/
policy.py): thresholds, the test (``judge``, ``judge_stated``) and the workload/metric prior
pooled from other setups; and the level noise estimate itself (trimmed moves). How a series'
noise is read, with the prior or without: test_noise.py.

``policy.resolution_of``: the numpy path gives the plain loop's answer on long series, bit
for bit, whatever the values (quantised, continuous, on the tolerance's edge, huge, NaN).
"""

import math
import random

import pytest

from perfdb.detector import policy, stats
from perfdb.detector.detection import Point, change_points, detect
from perfdb.detector.policy import (
    Noise,
    Settings,
    judge,
    pooled_level_noise_pct,
    pooled_prior,
)
from perfdb.detector.stats import level_noise_pct
from tests.perfdb.detector.seeded import noisy_levels


@pytest.mark.parametrize("value", [0, 0.0, -1.0, math.nan, math.inf, -math.inf, "5"])
def test_invalid_thresholds_are_rejected(value):
    with pytest.raises(ValueError, match="finite percentage > 0"):
        policy.validate_threshold_pct(value)
    assert policy.usable_threshold_pct(value) is None  # a stored bad row is ignored, not fatal


@pytest.mark.parametrize("value", [None, 0.5, 5, 30.0])
def test_valid_thresholds_pass(value):
    assert policy.validate_threshold_pct(value) == value


def test_a_zero_or_nan_stored_threshold_does_not_abort_detection():
    points = [
        Point(1, "2.5.66", (), (100.0, 100.5, 99.5)),
        Point(2, "2.5.66", ("x",), (80.0, 80.2)),
    ]
    for bad in (0.0, -3.0, math.nan):
        changes = detect(points, better="higher", settings=Settings(threshold_pct=bad))
        assert [c.candidate_run_id for c in changes] == [2]  # the derived threshold applies


def test_a_zero_change_is_never_a_regression():
    verdict = judge([5.0, 5.0, 5.0], [5.0, 5.0, 5.0], "higher")
    assert verdict.direction == "none" and not verdict.significant
    assert judge([100.0], [100.0], "lower", noise=0.1).direction == "none"


def test_one_run_with_two_equal_trials_does_not_set_the_noise():
    rng = random.Random(3)
    groups = [[100 * (1 + rng.gauss(0, 0.02)) for _ in range(2)] for _ in range(15)]
    honest = stats.within_run_pct(groups)[0]
    groups.append([100.0, 100.0001])
    assert stats.within_run_pct(groups)[0] == pytest.approx(honest, rel=0.3)
    assert 1.0 < honest < 3.5


def test_single_trial_series_with_one_lucky_pair_stays_quiet():
    rng = random.Random(4)
    points = [
        Point(i + 1, f"2.5.{i + 1}", (), (100 * (1 + rng.gauss(0, 0.02)),)) for i in range(30)
    ]
    points[10] = Point(11, "2.5.11", (), (points[10].values[0], points[10].values[0] * 1.001))
    assert [c for c in detect(points, better="higher") if c.status == "confirmed"] == []


@pytest.mark.parametrize(("base", "new"), [((0.03,), (0.04,)), ((0.03, 0.03, 0.03), (0.04, 0.04))])
def test_one_quantum_is_never_significant(base, new):
    verdict = judge(base, new, "lower", resolution=0.01)
    assert not verdict.significant and "resolution" in verdict.reason
    assert policy.resolution_of([0.03, 0.04, 0.05]) == pytest.approx(0.01)
    assert policy.resolution_of([1.23456789]) is None


def test_quantised_time_series_never_alerts():
    rng = random.Random(5)
    values = [rng.choice([0.03, 0.03, 0.04]) for _ in range(30)]
    points = [Point(i + 1, f"2.5.{i + 1}", (), (v,)) for i, v in enumerate(values)]
    assert detect(points, better="lower") == [] or all(
        c.status == "unconfirmed" for c in detect(points, better="lower")
    )
    assert change_points(points, better="lower") == []


def test_run_to_run_noise_widens_the_pairwise_threshold():
    quiet = judge([100.0, 100.1, 99.9], [97.0, 97.1, 96.9], "higher", noise=Noise(0.1, 0.0, 10, 3))
    noisy = judge([100.0, 100.1, 99.9], [97.0, 97.1, 96.9], "higher", noise=Noise(0.1, 2.0, 10, 3))
    assert quiet.significant and not noisy.significant
    assert noisy.threshold_pct > quiet.threshold_pct


def test_compare_page_and_detector_agree_on_a_clear_change():
    from dashboards.pure.compare import MetricValues, compare_line

    base, new = (100.0, 101.0, 99.0), (80.0, 81.0, 79.0)
    line = compare_line(MetricValues("tops", "TOPS", "higher", base, new))
    assert line.significant is judge(base, new, "higher").significant is True


def test_a_spike_is_unconfirmed_then_cleared_and_a_step_confirmed():
    rng = random.Random(6)
    levels = [100.0] * 15
    points = [
        Point(i + 1, f"2.5.{i + 1}", (), tuple(lv * (1 + rng.gauss(0, 0.005)) for _ in range(3)))
        for i, lv in enumerate(levels)
    ]
    spike = Point(16, "2.5.16", (), (80.0, 80.2, 79.9))
    pending = detect([*points, spike], better="higher", candidates={16})
    assert [(c.candidate_run_id, c.status) for c in pending] == [(16, "unconfirmed")]
    back = Point(17, "2.5.17", (), (100.1, 99.9, 100.0))
    assert detect([*points, spike, back], better="higher", candidates={17}) == []
    again = Point(17, "2.5.17", (), (80.1, 79.9, 80.0))
    confirmed = detect([*points, spike, again], better="higher", candidates={17})
    assert [(c.candidate_run_id, c.status) for c in confirmed] == [(16, "confirmed")]
    assert confirmed[0].direction == "regression" and confirmed[0].method == "changepoint"


# --- the test (judge) ---


@pytest.mark.parametrize(
    ("baseline", "candidate", "p_value", "significant"),
    [
        ((50.0, 50.0, 50.0), (50.0, 50.0, 50.0), 1.0, False),  # identical trials, no change
        ((50.0, 50.0, 50.0), (40.0, 40.0), 0.0, True),  # every trial moved 20 %
        ((50.0, 50.0), (49.5, 49.5), 0.0, False),  # exact but only 1 %: below min_change_pct
    ],
)
def test_zero_variance_on_both_sides(baseline, candidate, p_value, significant):
    verdict = judge(baseline, candidate, "higher")
    assert (verdict.p_value, verdict.method, verdict.significant) == (
        p_value,
        "welch",
        significant,
    )


def test_significant_but_too_small_change_is_not_flagged():
    baseline = [1000.0, 1000.1, 999.9, 1000.0]
    candidate = [990.0, 990.1, 989.9, 990.0]  # -1 %, p is tiny
    verdict = judge(baseline, candidate, "higher")
    assert verdict.p_value < 1e-6 and verdict.change_pct == pytest.approx(-1.0)
    assert not verdict.significant
    assert judge(baseline, candidate, "higher", settings=Settings(min_change_pct=0.5)).significant


def test_the_test_is_one_sided_at_alert_alpha():
    """Three trials a side at 1 % noise: p one-sided, the threshold t(alpha, dof) x se."""
    base, new = (100.0, 101.0, 99.0), (95.0, 96.0, 94.0)
    verdict = judge(base, new, "higher")
    t = (100.0 - 95.0) / math.sqrt(1.0 / 3 + 1.0 / 3)
    from scipy import stats as scipy_stats

    assert verdict.p_value == pytest.approx(scipy_stats.t.sf(t, 4))
    assert verdict.threshold_pct == pytest.approx(
        scipy_stats.t.isf(Settings().alert_alpha, 4) * math.sqrt(2 / 3), rel=1e-6
    )
    assert verdict.significant and verdict.direction == "regression"
    strict = judge(base, new, "higher", alpha=1e-4)
    assert not strict.significant and strict.p_value == verdict.p_value


def test_a_fixed_threshold_replaces_the_test():
    verdict = judge([100.0], [96.0], "higher", settings=Settings(threshold_pct=3.0))
    assert (verdict.method, verdict.significant, verdict.threshold_pct) == ("threshold", True, 3.0)


# --- a report's stated summaries (judge_stated) ---------------------------------------------


def test_a_stated_summary_is_tested_by_welch_from_its_statistics():
    from scipy import stats as scipy_stats

    base = policy.Stated(mean=1000.0, sd=30.0, runs=6)
    cand = policy.Stated(mean=950.0, sd=40.0, runs=6)
    verdict = policy.judge_stated(base, cand, "higher")
    two_sided = scipy_stats.ttest_ind_from_stats(1000.0, 30.0, 6, 950.0, 40.0, 6, equal_var=False)
    assert verdict.method == "summary"
    assert verdict.p_value == pytest.approx(two_sided.pvalue / 2)
    assert verdict.change_pct == pytest.approx(-5.0)
    assert verdict.direction == "regression"
    assert verdict.significant is (verdict.p_value < Settings().alert_alpha)
    assert "stated spread" in verdict.reason


def test_a_large_stated_drop_is_significant_and_a_noisy_one_is_not():
    tight = policy.judge_stated(
        policy.Stated(1000.0, 10.0, 5), policy.Stated(550.0, 10.0, 5), "higher"
    )
    noisy = policy.judge_stated(
        policy.Stated(1000.0, 400.0, 3), policy.Stated(800.0, 400.0, 3), "higher"
    )
    assert tight.significant and tight.direction == "regression"
    assert not noisy.significant and noisy.method == "summary"


def test_a_spread_over_an_unstated_number_of_runs_is_not_tested():
    verdict = policy.judge_stated(
        policy.Stated(1000.0, 20.0, None), policy.Stated(500.0, 15.0, None), "higher"
    )
    assert verdict.method == "untested"
    assert not verdict.significant
    assert verdict.p_value is None
    assert "how many runs" in verdict.reason


def test_a_staff_threshold_replaces_the_summary_test():
    settings = Settings(threshold_pct=10.0)
    verdict = policy.judge_stated(
        policy.Stated(1000.0, 20.0, None),
        policy.Stated(850.0, 15.0, None),
        "higher",
        None,
        settings,
    )
    assert verdict.method == "threshold" and verdict.significant


def test_the_pooled_prior_is_the_median_setup_and_a_bimodal_setup_is_one_vote():
    quiet = [noisy_levels(1.0, n=30, seed=s) for s in range(4)]
    flaky = [100.0 if i % 2 else 130.0 for i in range(30)]  # bimodal: +30 % every other run
    typical, moves = pooled_level_noise_pct([*quiet, flaky])
    alone = [level_noise_pct(series)[0] or 0.0 for series in quiet]
    assert typical is not None and min(alone) <= typical <= max(alone)
    assert moves == 5 * 29
    # short series carry no vote; none left: no prior
    assert pooled_level_noise_pct([noisy_levels(1.0, n=4)]) == (None, 0)


def test_the_trimmed_noise_estimate_of_a_short_series_is_not_inflated_by_the_trim():
    # the largest moves are left out and the rest rescaled by a truncated normal's second
    # moment for the share actually kept (1 of 9 moves in a short series, 8 of 39 in a long
    # one). Rescaling every series as if a fifth were left out overstated a 10-kernel
    # series' variance by ~37 %; what is left is the order statistics' small excess.
    for n in (10, 40):
        variances = [level_noise_pct(noisy_levels(2.0, n=n, seed=s))[0] ** 2 for s in range(400)]
        mean = sum(variances) / len(variances)
        assert 4.0 <= mean <= 4.0 * 1.2


def test_a_long_bimodal_series_keeps_its_mode_switches_as_noise():
    # runs in a second mode (+4 %, one in five): the switches are the series' noise. At most
    # three moves (a step and a spike) are left out, not a fifth of them: the estimate stays
    # near the mixture's sd and no switch reads as a step
    rng = random.Random(0)
    bimodal = [
        100.0 * (1 + rng.gauss(0, 0.01) + (0.04 if rng.random() < 0.2 else 0.0)) for _ in range(80)
    ]
    capped = level_noise_pct(bimodal)[0]
    a_fifth_left_out = level_noise_pct(bimodal, max_trimmed=80)[0]
    assert capped is not None and a_fifth_left_out is not None
    assert capped > a_fifth_left_out
    assert 1.5 < capped < 2.5  # the mixture's sd: sqrt(1 + 0.16 x 16) = 1.9 %


def test_the_pooled_priors_weight_follows_how_much_the_setups_agree():
    # setups whose noises agree make the prior worth more kernel moves than setups whose
    # noises scatter (0.5-4 %); the median is the same as pooled_level_noise_pct's
    alike = [noisy_levels(1.0, n=30, seed=s) for s in range(5)]
    scattered = [noisy_levels(sd, n=30, seed=s) for s, sd in enumerate((0.5, 1.0, 1.5, 2.5, 4.0))]
    for assume_alike in (False, True):
        tight = pooled_prior(alike, Settings(), alike=assume_alike)
        loose = pooled_prior(scattered, Settings(), alike=assume_alike)
        assert tight[0] == pooled_level_noise_pct(alike)[0]
        assert tight[1] > loose[1] > 0
    # tau^2 = 0 assumed: only the median's error counts, never less weight than without
    assert (
        pooled_prior(scattered, Settings(), alike=True)[1] > pooled_prior(scattered, Settings())[1]
    )
    # fewer than three votes show no spread: the fixed prior_weight
    two = pooled_prior(alike[:2], Settings(prior_weight=9.0))
    assert two == (pooled_level_noise_pct(alike[:2])[0], 9.0)
    assert pooled_prior([noisy_levels(1.0, n=4)], Settings()) == (None, 12.0)


# --- the metric's quantum: numpy's path is the loop's answer ---


def loop(values: list[float], max_decimals: int = 6) -> float | None:
    """The exact per-value loop, as ``policy.resolution_of`` was written before numpy."""
    decimals = policy.decimals_loop(values, 0, max_decimals)
    return None if decimals is None else 10.0**-decimals


def series(seed: int) -> list[float]:
    rng = random.Random(seed)
    n = rng.choice([64, 65, 200, 1000])
    scale = rng.choice([1e-7, 1e-3, 1.0, 100.0, 1e6, 1e12, 1e300])
    decimals = rng.choice([0, 1, 2, 3, 6, 7, 9])
    values = [round(rng.gauss(1.0, 0.1) * scale, decimals) for _ in range(n)]
    for _ in range(rng.choice([0, 1, 3])):  # a few odd values anywhere in the series
        odd = rng.choice(
            [
                rng.random(),  # continuous
                round(rng.random(), 8),  # needs more decimals than the rest
                1.0 + rng.choice([0.6e-9, 0.9e-9, 1.0e-9, 1.1e-9]),  # the tolerance's edge
                2.5e-7 + 1e-16,  # near a half-way point at 6 decimals
                1.7e308,  # 10**d times it overflows
                math.nan,
                -0.0,
            ]
        )
        values.insert(rng.randrange(n), odd)
    return values


@pytest.mark.parametrize("seed", range(400))
def test_numpy_path_is_the_loop(seed):
    values = series(seed)
    for max_decimals in (3, 6):
        expected = loop(values, max_decimals)
        found = policy.resolution_of(iter(values), max_decimals=max_decimals)
        assert found == expected or (found is None and expected is None)


def test_quantum_read_from_long_series():
    rng = random.Random(1)
    assert policy.resolution_of([rng.randint(1, 99) / 100 for _ in range(500)]) == 0.01
    assert policy.resolution_of([float(rng.randint(1, 9)) for _ in range(500)]) == 1.0
    assert policy.resolution_of([rng.random() for _ in range(500)]) is None
    # one value with a third decimal at the very end: the quantum is 0.001
    assert policy.resolution_of([0.25] * 499 + [0.125]) == pytest.approx(0.001)
