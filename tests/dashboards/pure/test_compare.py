"""Compare rows from plain values: mean, sd, n, % change, Welch's p-value, better or worse.

The compare page judges with the detector's rule and says why it and the alerts differ."""

from __future__ import annotations

from statistics import fmean, stdev

import pytest
from scipy import stats

from dashboards.pure.compare import (
    MIN_VALUES,
    MISSING,
    SINGLE_VALUE,
    AlertInfo,
    MetricValues,
    SeriesContext,
    StatedSpread,
    compare_line,
    compare_lines,
)
from perfdb.detector.detection import PairContext
from perfdb.detector.policy import Noise, judge
from perfdb.models import Alert, Run
from tests.perfdb.alerting.builds import check, ingest_runs

BASE, NEW = (100.0, 100.5, 99.5), (80.0, 80.4, 79.6)


def values(base=BASE, new=NEW, better="higher", name="throughput", unit="msg/s") -> MetricValues:
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


def pair(noise=None, baseline=(1,), step_scan=False, stock=False, resolution=None):
    return PairContext(noise, resolution, baseline, step_scan, stock)


def test_the_series_run_to_run_noise_can_make_a_clear_looking_change_insignificant():
    """Welch alone calls 4 % between two quiet runs significant; a series whose kernels move
    by 3 % from boot to boot does not (the detector would not alert)."""
    base, new = (100.0, 100.2, 99.8), (96.0, 96.2, 95.8)
    alone = compare_line(values(base, new))
    assert alone.significant and alone.verdict == "worse"
    noisy = SeriesContext(pair=pair(Noise(0.2, 3.0, 20, 3)), base_run_ids=(1,))
    line = compare_line(values(base, new), noisy)
    assert not line.significant and line.verdict == "not significant"
    assert line.reason.startswith("below the detector's noise threshold for this series")
    assert line.significant is judge(base, new, "higher", Noise(0.2, 3.0, 20, 3)).significant
    assert line.alert_note == ""  # no alert either: they agree


def test_a_change_within_the_metrics_resolution_is_not_significant():
    line = compare_line(values((0.03, 0.03, 0.03), (0.04, 0.04, 0.04), better="lower"))
    assert not line.significant and "resolution" in line.reason


def test_a_pending_alert_says_what_will_confirm_it():
    pending = AlertInfo(7, "pending", "regression", -20.0, "t-test", (1,))
    line = compare_line(values(), SeriesContext(pair=pair(), alerts=(pending,), base_run_ids=(1,)))
    assert line.significant
    assert line.alert_note == (
        "pending (alert 7): one trial a kernel, so a move is confirmed when the next kernel "
        "agrees, or cleared if it comes back"
    )
    guess = AlertInfo(7, "pending", "regression", -20.0, "threshold", (1,))
    line = compare_line(values(), SeriesContext(pair=pair(), alerts=(guess,), base_run_ids=(1,)))
    assert "run at least 3 trials on each side" in line.alert_note


def test_a_cleared_alert_says_it_was_a_spike():
    cleared = AlertInfo(8, "cleared", "regression", -20.0, "welch", (1,))
    line = compare_line(values(), SeriesContext(pair=pair(), alerts=(cleared,), base_run_ids=(1,)))
    assert line.alert_note.startswith("cleared: the next kernel came back")


@pytest.mark.parametrize(
    ("context", "why"),
    [
        (
            SeriesContext(pair=pair(baseline=(3, 4)), base_run_ids=(1,)),
            "compares these runs with their level so far, runs 3, 4",
        ),
        (SeriesContext(pair=pair(step_scan=True, stock=True), base_run_ids=(1,)), "step test"),
        (SeriesContext(pair=None, base_run_ids=(1,)), "not one series"),
        (SeriesContext(pair=pair(baseline=()), base_run_ids=(1,)), "no baseline"),
    ],
)
def test_significant_without_an_alert_says_why(context, why):
    line = compare_line(values(), context)
    assert line.significant and line.alert_note.startswith("no alert") and why in line.alert_note


