"""How sure the detector is of a step's first kernel (perfdb/detector/placement.py,
Change.location_share)."""

from __future__ import annotations

import math
import random

import pytest

from perfdb.detector import detection, placement
from tests.perfdb.alerting.step_series import POINTS

# the step scan from six kernels, as these series were drawn for it
STEP_SCAN = detection.Settings(short_kernels=6)

DOF = 20.0


def shares(levels: list[float], first: int, sd: float = 1.0) -> dict[int, float]:
    found = placement.shares(levels, [sd * sd] * len(levels), list(range(len(levels))), first, DOF)
    return dict(found)


def test_a_step_far_above_the_noise_is_placed_for_certain():
    found = shares([0.0] * 8 + [20.0] * 8, 8)
    assert found[8] > 0.999
    assert set(found) == {6, 7, 8, 9, 10}  # the scan's kernel and two either side
    assert math.fsum(found.values()) == pytest.approx(1.0)


def test_a_kernel_halfway_between_the_levels_splits_the_share_with_its_neighbour():
    # kernel 8 reads exactly between the levels: starting at 8 or at 9 explain it alike
    found = shares([0.0] * 8 + [1.5] + [3.0] * 8, 8)
    assert found[8] == pytest.approx(found[9], rel=1e-9)
    assert found[8] + found[9] > 0.9


def test_the_boundary_kernel_s_share_grows_as_it_reads_more_like_the_new_level():
    seen = [shares([0.0] * 8 + [x] + [3.0] * 8, 8)[8] for x in (0.5, 1.5, 2.5, 3.0)]
    assert seen == sorted(seen) and seen[0] < 0.5 < seen[-1]


def test_the_likeliest_comes_first_and_only_kept_kernels_are_weighed():
    levels = [0.0] * 6 + [9.0] + [0.0, 3.0, 3.0, 3.0, 3.0]  # kernel 6: a spike, left out
    kept = [0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11]
    found = placement.shares(levels, [1.0] * len(levels), kept, 8, DOF)
    assert 6 not in dict(found)
    assert [s for _, s in found] == sorted((s for _, s in found), reverse=True)
    assert found[0][0] == 8


def test_a_first_kernel_needs_a_kernel_before_it():
    found = shares([0.0, 0.0, 5.0, 5.0, 5.0], 1)
    assert min(found) == 1


def test_shares_do_not_depend_on_the_units():
    rng = random.Random(3)
    levels = [rng.gauss(0, 1) for _ in range(8)] + [rng.gauss(2, 1) for _ in range(8)]
    scaled = [1000 + 250 * x for x in levels]
    assert shares(levels, 8) == pytest.approx(shares(scaled, 8, sd=250.0))


def test_a_change_points_step_carries_its_placement_and_a_pairwise_change_none():
    (step,) = detection.change_points(POINTS[:10], better="higher", settings=STEP_SCAN)
    assert step.candidate_run_id == 8 and 0.5 < step.location_share <= 1.0
    run, share = step.runner_up
    assert run in (6, 7, 9, 10) and share == pytest.approx(1.0 - step.location_share, abs=0.02)
    (pairwise,) = detection.detect(POINTS[3:8], better="higher", candidates={8})  # 5 kernels
    assert pairwise.method != "changepoint" and pairwise.candidate_run_id == 8
    assert pairwise.location_share is None and pairwise.runner_up is None


def test_a_step_the_scan_places_after_a_kernel_between_the_levels_names_that_kernel():
    # with eleven kernels the scan moves the step to 2.5.9 (test_moves_rule.py):
    # 2.5.8 reads nearer the new level than the old, and the placement says so
    (step,) = detection.change_points(POINTS, better="higher", settings=STEP_SCAN)
    assert step.candidate_run_id == 9
    assert step.runner_up[0] == 8 and step.runner_up[1] > step.location_share
