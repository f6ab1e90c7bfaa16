"""The noise a series is judged with (perfdb/detector/noise.py): the trials' noise of A/B
tests and short series (``trial_noise``) and a long series' model (``series_noise``), with
the workload/metric prior: a series consistent with it is pooled with it; one clearly
noisier (bimodal, a flaky machine) keeps its own noise."""

import math
import random

import pytest

from perfdb.detector.detection import Point, check, detect
from perfdb.detector.noise import series_noise, trial_noise
from perfdb.detector.points import ordered
from perfdb.detector.policy import Settings, judge
from tests.perfdb.detector.seeded import noisy_levels


def test_nan_trials_are_ignored_and_do_not_change_the_noise():
    rng = random.Random(2)
    points = [
        Point(i + 1, f"2.5.{i + 1}", (), tuple(100 * (1 + rng.gauss(0, 0.01)) for _ in range(3)))
        for i in range(10)
    ]
    with_nan = [Point(p.run_id, p.kernel, p.patches, (*p.values, math.nan)) for p in points]
    noise = trial_noise(ordered(with_nan), Settings()).within_pct
    assert noise == pytest.approx(trial_noise(points, Settings()).within_pct)
    assert detect(with_nan, better="higher") == detect(points, better="higher")
    assert judge([100.0, math.nan, 101.0], [90.0, 91.0], "higher").change_pct == pytest.approx(
        (90.5 - 100.5) / 100.5 * 100
    )


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


# The user's series: 6.14.0 captured on a quiet machine, then run again with the machine busy
# (14 % apart), 6.14.1, and three kernels with a real slowdown beside them (-30 % and more).
RERUN_SERIES = [
    ("6.14.0", (10969.95, 10992.12, 10980.49)),
    ("6.14.0", (9357.34, 9516.51, 9422.06)),
    ("6.14.1", (9394.84, 9182.83, 9442.79)),
    ("6.15.0-rc1", (6394.08, 6504.59, 6687.39)),
    ("6.15.0-rc2", (5296.74, 5140.08, 5984.01)),
    ("6.15.0-rc3", (5713.46, 5487.93, 5688.13)),
]


def test_one_disagreeing_rerun_widens_the_test_without_hiding_a_step():
    """A kernel run twice is all this short series knows of its run-to-run noise: alone, its
    one degree of freedom made any step invisible. Pooled with the trials-only assumption
    (``rerun_prior_dof``), the noise it shows still counts, and the step is found on the
    kernel that brought it (rc1) once the next one agrees."""
    points = [Point(i + 1, k, (), v) for i, (k, v) in enumerate(RERUN_SERIES)]
    read = trial_noise(ordered(points), Settings())
    blind = trial_noise(ordered(points), Settings(rerun_prior_dof=0.0))
    assert blind.noise(Settings(rerun_prior_dof=0.0)).dof == 1
    noise = read.noise(Settings())
    assert noise.dof == 5 and 0 < noise.between_pct < blind.noise(Settings()).between_pct
    for upto in range(1, len(points) + 1):
        found = check(points[:upto], better="higher", settings=Settings(), candidates={upto})
        assert [(c.candidate_run_id, c.direction, c.status) for c in found] == (
            [(4, "regression", "confirmed")] if upto == 5 else []
        ), upto
        blinded = Settings(rerun_prior_dof=0.0)
        assert check(points[:upto], better="higher", settings=blinded, candidates={upto}) == []


def test_a_prior_replaces_the_assumption_beside_reruns():
    """With the workload's typical noise known, the reruns pool with it, not with an
    assumption of none."""
    points = [Point(i + 1, k, (), v) for i, (k, v) in enumerate(RERUN_SERIES[:3])]
    with_prior = trial_noise(ordered(points), Settings(prior_noise_pct=3.0))
    assert [dof for _, dof in with_prior.sources] == [1.0, 12.0 * 0.7]
