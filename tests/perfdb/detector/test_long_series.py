"""A long series analysed (perfdb/detector/long_series.py): ``analyse`` against the plain
computation of its noise, centre and variances, over the series test_points.py draws; and
``analyse_of`` given a long series' columns and trials (as a check reads them): the analysis
``analyse`` makes from the points alone."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from perfdb.detector import long_series, policy, stats
from perfdb.detector.noise import series_noise
from perfdb.detector.points import Point, columns, stock_by_kernel, stock_kernels
from perfdb.detector.stats import Floats
from tests.perfdb.detector.seeded import random_series, series_values


@pytest.mark.parametrize("seed", range(30))
def test_analyse_reads_what_the_plain_computation_reads(seed):
    """The analysis' noise, centre, quantum and variances from the plain grouping."""
    rng = random.Random(seed)
    points = tuple(random_series(rng, rng.choice([8, 70, 300])))
    settings = policy.Settings()
    got = long_series.analyse.__wrapped__(points, settings)
    kernels = stock_by_kernel(points)
    levels = [math.fsum(k.values) / len(k.values) for k in kernels]
    if len(kernels) < settings.short_kernels or any(level == 0 for level in levels):
        assert got is None
        return
    noise = series_noise([p.values for p in points], levels, settings)
    if noise is None:
        assert got is None
        return
    assert got is not None and got.noise == noise
    assert list(got.kernels) == kernels
    centre = sorted(map(abs, levels))[len(levels) // 2]
    resolution = policy.resolution_of([v for p in points for v in p.values])
    variances = []
    for k in kernels:
        within = (noise.within_pct or 0.0) ** 2 / len(k.values)
        sd = math.sqrt(noise.between_pct**2 / len(k.run_ids) + within) / 100 * centre
        floor = (resolution or 0.0) / 2 / math.sqrt(len(k.values))
        variances.append(max(sd, floor, 1e-9 * centre) ** 2)
    stock = stock_kernels(points)
    assert long_series.kernel_variances(stock, noise, centre, resolution) == variances
    assert stats.middle_size(stock.levels, floats=True) == centre


def _points(rng: random.Random, n: int) -> tuple[list[Point], list[float]]:
    values = series_values(rng, n)
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
