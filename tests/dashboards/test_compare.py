"""Compare rows from plain values: mean, sd, n, % change, Welch's p-value, better or worse."""

from __future__ import annotations

from statistics import fmean, stdev

import pytest
from scipy import stats

from dashboards.compare import (
    MIN_VALUES,
    MISSING,
    SINGLE_VALUE,
    MetricValues,
    StatedSpread,
    compare_line,
    compare_lines,
)


def values(base, new, better="higher", name="throughput", unit="msg/s") -> MetricValues:
    return MetricValues(name, unit, better, tuple(base), tuple(new))


@pytest.mark.parametrize(
    "base, new",
    [
        ((13000, 13200, 13100), (14000, 14300, 14100)),
        ((1.0, 2.0), (1.5, 2.5, 3.5, 2.0)),
        ((100, 101, 99, 100.5), (99, 98.5, 100, 99.2)),
    ],
)
def test_statistics_of_each_side_and_the_welch_p_value(base, new):
    line = compare_line(values(base, new))
    assert (line.base.mean, line.base.sd, line.base.n) == pytest.approx(
        (fmean(base), stdev(base), len(base))
    )
    assert (line.new.mean, line.new.sd, line.new.n) == pytest.approx(
        (fmean(new), stdev(new), len(new))
    )
    assert line.change_pct == pytest.approx((fmean(new) - fmean(base)) / fmean(base) * 100)
    assert line.p_value == pytest.approx(stats.ttest_ind(base, new, equal_var=False).pvalue)
    assert line.confidence == f"p = {line.p_value:.3g}"
    assert line.more_runs_needed is (min(len(base), len(new)) < MIN_VALUES)


@pytest.mark.parametrize(
    "base, new",
    [((100,), (110,)), ((100,), (110, 111, 112)), ((100, 101), (110,)), ((100,), (103,))],
    ids=["one-one", "one-three", "two-one", "small"],
)
def test_a_single_value_on_a_side_gets_no_p_value(base, new):
    line = compare_line(values(base, new))
    assert line.p_value is None and line.confidence == SINGLE_VALUE
    # No test is possible without a noise: the row says what would make one.
    assert line.more_runs_needed
    assert not line.significant and "3 trials" in line.reason
    assert line.change_pct == pytest.approx((fmean(new) - fmean(base)) / fmean(base) * 100)


@pytest.mark.parametrize(
    "better, base, new, expected",
    [
        ("higher", (100, 101, 99), (120, 121, 119), "better"),
        ("higher", (120, 121, 119), (100, 101, 99), "worse"),
        ("lower", (100, 101, 99), (120, 121, 119), "worse"),
        ("lower", (120, 121, 119), (100, 101, 99), "better"),
        ("none", (100, 101, 99), (120, 121, 119), "no direction"),
        ("higher", (100, 130, 70), (101, 131, 71), "not significant"),
        ("higher", (100, 100), (100, 100), "no change"),
    ],
)
def test_better_or_worse_follows_the_metric_direction(better, base, new, expected):
    line = compare_line(values(base, new, better=better))
    assert line.verdict == expected
    if expected in ("better", "worse"):
        assert line.better is (expected == "better") and line.significant


def test_identical_trials_on_both_sides_that_moved_are_significant():
    line = compare_line(values((50, 50, 50), (60, 60, 60)))
    assert line.p_value == 0.0 and line.verdict == "better"
    # by more than one quantum of the values: 5 -> 6 is within the resolution they show
    assert compare_line(values((5, 5, 5), (6, 6, 6))).verdict == "not significant"


def test_a_metric_missing_on_one_side_is_shown_not_compared():
    line = compare_line(values((1, 2, 3), ()))
    assert line.confidence == MISSING and line.change_pct is None
    assert line.verdict == "not comparable" and line.as_json()["new_mean"] is None


def test_a_zero_baseline_has_no_relative_change():
    line = compare_line(values((0, 0, 0), (1, 2, 3)))
    assert line.change_pct is None and line.change_text == "—"


def test_regressions_lead_the_table():
    lines = compare_lines(
        [
            values((100, 101, 99), (100.2, 100.9, 99.1), name="flat"),
            values((100, 101, 99), (120, 121, 119), name="up"),
            values((100, 101, 99), (80, 81, 79), name="down"),
            values((100, 101, 99), (50, 51, 49), name="way down"),
        ]
    )
    assert [line.metric for line in lines] == ["way down", "down", "up", "flat"]


def test_json_row_has_the_api_fields():
    row = compare_line(values((1, 2, 3), (2, 3, 4))).as_json()
    for key in ("metric", "unit", "base_mean", "new_mean", "change_pct", "p_value", "better"):
        assert key in row
    assert row["change_pct"] == pytest.approx(50.0)


# --- a report's means with their stated spreads ----------------------------------------------


def stated(base, new, base_spread, new_spread, better="higher") -> MetricValues:
    return MetricValues(
        "will-it-scale.per_process_ops",
        "",
        better,
        (base,),
        (new,),
        base_stated=base_spread,
        new_stated=new_spread,
    )


def test_a_robot_report_row_shows_its_spread_as_printed_and_is_not_one_trial():
    line = compare_line(
        stated(1234567.0, 676543.0, StatedSpread(None, 2.0, None), StatedSpread(None, 3.0, None))
    )
    assert line.change_pct == pytest.approx((676543 - 1234567) / 1234567 * 100)
    assert line.base_text == "1,234,567 ± 2 % (report)"
    assert line.new_text == "676,543 ± 3 % (report)"
    assert line.confidence == "runs not stated"
    assert line.verdict == "not significant"
    assert "how many runs" in line.reason
    assert not line.more_runs_needed  # more runs would not help: the report has them
    assert line.as_json()["from_stated_spread"] is True


def test_stated_spreads_with_run_counts_are_tested_from_the_summary():
    base, new = StatedSpread(30.0, None, 6), StatedSpread(40.0, None, 6)
    line = compare_line(stated(1000.0, 900.0, base, new))
    two_sided = stats.ttest_ind_from_stats(1000.0, 30.0, 6, 900.0, 40.0, 6, equal_var=False)
    assert line.p_value == pytest.approx(two_sided.pvalue)
    assert line.confidence.endswith("(stated spread)")
    assert (line.base.n, line.base.sd) == (6, 30.0)
    assert line.verdict == "worse"
    assert line.base_text == "1,000 ± 30 (report, n 6)"


def test_a_stated_spread_on_one_side_only_falls_back_to_the_values():
    line = compare_line(
        MetricValues("amean", "s", "lower", (1.0,), (1.2,), base_stated=StatedSpread(0.1, None, 5))
    )
    assert line.base.stated is None
    assert line.confidence == SINGLE_VALUE


def test_a_run_count_without_a_spread_is_never_read_as_a_zero_spread():
    runs_only = StatedSpread(None, None, 6)
    line = compare_line(stated(1000.0, 990.0, runs_only, runs_only))
    assert line.base.stated is None and line.new.stated is None
    assert line.confidence == SINGLE_VALUE and not line.significant
