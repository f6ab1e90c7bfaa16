"""``perfdb.detector.order_stats`` (numpy's sort and partition of a long series' levels) against the
sorts it replaces, and ``stats.level_noise_pct``, which uses it, against its plain
computation: the same floats, bit for bit, or the plain sort where numpy's order could differ
(a NaN, an infinity, an int among floats).

``order_stats.Floats``: a series' single trials converted to numpy once, read by the noise,
the centre, the quantum and the step scan; each gives what it gives the plain list. A check
passes a long series' columns and trials to ``long_series.analyse_of``: the analysis is the one
``analyse`` makes from the points alone."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from perfdb.detector import long_series, order_stats, policy, resolution, scan_filter, stats
from perfdb.detector.order_stats import Floats
from perfdb.detector.points import Point, columns


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
    # numpy's sort for a long sequence of finite floats, Python's for the others (short, not
    # all floats, or a NaN or an infinity): the same moves in the same order either way
    moves = order_stats.sorted_moves(values)
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


def _series_values(rng: random.Random, n: int) -> list[float]:
    kind = rng.choice(["noise", "grid", "odd", "steps"])
    values = []
    for i in range(n):
        value = 100.0 * rng.gauss(1, 0.01) + (8.0 if kind == "steps" and i > n // 2 else 0.0)
        if kind == "grid":
            value = round(value, rng.choice([0, 2, 3]))
        if kind == "odd" and i % 13 == 0:
            value = rng.choice([0.0, -0.0, 1e300, -1e-300, math.inf, math.nan])
        values.append(value)
    return values


@pytest.mark.parametrize("seed", range(40))
def test_floats_give_what_the_list_gives(seed):
    rng = random.Random(seed)
    values = _series_values(rng, rng.choice([10, 63, 64, 300, 1200]))
    floats = Floats(np.array(values, dtype=">f8"))  # as a check reads them: big-endian
    assert all(type(v) is float for v in floats)
    assert [v.hex() for v in floats] == [v.hex() for v in values]  # NaN and -0.0 included
    assert not floats.array.flags.writeable
    for statistic in (order_stats.middle_size, order_stats.sorted_moves):
        assert repr(statistic(floats)) == repr(statistic(values))
    assert repr(stats.level_noise_pct(floats)) == repr(stats.level_noise_pct(values))
    assert resolution.resolution_of(floats) == resolution.resolution_of(values)
    assert scan_filter.kernels(floats).tobytes() == np.asarray(values, float).tobytes()


def _points(rng: random.Random, n: int) -> tuple[list[Point], list[float]]:
    values = _series_values(rng, n)
    patched = rng.random() < 0.3
    points = [
        Point(i + 1, f"4.{i // 100}.{i % 100}", ("O(1)",) if patched and i % 4 == 1 else (), (v,))
        for i, v in enumerate(values)
    ]
    return points, values


@pytest.mark.parametrize("seed", range(40))
def test_analyse_of_with_columns_and_trials_is_analyse(seed):
    rng = random.Random(100 + seed)
    points, values = _points(rng, rng.choice([8, 250, 1100]))
    if not all(map(math.isfinite, values)):  # a check passes finite trials only
        values = [v if math.isfinite(v) else 1.0 for v in values]
        points = [p._replace(values=(v,)) for p, v in zip(points, values, strict=True)]
    settings = policy.Settings(resolution=rng.choice([None, None, 0.01]))
    plain = long_series.analyse.__wrapped__(tuple(points), settings)
    fast = long_series.analyse_of(points, settings, columns(points), Floats(np.array(values)))
    assert (fast is None) == (plain is None)
    if plain is not None and fast is not None:
        assert repr((fast.noise, fast.scan)) == repr((plain.noise, plain.scan))
        assert list(fast.kernels) == list(plain.kernels)
        assert [v.hex() for v in fast.kernels.levels] == [v.hex() for v in plain.kernels.levels]
