"""The workload/metric prior (Threshold.typical_noise_pct) may widen a series' noise, never
narrow it: a series noisier than typical (bimodal, a flaky machine) keeps its own."""

from __future__ import annotations

import random

from perfdb.policy import Settings, series_noise


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
