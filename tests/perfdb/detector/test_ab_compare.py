"""A/B tests (perfdb/detector/ab_compare.py): a patched build against the same kernel stock, or a
run against a pinned baseline, judged when it arrives; the baseline runs each one gets."""

import pytest

from perfdb.detector.ab_compare import baseline_runs
from perfdb.detector.detection import Point, Settings, detect
from perfdb.detector.noise import trial_noise
from perfdb.detector.policy import judge
from tests.perfdb.detector.seeded import by_run, stock_series

# --- baselines ---

SERIES = [
    Point(1, "2.4.20-stock", (), (100.0, 101.0)),
    Point(2, "2.4.20", ("O(1)",), (90.0, 91.0)),
    Point(3, "2.5.59", (), (96.0, 97.0)),
    Point(4, "2.5.59", ("D7",), (100.0,)),
    Point(5, "2.5.59", (), (95.0,)),  # a repeat of stock 2.5.59
    Point(6, "2.5.66", (), (111.0, 112.0)),
    Point(7, "2.5.66", ("busiestqueue",), (95.0,)),
    Point(8, "2.5.65", ("PA",), (67.0,)),  # no stock 2.5.65 in this series
]


@pytest.mark.parametrize(
    ("candidate", "pinned", "expected_runs"),
    [
        (2, None, (1,)),  # patched -> same kernel stock ("-stock" is the same kernel)
        (4, None, (3, 5)),  # patched -> same kernel stock, repeats pooled
        (3, None, (1,)),  # stock -> previous stock kernel, patched builds skipped
        (5, None, (1,)),
        (6, None, (3, 5)),  # stock -> previous stock kernel, pooled
        (1, None, ()),  # first kernel has nothing before it
        (8, None, ()),  # patched without its stock kernel: no baseline unless pinned
        (8, 1, (1,)),  # pinned wins
        (6, 3, (3, 5)),  # pinning a run pools its repeats
        (3, 3, (5,)),  # ... but never the candidate itself
    ],
)
def test_baseline_runs(candidate, pinned, expected_runs):
    point = next(p for p in SERIES if p.run_id == candidate)
    got = baseline_runs(SERIES, point, pinned_run_id=pinned)
    assert tuple(p.run_id for p in got) == expected_runs


def test_pinned_run_must_be_in_the_series():
    with pytest.raises(ValueError, match="pinned baseline run 99"):
        baseline_runs(SERIES, SERIES[2], pinned_run_id=99)


# --- judged on arrival ---


@pytest.mark.parametrize(
    ("candidate", "better", "direction"),
    [
        ((90.0, 91.0, 89.5), "higher", "regression"),  # patched build slower than stock
        ((110.0, 111.0, 109.5), "higher", "improvement"),
        ((110.0, 111.0, 109.5), "lower", "regression"),  # latency went up
        ((90.0, 91.0, 89.5), "lower", "improvement"),
    ],
)
def test_patched_run_against_stock(candidate, better, direction):
    points = [Point(1, "2.5.66", (), (100.0, 100.5, 99.5)), Point(2, "2.5.66", ("x",), candidate)]
    changes = detect(points, better=better)
    assert len(changes) == 1
    change = changes[0]
    assert (change.candidate_run_id, change.baseline_run_ids) == (2, (1,))
    assert change.method == "t-test"  # the trials of both runs pooled: the series' noise
    assert change.direction == direction
    assert change.change_pct == pytest.approx((sum(candidate) / 3 - 100.0) / 100.0 * 100)
    assert 0 < change.p_value < 0.01
    assert change.confidence == pytest.approx(1 - change.p_value)


def test_single_values_without_noise_are_pending_and_say_what_is_needed():
    verdict = judge([100.0], [80.0], "higher")
    assert verdict.method == "untested" and not verdict.significant
    assert "3 trials" in verdict.reason
    points = [Point(1, "2.5.6", (), (100.0,)), Point(2, "2.5.6", ("x",), (80.0,))]
    (change,) = detect(points, better="higher")
    assert (change.status, change.method) == ("unconfirmed", "threshold")
    small = [Point(1, "2.5.6", (), (100.0,)), Point(2, "2.5.6", ("x",), (97.0,))]
    assert detect(small, better="higher") == []  # under the 5 % default: nothing kept


def test_single_values_are_tested_with_the_noise_of_the_series_trials():
    """A one-trial patched build in a series whose other runs have trials: the trials' noise
    makes it a test, confirmed at once (an A/B)."""
    points = stock_series([100.0] * 4, trials=3, noise_pct=0.5, seed=3)
    points += [Point(20, "2.5.4", ("x",), (96.0,))]
    noise = trial_noise(points, Settings())
    assert 0.2 < noise.within_pct < 1.0
    found = by_run(detect(points, better="higher"))
    assert found[20].method == "t-test" and found[20].status == "confirmed"
    quiet = [*points[:-1], Point(20, "2.5.4", ("x",), (99.2,))]
    assert 20 not in by_run(detect(quiet, better="higher"))


def test_pinned_baseline_overrides_previous_kernel():
    points = stock_series([100.0, 100.0, 80.0, 80.0], trials=3, noise_pct=0.5)
    natural = by_run(detect(points, better="higher"))
    assert list(natural) == [3]  # only the step, against 2.5.2
    pinned = by_run(detect(points, better="higher", pinned_run_id=1))
    assert sorted(pinned) == [3, 4]  # 2.5.4 is still 20 % below the pinned 2.5.1
    assert pinned[4].baseline_run_ids == (1,)
    assert pinned[4].change_pct == pytest.approx(-20.0, abs=2.0)
