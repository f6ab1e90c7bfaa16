"""``perfdb.detector.stats``: the tests and spreads on plain floats.

``stats.cv_pcts`` gives each run's coefficient of variation as one run at a time does
(``stats.coefficient_of_variation_pct``), bit for bit, in the runs' order.

The order statistics (numpy's sort and partition of a long series' levels) against the
sorts they replace, and ``stats.level_noise_pct``, which uses them, against its plain
computation: the same floats, bit for bit, or the plain sort where numpy's order could differ
(a NaN, an infinity, an int among floats). ``Floats``: a series' single trials converted to
numpy once, read by the noise, the centre, the quantum and the step scan; each gives what it
gives the plain list.
"""

import math
import random
import struct
import warnings

import numpy as np
import pytest
from scipy import stats as scipy_stats

from perfdb.detector import policy, stats, step_scan
from perfdb.detector.stats import Floats
from tests.perfdb.detector.seeded import series_values


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


# --- each run's spread, all runs at once ---


def _bits(value: float | None) -> bytes | None:
    return None if value is None else struct.pack(">d", value)


def _awkward_value(rng: random.Random, scale: float) -> float:
    if rng.random() > 0.03:
        return rng.gauss(1.0, 0.05) * scale
    # no sum past the largest float: statistics.fmean (math.fsum) raises for those, either way
    return rng.choice((0.0, -0.0, -scale, 1e300, 5e-324, math.nan, math.inf))


@pytest.mark.parametrize("seed", range(8))
def test_each_runs_spread_is_the_float_one_run_at_a_time_gives(seed):
    rng = random.Random(seed)
    groups: list[list[float] | tuple[float, ...]] = []
    for _ in range(400):
        size = rng.choice((0, 1, 1, 2, 3, 3, 4, 5, 8, 9, 17, 40))
        scale = 10 ** rng.uniform(-8, 12)
        values = [_awkward_value(rng, scale) for _ in range(size)]
        if rng.random() < 0.05:
            values = [0.0] * size  # a zero mean: no relative spread
        groups.append(tuple(values) if rng.random() < 0.5 else values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # overflow in the huge values, both ways
        together = stats.cv_pcts(groups)
        alone = [stats.coefficient_of_variation_pct(g) for g in groups]
    assert [_bits(v) for v in together] == [_bits(v) for v in alone]
    assert any(v is None for v in together) and any(v is not None for v in together)


def test_the_series_within_run_noise_reads_the_same_votes():
    """``stats.within_run_pct`` from the batched spreads: the median of the same votes."""
    rng = random.Random(3)
    groups = [[rng.gauss(100, 2) for _ in range(rng.choice((1, 2, 3, 5)))] for _ in range(300)]
    votes = sorted(
        cv * cv / stats.chi2_median_ratio(len(g) - 1)
        for g in groups
        if (cv := stats.coefficient_of_variation_pct(g)) is not None
    )
    mid = len(votes) // 2
    median = votes[mid] if len(votes) % 2 else (votes[mid - 1] + votes[mid]) / 2
    assert stats.within_run_pct(groups) == (math.sqrt(median), len(votes))
    assert stats.within_run_pct([[1.0], [2.0]]) == (None, 0)


# --- order statistics of a long series' levels with numpy, and ``Floats`` ---


def _values(rng: random.Random) -> list[float]:
    n = rng.choice([0, 1, 3, 63, 64, 65, 200, 1001])
    pool = [rng.gauss(100, 5), -rng.gauss(100, 5), 0.0, -0.0, 1e-300, -1e308, 7.0]
    values = [rng.choice(pool) if rng.random() < 0.3 else rng.gauss(0, 50) for _ in range(n)]
    odd = rng.random()
    if values and odd < 0.1:
        values[rng.randrange(n)] = math.nan
    elif values and odd < 0.2:
        values[rng.randrange(n)] = math.inf
    elif values and odd < 0.3:
        values[rng.randrange(n)] = 3  # an int among floats
    return values


@pytest.mark.parametrize("seed", range(200))
def test_order_stats_are_the_sorts(seed):
    rng = random.Random(seed)
    values = _values(rng)
    if values:
        middle = sorted(map(abs, values))[len(values) // 2]
        found = stats.middle_size(values)
        assert repr(found) == repr(middle) and type(found) is type(middle)
        if set(map(type, values)) == {float}:
            assert repr(stats.middle_size(values, floats=True)) == repr(middle)
    # numpy's sort for a long sequence of finite floats, Python's for the others (short, not
    # all floats, or a NaN or an infinity): the same moves in the same order either way
    moves = stats.sorted_moves(values)
    plain = sorted(abs(b - a) for a, b in zip(values, values[1:], strict=False))
    assert [repr(m) for m in moves] == [repr(m) for m in plain]
    assert [type(m) for m in moves] == [type(m) for m in plain]


@pytest.mark.parametrize("seed", range(40))
def test_level_noise_is_the_sorted_computation(seed):
    """``stats.level_noise_pct`` with the numpy sorts: the plain computation, bit for bit."""
    rng = random.Random(seed)
    levels = [rng.gauss(100, 2) + (10 if i > 300 else 0) for i in range(rng.choice([5, 70, 600]))]
    moves = sorted(abs(b - a) for a, b in zip(levels, levels[1:], strict=False))
    centre = sorted(map(abs, levels))[len(levels) // 2]
    keep = max(1, math.ceil(0.8 * len(moves)), len(moves) - stats.NOISE_TRIM_MAX)
    kept = moves[:keep]
    factor = stats.truncated_square(len(kept) / len(moves))
    sigma = math.sqrt(math.fsum(m * m for m in kept) / len(kept) / factor / 2)
    assert stats.level_noise_pct(levels) == (sigma / centre * 100.0, len(moves))


@pytest.mark.parametrize("seed", range(40))
def test_floats_give_what_the_list_gives(seed):
    rng = random.Random(seed)
    values = series_values(rng, rng.choice([10, 63, 64, 300, 1200]))
    floats = Floats(np.array(values, dtype=">f8"))  # as a check reads them: big-endian
    assert all(type(v) is float for v in floats)
    assert [v.hex() for v in floats] == [v.hex() for v in values]  # NaN and -0.0 included
    assert not floats.array.flags.writeable
    for statistic in (stats.middle_size, stats.sorted_moves):
        assert repr(statistic(floats)) == repr(statistic(values))
    assert repr(stats.level_noise_pct(floats)) == repr(stats.level_noise_pct(values))
    assert policy.resolution_of(floats) == policy.resolution_of(values)
    assert step_scan.float_array(floats).tobytes() == np.asarray(values, float).tobytes()


def test_abs_moves_are_the_python_subtraction():
    rng = random.Random(2)
    for n in (0, 1, 2, 63, 64, 1000):
        levels = [rng.gauss(100.0, 3.0) for _ in range(n)]
        assert stats.abs_moves(levels) == [
            abs(b - a) for a, b in zip(levels, levels[1:], strict=False)
        ]
        assert all(type(m) is float for m in stats.abs_moves(levels))
    ints = [10**20, 10**20 + 1] * 40  # exact in Python, not in floats: left to Python
    assert stats.abs_moves(ints) == [1] * 79
