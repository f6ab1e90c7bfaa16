"""A long series analysed (perfdb/detector/long_series.py): ``analyse`` against the plain
computation of its noise, centre and variances, over the series test_points.py draws."""

from __future__ import annotations

import math
import random

import pytest

from perfdb.detector import long_series, order_stats, policy
from perfdb.detector.noise import series_noise
from perfdb.detector.points import stock_by_kernel, stock_kernels
from tests.perfdb.detector.seeded import random_series


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
    assert order_stats.middle_size(stock.levels, floats=True) == centre
