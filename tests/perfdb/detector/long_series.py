"""A long series of 200 kernels as a check meets it: two steps, patched builds, repeated
runs and a NaN trial; read by the detector's and the check's tests (a helper, not a test
module)."""

from __future__ import annotations

import math
import random

from perfdb.detector import detection


def long_series(seed: int) -> list[detection.Point]:
    """200 kernels with two steps, patched builds, repeated runs and a NaN trial."""
    rng = random.Random(seed)
    points, run_id = [], 0
    for i in range(200):
        level = 100.0 * (0.9 if 80 <= i < 150 else 1.0) * (1.1 if i >= 150 else 1.0)
        builds: list[tuple[str, ...]] = [(), ()] if i % 17 == 0 else [(), ("O(1)",)]
        for patches in builds if i % 17 == 0 or i % 11 == 0 else [()]:
            run_id += 1
            values = tuple(level * rng.gauss(1, 0.01) for _ in range(1 + run_id % 3))
            points.append(detection.Point(run_id, f"4.{i // 100}.{i % 100}", patches, values))
    points[7] = detection.Point(points[7].run_id, points[7].kernel, (), (math.nan,))
    return points
