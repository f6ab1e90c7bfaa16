"""Compute ``perfdb/scan_max.py``'s second table (``MATCHED``): the residual test's critical
value for the strongest of the window's starts, set so that under "no step" it passes as
often as the series-wide test does.

    python bench/glr_null_table.py > /tmp/matched.txt   # ~40 s of CPU; paste into scan_max.py

Simulated, a fixed seed: ``SAMPLES`` clean series of n kernels (levels 100 + N(0, 1), one
shape) and a prior drawn as what it is said to be worth (chi2 with ``prior_weight`` x
``dof_per_difference`` dof), checked at their newest kernel as the scan checks it (every
start of the last ``confirm_window`` kernels with >= 2 kernels before it, against the
``baseline_window`` kernels before it). The series-wide test (the default) reads the noise
from the moves (``policy.level_noise_pct``'s trimmed estimator, pooled with the prior when
``policy.series_noise``'s consistency test says so, 0.7 dof per move) and passes when its
largest |z| reaches Student's t at ``series_alpha / max(n, budget_kernels)``. The residual
test (``step_noise="glr_whole"``, pooled by the same rule) reads each start's noise from the
residuals of its split. For each n, the factor is the quantile of the
residual test's largest |t| over its Student critical value at the share of series the
series-wide test passes: with it, the two pass equally often under no step (at the newest
kernel, before confirmation, which both share), whatever the series-wide estimator's bias
and the residual test's adaptation to the start. The minimum change, the resolution and the
kernels-after-agree test are left out (the same for both).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
from scipy import stats as scipy_stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from perfdb.policy import NOISE_TRIM_MAX, Settings, _truncated_square  # noqa: E402

SETTINGS = Settings()
KERNELS = (*range(6, 41), 44, 48, 56, 64, 80)
SAMPLES = 400_000
CHUNK = 50_000


def _moves_noise(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """``policy.level_noise_pct`` (in level units) and ``_step_free_noise_pct`` per row."""
    moves = np.sort(np.abs(np.diff(x, axis=1)), axis=1)
    count = moves.shape[1]
    keep = max(1, math.ceil((1 - SETTINGS.noise_trim) * count), count - NOISE_TRIM_MAX)
    kept = moves[:, :keep] if count >= 3 else moves
    factor = _truncated_square(kept.shape[1] / count)
    level = np.sqrt((kept**2).mean(axis=1) / factor / 2)
    step_free = np.sqrt((moves[:, :-1] ** 2).mean(axis=1) / 2)
    return level, step_free, count * SETTINGS.dof_per_difference


def _contrasts(x: np.ndarray) -> tuple[np.ndarray, list[tuple[int, int, int]]]:
    """(diff_j / sqrt(1/b + 1/a)) per start, and each start's (lo, j, after count)."""
    n = x.shape[1]
    t = n - 1
    cums = np.concatenate([np.zeros((len(x), 1)), np.cumsum(x, axis=1)], axis=1)
    starts, rows = [], []
    for j in range(max(1, t - SETTINGS.confirm_window + 1), t + 1):
        lo = max(0, j - SETTINGS.baseline_window)
        b, a = j - lo, t - j + 1
        if b < 2:
            continue
        diff = (cums[:, n] - cums[:, j]) / a - (cums[:, j] - cums[:, lo]) / b
        rows.append(diff / math.sqrt(1 / b + 1 / a))
        starts.append((lo, j, a))
    return np.array(rows), starts


def _residual_sd(x: np.ndarray, lo: int, j: int) -> tuple[np.ndarray, int]:
    """Residual sum of squares of 0..lo-1, lo..j-1 and j..t, each about its mean, and dof."""
    rss = np.zeros(len(x))
    dof = 0
    for a, b in ((0, lo), (lo, j), (j, x.shape[1])):
        if b - a >= 2:
            part = x[:, a:b]
            rss += ((part - part.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
            dof += b - a - 1
    return rss, dof


def _chunk(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per series: pooled with the prior, the default passes, the residual test's ratio."""
    prior_dof = SETTINGS.prior_weight * SETTINGS.dof_per_difference
    x = rng.standard_normal((CHUNK, n))
    prior_sq = rng.chisquare(prior_dof, CHUNK) / prior_dof
    level, step_free, dof = _moves_noise(x)
    tolerance = max(
        SETTINGS.prior_tolerance,
        math.sqrt(scipy_stats.chi2.isf(SETTINGS.prior_consistency, dof) / dof),
    )
    pooled = np.minimum(level, step_free) <= np.sqrt(prior_sq) * tolerance
    moves, weight = n - 1, SETTINGS.prior_weight
    shrunk = np.sqrt((moves * level**2 + weight * prior_sq) / (moves + weight))
    noise = np.where(pooled, shrunk, level)
    tail = SETTINGS.series_alpha / max(n, SETTINGS.budget_kernels) / 2
    critical = np.where(
        pooled, scipy_stats.t.isf(tail, dof + prior_dof), scipy_stats.t.isf(tail, dof)
    )
    z, starts = _contrasts(x)
    default = (np.abs(z).max(axis=0) / noise) >= critical
    ratio = np.zeros(CHUNK)
    for row, (lo, j, _) in zip(z, starts, strict=True):
        rss, own = _residual_sd(x, lo, j)
        scale = np.where(pooled, (rss + prior_dof * prior_sq) / (own + prior_dof), rss / own)
        glr_critical = np.where(
            pooled, scipy_stats.t.isf(tail, own + prior_dof), scipy_stats.t.isf(tail, own)
        )
        ratio = np.maximum(ratio, np.abs(row) / np.sqrt(scale) / glr_critical)
    return pooled, default, ratio


def matched(n: int, seed: int = 16) -> tuple[float, float, float]:
    """(factor, the series-wide test's pass rate, the share pooled with the prior) for n
    kernels: one factor whether pooled or not (both tests pool by the same rule, and the
    series-wide test almost never passes a clean series noisier than its prior, which
    leaves nothing to match within that group alone)."""
    rng = np.random.default_rng(seed * 1000 + n)
    parts = [_chunk(n, rng) for _ in range(SAMPLES // CHUNK)]
    pooled, default, ratio = (np.concatenate(p) for p in zip(*parts, strict=True))
    rate = float(default.mean())
    return float(np.quantile(ratio, 1 - rate)), rate, float(pooled.mean())


def main() -> None:
    print(f"MATCHED_KERNELS = {KERNELS}")
    print("MATCHED = (  # the series-wide test's pass rate, the share pooled")
    for n in KERNELS:
        factor, rate, pooled = matched(n)
        print(f"    {factor:.4f},  # {n}: {rate:.2e}, {pooled:.2f}", flush=True)
    print(")")


if __name__ == "__main__":
    main()