def test_an_alert_the_page_does_not_see_says_how_the_detector_found_it():
    step = AlertInfo(9, "untriaged", "regression", -6.0, "changepoint", (1, 2, 3))
    quiet = values((100.0, 101.0, 99.0), (99.0, 100.0, 98.5))
    line = compare_line(quiet, SeriesContext(pair=pair(), alerts=(step,), base_run_ids=(1,)))
    assert not line.significant
    assert line.alert_note.startswith("alert 9 (-6.0 %): the detector judged it with the series'")


def test_a_drift_alert_the_page_does_not_see_is_named_a_drift():
    from perfdb.detector import DRIFT_METHOD

    drift = AlertInfo(9, "untriaged", "regression", -9.0, DRIFT_METHOD, (4,))
    quiet = values((100.0, 101.0, 99.0), (99.0, 100.0, 98.5))
    line = compare_line(quiet, SeriesContext(pair=pair(), alerts=(drift,), base_run_ids=(1,)))
    assert "the series' drift test" in line.alert_note and "from run 4" in line.alert_note


def test_json_rows_carry_the_reason_and_the_alert_note():
    row = compare_line(values()).as_json()
    assert {"reason", "alert_note"} <= set(row)


# --- through the page and the API, with stored runs and alerts ---


@pytest.mark.django_db
def test_the_page_names_the_alert_of_an_ab_and_the_api_too(tmp_path, client):
    """Two kernels of three trials, 15 % apart: significant on the page, an alert at once."""
    check(ingest_runs(tmp_path, "a.tar.gz", [("2.4.20", "[]", (13000, 13100, 12950))]))
    check(ingest_runs(tmp_path, "b.tar.gz", [("2.5.59", "[]", (11000, 11100, 11050))]))
    alert = Alert.objects.get(metric__name="throughput")
    assert alert.status == "untriaged"
    old, new = (Run.objects.get(kernel__version=k).pk for k in ("2.4.20", "2.5.59"))
    rows = client.get(f"/api/compare/?base={old}&new={new}").json()["rows"]
    (row,) = [r for r in rows if r["metric"] == "throughput"]
    assert row["significant"] and row["alert_note"] == f"alert {alert.pk}"
    page = client.get(f"/compare/?base={old}&new={new}").content.decode()
    assert f"alert {alert.pk}" in page


@pytest.mark.django_db
def test_the_page_names_the_pending_alert_and_the_api_too(tmp_path, client):
    """One value a kernel and nothing known of the noise: the page does not test it, the
    detector keeps the 15 % move pending, and both say what would test it."""
    check(ingest_runs(tmp_path, "a.tar.gz", [("2.4.20", "[]", (13000,))]))
    check(ingest_runs(tmp_path, "b.tar.gz", [("2.5.59", "[]", (11000,))]))
    alert = Alert.objects.get(metric__name="throughput")
    assert alert.status == "pending" and alert.method == "threshold"
    old, new = (Run.objects.get(kernel__version=k).pk for k in ("2.4.20", "2.5.59"))
    page = client.get(f"/compare/?base={old}&new={new}").content.decode()
    assert f"pending (alert {alert.pk}): one value a side" in page
    rows = client.get(f"/api/compare/?base={old}&new={new}").json()["rows"]
    (row,) = [r for r in rows if r["metric"] == "throughput"]
    assert not row["significant"] and "3 trials" in row["reason"]
    assert row["alert_note"].startswith(f"pending (alert {alert.pk})")


