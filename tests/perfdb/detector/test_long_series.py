"""A long series analysed (perfdb/detector/long_series.py): ``analyse`` against the plain
computation of its noise, centre and variances, over the series test_points.py draws;
``analyse_of`` given a long series' columns and trials (as a check reads them): the analysis
``analyse`` makes from the points alone; and its noise model (``series_noise``) with mixed
trial counts and the workload/metric prior: a series consistent with it is pooled with it,
one clearly noisier (bimodal, a flaky machine) keeps its own noise."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from perfdb.detector import long_series, policy, stats
from perfdb.detector.long_series import series_noise
from perfdb.detector.points import Point, columns, stock_by_kernel, stock_kernels
from perfdb.detector.policy import Settings
from perfdb.detector.stats import Floats
from tests.perfdb.detector.seeded import noisy_levels, random_series, series_values


@pytest.mark.parametrize("seed", range(30))
def test_analyse_reads_what_the_plain_computation_reads(seed):
    """The analysis' noise, centre, quantum and variances from the plain grouping."""
    rng = random.Random(seed)
    points = tuple(random_series(rng, rng.choice([8, 70, 300])))
    settings = policy.Settings()
    got = long_series.analyse.__wrapped__(points, settings)
    kernels = stock_by_kernel(points)
    levels = [math.fsum(k.values) / len(k.values) for k in kernels]
    if len(kernels) < settings.short_kernels or any(level == 0 for level in levels):
        assert got is None
        return
    noise = series_noise([p.values for p in points], levels, settings)
    if noise is None:
        assert got is None
        return
    assert got is not None and got.noise == noise
    assert list(got.kernels) == kernels
    centre = sorted(map(abs, levels))[len(levels) // 2]
    resolution = policy.resolution_of([v for p in points for v in p.values])
    variances = []
    for k in kernels:
        within = (noise.within_pct or 0.0) ** 2 / len(k.values)
        sd = math.sqrt(noise.between_pct**2 / len(k.run_ids) + within) / 100 * centre
        floor = (resolution or 0.0) / 2 / math.sqrt(len(k.values))
        variances.append(max(sd, floor, 1e-9 * centre) ** 2)
    assert list(got.variances) == variances
    assert stats.middle_size(stock_kernels(points).levels, floats=True) == centre


def _points(rng: random.Random, n: int) -> tuple[list[Point], list[float]]:
    values = series_values(rng, n)
    patched = rng.random() < 0.3
    points = [
        Point(i + 1, f"4.{i // 100}.{i % 100}", ("O(1)",) if patched and i % 4 == 1 else (), (v,))
        for i, v in enumerate(values)
    ]
    return points, values


@pytest.mark.parametrize("seed", range(40))
def test_analyse_of_with_columns_and_trials_is_analyse(seed):
    rng = random.Random(100 + seed)
    points, values = _points(rng, rng.choice([8, 250, 1100]))
    if not all(map(math.isfinite, values)):  # a check passes finite trials only
        values = [v if math.isfinite(v) else 1.0 for v in values]
        points = [p._replace(values=(v,)) for p, v in zip(points, values, strict=True)]
    settings = policy.Settings(resolution=rng.choice([None, None, 0.01]))
    plain = long_series.analyse.__wrapped__(tuple(points), settings)
    fast = long_series.analyse_of(points, settings, columns(points), Floats(np.array(values)))
    assert (fast is None) == (plain is None)
    if plain is not None and fast is not None:
        assert repr((fast.noise, fast.scan)) == repr((plain.noise, plain.scan))
        assert list(fast.kernels) == list(plain.kernels)
        assert [v.hex() for v in fast.kernels.levels] == [v.hex() for v in plain.kernels.levels]


def _mixed_trials_series(seed: int, between: float) -> tuple[list[list[float]], list[float]]:
    """400 kernels of 1-5 trials each (in turn), within-run sd 2 %, this run-to-run sd (%)."""
    rng = random.Random(seed)
    groups = []
    for i in range(400):
        run = 100 + rng.gauss(0, between) if between else 100.0
        groups.append([run + rng.gauss(0, 2.0) for _ in range(1 + i % 5)])
    return groups, [sum(g) / len(g) for g in groups]


@pytest.mark.parametrize("seed", range(4))
def test_a_kernel_with_more_trials_is_judged_quieter_when_trial_counts_are_mixed(seed):
    # Independent trials: a 5-trial kernel's mean has a fifth of a 1-trial kernel's variance.
    # Reading the within-run share at the median trials (3) took part of it for run-to-run
    # noise, which more trials do not average away: a ratio of 0.29-0.32.
    groups, levels = _mixed_trials_series(seed, 0.0)
    noise = series_noise(groups, levels, Settings())
    assert noise is not None
    assert noise.level_pct(5) ** 2 / noise.level_pct(1) ** 2 < 0.26


@pytest.mark.parametrize("seed", range(4))
def test_run_to_run_noise_is_read_through_mixed_trial_counts(seed):
    groups, levels = _mixed_trials_series(seed, 1.0)
    noise = series_noise(groups, levels, Settings())
    assert noise is not None
    assert 0.75 < noise.between_pct < 1.25
    assert 1.8 < noise.within_pct < 2.2


def test_a_quiet_short_series_is_shrunk_up_toward_the_prior_and_gains_dof():
    quiet = noisy_levels(0.5)
    alone = series_noise([[v] for v in quiet], quiet, Settings())
    prior = series_noise([[v] for v in quiet], quiet, Settings(prior_noise_pct=2.0))
    assert alone is not None and prior is not None
    assert prior.between_pct > alone.between_pct and prior.dof > alone.dof


def test_a_series_noisier_than_the_prior_keeps_its_own_noise():
    noisy = noisy_levels(4.0)
    alone = series_noise([[v] for v in noisy], noisy, Settings())
    prior = series_noise([[v] for v in noisy], noisy, Settings(prior_noise_pct=1.0))
    assert alone is not None and prior == alone


def test_a_short_series_a_little_noisier_than_the_prior_is_pooled_with_it():
    # 8 kernels cannot tell 1.3 % from a typical 1 %: the estimate is pooled (narrowed) and
    # gains the prior's dof, so a step in a short series is judged with a known noise
    series = noisy_levels(1.3, seed=11)
    own = series_noise([[v] for v in series], series, Settings())
    pooled = series_noise([[v] for v in series], series, Settings(prior_noise_pct=1.0))
    assert own is not None and pooled is not None
    assert own.between_pct > 1.0  # the series alone reads noisier than the prior
    assert pooled.between_pct < own.between_pct and pooled.dof > own.dof


def test_a_step_does_not_make_a_short_series_look_noisier_than_its_prior():
    # 10 kernels of 1 % noise with a 5 % step, prior 1 %: the step's own move (left out) and
    # the rescaling of the other moves as if it were noise read the series as ~1.6 %, beyond
    # what 6 dof allow (x 1.44); read as a step it is ~1.2 %: consistent, pooled, the prior's
    # dof gained (before, about one such series in five lost the prior)
    rng = random.Random(6)
    series = [100 * (1 + rng.gauss(0, 0.01)) - (5.0 if i >= 5 else 0.0) for i in range(10)]
    own = series_noise([[v] for v in series], series, Settings())
    pooled = series_noise([[v] for v in series], series, Settings(prior_noise_pct=1.0))
    assert own is not None and pooled is not None
    assert own.between_pct > 1.44
    assert pooled.dof > own.dof and pooled.between_pct < own.between_pct
