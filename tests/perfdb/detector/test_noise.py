"""The trials' noise (perfdb/detector/noise.py): what A/B tests and short series are judged
with (``trial_noise``), NaN trials left out, reruns and the workload/metric prior read as
run-to-run evidence. A long series' model is tested in test_long_series.py."""

import math
import random

import pytest

from perfdb.detector.detection import Point, check, detect
from perfdb.detector.noise import trial_noise
from perfdb.detector.points import ordered
from perfdb.detector.policy import Settings, judge


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
