"""ingest/parsers/sysstat_common.py: report names, metric names, units and series of sysstat."""

import pytest

from ingest.parsers.base import Measurement, ParseError, SeriesColumn
from ingest.parsers.sysstat_common import (
    Series,
    better,
    metric_name,
    report_name,
    result,
    unit,
)


@pytest.mark.parametrize(
    ("column", "name"),
    [
        ("%user", "user_pct"),
        ("%ifutil", "ifutil_pct"),
        ("rxkB/s", "rxkb_per_s"),
        ("cswch/s", "cswch_per_s"),
        ("ldavg-15", "ldavg_15"),
        ("plist-sz", "plist_sz"),
        ("r_await", "r_await"),
    ],
)
def test_metric_name_is_snake_case_of_the_header(column, name):
    assert metric_name(column) == name


@pytest.mark.parametrize(
    ("column", "expected"),
    [
        ("%idle", "%"),
        ("r_await", "ms"),
        ("svctm", "ms"),
        ("rkB/s", "kB/s"),
        ("kB_read", "kB"),
        ("kbmemfree", "kB"),
        ("rd_sec/s", "sectors/s"),
        ("tps", "/s"),
        ("bwrtn", "/s"),
        ("cswch/s", "/s"),
        ("runq-sz", "tasks"),
        ("blocked", "tasks"),
        ("ldavg-1", "load"),
        ("areq-sz", "kB"),
        ("avgrq-sz", "sectors"),
        ("aqu-sz", "requests"),
    ],
)
def test_unit_of_a_column(column, expected):
    assert unit(column) == expected


def test_only_latencies_have_a_direction():
    assert [better(c) for c in ("r_await", "svctm", "%user", "rkB/s")] == [
        "lower",
        "lower",
        "none",
        "none",
    ]


@pytest.mark.parametrize(
    ("columns", "key", "name"),
    [
        (("%user", "%nice", "%system"), "cpu", "cpu"),
        (("rxpck/s", "txpck/s"), "iface", "dev"),
        (("runq-sz", "plist-sz"), None, "queue"),
        (("tps", "rkB/s"), "device", "disk"),  # iostat -d: the device column names it
        (("tps", "rtps", "wtps"), None, "io"),  # sar -b
        (("foo/s", "bar"), None, "foo_per_s"),  # unknown: named after its first column
        ((), None, "unknown"),
    ],
)
def test_report_name(columns, key, name):
    assert report_name(columns, key) == name


def test_a_series_becomes_one_record_of_columns_and_averages():
    series = Series({"label": "Linux 6.1.0", "report": "queue"}, 4)
    series.add("15:34:56", {"runq-sz": 2.0, "blocked": 0.0}, 4)
    series.add("15:34:57", {"runq-sz": 4.0, "blocked": 1.0}, 5)
    series.average = {"runq-sz": 3.0}
    assert series.describe() == "label=Linux 6.1.0 report=queue"
    record = series.record("sar")
    assert record.keys == {"label": "Linux 6.1.0", "report": "queue"}
    assert record.line == 4
    stamps = ("15:34:56", "15:34:57")
    assert record.columns == (
        SeriesColumn("sar", "runq-sz", (2.0, 4.0), timestamps=stamps),
        SeriesColumn("sar", "blocked", (0.0, 1.0), timestamps=stamps),
    )
    assert record.measurements == (Measurement("sar_runq_sz_avg", 3.0, "tasks", "none"),)


def test_a_since_boot_series_without_stamps():
    series = Series({"report": "device", "device": "vda"}, 7)
    series.since_boot = True
    series.add(None, {"tps": 292.43}, 7)
    (column,) = series.record("iostat").columns
    assert column == SeriesColumn("iostat", "tps", (292.43,), first_is_since_boot=True)


def test_a_row_with_other_columns_is_refused_naming_its_line():
    series = Series({"report": "queue"}, 4)
    series.add("15:34:56", {"runq-sz": 2.0, "blocked": 0.0}, 4)
    with pytest.raises(ParseError, match="the columns change from the row at line 4") as err:
        series.add("15:34:57", {"runq-sz": 1.0}, 6)
    assert err.value.line == 6


def test_result_keeps_series_with_values_and_refuses_none():
    empty = Series({"report": "cpu"}, None)
    full = Series({"report": "queue"}, 3)
    full.add("15:34:56", {"runq-sz": 2.0}, 3)
    found = result([empty, full], "sar", ["a warning"], {"host": "vm"})
    assert [r.keys for r in found.records] == [{"report": "queue"}]
    assert found.warnings == ("a warning",)
    assert found.metadata == {"host": "vm"}
    with pytest.raises(ParseError, match="no iostat data rows found"):
        result([empty], "iostat", [], {})
