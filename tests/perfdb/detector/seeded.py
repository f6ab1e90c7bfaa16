"""Seeded series the detector's tests share: noisy trials, a stock series at given levels,
a series' kernel levels, and changes by their candidate run."""

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
