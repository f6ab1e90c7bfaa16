"""Seeded series the detector's tests share: noisy trials, a stock series at given levels,
a series' kernel levels, changes by their candidate run, and series of every shape the
detector meets."""

import math
import random

from perfdb.detector import Point


def noisy(rng: random.Random, level: float, noise_pct: float, trials: int) -> tuple[float, ...]:
    return tuple(level * (1 + rng.gauss(0, noise_pct / 100)) for _ in range(trials))


def stock_series(levels, *, trials=3, noise_pct=1.0, seed=1, first_run=1):
    """One stock run per kernel 2.5.1, 2.5.2, ... at the given levels."""
    rng = random.Random(seed)
    return [
        Point(first_run + i, f"2.5.{i + 1}", (), noisy(rng, level, noise_pct, trials))
        for i, level in enumerate(levels)
    ]


def by_run(changes):
    return {c.candidate_run_id: c for c in changes}


def noisy_levels(sd_pct: float, n: int = 8, seed: int = 3) -> list[float]:
    rng = random.Random(seed)
    return [100.0 * (1 + rng.gauss(0, sd_pct / 100)) for _ in range(n)]


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


def series_values(rng: random.Random, n: int) -> list[float]:
    """Values of a long series of one trial a kernel: noise, a grid, odd values (zeros,
    huge, tiny, NaN, infinities) or a step."""
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
