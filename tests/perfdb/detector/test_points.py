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


def random_series(rng: random.Random, n: int) -> list[Point]:
    """A series of about ``n`` runs, each shape the detector meets (and a few it should not)."""
    points, run_id = [], 0
    kind = rng.choice(["plain", "repeats", "patched", "trials", "shuffled", "aliases", "odd"])
    for i in range(n):
        kernel = f"4.{i // 100}.{i % 100}"
        if kind == "aliases" and i % 7 == 0:
            kernel += "-stock"  # the same kernel as "4.x.y" for the detector
        builds = [()]
        if kind == "repeats" and i % 5 == 0:
            builds = [(), ()]
        if kind == "patched" and i % 3 == 0:
            builds = [(), ("O(1)",)]
        for patches in builds:
            run_id += 1
            trials = 1 + (run_id % 3 if kind == "trials" else 0)
            values = tuple(100.0 * rng.gauss(1, 0.01) for _ in range(trials))
            if kind == "odd" and i % 11 == 0:
                values = (rng.choice([0.0, -0.0, 5, math.nan, 1e300]),)
            points.append(Point(run_id, kernel, patches, values))
    if kind == "aliases":
        points.append(Point(run_id + 1, "4.0.0", (), (99.0,)))  # "4.0.0-stock" again
    if kind == "shuffled":
        rng.shuffle(points)
    return points


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
    assert found.shapes() == [(len(k.run_ids), len(k.values)) for k in plain]


def test_points_from_makes_points():
    made = list(points_from([1, 2], ["2.6.1", "2.6.2"], [(), ("x",)], [(1.0,), (2.0, 3.0)]))
    assert made == [Point(1, "2.6.1", (), (1.0,)), Point(2, "2.6.2", ("x",), (2.0, 3.0))]
    assert all(type(p) is Point for p in made)
    assert made[1].patches == ("x",) and made[1].values == (2.0, 3.0)
    with pytest.raises(ValueError):  # columns of different lengths are a bug, not a series
        list(points_from([1, 2], ["2.6.1"], [()], [(1.0,)]))
