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

from perfdb import scan_filter, scan_glr, scan_max, stats
from perfdb.start_noise import StartNoise


def _rss(levels, variances, kernels, mean=None):
    """Sum of (x - mean)^2 / v over the kernels (their own mean unless given), and its dof."""
    if len(kernels) < 2:
        return 0.0, 0
    if mean is None:
        mean = math.fsum(levels[i] for i in kernels) / len(kernels)
    return math.fsum((levels[i] - mean) ** 2 / variances[i] for i in kernels), len(kernels) - 1


def _reference_residual(levels, variances, outlier, closed, start, lo, j, after, rule):
    """perfdb/scan_glr.py's noise written out: every residual summed directly."""
    kept = lambda a, b: [i for i in range(a, b) if not outlier[i]]  # noqa: E731
    parts = [_rss(levels, variances, kept(a, b)) for a, b in closed]
    parts += [_rss(levels, variances, kept(start, lo)), _rss(levels, variances, kept(lo, j))]
    parts.append(_rss(levels, variances, after))
    rss, dof = math.fsum(r for r, _ in parts), sum(d for _, d in parts)
    prior, pool = rule.residual.prior, rule.residual.pool
    if prior is None or pool is False:
        return (rss / dof, dof) if dof > 0 else None
    if pool is None and dof > 0 and rss / dof > prior * rule.residual.tolerance_sq(dof):
        return rss / dof, dof
    pooled = dof + rule.residual.prior_dof
    return (rss + rule.residual.prior_dof * prior) / pooled, pooled


def _reference_candidate(
    levels, variances, outlier, prefix, j, t, start, rule, closed=(), tested=1
):
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
    scale, critical, dof = 1.0, rule.critical, None
    if rule.starts is not None:  # each start with its own noise (perfdb/start_noise.py)
        scale, critical = rule.starts.var[j], rule.starts.critical[j]
        dof = rule.starts.dof[j]
    if rule.residual is not None:  # each test's noise from its residuals (scan_glr.py)
        found = _reference_residual(levels, variances, outlier, closed, start, lo, j, after, rule)
        if found is None or found[0] <= 0:
            return None
        scale, dof = found
        critical = rule.residual.critical(dof) if dof > 0 else math.inf
        if rule.residual.over_starts is not None:  # for the strongest of the starts tested
            critical *= rule.residual.over_starts(tested, dof)
    se = math.sqrt(b_var / b_n**2 + math.fsum(variances[i] for i in after) / len(after) ** 2)
    if rule.starts is not None or rule.residual is not None:
        se *= math.sqrt(scale)
    z = diff / se if se > 0 else math.copysign(math.inf, diff)
    if abs(z) < critical:
        return None
    if len(after) >= 2:
        spread = math.fsum((levels[i] - after_mean) ** 2 / variances[i] for i in after)
        if spread / scale > rule.homogeneity[min(len(after) - 1, len(rule.homogeneity) - 1)]:
            return None
    before = tuple(i for i in range(lo, j) if not outlier[i])
    plain = rule.starts is None and rule.residual is None and rule.location == "ml"
    if plain and 2 <= len(before) <= stats.SHORT_BASELINE:
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
    step = stats.Step(j, t, z, before, before_mean, after_mean, len(after) >= 2, dof)
    if rule.location == "map":  # the posterior of the start: z^2 / 2 less the Occam factor
        precision = b_n**2 / b_var * len(after) ** 2 / math.fsum(variances[i] for i in after)
        return step, z * z / 2 - 0.5 * math.log(precision / scale**2)
    own = rule.starts is not None or rule.residual is not None
    return step, abs(z) / critical if own else abs(z)