@pytest.mark.django_db
def test_the_page_uses_the_series_noise_like_the_detector(tmp_path, client):
    """Kernels that move 3-4 % boot to boot with quiet trials: two neighbours 4 % apart are
    'significant' by Welch alone, not by the detector's rule with the series' noise."""
    levels = [13000, 13450, 12900, 13400, 12950, 13500, 12980, 13420, 12930]
    runs = [
        (f"2.5.{i + 1}", "[]", (level, level + 15, level - 10)) for i, level in enumerate(levels)
    ]
    check(ingest_runs(tmp_path, "s.tar.gz", runs))
    # the first moves cannot be told from steps; from the second kernel that came back the
    # series is read as wandering, and nothing is ever a regression
    assert not Alert.objects.filter(metric__name="throughput", direction="regression").exists()
    a, b = (Run.objects.get(kernel__version=k).pk for k in ("2.5.7", "2.5.8"))
    rows = client.get(f"/api/compare/?base={a}&new={b}").json()["rows"]
    (row,) = [r for r in rows if r["metric"] == "throughput"]
    assert row["p_value"] < 0.01  # Welch alone would call it significant
    assert not row["significant"]
    assert row["reason"].startswith("below the detector's noise threshold for this series")


@pytest.mark.django_db
def test_a_return_from_a_spike_says_why_there_is_no_alert(tmp_path, client):
    """The page compares the kernel after a spike with the spike: a big move, 'significant';
    the detector does not count a return as a move, and the page says so."""
    for name, kernel, trials in (
        ("a", "2.6.0", (13000, 13050, 12980)),
        ("b", "2.6.1", (14300, 14350, 14280)),  # a bad run, 10 % high
        ("c", "2.6.2", (13010, 13040, 12990)),
        ("d", "2.6.3", (12990, 13030, 13000)),
    ):
        check(ingest_runs(tmp_path, f"{name}.tar.gz", [(kernel, "[]", trials)]))
    # the spike itself is an A/B when it arrives (an improvement, never emailed); the way
    # back raises no regression
    assert not Alert.objects.filter(metric__name="throughput", direction="regression")
    spike, back = (Run.objects.get(kernel__version=k).pk for k in ("2.6.1", "2.6.2"))
    rows = client.get(f"/api/compare/?base={spike}&new={back}").json()["rows"]
    (row,) = [r for r in rows if r["metric"] == "throughput"]
    assert row["significant"]
    assert row["alert_note"].startswith("no alert: these runs moved and the series came back")


def test_runs_the_series_came_back_from_say_why_there_is_no_alert():
    context = SeriesContext(
        pair=PairContext(None, None, (1,), True, True, outlier_runs=frozenset({1, 5})),
        base_run_ids=(1,),
        new_run_ids=(2,),
    )
    line = compare_line(values(), context)
    assert line.significant
    assert line.alert_note.startswith("no alert: runs 1 moved and the series came back")
    assert "excursion of at most 3 kernels" in line.alert_note


@pytest.mark.django_db
def test_a_return_from_an_excursion_says_why_there_is_no_alert(tmp_path, client):
    """Two kernels 6 % high and back in a 16-kernel series: the way back is a big move between
    neighbours, 'significant' on the page; the detector reads an excursion and says so."""
    import random

    from tests.perfdb.alerting.builds import upload

    rng = random.Random(5)
    for i in range(16):
        level = 13000 * (1.06 if i in (8, 9) else 1.0)
        trials = tuple(round(level * (1 + rng.gauss(0, 0.005))) for _ in range(3))
        upload(tmp_path, f"u{i}", f"2.6.{i}", trials)
    # the way up was an improvement when it came; the way back is a return, no regression
    assert not Alert.objects.filter(metric__name="throughput", direction="regression").exists()
    high, back, later = (
        Run.objects.get(kernel__version=k).pk for k in ("2.6.9", "2.6.10", "2.6.11")
    )
    rows = client.get(f"/api/compare/?base={high}&new={back}").json()["rows"]
    (row,) = [r for r in rows if r["metric"] == "throughput"]
    assert row["significant"] and row["verdict"] == "worse"
    assert row["alert_note"] == (
        f"no alert: runs {high} moved and the series came back (a spike, or an excursion of "
        "at most 3 kernels); the detector leaves them out of its baselines and counts no step "
        "there"
    )
    rows = client.get(f"/api/compare/?base={high}&new={later}").json()["rows"]
    (row,) = [r for r in rows if r["metric"] == "throughput"]
    assert row["significant"]
    assert row["alert_note"].startswith(f"no alert: runs {high} moved and the series came back")
