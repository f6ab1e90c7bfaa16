"""``perfdb.detector.step_scan``: the step scan of a long series' levels.

``step_scan.step_scan`` gives exactly the answer of the straightforward scan it replaced. The
reference (reference_scan.py) is the first version, kept verbatim in spirit: for every start
j it gathers the kernels after j again (O(n x window^2)). The fast scan grows that set as j
moves down; both sum with ``math.fsum`` (exact), so every step, z and mean must be
bit-identical, ties decided as before (the earliest j among equal |z|).

``step_scan.Whole`` holds ``Prefix``'s running sums bit for bit, and the numpy filter
(``might_pass``) never drops a kernel at which the exact test finds a step.
"""

import dataclasses
import math
import random

import numpy as np
import pytest
from scipy import stats as scipy_stats

from perfdb.detector import step_scan
from tests.perfdb.detector.reference_scan import _rule, _series, reference_scan


def rule(critical: float = 4.0, window: int = 4, excursion: int = 0) -> step_scan.ScanRule:
    return step_scan.ScanRule(
        critical=critical,
        homogeneity=(math.inf, *(scipy_stats.chi2.isf(0.01, d) for d in range(1, window + 1))),
        min_fraction=0.02,
        min_absolute=0.0,
        window=window,
        excursion=excursion,
    )


@pytest.mark.parametrize("spike_at", [0, 1])
def test_a_spike_among_the_first_two_kernels_is_not_a_step_after_it(spike_at):
    # No kernel before it can make it pending, none after it can clear it: it stays in the
    # baseline of the first starts. Before, the kernels after it read as a step (at kernel 2,
    # the other way), the peer suite's false alerts on the third kernel.
    rng = random.Random(3)
    values = [100 + rng.gauss(0, 1) for _ in range(20)]
    values[spike_at] += 7
    scan = step_scan.step_scan(values, [1.0] * 20, rule())
    assert scan.steps == ()


def test_a_step_after_two_kernels_that_agree_is_still_found():
    rng = random.Random(3)
    values = [100 + rng.gauss(0, 1) for _ in range(2)] + [93 + rng.gauss(0, 1) for _ in range(8)]
    assert [s.index for s in step_scan.step_scan(values, [1.0] * 10, rule()).steps] == [2]


@pytest.mark.parametrize("step_at", [4, 10, 15])
def test_step_scan_finds_a_step_where_it_is_confirmed_by_the_next_kernel(step_at):
    rng = random.Random(step_at)
    values = [100 + rng.gauss(0, 1) for _ in range(20)]
    values = values[:step_at] + [v - 10 for v in values[step_at:]]
    scan = step_scan.step_scan(values, [1.0] * 20, rule())
    assert [s.index for s in scan.steps] == [step_at]
    assert scan.steps[0].seen_at == step_at + 1 and scan.steps[0].confirmed
    assert scan.steps[0].before == tuple(range(step_at))


def test_step_scan_a_step_at_the_newest_kernel_is_pending():
    values = [100.0, 101.0, 99.0, 100.5, 99.5, 100.0, 90.0]
    scan = step_scan.step_scan(values, [1.0] * 7, rule())
    assert scan.steps == () and scan.pending is not None
    assert scan.pending.index == 6 and not scan.pending.confirmed


def test_step_scan_a_spike_is_cleared_and_left_out_of_baselines():
    rng = random.Random(4)
    values = [100 + rng.gauss(0, 1) for _ in range(25)]
    values[12] += 12.0  # one run far off, then back
    scan = step_scan.step_scan(values, [1.0] * 25, rule())
    assert scan.steps == () and scan.pending is None
    assert scan.outliers == frozenset({12})


def test_step_scan_finds_nothing_in_noise_and_two_steps_when_there_are_two():
    rng = random.Random(5)
    values = [100 + rng.gauss(0, 1) for _ in range(30)]
    assert step_scan.step_scan(values, [1.0] * 30, rule()).steps == ()
    values = values[:10] + [v - 10 for v in values[10:20]] + [v + 5 for v in values[20:]]
    assert [s.index for s in step_scan.step_scan(values, [1.0] * 30, rule()).steps] == [10, 20]