def _reference_back(levels, variances, outlier, steps, best, t, rule):
    """Is ``best`` a return, within ``rule.excursion`` kernels, to the level before the last
    step: nearer it than the level between, and no step from it would pass?"""
    if best is None or not best.confirmed or not steps or rule.residual is not None:
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
    start, steps, pending, closed = 0, [], None, []
    for t in range(n):
        if pending is not None and stats._cleared(levels[t], pending):
            outlier[t - 1] = True
            prefix.drop_last()
        best, strongest = None, 0.0
        window = range(max(start + 1, t - rule.window + 1), t + 1)
        # the starts tested: kept, with >= 2 kept kernels in their baseline
        tested = sum(
            not outlier[j] and prefix.range(max(start, j - rule.baseline_window), j)[2] >= 2
            for j in window
        )
        for j in window:
            if outlier[j]:
                continue
            found = _reference_candidate(
                levels, variances, outlier, prefix, j, t, start, rule, closed, tested
            )
            if found is not None and (best is None or found[1] > strongest):
                best, strongest = found
        pending = None
        if _reference_back(levels, variances, outlier, steps, best, t, rule):
            # an excursion: the last step's kernels are outliers, its segment goes on
            away = steps.pop()
            closed.pop()
            for i in range(away.index, best.index):
                outlier[i] = True
            prefix = stats._Prefix()
            for i in range(t):
                prefix.push(levels[i], variances[i], not outlier[i])
            start = steps[-1].index if steps else 0
        elif best is not None and best.confirmed:
            steps.append(best)
            closed.append((start, best.index))
            start = best.index
        elif best is not None:
            pending = best
        prefix.push(levels[t], variances[t], True)
    return stats.Scan(tuple(steps), pending, frozenset(i for i in range(n) if outlier[i]))


