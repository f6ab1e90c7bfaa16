"""``perfdb.detector.order_stats`` (numpy's sort and partition of a long series' levels) against the
sorts it replaces, and ``policy.level_noise_pct``, which uses it, against its plain
computation: the same floats, bit for bit, or the plain sort where numpy's order could differ
(a NaN, an infinity, an int among floats)."""

from __future__ import annotations

import math
import random

import pytest

from perfdb.detector import order_stats, policy, stats


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
        found = order_stats.middle_size(values)
        assert repr(found) == repr(middle) and type(found) is type(middle)
        if set(map(type, values)) == {float}:
            assert repr(order_stats.middle_size(values, floats=True)) == repr(middle)
    moves = order_stats.sorted_moves(values)
    if moves is not None:
        assert len(values) >= order_stats.VECTOR_FROM
        assert all(map(math.isfinite, values)) and set(map(type, values)) == {float}
        assert [repr(m) for m in moves] == [repr(m) for m in sorted(stats.abs_moves(values))]
    else:  # short, not all floats, or a NaN or an infinity: the caller sorts
        assert (
            len(values) < order_stats.VECTOR_FROM
            or set(map(type, values)) != {float}
            or not all(map(math.isfinite, values))
        )


@pytest.mark.parametrize("seed", range(40))
def test_level_noise_is_the_sorted_computation(seed):
    """``policy.level_noise_pct`` with the numpy sorts: the plain computation, bit for bit."""
    rng = random.Random(seed)
    levels = [rng.gauss(100, 2) + (10 if i > 300 else 0) for i in range(rng.choice([5, 70, 600]))]
    moves = sorted(abs(b - a) for a, b in zip(levels, levels[1:], strict=False))
    centre = sorted(map(abs, levels))[len(levels) // 2]
    keep = max(1, math.ceil(0.8 * len(moves)), len(moves) - policy.NOISE_TRIM_MAX)
    kept = moves[:keep]
    factor = policy.truncated_square(len(kept) / len(moves))
    sigma = math.sqrt(math.fsum(m * m for m in kept) / len(kept) / factor / 2)
    assert policy.level_noise_pct(levels) == (sigma / centre * 100.0, len(moves))
