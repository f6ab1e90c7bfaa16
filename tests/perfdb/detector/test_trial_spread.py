"""``stats.cv_pcts`` gives each run's coefficient of variation as one run at a time
does (``stats.coefficient_of_variation_pct``), bit for bit, in the runs' order."""

from __future__ import annotations

import math
import random
import struct
import warnings

import pytest

from perfdb.detector import policy, stats


def _bits(value: float | None) -> bytes | None:
    return None if value is None else struct.pack(">d", value)


def _awkward_value(rng: random.Random, scale: float) -> float:
    if rng.random() > 0.03:
        return rng.gauss(1.0, 0.05) * scale
    # no sum past the largest float: stats.mean (math.fsum) raises for those, either way
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
    """``policy.within_run_pct`` from the batched spreads: the median of the same votes."""
    rng = random.Random(3)
    groups = [[rng.gauss(100, 2) for _ in range(rng.choice((1, 2, 3, 5)))] for _ in range(300)]
    votes = sorted(
        cv * cv / policy.chi2_median_ratio(len(g) - 1)
        for g in groups
        if (cv := stats.coefficient_of_variation_pct(g)) is not None
    )
    mid = len(votes) // 2
    median = votes[mid] if len(votes) % 2 else (votes[mid - 1] + votes[mid]) / 2
    assert policy.within_run_pct(groups) == (math.sqrt(median), len(votes))
    assert policy.within_run_pct([[1.0], [2.0]]) == (None, 0)