def _rule(rng: random.Random, kernels: int | None = None, location: str = "ml") -> stats.ScanRule:
    """A random rule; given the series' length, each start with its own noise: a variance
    factor of 0.4-2.5 (the move into it left out, as perfdb/start_noise.py reads it) and
    one of two critical values (pooled with a prior or not), as StartNoise has them."""
    window = rng.choice([1, 2, 4, 10, 12])
    starts = None
    if kernels is not None:
        critical = rng.choice([(4.5, 5.2), (2.0, 3.0)])
        pick = [rng.randrange(2) for _ in range(kernels)]
        starts = StartNoise(
            var=[math.exp(rng.uniform(-0.9, 0.9)) for _ in range(kernels)],
            critical=[critical[i] for i in pick],
            dof=[(30.0, 12.0)[i] for i in pick],
        )
    return stats.ScanRule(
        critical=rng.choice([2.0, 3.0, 4.5]),
        homogeneity=(math.inf, *(scipy_stats.chi2.isf(0.01, d) for d in range(1, window + 1))),
        min_fraction=rng.choice([0.0, 0.01, 0.02]),
        min_absolute=rng.choice([0.0, 0.5]),
        window=window,
        baseline_window=rng.choice([5, 30]),
        starts=starts,
        location=location,
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
    # >= 200 kernels: the quiet stretches are found with numpy (perfdb/scan_filter.py) and
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


@pytest.mark.parametrize("seed", range(6))
def test_a_scan_with_each_starts_own_noise_is_identical_to_the_reference(seed):
    # Settings.step_noise = "per_start": start j's variances x starts.var[j], its own critical
    # value, the starts ranked by |z| / critical; short series kernel by kernel, long ones
    # through the numpy filter (which compares with critical x sqrt(var) per start)
    rng = random.Random(300 + seed)
    found_steps = 0
    for _ in range(120):
        levels, variances = _series(rng)
        rule = _rule(rng, kernels=len(levels))
        fast = stats.step_scan(levels, variances, rule)
        assert fast == reference_scan(levels, variances, rule)
        found_steps += len(fast.steps)
    for _ in range(3):
        levels, variances = _series(rng)
        while len(levels) < 700:
            more, more_var = _series(rng)
            levels, variances = levels + more, variances + more_var
        rule = _rule(rng, kernels=len(levels))
        fast = stats.step_scan(levels, variances, rule)
        assert fast == reference_scan(levels, variances, rule)
        found_steps += len(fast.steps)
    assert found_steps > 40


@pytest.mark.parametrize("seed", range(4))
def test_a_scan_that_places_steps_by_their_posterior_is_identical_to_the_reference(seed):
    # Settings.step_location = "map": the starts ranked by z^2 / 2 less half the log of the
    # two levels' precisions; alone and with each start's own noise, short and long series
    rng = random.Random(400 + seed)
    found_steps = 0
    for _ in range(100):
        levels, variances = _series(rng)
        own = rng.random() < 0.5
        rule = _rule(rng, kernels=len(levels) if own else None, location="map")
        fast = stats.step_scan(levels, variances, rule)
        assert fast == reference_scan(levels, variances, rule)
        found_steps += len(fast.steps)
    levels, variances = _series(rng)
    while len(levels) < 700:
        more, more_var = _series(rng)
        levels, variances = levels + more, variances + more_var
    rule = _rule(rng, location="map")
    assert stats.step_scan(levels, variances, rule) == reference_scan(levels, variances, rule)
    assert found_steps > 30


def _same(fast, slow):
    """Two scans alike but for the last bits of z and dof (the residual sums are formed
    differently: running sums against every residual summed directly)."""
    assert fast.outliers == slow.outliers
    assert (fast.pending is None) == (slow.pending is None)
    pairs = [*zip(fast.steps, slow.steps, strict=True)]
    if fast.pending is not None:
        pairs.append((fast.pending, slow.pending))
    for a, b in pairs:
        assert (a.index, a.seen_at, a.before, a.confirmed) == (
            b.index,
            b.seen_at,
            b.before,
            b.confirmed,
        )
        assert math.isclose(a.z, b.z, rel_tol=1e-9) and math.isclose(a.dof, b.dof, rel_tol=1e-9)
        assert (a.before_mean, a.after_mean) == (b.before_mean, b.after_mean)


@pytest.mark.parametrize("seed", range(6))
def test_a_scan_testing_with_the_residuals_of_each_model_agrees_with_the_reference(seed):
    # Settings.step_noise = "glr": the noise of each (kernel, start) from the residuals of the
    # segments closed so far, the segment before the baseline window, the baseline and the
    # kernels after the start, pooled with a prior when consistent with it
    rng = random.Random(500 + seed)
    found_steps = 0
    for _ in range(120):
        levels, variances = _series(rng)
        prior = rng.choice([None, 1.0, 0.5])
        residual = scan_glr.Residual(
            prior=prior,
            prior_dof=8.4,
            tolerance_sq=lambda dof: scipy_stats.chi2.isf(0.05, max(dof, 0.5)) / max(dof, 0.5),
            critical=lambda dof: float(scipy_stats.t.isf(1e-3, dof)),
            pool=rng.choice([None, None, True, False]),  # per test, or once for the series
        )
        rule = dataclasses.replace(_rule(rng), residual=residual)
        fast = stats.step_scan(levels, variances, rule)
        _same(fast, reference_scan(levels, variances, rule))
        found_steps += len(fast.steps)
    assert found_steps > 40


@pytest.mark.parametrize("seed", range(4))
def test_a_residual_scan_with_a_critical_value_for_the_strongest_start_agrees(seed):
    # step_noise="glr_max" / "glr_matched": the residual test's critical value raised for
    # the number of starts tested at each kernel (perfdb/scan_max.py); the reference counts
    # the starts itself, so a wrong count or factor changes which steps pass
    rng = random.Random(900 + seed)
    found_steps, raised = 0, 0
    for _ in range(120):
        levels, variances = _series(rng)
        over = rng.choice([scan_max.factor, lambda m, dof: 1.0 + 0.05 * m])
        residual = scan_glr.Residual(
            prior=rng.choice([None, 1.0, 0.5]),
            prior_dof=8.4,
            tolerance_sq=lambda dof: scipy_stats.chi2.isf(0.05, max(dof, 0.5)) / max(dof, 0.5),
            critical=lambda dof: float(scipy_stats.t.isf(1e-3, dof)),
            pool=rng.choice([True, False]),
            over_starts=over,
        )
        rule = dataclasses.replace(_rule(rng), residual=residual)
        fast = stats.step_scan(levels, variances, rule)
        _same(fast, reference_scan(levels, variances, rule))
        plain = stats.step_scan(
            levels,
            variances,
            dataclasses.replace(rule, residual=dataclasses.replace(residual, over_starts=None)),
        )
        found_steps += len(fast.steps)
        raised += len(plain.steps) > len(fast.steps)
    assert found_steps > 40 and raised > 0  # the raised critical value drops some steps
