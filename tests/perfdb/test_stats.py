import math
import random
import warnings

import pytest
from scipy import stats as scipy_stats

from perfdb import stats


@pytest.mark.parametrize(
    ("baseline", "candidate"),
    [
        ([100.0, 101.0, 99.0], [90.0, 91.5, 89.0]),
        ([10.0, 10.2], [10.1, 10.4, 9.9, 10.0]),
        ([5.0, 5.0, 5.0], [5.1, 4.8, 5.3]),  # one side without variance is still Welch
    ],
)
def test_welch_p_value_is_scipys_welch(baseline, candidate):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy on a constant side
        expected = scipy_stats.ttest_ind(baseline, candidate, equal_var=False).pvalue
    assert stats.welch_p_value(baseline, candidate) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("baseline", "candidate", "expected"),
    [
        ([7.0, 7.0, 7.0], [7.0, 7.0], 1.0),  # identical trials, nothing changed
        ([7.0, 7.0, 7.0], [6.0, 6.0], 0.0),  # identical trials, every one moved
    ],
)
def test_welch_with_zero_variance_on_both_sides_is_decided_not_nan(baseline, candidate, expected):
    assert stats.welch_p_value(baseline, candidate) == expected


def test_welch_needs_two_values_a_side():
    with pytest.raises(ValueError, match="at least 2"):
        stats.welch_p_value([1.0], [1.0, 2.0])


@pytest.mark.parametrize(
    ("baseline", "candidate", "expected"),
    [
        ([100.0], [85.6], -14.4),
        ([2.0, 4.0], [4.5], 50.0),
        ([-10.0], [-5.0], 50.0),  # went up, relative to |baseline|
    ],
)
def test_relative_change_pct(baseline, candidate, expected):
    assert stats.relative_change_pct(baseline, candidate) == pytest.approx(expected)


def test_relative_change_of_zero_baseline_is_an_error():
    with pytest.raises(ValueError, match="baseline mean is 0"):
        stats.relative_change_pct([0.0, 0.0], [1.0])


def test_pooled_cv_weights_groups_by_degrees_of_freedom():
    small = [99.0, 101.0]  # cv = sqrt(2) %
    large = [100.0, 100.0, 100.0, 100.0, 100.0]  # cv = 0, 4 degrees of freedom
    cv_small = stats.coefficient_of_variation_pct(small)
    assert stats.pooled_cv_pct([small, large]) == pytest.approx(math.sqrt(cv_small**2 / 5))
    assert stats.pooled_cv_pct([small, [50.0]]) == pytest.approx(cv_small)  # singles skipped
    assert stats.pooled_cv_pct([[1.0], [2.0]]) is None


def test_successive_difference_noise_ignores_one_step():
    rng = random.Random(7)
    levels = [100 * (1 + rng.gauss(0, 0.02)) for _ in range(30)]
    stepped = levels[:15] + [v * 0.7 for v in levels[15:]]
    quiet = stats.successive_difference_cv_pct(levels)
    assert 1.0 < quiet < 3.0
    # a 30 % step barely moves the median of the moves
    assert stats.successive_difference_cv_pct(stepped) < 1.5 * quiet
    assert stats.successive_difference_cv_pct(levels[:3]) is None  # too few moves


@pytest.mark.parametrize("step_at", [4, 10, 15])
def test_e_divisive_finds_a_step_where_it_is(step_at):
    rng = random.Random(step_at)
    values = [100 + rng.gauss(0, 1) for _ in range(20)]
    values = values[:step_at] + [v - 10 for v in values[step_at:]]
    found = stats.e_divisive(values, significance=0.01, seed=3)
    assert [cp.index for cp in found] == [step_at]
    assert found[0].p_value < 0.01


def test_e_divisive_finds_nothing_in_noise_and_is_reproducible():
    rng = random.Random(11)
    values = [100 + rng.gauss(0, 1) for _ in range(25)]
    assert stats.e_divisive(values, significance=0.01, seed=3) == []
    stepped = values[:12] + [v + 8 for v in values[12:]]
    first = stats.e_divisive(stepped, seed=3)
    assert first == stats.e_divisive(stepped, seed=3)
    assert first  # a real step is found with the same seed every time


def test_e_divisive_finds_two_steps():
    rng = random.Random(5)
    values = [100 + rng.gauss(0, 1) for _ in range(30)]
    values = values[:10] + [v - 10 for v in values[10:20]] + [v + 5 for v in values[20:]]
    assert sorted(cp.index for cp in stats.e_divisive(values, seed=1)) == [10, 20]


@pytest.mark.parametrize("values", [[], [1.0], [1.0, 2.0]])
def test_e_divisive_needs_three_values(values):
    assert stats.e_divisive(values) == []
