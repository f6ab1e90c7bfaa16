"""``scan_filter.Whole`` holds ``Prefix``'s running sums bit for bit, and the numpy filter
never drops a kernel at which the exact test finds a step (so ``step_scan.step_scan`` over long
series is the reference scan's answer)."""

import dataclasses
import random

import numpy as np
import pytest

from perfdb.detector import scan_filter, step_scan
from tests.perfdb.detector.reference_scan import _rule, _series, reference_scan


def _values(rng: random.Random, n: int) -> list[float]:
    """Levels of many magnitudes and a large offset: where running sums round the most."""
    offset = rng.choice([0.0, 1e6, -3e4])
    return [offset + rng.gauss(0, 1) * 10 ** rng.randint(-6, 4) for _ in range(n)]


@pytest.mark.parametrize("seed", range(6))
def test_whole_holds_the_running_sums_prefix_pushes_with_outliers_dropped(seed):
    rng = random.Random(seed)
    n = rng.randint(200, 3000)
    levels, variances = _values(rng, n), [abs(v) + 0.5 for v in _values(rng, n)]
    whole = scan_filter.Whole(np.asarray(levels), np.asarray(variances))
    prefix = scan_filter.Prefix()
    for t in range(n):
        if t and rng.random() < 0.02:  # the last kernel pushed is an outlier
            prefix.drop_last()
            whole.drop_last()
        prefix.push(levels[t], variances[t], True)
        whole.push(levels[t], variances[t], True)
        lo = rng.randrange(t + 1)
        got, want = whole.range(lo, t + 1), prefix.range(lo, t + 1)
        assert [x.hex() if isinstance(x, float) else x for x in got] == [
            x.hex() if isinstance(x, float) else x for x in want
        ]
        assert all(type(x) is type(y) for x, y in zip(got, want, strict=True))
    assert whole.sums[: n + 1] == prefix.sums and whole.counts[: n + 1] == prefix.counts


def _long_series(rng: random.Random, n: int) -> tuple[list[float], list[float]]:
    levels, variances = [], []
    while len(levels) < n:
        more, more_var = _series(rng)
        levels, variances = levels + more, variances + more_var
    return levels, variances


@pytest.mark.parametrize("seed", range(3))
def test_series_longer_than_a_numpy_pass_are_identical_to_the_reference(seed):
    # more kernels than one pass judges (scan_filter.BLOCK), steps and spikes redoing passes,
    # on a large offset (levels ~1e6, noise ~1 of them)
    rng = random.Random(600 + seed)
    levels, variances = _long_series(rng, scan_filter.BLOCK + 500)
    offset = 1e6 if seed == 1 else 0.0
    levels = [v + offset for v in levels]
    rule = _rule(rng)
    rule = dataclasses.replace(rule, min_fraction=0.0)  # steps of 1e-6 of the level count
    fast = step_scan.step_scan(levels, variances, rule)
    assert fast == reference_scan(levels, variances, rule)
    assert fast.steps or fast.outliers


@pytest.mark.parametrize("seed", range(4))
def test_the_filter_keeps_every_kernel_at_which_the_exact_test_finds_a_start(seed):
    # the exact test at every kernel of a quiet stretch, against the filter's list for it
    rng = random.Random(700 + seed)
    levels, variances = _long_series(rng, 600)
    rule = _rule(rng)
    whole = scan_filter.Whole(np.asarray(levels), np.asarray(variances))
    outlier = [False] * len(levels)
    found = tested = 0
    for t0 in range(0, 560, 40):
        start = rng.randrange(max(t0 - 50, 0), t0 + 1)
        whole.pushed = t0
        end, kept = scan_filter.might_pass(whole, t0, start, rule)
        for t in range(t0, end):
            best = step_scan.best_step(levels, variances, outlier, whole, t, start, rule)
            tested += 1
            if best is not None:
                found += 1
                assert t in kept
    assert tested > 3_000 and found > 20
