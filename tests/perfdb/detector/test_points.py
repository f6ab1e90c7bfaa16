"""The detector's points (perfdb/detector/points.py): its lean paths for long series give
what the plain ones give.

``points.stock_kernels`` groups a series' stock runs by kernel from its columns, without a
Python call per point when every kernel has one run in kernel order; it is held here against
``stock_by_kernel`` (the plain grouping) with ``fsum(trials) / n`` as each level, over series
in and out of kernel order, with repeated kernels, aliases of one kernel, patched builds,
several trials, ints and NaN.
"""

from __future__ import annotations

import math
import random

import pytest

from perfdb.detector.points import Point, points_from, stock_by_kernel, stock_kernels
from tests.perfdb.detector.seeded import random_series


@pytest.mark.parametrize("seed", range(60))
def test_stock_kernels_are_stock_by_kernel(seed):
    rng = random.Random(seed)
    points = random_series(rng, rng.choice([0, 1, 5, 70, 300]))
    found = stock_kernels(points)
    plain = stock_by_kernel(points)
    assert list(found) == plain
    assert len(found) == len(plain)
    assert [found[i] for i in range(len(found))] == plain
    assert found[1:3] == plain[1:3]
    assert [found.run_ids(i) for i in range(len(found))] == [k.run_ids for k in plain]
    expected = [math.fsum(k.values) / len(k.values) for k in plain]
    # the same floats (NaN included: repr), but -0.0, which both read as a zero level
    assert [repr(v + 0.0) for v in found.levels] == [repr(v + 0.0) for v in expected]
    assert found.run_counts() == [len(k.run_ids) for k in plain]


def test_points_from_makes_points():
    made = list(points_from([1, 2], ["2.6.1", "2.6.2"], [(), ("x",)], [(1.0,), (2.0, 3.0)]))
    assert made == [Point(1, "2.6.1", (), (1.0,)), Point(2, "2.6.2", ("x",), (2.0, 3.0))]
    assert all(type(p) is Point for p in made)
    assert made[1].patches == ("x",) and made[1].values == (2.0, 3.0)
    with pytest.raises(ValueError):  # columns of different lengths are a bug, not a series
        list(points_from([1, 2], ["2.6.1"], [()], [(1.0,)]))
