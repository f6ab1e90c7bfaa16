"""Each start's own noise (``perfdb/start_noise.py``, ``Settings.step_noise="per_start"``):
the move into the start left out of its noise, its own dof and critical value."""

from __future__ import annotations

import math
import random

import numpy as np

from perfdb import policy
from perfdb.detection import Point, Settings, change_points
from perfdb.start_noise import _consistent, _left_out_sd_pct, start_noise


def _series(n: int, step_at: int | None, size: float, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [
        100.0 + rng.gauss(0, 1) + (size if step_at is not None and i >= step_at else 0.0)
        for i in range(n)
    ]


def _direct(levels: list[float], left_out: int) -> float:
    """policy.level_noise_pct's estimator over every move but one, written out."""
    moves = [abs(b - a) for a, b in zip(levels, levels[1:], strict=False)]
    del moves[left_out]
    moves.sort()
    keep = max(1, math.ceil(0.8 * len(moves)), len(moves) - policy.NOISE_TRIM_MAX)
    factor = policy._truncated_square(keep / len(moves))
    centre = sorted(abs(v) for v in levels)[len(levels) // 2]
    return math.sqrt(math.fsum(m * m for m in moves[:keep]) / keep / factor / 2) / centre * 100


def test_each_start_leaves_out_exactly_the_move_into_it():
    for n in (6, 10, 23, 41):
        levels = _series(n, n // 2, 6.0, seed=n)
        moves = [abs(b - a) for a, b in zip(levels, levels[1:], strict=False)]
        centre = sorted(abs(v) for v in levels)[n // 2]
        got = _left_out_sd_pct(np.array(moves), len(moves) - 1, 0.2, centre)
        for i in range(len(moves)):
            assert math.isclose(got[i], _direct(levels, i), rel_tol=1e-12)


def _noise(levels: list[float], settings: policy.Settings) -> policy.Noise:
    noise = policy.series_noise([[v] for v in levels], levels, settings)
    assert noise is not None
    return noise


def test_the_true_start_is_judged_with_a_noise_its_step_does_not_inflate():
    # 12 kernels of 1 % noise, a 5 % step at kernel 6: the series-wide estimate leaves the
    # step's move out but rescales the rest as if it were noise; the start at 6 reads the
    # noise without it, its neighbours with it
    # (a neighbour whose own move is among the largest reads the same noise: the step's move
    # is left out of its estimate by the trim)
    settings = policy.Settings()
    below, ratios = 0, []
    for seed in range(20):
        levels = _series(12, 6, 5.0, seed)
        noise = _noise(levels, settings)
        starts = start_noise(levels, None, 1, noise, 0.0, 1e-4, settings)
        assert starts is not None
        assert starts.var[6] < 1.0
        ratios.append(starts.var[6])
        assert starts.var[6] <= starts.var[5] and starts.var[6] <= starts.var[7]
        below += starts.var[6] < min(starts.var[5], starts.var[7])
        assert starts.dof[6] == settings.dof_per_difference * 10  # one move fewer
        assert starts.critical[6] == policy.critical_t(1e-4, starts.dof[6])
    assert below >= 10 and sum(ratios) / len(ratios) < 0.85  # ~0.78: sd 12 % smaller


def test_without_a_step_no_start_reads_much_quieter_than_the_series():
    # every move is noise: leaving one out changes the estimate a little, either way
    settings = policy.Settings()
    ratios = []
    for seed in range(50):
        levels = _series(30, None, 0.0, seed)
        starts = start_noise(levels, None, 1, _noise(levels, settings), 0.0, 1e-4, settings)
        assert starts is not None
        ratios += starts.var[1:]
    assert min(ratios) > 0.75 and max(ratios) < 1.25
    assert 0.97 < sum(ratios) / len(ratios) < 1.03


def test_a_start_consistent_with_the_prior_is_pooled_with_it_and_gains_its_dof():
    settings = policy.Settings(prior_noise_pct=1.0)
    levels = _series(10, 5, 5.0, seed=4)
    starts = start_noise(levels, None, 1, _noise(levels, settings), 0.0, 1e-4, settings)
    alone = start_noise(levels, None, 1, _noise(levels, policy.Settings()), 0.0, 1e-4, settings)
    assert starts is not None and alone is not None
    assert math.isclose(starts.dof[5], settings.dof_per_difference * (8 + settings.prior_weight))
    assert starts.critical[5] < policy.critical_t(1e-4, settings.dof_per_difference * 8)


def test_too_few_moves_to_leave_one_out_keeps_the_series_noise():
    levels = _series(4, None, 0.0, seed=1)
    noise = policy.Noise(None, 1.0, 2.1, 1)
    assert start_noise(levels, None, 1, noise, 0.0, 1e-4, policy.Settings()) is None


def test_the_residual_test_finds_a_clear_step_at_its_kernel_and_nothing_in_noise():
    # Settings.step_noise = "glr" (perfdb/scan_glr.py) through the detector's own path
    settings = Settings(step_noise="glr", prior_noise_pct=1.0)
    for seed in range(10):
        stepped = _series(20, 12, 8.0, seed)
        points = [Point(i + 1, f"2.6.{i}", (), (v,)) for i, v in enumerate(stepped)]
        found = change_points(points, better="higher", settings=settings)
        assert [c.candidate_run_id for c in found] == [13]
        quiet = _series(20, None, 0.0, seed)
        points = [Point(i + 1, f"2.6.{i}", (), (v,)) for i, v in enumerate(quiet)]
        assert change_points(points, better="higher", settings=settings) == []


def test_glr_whole_pools_a_series_with_the_prior_as_its_whole_reading_decides():
    # step_noise="glr_whole": a bimodal series (every other kernel 6 % up, 1 % noise) reads
    # far noisier than a 1 % prior on all its kernels, so no test of it is pooled with the
    # prior, however quiet the residuals of a split fitted to one mode switch look
    settings = Settings(step_noise="glr_whole", prior_noise_pct=1.0)
    rng = random.Random(5)
    bimodal = [100.0 + rng.gauss(0, 1) + (6.0 if i % 3 == 0 else 0.0) for i in range(20)]
    assert not _consistent(bimodal, settings)
    assert _consistent(_series(20, 10, 5.0, seed=2), settings)  # 1 % noise and one step
    points = [Point(i + 1, f"2.6.{i}", (), (v,)) for i, v in enumerate(bimodal)]
    assert change_points(points, better="higher", settings=settings) == []
