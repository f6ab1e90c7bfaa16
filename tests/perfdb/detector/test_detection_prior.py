"""The workload/metric prior (Threshold.typical_noise_pct, or pooled from other setups): a
series consistent with it is pooled with it; one clearly noisier (bimodal, a flaky machine)
keeps its own noise. And the level noise estimate itself (trimmed moves)."""

from __future__ import annotations

import random

from perfdb.detector.policy import (
    Settings,
    level_noise_pct,
    pooled_level_noise_pct,
    pooled_prior,
    series_noise,
)


def levels(sd_pct: float, n: int = 8, seed: int = 3) -> list[float]:
    rng = random.Random(seed)
    return [100.0 * (1 + rng.gauss(0, sd_pct / 100)) for _ in range(n)]


def test_a_quiet_short_series_is_shrunk_up_toward_the_prior_and_gains_dof():
    quiet = levels(0.5)
    alone = series_noise([[v] for v in quiet], quiet, Settings())
    prior = series_noise([[v] for v in quiet], quiet, Settings(prior_noise_pct=2.0))
    assert alone is not None and prior is not None
    assert prior.between_pct > alone.between_pct and prior.dof > alone.dof


def test_a_series_noisier_than_the_prior_keeps_its_own_noise():
    noisy = levels(4.0)
    alone = series_noise([[v] for v in noisy], noisy, Settings())
    prior = series_noise([[v] for v in noisy], noisy, Settings(prior_noise_pct=1.0))
    assert alone is not None and prior == alone


def test_the_pooled_prior_is_the_median_setup_and_a_bimodal_setup_is_one_vote():
    quiet = [levels(1.0, n=30, seed=s) for s in range(4)]
    flaky = [100.0 if i % 2 else 130.0 for i in range(30)]  # bimodal: +30 % every other run
    typical, moves = pooled_level_noise_pct([*quiet, flaky])
    alone = [level_noise_pct(series)[0] or 0.0 for series in quiet]
    assert typical is not None and min(alone) <= typical <= max(alone)
    assert moves == 5 * 29
    # short series carry no vote; none left: no prior
    assert pooled_level_noise_pct([levels(1.0, n=4)]) == (None, 0)


def test_a_short_series_a_little_noisier_than_the_prior_is_pooled_with_it():
    # 8 kernels cannot tell 1.3 % from a typical 1 %: the estimate is pooled (narrowed) and
    # gains the prior's dof, so a step in a short series is judged with a known noise
    series = levels(1.3, seed=11)
    own = series_noise([[v] for v in series], series, Settings())
    pooled = series_noise([[v] for v in series], series, Settings(prior_noise_pct=1.0))
    assert own is not None and pooled is not None
    assert own.between_pct > 1.0  # the series alone reads noisier than the prior
    assert pooled.between_pct < own.between_pct and pooled.dof > own.dof


def test_the_trimmed_noise_estimate_of_a_short_series_is_not_inflated_by_the_trim():
    # the largest moves are left out and the rest rescaled by a truncated normal's second
    # moment for the share actually kept (1 of 9 moves in a short series, 8 of 39 in a long
    # one). Rescaling every series as if a fifth were left out overstated a 10-kernel
    # series' variance by ~37 %; what is left is the order statistics' small excess.
    for n in (10, 40):
        variances = [level_noise_pct(levels(2.0, n=n, seed=s))[0] ** 2 for s in range(400)]
        mean = sum(variances) / len(variances)
        assert 4.0 <= mean <= 4.0 * 1.2


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


def test_a_long_bimodal_series_keeps_its_mode_switches_as_noise():
    # runs in a second mode (+4 %, one in five): the switches are the series' noise. At most
    # three moves (a step and a spike) are left out, not a fifth of them: the estimate stays
    # near the mixture's sd and no switch reads as a step
    rng = random.Random(0)
    bimodal = [
        100.0 * (1 + rng.gauss(0, 0.01) + (0.04 if rng.random() < 0.2 else 0.0)) for _ in range(80)
    ]
    capped = level_noise_pct(bimodal)[0]
    a_fifth_left_out = level_noise_pct(bimodal, max_trimmed=80)[0]
    assert capped is not None and a_fifth_left_out is not None
    assert capped > a_fifth_left_out
    assert 1.5 < capped < 2.5  # the mixture's sd: sqrt(1 + 0.16 x 16) = 1.9 %


def test_the_pooled_priors_weight_follows_how_much_the_setups_agree():
    # setups whose noises agree make the prior worth more kernel moves than setups whose
    # noises scatter (0.5-4 %); the median is the same as pooled_level_noise_pct's
    alike = [levels(1.0, n=30, seed=s) for s in range(5)]
    scattered = [levels(sd, n=30, seed=s) for s, sd in enumerate((0.5, 1.0, 1.5, 2.5, 4.0))]
    for assume_alike in (False, True):
        tight = pooled_prior(alike, Settings(), alike=assume_alike)
        loose = pooled_prior(scattered, Settings(), alike=assume_alike)
        assert tight[0] == pooled_level_noise_pct(alike)[0]
        assert tight[1] > loose[1] > 0
    # tau^2 = 0 assumed: only the median's error counts, never less weight than without
    assert (
        pooled_prior(scattered, Settings(), alike=True)[1] > pooled_prior(scattered, Settings())[1]
    )
    # fewer than three votes show no spread: the fixed prior_weight
    two = pooled_prior(alike[:2], Settings(prior_weight=9.0))
    assert two == (pooled_level_noise_pct(alike[:2])[0], 9.0)
    assert pooled_prior([levels(1.0, n=4)], Settings()) == (None, 12.0)