def test_step_scan_of_a_long_series_finds_every_step_and_nothing_else():
    # 20,000 kernels, a step every 2,000: each is found at its kernel, no false step between
    # them (the per-series budget keeps a long series from being a lottery). How long it
    # takes is a benchmark's question (bench/detector_peers.py --scaling), not a test's.
    rng = random.Random(1)
    values = [100 + rng.gauss(0, 1) + 8 * (i // 2000 % 2) for i in range(20000)]
    long_rule = rule(critical=5.0)  # 0.01 / 20,000 per kernel, two-sided, as policy spends it
    found = [s.index for s in step_scan.step_scan(values, [1.0] * len(values), long_rule).steps]
    assert found == list(range(2000, 20000, 2000))


def _visit(length: int, offset: float, at: int = 12, n: int = 30, seed: int = 6) -> list[float]:
    """A quiet series whose kernels at..at+length-1 sit ``offset`` away, then come back."""
    rng = random.Random(seed)
    values = [100 + rng.gauss(0, 1) for _ in range(n)]
    return [v + offset if at <= i < at + length else v for i, v in enumerate(values)]


@pytest.mark.parametrize("length", [2, 3])
def test_a_level_that_comes_back_within_the_excursion_window_is_no_step(length):
    # a bimodal benchmark's visit to its other mode, or a few bad runs: without the rule two
    # steps, the second the way back (each an alert, one of them emailed as a regression)
    values = _visit(length, 10.0)
    assert [s.index for s in step_scan.step_scan(values, [1.0] * 30, rule()).steps] == [
        12,
        12 + length,
    ]
    scan = step_scan.step_scan(values, [1.0] * 30, rule(excursion=3))
    assert scan.steps == () and scan.pending is None
    assert scan.outliers == frozenset(range(12, 12 + length))  # out of every later baseline


def test_a_step_after_an_excursion_is_measured_against_the_level_before_it():
    values = _visit(3, 10.0, n=40)
    values[25:] = [v - 8 for v in values[25:]]
    scan = step_scan.step_scan(values, [1.0] * 40, rule(excursion=3))
    assert [s.index for s in scan.steps] == [25]
    assert scan.steps[0].before == tuple(i for i in range(25) if not 12 <= i < 15)


def test_a_level_that_lasts_longer_than_the_excursion_window_is_two_steps():
    # a regression that a later kernel fixes is still a regression
    values = _visit(4, 10.0)
    scan = step_scan.step_scan(values, [1.0] * 30, rule(excursion=3))
    assert [s.index for s in scan.steps] == [12, 16]


@pytest.mark.parametrize("then", [6.0, 16.0])
def test_a_second_step_that_does_not_go_back_is_a_step(then):
    # back part of the way (6 of 10: nearer the old level, but a step from it), or on past
    # the old level's far side (16)
    values = _visit(30, 10.0)
    values[15:] = [v - then for v in values[15:]]
    scan = step_scan.step_scan(values, [1.0] * 30, rule(excursion=3))
    assert [s.index for s in scan.steps] == [12, 15]


@pytest.mark.parametrize("values", [[], [1.0], [1.0, 2.0]])
def test_step_scan_of_a_short_series_is_empty(values):
    scan = step_scan.step_scan(values, [1.0] * len(values), rule())
    assert scan.steps == () and scan.pending is None


@pytest.mark.parametrize("seed", range(8))
def test_step_scan_is_identical_to_the_reference(seed):
    rng = random.Random(seed)
    found_steps = found_outliers = excursions = 0
    for _ in range(150):
        levels, variances = _series(rng)
        rule = _rule(rng)
        fast = step_scan.step_scan(levels, variances, rule)
        assert fast == reference_scan(levels, variances, rule)
        found_steps += len(fast.steps)
        found_outliers += len(fast.outliers)
        if rule.excursion:
            plain = step_scan.step_scan(levels, variances, dataclasses.replace(rule, excursion=0))
            excursions += plain != fast
    # the comparison exercised every path: steps, spikes, levels that came back
    assert found_steps > 50 and found_outliers > 5 and excursions > 0


@pytest.mark.parametrize("seed", range(4))
def test_a_long_series_skipped_in_numpy_blocks_is_identical_to_the_reference(seed):
    # >= 200 kernels: the quiet stretches are found with numpy (perfdb/detector/step_scan.py) and
    # only the kernels where a start might pass are tested one by one
    rng = random.Random(100 + seed)
    for _ in range(6):
        levels, variances = _series(rng)
        while len(levels) < 200:
            more, more_var = _series(rng)
            levels, variances = levels + more, variances + more_var
        rule = _rule(rng)
        assert step_scan.step_scan(levels, variances, rule) == reference_scan(
            levels, variances, rule
        )


def test_a_long_series_with_excursions_skipped_in_numpy_blocks_is_identical_to_the_reference():
    # the numpy sums (step_scan.Whole) taken again from an excursion's first kernel on
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
        fast = step_scan.step_scan(levels, variances, rule)
        assert fast == reference_scan(levels, variances, rule)
        plain = dataclasses.replace(rule, excursion=0)
        changed += fast != step_scan.step_scan(levels, variances, plain)
    assert changed > 0


def test_spikes_and_excursions_across_numpy_blocks_are_identical_to_the_reference():
    # step_scan.Whole adds its sums again lazily, a block at a time, after each outlier:
    # a series of several blocks with a spike or a visit every 50 kernels, around the
    # blocks' edges too
    rng = random.Random(160)
    n = 3 * step_scan.BLOCK + 100
    levels = [1e6 + rng.gauss(0, 1) for _ in range(n)]
    for at in range(40, n - 10, 50):
        for i in range(at, at + rng.choice([1, 2, 3])):
            levels[i] += 15.0
    for at in (step_scan.BLOCK - 1, 2 * step_scan.BLOCK):
        levels[at] += 15.0
    variances = [1.0] * n
    rule = dataclasses.replace(
        _rule(random.Random(3)), excursion=3, window=4, critical=4.0, min_fraction=0.0
    )
    fast = step_scan.step_scan(levels, variances, rule)
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
    fast = step_scan.step_scan(levels, [1.0] * 300, rule)
    monkeypatch.setattr(step_scan, "_VECTOR_FROM", 10**9)  # every kernel through the exact test
    assert repr(fast) == repr(step_scan.step_scan(levels, [1.0] * 300, rule))


@pytest.mark.parametrize("seed", range(4))
def test_series_longer_than_a_numpy_block_are_identical_to_the_reference(seed):
    # more kernels than one numpy pass judges (step_scan.BLOCK), on a large offset where
    # the block's running sums round the most (levels ~1e6, noise ~1 of them)
    rng = random.Random(200 + seed)
    levels, variances = [], []
    while len(levels) < 1_300:
        more, more_var = _series(rng)
        levels, variances = levels + more, variances + more_var
    offset = rng.choice([0.0, 1e6])
    levels = [v + offset for v in levels]
    rule = _rule(rng)
    assert step_scan.step_scan(levels, variances, rule) == reference_scan(levels, variances, rule)


# --- the numpy filter and its running sums ---


def _values(rng: random.Random, n: int) -> list[float]:
    """Levels of many magnitudes and a large offset: where running sums round the most."""
    offset = rng.choice([0.0, 1e6, -3e4])
    return [offset + rng.gauss(0, 1) * 10 ** rng.randint(-6, 4) for _ in range(n)]


@pytest.mark.parametrize("seed", range(6))
def test_whole_holds_the_running_sums_prefix_pushes_with_outliers_dropped(seed):
    rng = random.Random(seed)
    n = rng.randint(200, 3000)
    levels, variances = _values(rng, n), [abs(v) + 0.5 for v in _values(rng, n)]
    whole = step_scan.Whole(np.asarray(levels), np.asarray(variances))
    prefix = step_scan.Prefix()
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
    # more kernels than one pass judges (step_scan.BLOCK), steps and spikes redoing passes,
    # on a large offset (levels ~1e6, noise ~1 of them)
    rng = random.Random(600 + seed)
    levels, variances = _long_series(rng, step_scan.BLOCK + 500)
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
    whole = step_scan.Whole(np.asarray(levels), np.asarray(variances))
    outlier = [False] * len(levels)
    found = tested = 0
    for t0 in range(0, 560, 40):
        start = rng.randrange(max(t0 - 50, 0), t0 + 1)
        whole.pushed = t0
        end, kept = step_scan.might_pass(whole, t0, start, rule)
        for t in range(t0, end):
            best = step_scan.best_step(levels, variances, outlier, whole, t, start, rule)
            tested += 1
            if best is not None:
                found += 1
                assert t in kept
    assert tested > 3_000 and found > 20


@pytest.mark.parametrize("seed", range(10))
def test_level_variances_are_the_plain_formula_per_kernel(seed):
    """One computation per (runs, trials) shape gives each kernel the formula's own float."""
    rng = random.Random(seed)
    n = rng.choice([1, 5, 200])
    one_shape = rng.random() < 0.5
    runs = [1 if one_shape else rng.choice([1, 2]) for _ in range(n)]
    trials = [3 if one_shape else rng.choice([1, 3, 5]) for _ in range(n)]
    within, between = rng.choice([None, 1.5]), rng.uniform(0.0, 3.0)
    centre, resolution = rng.uniform(10.0, 1000.0), rng.choice([None, 0.01, 1.0])
    plain = []
    for r, t in zip(runs, trials, strict=True):
        sd = math.sqrt(between**2 / r + (within or 0.0) ** 2 / t) / 100 * centre
        floor = (resolution or 0.0) / 2 / math.sqrt(t)
        plain.append(max(sd, floor, 1e-9 * centre) ** 2)
    got = step_scan.level_variances(runs, trials, within, between, centre, resolution)
    assert got == plain
