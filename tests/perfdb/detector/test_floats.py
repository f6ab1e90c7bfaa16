"""``order_stats.Floats``: a series' single trials converted to numpy once, read by the noise,
the centre, the quantum and the step scan; each gives what it gives the plain list.
A check passes a long series' columns and trials to ``series.analyse_of``: the analysis is
the one ``analyse`` makes from the points alone."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from perfdb.detector import order_stats, policy, resolution, scan_filter, series
from perfdb.detector.order_stats import Floats
from perfdb.detector.series import Point


def _values(rng: random.Random, n: int) -> list[float]:
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
    values = _values(rng, rng.choice([10, 63, 64, 300, 1200]))
    floats = Floats(np.array(values, dtype=">f8"))  # as a check reads them: big-endian
    assert all(type(v) is float for v in floats)
    assert [v.hex() for v in floats] == [v.hex() for v in values]  # NaN and -0.0 included
    assert not floats.array.flags.writeable
    for statistic in (order_stats.middle_size, order_stats.sorted_moves):
        assert repr(statistic(floats)) == repr(statistic(values))
    assert repr(policy.level_noise_pct(floats)) == repr(policy.level_noise_pct(values))
    assert resolution.resolution_of(floats) == resolution.resolution_of(values)
    assert scan_filter.kernels(floats).tobytes() == np.asarray(values, float).tobytes()


def _points(rng: random.Random, n: int) -> tuple[list[Point], list[float]]:
    values = _values(rng, n)
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
    plain = series.analyse.__wrapped__(tuple(points), settings)
    fast = series.analyse_of(points, settings, series.columns(points), Floats(np.array(values)))
    assert (fast is None) == (plain is None)
    if plain is not None and fast is not None:
        assert repr((fast.noise, fast.scan)) == repr((plain.noise, plain.scan))
        assert list(fast.kernels) == list(plain.kernels)
        assert [v.hex() for v in fast.kernels.levels] == [v.hex() for v in plain.kernels.levels]
