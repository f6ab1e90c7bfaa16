"""``detector.resolution``: the numpy path gives the plain loop's answer on long series, bit for
bit, whatever the values (quantised, continuous, on the tolerance's edge, huge, NaN), and
``order_stats.abs_moves`` the same floats as the Python subtraction."""

from __future__ import annotations

import math
import random

import pytest

from perfdb.detector import order_stats, resolution


def loop(values: list[float], max_decimals: int = 6) -> float | None:
    """The exact per-value loop, as ``policy.resolution_of`` was written before numpy."""
    decimals = resolution.decimals_loop(values, 0, max_decimals)
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
        found = resolution.resolution_of(iter(values), max_decimals=max_decimals)
        assert found == expected or (found is None and expected is None)


def test_quantum_read_from_long_series():
    rng = random.Random(1)
    assert resolution.resolution_of([rng.randint(1, 99) / 100 for _ in range(500)]) == 0.01
    assert resolution.resolution_of([float(rng.randint(1, 9)) for _ in range(500)]) == 1.0
    assert resolution.resolution_of([rng.random() for _ in range(500)]) is None
    # one value with a third decimal at the very end: the quantum is 0.001
    assert resolution.resolution_of([0.25] * 499 + [0.125]) == pytest.approx(0.001)


def test_abs_moves_are_the_python_subtraction():
    rng = random.Random(2)
    for n in (0, 1, 2, 63, 64, 1000):
        levels = [rng.gauss(100.0, 3.0) for _ in range(n)]
        assert order_stats.abs_moves(levels) == [
            abs(b - a) for a, b in zip(levels, levels[1:], strict=False)
        ]
        assert all(type(m) is float for m in order_stats.abs_moves(levels))
    ints = [10**20, 10**20 + 1] * 40  # exact in Python, not in floats: left to Python
    assert order_stats.abs_moves(ints) == [1] * 79
