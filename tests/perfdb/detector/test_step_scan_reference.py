"""``stats.step_scan`` gives exactly the answer of the straightforward scan it replaced.

The reference below is the first version, kept here verbatim in spirit: for every start j it
gathers the kernels after j again (O(n x window^2)). The fast scan grows that set as j moves
down; both sum with ``math.fsum`` (exact), so every step, z and mean must be bit-identical,
ties decided as before (the earliest j among equal |z|).
"""

import dataclasses
import math
import random

import pytest

from perfdb.detector import scan_filter, stats
from tests.perfdb.detector.reference_scan import _rule, _series, reference_scan


@pytest.mark.parametrize("seed", range(8))
def test_step_scan_is_identical_to_the_reference(seed):
    rng = random.Random(seed)
    found_steps = found_outliers = excursions = 0
    for _ in range(150):
        levels, variances = _series(rng)
        rule = _rule(rng)
        fast = stats.step_scan(levels, variances, rule)
        assert fast == reference_scan(levels, variances, rule)
        found_steps += len(fast.steps)
        found_outliers += len(fast.outliers)
        if rule.excursion:
            plain = stats.step_scan(levels, variances, dataclasses.replace(rule, excursion=0))
            excursions += plain != fast
    # the comparison exercised every path: steps, spikes, levels that came back
    assert found_steps > 50 and found_outliers > 5 and excursions > 0


@pytest.mark.parametrize("seed", range(4))
def test_a_long_series_skipped_in_numpy_blocks_is_identical_to_the_reference(seed):
    # >= 200 kernels: the quiet stretches are found with numpy (perfdb/detector/scan_filter.py) and
    # only the kernels where a start might pass are tested one by one
    rng = random.Random(100 + seed)
    for _ in range(6):
        levels, variances = _series(rng)
        while len(levels) < 200:
            more, more_var = _series(rng)
            levels, variances = levels + more, variances + more_var
        rule = _rule(rng)
        assert stats.step_scan(levels, variances, rule) == reference_scan(levels, variances, rule)


def test_a_long_series_with_excursions_skipped_in_numpy_blocks_is_identical_to_the_reference():
    # the numpy sums (scan_filter.Whole) taken again from an excursion's first kernel on
    rng = random.Random(150)
    changed = 0
    for _ in range(4):
        levels, variances = [], []
        while len(levels) < 400:
            more, more_var = _series(rng)
            levels, variances = levels + more, variances + more_var
        for at in range(30, len(levels) - 10, 60):  # a visit of 2-3 kernels every 60
            for i in range(at, at + rng.choice([2, 3])):
                levels[i] += 12 * math.sqrt(variances[i])
        rule = dataclasses.replace(_rule(rng), excursion=3, window=4, critical=3.0)
        fast = stats.step_scan(levels, variances, rule)
        assert fast == reference_scan(levels, variances, rule)
        plain = dataclasses.replace(rule, excursion=0)
        changed += fast != stats.step_scan(levels, variances, plain)
    assert changed > 0


def test_spikes_and_excursions_across_numpy_blocks_are_identical_to_the_reference():
    # scan_filter.Whole adds its sums again lazily, a block at a time, after each outlier:
    # a series of several blocks with a spike or a visit every 50 kernels, around the
    # blocks' edges too
    rng = random.Random(160)
    n = 3 * scan_filter.BLOCK + 100
    levels = [1e6 + rng.gauss(0, 1) for _ in range(n)]
    for at in range(40, n - 10, 50):
        for i in range(at, at + rng.choice([1, 2, 3])):
            levels[i] += 15.0
    for at in (scan_filter.BLOCK - 1, 2 * scan_filter.BLOCK):
        levels[at] += 15.0
    variances = [1.0] * n
    rule = dataclasses.replace(
        _rule(random.Random(3)), excursion=3, window=4, critical=4.0, min_fraction=0.0
    )
    fast = stats.step_scan(levels, variances, rule)
    assert fast == reference_scan(levels, variances, rule)
    assert len(fast.outliers) > 150  # the spikes and visits were left out, not steps


def test_a_long_series_with_a_value_that_is_not_finite_is_scanned_kernel_by_kernel(
    monkeypatch,
):
    # the detector drops NaN trials before any statistic (series.usable_points); given one anyway,
    # the numpy filter does not stand for the exact test (NaN compares unlike in the two)
    rng = random.Random(9)
    levels = [100.0 + rng.gauss(0, 1) + (8.0 if i >= 150 else 0.0) for i in range(300)]
    levels[40] = math.nan
    rule = _rule(random.Random(2))
    fast = stats.step_scan(levels, [1.0] * 300, rule)
    monkeypatch.setattr(stats, "_VECTOR_FROM", 10**9)  # every kernel through the exact test
    assert repr(fast) == repr(stats.step_scan(levels, [1.0] * 300, rule))


@pytest.mark.parametrize("seed", range(4))
def test_series_longer_than_a_numpy_block_are_identical_to_the_reference(seed):
    # more kernels than one numpy pass judges (scan_filter.BLOCK), on a large offset where
    # the block's running sums round the most (levels ~1e6, noise ~1 of them)
    rng = random.Random(200 + seed)
    levels, variances = [], []
    while len(levels) < 1_300:
        more, more_var = _series(rng)
        levels, variances = levels + more, variances + more_var
    offset = rng.choice([0.0, 1e6])
    levels = [v + offset for v in levels]
    rule = _rule(rng)
    assert stats.step_scan(levels, variances, rule) == reference_scan(levels, variances, rule)
