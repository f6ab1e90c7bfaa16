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
from scipy import stats as scipy_stats

from perfdb.detector import scan_filter, stats


def _reference_candidate(levels, variances, outlier, prefix, j, t, start, rule):
    lo = max(start, j - rule.baseline_window)
    b_sum, b_var, b_n = prefix.range(lo, j)
    after = [i for i in range(j, t + 1) if not outlier[i]]
    if b_n < 2 or not after:
        return None
    before_mean = b_sum / b_n
    after_mean = math.fsum(levels[i] for i in after) / len(after)
    diff = after_mean - before_mean
    if abs(diff) < rule.min_fraction * abs(before_mean) or abs(diff) <= rule.min_absolute:
        return None
    se = math.sqrt(b_var / b_n**2 + math.fsum(variances[i] for i in after) / len(after) ** 2)
    z = diff / se if se > 0 else math.copysign(math.inf, diff)
    if abs(z) < rule.critical:
        return None
    if len(after) >= 2:
        spread = math.fsum((levels[i] - after_mean) ** 2 / variances[i] for i in after)
        if spread > rule.homogeneity[min(len(after) - 1, len(rule.homogeneity) - 1)]:
            return None
    before = tuple(i for i in range(lo, j) if not outlier[i])
    if 2 <= len(before) <= stats.SHORT_BASELINE:
        # a short baseline that disagrees with itself: the step must also pass without the
        # baseline kernel farthest from the new level
        centre = math.fsum(levels[i] for i in before) / len(before)
        spread = math.fsum((levels[i] - centre) ** 2 / variances[i] for i in before)
        if spread > rule.homogeneity[min(len(before), len(rule.homogeneity)) - 1]:
            far = max(before, key=lambda i: abs(levels[i] - after_mean))
            rest = [i for i in before if i != far]
            trimmed = after_mean - math.fsum(levels[i] for i in rest) / len(rest)
            var = (
                math.fsum(variances[i] for i in rest) / len(rest) ** 2
                + math.fsum(variances[i] for i in after) / len(after) ** 2
            )
            if (
                trimmed * diff <= 0
                or abs(trimmed) <= rule.min_absolute
                or abs(trimmed) < rule.min_fraction * abs(after_mean - trimmed)
                or (var > 0 and abs(trimmed) / math.sqrt(var) < rule.critical)
            ):
                return None
    step = stats.Step(j, t, z, before, before_mean, after_mean, len(after) >= 2)
    return step, abs(z)


def _reference_back(levels, variances, outlier, steps, best, t, rule):
    """Is ``best`` a return, within ``rule.excursion`` kernels, to the level before the last
    step: nearer it than the level between, and no step from it would pass?"""
    if best is None or not best.confirmed or not steps:
        return False
    away = steps[-1]
    if best.index - away.index > rule.excursion:
        return False
    old = away.before_mean
    after = [i for i in range(best.index, t + 1) if not outlier[i]]
    new = math.fsum(levels[i] for i in after) / len(after)
    if abs(new - old) >= abs(new - best.before_mean):
        return False
    var = math.fsum(variances[i] for i in away.before) / len(away.before) ** 2
    var += math.fsum(variances[i] for i in after) / len(after) ** 2
    diff = abs(new - old)
    small = diff < rule.min_fraction * abs(old) or diff <= rule.min_absolute
    return small or diff < rule.critical * math.sqrt(var)


def reference_scan(levels, variances, rule):
    n = len(levels)
    outlier = [False] * n
    prefix = stats._Prefix()
    start, steps, pending = 0, [], None
    for t in range(n):
        if pending is not None and stats._cleared(levels[t], pending):
            outlier[t - 1] = True
            prefix.drop_last()
        best, strongest = None, 0.0
        window = range(max(start + 1, t - rule.window + 1), t + 1)
        for j in window:
            if outlier[j]:
                continue
            found = _reference_candidate(levels, variances, outlier, prefix, j, t, start, rule)
            if found is not None and (best is None or found[1] > strongest):
                best, strongest = found
        pending = None
        if _reference_back(levels, variances, outlier, steps, best, t, rule):
            # an excursion: the last step's kernels are outliers, its segment goes on
            away = steps.pop()
            for i in range(away.index, best.index):
                outlier[i] = True
            prefix = stats._Prefix()
            for i in range(t):
                prefix.push(levels[i], variances[i], not outlier[i])
            start = steps[-1].index if steps else 0
        elif best is not None and best.confirmed:
            steps.append(best)
            start = best.index
        elif best is not None:
            pending = best
        prefix.push(levels[t], variances[t], True)
    return stats.Scan(tuple(steps), pending, frozenset(i for i in range(n) if outlier[i]))


def _rule(rng: random.Random) -> stats.ScanRule:
    """A random rule."""
    window = rng.choice([1, 2, 4, 10, 12])
    return stats.ScanRule(
        critical=rng.choice([2.0, 3.0, 4.5]),
        homogeneity=(math.inf, *(scipy_stats.chi2.isf(0.01, d) for d in range(1, window + 1))),
        min_fraction=rng.choice([0.0, 0.01, 0.02]),
        min_absolute=rng.choice([0.0, 0.5]),
        window=window,
        baseline_window=rng.choice([5, 30]),
        excursion=rng.choice([0, 0, 3, 5]),
    )


def _series(rng: random.Random) -> tuple[list[float], list[float]]:
    """Steps, spikes and bimodal runs; some series on a coarse grid, so |z| ties happen."""
    n = rng.randint(0, 120)
    sd = rng.uniform(0.5, 3.0)
    level, levels = 100.0, []
    for _ in range(n):
        if rng.random() < 0.05:
            level += rng.choice([-1, 1]) * rng.uniform(2, 8) * sd
        value = level + rng.gauss(0, sd)
        if rng.random() < 0.05:
            value += rng.choice([-1, 1]) * rng.uniform(4, 10) * sd  # spike
        levels.append(value)
    if rng.random() < 0.3:
        levels = [float(round(v)) for v in levels]
    variances = [sd * sd / rng.choice([1, 1, 2, 3]) for _ in levels]
    return levels, variances


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
    # the detector drops NaN trials before any statistic (series.usable); given one anyway,
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
